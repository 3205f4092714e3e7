//! The calls a `Generator` and a `Client` share (`next_id`, `next_ids`, `next_id_text`,
//! `decode`), written once over `IdSource`, the three calls in which the core's generator and
//! the client's stock differ. Each class's method converts nothing more than its `self`.
//!
//! The GIL is held while an ID is ready at once (an ID of the tick, of the stock; a small
//! batch of them) and released whenever the source may wait: for the next tick, for a block
//! from a server, for a large batch.

use std::sync::Arc;

use flakery::{IdFormat, Layout};
use pyo3::exceptions::PyMemoryError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyList;

use crate::args;
use crate::decoded::PyDecoded;
use crate::errors::{to_py, IntoPyResult};

/// Where IDs come from: a generator (`flakery::Generator`) or a client of `flakery serve`
/// (`flakery_client::Client`).
pub trait IdSource: Sync {
    /// An ID ready without waiting; `None`: `next_id` would wait.
    fn try_next_id(&self) -> flakery::Result<Option<i64>>;
    /// One ID, waiting as long as the source must (called without the GIL).
    fn next_id(&self) -> flakery::Result<i64>;
    /// The filler of one call of `count` IDs, called a chunk at a time without the GIL: a
    /// client's fills every chunk within the call's one deadline (`Client::batch`).
    fn batch(&self, count: usize) -> impl FnMut(&mut [i64]) -> flakery::Result<()> + Send;
}

impl IdSource for flakery::Generator {
    #[inline(always)]
    fn try_next_id(&self) -> flakery::Result<Option<i64>> {
        flakery::Generator::try_next_id(self)
    }

    fn next_id(&self) -> flakery::Result<i64> {
        flakery::Generator::next_id(self)
    }

    /// No deadline: it waits for a tick (bounded by the clock's allowance) or for its
    /// lease's grant (bounded by the lease), never for a server.
    fn batch(&self, _: usize) -> impl FnMut(&mut [i64]) -> flakery::Result<()> + Send {
        move |chunk: &mut [i64]| flakery::Generator::fill(self, chunk)
    }
}

impl IdSource for flakery_client::Client {
    #[inline(always)]
    fn try_next_id(&self) -> flakery::Result<Option<i64>> {
        Ok(flakery_client::Client::try_next_id(self))
    }

    fn next_id(&self) -> flakery::Result<i64> {
        flakery_client::Client::next_id(self)
    }

    fn batch(&self, count: usize) -> impl FnMut(&mut [i64]) -> flakery::Result<()> + Send {
        let mut batch = flakery_client::Client::batch(self, count);
        move |chunk: &mut [i64]| batch.fill(chunk)
    }
}

/// One ID; waits (without the GIL) only when the source says it would have to.
#[inline(always)]
pub fn next_id(py: Python<'_>, source: &impl IdSource) -> PyResult<i64> {
    match source.try_next_id() {
        Ok(Some(id)) => Ok(id),
        Ok(None) => py.detach(|| source.next_id()).py(),
        Err(error) => Err(to_py(error)),
    }
}

/// Batches up to this size are made with the GIL held, one ID at a time, as long as none has
/// to wait; releasing and taking back the GIL costs more than making them.
const SMALL_BATCH: usize = 64;

/// Larger batches are made this many at a time without the GIL, each run turned into ints
/// while it is still in the cache (and no second copy of the whole batch is held besides the
/// list); every chunk within the one call's deadline (`IdSource::batch`).
const CHUNK: usize = 16 * 1024;

/// `n` new IDs as a list of ints: increasing (a client's, within each block).
pub fn next_ids<'py>(
    py: Python<'py>,
    source: &impl IdSource,
    n: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyList>> {
    let n = args::count(n)?;
    let list = IdList::new(py, n)?;
    let mut done = 0;
    if n <= SMALL_BATCH {
        while done < n {
            match source.try_next_id().py()? {
                Some(id) => list.set(done, id)?,
                None => break,
            }
            done += 1;
        }
    }
    if done < n {
        let mut fill = source.batch(n - done);
        let mut buffer = vec![0i64; (n - done).min(CHUNK)];
        while done < n {
            let chunk = &mut buffer[..(n - done).min(CHUNK)];
            py.detach(|| fill(chunk)).py()?;
            for &id in chunk.iter() {
                list.set(done, id)?;
                done += 1;
            }
        }
    }
    Ok(list.0)
}

/// One new ID as text: `"decimal"` (when `format` is None), `"base32"` or `"base62"`.
pub fn next_id_text(
    py: Python<'_>,
    source: &impl IdSource,
    format: Option<&Bound<'_, PyAny>>,
) -> PyResult<String> {
    let format = match args::opt_string(format, "format")? {
        Some(text) => text.parse::<IdFormat>().py()?,
        None => IdFormat::Decimal,
    };
    format.format(next_id(py, source)?).py()
}

/// Takes an ID (an int or its decimal str, up to 2^64-1 for an unsigned layout such as
/// `discord`) apart under `layout`.
pub fn decode(id: &Bound<'_, PyAny>, layout: Arc<Layout>) -> PyResult<PyDecoded> {
    let id = args::id_u64(id)?;
    Ok(PyDecoded {
        decoded: flakery::decode_u64(id, &layout).py()?,
        layout,
    })
}

/// A list of ints filled in place, with the fewest calls the limited API allows.
struct IdList<'py>(Bound<'py, PyList>);

impl<'py> IdList<'py> {
    /// A list of `n` empty (NULL) slots: each must be set before Python sees the list.
    fn new(py: Python<'py>, n: usize) -> PyResult<Self> {
        let len = ffi::Py_ssize_t::try_from(n)
            .map_err(|_| PyMemoryError::new_err(format!("no memory for {n} IDs")))?;
        // SAFETY: `PyList_New` returns a new reference, or NULL with an exception set. A list
        // whose slots are still NULL may be deallocated (an error half-way drops it).
        unsafe {
            let list = ffi::PyList_New(len);
            if list.is_null() {
                return Err(PyErr::fetch(py));
            }
            Ok(IdList(
                Bound::from_owned_ptr(py, list).cast_into_unchecked::<PyList>(),
            ))
        }
    }

    #[inline(always)]
    fn set(&self, index: usize, id: i64) -> PyResult<()> {
        // SAFETY: `PyLong_FromLongLong` returns a new reference or NULL with an exception set;
        // `PyList_SetItem` steals it, at an index below the length the list was made with.
        unsafe {
            let item = ffi::PyLong_FromLongLong(id);
            if item.is_null() {
                return Err(PyErr::fetch(self.0.py()));
            }
            ffi::PyList_SetItem(self.0.as_ptr(), index as ffi::Py_ssize_t, item);
        }
        Ok(())
    }
}
