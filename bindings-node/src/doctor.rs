//! `doctor(options?)`: the core's budgets report (docs/doctor.md) as a plain object. Converts
//! the options (the `Generator`'s conversion) and the report's value tree; the report itself
//! is the core's, the same one `flakery doctor --json` prints.
//!
//! Built from the core's `Value` rather than parsed from its JSON: `JSON.parse` would round an
//! integer past 2^53 without a word, where this gives it as a `bigint`.

// napi-rs registers the module hook only outside `cfg(test)` (as in fast.rs).
#![cfg_attr(test, allow(dead_code))]

use std::ptr;

use flakery::doctor::{Request, Value};
use napi::bindgen_prelude::{ToNapiValue, TypeName};
use napi::{sys, Env, Unknown, ValueType};
use napi_derive::napi;

use crate::errors::{check, JsResult, OrThrow};

/// The budgets report for these options (the others from the `FLAKERY_*` environment, as a
/// `Generator` reads them): `status`, `exit_code`, a member per section, `findings`. Takes no
/// node ID lease. With a coordinator configured it probes it over TCP on the calling thread,
/// as `new Generator` does; without one it reads only this machine's state.
#[napi(
    catch_unwind,
    ts_args_type = "options?: GeneratorOptions",
    ts_return_type = "DoctorReport"
)]
pub fn doctor(env: Env, options: Unknown) -> napi::Result<Report, &'static str> {
    let env = env.raw();
    let options = crate::generator_options(env, &options)?;
    let request = Request::for_options(options).or_throw(env)?;
    let report = flakery::doctor::report(&request).or_throw(env)?;
    Ok(Report(report.to_value()))
}

/// The report's value tree, made into JavaScript values when returned.
pub struct Report(Value);

impl ToNapiValue for Report {
    unsafe fn to_napi_value(env: sys::napi_env, val: Self) -> napi::Result<sys::napi_value> {
        js_value(env, &val.0).map_err(|e| napi::Error::new(napi::Status::GenericFailure, e.reason))
    }
}

impl TypeName for Report {
    fn type_name() -> &'static str {
        "DoctorReport"
    }

    fn value_type() -> ValueType {
        ValueType::Object
    }
}

/// The largest integer a `Number` holds exactly, and every one below it (2^53 - 1).
const MAX_SAFE_INTEGER: i128 = (1 << 53) - 1;

fn js_value(env: sys::napi_env, value: &Value) -> JsResult<sys::napi_value> {
    let mut out = ptr::null_mut();
    // SAFETY (each call below): env is the live environment of the current call; every
    // pointer passed describes memory that outlives the call, and `out` is written by it.
    match value {
        Value::Null => check(unsafe { sys::napi_get_null(env, &mut out) })?,
        Value::Bool(on) => check(unsafe { sys::napi_get_boolean(env, *on, &mut out) })?,
        Value::Int(n) if n.abs() <= MAX_SAFE_INTEGER => {
            check(unsafe { sys::napi_create_double(env, *n as f64, &mut out) })?
        }
        Value::Int(n) => {
            let magnitude = n.unsigned_abs();
            let words = [magnitude as u64, (magnitude >> 64) as u64];
            check(unsafe {
                sys::napi_create_bigint_words(env, i32::from(*n < 0), 2, words.as_ptr(), &mut out)
            })?
        }
        // JSON has no NaN or infinity: the core's JSON writes null, and so does this.
        Value::Float(x) if !x.is_finite() => check(unsafe { sys::napi_get_null(env, &mut out) })?,
        Value::Float(x) => check(unsafe { sys::napi_create_double(env, *x, &mut out) })?,
        Value::Str(text) => out = js_string(env, text)?,
        Value::List(items) => {
            check(unsafe { sys::napi_create_array_with_length(env, items.len(), &mut out) })?;
            for (i, item) in items.iter().enumerate() {
                let item = js_value(env, item)?;
                check(unsafe { sys::napi_set_element(env, out, i as u32, item) })?;
            }
        }
        Value::Map(members) => {
            check(unsafe { sys::napi_create_object(env, &mut out) })?;
            for (key, member) in members {
                let (key, member) = (js_string(env, key)?, js_value(env, member)?);
                check(unsafe { sys::napi_set_property(env, out, key, member) })?;
            }
        }
    }
    Ok(out)
}

fn js_string(env: sys::napi_env, text: &str) -> JsResult<sys::napi_value> {
    let mut out = ptr::null_mut();
    // SAFETY: the pointer and length describe `text`'s UTF-8 bytes (NULs included).
    check(unsafe {
        sys::napi_create_string_utf8(env, text.as_ptr().cast(), text.len() as isize, &mut out)
    })?;
    Ok(out)
}
