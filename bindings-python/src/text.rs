//! The fixed-width text forms of an ID (base32 and base62, whose string order is the IDs'
//! order), as the core writes and reads them.

use flakery::text;
use pyo3::prelude::*;

use crate::args;
use crate::errors::IntoPyResult;

/// The 13-character base32 form of an ID (Crockford's alphabet, upper case, zero-padded):
/// sorting these strings sorts the IDs. `id` is an int or its decimal str.
#[pyfunction]
pub fn to_base32(id: &Bound<'_, PyAny>) -> PyResult<String> {
    text::to_base32(args::id(id)?).py()
}

/// The ID a base32 form stands for: case-insensitive, `O` read as 0, `I` and `L` as 1.
#[pyfunction]
pub fn from_base32(text: &Bound<'_, PyAny>) -> PyResult<i64> {
    text::from_base32(&args::string(text, "text")?).py()
}

/// The 11-character base62 form of an ID (`0-9A-Za-z`, zero-padded): sorting these strings
/// sorts the IDs.
#[pyfunction]
pub fn to_base62(id: &Bound<'_, PyAny>) -> PyResult<String> {
    text::to_base62(args::id(id)?).py()
}

/// The ID a base62 form stands for (case-sensitive).
#[pyfunction]
pub fn from_base62(text: &Bound<'_, PyAny>) -> PyResult<i64> {
    text::from_base62(&args::string(text, "text")?).py()
}
