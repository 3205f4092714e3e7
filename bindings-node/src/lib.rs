//! The Node binding of flakery: converts JavaScript arguments to the core's types, calls the
//! core, and converts results and errors back. Everything about IDs lives in the core.
//!
//! Arguments are read by hand from `Unknown` values rather than by napi-rs's automatic
//! conversions, for two reasons: napi-rs converts `-1` to the `u32` 4294967295 and `1.5` to
//! 1 without complaint, and its conversion errors are plain `Error`s with a napi status as
//! code. Here a wrong type is a `TypeError`, a value the core refuses is a `RangeError`, any
//! other failure an `Error`, and every one of them carries the contract's `.code`.
//!
//! The `#[napi(object)]` structs at the end only describe shapes for the generated
//! `index.d.ts`; values of those shapes are built and read by hand.

use std::ptr;
use std::sync::Arc;

use flakery::{ErrorCode, Layout, Options, SequencePolicy};
use napi::bindgen_prelude::{i64n, FromNapiValue, JsRangeError, JsTypeError, This, ToNapiValue};
use napi::{sys, Env, JsValue, Status, Unknown, ValueType};
use napi_derive::napi;

mod fast;

// ---------------------------------------------------------------------------------------------
// Errors

/// The error every exported function returns: its status is the contract's code, which napi-rs
/// puts on the thrown error's `.code`. The status `PendingException` means that an exception
/// (a `TypeError` or `RangeError` thrown here, or one thrown by a getter of the caller's own
/// object) is already pending, and napi-rs leaves it as it is.
type JsResult<T> = napi::Result<T, &'static str>;
type Fail = napi::Error<&'static str>;

const PENDING: &str = "PendingException";

#[derive(Clone, Copy)]
enum Class {
    Type,
    Range,
}

/// Throws a `TypeError` or `RangeError` with `.code` and returns the error that says so.
fn throw(env: sys::napi_env, class: Class, code: ErrorCode, message: String) -> Fail {
    let error = napi::Error::new(code.as_str(), message);
    // SAFETY: `env` is the live environment of the current call.
    unsafe {
        match class {
            Class::Type => JsTypeError::from(error).throw_into(env),
            Class::Range => JsRangeError::from(error).throw_into(env),
        }
    }
    napi::Error::new(PENDING, String::new())
}

fn type_error(env: sys::napi_env, message: String) -> Fail {
    throw(env, Class::Type, ErrorCode::InvalidArgument, message)
}

fn range_error(env: sys::napi_env, message: String) -> Fail {
    throw(env, Class::Range, ErrorCode::InvalidArgument, message)
}

/// A core error: a bad argument or layout is a `RangeError`, anything else (time exhausted,
/// clock moved backwards, lease lost, ...) a plain `Error`; both with the contract's code.
fn core_error(env: sys::napi_env, error: flakery::Error) -> Fail {
    let code = error.code();
    if code.is_argument_error() {
        throw(env, Class::Range, code, error.message().to_string())
    } else {
        napi::Error::new(code.as_str(), error.message().to_string())
    }
}

/// A failure of napi itself (rare: out of memory, or an exception thrown by the caller's
/// getter, which stays pending).
fn napi_error(error: napi::Error) -> Fail {
    if error.status == Status::PendingException {
        napi::Error::new(PENDING, String::new())
    } else {
        napi::Error::new("internal_error", error.reason.clone())
    }
}

trait OrThrow<T> {
    fn or_throw(self, env: sys::napi_env) -> JsResult<T>;
}

impl<T> OrThrow<T> for flakery::Result<T> {
    #[inline]
    fn or_throw(self, env: sys::napi_env) -> JsResult<T> {
        self.map_err(|e| core_error(env, e))
    }
}

trait OrNapi<T> {
    fn or_napi(self) -> JsResult<T>;
}

impl<T> OrNapi<T> for napi::Result<T> {
    #[inline]
    fn or_napi(self) -> JsResult<T> {
        self.map_err(napi_error)
    }
}

fn check(status: sys::napi_status) -> JsResult<()> {
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

// ---------------------------------------------------------------------------------------------
// Building JavaScript values

/// A value already made through Node-API, handed back as it is.
pub struct Raw(sys::napi_value);

impl ToNapiValue for Raw {
    unsafe fn to_napi_value(_env: sys::napi_env, val: Self) -> napi::Result<sys::napi_value> {
        Ok(val.0)
    }
}

fn new_bigint(env: sys::napi_env, value: i64) -> JsResult<sys::napi_value> {
    let mut out = ptr::null_mut();
    // SAFETY: env is live; out is written by the call.
    check(unsafe { sys::napi_create_bigint_int64(env, value, &mut out) })?;
    Ok(out)
}

fn new_number(env: sys::napi_env, value: f64) -> JsResult<sys::napi_value> {
    let mut out = ptr::null_mut();
    // SAFETY: as above.
    check(unsafe { sys::napi_create_double(env, value, &mut out) })?;
    Ok(out)
}

/// A field value: a `number` when the field is at most 53 bits wide (every value is exact),
/// a `bigint` when it is wider. The type depends on the layout, never on the value.
fn new_field_value(env: sys::napi_env, value: u64, bits: u32) -> JsResult<sys::napi_value> {
    if bits <= 53 {
        new_number(env, value as f64)
    } else {
        let mut out = ptr::null_mut();
        // SAFETY: as above.
        check(unsafe { sys::napi_create_bigint_uint64(env, value, &mut out) })?;
        Ok(out)
    }
}

/// The largest magnitude of a JavaScript `Date`, in milliseconds.
const MAX_DATE_MS: i64 = 8_640_000_000_000_000;

fn new_date(env: sys::napi_env, ms: i64) -> JsResult<sys::napi_value> {
    if !(-MAX_DATE_MS..=MAX_DATE_MS).contains(&ms) {
        return Err(range_error(
            env,
            format!("timestamp {ms} ms is beyond what a JavaScript Date can hold"),
        ));
    }
    let mut out = ptr::null_mut();
    // SAFETY: as above.
    check(unsafe { sys::napi_create_date(env, ms as f64, &mut out) })?;
    Ok(out)
}

/// An ID that becomes a decimal string.
pub struct IdString(i64);

impl ToNapiValue for IdString {
    unsafe fn to_napi_value(env: sys::napi_env, val: Self) -> napi::Result<sys::napi_value> {
        new_id_string(env, val.0)
            .map_err(|e| napi::Error::new(Status::GenericFailure, e.reason.clone()))
    }
}

impl napi::bindgen_prelude::TypeName for IdString {
    fn type_name() -> &'static str {
        "string"
    }

    fn value_type() -> ValueType {
        ValueType::String
    }
}

/// Writes `id` in decimal into a stack buffer and makes a string of it: no heap allocation.
fn new_id_string(env: sys::napi_env, id: i64) -> JsResult<sys::napi_value> {
    // Digits written backwards into a stack buffer: no allocation. IDs are never negative.
    let mut buf = [0u8; 20];
    let mut at = buf.len();
    let mut rest = id as u64;
    loop {
        at -= 1;
        buf[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    let digits = &buf[at..];
    let mut out = ptr::null_mut();
    // SAFETY: the pointer and length describe initialised ASCII bytes.
    check(unsafe {
        sys::napi_create_string_latin1(env, digits.as_ptr().cast(), digits.len() as isize, &mut out)
    })?;
    Ok(out)
}

/// A `BigInt64Array` of `n` new IDs, written by the core straight into the array's memory.
fn new_id_array(
    env: sys::napi_env,
    n: usize,
    fill: impl FnOnce(&mut [i64]) -> flakery::Result<()>,
) -> JsResult<sys::napi_value> {
    let mut data: *mut std::ffi::c_void = ptr::null_mut();
    let mut buffer = ptr::null_mut();
    // SAFETY: env is live; the call writes data and buffer.
    check(unsafe { sys::napi_create_arraybuffer(env, n * 8, &mut data, &mut buffer) })?;
    if n > 0 {
        if data.is_null() || !data.cast::<i64>().is_aligned() {
            return Err(napi::Error::new(
                "internal_error",
                "an ArrayBuffer's memory is not aligned for 64-bit integers".to_string(),
            ));
        }
        // SAFETY: the buffer is `n * 8` bytes, aligned for i64 (checked), owned by the new
        // ArrayBuffer, which nothing else can see yet; it stays alive while `buffer` is a
        // live handle of this call's scope.
        let ids = unsafe { std::slice::from_raw_parts_mut(data.cast::<i64>(), n) };
        fill(ids).map_err(generating_error)?;
    }
    let mut array = ptr::null_mut();
    // SAFETY: buffer is a live ArrayBuffer of exactly n i64 elements.
    check(unsafe {
        sys::napi_create_typedarray(
            env,
            sys::TypedarrayType::bigint64_array,
            n,
            buffer,
            0,
            &mut array,
        )
    })?;
    Ok(array)
}

/// A plain object under construction.
struct ObjectBuilder {
    env: sys::napi_env,
    object: sys::napi_value,
}

impl ObjectBuilder {
    fn new(env: sys::napi_env) -> napi::Result<Self, &'static str> {
        let mut object = ptr::null_mut();
        // SAFETY: env is live.
        check(unsafe { sys::napi_create_object(env, &mut object) })?;
        Ok(ObjectBuilder { env, object })
    }

    /// Sets `key` (a NUL-terminated literal) to a value made through Node-API.
    fn set(&mut self, key: &std::ffi::CStr, value: sys::napi_value) -> JsResult<()> {
        // SAFETY: object and value are live handles; key is NUL-terminated.
        check(unsafe { sys::napi_set_named_property(self.env, self.object, key.as_ptr(), value) })
    }

    /// Sets a key that is not a literal (a field name from a layout).
    fn set_dynamic(&mut self, key: &str, value: sys::napi_value) -> JsResult<()> {
        let mut name = ptr::null_mut();
        // SAFETY: the pointer and length describe valid UTF-8.
        check(unsafe {
            sys::napi_create_string_utf8(
                self.env,
                key.as_ptr().cast(),
                key.len() as isize,
                &mut name,
            )
        })?;
        // SAFETY: all three handles are live.
        check(unsafe { sys::napi_set_property(self.env, self.object, name, value) })
    }

    fn set_number(&mut self, key: &std::ffi::CStr, value: f64) -> JsResult<()> {
        let value = new_number(self.env, value)?;
        self.set(key, value)
    }

    fn set_string(&mut self, key: &std::ffi::CStr, value: &str) -> JsResult<()> {
        let mut out = ptr::null_mut();
        // SAFETY: the pointer and length describe valid UTF-8.
        check(unsafe {
            sys::napi_create_string_utf8(
                self.env,
                value.as_ptr().cast(),
                value.len() as isize,
                &mut out,
            )
        })?;
        self.set(key, out)
    }

    fn set_null(&mut self, key: &std::ffi::CStr) -> JsResult<()> {
        let mut out = ptr::null_mut();
        // SAFETY: env is live.
        check(unsafe { sys::napi_get_null(self.env, &mut out) })?;
        self.set(key, out)
    }

    fn finish(self) -> sys::napi_value {
        self.object
    }
}

fn new_array(env: sys::napi_env, items: &[sys::napi_value]) -> JsResult<sys::napi_value> {
    let mut array = ptr::null_mut();
    // SAFETY: env is live.
    check(unsafe { sys::napi_create_array_with_length(env, items.len(), &mut array) })?;
    for (i, item) in items.iter().enumerate() {
        // SAFETY: array and item are live handles.
        check(unsafe { sys::napi_set_element(env, array, i as u32, *item) })?;
    }
    Ok(array)
}

// ---------------------------------------------------------------------------------------------
// Reading JavaScript values

const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

fn is_safe_integer(value: f64) -> bool {
    value.fract() == 0.0 && value.abs() <= MAX_SAFE_INTEGER
}

fn value_type(env: sys::napi_env, value: sys::napi_value) -> JsResult<ValueType> {
    let mut kind = 0;
    // SAFETY: value is a live handle.
    check(unsafe { sys::napi_typeof(env, value, &mut kind) })?;
    Ok(ValueType::from(kind))
}

/// What `typeof` says, with `null` and arrays told apart, for messages.
fn type_name(env: sys::napi_env, value: sys::napi_value) -> &'static str {
    match value_type(env, value) {
        Ok(ValueType::Undefined) => "undefined",
        Ok(ValueType::Null) => "null",
        Ok(ValueType::Boolean) => "a boolean",
        Ok(ValueType::Number) => "a number",
        Ok(ValueType::String) => "a string",
        Ok(ValueType::Symbol) => "a symbol",
        Ok(ValueType::Function) => "a function",
        Ok(ValueType::BigInt) => "a bigint",
        Ok(ValueType::Object) if is_array(env, value) => "an array",
        Ok(ValueType::Object) => "an object",
        _ => "an unknown value",
    }
}

fn is_array(env: sys::napi_env, value: sys::napi_value) -> bool {
    let mut result = false;
    // SAFETY: value is a live handle.
    unsafe { sys::napi_is_array(env, value, &mut result) == sys::Status::napi_ok && result }
}

fn get_double(env: sys::napi_env, value: sys::napi_value) -> JsResult<f64> {
    let mut out = 0.0;
    // SAFETY: value is a live number.
    check(unsafe { sys::napi_get_value_double(env, value, &mut out) })?;
    Ok(out)
}

fn get_string(env: sys::napi_env, value: sys::napi_value) -> JsResult<String> {
    // SAFETY: value is a live string.
    unsafe { String::from_napi_value(env, value) }.or_napi()
}

/// `String(value)` for messages (a bigint in decimal, say).
fn display(env: sys::napi_env, value: sys::napi_value) -> String {
    let mut text = ptr::null_mut();
    // SAFETY: value is a live handle; a failure gives a placeholder.
    if unsafe { sys::napi_coerce_to_string(env, value, &mut text) } != sys::Status::napi_ok {
        // A symbol cannot be coerced: clear the exception that left.
        let mut pending = ptr::null_mut();
        // SAFETY: env is live.
        unsafe { sys::napi_get_and_clear_last_exception(env, &mut pending) };
        return "(value)".to_string();
    }
    get_string(env, text).unwrap_or_else(|_| "(value)".to_string())
}

/// The value of a bigint known not to fit an i64 or u64: whether it is negative.
fn bigint_is_negative(env: sys::napi_env, value: sys::napi_value) -> bool {
    // SAFETY: value is a live bigint.
    unsafe { napi::bindgen_prelude::BigInt::from_napi_value(env, value) }
        .map(|b| b.sign_bit)
        .unwrap_or(false)
}

/// A bigint as an `i64` (`signed`) or a `u64`, without loss; or the `RangeError` that says
/// why not: "`what` <the bigint> `negative`" or "... `too_large`".
fn read_bigint(
    env: sys::napi_env,
    value: sys::napi_value,
    signed: bool,
    what: &str,
    [negative, too_large]: [&str; 2],
) -> JsResult<u64> {
    let (bits, lossless) = bigint_bits(env, value, signed)?;
    if lossless {
        return Ok(bits);
    }
    let why = if bigint_is_negative(env, value) {
        negative
    } else {
        too_large
    };
    Err(range_error(
        env,
        format!("{what} {} {why}", display(env, value)),
    ))
}

/// A bigint's low 64 bits (two's complement when `signed`) and whether they are all of it.
fn bigint_bits(env: sys::napi_env, value: sys::napi_value, signed: bool) -> JsResult<(u64, bool)> {
    let mut lossless = false;
    let bits = if signed {
        let mut out = 0i64;
        // SAFETY: value is a live bigint.
        check(unsafe { sys::napi_get_value_bigint_int64(env, value, &mut out, &mut lossless) })?;
        out as u64
    } else {
        let mut out = 0u64;
        // SAFETY: value is a live bigint.
        check(unsafe { sys::napi_get_value_bigint_uint64(env, value, &mut out, &mut lossless) })?;
        out
    };
    Ok((bits, lossless))
}

/// A number that is a safe integer (`Number.isSafeInteger`), or the `RangeError` that says
/// why not; `instead` tells what to pass for an integer above 2^53.
fn read_safe_integer(
    env: sys::napi_env,
    value: sys::napi_value,
    what: &str,
    instead: &str,
) -> JsResult<f64> {
    let n = get_double(env, value)?;
    if is_safe_integer(n) {
        return Ok(n);
    }
    let text = display(env, value);
    Err(range_error(
        env,
        if n.fract() == 0.0 && n.is_finite() {
            format!(
                "{what} {text} is above 2^53 (Number.MAX_SAFE_INTEGER), where a number cannot \
                 hold every integer and may already be another one: pass {instead}"
            )
        } else {
            format!("{what} {text} is not an integer")
        },
    ))
}

fn wrong_type(env: sys::napi_env, value: sys::napi_value, what: &str, expected: &str) -> Fail {
    type_error(
        env,
        format!("{what} must be {expected}, not {}", type_name(env, value)),
    )
}

/// A non-negative integer: a safe-integer `number` or a `bigint` up to 2^64-1.
fn read_u64(env: sys::napi_env, value: sys::napi_value, what: &str) -> JsResult<u64> {
    match value_type(env, value)? {
        ValueType::Number => {
            let n = read_safe_integer(env, value, what, "a bigint")?;
            if n < 0.0 {
                return Err(range_error(env, format!("{what} {n} is negative")));
            }
            Ok(n as u64)
        }
        ValueType::BigInt => read_bigint(
            env,
            value,
            false,
            what,
            ["is negative", "does not fit in 64 bits"],
        ),
        _ => Err(wrong_type(env, value, what, "a number or a bigint")),
    }
}

/// A Unix-millisecond timestamp: a safe-integer `number` or a `bigint`, possibly negative.
fn read_i64(env: sys::napi_env, value: sys::napi_value, what: &str) -> JsResult<i64> {
    match value_type(env, value)? {
        ValueType::Number => Ok(read_safe_integer(env, value, what, "a bigint")? as i64),
        ValueType::BigInt => {
            let why = "does not fit in 64 bits";
            read_bigint(env, value, true, what, [why, why]).map(|bits| bits as i64)
        }
        _ => Err(wrong_type(env, value, what, "a number or a bigint")),
    }
}

fn read_string(env: sys::napi_env, value: sys::napi_value, what: &str) -> JsResult<String> {
    if value_type(env, value)? != ValueType::String {
        return Err(wrong_type(env, value, what, "a string"));
    }
    get_string(env, value)
}

fn read_bool(env: sys::napi_env, value: sys::napi_value, what: &str) -> JsResult<bool> {
    if value_type(env, value)? != ValueType::Boolean {
        return Err(wrong_type(env, value, what, "a boolean"));
    }
    let mut out = false;
    // SAFETY: value is a live boolean.
    check(unsafe { sys::napi_get_value_bool(env, value, &mut out) })?;
    Ok(out)
}

/// An ID to decode: a `bigint`, a decimal string, or a `number` only when it is a safe
/// integer (above 2^53 a number may already be a different integer than the one meant).
fn read_id(env: sys::napi_env, value: sys::napi_value) -> JsResult<i64> {
    match value_type(env, value)? {
        ValueType::BigInt => match bigint_bits(env, value, true)? {
            (bits, true) if bits as i64 >= 0 => Ok(bits as i64),
            // Out of range: the core's message, the one it gives for the ID as text.
            _ => flakery::parse_id(&display(env, value)).or_throw(env),
        },
        ValueType::String => flakery::parse_id(&get_string(env, value)?).or_throw(env),
        ValueType::Number => {
            let n = read_safe_integer(env, value, "ID", "the ID as a bigint or a decimal string")?;
            Ok(n as i64)
        }
        _ => Err(wrong_type(
            env,
            value,
            "an ID",
            "a bigint, a decimal string or a safe-integer number",
        )),
    }
}

/// An options object: `undefined` is none; anything but a plain object is a `TypeError`, and
/// so is a key the function does not know (a misspelt `workerID` must not pass unnoticed).
struct OptionsObject {
    env: sys::napi_env,
    object: Option<sys::napi_value>,
}

impl OptionsObject {
    fn read(
        env: sys::napi_env,
        value: sys::napi_value,
        what: &str,
        known: &[&str],
    ) -> napi::Result<Self, &'static str> {
        match value_type(env, value)? {
            ValueType::Undefined => return Ok(OptionsObject { env, object: None }),
            ValueType::Object if !is_array(env, value) => {}
            _ => {
                return Err(type_error(
                    env,
                    format!("{what} must be an object, not {}", type_name(env, value)),
                ))
            }
        }
        for key in own_keys(env, value)? {
            if !known.contains(&key.as_str()) {
                return Err(type_error(
                    env,
                    format!(
                        "{what} has an unknown key '{key}' (known: {})",
                        known.join(", ")
                    ),
                ));
            }
        }
        Ok(OptionsObject {
            env,
            object: Some(value),
        })
    }

    /// The value of `key`, `None` when it is absent or `undefined`.
    fn get(&self, key: &str) -> JsResult<Option<sys::napi_value>> {
        let Some(object) = self.object else {
            return Ok(None);
        };
        let value = get_property(self.env, object, key)?;
        Ok(match value_type(self.env, value)? {
            ValueType::Undefined => None,
            _ => Some(value),
        })
    }

    fn u64(&self, key: &str) -> JsResult<Option<u64>> {
        self.get(key)?
            .map(|v| read_u64(self.env, v, key))
            .transpose()
    }

    fn i64(&self, key: &str) -> JsResult<Option<i64>> {
        self.get(key)?
            .map(|v| read_i64(self.env, v, key))
            .transpose()
    }

    fn string(&self, key: &str) -> JsResult<Option<String>> {
        self.get(key)?
            .map(|v| read_string(self.env, v, key))
            .transpose()
    }

    fn bool(&self, key: &str) -> JsResult<Option<bool>> {
        self.get(key)?
            .map(|v| read_bool(self.env, v, key))
            .transpose()
    }

    /// `fields`: an object of constant-field values, `{version: 1}`.
    fn fields(&self) -> JsResult<Vec<(String, u64)>> {
        let Some(value) = self.get("fields")? else {
            return Ok(Vec::new());
        };
        let env = self.env;
        if value_type(env, value)? != ValueType::Object || is_array(env, value) {
            return Err(type_error(
                env,
                format!(
                    "fields must be an object such as {{version: 1}}, not {}",
                    type_name(env, value)
                ),
            ));
        }
        let mut fields = Vec::new();
        for name in own_keys(env, value)? {
            let item = get_property(env, value, &name)?;
            if value_type(env, item)? == ValueType::Undefined {
                continue;
            }
            let what = format!("fields.{name}");
            fields.push((name, read_u64(env, item, &what)?));
        }
        Ok(fields)
    }

    /// `layout`: a spec string, or an object with a string `spec` (an entry of `layouts()`).
    fn layout(&self) -> JsResult<Option<Layout>> {
        let Some(value) = self.get("layout")? else {
            return Ok(None);
        };
        let env = self.env;
        let spec = match value_type(env, value)? {
            ValueType::String => get_string(env, value)?,
            ValueType::Object => {
                let spec = get_property(env, value, "spec")?;
                if value_type(env, spec)? != ValueType::String {
                    return Err(type_error(
                        env,
                        "layout must be a spec string or an object with a string 'spec'"
                            .to_string(),
                    ));
                }
                get_string(env, spec)?
            }
            _ => {
                return Err(type_error(
                    env,
                    format!(
                        "layout must be a spec string such as 'twitter', not {}",
                        type_name(env, value)
                    ),
                ))
            }
        };
        Layout::parse(&spec).or_throw(env).map(Some)
    }
}

fn get_property(
    env: sys::napi_env,
    object: sys::napi_value,
    key: &str,
) -> JsResult<sys::napi_value> {
    let mut name = ptr::null_mut();
    let mut out = ptr::null_mut();
    // SAFETY: the pointer and length describe valid UTF-8; object is a live object. A getter
    // that throws leaves its exception pending, which `check` passes on.
    check(unsafe {
        sys::napi_create_string_utf8(env, key.as_ptr().cast(), key.len() as isize, &mut name)
    })?;
    check(unsafe { sys::napi_get_property(env, object, name, &mut out) })?;
    Ok(out)
}

/// The enumerable string keys of an object (what `for ... in` sees).
fn own_keys(env: sys::napi_env, object: sys::napi_value) -> JsResult<Vec<String>> {
    let mut names = ptr::null_mut();
    // SAFETY: object is a live object.
    check(unsafe { sys::napi_get_property_names(env, object, &mut names) })?;
    let mut len = 0u32;
    // SAFETY: names is the array just made.
    check(unsafe { sys::napi_get_array_length(env, names, &mut len) })?;
    let mut keys = Vec::with_capacity(len as usize);
    for i in 0..len {
        let mut name = ptr::null_mut();
        // SAFETY: i is within the array.
        check(unsafe { sys::napi_get_element(env, names, i, &mut name) })?;
        keys.push(get_string(env, name)?);
    }
    Ok(keys)
}

/// The largest `n` of `nextIds(n)`: 2^24 IDs, a 128 MiB array.
const MAX_BATCH: u64 = 1 << 24;

fn read_count(env: sys::napi_env, value: sys::napi_value) -> JsResult<usize> {
    if value_type(env, value)? != ValueType::Number {
        return Err(wrong_type(env, value, "n", "a number"));
    }
    let n = get_double(env, value)?;
    if !is_safe_integer(n) || n < 0.0 || n > MAX_BATCH as f64 {
        return Err(range_error(
            env,
            format!(
                "n {} is not an integer from 0 to {MAX_BATCH}",
                display(env, value)
            ),
        ));
    }
    Ok(n as usize)
}

// ---------------------------------------------------------------------------------------------
// The process-wide generator

fn default_generator() -> JsResult<&'static flakery::Generator> {
    flakery::default_generator().map_err(generating_error)
}

/// The error of a generating call: a plain `Error` with the contract's code. Its causes are
/// never an argument (a bad `FLAKERY_*` variable, an exhausted layout, a clock step, a lost
/// lease), so it is never a `RangeError`.
fn generating_error(error: flakery::Error) -> Fail {
    napi::Error::new(error.code().as_str(), error.message().to_string())
}

// The three module-level calls below declare the API for index.d.ts; when the module loads,
// `fast::install_all` replaces them with plain Node-API callbacks that do the same.

/// A new ID from the process-wide generator, which is made on first use from the `FLAKERY_*`
/// environment and shared by every worker thread of the process.
#[napi(catch_unwind)]
pub fn next_id() -> napi::Result<i64n, &'static str> {
    flakery::next_id().map(i64n).map_err(generating_error)
}

/// A new ID from the process-wide generator, as a decimal string.
#[napi(catch_unwind, ts_return_type = "string")]
pub fn next_id_string() -> napi::Result<IdString, &'static str> {
    flakery::next_id().map(IdString).map_err(generating_error)
}

/// `n` new IDs from the process-wide generator, in increasing order (`n` up to 2^24).
#[napi(
    catch_unwind,
    ts_args_type = "n: number",
    ts_return_type = "BigInt64Array"
)]
pub fn next_ids(env: Env, n: Unknown) -> napi::Result<Raw, &'static str> {
    let env = env.raw();
    let n = read_count(env, n.raw())?;
    let generator = default_generator()?;
    new_id_array(env, n, |ids| generator.fill(ids)).map(Raw)
}

// ---------------------------------------------------------------------------------------------
// Generators

const GENERATOR_KEYS: [&str; 12] = [
    "layout",
    "datacenterId",
    "workerId",
    "sequencePolicy",
    "maxBorrowMs",
    "backwardsToleranceMs",
    "randomSequenceStart",
    "fields",
    "zookeeper",
    "namespace",
    "sessionTimeoutMs",
    "leaseDir",
];

fn generator_options(env: sys::napi_env, value: sys::napi_value) -> JsResult<Options> {
    let o = OptionsObject::read(env, value, "Generator options", &GENERATOR_KEYS)?;
    let mut options = Options {
        layout: o.layout()?,
        datacenter_id: o.u64("datacenterId")?,
        worker_id: o.u64("workerId")?,
        fields: o.fields()?,
        zookeeper: o.string("zookeeper")?,
        namespace: o.string("namespace")?,
        session_timeout_ms: o.u64("sessionTimeoutMs")?,
        lease_dir: o.string("leaseDir")?.map(Into::into),
        ..Options::default()
    };
    if let Some(policy) = o.string("sequencePolicy")? {
        options.sequence_policy = policy.parse::<SequencePolicy>().or_throw(env)?;
    }
    if let Some(ms) = o.u64("maxBorrowMs")? {
        options.max_borrow_ms = ms;
    }
    if let Some(ms) = o.u64("backwardsToleranceMs")? {
        options.backwards_tolerance_ms = ms;
    }
    if let Some(on) = o.bool("randomSequenceStart")? {
        options.random_sequence_start = on;
    }
    Ok(options)
}

/// A generator of IDs: one layout, one node identity, its policies. Never returns the same ID
/// twice, nor a smaller one than it returned before.
#[napi]
pub struct Generator {
    inner: Arc<flakery::Generator>,
}

#[napi]
impl Generator {
    /// Options not given come from the `FLAKERY_*` environment, then the contract's defaults;
    /// an unconfigured generator leases its node ID (see the README).
    #[napi(catch_unwind, constructor, ts_args_type = "options?: GeneratorOptions")]
    pub fn new(env: Env, this: This, options: Unknown) -> napi::Result<Self, &'static str> {
        let env = env.raw();
        fast::check_constructed(env, this.raw())?;
        let options = generator_options(env, options.raw())?;
        let inner = Arc::new(flakery::Generator::new(options).or_throw(env)?);
        fast::bind_methods(env, this.raw(), &inner)?;
        Ok(Generator { inner })
    }

    /// A new ID.
    #[napi(catch_unwind)]
    pub fn next_id(&self) -> napi::Result<i64n, &'static str> {
        self.inner.next_id().map(i64n).map_err(generating_error)
    }

    /// A new ID as a decimal string.
    #[napi(catch_unwind, ts_return_type = "string")]
    pub fn next_id_string(&self) -> napi::Result<IdString, &'static str> {
        self.inner.next_id().map(IdString).map_err(generating_error)
    }

    /// `n` new IDs in increasing order (`n` up to 2^24).
    #[napi(
        catch_unwind,
        ts_args_type = "n: number",
        ts_return_type = "BigInt64Array"
    )]
    pub fn next_ids(&self, env: Env, n: Unknown) -> napi::Result<Raw, &'static str> {
        let env = env.raw();
        let n = read_count(env, n.raw())?;
        new_id_array(env, n, |ids| self.inner.fill(ids)).map(Raw)
    }

    /// The layout as its canonical spec string (a preset's name where it is one).
    #[napi(catch_unwind, getter)]
    pub fn layout(&self) -> String {
        self.inner.layout().to_string()
    }

    #[napi(catch_unwind, getter, ts_return_type = "number")]
    pub fn datacenter_id(&self, env: Env) -> napi::Result<Raw, &'static str> {
        let bits = self.inner.layout().datacenter().map_or(0, |s| s.bits);
        new_field_value(env.raw(), self.inner.datacenter_id(), bits).map(Raw)
    }

    #[napi(catch_unwind, getter, ts_return_type = "number")]
    pub fn worker_id(&self, env: Env) -> napi::Result<Raw, &'static str> {
        let bits = self.inner.layout().worker().map_or(0, |s| s.bits);
        new_field_value(env.raw(), self.inner.worker_id(), bits).map(Raw)
    }

    /// Where the node ID came from: `explicit`, `environment`, `hostname`, `zookeeper` or
    /// `host_lease`.
    #[napi(
        catch_unwind,
        getter,
        ts_return_type = "'explicit' | 'environment' | 'hostname' | 'zookeeper' | 'host_lease'"
    )]
    pub fn source(&self) -> &'static str {
        self.inner.source().as_str()
    }

    /// Whether `close()` was called.
    #[napi(catch_unwind, getter)]
    pub fn closed(&self) -> bool {
        self.inner.is_closed()
    }

    /// Releases the node ID lease now; every later call fails with `lease_lost`.
    #[napi(catch_unwind)]
    pub fn close(&self) {
        self.inner.close();
    }
}

// ---------------------------------------------------------------------------------------------
// Decoding and composing

/// The layout of `decode`/`compose`: given, else `twitter` (as in every binding and the CLI;
/// `FLAKERY_LAYOUT` configures generators, not decoding).
fn layout_or_twitter(layout: Option<Layout>) -> Layout {
    layout.unwrap_or_else(Layout::twitter)
}

/// Takes an ID apart. `id` is a `bigint`, a decimal string, or a `number` that is a safe
/// integer; `options.layout` (or a spec string in its place) defaults to `twitter`.
#[napi(
    catch_unwind,
    ts_args_type = "id: bigint | string | number, options?: DecodeOptions | string",
    ts_return_type = "DecodedId"
)]
pub fn decode(env: Env, id: Unknown, options: Unknown) -> napi::Result<Raw, &'static str> {
    let env = env.raw();
    let id = read_id(env, id.raw())?;
    let layout = match value_type(env, options.raw())? {
        ValueType::String => Layout::parse(&get_string(env, options.raw())?).or_throw(env)?,
        _ => {
            let o = OptionsObject::read(env, options.raw(), "decode options", &["layout"])?;
            layout_or_twitter(o.layout()?)
        }
    };
    let decoded = flakery::decode(id, &layout).or_throw(env)?;
    let bits = |slot: Option<flakery::Slot>| slot.map_or(0, |s| s.bits);
    let mut fields = ObjectBuilder::new(env)?;
    for ((name, value), field) in decoded.fields.iter().zip(layout.fields()) {
        let value = new_field_value(env, *value, field.slot.bits)?;
        fields.set_dynamic(name, value)?;
    }
    let mut out = ObjectBuilder::new(env)?;
    out.set(c"id", new_bigint(env, decoded.id)?)?;
    out.set(c"timestampMs", new_date_ms(env, decoded.timestamp_ms)?)?;
    out.set(c"date", new_date(env, decoded.timestamp_ms)?)?;
    let datacenter = new_field_value(env, decoded.datacenter_id, bits(layout.datacenter()))?;
    out.set(c"datacenterId", datacenter)?;
    let worker = new_field_value(env, decoded.worker_id, bits(layout.worker()))?;
    out.set(c"workerId", worker)?;
    let sequence = new_field_value(env, decoded.sequence, layout.sequence().bits)?;
    out.set(c"sequence", sequence)?;
    out.set(c"fields", fields.finish())?;
    Ok(Raw(out.finish()))
}

/// A timestamp as a number, refused where a number or a Date could not hold it exactly.
fn new_date_ms(env: sys::napi_env, ms: i64) -> JsResult<sys::napi_value> {
    if !(-MAX_DATE_MS..=MAX_DATE_MS).contains(&ms) {
        return Err(range_error(
            env,
            format!("timestamp {ms} ms is beyond what a JavaScript Date can hold"),
        ));
    }
    new_number(env, ms as f64)
}

const COMPOSE_KEYS: [&str; 6] = [
    "layout",
    "timestampMs",
    "datacenterId",
    "workerId",
    "sequence",
    "fields",
];

/// Builds the ID that `decode` takes apart into these parts. `timestampMs` is rounded down to
/// its tick; every other value must fit its field. `layout` defaults to `twitter`.
#[napi(
    catch_unwind,
    ts_args_type = "parts: ComposeOptions",
    ts_return_type = "bigint"
)]
pub fn compose(env: Env, parts: Unknown) -> napi::Result<Raw, &'static str> {
    let env = env.raw();
    if value_type(env, parts.raw())? == ValueType::Undefined {
        return Err(type_error(
            env,
            "compose needs an object such as {timestampMs: Date.now(), workerId: 1}".to_string(),
        ));
    }
    let o = OptionsObject::read(env, parts.raw(), "compose parts", &COMPOSE_KEYS)?;
    let layout = layout_or_twitter(o.layout()?);
    let Some(timestamp_ms) = o.i64("timestampMs")? else {
        return Err(type_error(env, "compose needs timestampMs".to_string()));
    };
    let parts = flakery::Parts {
        timestamp_ms,
        datacenter_id: o.u64("datacenterId")?.unwrap_or(0),
        worker_id: o.u64("workerId")?.unwrap_or(0),
        sequence: o.u64("sequence")?.unwrap_or(0),
        fields: o.fields()?,
    };
    let id = flakery::compose(&parts, &layout).or_throw(env)?;
    new_bigint(env, id).map(Raw)
}

// ---------------------------------------------------------------------------------------------
// Layouts

fn layout_info(
    env: sys::napi_env,
    layout: &Layout,
    name: Option<&str>,
    spec: &str,
) -> JsResult<sys::napi_value> {
    let capacity = layout.capacity();
    let mut fields = Vec::with_capacity(layout.fields().len());
    for field in layout.fields() {
        let mut f = ObjectBuilder::new(env)?;
        f.set_string(c"name", &field.name)?;
        f.set_string(c"kind", field.kind.as_str())?;
        f.set_number(c"bits", f64::from(field.slot.bits))?;
        f.set_number(c"shift", f64::from(field.slot.shift))?;
        f.set(
            c"default",
            new_field_value(env, field.default, field.slot.bits)?,
        )?;
        fields.push(f.finish());
    }
    let mut out = ObjectBuilder::new(env)?;
    match name {
        Some(name) => out.set_string(c"name", name)?,
        None => out.set_null(c"name")?,
    }
    out.set_string(c"spec", spec)?;
    out.set_string(c"canonical", &layout.to_string())?;
    out.set_string(c"description", &flakery::layout::describe(layout))?;
    out.set(c"fields", new_array(env, &fields)?)?;
    out.set_number(c"totalBits", f64::from(layout.total_bits()))?;
    out.set_number(c"epochMs", layout.epoch_ms() as f64)?;
    out.set(c"epoch", new_date(env, layout.epoch_ms())?)?;
    out.set_string(c"unit", layout.unit().as_str())?;
    out.set_number(c"idsPerTick", capacity.ids_per_tick as f64)?;
    out.set_number(c"idsPerSecond", capacity.ids_per_second as f64)?;
    out.set_number(c"datacenterIds", capacity.datacenter_ids as f64)?;
    out.set_number(c"workerIds", capacity.worker_ids as f64)?;
    out.set_number(c"nodeIds", capacity.node_ids as f64)?;
    out.set_number(c"exhaustedAtMs", capacity.exhausted_at_ms as f64)?;
    if (-MAX_DATE_MS..=MAX_DATE_MS).contains(&capacity.exhausted_at_ms) {
        out.set(c"exhaustedAt", new_date(env, capacity.exhausted_at_ms)?)?;
    } else {
        out.set_null(c"exhaustedAt")?;
    }
    Ok(out.finish())
}

/// The presets of the contract, in its order, with their fields and capacity.
#[napi(catch_unwind, ts_return_type = "LayoutInfo[]")]
pub fn layouts(env: Env) -> napi::Result<Raw, &'static str> {
    let env = env.raw();
    let mut items = Vec::with_capacity(flakery::layout::PRESETS.len());
    for (name, spec) in flakery::layout::PRESETS {
        let layout = Layout::parse(spec).or_throw(env)?;
        items.push(layout_info(env, &layout, Some(name), spec)?);
    }
    new_array(env, &items).map(Raw)
}

/// Parses a layout spec (`'discord'`, `'twitter;epoch=2020-01-01T00:00:00Z'`,
/// `'time:41,worker:10,sequence:12;epoch=1288834974657'`) and describes it; an invalid spec
/// throws a `RangeError` with code `invalid_layout`.
#[napi(
    catch_unwind,
    ts_args_type = "spec: string",
    ts_return_type = "LayoutInfo"
)]
pub fn layout_info_of(env: Env, spec: Unknown) -> napi::Result<Raw, &'static str> {
    let env = env.raw();
    let spec = read_string(env, spec.raw(), "spec")?;
    let layout = Layout::parse(&spec).or_throw(env)?;
    layout_info(env, &layout, layout.preset_name(), &spec).map(Raw)
}

// ---------------------------------------------------------------------------------------------
// Shapes for index.d.ts (never converted: the functions above read and build them by hand)

/// Options of `new Generator()`. Every key is optional; one not given comes from the
/// `FLAKERY_*` environment, then the default.
#[napi(object, object_from_js = false, object_to_js = false)]
pub struct GeneratorOptions {
    /// A spec string (`'twitter'`, `'discord;epoch=...'`, `'time:41,...;epoch=...'`) or an entry
    /// of `layouts()`. Default: `FLAKERY_LAYOUT`, else `'twitter'`.
    #[napi(ts_type = "string | LayoutInfo")]
    pub layout: Option<String>,
    #[napi(ts_type = "number | bigint")]
    pub datacenter_id: Option<i64>,
    #[napi(ts_type = "number | bigint")]
    pub worker_id: Option<i64>,
    /// When a tick's sequence is used up: wait for the next tick (default) or borrow ticks
    /// from the future, at most `maxBorrowMs` ahead.
    #[napi(ts_type = "'wait' | 'borrow'")]
    pub sequence_policy: Option<String>,
    /// Default 1000.
    pub max_borrow_ms: Option<f64>,
    /// A clock step backwards up to this is waited out; a larger one fails with
    /// `clock_moved_backwards`. Default 1000.
    pub backwards_tolerance_ms: Option<f64>,
    /// Start each tick's sequence at a random number. Default false.
    pub random_sequence_start: Option<bool>,
    /// Values of the layout's constant fields, e.g. `{version: 1}`.
    #[napi(ts_type = "Record<string, number | bigint>")]
    pub fields: Option<String>,
    /// ZooKeeper connect string for leased node IDs (`127.0.0.1:2181/flakery`).
    pub zookeeper: Option<String>,
    /// ZooKeeper namespace; default `'default'`.
    pub namespace: Option<String>,
    /// ZooKeeper session timeout; default 10000.
    pub session_timeout_ms: Option<f64>,
    /// Directory of the host-local lease files.
    pub lease_dir: Option<String>,
}

/// Options of `decode()`.
#[napi(object, object_from_js = false, object_to_js = false)]
pub struct DecodeOptions {
    /// Default `'twitter'`.
    #[napi(ts_type = "string | LayoutInfo")]
    pub layout: Option<String>,
}

/// The parts of `compose()`.
#[napi(object, object_from_js = false, object_to_js = false)]
pub struct ComposeOptions {
    /// Default `'twitter'`.
    #[napi(ts_type = "string | LayoutInfo")]
    pub layout: Option<String>,
    /// Unix milliseconds, rounded down to the layout's tick.
    #[napi(ts_type = "number | bigint")]
    pub timestamp_ms: i64,
    #[napi(ts_type = "number | bigint")]
    pub datacenter_id: Option<i64>,
    #[napi(ts_type = "number | bigint")]
    pub worker_id: Option<i64>,
    #[napi(ts_type = "number | bigint")]
    pub sequence: Option<i64>,
    /// Values of constant fields; one not given takes its layout default.
    #[napi(ts_type = "Record<string, number | bigint>")]
    pub fields: Option<String>,
}

/// An ID taken apart by `decode()`.
#[napi(object, object_from_js = false, object_to_js = false)]
pub struct DecodedId {
    #[napi(ts_type = "bigint")]
    pub id: i64,
    /// Unix milliseconds.
    pub timestamp_ms: f64,
    #[napi(ts_type = "Date")]
    pub date: f64,
    /// 0 when the layout has no datacenter field. (A bigint if the layout gives the field
    /// more than 53 bits; likewise `workerId` and `sequence`.)
    pub datacenter_id: f64,
    pub worker_id: f64,
    pub sequence: f64,
    /// Every field of the layout by name, constants included, with its raw value (`time` in
    /// ticks since the epoch): a number for fields up to 53 bits wide, else a bigint.
    #[napi(ts_type = "Record<string, number | bigint>")]
    pub fields: String,
}

/// One field of a layout.
#[napi(object, object_from_js = false, object_to_js = false)]
pub struct LayoutField {
    pub name: String,
    #[napi(ts_type = "'time' | 'datacenter' | 'worker' | 'sequence' | 'constant'")]
    pub kind: String,
    pub bits: u32,
    /// The bit position of the field's lowest bit.
    pub shift: u32,
    /// The value of a constant field unless a generator is given another.
    #[napi(ts_type = "number | bigint")]
    pub default: f64,
}

/// A layout described: `layouts()` and `layoutInfoOf()`.
#[napi(object, object_from_js = false, object_to_js = false)]
pub struct LayoutInfo {
    /// The preset's name, or null for a layout that is not a preset.
    #[napi(ts_type = "string | null")]
    pub name: String,
    /// The spec string (the preset's full spec in `layouts()`).
    pub spec: String,
    /// The shortest spec string that reads back as this layout.
    pub canonical: String,
    /// One line: fields, epoch, unit, capacity, when it runs out.
    pub description: String,
    pub fields: Vec<LayoutField>,
    pub total_bits: u32,
    pub epoch_ms: f64,
    #[napi(ts_type = "Date")]
    pub epoch: f64,
    #[napi(ts_type = "'ms' | '10ms' | 's'")]
    pub unit: String,
    /// IDs one node can make in one tick.
    pub ids_per_tick: f64,
    /// IDs one node can make in one second.
    pub ids_per_second: f64,
    pub datacenter_ids: f64,
    pub worker_ids: f64,
    /// Distinct node identities (datacenter x worker).
    pub node_ids: f64,
    /// The first Unix millisecond at which no ID can be made any more.
    pub exhausted_at_ms: f64,
    /// `exhaustedAtMs` as a Date; null when it is past what a Date can hold.
    #[napi(ts_type = "Date | null")]
    pub exhausted_at: f64,
}
