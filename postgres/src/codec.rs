//! The functions of IDs that need no node: decode, compose, the text forms, the layouts. Each
//! depends only on its arguments (IMMUTABLE, PARALLEL SAFE); a layout is named or spelled as
//! everywhere else (`Layout::parse`), and defaults to `twitter`, as in the other bindings.
//!
//! Under an unsigned layout (`discord`) an ID of 2^63 and above is the bigint with the same
//! 64 bits (negative), as in Java: `decode` and `compose` read and write it that way.

use pgrx::prelude::*;
use pgrx::JsonB;

use crate::errors::OrRaise;
use flakery::{Layout, Parts};

/// Microseconds from the Unix epoch to PostgreSQL's (2000-01-01).
const PG_EPOCH_UNIX_US: i64 = 946_684_800_000_000;

pub fn layout(spec: &str) -> Layout {
    Layout::parse(spec).or_raise()
}

extension_sql!(
    r#"
CREATE TYPE decoded AS (
    id bigint,
    "time" timestamptz,
    timestamp_ms bigint,
    datacenter_id bigint,
    worker_id bigint,
    sequence bigint,
    fields jsonb
);
COMMENT ON TYPE decoded IS 'An ID taken apart: fields holds every field of the layout by name, raw (the time field in ticks since the epoch)';
"#,
    name = "decoded_type",
    bootstrap
);

/// An ID taken apart under `layout`.
#[pg_extern(immutable, strict, parallel_safe)]
fn decode(
    id: i64,
    layout: default!(&str, "'twitter'"),
) -> pgrx::composite_type!('static, "flakery.decoded") {
    let layout = self::layout(layout);
    let decoded = if layout.is_unsigned() {
        flakery::decode_u64(id as u64, &layout)
    } else {
        flakery::decode(id, &layout)
    }
    .or_raise();
    let fields: serde_json::Map<String, serde_json::Value> = decoded
        .fields
        .iter()
        .map(|(name, value)| (name.clone(), (*value).into()))
        .collect();
    let time = TimestampWithTimeZone::try_from(
        decoded
            .timestamp_ms
            .saturating_mul(1000)
            .saturating_sub(PG_EPOCH_UNIX_US),
    )
    .unwrap_or_else(|_| {
        crate::errors::raise(flakery::Error::invalid_argument(format!(
            "ID {id} decodes to {} ms since the Unix epoch, which timestamptz cannot hold",
            decoded.timestamp_ms
        )))
    });
    let mut row = PgHeapTuple::new_composite_type("flakery.decoded")
        .unwrap_or_else(|e| pgrx::error!("flakery.decoded: {e}"));
    let set = |row: &mut PgHeapTuple<'_, AllocatedByRust>, name, value: i64| {
        row.set_by_name(name, value)
            .unwrap_or_else(|e| pgrx::error!("flakery.decoded.{name}: {e}"))
    };
    set(&mut row, "id", decoded.id as i64);
    set(&mut row, "timestamp_ms", decoded.timestamp_ms);
    set(&mut row, "datacenter_id", decoded.datacenter_id as i64);
    set(&mut row, "worker_id", decoded.worker_id as i64);
    set(&mut row, "sequence", decoded.sequence as i64);
    row.set_by_name("time", time)
        .unwrap_or_else(|e| pgrx::error!("flakery.decoded.time: {e}"));
    row.set_by_name("fields", JsonB(serde_json::Value::Object(fields)))
        .unwrap_or_else(|e| pgrx::error!("flakery.decoded.fields: {e}"));
    row
}

/// The ID `decode` would take apart into these values; the time is rounded down to the
/// layout's tick. `fields` gives constant fields by name (`{"version": 1}`).
#[pg_extern(immutable, strict, parallel_safe)]
fn compose(
    time: TimestampWithTimeZone,
    datacenter_id: default!(i64, 0),
    worker_id: default!(i64, 0),
    sequence: default!(i64, 0),
    layout: default!(&str, "'twitter'"),
    fields: default!(JsonB, "'{}'"),
) -> i64 {
    let layout = self::layout(layout);
    let unsigned = |option: &'static str, value: i64| {
        u64::try_from(value)
            .map_err(|_| flakery::out_of_range(&layout, option, &value.to_string()))
            .or_raise()
    };
    let pg_us: i64 = time.into();
    let parts = Parts {
        timestamp_ms: pg_us.saturating_add(PG_EPOCH_UNIX_US).div_euclid(1000),
        datacenter_id: unsigned("datacenter_id", datacenter_id),
        worker_id: unsigned("worker_id", worker_id),
        sequence: unsigned("sequence", sequence),
        fields: constant_fields(&fields.0),
    };
    if layout.is_unsigned() {
        flakery::compose_u64(&parts, &layout).or_raise() as i64
    } else {
        flakery::compose(&parts, &layout).or_raise()
    }
}

fn constant_fields(fields: &serde_json::Value) -> Vec<(String, u64)> {
    let bad = |why: String| crate::errors::raise(flakery::Error::invalid_argument(why));
    let Some(object) = fields.as_object() else {
        bad(format!(
            "fields must be a JSON object of field names and non-negative integers, not {fields}"
        ))
    };
    object
        .iter()
        .map(|(name, value)| match value.as_u64() {
            Some(value) => (name.clone(), value),
            None => bad(format!(
                "field {name}: {value} is not a non-negative integer"
            )),
        })
        .collect()
}

/// The ID as 13 characters of Crockford's base 32, which sort as the IDs do.
#[pg_extern(immutable, strict, parallel_safe)]
fn to_base32(id: i64) -> String {
    flakery::text::to_base32(id).or_raise()
}

#[pg_extern(immutable, strict, parallel_safe)]
fn from_base32(text: &str) -> i64 {
    flakery::text::from_base32(text).or_raise()
}

/// The ID as 11 characters of base 62, which sort as the IDs do.
#[pg_extern(immutable, strict, parallel_safe)]
fn to_base62(id: i64) -> String {
    flakery::text::to_base62(id).or_raise()
}

#[pg_extern(immutable, strict, parallel_safe)]
fn from_base62(text: &str) -> i64 {
    flakery::text::from_base62(text).or_raise()
}

/// The preset layouts by name, with the spec string each stands for.
#[pg_extern(immutable, parallel_safe)]
fn layouts() -> TableIterator<'static, (name!(name, String), name!(spec, String))> {
    TableIterator::new(
        flakery::layout::PRESETS
            .iter()
            .map(|(name, spec)| (name.to_string(), spec.to_string())),
    )
}
