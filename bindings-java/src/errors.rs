//! The boundary of every native method: a panic is caught, a core error becomes a
//! `dev.flakery.FlakeryException` with the core's stable code (docs/spec.md#errors), and the
//! method returns a placeholder value that Java never sees (an exception is pending).

use std::panic::{catch_unwind, AssertUnwindSafe};

use flakery::{Error, Surface};
use jni::objects::{JObject, JString, JValue};
use jni::JNIEnv;

const EXCEPTION: &str = "dev/flakery/FlakeryException";

/// The code of a panic caught at the boundary: a bug of flakery, never the caller's input.
const PANIC: &str = "panic";

/// Why a native method did not return a value.
pub enum Failure {
    /// An error of the core, or of the caller's arguments.
    Core(Error),
    /// A JNI call failed; when it left a Java exception pending (an `OutOfMemoryError`), that
    /// exception is what Java sees.
    Jni(jni::errors::Error),
}

impl From<Error> for Failure {
    fn from(error: Error) -> Self {
        Failure::Core(error)
    }
}

impl From<jni::errors::Error> for Failure {
    fn from(error: jni::errors::Error) -> Self {
        Failure::Jni(error)
    }
}

pub type Result<T> = std::result::Result<T, Failure>;

/// Runs `body`; on an error or a panic throws a `FlakeryException` and returns `fallback`.
pub fn guard<'local, T>(
    env: &mut JNIEnv<'local>,
    fallback: T,
    body: impl FnOnce(&mut JNIEnv<'local>) -> Result<T>,
) -> T {
    let failure = match catch_unwind(AssertUnwindSafe(|| body(env))) {
        Ok(Ok(value)) => return value,
        Ok(Err(failure)) => failure,
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic".to_string());
            throw(
                env,
                PANIC,
                &format!("flakery panicked (a bug; please report it): {what}"),
            );
            return fallback;
        }
    };
    match failure {
        // Java names options as JavaScript does (`workerId`): the table's camelCase names.
        Failure::Core(error) => throw(
            env,
            error.code().as_str(),
            &flakery::option_table::message_on(&error, Surface::Node),
        ),
        Failure::Jni(error) => {
            if !env.exception_check().unwrap_or(true) {
                throw(env, "invalid_argument", &error.to_string());
            }
        }
    }
    fallback
}

/// Throws `FlakeryException(code, message)`; if even that fails, whatever exception the JVM
/// has pending (an `OutOfMemoryError`) stays pending.
fn throw(env: &mut JNIEnv<'_>, code: &str, message: &str) {
    let thrown = (|| -> jni::errors::Result<()> {
        let code = env.new_string(code)?;
        let message = env.new_string(message)?;
        let exception = env.new_object(
            EXCEPTION,
            "(Ljava/lang/String;Ljava/lang/String;)V",
            &[JValue::Object(&code), JValue::Object(&message)],
        )?;
        env.throw(jni::objects::JThrowable::from(exception))
    })();
    if thrown.is_err() && !env.exception_check().unwrap_or(true) {
        let _ = env.throw_new("java/lang/IllegalStateException", message);
    }
}

/// A `String` argument; `null` is refused as `invalid_argument` naming `name`.
pub fn string(env: &mut JNIEnv<'_>, text: &JString<'_>, name: &str) -> Result<String> {
    if text.is_null() {
        return Err(Error::invalid_argument(format!("{name} is null")).into());
    }
    Ok(env.get_string(text)?.into())
}

/// The elements of a `String[]` (no element may be null).
pub fn strings(
    env: &mut JNIEnv<'_>,
    array: &jni::objects::JObjectArray<'_>,
    name: &str,
) -> Result<Vec<String>> {
    if array.is_null() {
        return Err(Error::invalid_argument(format!("{name} is null")).into());
    }
    let len = env.get_array_length(array)?;
    let mut out = Vec::with_capacity(len as usize);
    for i in 0..len {
        let element = JString::from(env.get_object_array_element(array, i)?);
        out.push(string(env, &element, &format!("{name}[{i}]"))?);
        env.delete_local_ref(element)?;
    }
    Ok(out)
}

/// The elements of a `long[]`.
pub fn longs(
    env: &mut JNIEnv<'_>,
    array: &jni::objects::JLongArray<'_>,
    name: &str,
) -> Result<Vec<i64>> {
    if array.is_null() {
        return Err(Error::invalid_argument(format!("{name} is null")).into());
    }
    let len = env.get_array_length(array)?;
    let mut out = vec![0; len as usize];
    env.get_long_array_region(array, 0, &mut out)?;
    Ok(out)
}

/// A Java `String[]` of `items`.
pub fn string_array<'local>(
    env: &mut JNIEnv<'local>,
    items: impl ExactSizeIterator<Item = String>,
) -> Result<jni::objects::JObjectArray<'local>> {
    let array = env.new_object_array(items.len() as i32, "java/lang/String", JObject::null())?;
    for (i, item) in items.enumerate() {
        let item = env.new_string(item)?;
        env.set_object_array_element(&array, i as i32, &item)?;
        env.delete_local_ref(item)?;
    }
    Ok(array)
}

/// A Java `long[]` of `items`.
pub fn long_array<'local>(
    env: &mut JNIEnv<'local>,
    items: &[i64],
) -> Result<jni::objects::JLongArray<'local>> {
    let array = env.new_long_array(items.len() as i32)?;
    env.set_long_array_region(&array, 0, items)?;
    Ok(array)
}
