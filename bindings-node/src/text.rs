//! The fixed-width text forms of an ID (base32 and base62, whose string order is the IDs'
//! order), as the core writes and reads them.

use flakery::text;
use napi::bindgen_prelude::BigInt;
use napi::{Env, Unknown};
use napi_derive::napi;

use crate::errors::{JsResult, OrThrow};
use crate::read::{read_id, read_string};

fn to_text(env: Env, id: Unknown, format: flakery::IdFormat) -> JsResult<String> {
    let env = env.raw();
    let id = read_id(&id)?;
    format.format(id).or_throw(env)
}

fn from_text(env: Env, text: Unknown, parse: fn(&str) -> flakery::Result<i64>) -> JsResult<BigInt> {
    let env = env.raw();
    let text = read_string(&text, "text")?;
    let id = parse(&text).or_throw(env)?;
    Ok(BigInt::from(id))
}

/// The 13-character base32 form of an ID (Crockford's alphabet, upper case, zero-padded):
/// sorting these strings sorts the IDs. `id` is as `decode` takes it.
#[napi(catch_unwind, ts_args_type = "id: bigint | string | number")]
pub fn to_base32(env: Env, id: Unknown) -> napi::Result<String, &'static str> {
    to_text(env, id, flakery::IdFormat::Base32)
}

/// The ID a base32 form stands for. Case-insensitive; `O` reads as 0, `I` and `L` as 1. A
/// string of the wrong length, with a character outside the alphabet, or above 2^63-1 throws
/// a `RangeError` with code `invalid_argument` that names the character or the reason.
#[napi(catch_unwind, ts_args_type = "text: string")]
pub fn from_base32(env: Env, text: Unknown) -> napi::Result<BigInt, &'static str> {
    from_text(env, text, text::from_base32)
}

/// The 11-character base62 form of an ID (`0-9A-Za-z`, zero-padded): sorting these strings
/// (by code unit, as `Array.prototype.sort` does) sorts the IDs.
#[napi(catch_unwind, ts_args_type = "id: bigint | string | number")]
pub fn to_base62(env: Env, id: Unknown) -> napi::Result<String, &'static str> {
    to_text(env, id, flakery::IdFormat::Base62)
}

/// The ID a base62 form stands for (case-sensitive). Bad strings throw as `fromBase32` does.
#[napi(catch_unwind, ts_args_type = "text: string")]
pub fn from_base62(env: Env, text: Unknown) -> napi::Result<BigInt, &'static str> {
    from_text(env, text, text::from_base62)
}
