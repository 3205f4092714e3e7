//! `Client`: IDs from `flakery serve` instances through the Rust client (`flakery-client`),
//! with the calls of a `Generator` (`nextId`, `nextIdString`, `nextIds`) plus `decode` under
//! the servers' layout. Argument and error conversion only: the client's logic (blocks,
//! prefetch, age, failover, deadlines) is the crate's.
//!
//! The generating calls (`client_calls`) never wait on the JavaScript thread: those that may
//! wait for a block return Promises. They are bound to each object as the `Generator`'s are
//! (`fast`): napi-rs's method call costs several times the client's own steady-state call.
//! bindings-node/types.d.ts declares them.

use std::ptr;
use std::sync::Arc;
use std::time::Duration;

use flakery::option_table::{
    ClientOptionSpec, CLIENT_CERT, CLIENT_KEY, CLIENT_OPTIONS, FALLBACK, MAX_AGE, MAX_BLOCK,
    MIN_BLOCK, PREFER_FIRST, PREFETCH, REQUEST_TIMEOUT, SEND_TOKEN_IN_CLEAR, SERVERS, SERVER_CA,
    TIMEOUT, TOKEN,
};
use flakery::Surface;
use flakery_client::Options;
use napi::bindgen_prelude::{ClassInstance, FromNapiValue, Object, This};
use napi::{sys, Env, JsValue, Unknown, ValueType};
use napi_derive::napi;

use crate::errors::{check, type_error, JsResult, OrThrow};
use crate::read::{get_property, read_id_u64, read_string, type_name, value_type, OptionsObject};
use crate::results::DecodedId;

/// The keys of `ClientOptions`: the core's table of a client's options.
fn client_keys() -> Vec<&'static str> {
    CLIENT_OPTIONS.iter().map(|o| o.js).collect()
}

/// `servers`: a string of URLs separated by commas, or an array of them.
fn read_servers(env: &Env, value: &Unknown) -> JsResult<Vec<String>> {
    if value_type(value)? == ValueType::String {
        return Ok(flakery_client::split_servers(&read_string(
            value, "servers",
        )?));
    }
    if !value.is_array().unwrap_or(false) {
        return Err(type_error(
            env.raw(),
            format!(
                "servers must be a string or an array of strings, not {}",
                type_name(value)
            ),
        ));
    }
    let array = Object::from_unknown(*value).map_err(crate::errors::napi_error)?;
    let length = get_property(env.raw(), &array, "length")?;
    let length = crate::read::read_u64(&length, "servers.length")?;
    let mut servers = Vec::new();
    for i in 0..length {
        let item = get_property(env.raw(), &array, &i.to_string())?;
        servers.extend(flakery_client::split_servers(&read_string(
            &item,
            &format!("servers[{i}]"),
        )?));
    }
    Ok(servers)
}

fn client_options(env: &Env, value: &Unknown) -> JsResult<Options> {
    let o = OptionsObject::read(value, "Client options", &client_keys())?;
    let mut options = Options {
        token: o.string(TOKEN.js)?,
        layout: o.layout()?,
        ..Options::default()
    };
    if let Some(servers) = o.get(SERVERS.js)? {
        options.servers = read_servers(env, &servers)?;
    }
    // Checked here, where the value is still the caller's milliseconds: the client's own
    // check sees a `Duration` and would show one ("not 0ns").
    let ms = |spec: &ClientOptionSpec, default: Duration| -> JsResult<Duration> {
        match o.u64(spec.js)? {
            Some(ms) => spec.millis(Surface::Node, ms).or_throw(env.raw()),
            None => Ok(default),
        }
    };
    options.max_age = ms(&MAX_AGE, options.max_age)?;
    options.timeout = ms(&TIMEOUT, options.timeout)?;
    options.request_timeout = ms(&REQUEST_TIMEOUT, options.request_timeout)?;
    let block = |key: &str, default: usize| -> JsResult<usize> {
        Ok(o.u64(key)?
            .map_or(default, |n| usize::try_from(n).unwrap_or(usize::MAX)))
    };
    options.min_block = block(MIN_BLOCK.js, options.min_block)?;
    options.max_block = block(MAX_BLOCK.js, options.max_block)?;
    options.prefetch = o.bool(PREFETCH.js)?.unwrap_or(options.prefetch);
    options.prefer_first = o.bool(PREFER_FIRST.js)?.unwrap_or(options.prefer_first);
    options.server_ca = o.string(SERVER_CA.js)?.map(Into::into);
    options.client_cert = o.string(CLIENT_CERT.js)?.map(Into::into);
    options.client_key = o.string(CLIENT_KEY.js)?.map(Into::into);
    options.send_token_in_clear = o
        .bool(SEND_TOKEN_IN_CLEAR.js)?
        .unwrap_or(options.send_token_in_clear);
    if let Some(fallback) = o.get(FALLBACK.js)? {
        // SAFETY: `fallback` is a live value of this call's scope.
        let generator = unsafe {
            ClassInstance::<crate::Generator>::from_napi_value(env.raw(), fallback.raw())
        }
        .map_err(|_| {
            type_error(
                env.raw(),
                format!("fallback must be a Generator, not {}", type_name(&fallback)),
            )
        })?;
        options.fallback = Some(std::sync::Arc::clone(&generator.inner));
    }
    Ok(options)
}

/// A client of one or more `flakery serve` instances, with the calls of a `Generator`: switch
/// between embedded and central with one line (docs/client.md).
#[napi]
pub struct Client {
    inner: Arc<flakery_client::Client>,
}

#[napi]
impl Client {
    /// Options not given come from `FLAKERY_SERVERS`, `FLAKERY_SERVER_TOKEN` and
    /// `FLAKERY_LAYOUT`, then the defaults of docs/client.md#options. Asks no server yet.
    #[napi(catch_unwind, constructor, ts_args_type = "options?: ClientOptions")]
    pub fn new(env: Env, this: This, options: Unknown) -> napi::Result<Self, &'static str> {
        check_constructed(env.raw(), this.raw())?;
        let options = client_options(&env, &options)?;
        let inner = flakery_client::Client::new(options).or_throw(env.raw())?;
        let inner = Arc::new(inner);
        crate::client_calls::bind_methods(env.raw(), this.raw(), &inner)?;
        Ok(Client { inner })
    }

    /// Takes an ID apart under the servers' layout, as `decode(id, layout)` does.
    #[napi(catch_unwind, ts_args_type = "id: bigint | string | number")]
    pub fn decode<'env>(
        &self,
        env: &'env Env,
        id: Unknown,
    ) -> napi::Result<DecodedId<'env>, &'static str> {
        let id = read_id_u64(&id)?;
        let layout = self.inner.layout();
        let decoded = flakery::decode_u64(id, layout).or_throw(env.raw())?;
        DecodedId::new(env, decoded, layout)
    }

    /// The servers' layout as its canonical spec string.
    #[napi(catch_unwind, getter)]
    pub fn layout(&self) -> String {
        self.inner.layout().to_string()
    }

    /// The servers' base URLs.
    #[napi(catch_unwind, getter)]
    pub fn servers(&self) -> Vec<String> {
        self.inner.servers().to_vec()
    }

    /// Stops the client: the IDs it holds are dropped (never given back); a call waiting for
    /// a block fails at once, and every later call fails, with `invalid_argument`. Never
    /// waits for a server.
    #[napi(catch_unwind)]
    pub fn close(&self) {
        self.inner.close();
    }
}

/// Refuses `Client()` called without `new`: napi-rs's constructor would otherwise wrap, and
/// bind the hot calls onto, whatever `this` is (for `flakery.Client()`, the module's exports,
/// whose `nextId` it would replace). The object `new` makes has no own property yet.
fn check_constructed(env: sys::napi_env, this: sys::napi_value) -> JsResult<()> {
    let mut kind = 0;
    // SAFETY: env and this are live handles of the current call.
    check(unsafe { sys::napi_typeof(env, this, &mut kind) })?;
    let mut fresh = false;
    if kind == sys::ValueType::napi_object {
        let mut names = ptr::null_mut();
        // SAFETY: as above; `this` is an object.
        check(unsafe {
            sys::napi_get_all_property_names(
                env,
                this,
                sys::KeyCollectionMode::own_only,
                sys::KeyFilter::all_properties,
                sys::KeyConversion::keep_numbers,
                &mut names,
            )
        })?;
        let mut length = 0;
        // SAFETY: `names` is the array the call above made.
        check(unsafe { sys::napi_get_array_length(env, names, &mut length) })?;
        fresh = length == 0;
    }
    if fresh {
        Ok(())
    } else {
        Err(type_error(
            env,
            "Class constructor Client cannot be invoked without 'new'".to_string(),
        ))
    }
}
