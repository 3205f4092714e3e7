//! `flakery.next_id()` and `Client.next_id()` as plain CPython functions (`METH_NOARGS`),
//! without pyo3's trampoline: the hot path is the core's (`try_next_id_fast`: never blocks,
//! never fails) or the client's stock (`Client::try_next_id`), and one `PyLong_FromLongLong`.
//! Everything else (the first call, which makes the process-wide generator; a used-up tick or
//! an empty stock, which wait without the GIL; a fork; an error) calls the pyo3 function
//! behind it, so no logic and no error lives twice.
//!
//! Measured under callgrind (docs/benchmarks.md, "Instructions per call"): the trampoline (the
//! GIL count in a thread-local read through `__tls_get_addr`, the panic guard, the reference
//! pool) and the `PyResult` plumbing around the core's call were more than half of the
//! instructions `flakery.next_id()` spent in flakery (140 a call, 66 without them).

use std::ffi::CStr;
use std::os::raw::c_int;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyType;

use crate::generator;

/// A `next_id` with a hot path that answers without pyo3, and a pyo3 callable behind it.
pub trait NoArgs: 'static {
    /// The hot path: an ID, or `None` to call the slow path. Never blocks, never fails.
    ///
    /// # Safety
    /// The GIL is held; `slf` is what CPython passed: the module, or an instance of the
    /// method's class (its descriptor checks the type before the call).
    unsafe fn fast(slf: *mut ffi::PyObject) -> Option<i64>;

    /// The pyo3 callable of the slow path, set once when it is installed.
    fn slow() -> &'static OnceLock<Py<PyAny>>;

    /// The slow callable takes the instance (a method), or nothing (a module function).
    const TAKES_SELF: bool;
}

/// CPython calls this with the GIL held.
unsafe extern "C" fn trampoline<T: NoArgs>(
    slf: *mut ffi::PyObject,
    _no_args: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    // The hot path has nothing that panics; the guard costs nothing unless one does, and
    // then the slow path answers (no unwinding across CPython's frames).
    // SAFETY: as `NoArgs::fast` requires: CPython holds the GIL and passes `slf`.
    let fast = catch_unwind(AssertUnwindSafe(|| unsafe { T::fast(slf) }));
    if let Ok(Some(id)) = fast {
        // SAFETY: the GIL is held; NULL with MemoryError set is a valid answer.
        return unsafe { ffi::PyLong_FromLongLong(id) };
    }
    match T::slow().get() {
        // SAFETY: a callable held for the life of the process, called with the GIL held; its
        // result (or NULL with its exception set) is ours to return. `slf` is a live object
        // for the whole call; the argument list ends with NULL.
        Some(slow) => unsafe {
            if T::TAKES_SELF {
                ffi::PyObject_CallFunctionObjArgs(
                    slow.as_ptr(),
                    slf,
                    std::ptr::null_mut::<ffi::PyObject>(),
                )
            } else {
                ffi::PyObject_CallObject(slow.as_ptr(), std::ptr::null_mut())
            }
        },
        None => {
            // SAFETY: the GIL is held; both strings are static and NUL-terminated.
            unsafe {
                ffi::PyErr_SetString(
                    ffi::PyExc_SystemError,
                    c"next_id was called before flakery finished importing".as_ptr(),
                )
            };
            std::ptr::null_mut()
        }
    }
}

/// The definition CPython reads for the life of the process (leaked on purpose: it keeps a
/// pointer to it as long as the function may be called). The text signature (before `--`) is
/// what inspect.signature and stubtest read.
fn definition<T: NoArgs>(name: &'static CStr, doc: &'static CStr) -> *mut ffi::PyMethodDef {
    Box::leak(Box::new(ffi::PyMethodDef {
        ml_name: name.as_ptr(),
        ml_meth: ffi::PyMethodDefPointer {
            PyCFunction: trampoline::<T>,
        },
        ml_flags: ffi::METH_NOARGS as c_int,
        ml_doc: doc.as_ptr(),
    }))
}

/// The module-level `next_id`: the process-wide generator's.
struct ModuleNextId;

static MODULE_SLOW: OnceLock<Py<PyAny>> = OnceLock::new();

impl NoArgs for ModuleNextId {
    #[inline(always)]
    unsafe fn fast(_module: *mut ffi::PyObject) -> Option<i64> {
        generator::default_if_made().and_then(|g| g.try_next_id_fast())
    }

    fn slow() -> &'static OnceLock<Py<PyAny>> {
        &MODULE_SLOW
    }

    const TAKES_SELF: bool = false;
}

/// Adds `next_id` to the module: the plain function above, with `slow` (the pyo3 function)
/// behind it.
pub fn add_next_id(m: &Bound<'_, PyModule>, slow: Bound<'_, PyAny>) -> PyResult<()> {
    let _ = ModuleNextId::slow().set(slow.unbind());
    let def = definition::<ModuleNextId>(
        c"next_id",
        c"next_id()\n--\n\nOne ID from the process-wide generator (made from the environment on first use).",
    );
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

/// Replaces the method `name` of the class `class` (pyo3's) by the plain method of `T`, with
/// `slow` (a pyo3 function taking the instance) behind it.
pub fn set_method<T: NoArgs>(
    class: &Bound<'_, PyType>,
    name: &'static CStr,
    doc: &'static CStr,
    slow: Bound<'_, PyAny>,
) -> PyResult<()> {
    let _ = T::slow().set(slow.unbind());
    let def = definition::<T>(name, doc);
    // SAFETY: a static definition and a live class; the new reference (or NULL with an
    // exception) is taken over by `from_owned_ptr_or_err`.
    let method = unsafe {
        Bound::from_owned_ptr_or_err(
            class.py(),
            ffi::PyDescr_NewMethod(class.as_ptr().cast::<ffi::PyTypeObject>(), def),
        )?
    };
    class.setattr(name.to_str().unwrap_or("next_id"), method)
}
