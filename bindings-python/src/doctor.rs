//! `flakery.doctor()`'s native half: the core's budgets report (docs/doctor.md) as JSON text,
//! which the package parses into a dict. Converts the options only.

use flakery::{Layout, Options};
use pyo3::prelude::*;

use crate::args;
use crate::errors::IntoPyResult;

/// The budgets report for these options (the others from the environment) as JSON text.
#[pyfunction]
#[pyo3(
    signature = (
        *, layout=None, datacenter_id=None, worker_id=None, backwards_tolerance_ms=None,
        random_sequence_start=None
    ),
    text_signature = "(*, layout=None, datacenter_id=None, worker_id=None, \
        backwards_tolerance_ms=None, random_sequence_start=None)"
)]
pub fn _doctor_json(
    py: Python<'_>,
    layout: Option<&Bound<'_, PyAny>>,
    datacenter_id: Option<&Bound<'_, PyAny>>,
    worker_id: Option<&Bound<'_, PyAny>>,
    backwards_tolerance_ms: Option<&Bound<'_, PyAny>>,
    random_sequence_start: Option<&Bound<'_, PyAny>>,
) -> PyResult<String> {
    let mut options = Options::default();
    if let Some(layout) = layout.filter(|l| !l.is_none()) {
        options.layout = Some(Layout::clone(&*crate::layout::layout_arg(layout)?));
    }
    options.datacenter_id =
        args::opt_field_arg(datacenter_id, "datacenter_id", || options.resolved_layout())?;
    options.worker_id = args::opt_field_arg(worker_id, "worker_id", || options.resolved_layout())?;
    if let Some(ms) = args::opt_u64_arg(backwards_tolerance_ms, "backwards_tolerance_ms")? {
        options.backwards_tolerance_ms = ms;
    }
    if let Some(on) = args::boolean(random_sequence_start, "random_sequence_start")? {
        options.random_sequence_start = on;
    }
    py.detach(|| flakery::doctor::report_json(options)).py()
}
