//! Every error the binding throws, by one rule:
//!
//! - a `TypeError` when a JavaScript value has the wrong type (code `invalid_argument`);
//! - a `RangeError` for every other `invalid_argument` or `invalid_layout`, whether the bad
//!   value came from an argument or from a `FLAKERY_*` variable;
//! - a plain `Error` for every other code (`time_exhausted`, `lease_lost`, ...).
//!
//! Each carries the stable code as `.code`. Every function of the binding, the hand-registered
//! hot calls included, throws through here.

use flakery::ErrorCode;
use napi::bindgen_prelude::{JsError, JsRangeError, JsTypeError};
use napi::{sys, Status};

/// What every function of the binding returns. Its error is always `PENDING` once this module
/// has thrown (napi-rs and `fast::finish` leave a pending exception as it is); any other status
/// is a failure of Node-API itself, which they throw as an `Error` with that code.
pub(crate) type JsResult<T> = napi::Result<T, &'static str>;
pub(crate) type Fail = napi::Error<&'static str>;

pub(crate) const PENDING: &str = "PendingException";

#[derive(Clone, Copy)]
enum Class {
    Type,
    Range,
    Plain,
}

/// Throws an error of `class` with `.code` and returns the error that says one is pending.
fn throw(env: sys::napi_env, class: Class, code: ErrorCode, message: String) -> Fail {
    let error = napi::Error::new(code.as_str(), message);
    // SAFETY: `env` is the live environment of the current call.
    // napi-rs's safe throwers do not fit: `Env::throw_type_error`/`throw_range_error` pass the
    // message as a C string, which cannot hold a NUL (a key or text quoted in a message may),
    // and `Env::throw` takes only `JsTypeError<Status>`, whose `.code` is a napi-rs status.
    unsafe {
        match class {
            Class::Type => JsTypeError::from(error).throw_into(env),
            Class::Range => JsRangeError::from(error).throw_into(env),
            Class::Plain => JsError::from(error).throw_into(env),
        }
    }
    napi::Error::new(PENDING, String::new())
}

/// The error `core_error` throws, as a value: a promise's rejection (`Generator.create`).
pub(crate) fn core_error_value(env: sys::napi_env, error: flakery::Error) -> napi::Error {
    let code = error.code();
    let message = flakery::option_table::message_on(&error, flakery::Surface::Node);
    let error = napi::Error::new(code.as_str(), message);
    // SAFETY: `env` is the live environment of the current call; the value is wrapped at once
    // in an `Error` that holds a reference to it. No safe call makes a `RangeError` value
    // (`Env::create_error` makes only a plain `Error`).
    unsafe {
        let value = if code.is_argument_error() {
            JsRangeError::from(error).into_value(env)
        } else {
            JsError::from(error).into_value(env)
        };
        napi::Error::from(napi::Unknown::from_raw_unchecked(env, value))
    }
}

/// A value of the wrong JavaScript type.
pub(crate) fn type_error(env: sys::napi_env, message: String) -> Fail {
    throw(env, Class::Type, ErrorCode::InvalidArgument, message)
}

/// A value of the right type that the binding refuses before the core sees it.
pub(crate) fn range_error(env: sys::napi_env, message: String) -> Fail {
    throw(env, Class::Range, ErrorCode::InvalidArgument, message)
}

/// An error of the core, its options named as JavaScript names them (`workerId`).
pub(crate) fn core_error(env: sys::napi_env, error: flakery::Error) -> Fail {
    let code = error.code();
    let class = if code.is_argument_error() {
        Class::Range
    } else {
        Class::Plain
    };
    throw(
        env,
        class,
        code,
        flakery::option_table::message_on(&error, flakery::Surface::Node),
    )
}

/// A failure of Node-API itself (rare: out of memory), or an exception thrown by the caller's
/// own getter, which stays pending.
pub(crate) fn napi_error(error: napi::Error) -> Fail {
    if error.status == Status::PendingException {
        napi::Error::new(PENDING, String::new())
    } else {
        napi::Error::new("internal_error", error.reason.clone())
    }
}

pub(crate) trait OrThrow<T> {
    fn or_throw(self, env: sys::napi_env) -> JsResult<T>;
}

impl<T> OrThrow<T> for flakery::Result<T> {
    #[inline]
    fn or_throw(self, env: sys::napi_env) -> JsResult<T> {
        self.map_err(|e| core_error(env, e))
    }
}

pub(crate) trait OrNapi<T> {
    fn or_napi(self) -> JsResult<T>;
}

impl<T> OrNapi<T> for napi::Result<T> {
    #[inline]
    fn or_napi(self) -> JsResult<T> {
        self.map_err(napi_error)
    }
}

pub(crate) fn check(status: sys::napi_status) -> JsResult<()> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else if status == sys::Status::napi_pending_exception {
        Err(napi::Error::new(PENDING, String::new()))
    } else {
        Err(napi::Error::new(
            "internal_error",
            format!("a Node-API call failed with status {status}"),
        ))
    }
}
