//! A `Client`'s generating calls. The Rust client blocks when its stock is empty (up to its
//! `timeoutMs`, 5 s by default, through a failover or a server that stopped answering), so
//! nothing here may wait on the JavaScript thread:
//!
//! - `nextId()`, `nextIdString()` and `nextIds(n)` return Promises. When the stock holds an
//!   ID now (the steady state), `nextId`'s and `nextIdString`'s Promise is made already
//!   resolved on the JavaScript thread (no thread hop); otherwise the call runs on a thread
//!   of libuv's pool (napi-rs `AsyncTask`) and its Promise settles when the client answers,
//!   rejecting with the client's error codes. `nextIds(n)` always runs on the pool: the client
//!   has no fill that never waits, and a batch spreads the hop over its IDs.
//! - `tryNextId()` and `tryNextIdString()` never wait: an ID from the stock, or `null` when
//!   none is there now (then `nextId()` waits for a block or says what failed).
//!
//! `close()` wakes every call waiting in the client, which then fails (`invalid_argument`,
//! "closed"): a pending Promise rejects at once and keeps the process alive no longer. A
//! Promise still pending when `close()` is called rejects so even when its IDs were taken
//! before (`Wait::resolve`): after `close()` returns, nothing resolves with an ID.
//!
//! The calls are bound to each object as a `Generator`'s are (`fast::bind_arc_methods`).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::sync::Arc;

use flakery::IdFormat;
use flakery_client::Client;
use napi::bindgen_prelude::{i64n, ToNapiValue, TypeName};
use napi::{sys, Env, JsValue, Task, Unknown, ValueType};

use crate::errors::{check, core_error_value, napi_error, JsResult, PENDING};
use crate::fast::{arg, bind_arc_methods, call_info, finish, id_format, Call};
use crate::read::read_count;
use crate::values::{new_id_array, new_id_text};

/// The client a method was bound to.
///
/// # Safety
/// `call.data` must be the `Arc` pointer `bind_arc_methods` gave the function, which the
/// function's finalizer frees only once the function itself is gone.
unsafe fn bound<'a>(call: &Call) -> &'a Client {
    unsafe { &*call.data.cast::<Client>().cast_const() }
}

/// A counted reference to the bound client, for a call that outlives this one (a `Wait`).
///
/// # Safety
/// As `bound`.
unsafe fn bound_arc(call: &Call) -> Arc<Client> {
    let raw = call.data.cast::<Client>().cast_const();
    // SAFETY: `raw` is from `Arc::into_raw` and its count is held by the bound function.
    unsafe {
        Arc::increment_strong_count(raw);
        Arc::from_raw(raw)
    }
}

/// What a pending call asked for.
#[derive(Clone, Copy)]
enum Want {
    Id,
    Text(IdFormat),
    Ids(usize),
}

enum Got {
    Id(i64),
    Ids(Vec<i64>),
}

/// A call that may wait for the client: `compute` runs on a thread of libuv's pool, the
/// result is made into a JavaScript value on the JavaScript thread.
struct Wait {
    client: Arc<Client>,
    want: Want,
}

impl Task for Wait {
    type Output = flakery::Result<Got>;
    type JsValue = Settled;

    fn compute(&mut self) -> napi::Result<Self::Output> {
        let (client, want) = (&self.client, self.want);
        // A panic must not unwind out of libuv's thread (it would abort the process).
        catch_unwind(AssertUnwindSafe(|| match want {
            Want::Id | Want::Text(_) => client.next_id().map(Got::Id),
            Want::Ids(n) => client.next_ids(n).map(Got::Ids),
        }))
        .map_err(|_| napi::Error::new(napi::Status::GenericFailure, "flakery panicked"))
    }

    fn resolve(&mut self, env: Env, got: Self::Output) -> napi::Result<Settled> {
        let env = env.raw();
        // The IDs were taken on the pool, perhaps just before `close()`, but the Promise
        // settles only now, on the JavaScript thread: after a `close()` it rejects as every
        // call then does, so that nothing resolves with an ID once `close()` has returned.
        let got = match self.client.failure() {
            Some(failure) => Err(failure),
            None => got,
        };
        let got = got.map_err(|e| core_error_value(env, e))?;
        let value = match (got, self.want) {
            (Got::Id(id), Want::Text(format)) => new_id_text(env, id, format),
            (Got::Id(id), _) => new_id(env, id),
            (Got::Ids(ids), _) => new_id_array(env, ids.len(), |out| {
                out.copy_from_slice(&ids);
                Ok(())
            }),
        };
        value.map(Settled).map_err(|e| rejection(env, e))
    }
}

/// The value a Promise settles with, made by hand (`values`).
struct Settled(sys::napi_value);

impl ToNapiValue for Settled {
    unsafe fn to_napi_value(_env: sys::napi_env, val: Self) -> napi::Result<sys::napi_value> {
        Ok(val.0)
    }
}

impl TypeName for Settled {
    fn type_name() -> &'static str {
        "bigint | string | BigInt64Array"
    }

    fn value_type() -> ValueType {
        ValueType::Unknown
    }
}

/// A failure of making the value (a Node-API failure, or an exception it left pending), as
/// the Promise's rejection.
fn rejection(env: sys::napi_env, error: napi::Error<&'static str>) -> napi::Error {
    if error.status == PENDING {
        let mut exception = ptr::null_mut();
        // SAFETY: env is live; an exception is pending, which this takes.
        if unsafe { sys::napi_get_and_clear_last_exception(env, &mut exception) }
            == sys::Status::napi_ok
            && !exception.is_null()
        {
            // SAFETY: the exception is a live value of this scope.
            return napi::Error::from(unsafe { Unknown::from_raw_unchecked(env, exception) });
        }
    }
    napi::Error::new(napi::Status::GenericFailure, error.reason.clone())
}

fn new_id(env: sys::napi_env, id: i64) -> JsResult<sys::napi_value> {
    // SAFETY: env is live.
    unsafe { i64n::to_napi_value(env, i64n(id)) }.map_err(napi_error)
}

/// A Promise already resolved with `value`: the steady state's answer, made without a hop.
fn resolved(env: sys::napi_env, value: sys::napi_value) -> JsResult<sys::napi_value> {
    let mut deferred = ptr::null_mut();
    let mut promise = ptr::null_mut();
    // SAFETY: env is live; the call writes both.
    check(unsafe { sys::napi_create_promise(env, &mut deferred, &mut promise) })?;
    // SAFETY: the deferred is this promise's, settled once, here.
    check(unsafe { sys::napi_resolve_deferred(env, deferred, value) })?;
    Ok(promise)
}

/// A Promise of what the client answers on a thread of libuv's pool.
fn wait(env: sys::napi_env, client: Arc<Client>, want: Want) -> JsResult<sys::napi_value> {
    let work = Env::from_raw(env)
        .spawn(Wait { client, want })
        .map_err(napi_error)?;
    Ok(work.promise_object().raw())
}

/// The one body of the calls that take from the stock: the ID (as text when `text`) if the
/// stock holds one now, else `null`; when `promised`, the value as a Promise resolved at once,
/// else a Promise of the wait for a block.
fn take(
    env: sys::napi_env,
    info: sys::napi_callback_info,
    text: bool,
    promised: bool,
) -> JsResult<sys::napi_value> {
    let call = call_info(env, info, text)?;
    let format = if text {
        Some(id_format(env, &call)?)
    } else {
        None
    };
    let value = |id| match format {
        Some(format) => new_id_text(env, id, format),
        None => new_id(env, id),
    };
    // SAFETY: these callbacks are only ever made by `bind_methods`.
    match (unsafe { bound(&call) }.try_next_id(), promised) {
        (Some(id), false) => value(id),
        (Some(id), true) => resolved(env, value(id)?),
        (None, false) => null(env),
        // SAFETY: as above.
        (None, true) => wait(
            env,
            unsafe { bound_arc(&call) },
            format.map_or(Want::Id, Want::Text),
        ),
    }
}

/// `nextId()`: a Promise of a new ID, resolved at once when the stock holds one.
unsafe extern "C" fn client_next_id(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    finish(env, || take(env, info, false, true))
}

/// `nextIdString(options)`: as `nextId`, the ID in `options.format`.
unsafe extern "C" fn client_next_id_string(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    finish(env, || take(env, info, true, true))
}

/// `tryNextId()`: an ID from the stock, or `null` when it holds none now. Never waits.
unsafe extern "C" fn client_try_next_id(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    finish(env, || take(env, info, false, false))
}

/// `tryNextIdString(options)`: as `tryNextId`, the ID in `options.format`.
unsafe extern "C" fn client_try_next_id_string(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    finish(env, || take(env, info, true, false))
}

/// `nextIds(n)`: a Promise of `n` new IDs (`n` up to 2^24), increasing within each block.
unsafe extern "C" fn client_next_ids(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    finish(env, || {
        let call = call_info(env, info, true)?;
        let n = read_count(&arg(env, &call))?;
        // SAFETY: as above.
        wait(env, unsafe { bound_arc(&call) }, Want::Ids(n))
    })
}

fn null(env: sys::napi_env) -> JsResult<sys::napi_value> {
    let mut value = ptr::null_mut();
    // SAFETY: env is live.
    check(unsafe { sys::napi_get_null(env, &mut value) })?;
    Ok(value)
}

/// Gives a new `Client` object its own generating calls, each bound to the client.
pub(crate) fn bind_methods(
    env: sys::napi_env,
    this: sys::napi_value,
    client: &Arc<Client>,
) -> JsResult<()> {
    bind_arc_methods(
        env,
        this,
        client,
        [
            (c"nextId", client_next_id),
            (c"nextIdString", client_next_id_string),
            (c"nextIds", client_next_ids),
            (c"tryNextId", client_try_next_id),
            (c"tryNextIdString", client_try_next_id_string),
        ],
    )
}
