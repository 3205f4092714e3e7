//! Reading JavaScript values by hand: a wrong type is a `TypeError`, a value out of range a
//! `RangeError`, each message naming the argument or key (`workerId`).

use std::ptr;

use flakery::{IdFormat, Layout};
use napi::bindgen_prelude::FromNapiValue;
use napi::{sys, ValueType};

use crate::errors::{check, range_error, type_error, Fail, JsResult, OrNapi, OrThrow};

pub(crate) const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

pub(crate) fn is_safe_integer(value: f64) -> bool {
    value.fract() == 0.0 && value.abs() <= MAX_SAFE_INTEGER
}

pub(crate) fn value_type(env: sys::napi_env, value: sys::napi_value) -> JsResult<ValueType> {
    let mut kind = 0;
    // SAFETY: value is a live handle.
    check(unsafe { sys::napi_typeof(env, value, &mut kind) })?;
    Ok(ValueType::from(kind))
}

/// What `typeof` says, with `null` and arrays told apart, for messages.
pub(crate) fn type_name(env: sys::napi_env, value: sys::napi_value) -> &'static str {
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

pub(crate) fn is_array(env: sys::napi_env, value: sys::napi_value) -> bool {
    let mut result = false;
    // SAFETY: value is a live handle.
    unsafe { sys::napi_is_array(env, value, &mut result) == sys::Status::napi_ok && result }
}

pub(crate) fn get_double(env: sys::napi_env, value: sys::napi_value) -> JsResult<f64> {
    let mut out = 0.0;
    // SAFETY: value is a live number.
    check(unsafe { sys::napi_get_value_double(env, value, &mut out) })?;
    Ok(out)
}

pub(crate) fn get_string(env: sys::napi_env, value: sys::napi_value) -> JsResult<String> {
    // SAFETY: value is a live string.
    unsafe { String::from_napi_value(env, value) }.or_napi()
}

/// `String(value)` for messages (a bigint in decimal, say).
pub(crate) fn display(env: sys::napi_env, value: sys::napi_value) -> String {
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
pub(crate) fn bigint_is_negative(env: sys::napi_env, value: sys::napi_value) -> bool {
    // SAFETY: value is a live bigint.
    unsafe { napi::bindgen_prelude::BigInt::from_napi_value(env, value) }
        .map(|b| b.sign_bit)
        .unwrap_or(false)
}

/// A bigint as an `i64` (`signed`) or a `u64`, without loss; or the `RangeError` that says
/// why not: "`what` <the bigint> `negative`" or "... `too_large`".
pub(crate) fn read_bigint(
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
pub(crate) fn bigint_bits(
    env: sys::napi_env,
    value: sys::napi_value,
    signed: bool,
) -> JsResult<(u64, bool)> {
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
pub(crate) fn read_safe_integer(
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

pub(crate) fn wrong_type(
    env: sys::napi_env,
    value: sys::napi_value,
    what: &str,
    expected: &str,
) -> Fail {
    type_error(
        env,
        format!("{what} must be {expected}, not {}", type_name(env, value)),
    )
}

/// A non-negative integer: a safe-integer `number` or a `bigint` up to 2^64-1.
pub(crate) fn read_u64(env: sys::napi_env, value: sys::napi_value, what: &str) -> JsResult<u64> {
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
pub(crate) fn read_i64(env: sys::napi_env, value: sys::napi_value, what: &str) -> JsResult<i64> {
    match value_type(env, value)? {
        ValueType::Number => Ok(read_safe_integer(env, value, what, "a bigint")? as i64),
        ValueType::BigInt => {
            let why = "does not fit in 64 bits";
            read_bigint(env, value, true, what, [why, why]).map(|bits| bits as i64)
        }
        _ => Err(wrong_type(env, value, what, "a number or a bigint")),
    }
}

pub(crate) fn read_string(
    env: sys::napi_env,
    value: sys::napi_value,
    what: &str,
) -> JsResult<String> {
    if value_type(env, value)? != ValueType::String {
        return Err(wrong_type(env, value, what, "a string"));
    }
    get_string(env, value)
}

pub(crate) fn read_bool(env: sys::napi_env, value: sys::napi_value, what: &str) -> JsResult<bool> {
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
pub(crate) fn read_id(env: sys::napi_env, value: sys::napi_value) -> JsResult<i64> {
    let id = read_id_u64(env, value)?;
    match i64::try_from(id) {
        Ok(id) => Ok(id),
        Err(_) => flakery::parse_id(&id.to_string()).or_throw(env),
    }
}

/// `read_id` up to 2^64-1, for `decode` (IDs of unsigned layouts such as `discord`).
pub(crate) fn read_id_u64(env: sys::napi_env, value: sys::napi_value) -> JsResult<u64> {
    match value_type(env, value)? {
        ValueType::BigInt => match bigint_bits(env, value, false)? {
            (bits, true) => Ok(bits),
            // Out of range: the core's message, the one it gives for the ID as text.
            _ => flakery::parse_id_u64(&display(env, value)).or_throw(env),
        },
        ValueType::String => flakery::parse_id_u64(&get_string(env, value)?).or_throw(env),
        ValueType::Number => {
            let n = read_safe_integer(env, value, "ID", "the ID as a bigint or a decimal string")?;
            if n < 0.0 {
                // The core's message for a negative ID.
                return flakery::parse_id_u64(&(n as i64).to_string()).or_throw(env);
            }
            Ok(n as u64)
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
pub(crate) struct OptionsObject {
    env: sys::napi_env,
    object: Option<sys::napi_value>,
}

impl OptionsObject {
    pub(crate) fn read(
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
    pub(crate) fn get(&self, key: &str) -> JsResult<Option<sys::napi_value>> {
        let Some(object) = self.object else {
            return Ok(None);
        };
        let value = get_property(self.env, object, key)?;
        Ok(match value_type(self.env, value)? {
            ValueType::Undefined => None,
            _ => Some(value),
        })
    }

    pub(crate) fn u64(&self, key: &str) -> JsResult<Option<u64>> {
        self.get(key)?
            .map(|v| read_u64(self.env, v, key))
            .transpose()
    }

    pub(crate) fn i64(&self, key: &str) -> JsResult<Option<i64>> {
        self.get(key)?
            .map(|v| read_i64(self.env, v, key))
            .transpose()
    }

    pub(crate) fn string(&self, key: &str) -> JsResult<Option<String>> {
        self.get(key)?
            .map(|v| read_string(self.env, v, key))
            .transpose()
    }

    pub(crate) fn bool(&self, key: &str) -> JsResult<Option<bool>> {
        self.get(key)?
            .map(|v| read_bool(self.env, v, key))
            .transpose()
    }

    /// `fields`: an object of constant-field values, `{version: 1}`.
    pub(crate) fn fields(&self) -> JsResult<Vec<(String, u64)>> {
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
    pub(crate) fn layout(&self) -> JsResult<Option<Layout>> {
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

pub(crate) fn get_property(
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
pub(crate) fn own_keys(env: sys::napi_env, object: sys::napi_value) -> JsResult<Vec<String>> {
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
pub(crate) const MAX_BATCH: u64 = 1 << 24;

pub(crate) fn read_count(env: sys::napi_env, value: sys::napi_value) -> JsResult<usize> {
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

/// The options of `nextIdString`: none, or `{format: 'decimal' | 'base32' | 'base62'}`.
pub(crate) fn read_format(env: sys::napi_env, value: sys::napi_value) -> JsResult<IdFormat> {
    let o = OptionsObject::read(env, value, "nextIdString options", &["format"])?;
    match o.string("format")? {
        None => Ok(IdFormat::Decimal),
        Some(format) => format.parse::<IdFormat>().or_throw(env),
    }
}
