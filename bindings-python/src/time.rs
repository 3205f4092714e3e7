//! Unix milliseconds to and from timezone-aware `datetime`s, exactly (integer arithmetic on
//! `timedelta`s, never through a float). The limited API has no datetime C API, so this goes
//! through the `datetime` module's Python objects, cached once.

use flakery::timestamp::MAX_TIMESTAMP_MS;
use pyo3::exceptions::PyOverflowError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;

use crate::errors::{invalid_argument, wrong_type};

struct Datetime {
    class: Py<PyAny>,
    /// 1970-01-01T00:00:00Z as an aware datetime.
    epoch: Py<PyAny>,
    /// `timedelta(milliseconds=1)`.
    one_ms: Py<PyAny>,
    timedelta: Py<PyAny>,
}

static DATETIME: PyOnceLock<Datetime> = PyOnceLock::new();

fn datetime(py: Python<'_>) -> PyResult<&Datetime> {
    DATETIME.get_or_try_init(py, || {
        let module = py.import("datetime")?;
        let class = module.getattr("datetime")?;
        let utc = module.getattr("timezone")?.getattr("utc")?;
        let timedelta = module.getattr("timedelta")?;
        let epoch = class.call1((1970, 1, 1, 0, 0, 0, 0, utc))?;
        let one_ms = timedelta.call1((0, 0, 0, 1))?;
        Ok(Datetime {
            class: class.unbind(),
            epoch: epoch.unbind(),
            one_ms: one_ms.unbind(),
            timedelta: timedelta.unbind(),
        })
    })
}

/// The aware UTC `datetime` of a Unix millisecond. `datetime` ends with the year 9999; an
/// instant past that raises `OverflowError` (its `timestamp_ms` is still exact).
pub fn of_ms(py: Python<'_>, ms: i64) -> PyResult<Bound<'_, PyAny>> {
    if !(0..=MAX_TIMESTAMP_MS).contains(&ms) {
        return Err(PyOverflowError::new_err(format!(
            "{ms} ms since 1970 is outside what datetime can hold (to 9999-12-31); use the \
             value in milliseconds"
        )));
    }
    let dt = datetime(py)?;
    let delta = dt.timedelta.bind(py).call1((0, 0, 0, ms))?;
    dt.epoch.bind(py).add(delta)
}

/// The Unix millisecond of an aware `datetime`, rounded down to the millisecond.
pub fn ms_of(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<i64> {
    let py = obj.py();
    let dt = datetime(py)?;
    if !obj.is_instance(dt.class.bind(py))? {
        return Err(wrong_type(name, "a datetime.datetime", obj));
    }
    if obj.call_method0(pyo3::intern!(py, "utcoffset"))?.is_none() {
        return Err(invalid_argument(format!(
            "{name} must be timezone-aware (a naive datetime could be any zone): \
             pass tzinfo=datetime.timezone.utc"
        )));
    }
    obj.sub(dt.epoch.bind(py))?
        .floor_div(dt.one_ms.bind(py))?
        .extract::<i64>()
}
