//! The native methods of `dev.flakery.Native`, one `extern "system" fn` each (the names are
//! JNI's: `Java_<class>_<method>`). Generators and layouts are handles (handles.rs).

use flakery::{Error, Generator, Layout, Parts};
use jni::objects::{JClass, JLongArray, JObjectArray, JString};
use jni::sys::{jboolean, jint, jlong, jlongArray, jobjectArray, jstring, JNI_FALSE};
use jni::JNIEnv;

use crate::errors::{guard, long_array, longs, string, string_array, strings};
use crate::handles::{self, fill_ids, java_string, with};
use crate::options;

/// A compose part that is unsigned in the core; a negative `long` is refused, naming the
/// part as Java spells it.
fn unsigned(value: jlong, name: &'static str) -> Result<u64, Error> {
    u64::try_from(value)
        .map_err(|_| Error::invalid_argument(format!("{name} {value} is negative")).about(name))
}

/// Called once when the library is loaded: installs every coordinator (ZooKeeper and the
/// databases), as every binding does, before any generator is made.
#[no_mangle]
pub extern "system" fn Java_dev_flakery_Native_init(mut env: JNIEnv, _: JClass) {
    guard(&mut env, (), |_| {
        flakery_coordinators::install();
        Ok(())
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_flakery_Native_version(mut env: JNIEnv, _: JClass) -> jstring {
    guard(&mut env, std::ptr::null_mut(), |env| {
        java_string(env, env!("CARGO_PKG_VERSION"))
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_flakery_Native_generatorNew(
    mut env: JNIEnv,
    _: JClass,
    names: JObjectArray,
    values: JObjectArray,
    field_names: JObjectArray,
    field_values: JLongArray,
) -> jlong {
    guard(&mut env, 0, |env| {
        let options = options::from_java(env, &names, &values, &field_names, &field_values)?;
        Ok(handles::new(Generator::new(options)?))
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_flakery_Native_generatorFree(
    mut env: JNIEnv,
    _: JClass,
    handle: jlong,
) {
    // SAFETY: a generator's handle, released once by its Java owner's Cleaner.
    unsafe { handles::release::<Generator>(&mut env, handle) }
}

#[no_mangle]
pub extern "system" fn Java_dev_flakery_Native_generatorClose(
    mut env: JNIEnv,
    _: JClass,
    handle: jlong,
) {
    // SAFETY: a generator's handle (handles.rs).
    unsafe {
        with(&mut env, handle, (), |_, g: &Generator| {
            g.close();
            Ok(())
        })
    }
}

#[no_mangle]
pub extern "system" fn Java_dev_flakery_Native_nextId(
    env: JNIEnv,
    _: JClass,
    handle: jlong,
) -> jlong {
    // The hot path first, as FFM's downcall runs it, in a function of its own size: the whole
    // `next_id` answers a `Result` as large as the core's `Error` through memory, and in the
    // same function its register saves and stack frame were paid on every call (about 1 ns of
    // Java 17's 13.7: bench/java).
    let id = crate::ffm::flakery_java_next_id_fast(handle);
    if id >= 0 {
        return id;
    }
    next_id_slow(env, handle)
}

/// The core's hot path alone, as FFM's downcall runs it: an ID, or -1 (never throws). Java
/// 17 to 21 call this first from `nextId()`; under `-XX:+CriticalJNINatives` HotSpot's
/// compiled code calls `JavaCritical_dev_flakery_Native_nextIdFast` instead, without the
/// JNI environment and the thread-state switch (docs/java.md).
#[no_mangle]
pub extern "system" fn Java_dev_flakery_Native_nextIdFast(
    _: JNIEnv,
    _: JClass,
    handle: jlong,
) -> jlong {
    crate::ffm::flakery_java_next_id_fast(handle)
}

/// `nextIdFast` as a critical native (primitive arguments only, no env, no class). A critical
/// native holds back safepoints while it runs: the hot path never blocks, allocates, waits or
/// calls back into Java (ffm.rs), as FFM's critical downcall needs too.
#[no_mangle]
pub extern "system" fn JavaCritical_dev_flakery_Native_nextIdFast(handle: jlong) -> jlong {
    crate::ffm::flakery_java_next_id_fast(handle)
}

/// `nextId` when the hot path has no ID: the core's whole `next_id`, which waits, or throws
/// its error; one path for JNI and FFM alike.
#[cold]
#[inline(never)]
fn next_id_slow(mut env: JNIEnv, handle: jlong) -> jlong {
    // SAFETY: a generator's handle (handles.rs).
    unsafe { with(&mut env, handle, 0, |_, g: &Generator| Ok(g.next_id()?)) }
}

/// A benchmark's baseline, not an API: the bare cost of a JNI call of `nextId`'s shape (a
/// static native method taking a `long`, returning a `long`) to a function that does nothing
/// but return a constant. bench/java sets `nextId()` beside it (docs/benchmarks.md).
#[no_mangle]
pub extern "system" fn Java_dev_flakery_Native_benchmarkBaselineConstant(
    _: JNIEnv,
    _: JClass,
    _handle: jlong,
) -> jlong {
    42
}

/// A benchmark's measure, not an API: `n` IDs by the steps of Java's `nextId` (the hot path
/// the FFM downcall runs, else the whole call) in a loop in native code, so that bench/java
/// can set the core's own cost per ID beside the cost of one call from Java. Answers the last
/// ID, or -1.
#[no_mangle]
pub extern "system" fn Java_dev_flakery_Native_benchmarkCoreLoop(
    _: JNIEnv,
    _: JClass,
    handle: jlong,
    n: jint,
) -> jlong {
    // SAFETY: a generator's handle (handles.rs).
    let generator = unsafe { handles::get::<Generator>(handle) };
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut last = -1;
        for _ in 0..n {
            // As Java's path: the hot path, else the whole call (which also takes the clock
            // thread's new reading; without it every later hot-path call would fail).
            let id = generator
                .try_next_id_fast()
                .or_else(|| generator.next_id().ok());
            last = std::hint::black_box(id.unwrap_or(-1));
        }
        last
    }))
    .unwrap_or(-1)
}

/// `n` IDs of the generator behind `handle`, or of the process-wide generator for 0.
#[no_mangle]
pub extern "system" fn Java_dev_flakery_Native_nextIds(
    mut env: JNIEnv,
    _: JClass,
    handle: jlong,
    n: jint,
) -> jlongArray {
    let ids = |env: &mut JNIEnv, generator: &Generator| {
        fill_ids(env, n, |_| |chunk: &mut [i64]| generator.fill(chunk))
    };
    if handle == 0 {
        return guard(&mut env, std::ptr::null_mut(), |env| {
            ids(env, flakery::default_generator()?)
        });
    }
    // SAFETY: a generator's handle (handles.rs).
    unsafe { with(&mut env, handle, std::ptr::null_mut(), ids) }
}

#[no_mangle]
pub extern "system" fn Java_dev_flakery_Native_defaultNextId(mut env: JNIEnv, _: JClass) -> jlong {
    guard(&mut env, 0, |_| Ok(flakery::next_id()?))
}

/// The generator's node: `[datacenterId, workerId]`.
#[no_mangle]
pub extern "system" fn Java_dev_flakery_Native_generatorNode(
    mut env: JNIEnv,
    _: JClass,
    handle: jlong,
) -> jlongArray {
    let node = |env: &mut JNIEnv, g: &Generator| {
        Ok(long_array(env, &[g.datacenter_id() as i64, g.worker_id() as i64])?.into_raw())
    };
    // SAFETY: a generator's handle (handles.rs).
    unsafe { with(&mut env, handle, std::ptr::null_mut(), node) }
}

/// The lease's report of itself (`Generator::lease_status`): `[state, canIssue, coordinator]`,
/// the state as the core spells it, `true`/`false`, and `""` for a node ID of no coordinator.
#[no_mangle]
pub extern "system" fn Java_dev_flakery_Native_generatorLeaseStatus(
    mut env: JNIEnv,
    _: JClass,
    handle: jlong,
) -> jobjectArray {
    let report = |env: &mut JNIEnv, g: &Generator| {
        let status = g.lease_status();
        let report = [
            status.state().as_str().to_string(),
            status.can_issue().to_string(),
            status.coordinator().unwrap_or("").to_string(),
        ];
        Ok(string_array(env, report.into_iter())?.into_raw())
    };
    // SAFETY: a generator's handle (handles.rs).
    unsafe { with(&mut env, handle, std::ptr::null_mut(), report) }
}

/// A new layout handle with the generator's layout.
#[no_mangle]
pub extern "system" fn Java_dev_flakery_Native_generatorLayout(
    mut env: JNIEnv,
    _: JClass,
    handle: jlong,
) -> jlong {
    // SAFETY: a generator's handle (handles.rs).
    unsafe { handles::layout_of::<Generator>(&mut env, handle, Generator::layout) }
}

#[no_mangle]
pub extern "system" fn Java_dev_flakery_Native_layoutNew(
    mut env: JNIEnv,
    _: JClass,
    spec: JString,
) -> jlong {
    guard(&mut env, 0, |env| {
        let spec = string(env, &spec, "spec")?;
        Ok(handles::new(Layout::parse(&spec)?))
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_flakery_Native_layoutFree(
    mut env: JNIEnv,
    _: JClass,
    handle: jlong,
) {
    // SAFETY: a layout's handle, released once by its Java owner's Cleaner.
    unsafe { handles::release::<Layout>(&mut env, handle) }
}

/// The layout's spec, as the core writes it (a preset's name where it is one).
#[no_mangle]
pub extern "system" fn Java_dev_flakery_Native_layoutSpec(
    mut env: JNIEnv,
    _: JClass,
    handle: jlong,
) -> jstring {
    // SAFETY: a layout's handle (handles.rs).
    unsafe {
        with(&mut env, handle, std::ptr::null_mut(), |env, l: &Layout| {
            java_string(env, l.to_string())
        })
    }
}

/// The layout's fields in order: `[name, kind]` pairs, flattened.
#[no_mangle]
pub extern "system" fn Java_dev_flakery_Native_layoutFieldTexts(
    mut env: JNIEnv,
    _: JClass,
    handle: jlong,
) -> jobjectArray {
    let texts = |env: &mut JNIEnv, layout: &Layout| {
        let texts: Vec<String> = layout
            .fields()
            .iter()
            .flat_map(|f| [f.name.clone(), f.kind.as_str().to_string()])
            .collect();
        Ok(string_array(env, texts.into_iter())?.into_raw())
    };
    // SAFETY: a layout's handle (handles.rs).
    unsafe { with(&mut env, handle, std::ptr::null_mut(), texts) }
}

/// The layout's fields in order: `[shift, bits, default]` triples, flattened, then the epoch
/// (Unix ms), the unit (ms) and whether its IDs are unsigned (1 or 0).
#[no_mangle]
pub extern "system" fn Java_dev_flakery_Native_layoutNumbers(
    mut env: JNIEnv,
    _: JClass,
    handle: jlong,
) -> jlongArray {
    let numbers = |env: &mut JNIEnv, layout: &Layout| {
        let mut numbers: Vec<i64> = layout
            .fields()
            .iter()
            .flat_map(|f| [f.slot.shift as i64, f.slot.bits as i64, f.default as i64])
            .collect();
        numbers.extend([
            layout.epoch_ms(),
            layout.unit().millis(),
            layout.is_unsigned() as i64,
        ]);
        Ok(long_array(env, &numbers)?.into_raw())
    };
    // SAFETY: a layout's handle (handles.rs).
    unsafe { with(&mut env, handle, std::ptr::null_mut(), numbers) }
}

#[no_mangle]
pub extern "system" fn Java_dev_flakery_Native_presetNames(
    mut env: JNIEnv,
    _: JClass,
) -> jobjectArray {
    guard(&mut env, std::ptr::null_mut(), |env| {
        let names = flakery::layout::PRESETS
            .iter()
            .map(|(name, _)| name.to_string());
        Ok(string_array(env, names)?.into_raw())
    })
}

/// `id` taken apart: `[id, timestampMs, datacenterId, workerId, sequence, field...]`, the
/// fields' raw values in layout order. The ID is read as unsigned (2^63 and above only under
/// an unsigned layout such as `discord`).
#[no_mangle]
pub extern "system" fn Java_dev_flakery_Native_decode(
    mut env: JNIEnv,
    _: JClass,
    handle: jlong,
    id: jlong,
) -> jlongArray {
    let decode = |env: &mut JNIEnv, layout: &Layout| {
        let decoded = flakery::decode_u64(id as u64, layout)?;
        let mut out = vec![
            decoded.id as i64,
            decoded.timestamp_ms,
            decoded.datacenter_id as i64,
            decoded.worker_id as i64,
            decoded.sequence as i64,
        ];
        out.extend(decoded.fields.iter().map(|(_, value)| *value as i64));
        Ok(long_array(env, &out)?.into_raw())
    };
    // SAFETY: a layout's handle (handles.rs).
    unsafe { with(&mut env, handle, std::ptr::null_mut(), decode) }
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_dev_flakery_Native_compose(
    mut env: JNIEnv,
    _: JClass,
    handle: jlong,
    timestamp_ms: jlong,
    datacenter_id: jlong,
    worker_id: jlong,
    sequence: jlong,
    field_names: JObjectArray,
    field_values: JLongArray,
) -> jlong {
    let compose = |env: &mut JNIEnv, layout: &Layout| {
        let field_names = strings(env, &field_names, "field names")?;
        let field_values = longs(env, &field_values, "field values")?;
        let parts = Parts {
            timestamp_ms,
            datacenter_id: unsigned(datacenter_id, "datacenter_id")?,
            worker_id: unsigned(worker_id, "worker_id")?,
            sequence: unsigned(sequence, "sequence")?,
            fields: options::fields(field_names, &field_values)?,
        };
        Ok(if layout.is_unsigned() {
            flakery::compose_u64(&parts, layout)? as i64
        } else {
            flakery::compose(&parts, layout)?
        })
    };
    // SAFETY: a layout's handle (handles.rs).
    unsafe { with(&mut env, handle, 0, compose) }
}

#[no_mangle]
pub extern "system" fn Java_dev_flakery_Native_toText(
    mut env: JNIEnv,
    _: JClass,
    id: jlong,
    base62: jboolean,
) -> jstring {
    guard(&mut env, std::ptr::null_mut(), |env| {
        let text = if base62 == JNI_FALSE {
            flakery::text::to_base32(id)?
        } else {
            flakery::text::to_base62(id)?
        };
        java_string(env, text)
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_flakery_Native_fromText(
    mut env: JNIEnv,
    _: JClass,
    text: JString,
    base62: jboolean,
) -> jlong {
    guard(&mut env, 0, |env| {
        let text = string(env, &text, "text")?;
        Ok(if base62 == JNI_FALSE {
            flakery::text::from_base32(&text)?
        } else {
            flakery::text::from_base62(&text)?
        })
    })
}

/// The names of every option of the core's table, as Java spells them (`workerId`): a test
/// checks that `Generator.Builder` has a method for each.
#[no_mangle]
pub extern "system" fn Java_dev_flakery_Native_optionNames(
    mut env: JNIEnv,
    _: JClass,
) -> jobjectArray {
    guard(&mut env, std::ptr::null_mut(), |env| {
        let names = flakery::option_table::OPTIONS
            .iter()
            .map(|o| o.js.to_string());
        Ok(string_array(env, names)?.into_raw())
    })
}
