//! `flakery.doctor()`'s native half: the core's budgets report (docs/doctor.md) as JSON text,
//! which the package parses into a dict. It takes the generator's keywords, converted as
//! `Generator()` converts them (`options`).

use pyo3::prelude::*;

use crate::errors::IntoPyResult;
use crate::options::GeneratorArgs;

/// The budgets report for these options (the others from the environment) as JSON text.
#[pyfunction]
#[pyo3(
    signature = (
        *, layout=None, datacenter_id=None, worker_id=None, sequence_policy=None,
        max_borrow_ms=None, backwards_tolerance_ms=None, random_sequence_start=None,
        fields=None, zookeeper=None, namespace=None, session_timeout_ms=None, lease_dir=None,
        database_url=None, database_mode=None
    ),
    text_signature = "(*, layout=None, datacenter_id=None, worker_id=None, \
        sequence_policy=None, max_borrow_ms=None, backwards_tolerance_ms=None, \
        random_sequence_start=None, fields=None, zookeeper=None, namespace=None, \
        session_timeout_ms=None, lease_dir=None, database_url=None, database_mode=None)"
)]
#[allow(clippy::too_many_arguments)]
pub fn _doctor_json(
    py: Python<'_>,
    layout: Option<&Bound<'_, PyAny>>,
    datacenter_id: Option<&Bound<'_, PyAny>>,
    worker_id: Option<&Bound<'_, PyAny>>,
    sequence_policy: Option<&Bound<'_, PyAny>>,
    max_borrow_ms: Option<&Bound<'_, PyAny>>,
    backwards_tolerance_ms: Option<&Bound<'_, PyAny>>,
    random_sequence_start: Option<&Bound<'_, PyAny>>,
    fields: Option<&Bound<'_, PyAny>>,
    zookeeper: Option<&Bound<'_, PyAny>>,
    namespace: Option<&Bound<'_, PyAny>>,
    session_timeout_ms: Option<&Bound<'_, PyAny>>,
    lease_dir: Option<&Bound<'_, PyAny>>,
    database_url: Option<&Bound<'_, PyAny>>,
    database_mode: Option<&Bound<'_, PyAny>>,
) -> PyResult<String> {
    let options = GeneratorArgs {
        layout,
        datacenter_id,
        worker_id,
        sequence_policy,
        max_borrow_ms,
        backwards_tolerance_ms,
        random_sequence_start,
        fields,
        zookeeper,
        namespace,
        session_timeout_ms,
        lease_dir,
        database_url,
        database_mode,
    }
    .options()?;
    py.detach(|| flakery::doctor::report_json(options)).py()
}
