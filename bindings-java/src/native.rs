//! The native methods of `dev.flakery.Native`, one `extern "system" fn` each (the names are
//! JNI's: `Java_<class>_<method>`).

use flakery::{Error, Generator, Layout, Parts};
use jni::objects::{JClass, JLongArray, JObjectArray, JString};
use jni::sys::{jboolean, jint, jlong, jlongArray, jobjectArray, jstring, JNI_FALSE};
use jni::JNIEnv;

use crate::errors::{guard, long_array, longs, string, string_array, strings};
use crate::options;

/// How many IDs `nextIds` makes per call of the core before copying them into the Java array:
/// the array is allocated by the JVM (which refuses a size it cannot hold with its own
/// `OutOfMemoryError`), never a second copy of it in native memory.
const CHUNK: usize = 4096;

/// # Safety
/// `handle` came from `generatorNew` and is not freed: Java frees it only when the
/// `Generator` is unreachable, and keeps it reachable across every native call.
unsafe fn generator<'a>(handle: jlong) -> &'a Generator {
    // SAFETY: as the caller promises.
    unsafe { &*(handle as *const Generator) }
}

/// # Safety
/// `handle` came from `layoutNew` or `generatorLayout` and is not freed (as `generator`).
unsafe fn layout<'a>(handle: jlong) -> &'a Layout {
    // SAFETY: as the caller promises.
    unsafe { &*(handle as *const Layout) }
}

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
        Ok(env.new_string(env!("CARGO_PKG_VERSION"))?.into_raw())
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
        let names = strings(env, &names, "option names")?;
        let values = strings(env, &values, "option values")?;
        let field_names = strings(env, &field_names, "field names")?;
        let field_values = longs(env, &field_values, "field values")?;
        let fields = options::fields(field_names, &field_values)?;
        let options = options::read(&names, &values, fields)?;
        let generator = Generator::new(options)?;
        Ok(Box::into_raw(Box::new(generator)) as jlong)
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_flakery_Native_generatorFree(
    mut env: JNIEnv,
    _: JClass,
    handle: jlong,
) {
    guard(&mut env, (), |_| {
        if handle != 0 {
            // SAFETY: Java's Cleaner calls this once, when the generator is unreachable.
            drop(unsafe { Box::from_raw(handle as *mut Generator) });
        }
        Ok(())
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_flakery_Native_generatorClose(
    mut env: JNIEnv,
    _: JClass,
    handle: jlong,
) {
    guard(&mut env, (), |_| {
        // SAFETY: see `generator`.
        unsafe { generator(handle) }.close();
        Ok(())
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_flakery_Native_nextId(
    mut env: JNIEnv,
    _: JClass,
    handle: jlong,
) -> jlong {
    // SAFETY: see `generator`.
    let generator = unsafe { generator(handle) };
    guard(&mut env, 0, |_| Ok(generator.next_id()?))
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

#[no_mangle]
pub extern "system" fn Java_dev_flakery_Native_nextIds(
    mut env: JNIEnv,
    _: JClass,
    handle: jlong,
    n: jint,
) -> jlongArray {
    guard(&mut env, std::ptr::null_mut(), |env| {
        let generator = if handle == 0 {
            flakery::default_generator()?
        } else {
            // SAFETY: see `generator`.
            unsafe { generator(handle) }
        };
        if n < 0 {
            return Err(Error::invalid_argument(format!(
                "n must be a non-negative integer, not {n}"
            ))
            .into());
        }
        let array = env.new_long_array(n)?;
        let mut chunk = vec![0i64; CHUNK.min(n as usize)];
        let mut done = 0usize;
        while done < n as usize {
            let take = CHUNK.min(n as usize - done);
            generator.fill(&mut chunk[..take])?;
            env.set_long_array_region(&array, done as i32, &chunk[..take])?;
            done += take;
        }
        Ok(array.into_raw())
    })
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
    guard(&mut env, std::ptr::null_mut(), |env| {
        // SAFETY: see `generator`.
        let generator = unsafe { generator(handle) };
        let node = [
            generator.datacenter_id() as i64,
            generator.worker_id() as i64,
        ];
        Ok(long_array(env, &node)?.into_raw())
    })
}

/// The lease's report of itself (`Generator::lease_status`): `[state, canIssue, coordinator]`,
/// the state as the core spells it, `true`/`false`, and `""` for a node ID of no coordinator.
#[no_mangle]
pub extern "system" fn Java_dev_flakery_Native_generatorLeaseStatus(
    mut env: JNIEnv,
    _: JClass,
    handle: jlong,
) -> jobjectArray {
    guard(&mut env, std::ptr::null_mut(), |env| {
        // SAFETY: see `generator`.
        let status = unsafe { generator(handle) }.lease_status();
        let report = [
            status.state().as_str().to_string(),
            status.can_issue().to_string(),
            status.coordinator().unwrap_or("").to_string(),
        ];
        Ok(string_array(env, report.into_iter())?.into_raw())
    })
}

/// A new layout handle with the generator's layout.
#[no_mangle]
pub extern "system" fn Java_dev_flakery_Native_generatorLayout(
    mut env: JNIEnv,
    _: JClass,
    handle: jlong,
) -> jlong {
    guard(&mut env, 0, |_| {
        // SAFETY: see `generator`.
        let layout = unsafe { generator(handle) }.layout().clone();
        Ok(Box::into_raw(Box::new(layout)) as jlong)
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_flakery_Native_layoutNew(
    mut env: JNIEnv,
    _: JClass,
    spec: JString,
) -> jlong {
    guard(&mut env, 0, |env| {
        let spec = string(env, &spec, "spec")?;
        Ok(Box::into_raw(Box::new(Layout::parse(&spec)?)) as jlong)
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_flakery_Native_layoutFree(
    mut env: JNIEnv,
    _: JClass,
    handle: jlong,
) {
    guard(&mut env, (), |_| {
        if handle != 0 {
            // SAFETY: Java's Cleaner calls this once, when the layout is unreachable.
            drop(unsafe { Box::from_raw(handle as *mut Layout) });
        }
        Ok(())
    })
}

/// The layout's spec, as the core writes it (a preset's name where it is one).
#[no_mangle]
pub extern "system" fn Java_dev_flakery_Native_layoutSpec(
    mut env: JNIEnv,
    _: JClass,
    handle: jlong,
) -> jstring {
    guard(&mut env, std::ptr::null_mut(), |env| {
        // SAFETY: see `layout`.
        let spec = unsafe { layout(handle) }.to_string();
        Ok(env.new_string(spec)?.into_raw())
    })
}

/// The layout's fields in order: `[name, kind]` pairs, flattened.
#[no_mangle]
pub extern "system" fn Java_dev_flakery_Native_layoutFieldTexts(
    mut env: JNIEnv,
    _: JClass,
    handle: jlong,
) -> jobjectArray {
    guard(&mut env, std::ptr::null_mut(), |env| {
        // SAFETY: see `layout`.
        let fields = unsafe { layout(handle) }.fields();
        let texts: Vec<String> = fields
            .iter()
            .flat_map(|f| [f.name.clone(), f.kind.as_str().to_string()])
            .collect();
        Ok(string_array(env, texts.into_iter())?.into_raw())
    })
}

/// The layout's fields in order: `[shift, bits, default]` triples, flattened, then the epoch
/// (Unix ms), the unit (ms) and whether its IDs are unsigned (1 or 0).
#[no_mangle]
pub extern "system" fn Java_dev_flakery_Native_layoutNumbers(
    mut env: JNIEnv,
    _: JClass,
    handle: jlong,
) -> jlongArray {
    guard(&mut env, std::ptr::null_mut(), |env| {
        // SAFETY: see `layout`.
        let layout = unsafe { layout(handle) };
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
    })
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
    guard(&mut env, std::ptr::null_mut(), |env| {
        // SAFETY: see `layout`.
        let decoded = flakery::decode_u64(id as u64, unsafe { layout(handle) })?;
        let mut out = vec![
            decoded.id as i64,
            decoded.timestamp_ms,
            decoded.datacenter_id as i64,
            decoded.worker_id as i64,
            decoded.sequence as i64,
        ];
        out.extend(decoded.fields.iter().map(|(_, value)| *value as i64));
        Ok(long_array(env, &out)?.into_raw())
    })
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
    guard(&mut env, 0, |env| {
        // SAFETY: see `layout`.
        let layout = unsafe { layout(handle) };
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
    })
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
        Ok(env.new_string(text)?.into_raw())
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
