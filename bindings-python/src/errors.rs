//! The core's errors as Python exceptions. The classes live in `flakery/_errors.py` (plain
//! Python, so that they pickle, subclass and type-check like any exception); this module
//! looks them up once and raises the one that belongs to the core's error code.

use flakery::option_table::message_on;
use flakery::{Error, ErrorCode, Surface};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;

struct Classes {
    /// In the order of `ErrorCode::ALL`.
    by_code: Vec<Py<PyType>>,
    /// `InvalidArgumentTypeError`: code `invalid_argument`, and also a `TypeError`.
    wrong_type: Py<PyType>,
}

static CLASSES: PyOnceLock<Classes> = PyOnceLock::new();

/// The class name of each code, as `flakery/_errors.py` defines it.
fn class_name(code: ErrorCode) -> &'static str {
    match code {
        ErrorCode::InvalidLayout => "InvalidLayoutError",
        ErrorCode::InvalidArgument => "InvalidArgumentError",
        ErrorCode::TimeExhausted => "TimeExhaustedError",
        ErrorCode::ClockMovedBackwards => "ClockMovedBackwardsError",
        ErrorCode::LeaseLost => "LeaseLostError",
        ErrorCode::CoordinatorUnavailable => "CoordinatorUnavailableError",
        ErrorCode::WorkerIdsExhausted => "WorkerIdsExhaustedError",
        ErrorCode::Forked => "ForkedError",
        ErrorCode::ServersUnavailable => "ServersUnavailableError",
        ErrorCode::Unauthorized => "UnauthorizedError",
        ErrorCode::BadAnswer => "BadAnswerError",
        ErrorCode::TlsFailed => "TlsFailedError",
    }
}

fn classes(py: Python<'_>) -> PyResult<&Classes> {
    CLASSES.get_or_try_init(py, || {
        let module = py.import("flakery._errors")?;
        let class = |name: &str| -> PyResult<Py<PyType>> {
            Ok(module.getattr(name)?.cast_into::<PyType>()?.unbind())
        };
        Ok(Classes {
            by_code: ErrorCode::ALL
                .iter()
                .map(|&code| class(class_name(code)))
                .collect::<PyResult<_>>()?,
            wrong_type: class("InvalidArgumentTypeError")?,
        })
    })
}

fn raise(py: Python<'_>, pick: impl FnOnce(&Classes) -> &Py<PyType>, message: String) -> PyErr {
    match classes(py) {
        Ok(classes) => PyErr::from_type(pick(classes).bind(py).clone(), (message,)),
        Err(err) => err,
    }
}

/// The exception for a core error: the class of its code, with the core's message, the
/// options it names spelt as Python's keywords (a client's `max_age` is `max_age_ms`).
pub fn to_py(error: Error) -> PyErr {
    Python::attach(|py| {
        let index = ErrorCode::ALL
            .iter()
            .position(|&code| code == error.code())
            .unwrap_or(0);
        raise(
            py,
            |c| &c.by_code[index],
            message_on(&error, Surface::Python),
        )
    })
}

/// An `invalid_argument` error that the binding finds while converting an argument.
pub fn invalid_argument(message: impl Into<String>) -> PyErr {
    to_py(Error::new(ErrorCode::InvalidArgument, message))
}

/// An argument of the wrong Python type: `InvalidArgumentTypeError` (code `invalid_argument`,
/// and a `TypeError` as well as a `ValueError`).
pub fn wrong_type(name: &str, expected: &str, got: &Bound<'_, PyAny>) -> PyErr {
    let type_name = got
        .get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".to_string());
    type_error(format!("{name} must be {expected}, not {type_name}"))
}

/// `InvalidArgumentTypeError` with a message of its own (a required argument left out).
pub fn type_error(message: String) -> PyErr {
    Python::attach(|py| raise(py, |c| &c.wrong_type, message))
}

/// `.py()` on a core result: the error becomes its Python exception.
pub trait IntoPyResult<T> {
    fn py(self) -> PyResult<T>;
}

impl<T> IntoPyResult<T> for flakery::Result<T> {
    #[inline]
    fn py(self) -> PyResult<T> {
        self.map_err(to_py)
    }
}
