//! The generator's keyword arguments as the core's `Options`: the one conversion of
//! `flakery.Generator(...)` and `flakery.doctor(...)`, so that the report is of the options a
//! generator would be given.

use flakery::options::{DatabaseMode, DatabaseUrl};
use flakery::{Layout, Options};
use pyo3::prelude::*;

use crate::args;
use crate::errors::IntoPyResult;

/// Every keyword of docs/spec.md#generator-options, as Python gave it (`None`: left out).
pub struct GeneratorArgs<'a, 'py> {
    pub layout: Option<&'a Bound<'py, PyAny>>,
    pub datacenter_id: Option<&'a Bound<'py, PyAny>>,
    pub worker_id: Option<&'a Bound<'py, PyAny>>,
    pub sequence_policy: Option<&'a Bound<'py, PyAny>>,
    pub max_borrow_ms: Option<&'a Bound<'py, PyAny>>,
    pub backwards_tolerance_ms: Option<&'a Bound<'py, PyAny>>,
    pub random_sequence_start: Option<&'a Bound<'py, PyAny>>,
    pub fields: Option<&'a Bound<'py, PyAny>>,
    pub zookeeper: Option<&'a Bound<'py, PyAny>>,
    pub namespace: Option<&'a Bound<'py, PyAny>>,
    pub session_timeout_ms: Option<&'a Bound<'py, PyAny>>,
    pub lease_dir: Option<&'a Bound<'py, PyAny>>,
    pub database_url: Option<&'a Bound<'py, PyAny>>,
    pub database_mode: Option<&'a Bound<'py, PyAny>>,
}

impl GeneratorArgs<'_, '_> {
    /// The options; one left out keeps its default, so the environment decides it.
    pub fn options(&self) -> PyResult<Options> {
        let mut options = Options::default();
        if let Some(layout) = self.layout.filter(|l| !l.is_none()) {
            options.layout = Some(Layout::clone(&*crate::layout::layout_arg(layout)?));
        }
        let datacenter = args::opt_field_arg(self.datacenter_id, "datacenter_id", || {
            options.resolved_layout()
        })?;
        let worker =
            args::opt_field_arg(self.worker_id, "worker_id", || options.resolved_layout())?;
        options.datacenter_id = datacenter;
        options.worker_id = worker;
        if let Some(policy) = args::opt_string(self.sequence_policy, "sequence_policy")? {
            options.sequence_policy = policy.parse().py()?;
        }
        if let Some(ms) = args::opt_u64_arg(self.max_borrow_ms, "max_borrow_ms")? {
            options.max_borrow_ms = ms;
        }
        if let Some(ms) = args::opt_u64_arg(self.backwards_tolerance_ms, "backwards_tolerance_ms")?
        {
            options.backwards_tolerance_ms = ms;
        }
        if let Some(on) = args::boolean(self.random_sequence_start, "random_sequence_start")? {
            options.random_sequence_start = on;
        }
        options.fields = args::fields(self.fields)?;
        options.zookeeper = args::opt_string(self.zookeeper, "zookeeper")?;
        options.namespace = args::opt_string(self.namespace, "namespace")?;
        options.session_timeout_ms =
            args::opt_u64_arg(self.session_timeout_ms, "session_timeout_ms")?;
        options.lease_dir = args::opt_path(self.lease_dir, "lease_dir")?;
        if let Some(url) = args::opt_string(self.database_url, "database_url")? {
            options.database_url = Some(DatabaseUrl::parse(&url).py()?);
        }
        if let Some(mode) = args::opt_string(self.database_mode, "database_mode")? {
            options.database_mode = Some(mode.parse::<DatabaseMode>().py()?);
        }
        Ok(options)
    }
}
