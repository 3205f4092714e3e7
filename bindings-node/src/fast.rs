//! The hot calls, registered by hand: each is the one body of its call.
//!
//! napi-rs wraps every call that has arguments, an `Env` or a receiver in a "native borrow
//! scope" (a global mutex, a hash map and heap allocations per call: 100-200 ns, several
//! times the cost of an ID). So the hot calls are plain Node-API callbacks:
//!
//! - the module's `nextId`, `nextIdString` and `nextIds` are installed on the exports when the
//!   module loads;
//! - each `Generator` object gets its own `nextId`, `nextIdString` and `nextIds`, functions
//!   bound to its generator through their Node-API `data` pointer, so that a call finds its
//!   generator without `napi_unwrap` and a type-tag check (two private-property lookups,
//!   some 100 ns). They are own properties of the object, not of `Generator.prototype`, so
//!   a detached `const next = g.nextId` still works.
//!
//! napi-rs generates no TypeScript for them: `bindings-node/types.d.ts` declares them, and
//! tests/node/types.test.mjs checks those declarations against what this module installs.

// napi-rs registers the module hook only outside `cfg(test)`, so a test build (clippy's
// --all-targets) would see the callbacks as unused.
#![cfg_attr(test, allow(dead_code))]

use std::ffi::{c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::sync::Arc;

use flakery::IdFormat;
use napi::bindgen_prelude::{i64n, JsError, Object, ToNapiValue};
use napi::{sys, Env, JsValue, Unknown};
use napi_derive::napi;

use crate::default_generator;
use crate::errors::{check, core_error, type_error, Fail, JsResult, PENDING};
use crate::read::{read_count, read_format};
use crate::values::{new_id_array, new_id_text};

/// Runs a callback's body behind the panic boundary every FFI entry point has; throws its
/// error unless one is already pending; the value to return to JavaScript.
pub(crate) fn finish(
    env: sys::napi_env,
    body: impl FnOnce() -> JsResult<sys::napi_value>,
) -> sys::napi_value {
    let result = catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|payload| {
        Err(napi::Error::new(
            "internal_error",
            format!("flakery panicked: {}", panic_message(&payload)),
        ))
    });
    match result {
        Ok(value) => value,
        Err(error) => {
            if error.status != PENDING {
                // SAFETY: env is the live environment of the current call.
                unsafe { JsError::from(error).throw_into(env) };
            }
            ptr::null_mut()
        }
    }
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> &str {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(no message)")
}

fn id_value(env: sys::napi_env, id: flakery::Result<i64>) -> JsResult<sys::napi_value> {
    // i64n's conversion is exactly napi_create_bigint_int64.
    let id = id.map_err(|e| core_error(env, e))?;
    // SAFETY: env is live.
    unsafe { i64n::to_napi_value(env, i64n(id)) }.map_err(crate::errors::napi_error)
}

/// A call's bound data (a generator, for the methods), its first argument (`undefined` when
/// none was passed) and whether one was passed.
pub(crate) struct Call {
    pub(crate) data: *mut c_void,
    arg: sys::napi_value,
    passed: bool,
}

pub(crate) fn call_info(
    env: sys::napi_env,
    info: sys::napi_callback_info,
    want_arg: bool,
) -> JsResult<Call> {
    let mut argc = usize::from(want_arg);
    let mut arg = ptr::null_mut();
    let mut data = ptr::null_mut();
    // SAFETY: info is this call's; argv has room for argc (0 or 1) values, which Node-API fills
    // with `undefined` where fewer were passed.
    check(unsafe {
        sys::napi_get_cb_info(env, info, &mut argc, &mut arg, ptr::null_mut(), &mut data)
    })?;
    Ok(Call {
        data,
        arg,
        passed: want_arg && argc > 0,
    })
}

/// A call's argument as an `Unknown`, for the safe readers of `read`.
pub(crate) fn arg<'a>(env: sys::napi_env, call: &Call) -> Unknown<'a> {
    // SAFETY: env is the live environment of this call and `call.arg` a handle of its scope
    // (`napi_get_cb_info` wrote it, `undefined` when nothing was passed).
    unsafe { Unknown::from_raw_unchecked(env, call.arg) }
}

/// The format `nextIdString` was asked for; decimal, without looking, when nothing was passed.
pub(crate) fn id_format(env: sys::napi_env, call: &Call) -> JsResult<IdFormat> {
    if call.passed {
        read_format(&arg(env, call))
    } else {
        Ok(IdFormat::Decimal)
    }
}

/// The generator a method was bound to.
///
/// # Safety
/// `call.data` must be the `Arc` pointer `bind_methods` gave the function, which the
/// function's finalizer frees only once the function itself is gone.
unsafe fn bound<'a>(call: &Call) -> &'a flakery::Generator {
    unsafe { &*call.data.cast::<flakery::Generator>().cast_const() }
}

unsafe extern "C" fn next_id(
    env: sys::napi_env,
    _info: sys::napi_callback_info,
) -> sys::napi_value {
    finish(env, || id_value(env, flakery::next_id()))
}

unsafe extern "C" fn next_id_string(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    finish(env, || {
        let format = id_format(env, &call_info(env, info, true)?)?;
        let id = flakery::next_id().map_err(|e| core_error(env, e))?;
        new_id_text(env, id, format)
    })
}

unsafe extern "C" fn next_ids(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    finish(env, || {
        call_info(env, info, true).and_then(|call| {
            let n = read_count(&arg(env, &call))?;
            let generator = default_generator(env)?;
            new_id_array(env, n, |ids| generator.fill(ids))
        })
    })
}

unsafe extern "C" fn generator_next_id(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    finish(env, || {
        call_info(env, info, false).and_then(|call| {
            // SAFETY: this callback is only ever made by `bind_methods`.
            id_value(env, unsafe { bound(&call) }.next_id())
        })
    })
}

unsafe extern "C" fn generator_next_id_string(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    finish(env, || {
        call_info(env, info, true).and_then(|call| {
            let format = id_format(env, &call)?;
            // SAFETY: as above.
            let id = unsafe { bound(&call) }
                .next_id()
                .map_err(|e| core_error(env, e))?;
            new_id_text(env, id, format)
        })
    })
}

unsafe extern "C" fn generator_next_ids(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    finish(env, || {
        call_info(env, info, true).and_then(|call| {
            let n = read_count(&arg(env, &call))?;
            // SAFETY: as above.
            let generator = unsafe { bound(&call) };
            new_id_array(env, n, |ids| generator.fill(ids))
        })
    })
}

pub(crate) type Callback =
    unsafe extern "C" fn(sys::napi_env, sys::napi_callback_info) -> sys::napi_value;

/// Sets `target[name]` to a new function, as writable, configurable and not enumerable as
/// a class method is.
pub(crate) fn install(
    env: sys::napi_env,
    target: sys::napi_value,
    name: &CStr,
    callback: Callback,
    enumerable: bool,
    data: *mut c_void,
) -> JsResult<sys::napi_value> {
    let mut function = ptr::null_mut();
    // SAFETY: name is NUL-terminated (length -1: up to the NUL); the callback lives forever.
    check(unsafe {
        sys::napi_create_function(env, name.as_ptr(), -1, Some(callback), data, &mut function)
    })?;
    let mut attributes = sys::PropertyAttributes::writable | sys::PropertyAttributes::configurable;
    if enumerable {
        attributes |= sys::PropertyAttributes::enumerable;
    }
    let property = sys::napi_property_descriptor {
        utf8name: name.as_ptr(),
        name: ptr::null_mut(),
        method: None,
        getter: None,
        setter: None,
        value: function,
        attributes,
        data: ptr::null_mut(),
    };
    // SAFETY: one descriptor, valid for the call.
    check(unsafe { sys::napi_define_properties(env, target, 1, &property) })?;
    Ok(function)
}

fn install_all(env: sys::napi_env, exports: sys::napi_value) -> JsResult<()> {
    let none = ptr::null_mut();
    install(env, exports, c"nextId", next_id, true, none)?;
    install(env, exports, c"nextIdString", next_id_string, true, none)?;
    install(env, exports, c"nextIds", next_ids, true, none)?;
    remember_class(env, exports)
}

/// Keeps a reference to this environment's `Generator` class (as its instance data), for
/// `check_constructed`.
fn remember_class(env: sys::napi_env, exports: sys::napi_value) -> JsResult<()> {
    let mut class = ptr::null_mut();
    let mut reference = ptr::null_mut();
    // SAFETY: exports is live; napi-rs registered the class on it before this hook runs.
    check(unsafe {
        sys::napi_get_named_property(env, exports, c"Generator".as_ptr(), &mut class)
    })?;
    // SAFETY: class is live.
    check(unsafe { sys::napi_create_reference(env, class, 1, &mut reference) })?;
    let data = Box::into_raw(Box::new(reference)).cast::<c_void>();
    // SAFETY: the finalizer frees the box when the environment ends (the reference itself
    // goes with the environment).
    check(unsafe { sys::napi_set_instance_data(env, data, Some(forget_class), ptr::null_mut()) })
}

unsafe extern "C" fn forget_class(_env: sys::napi_env, data: *mut c_void, _hint: *mut c_void) {
    // SAFETY: `data` is the box of `remember_class`, freed once, here.
    drop(unsafe { Box::from_raw(data.cast::<sys::napi_ref>()) });
}

/// Refuses `Generator()` called without `new`: napi-rs's constructor would otherwise wrap
/// whatever `this` is (for `flakery.Generator()`, the module's exports).
pub(crate) fn check_constructed(env: sys::napi_env, this: sys::napi_value) -> JsResult<()> {
    let mut data = ptr::null_mut();
    // SAFETY: env is live; data is the box of `remember_class` or null.
    check(unsafe { sys::napi_get_instance_data(env, &mut data) })?;
    let mut is_instance = false;
    if !data.is_null() {
        let mut class = ptr::null_mut();
        // SAFETY: the box holds a live reference to the class.
        check(unsafe {
            sys::napi_get_reference_value(env, *data.cast::<sys::napi_ref>(), &mut class)
        })?;
        // SAFETY: both handles are live; a primitive `this` is simply not an instance.
        check(unsafe { sys::napi_instanceof(env, this, class, &mut is_instance) })?;
    }
    if is_instance {
        Ok(())
    } else {
        Err(type_error(
            env,
            "Class constructor Generator cannot be invoked without 'new'".to_string(),
        ))
    }
}

/// Gives a new `Generator` object its own `nextId`, `nextIdString` and `nextIds`, each a
/// function bound to the generator (`bind_arc_methods`).
pub(crate) fn bind_methods(
    env: sys::napi_env,
    this: sys::napi_value,
    generator: &Arc<flakery::Generator>,
) -> JsResult<()> {
    bind_arc_methods(
        env,
        this,
        generator,
        [
            (c"nextId", generator_next_id),
            (c"nextIdString", generator_next_id_string),
            (c"nextIds", generator_next_ids),
        ],
    )
}

/// Gives a new object (a `Generator`, a `Client`) its own hot calls, each a function bound to
/// `target` (holding an `Arc` of it, dropped when the function is collected). A call then
/// finds its target with the one `napi_get_cb_info` it makes anyway, instead of two
/// private-property lookups (`napi_unwrap` and a type-tag check).
pub(crate) fn bind_arc_methods<T: Send + Sync + 'static, const N: usize>(
    env: sys::napi_env,
    this: sys::napi_value,
    target: &Arc<T>,
    methods: [(&CStr, Callback); N],
) -> JsResult<()> {
    for (name, callback) in methods {
        let data = Arc::into_raw(Arc::clone(target))
            .cast_mut()
            .cast::<c_void>();
        let function = match install(env, this, name, callback, false, data) {
            Ok(function) => function,
            Err(error) => {
                // SAFETY: the function was not made or not attached: nothing else holds data.
                unsafe { release::<T>(env, data, ptr::null_mut()) };
                return Err(error);
            }
        };
        // SAFETY: function is live; the finalizer runs once, when it is collected.
        let status = unsafe {
            sys::napi_add_finalizer(
                env,
                function,
                data,
                Some(release::<T>),
                ptr::null_mut(),
                ptr::null_mut(),
            )
        };
        if status != sys::Status::napi_ok {
            // The function stays attached but its data would never be freed: free it now is
            // not safe (the function may be called), so leak it; this is an allocation
            // failure in Node, and the error says so.
            check(status)?;
        }
    }
    Ok(())
}

/// The finalizer of a bound function: drops its `Arc`.
unsafe extern "C" fn release<T>(_env: sys::napi_env, data: *mut c_void, _hint: *mut c_void) {
    // SAFETY: `data` is the `Arc::into_raw` of `bind_arc_methods`, released once, here.
    let target = unsafe { Arc::from_raw(data.cast::<T>().cast_const()) };
    // Dropping the last reference closes a generator or stops a client, which never waits;
    // no panic may unwind into Node.
    let _ = catch_unwind(AssertUnwindSafe(|| drop(target)));
}

/// Runs once per module instance (the main thread and each worker thread).
#[napi(module_exports)]
pub fn install_fast_calls(exports: Object, env: Env) -> napi::Result<()> {
    install_all(env.raw(), exports.raw()).map_err(|e: Fail| {
        napi::Error::new(
            napi::Status::GenericFailure,
            format!("flakery: {}", e.reason),
        )
    })
}
