//! The native methods of `dev.flakery.Client`: IDs from `flakery serve` instances through the
//! Rust client (`flakery-client`). Argument and error conversion only: the blocks, prefetch,
//! age, failover and deadlines are the crate's. A client crosses to Java as a handle (a `Box`
//! turned into a `long`), freed by the Java object's `Cleaner`; its `Drop` never waits.

use std::time::Duration;

use flakery::{Error, IdFormat, Layout};
use flakery_client::{Client, Options};
use jni::objects::{JClass, JObjectArray, JString};
use jni::sys::{jint, jlong, jlongArray, jobjectArray, jstring};
use jni::JNIEnv;

use crate::errors::{guard, string, string_array, strings};

/// # Safety
/// `handle` came from `clientNew` and is not freed: Java frees it only when the `Client` is
/// unreachable, and keeps it reachable across every native call.
unsafe fn client<'a>(handle: jlong) -> &'a Client {
    // SAFETY: as the caller promises.
    unsafe { &*(handle as *const Client) }
}

/// The builder's options, `names[i] = values[i]`, as `Client.Builder` names them.
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
        let number = || -> Result<u64, Error> {
            text.parse::<u64>().map_err(|_| {
                Error::invalid_argument(format!(
                    "{name} must be an integer from 0 to 2^63-1, not {text}"
                ))
            })
        };
        let flag = || -> Result<bool, Error> {
            match text.as_str() {
                "true" => Ok(true),
                "false" => Ok(false),
                _ => Err(Error::invalid_argument(format!(
                    "{name} '{text}' is not true or false"
                ))),
            }
        };
        let size = || number().map(|n| usize::try_from(n).unwrap_or(usize::MAX));
        match name.as_str() {
            "server" => options.servers.extend(flakery_client::split_servers(text)),
            "token" => options.token = Some(text.clone()),
            "layout" => options.layout = Some(Layout::parse(text)?),
            "maxAgeMs" => options.max_age = Duration::from_millis(number()?),
            "timeoutMs" => options.timeout = Duration::from_millis(number()?),
            "requestTimeoutMs" => options.request_timeout = Duration::from_millis(number()?),
            "minBlock" => options.min_block = size()?,
            "maxBlock" => options.max_block = size()?,
            "prefetch" => options.prefetch = flag()?,
            "preferFirst" => options.prefer_first = flag()?,
            _ => {
                return Err(Error::invalid_argument(format!(
                    "there is no client option '{name}'"
                )))
            }
        }
    }
    Ok(options)
}

#[no_mangle]
pub extern "system" fn Java_dev_flakery_Native_clientNew(
    mut env: JNIEnv,
    _: JClass,
    names: JObjectArray,
    values: JObjectArray,
) -> jlong {
    guard(&mut env, 0, |env| {
        let names = strings(env, &names, "option names")?;
        let values = strings(env, &values, "option values")?;
        let client = Client::new(options(&names, &values)?)?;
        Ok(Box::into_raw(Box::new(client)) as jlong)
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_flakery_Native_clientFree(
    mut env: JNIEnv,
    _: JClass,
    handle: jlong,
) {
    guard(&mut env, (), |_| {
        if handle != 0 {
            // SAFETY: Java's Cleaner calls this once, when the client is unreachable. The
            // client's `Drop` stops its thread without waiting for it.
            drop(unsafe { Box::from_raw(handle as *mut Client) });
        }
        Ok(())
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_flakery_Native_clientClose(
    mut env: JNIEnv,
    _: JClass,
    handle: jlong,
) {
    guard(&mut env, (), |_| {
        // SAFETY: see `client`.
        unsafe { client(handle) }.close();
        Ok(())
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_flakery_Native_clientNextId(
    mut env: JNIEnv,
    _: JClass,
    handle: jlong,
) -> jlong {
    // SAFETY: see `client`.
    let client = unsafe { client(handle) };
    guard(&mut env, 0, |_| Ok(client.next_id()?))
}

/// `n` IDs into a new `long[]`, filled by the client in one call (its blocks are held in
/// native memory already; the array is the JVM's, which refuses a size it cannot hold).
#[no_mangle]
pub extern "system" fn Java_dev_flakery_Native_clientNextIds(
    mut env: JNIEnv,
    _: JClass,
    handle: jlong,
    n: jint,
) -> jlongArray {
    guard(&mut env, std::ptr::null_mut(), |env| {
        // SAFETY: see `client`.
        let client = unsafe { client(handle) };
        let Ok(count) = usize::try_from(n) else {
            return Err(Error::invalid_argument(format!(
                "n must be a non-negative integer, not {n}"
            ))
            .into());
        };
        let array = env.new_long_array(n)?;
        let ids = client.next_ids(count)?;
        env.set_long_array_region(&array, 0, &ids)?;
        Ok(array.into_raw())
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_flakery_Native_clientNextIdText(
    mut env: JNIEnv,
    _: JClass,
    handle: jlong,
    format: JString,
) -> jstring {
    guard(&mut env, std::ptr::null_mut(), |env| {
        let format = string(env, &format, "format")?.parse::<IdFormat>()?;
        // SAFETY: see `client`.
        let text = unsafe { client(handle) }.next_id_text(format)?;
        Ok(env.new_string(text)?.into_raw())
    })
}

/// A new layout handle with the servers' layout.
#[no_mangle]
pub extern "system" fn Java_dev_flakery_Native_clientLayout(
    mut env: JNIEnv,
    _: JClass,
    handle: jlong,
) -> jlong {
    guard(&mut env, 0, |_| {
        // SAFETY: see `client`.
        let layout = unsafe { client(handle) }.layout().clone();
        Ok(Box::into_raw(Box::new(layout)) as jlong)
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_flakery_Native_clientServers(
    mut env: JNIEnv,
    _: JClass,
    handle: jlong,
) -> jobjectArray {
    guard(&mut env, std::ptr::null_mut(), |env| {
        // SAFETY: see `client`.
        let servers = unsafe { client(handle) }.servers().to_vec();
        Ok(string_array(env, servers.into_iter())?.into_raw())
    })
}
