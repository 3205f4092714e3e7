//! `dev.flakery.Native.doctorJson`: the core's budgets report (docs/doctor.md) as JSON text,
//! for `Generator.Builder#doctorJson`. Converts the options only.

use jni::objects::{JClass, JLongArray, JObjectArray};
use jni::sys::jstring;
use jni::JNIEnv;

use crate::errors::guard;
use crate::handles::java_string;
use crate::options;

#[no_mangle]
pub extern "system" fn Java_dev_flakery_Native_doctorJson(
    mut env: JNIEnv,
    _: JClass,
    names: JObjectArray,
    values: JObjectArray,
    field_names: JObjectArray,
    field_values: JLongArray,
) -> jstring {
    guard(&mut env, std::ptr::null_mut(), |env| {
        let options = options::from_java(env, &names, &values, &field_names, &field_values)?;
        let json = flakery::doctor::report_json(options)?;
        java_string(env, json)
    })
}
