//! The Node binding of flakery: converts JavaScript arguments to the core's types, calls the
//! core, and converts results and errors back. Everything about IDs lives in the core.
//!
//! Arguments are read by hand from `Unknown` values (`read`) rather than by napi-rs's automatic
//! conversions, which turn `-1` into the `u32` 4294967295 and `1.5` into 1 without complaint.
//! Errors follow one rule (`errors`).
//!
//! The hot calls (`nextId`, `nextIdString`, `nextIds`, module-level and per generator) are
//! plain Node-API callbacks (`fast`), each the one body of its call; their TypeScript
//! declarations, and the shapes of the option and result objects, are written by hand in
//! `bindings-node/types.d.ts`, which `napi build` puts at the head of `index.d.ts`.

use std::sync::Arc;

use flakery::lease::sql::{DatabaseMode, DatabaseUrl};
use flakery::{Layout, Options, SequencePolicy};
use napi::bindgen_prelude::{AsyncTask, JavaScriptClassExt, This, TypeName};
use napi::{sys, Env, JsValue, Task, Unknown, ValueType};
use napi_derive::napi;

mod errors;
mod fast;
mod read;
pub mod text;
mod values;

use errors::{core_error, range_error, type_error, JsResult, OrThrow};
use read::{get_string, read_id_u64, read_string, value_type, OptionsObject};
use values::{
    new_array, new_biguint, new_date, new_field_value, new_number, ObjectBuilder, Raw, MAX_DATE_MS,
};

/// The process-wide generator, made on first use from the `FLAKERY_*` environment and shared
/// by every worker thread of the process.
fn default_generator(env: napi::sys::napi_env) -> JsResult<&'static flakery::Generator> {
    flakery::default_generator().map_err(|e| core_error(env, e))
}

// ---------------------------------------------------------------------------------------------
// Generators

const GENERATOR_KEYS: [&str; 14] = [
    "layout",
    "datacenterId",
    "workerId",
    "sequencePolicy",
    "maxBorrowMs",
    "backwardsToleranceMs",
    "randomSequenceStart",
    "fields",
    "zookeeper",
    "namespace",
    "sessionTimeoutMs",
    "leaseDir",
    "databaseUrl",
    "databaseMode",
];

fn generator_options(env: sys::napi_env, value: sys::napi_value) -> JsResult<Options> {
    let o = OptionsObject::read(env, value, "Generator options", &GENERATOR_KEYS)?;
    let mut options = Options {
        layout: o.layout()?,
        datacenter_id: o.u64("datacenterId")?,
        worker_id: o.u64("workerId")?,
        fields: o.fields()?,
        zookeeper: o.string("zookeeper")?,
        namespace: o.string("namespace")?,
        session_timeout_ms: o.u64("sessionTimeoutMs")?,
        lease_dir: o.string("leaseDir")?.map(Into::into),
        ..Options::default()
    };
    if let Some(url) = o.string("databaseUrl")? {
        options.database_url = Some(DatabaseUrl::parse(&url).or_throw(env)?);
    }
    if let Some(mode) = o.string("databaseMode")? {
        options.database_mode = Some(mode.parse::<DatabaseMode>().or_throw(env)?);
    }
    if let Some(policy) = o.string("sequencePolicy")? {
        options.sequence_policy = policy.parse::<SequencePolicy>().or_throw(env)?;
    }
    if let Some(ms) = o.u64("maxBorrowMs")? {
        options.max_borrow_ms = ms;
    }
    if let Some(ms) = o.u64("backwardsToleranceMs")? {
        options.backwards_tolerance_ms = ms;
    }
    if let Some(on) = o.bool("randomSequenceStart")? {
        options.random_sequence_start = on;
    }
    Ok(options)
}

/// A generator of IDs: one layout, one node identity, its policies. Never returns the same ID
/// twice, nor a smaller one than it returned before.
#[napi]
pub struct Generator {
    inner: Arc<flakery::Generator>,
}

#[napi]
impl Generator {
    /// Options not given come from the `FLAKERY_*` environment, then the defaults of docs/spec.md#generator-options;
    /// an unconfigured generator leases its node ID (see docs/identity.md).
    #[napi(catch_unwind, constructor, ts_args_type = "options?: GeneratorOptions")]
    pub fn new(env: Env, this: This, options: Unknown) -> napi::Result<Self, &'static str> {
        let env = env.raw();
        fast::check_constructed(env, this.raw())?;
        let options = generator_options(env, options.raw())?;
        let inner = Arc::new(flakery::Generator::new(options).or_throw(env)?);
        fast::bind_methods(env, this.raw(), &inner)?;
        Ok(Generator { inner })
    }

    /// Makes a generator off the JavaScript thread: a promise of it. A generator that leases
    /// its node ID from a coordinator (ZooKeeper, a database) claims one first, which takes a
    /// round trip or more (seconds when the coordinator is slow); `new Generator` does that
    /// on the calling thread, `create` on a thread of libuv's pool. Options as the
    /// constructor's: a bad one throws at once; an error of making it (a coordinator that
    /// cannot be reached, no node ID free) rejects the promise.
    #[napi(
        catch_unwind,
        ts_args_type = "options?: GeneratorOptions",
        ts_return_type = "Promise<Generator>"
    )]
    pub fn create(env: Env, options: Unknown) -> napi::Result<AsyncTask<Create>, &'static str> {
        let options = generator_options(env.raw(), options.raw())?;
        Ok(AsyncTask::new(Create {
            options: Some(options),
        }))
    }

    /// The layout as its canonical spec string (a preset's name where it is one).
    #[napi(catch_unwind, getter)]
    pub fn layout(&self) -> String {
        self.inner.layout().to_string()
    }

    #[napi(catch_unwind, getter, ts_return_type = "number")]
    pub fn datacenter_id(&self, env: Env) -> napi::Result<Raw, &'static str> {
        let bits = self.inner.layout().datacenter().map_or(0, |s| s.bits);
        new_field_value(env.raw(), self.inner.datacenter_id(), bits).map(Raw)
    }

    #[napi(catch_unwind, getter, ts_return_type = "number")]
    pub fn worker_id(&self, env: Env) -> napi::Result<Raw, &'static str> {
        let bits = self.inner.layout().worker().map_or(0, |s| s.bits);
        new_field_value(env.raw(), self.inner.worker_id(), bits).map(Raw)
    }

    /// Where the node ID came from: `explicit`, `environment`, `hostname`, `zookeeper`,
    /// `database` or `host_lease`.
    #[napi(
        catch_unwind,
        getter,
        ts_return_type = "'explicit' | 'environment' | 'hostname' | 'zookeeper' | 'database' | 'host_lease'"
    )]
    pub fn source(&self) -> &'static str {
        self.inner.source().as_str()
    }

    /// Whether `close()` was called.
    #[napi(catch_unwind, getter)]
    pub fn closed(&self) -> bool {
        self.inner.is_closed()
    }

    /// Releases the node ID lease now; every later call fails with `lease_lost`.
    #[napi(catch_unwind)]
    pub fn close(&self) {
        self.inner.close();
    }
}

/// `Generator.create`'s work: the generator is made on a thread of libuv's pool, then wrapped
/// in a `Generator` object on the JavaScript thread.
pub struct Create {
    options: Option<Options>,
}

impl Task for Create {
    type Output = flakery::Result<flakery::Generator>;
    type JsValue = Raw;

    fn compute(&mut self) -> napi::Result<Self::Output> {
        Ok(flakery::Generator::new(
            self.options.take().unwrap_or_default(),
        ))
    }

    fn resolve(&mut self, env: Env, made: Self::Output) -> napi::Result<Self::JsValue> {
        let inner = Arc::new(made.map_err(|e| errors::core_error_value(env.raw(), e))?);
        let instance = Generator {
            inner: Arc::clone(&inner),
        }
        .into_instance(&env)?;
        fast::bind_methods(env.raw(), instance.value, &inner)
            .map_err(|e| napi::Error::new(napi::Status::GenericFailure, e.reason.clone()))?;
        Ok(Raw(instance.value))
    }
}

/// A promise settles with a `Raw` (the `Generator` object of `Generator.create`).
impl TypeName for Raw {
    fn type_name() -> &'static str {
        "Generator"
    }

    fn value_type() -> ValueType {
        ValueType::Object
    }
}

// ---------------------------------------------------------------------------------------------
// Decoding and composing

/// The layout of `decode`/`compose`: given, else `twitter` (as in every binding and the CLI;
/// `FLAKERY_LAYOUT` configures generators, not decoding).
fn layout_or_twitter(layout: Option<Layout>) -> Layout {
    layout.unwrap_or_else(Layout::twitter)
}

/// Takes an ID apart. `id` is a `bigint`, a decimal string, or a `number` that is a safe
/// integer; `options.layout` (or a spec string in its place) defaults to `twitter`.
#[napi(
    catch_unwind,
    ts_args_type = "id: bigint | string | number, options?: DecodeOptions | string",
    ts_return_type = "DecodedId"
)]
pub fn decode(env: Env, id: Unknown, options: Unknown) -> napi::Result<Raw, &'static str> {
    let env = env.raw();
    let id = read_id_u64(env, id.raw())?;
    let layout = match value_type(env, options.raw())? {
        ValueType::String => Layout::parse(&get_string(env, options.raw())?).or_throw(env)?,
        _ => {
            let o = OptionsObject::read(env, options.raw(), "decode options", &["layout"])?;
            layout_or_twitter(o.layout()?)
        }
    };
    let decoded = flakery::decode_u64(id, &layout).or_throw(env)?;
    let bits = |slot: Option<flakery::Slot>| slot.map_or(0, |s| s.bits);
    let mut fields = ObjectBuilder::new(env)?;
    for ((name, value), field) in decoded.fields.iter().zip(layout.fields()) {
        let value = new_field_value(env, *value, field.slot.bits)?;
        fields.set_dynamic(name, value)?;
    }
    let mut out = ObjectBuilder::new(env)?;
    out.set(c"id", new_biguint(env, decoded.id)?)?;
    out.set(c"timestampMs", new_date_ms(env, decoded.timestamp_ms)?)?;
    out.set(c"date", new_date(env, decoded.timestamp_ms)?)?;
    let datacenter = new_field_value(env, decoded.datacenter_id, bits(layout.datacenter()))?;
    out.set(c"datacenterId", datacenter)?;
    let worker = new_field_value(env, decoded.worker_id, bits(layout.worker()))?;
    out.set(c"workerId", worker)?;
    let sequence = new_field_value(env, decoded.sequence, layout.sequence().bits)?;
    out.set(c"sequence", sequence)?;
    out.set(c"fields", fields.finish())?;
    Ok(Raw(out.finish()))
}

/// A timestamp as a number, refused where a number or a Date could not hold it exactly.
fn new_date_ms(env: sys::napi_env, ms: i64) -> JsResult<sys::napi_value> {
    if !(-MAX_DATE_MS..=MAX_DATE_MS).contains(&ms) {
        return Err(range_error(
            env,
            format!("timestamp {ms} ms is beyond what a JavaScript Date can hold"),
        ));
    }
    new_number(env, ms as f64)
}

const COMPOSE_KEYS: [&str; 6] = [
    "layout",
    "timestampMs",
    "datacenterId",
    "workerId",
    "sequence",
    "fields",
];

/// Builds the ID that `decode` takes apart into these parts. `timestampMs` is rounded down to
/// its tick; every other value must fit its field. `layout` defaults to `twitter`.
#[napi(
    catch_unwind,
    ts_args_type = "parts: ComposeOptions",
    ts_return_type = "bigint"
)]
pub fn compose(env: Env, parts: Unknown) -> napi::Result<Raw, &'static str> {
    let env = env.raw();
    if value_type(env, parts.raw())? == ValueType::Undefined {
        return Err(type_error(
            env,
            "compose needs an object such as {timestampMs: Date.now(), workerId: 1}".to_string(),
        ));
    }
    let o = OptionsObject::read(env, parts.raw(), "compose parts", &COMPOSE_KEYS)?;
    let layout = layout_or_twitter(o.layout()?);
    let Some(timestamp_ms) = o.i64("timestampMs")? else {
        return Err(type_error(env, "compose needs timestampMs".to_string()));
    };
    let parts = flakery::Parts {
        timestamp_ms,
        datacenter_id: o.u64("datacenterId")?.unwrap_or(0),
        worker_id: o.u64("workerId")?.unwrap_or(0),
        sequence: o.u64("sequence")?.unwrap_or(0),
        fields: o.fields()?,
    };
    // Unsigned layouts (discord) reach 2^64-1; signed ones refuse bit 63 as compose does.
    let id = flakery::compose_u64(&parts, &layout).or_throw(env)?;
    new_biguint(env, id).map(Raw)
}

// ---------------------------------------------------------------------------------------------
// Layouts

fn layout_info(
    env: sys::napi_env,
    layout: &Layout,
    name: Option<&str>,
    spec: &str,
) -> JsResult<sys::napi_value> {
    let capacity = layout.capacity();
    let mut fields = Vec::with_capacity(layout.fields().len());
    for field in layout.fields() {
        let mut f = ObjectBuilder::new(env)?;
        f.set_string(c"name", &field.name)?;
        f.set_string(c"kind", field.kind.as_str())?;
        f.set_number(c"bits", f64::from(field.slot.bits))?;
        f.set_number(c"shift", f64::from(field.slot.shift))?;
        f.set(
            c"default",
            new_field_value(env, field.default, field.slot.bits)?,
        )?;
        fields.push(f.finish());
    }
    let mut out = ObjectBuilder::new(env)?;
    match name {
        Some(name) => out.set_string(c"name", name)?,
        None => out.set_null(c"name")?,
    }
    out.set_string(c"spec", spec)?;
    out.set_string(c"canonical", &layout.to_string())?;
    out.set_string(c"description", &flakery::layout::describe(layout))?;
    out.set(c"fields", new_array(env, &fields)?)?;
    out.set_number(c"totalBits", f64::from(layout.total_bits()))?;
    out.set_number(c"epochMs", layout.epoch_ms() as f64)?;
    out.set(c"epoch", new_date(env, layout.epoch_ms())?)?;
    out.set_string(c"unit", &layout.unit().as_str())?;
    out.set_number(c"idsPerTick", capacity.ids_per_tick as f64)?;
    out.set_number(c"idsPerSecond", capacity.ids_per_second as f64)?;
    out.set_number(c"datacenterIds", capacity.datacenter_ids as f64)?;
    out.set_number(c"workerIds", capacity.worker_ids as f64)?;
    out.set_number(c"nodeIds", capacity.node_ids as f64)?;
    out.set_number(c"exhaustedAtMs", capacity.exhausted_at_ms as f64)?;
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
    out.set_number(c"timeLeftMs", layout.time_left_ms(now_ms) as f64)?;
    out.set_bool(c"unsigned", layout.is_unsigned())?;
    if (-MAX_DATE_MS..=MAX_DATE_MS).contains(&capacity.exhausted_at_ms) {
        out.set(c"exhaustedAt", new_date(env, capacity.exhausted_at_ms)?)?;
    } else {
        out.set_null(c"exhaustedAt")?;
    }
    Ok(out.finish())
}

/// The presets of docs/spec.md#layouts, in its order, with their fields and capacity.
#[napi(catch_unwind, ts_return_type = "LayoutInfo[]")]
pub fn layouts(env: Env) -> napi::Result<Raw, &'static str> {
    let env = env.raw();
    let mut items = Vec::with_capacity(flakery::layout::PRESETS.len());
    for (name, spec) in flakery::layout::PRESETS {
        let layout = Layout::parse(spec).or_throw(env)?;
        items.push(layout_info(env, &layout, Some(name), spec)?);
    }
    new_array(env, &items).map(Raw)
}

/// Parses a layout spec (`'discord'`, `'twitter;epoch=2020-01-01T00:00:00Z'`,
/// `'time:41,worker:10,sequence:12;epoch=1288834974657'`) and describes it; an invalid spec
/// throws a `RangeError` with code `invalid_layout`.
#[napi(
    catch_unwind,
    ts_args_type = "spec: string",
    ts_return_type = "LayoutInfo"
)]
pub fn layout_info_of(env: Env, spec: Unknown) -> napi::Result<Raw, &'static str> {
    let env = env.raw();
    let spec = read_string(env, spec.raw(), "spec")?;
    let layout = Layout::parse(&spec).or_throw(env)?;
    layout_info(env, &layout, layout.preset_name(), &spec).map(Raw)
}
