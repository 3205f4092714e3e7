//! The native module `flakery._flakery`: a thin layer that converts Python arguments and
//! errors and calls the Rust core. The package `flakery` (bindings-python/python) re-exports
//! it, adds the exception classes and registers the fork handler.

use flakery::Layout;
use pyo3::prelude::*;

mod args;
mod client;
mod decoded;
mod doctor;
mod errors;
mod fast;
mod generator;
mod layout;
mod options;
mod source;
mod text;
mod time;

use decoded::PyDecoded;
use errors::{invalid_argument, type_error, IntoPyResult};
use generator::PyGenerator;
use layout::{PyCapacity, PyField, PyLayout};

/// One ID from the process-wide generator (made from the environment on first use): the
/// slow path of the module's `next_id` (`fast.rs`), which has no pyo3 trampoline.
#[pyfunction]
fn next_id(py: Python<'_>) -> PyResult<i64> {
    source::next_id(py, generator::default_generator(py)?)
}

/// `n` IDs from the process-wide generator, in increasing order.
#[pyfunction]
fn next_ids<'py>(
    py: Python<'py>,
    n: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, pyo3::types::PyList>> {
    source::next_ids(py, generator::default_generator(py)?, n)
}

/// The process-wide generator behind `next_id()`, to see its layout and node ID.
#[pyfunction]
fn default_generator(py: Python<'_>) -> PyResult<PyGenerator> {
    Ok(PyGenerator::shared(generator::default_generator(py)?))
}

/// Takes an ID (an int or its decimal str) apart under a layout (a spec string or a `Layout`;
/// default `"twitter"`).
#[pyfunction]
#[pyo3(signature = (id, layout=None), text_signature = "(id, layout='twitter')")]
fn decode(id: &Bound<'_, PyAny>, layout: Option<&Bound<'_, PyAny>>) -> PyResult<PyDecoded> {
    source::decode(id, layout::layout_or_twitter(layout)?)
}

/// The ID that `decode` takes apart into these values. The time is `timestamp_ms` (Unix
/// milliseconds) or `timestamp` (an aware datetime), rounded down to the layout's tick.
#[pyfunction]
#[pyo3(
    signature = (
        *, timestamp_ms=None, timestamp=None, datacenter_id=None, worker_id=None,
        sequence=None, fields=None, layout=None
    ),
    text_signature = "(*, timestamp_ms=None, timestamp=None, datacenter_id=0, worker_id=0, \
        sequence=0, fields=None, layout='twitter')"
)]
#[allow(clippy::too_many_arguments)]
fn compose<'py>(
    timestamp_ms: Option<&Bound<'py, PyAny>>,
    timestamp: Option<&Bound<'py, PyAny>>,
    datacenter_id: Option<&Bound<'_, PyAny>>,
    worker_id: Option<&Bound<'_, PyAny>>,
    sequence: Option<&Bound<'_, PyAny>>,
    fields: Option<&Bound<'_, PyAny>>,
    layout: Option<&Bound<'_, PyAny>>,
) -> PyResult<u64> {
    let given = |obj: Option<&Bound<'py, PyAny>>| obj.filter(|o| !o.is_none()).cloned();
    let timestamp_ms = match (given(timestamp_ms), given(timestamp)) {
        (Some(ms), None) => args::i64_arg(&ms, "timestamp_ms")?,
        (None, Some(dt)) => time::ms_of(&dt, "timestamp")?,
        (Some(_), Some(_)) => {
            return Err(invalid_argument("give timestamp_ms or timestamp, not both"))
        }
        (None, None) => {
            return Err(type_error(
                "compose() needs timestamp_ms (Unix milliseconds) or timestamp (an aware \
                 datetime)"
                    .to_string(),
            ))
        }
    };
    let layout = layout::layout_or_twitter(layout)?;
    let field = |obj, option| args::opt_field_arg(obj, option, || Ok(Layout::clone(&layout)));
    let parts = flakery::Parts {
        timestamp_ms,
        datacenter_id: field(datacenter_id, "datacenter_id")?.unwrap_or(0),
        worker_id: field(worker_id, "worker_id")?.unwrap_or(0),
        sequence: field(sequence, "sequence")?.unwrap_or(0),
        fields: args::fields(fields)?,
    };
    // Unsigned layouts (discord) reach 2^64-1; signed ones refuse bit 63 as compose does.
    flakery::compose_u64(&parts, &layout).py()
}

/// Called by `os.register_at_fork(after_in_child=...)`: tells the core that this process is
/// a fork's child (the core's own `pthread_atfork` handler does the same; both are harmless).
#[pyfunction]
fn _after_fork_in_child() {
    flakery::fork::note_fork_in_child();
}

#[pymodule]
#[pyo3(name = "_flakery")]
fn flakery_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // The wheel ships every coordinator: ZooKeeper and database leases work.
    flakery_coordinators::install();
    m.add_class::<PyGenerator>()?;
    m.add_class::<PyLayout>()?;
    m.add_class::<PyField>()?;
    m.add_class::<PyCapacity>()?;
    m.add_class::<PyDecoded>()?;
    client::add_class(m)?;
    fast::add_next_id(m, wrap_pyfunction!(next_id, m)?.into_any())?;
    m.add_function(wrap_pyfunction!(next_ids, m)?)?;
    m.add_function(wrap_pyfunction!(default_generator, m)?)?;
    m.add_function(wrap_pyfunction!(decode, m)?)?;
    m.add_function(wrap_pyfunction!(compose, m)?)?;
    m.add_function(wrap_pyfunction!(text::to_base32, m)?)?;
    m.add_function(wrap_pyfunction!(text::from_base32, m)?)?;
    m.add_function(wrap_pyfunction!(text::to_base62, m)?)?;
    m.add_function(wrap_pyfunction!(text::from_base62, m)?)?;
    m.add_function(wrap_pyfunction!(_after_fork_in_child, m)?)?;
    m.add_function(wrap_pyfunction!(doctor::_doctor_json, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
