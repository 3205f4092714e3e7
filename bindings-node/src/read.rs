//! Reading JavaScript values by hand: a wrong type is a `TypeError`, a value out of range a
//! `RangeError`, each message naming the argument or key (`workerId`).
//!
//! Every reading goes through napi-rs's safe API (`Unknown`, `Object`, `BigInt`) only; the
//! hand-registered hot calls (`fast`) view their raw argument as an `Unknown` first.

use flakery::{IdFormat, Layout};
use napi::bindgen_prelude::{BigInt, FromNapiValue, JsObjectValue, Object};
use napi::{sys, Env, JsValue, Unknown, ValueType};

use crate::errors::{range_error, type_error, Fail, JsResult, OrNapi, OrThrow};

pub(crate) const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

pub(crate) fn is_safe_integer(value: f64) -> bool {
    value.fract() == 0.0 && value.abs() <= MAX_SAFE_INTEGER
}

/// The environment a value belongs to, for throwing.
fn env_of(value: &Unknown) -> sys::napi_env {
    value.value().env
}

pub(crate) fn value_type(value: &Unknown) -> JsResult<ValueType> {
    value.get_type().or_napi()
}

/// What `typeof` says, with `null` and arrays told apart, for messages.
pub(crate) fn type_name(value: &Unknown) -> &'static str {
    match value_type(value) {
        Ok(ValueType::Undefined) => "undefined",
        Ok(ValueType::Null) => "null",
        Ok(ValueType::Boolean) => "a boolean",
        Ok(ValueType::Number) => "a number",
        Ok(ValueType::String) => "a string",
        Ok(ValueType::Symbol) => "a symbol",
        Ok(ValueType::Function) => "a function",
        Ok(ValueType::BigInt) => "a bigint",
        Ok(ValueType::Object) if is_array(value) => "an array",
        Ok(ValueType::Object) => "an object",
        _ => "an unknown value",
    }
}

pub(crate) fn is_array(value: &Unknown) -> bool {
    value.is_array().unwrap_or(false)
}

/// A value known to be a number (`napi_get_value_double` refuses anything else).
pub(crate) fn get_double(value: &Unknown) -> JsResult<f64> {
    f64::from_unknown(*value).or_napi()
}

/// A value known to be a string (`napi_get_value_string_utf8` refuses anything else).
pub(crate) fn get_string(value: &Unknown) -> JsResult<String> {
    String::from_unknown(*value).or_napi()
}

/// A value known to be a bigint (`napi_get_value_bigint_words` refuses anything else).
fn get_bigint(value: &Unknown) -> JsResult<BigInt> {
    BigInt::from_unknown(*value).or_napi()
}

/// `String(value)` for messages (a bigint in decimal, say). Only numbers and bigints come
/// here, whose conversion cannot throw (a symbol's would, and leave an exception pending).
pub(crate) fn display(value: &Unknown) -> String {
    value
        .coerce_to_string()
        .and_then(|text| text.into_utf8())
        .and_then(|text| text.into_owned())
        .unwrap_or_else(|_| "(value)".to_string())
}

/// A bigint as an `i64` (`signed`) or a `u64`, without loss; or the `RangeError` that says
/// why not: "`what` <the bigint> `negative`" or "... `too_large`".
pub(crate) fn read_bigint(
    value: &Unknown,
    signed: bool,
    what: &str,
    [negative, too_large]: [&str; 2],
) -> JsResult<u64> {
    let big = get_bigint(value)?;
    let (bits, lossless) = bigint_bits(&big, signed);
    if lossless {
        return Ok(bits);
    }
    let why = if big.sign_bit { negative } else { too_large };
    Err(range_error(
        env_of(value),
        format!("{what} {} {why}", display(value)),
    ))
}

/// A bigint's low 64 bits (two's complement when `signed`) and whether they are all of it.
pub(crate) fn bigint_bits(big: &BigInt, signed: bool) -> (u64, bool) {
    if signed {
        let (value, lossless) = big.get_i64();
        (value as u64, lossless)
    } else {
        let (_, value, lossless) = big.get_u64();
        (value, lossless)
    }
}

/// A number that is a safe integer (`Number.isSafeInteger`), or the `RangeError` that says
/// why not; `instead` tells what to pass for an integer above 2^53.
pub(crate) fn read_safe_integer(value: &Unknown, what: &str, instead: &str) -> JsResult<f64> {
    let n = get_double(value)?;
    if is_safe_integer(n) {
        return Ok(n);
    }
    let text = display(value);
    Err(range_error(
        env_of(value),
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

pub(crate) fn wrong_type(value: &Unknown, what: &str, expected: &str) -> Fail {
    type_error(
        env_of(value),
        format!("{what} must be {expected}, not {}", type_name(value)),
    )
}

/// A non-negative integer: a safe-integer `number` or a `bigint` up to 2^64-1.
pub(crate) fn read_u64(value: &Unknown, what: &str) -> JsResult<u64> {
    match value_type(value)? {
        ValueType::Number => {
            let n = read_safe_integer(value, what, "a bigint")?;
            if n < 0.0 {
                return Err(range_error(
                    env_of(value),
                    format!("{what} {n} is negative"),
                ));
            }
            Ok(n as u64)
        }
        ValueType::BigInt => read_bigint(
            value,
            false,
            what,
            ["is negative", "does not fit in 64 bits"],
        ),
        _ => Err(wrong_type(value, what, "a number or a bigint")),
    }
}

/// A Unix-millisecond timestamp: a safe-integer `number` or a `bigint`, possibly negative.
pub(crate) fn read_i64(value: &Unknown, what: &str) -> JsResult<i64> {
    match value_type(value)? {
        ValueType::Number => Ok(read_safe_integer(value, what, "a bigint")? as i64),
        ValueType::BigInt => {
            let why = "does not fit in 64 bits";
            read_bigint(value, true, what, [why, why]).map(|bits| bits as i64)
        }
        _ => Err(wrong_type(value, what, "a number or a bigint")),
    }
}

pub(crate) fn read_string(value: &Unknown, what: &str) -> JsResult<String> {
    if value_type(value)? != ValueType::String {
        return Err(wrong_type(value, what, "a string"));
    }
    get_string(value)
}

pub(crate) fn read_bool(value: &Unknown, what: &str) -> JsResult<bool> {
    if value_type(value)? != ValueType::Boolean {
        return Err(wrong_type(value, what, "a boolean"));
    }
    bool::from_unknown(*value).or_napi()
}

/// An ID to decode: a `bigint`, a decimal string, or a `number` only when it is a safe
/// integer (above 2^53 a number may already be a different integer than the one meant).
pub(crate) fn read_id(value: &Unknown) -> JsResult<i64> {
    let id = read_id_u64(value)?;
    match i64::try_from(id) {
        Ok(id) => Ok(id),
        Err(_) => flakery::parse_id(&id.to_string()).or_throw(env_of(value)),
    }
}

/// `read_id` up to 2^64-1, for `decode` (IDs of unsigned layouts such as `discord`).
pub(crate) fn read_id_u64(value: &Unknown) -> JsResult<u64> {
    let env = env_of(value);
    match value_type(value)? {
        ValueType::BigInt => match bigint_bits(&get_bigint(value)?, false) {
            (bits, true) => Ok(bits),
            // Out of range: the core's message, the one it gives for the ID as text.
            _ => flakery::parse_id_u64(&display(value)).or_throw(env),
        },
        ValueType::String => flakery::parse_id_u64(&get_string(value)?).or_throw(env),
        ValueType::Number => {
            let n = read_safe_integer(value, "ID", "the ID as a bigint or a decimal string")?;
            if n < 0.0 {
                // The core's message for a negative ID.
                return flakery::parse_id_u64(&(n as i64).to_string()).or_throw(env);
            }
            Ok(n as u64)
        }
        _ => Err(wrong_type(
            value,
            "an ID",
            "a bigint, a decimal string or a safe-integer number",
        )),
    }
}

/// A value known to be an object, as one.
fn as_object<'a>(value: &Unknown<'a>) -> JsResult<Object<'a>> {
    Object::from_unknown(*value).or_napi()
}

/// An options object: `undefined` is none; anything but a plain object is a `TypeError`, and
/// so is a key the function does not know (a misspelt `workerID` must not pass unnoticed).
pub(crate) struct OptionsObject<'a> {
    env: sys::napi_env,
    object: Option<Object<'a>>,
}

impl<'a> OptionsObject<'a> {
    pub(crate) fn read(
        value: &Unknown<'a>,
        what: &str,
        known: &[&str],
    ) -> napi::Result<Self, &'static str> {
        let env = env_of(value);
        match value_type(value)? {
            ValueType::Undefined => return Ok(OptionsObject { env, object: None }),
            ValueType::Object if !is_array(value) => {}
            _ => {
                return Err(type_error(
                    env,
                    format!("{what} must be an object, not {}", type_name(value)),
                ))
            }
        }
        let object = as_object(value)?;
        for key in own_keys(&object)? {
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
            object: Some(object),
        })
    }

    /// The value of `key`, `None` when it is absent or `undefined`.
    pub(crate) fn get(&self, key: &str) -> JsResult<Option<Unknown<'a>>> {
        let Some(object) = &self.object else {
            return Ok(None);
        };
        let value = get_property(self.env, object, key)?;
        Ok(match value_type(&value)? {
            ValueType::Undefined => None,
            _ => Some(value),
        })
    }

    pub(crate) fn u64(&self, key: &str) -> JsResult<Option<u64>> {
        self.get(key)?.map(|v| read_u64(&v, key)).transpose()
    }

    pub(crate) fn i64(&self, key: &str) -> JsResult<Option<i64>> {
        self.get(key)?.map(|v| read_i64(&v, key)).transpose()
    }

    pub(crate) fn string(&self, key: &str) -> JsResult<Option<String>> {
        self.get(key)?.map(|v| read_string(&v, key)).transpose()
    }

    pub(crate) fn bool(&self, key: &str) -> JsResult<Option<bool>> {
        self.get(key)?.map(|v| read_bool(&v, key)).transpose()
    }

    /// `fields`: an object of constant-field values, `{version: 1}`.
    pub(crate) fn fields(&self) -> JsResult<Vec<(String, u64)>> {
        let Some(value) = self.get("fields")? else {
            return Ok(Vec::new());
        };
        let env = self.env;
        if value_type(&value)? != ValueType::Object || is_array(&value) {
            return Err(type_error(
                env,
                format!(
                    "fields must be an object such as {{version: 1}}, not {}",
                    type_name(&value)
                ),
            ));
        }
        let object = as_object(&value)?;
        let mut fields = Vec::new();
        for name in own_keys(&object)? {
            let item = get_property(env, &object, &name)?;
            if value_type(&item)? == ValueType::Undefined {
                continue;
            }
            let what = format!("fields.{name}");
            fields.push((name, read_u64(&item, &what)?));
        }
        Ok(fields)
    }

    /// `layout`: a spec string, or an object with a string `spec` (an entry of `layouts()`).
    pub(crate) fn layout(&self) -> JsResult<Option<Layout>> {
        let Some(value) = self.get("layout")? else {
            return Ok(None);
        };
        let env = self.env;
        let spec = match value_type(&value)? {
            ValueType::String => get_string(&value)?,
            ValueType::Object => {
                let spec = get_property(env, &as_object(&value)?, "spec")?;
                if value_type(&spec)? != ValueType::String {
                    return Err(type_error(
                        env,
                        "layout must be a spec string or an object with a string 'spec'"
                            .to_string(),
                    ));
                }
                get_string(&spec)?
            }
            _ => {
                return Err(type_error(
                    env,
                    format!(
                        "layout must be a spec string such as 'twitter', not {}",
                        type_name(&value)
                    ),
                ))
            }
        };
        Layout::parse(&spec).or_throw(env).map(Some)
    }
}

/// `object[key]`. The key is made a JavaScript string first (it may hold a NUL, which
/// `get_named_property`'s C string cannot); a getter that throws leaves its exception
/// pending, which `or_napi` passes on.
pub(crate) fn get_property<'a>(
    env: sys::napi_env,
    object: &Object<'a>,
    key: &str,
) -> JsResult<Unknown<'a>> {
    let env = Env::from_raw(env);
    let key = env.create_string(key).or_napi()?;
    object.get_property::<_, Unknown<'a>>(key).or_napi()
}

/// The enumerable string keys of an object (what `for ... in` sees).
pub(crate) fn own_keys(object: &Object) -> JsResult<Vec<String>> {
    Object::keys(object).or_napi()
}

/// The largest `n` of `nextIds(n)`: 2^24 IDs, a 128 MiB array.
pub(crate) const MAX_BATCH: u64 = 1 << 24;

pub(crate) fn read_count(value: &Unknown) -> JsResult<usize> {
    if value_type(value)? != ValueType::Number {
        return Err(wrong_type(value, "n", "a number"));
    }
    let n = get_double(value)?;
    if !is_safe_integer(n) || n < 0.0 || n > MAX_BATCH as f64 {
        return Err(range_error(
            env_of(value),
            format!(
                "n {} is not an integer from 0 to {MAX_BATCH}",
                display(value)
            ),
        ));
    }
    Ok(n as usize)
}

/// The options of `nextIdString`: none, or `{format: 'decimal' | 'base32' | 'base62'}`.
pub(crate) fn read_format(value: &Unknown) -> JsResult<IdFormat> {
    let o = OptionsObject::read(value, "nextIdString options", &["format"])?;
    match o.string("format")? {
        None => Ok(IdFormat::Decimal),
        Some(format) => format.parse::<IdFormat>().or_throw(env_of(value)),
    }
}
