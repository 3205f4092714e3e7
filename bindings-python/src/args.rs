//! Python arguments to Rust values. Only types are checked here; whether a value is allowed
//! (fits its field, is a known policy, ...) is the core's to say.

use std::path::PathBuf;

use flakery::Layout;
use pyo3::exceptions::{PyOverflowError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyInt, PyString};

use crate::errors::{invalid_argument, wrong_type, IntoPyResult};

/// An integer argument: an `int` or an object with `__index__`, but not a `bool` (`decode(True)`
/// is a mistake); any other type is `InvalidArgumentTypeError`. A value that does not fit `T`
/// is `invalid_argument`, with the message `out_of_range` makes from the value's decimal text.
fn int_arg<'py, T>(
    obj: &Bound<'py, PyAny>,
    name: &str,
    out_of_range: impl FnOnce(String) -> PyErr,
) -> PyResult<T>
where
    T: for<'a> FromPyObject<'a, 'py>,
{
    // The common case first: an exact int that fits.
    if obj.is_exact_instance_of::<PyInt>() {
        if let Ok(value) = obj.extract::<T>() {
            return Ok(value);
        }
    }
    let py = obj.py();
    if obj.is_instance_of::<PyBool>()
        || !(obj.is_instance_of::<PyInt>() || obj.hasattr(pyo3::intern!(py, "__index__"))?)
    {
        return Err(wrong_type(name, "an int", obj));
    }
    match obj.extract::<T>().map_err(Into::<PyErr>::into) {
        Ok(value) => Ok(value),
        Err(err) if err.is_instance_of::<PyOverflowError>(py) => {
            let text = obj
                .call_method0(pyo3::intern!(py, "__index__"))
                .and_then(|i| i.str())
                .map(|s| s.to_string())
                .unwrap_or_else(|_| "?".to_string());
            Err(out_of_range(text))
        }
        Err(err) => Err(err),
    }
}

/// An ID: any int from 0 to 2^63-1, or its decimal text (`"175928847299117063"`, as an ID
/// arrives in JSON or a URL). Out of range is `invalid_argument` with the core's message, the
/// one it gives for an ID written as text.
pub fn id(obj: &Bound<'_, PyAny>) -> PyResult<i64> {
    let id = id_u64(obj)?;
    match i64::try_from(id) {
        Ok(id) => Ok(id),
        Err(_) => flakery::parse_id(&id.to_string()).py(),
    }
}

/// `id` up to 2^64-1, for `decode` (IDs of unsigned layouts such as `discord`).
pub fn id_u64(obj: &Bound<'_, PyAny>) -> PyResult<u64> {
    if let Ok(text) = obj.cast::<PyString>() {
        return flakery::parse_id_u64(&text.to_cow()?).py();
    }
    let py = obj.py();
    if obj.is_instance_of::<PyBool>()
        || !(obj.is_instance_of::<PyInt>() || obj.hasattr(pyo3::intern!(py, "__index__"))?)
    {
        return Err(wrong_type("id", "an int or a decimal str", obj));
    }
    int_arg(obj, "id", |text| match flakery::parse_id_u64(&text) {
        Err(error) => crate::errors::to_py(error),
        Ok(_) => invalid_argument(format!("{text} is not an ID")),
    })
}

/// A non-negative integer below 2^64 (node IDs, field values, milliseconds).
pub fn u64_arg(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<u64> {
    int_arg(obj, name, |text| {
        invalid_argument(format!(
            "{name} must be an integer from 0 to 2^64-1, not {text}"
        ))
    })
}

/// A value of a node field or the sequence (`option` is `datacenter_id`, `worker_id` or
/// `sequence`). An int too large or too negative for any field gets the core's message, which
/// names the range `layout` gives the field, as it does for a value that merely does not fit.
pub fn opt_field_arg(
    obj: Option<&Bound<'_, PyAny>>,
    option: &'static str,
    layout: impl FnOnce() -> flakery::Result<Layout>,
) -> PyResult<Option<u64>> {
    match obj {
        Some(obj) if !obj.is_none() => int_arg(obj, option, |text| match layout() {
            Ok(layout) => crate::errors::to_py(flakery::out_of_range(&layout, option, &text)),
            Err(error) => crate::errors::to_py(error),
        })
        .map(Some),
        _ => Ok(None),
    }
}

pub fn opt_u64_arg(obj: Option<&Bound<'_, PyAny>>, name: &str) -> PyResult<Option<u64>> {
    match obj {
        Some(obj) if !obj.is_none() => u64_arg(obj, name).map(Some),
        _ => Ok(None),
    }
}

/// A signed 64-bit integer (Unix milliseconds).
pub fn i64_arg(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<i64> {
    int_arg(obj, name, |text| {
        invalid_argument(format!("{name} {text} is out of the 64-bit range"))
    })
}

/// How many IDs to make.
pub fn count(obj: &Bound<'_, PyAny>) -> PyResult<usize> {
    int_arg(obj, "n", |text| {
        invalid_argument(format!("n must be a non-negative integer, not {text}"))
    })
}

pub fn string(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<String> {
    match obj.cast::<PyString>() {
        Ok(s) => Ok(s.to_cow()?.into_owned()),
        Err(_) => Err(wrong_type(name, "a str", obj)),
    }
}

pub fn opt_string(obj: Option<&Bound<'_, PyAny>>, name: &str) -> PyResult<Option<String>> {
    match obj {
        Some(obj) if !obj.is_none() => string(obj, name).map(Some),
        _ => Ok(None),
    }
}

pub fn boolean(obj: Option<&Bound<'_, PyAny>>, name: &str) -> PyResult<Option<bool>> {
    match obj {
        Some(obj) if !obj.is_none() => match obj.cast::<PyBool>() {
            Ok(b) => Ok(Some(b.is_true())),
            Err(_) => Err(wrong_type(name, "a bool", obj)),
        },
        _ => Ok(None),
    }
}

/// A `str` or an `os.PathLike`.
pub fn opt_path(obj: Option<&Bound<'_, PyAny>>, name: &str) -> PyResult<Option<PathBuf>> {
    match obj {
        Some(obj) if !obj.is_none() => match obj.extract::<PathBuf>() {
            Ok(path) => Ok(Some(path)),
            Err(err) if err.is_instance_of::<PyTypeError>(obj.py()) => {
                Err(wrong_type(name, "a str or os.PathLike", obj))
            }
            Err(err) => Err(err),
        },
        _ => Ok(None),
    }
}

/// Values of constant fields: a mapping of field name to int.
pub fn fields(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<(String, u64)>> {
    let Some(obj) = obj.filter(|o| !o.is_none()) else {
        return Ok(Vec::new());
    };
    let items = match obj.cast::<PyDict>() {
        Ok(dict) => dict.items().into_any(),
        Err(_) => match obj.call_method0(pyo3::intern!(obj.py(), "items")) {
            Ok(items) => items,
            Err(_) => return Err(wrong_type("fields", "a mapping of str to int", obj)),
        },
    };
    let mut values = Vec::new();
    for item in items.try_iter()? {
        let (key, value): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item?.extract()?;
        let name = string(&key, "a field name")?;
        let value = u64_arg(&value, &format!("field '{name}'"))?;
        values.push((name, value));
    }
    Ok(values)
}
