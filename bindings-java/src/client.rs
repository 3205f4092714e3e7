//! The native methods of `dev.flakery.Client`: IDs from `flakery serve` instances through the
//! Rust client (`flakery-client`). Argument and error conversion only: the blocks, prefetch,
//! age, failover, deadlines and fallback are the crate's. A client crosses to Java as a handle
//! (handles.rs), released by the Java object's `Cleaner`; its `Drop` never waits.

use flakery::option_table::{
    parse_flag, ClientOptionSpec, CLIENT_CERT, CLIENT_KEY, CLIENT_OPTIONS, LAYOUT, MAX_AGE,
    MAX_BLOCK, MIN_BLOCK, PREFER_FIRST, PREFETCH, REQUEST_TIMEOUT, SEND_TOKEN_IN_CLEAR, SERVERS,
    SERVER_CA, TIMEOUT, TOKEN,
};
use flakery::{Error, Generator, IdFormat, Layout, Surface};
use flakery_client::{split_servers, Client, Options};
use jni::objects::{JClass, JObjectArray, JString};
use jni::sys::{jint, jlong, jlongArray, jobjectArray, jstring};
use jni::JNIEnv;

use crate::errors::{guard, string, string_array, strings};
use crate::handles::{self, fill_ids, java_string, with};

/// The builder's options, `names[i] = values[i]`, each named as the core's table of client
/// options names it in camelCase (`CLIENT_OPTIONS`' `js`, as the generator's options are).
fn options(names: &[String], values: &[String]) -> Result<Options, Error> {
    if names.len() != values.len() {
        return Err(Error::invalid_argument(format!(
            "{} option names but {} values",
            names.len(),
            values.len()
        )));
    }
    let mut options = Options::default();
    for (name, text) in names.iter().zip(values) {
        let spec = CLIENT_OPTIONS
            .iter()
            .find(|o| o.js == name)
            .ok_or_else(|| {
                Error::invalid_argument(format!("there is no client option '{name}'"))
            })?;
        set(&mut options, spec.js, text)?;
    }
    Ok(options)
}

/// One option of the table, by its name.
fn set(options: &mut Options, name: &str, text: &str) -> Result<(), Error> {
    let number = || -> Result<u64, Error> {
        text.parse::<u64>().map_err(|_| {
            Error::invalid_argument(format!(
                "{name} must be an integer from 0 to 2^63-1, not {text}"
            ))
        })
    };
    let flag = || parse_flag(name, text);
    // Checked here, where the value is still the caller's milliseconds: the client's own
    // check sees a `Duration` and would show one ("not 0ns"). Java's names are Node's.
    let ms = |spec: &ClientOptionSpec| spec.millis(Surface::Node, number()?);
    let size = || number().map(|n| usize::try_from(n).unwrap_or(usize::MAX));
    match name {
        _ if name == SERVERS.js => options.servers.extend(split_servers(text)),
        _ if name == TOKEN.js => options.token = Some(text.to_string()),
        _ if name == LAYOUT.js => options.layout = Some(Layout::parse(text)?),
        _ if name == MAX_AGE.js => options.max_age = ms(&MAX_AGE)?,
        _ if name == TIMEOUT.js => options.timeout = ms(&TIMEOUT)?,
        _ if name == REQUEST_TIMEOUT.js => options.request_timeout = ms(&REQUEST_TIMEOUT)?,
        _ if name == MIN_BLOCK.js => options.min_block = size()?,
        _ if name == MAX_BLOCK.js => options.max_block = size()?,
        _ if name == PREFETCH.js => options.prefetch = flag()?,
        _ if name == PREFER_FIRST.js => options.prefer_first = flag()?,
        _ if name == SERVER_CA.js => options.server_ca = Some(text.into()),
        _ if name == CLIENT_CERT.js => options.client_cert = Some(text.into()),
        _ if name == CLIENT_KEY.js => options.client_key = Some(text.into()),
        _ if name == SEND_TOKEN_IN_CLEAR.js => options.send_token_in_clear = flag()?,
        // The fallback is a `Generator`, given as its handle (`clientNew`), never as text.
        _ => {
            return Err(Error::invalid_argument(format!(
                "client option '{name}' is not supported by this build of flakery's Java package"
            )))
        }
    }
    Ok(())
}

/// A new client of the builder's options; `fallback`: the handle of the Java `Generator` to
/// use when every server is unavailable (shared with it), or 0 for none.
#[no_mangle]
pub extern "system" fn Java_dev_flakery_Native_clientNew(
    mut env: JNIEnv,
    _: JClass,
    names: JObjectArray,
    values: JObjectArray,
    fallback: jlong,
) -> jlong {
    guard(&mut env, 0, |env| {
        let names = strings(env, &names, "option names")?;
        let values = strings(env, &values, "option values")?;
        let mut options = options(&names, &values)?;
        if fallback != 0 {
            // SAFETY: a generator's handle (handles.rs), its owner reachable across the call.
            options.fallback = Some(unsafe { handles::share::<Generator>(fallback) });
        }
        Ok(handles::new(Client::new(options)?))
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_flakery_Native_clientFree(
    mut env: JNIEnv,
    _: JClass,
    handle: jlong,
) {
    // SAFETY: a client's handle, released once by its Java owner's Cleaner. The client's
    // `Drop` stops its thread without waiting for it.
    unsafe { handles::release::<Client>(&mut env, handle) }
}

#[no_mangle]
pub extern "system" fn Java_dev_flakery_Native_clientClose(
    mut env: JNIEnv,
    _: JClass,
    handle: jlong,
) {
    // SAFETY: a client's handle (handles.rs).
    unsafe {
        with(&mut env, handle, (), |_, c: &Client| {
            c.close();
            Ok(())
        })
    }
}

#[no_mangle]
pub extern "system" fn Java_dev_flakery_Native_clientNextId(
    mut env: JNIEnv,
    _: JClass,
    handle: jlong,
) -> jlong {
    // SAFETY: a client's handle (handles.rs).
    unsafe { with(&mut env, handle, 0, |_, c: &Client| Ok(c.next_id()?)) }
}

#[no_mangle]
pub extern "system" fn Java_dev_flakery_Native_clientNextIds(
    mut env: JNIEnv,
    _: JClass,
    handle: jlong,
    n: jint,
) -> jlongArray {
    let ids = |env: &mut JNIEnv, c: &Client| {
        fill_ids(env, n, |count| {
            let mut batch = c.batch(count);
            move |chunk: &mut [i64]| batch.fill(chunk)
        })
    };
    // SAFETY: a client's handle (handles.rs).
    unsafe { with(&mut env, handle, std::ptr::null_mut(), ids) }
}

#[no_mangle]
pub extern "system" fn Java_dev_flakery_Native_clientNextIdText(
    mut env: JNIEnv,
    _: JClass,
    handle: jlong,
    format: JString,
) -> jstring {
    let text = |env: &mut JNIEnv, c: &Client| {
        let format = string(env, &format, "format")?.parse::<IdFormat>()?;
        java_string(env, c.next_id_text(format)?)
    };
    // SAFETY: a client's handle (handles.rs).
    unsafe { with(&mut env, handle, std::ptr::null_mut(), text) }
}

/// A new layout handle with the servers' layout.
#[no_mangle]
pub extern "system" fn Java_dev_flakery_Native_clientLayout(
    mut env: JNIEnv,
    _: JClass,
    handle: jlong,
) -> jlong {
    // SAFETY: a client's handle (handles.rs).
    unsafe { handles::layout_of(&mut env, handle, Client::layout) }
}

#[no_mangle]
pub extern "system" fn Java_dev_flakery_Native_clientServers(
    mut env: JNIEnv,
    _: JClass,
    handle: jlong,
) -> jobjectArray {
    let servers = |env: &mut JNIEnv, c: &Client| {
        Ok(string_array(env, c.servers().iter().cloned())?.into_raw())
    };
    // SAFETY: a client's handle (handles.rs).
    unsafe { with(&mut env, handle, std::ptr::null_mut(), servers) }
}

/// The core's table of client options, `[name, kind, default or ""]` for each, flattened: the
/// camelCase name, the kind as the table's `Debug` writes it. ClientTest checks each method of
/// `Client.Builder` against it.
#[no_mangle]
pub extern "system" fn Java_dev_flakery_Native_clientOptions(
    mut env: JNIEnv,
    _: JClass,
) -> jobjectArray {
    guard(&mut env, std::ptr::null_mut(), |env| {
        let texts: Vec<String> = CLIENT_OPTIONS
            .iter()
            .flat_map(|o| {
                [
                    o.js.to_string(),
                    format!("{:?}", o.kind),
                    o.default.unwrap_or("").to_string(),
                ]
            })
            .collect();
        Ok(string_array(env, texts.into_iter())?.into_raw())
    })
}
