//! The Java builder's options into the core's `Options`. The builder sends each option it was
//! given as its name in the core's options table (core/src/option_table/; Java spells them
//! as the table's camelCase `js` names: `workerId`) and its value as text; the table says
//! what kind of value each is, and the core's parsers read it. Constant fields come apart,
//! as names and values.

use std::path::PathBuf;

use flakery::option_table::{parse_flag, Kind, OptionSpec, OPTIONS};
use flakery::{DatabaseMode, DatabaseUrl, Error, Layout, Options, Surface};

/// The core's options from the arrays of a native method that takes a builder's options
/// (`generatorNew`, `doctorJson`).
pub fn from_java(
    env: &mut jni::JNIEnv<'_>,
    names: &jni::objects::JObjectArray<'_>,
    values: &jni::objects::JObjectArray<'_>,
    field_names: &jni::objects::JObjectArray<'_>,
    field_values: &jni::objects::JLongArray<'_>,
) -> crate::errors::Result<Options> {
    use crate::errors::{longs, strings};
    let names = strings(env, names, "option names")?;
    let values = strings(env, values, "option values")?;
    let field_names = strings(env, field_names, "field names")?;
    let field_values = longs(env, field_values, "field values")?;
    let fields = self::fields(field_names, &field_values)?;
    Ok(read(&names, &values, fields)?)
}

/// The core's options from the builder's `names[i] = values[i]` and its constant fields.
pub fn read(
    names: &[String],
    values: &[String],
    fields: Vec<(String, u64)>,
) -> Result<Options, Error> {
    if names.len() != values.len() {
        return Err(Error::invalid_argument(format!(
            "{} option names but {} values",
            names.len(),
            values.len()
        )));
    }
    let mut options = Options {
        fields,
        ..Options::default()
    };
    for (name, text) in names.iter().zip(values) {
        let spec = OPTIONS
            .iter()
            .find(|o| o.js == name)
            .ok_or_else(|| Error::invalid_argument(format!("there is no option '{name}'")))?;
        set(&mut options, spec, text)?;
    }
    Ok(options)
}

fn set(options: &mut Options, spec: &OptionSpec, text: &str) -> Result<(), Error> {
    match spec.kind {
        Kind::Layout => options.layout = Some(Layout::parse(text)?),
        Kind::NodeField | Kind::Millis | Kind::OptionalMillis => {
            let value = spec.parse_u64(Surface::Node, text)?;
            match spec.rust {
                "datacenter_id" => options.datacenter_id = Some(value),
                "worker_id" => options.worker_id = Some(value),
                "max_borrow_ms" => options.max_borrow_ms = value,
                "backwards_tolerance_ms" => options.backwards_tolerance_ms = value,
                "session_timeout_ms" => options.session_timeout_ms = Some(value),
                _ => return Err(unknown(spec)),
            }
        }
        Kind::SequencePolicy => options.sequence_policy = text.parse()?,
        Kind::Flag => options.random_sequence_start = parse_flag(spec.js, text)?,
        Kind::Text => match spec.rust {
            "zookeeper" => options.zookeeper = Some(text.to_string()),
            "namespace" => options.namespace = Some(text.to_string()),
            _ => return Err(unknown(spec)),
        },
        Kind::Path => options.lease_dir = Some(PathBuf::from(text)),
        Kind::DatabaseUrl => options.database_url = Some(DatabaseUrl::parse(text)?),
        Kind::DatabaseMode => options.database_mode = Some(text.parse::<DatabaseMode>()?),
        // Fields come as names and values (`read`'s `fields`), never as text.
        Kind::Fields => return Err(unknown(spec)),
    }
    Ok(())
}

/// An option of the table this binding cannot set (a new one): a test of the Java package
/// sets every option of the table, so this shows there first.
fn unknown(spec: &OptionSpec) -> Error {
    Error::invalid_argument(format!(
        "option '{}' is not supported by this build of flakery's Java package",
        spec.js
    ))
}

/// Constant fields from the builder: values are unsigned, so a negative `long` is refused.
pub fn fields(names: Vec<String>, values: &[i64]) -> Result<Vec<(String, u64)>, Error> {
    if names.len() != values.len() {
        return Err(Error::invalid_argument(format!(
            "{} field names but {} values",
            names.len(),
            values.len()
        )));
    }
    names
        .into_iter()
        .zip(values)
        .map(|(name, &value)| {
            let value = u64::try_from(value).map_err(|_| {
                Error::invalid_argument(format!(
                    "field '{name}' is {value}; a field's value is from 0 to 2^63-1"
                ))
            })?;
            Ok((name, value))
        })
        .collect()
}
