//! `flakery.next_id()` as a plain CPython function (`METH_NOARGS`), without pyo3's
//! trampoline: its hot path is the core's (`try_next_id_fast`: never blocks, never fails) and
//! one `PyLong_FromLongLong`. Everything else (the first call, which makes the process-wide
//! generator; a used-up tick, which waits without the GIL; a fork; an error) calls the pyo3
//! function `generator::next_id` goes through, so no logic and no error lives twice.
//!
//! Measured under callgrind (docs/benchmarks.md, "Instructions per call"): the trampoline (the
//! GIL count in a thread-local read through `__tls_get_addr`, the panic guard, the reference
//! pool) and the `PyResult` plumbing around the core's call were more than half of the
//! instructions `flakery.next_id()` spent in flakery (140 a call, 66 without them).

use std::os::raw::c_int;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyCFunction;

use crate::generator;

/// The pyo3 function behind the slow path, made once at import.
static SLOW: OnceLock<Py<PyCFunction>> = OnceLock::new();

/// CPython calls this with the GIL held.
unsafe extern "C" fn next_id(
    _module: *mut ffi::PyObject,
    _no_args: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    // The hot path has nothing that panics; the guard costs nothing unless one does, and
    // then the slow path answers (no unwinding across CPython's frames).
    let fast = catch_unwind(AssertUnwindSafe(|| {
        generator::default_if_made().and_then(|g| g.try_next_id_fast())
    }));
    if let Ok(Some(id)) = fast {
        // SAFETY: the GIL is held; NULL with MemoryError set is a valid answer.
        return unsafe { ffi::PyLong_FromLongLong(id) };
    }
    match SLOW.get() {
        // SAFETY: a callable held for the life of the process, called with the GIL held; its
        // result (or NULL with its exception set) is ours to return.
        Some(slow) => unsafe { ffi::PyObject_CallObject(slow.as_ptr(), std::ptr::null_mut()) },
        None => {
            // SAFETY: the GIL is held; both strings are static and NUL-terminated.
            unsafe {
                ffi::PyErr_SetString(
                    ffi::PyExc_SystemError,
                    c"flakery.next_id was called before its module finished importing".as_ptr(),
                )
            };
            std::ptr::null_mut()
        }
    }
}

/// Adds `next_id` to the module: the plain function above, with `slow` (the pyo3 function)
/// behind it.
pub fn add_next_id(m: &Bound<'_, PyModule>, slow: Bound<'_, PyCFunction>) -> PyResult<()> {
    let _ = SLOW.set(slow.unbind());
    // Leaked on purpose: CPython keeps a pointer to the definition for as long as the
    // function may be called, which is the life of the process.
    let def: &'static mut ffi::PyMethodDef = Box::leak(Box::new(ffi::PyMethodDef {
        ml_name: c"next_id".as_ptr(),
        ml_meth: ffi::PyMethodDefPointer {
            PyCFunction: next_id,
        },
        ml_flags: ffi::METH_NOARGS as c_int,
        // The text signature (before `--`) is what inspect.signature and stubtest read.
        ml_doc: c"next_id()\n--\n\nOne ID from the process-wide generator (made from the environment on first use).".as_ptr(),
    }));
    let name = m.name()?;
    // SAFETY: a static definition; the module and its name are live objects; the new
    // reference (or NULL with an exception) is taken over by `from_owned_ptr_or_err`.
    let function = unsafe {
        Bound::from_owned_ptr_or_err(
            m.py(),
            ffi::PyCFunction_NewEx(def, m.as_ptr(), name.as_ptr()),
        )?
    };
    m.add("next_id", function)
}
