//! The objects that `decode`, `compose` and the layout calls return, as `#[napi(object)]`
//! types: napi-rs builds them (this module makes no raw Node-API call) and writes their
//! TypeScript declarations.
//! Only the hot calls (`fast`, `values`) build their results through raw Node-API.

use flakery::{Decoded, Layout};
use napi::bindgen_prelude::{BigInt, Either, Object};
use napi::{Env, JsDate};
use napi_derive::napi;

use crate::errors::{range_error, JsResult, OrNapi};

/// A field value: a `number` when the field is at most 53 bits wide (every value is exact),
/// a `bigint` when it is wider. The type depends on the layout, never on the value.
pub(crate) type FieldValue = Either<f64, BigInt>;

pub(crate) fn field_value(value: u64, bits: u32) -> FieldValue {
    if bits <= 53 {
        Either::A(value as f64)
    } else {
        Either::B(BigInt::from(value))
    }
}

/// The value of the field in `slot` (0 bits wide when the layout has no such field).
fn slot_value(value: u64, slot: Option<flakery::Slot>) -> FieldValue {
    field_value(value, slot.map_or(0, |s| s.bits))
}

/// The largest magnitude of a JavaScript `Date`, in milliseconds.
const MAX_DATE_MS: i64 = 8_640_000_000_000_000;

fn fits_a_date(ms: i64) -> bool {
    (-MAX_DATE_MS..=MAX_DATE_MS).contains(&ms)
}

/// A timestamp as a number, refused where a number or a Date could not hold it exactly.
fn date_ms(env: &Env, ms: i64) -> JsResult<f64> {
    if !fits_a_date(ms) {
        return Err(range_error(
            env.raw(),
            format!("timestamp {ms} ms is beyond what a JavaScript Date can hold"),
        ));
    }
    Ok(ms as f64)
}

fn new_date(env: &Env, ms: i64) -> JsResult<JsDate<'_>> {
    env.create_date(date_ms(env, ms)?).or_napi()
}

/// An ID taken apart by `decode()`.
#[napi(object, object_from_js = false)]
pub struct DecodedId<'env> {
    pub id: BigInt,
    /// Unix milliseconds.
    pub timestamp_ms: f64,
    pub date: JsDate<'env>,
    /// 0 when the layout has no datacenter field. (A bigint if the layout gives the field
    /// more than 53 bits; likewise `workerId` and `sequence`.)
    #[napi(ts_type = "number")]
    pub datacenter_id: FieldValue,
    #[napi(ts_type = "number")]
    pub worker_id: FieldValue,
    #[napi(ts_type = "number")]
    pub sequence: FieldValue,
    /// Every field of the layout by name, constants included, with its raw value (`time` in
    /// ticks since the epoch): a number for fields up to 53 bits wide, else a bigint.
    #[napi(ts_type = "Record<string, number | bigint>")]
    pub fields: Object<'env>,
}

impl<'env> DecodedId<'env> {
    pub(crate) fn new(env: &'env Env, decoded: Decoded, layout: &Layout) -> JsResult<Self> {
        let mut fields = Object::new(env).or_napi()?;
        for ((name, value), field) in decoded.fields.iter().zip(layout.fields()) {
            fields
                .set(name, field_value(*value, field.slot.bits))
                .or_napi()?;
        }
        Ok(DecodedId {
            id: BigInt::from(decoded.id),
            timestamp_ms: date_ms(env, decoded.timestamp_ms)?,
            date: new_date(env, decoded.timestamp_ms)?,
            datacenter_id: slot_value(decoded.datacenter_id, layout.datacenter()),
            worker_id: slot_value(decoded.worker_id, layout.worker()),
            sequence: field_value(decoded.sequence, layout.sequence().bits),
            fields,
        })
    }
}

/// One field of a layout.
#[napi(object, object_from_js = false)]
pub struct LayoutField {
    pub name: String,
    #[napi(ts_type = "'time' | 'datacenter' | 'worker' | 'sequence' | 'constant'")]
    pub kind: &'static str,
    pub bits: u32,
    /// The bit position of the field's lowest bit.
    pub shift: u32,
    /// The value of a constant field unless a generator is given another.
    #[napi(js_name = "default", ts_type = "number | bigint")]
    pub default_value: FieldValue,
}

/// A layout described: `layouts()` and `layoutInfoOf()`.
#[napi(object, object_from_js = false, use_nullable = true)]
pub struct LayoutInfo<'env> {
    /// The preset's name, or null for a layout that is not a preset.
    pub name: Option<String>,
    /// The spec string (the preset's full spec in `layouts()`).
    pub spec: String,
    /// The shortest spec string that reads back as this layout.
    pub canonical: String,
    /// One line: fields, epoch, unit, capacity, when it runs out.
    pub description: String,
    pub fields: Vec<LayoutField>,
    pub total_bits: u32,
    pub epoch_ms: f64,
    pub epoch: JsDate<'env>,
    /// 'ms', '10ms', 's', or any whole number of them: '5ms', '100ms', '2s'.
    pub unit: String,
    /// IDs one node can make in one tick.
    pub ids_per_tick: f64,
    /// IDs one node can make in one second.
    pub ids_per_second: f64,
    pub datacenter_ids: f64,
    pub worker_ids: f64,
    /// Distinct node identities (datacenter x worker).
    pub node_ids: f64,
    /// The first Unix millisecond at which no ID can be made any more.
    pub exhausted_at_ms: f64,
    /// Milliseconds from when this object was made until no ID can be made (0 once run out).
    pub time_left_ms: f64,
    /// IDs are unsigned 64-bit by definition (`discord`): `decode`/`compose` reach 2^64-1.
    pub unsigned: bool,
    /// `exhaustedAtMs` as a Date; null when it is past what a Date can hold.
    pub exhausted_at: Option<JsDate<'env>>,
}

impl<'env> LayoutInfo<'env> {
    pub(crate) fn new(
        env: &'env Env,
        layout: &Layout,
        name: Option<&str>,
        spec: &str,
    ) -> JsResult<Self> {
        let capacity = layout.capacity();
        let fields = layout
            .fields()
            .iter()
            .map(|field| LayoutField {
                name: field.name.clone(),
                kind: field.kind.as_str(),
                bits: field.slot.bits,
                shift: field.slot.shift,
                default_value: field_value(field.default, field.slot.bits),
            })
            .collect();
        let now_ms = flakery::Clock::now_ms(&flakery::SystemClock);
        let exhausted_at = if fits_a_date(capacity.exhausted_at_ms) {
            Some(new_date(env, capacity.exhausted_at_ms)?)
        } else {
            None
        };
        Ok(LayoutInfo {
            name: name.map(str::to_string),
            spec: spec.to_string(),
            canonical: layout.to_string(),
            description: flakery::layout::describe(layout),
            fields,
            total_bits: layout.total_bits(),
            epoch_ms: layout.epoch_ms() as f64,
            epoch: new_date(env, layout.epoch_ms())?,
            unit: layout.unit().as_str().into_owned(),
            ids_per_tick: capacity.ids_per_tick as f64,
            ids_per_second: capacity.ids_per_second as f64,
            datacenter_ids: capacity.datacenter_ids as f64,
            worker_ids: capacity.worker_ids as f64,
            node_ids: capacity.node_ids as f64,
            exhausted_at_ms: capacity.exhausted_at_ms as f64,
            time_left_ms: layout.time_left_ms(now_ms) as f64,
            unsigned: layout.is_unsigned(),
            exhausted_at,
        })
    }
}
