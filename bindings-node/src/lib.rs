//! The Node binding of flakery: converts JavaScript arguments to the core's types, calls the
//! core, and converts results and errors back. Everything about IDs lives in the core.
//!
//! Arguments are read by hand from `Unknown` values (`read`) rather than by napi-rs's automatic
//! conversions, which turn `-1` into the `u32` 4294967295 and `1.5` into 1 without complaint.
//! Errors follow one rule (`errors`).
//!
//! The hot calls (`nextId`, `nextIdString`, `nextIds`, module-level and per generator) are
//! plain Node-API callbacks (`fast`), each the one body of its call; their TypeScript
//! declarations, and the shapes of the option objects, are written by hand in
//! `bindings-node/types.d.ts`, which `napi build` puts at the head of `index.d.ts`. Every
//! other result is a napi-rs type (`results`: `#[napi(object)]`, `BigInt`, `JsDate`), whose
//! declarations napi-rs generates.

use std::sync::Arc;

use flakery::option_table as table;
use flakery::options::{DatabaseMode, DatabaseUrl};
use flakery::{Layout, Options, SequencePolicy};
use napi::bindgen_prelude::{AsyncTask, BigInt, JavaScriptClassExt, This, TypeName};
use napi::{sys, Env, JsValue, Task, Unknown, ValueType};
use napi_derive::napi;

mod client;
mod client_calls;
mod doctor;
mod errors;
mod fast;
mod read;
mod results;
pub mod text;
mod values;

/// The addon ships every coordinator (ZooKeeper and database leases work): installed when
/// the library is loaded, once per process, before any module instance runs.
#[napi_derive::module_init]
fn install_coordinators() {
    flakery_coordinators::install();
}

use errors::{core_error, type_error, JsResult, OrThrow};
use read::{get_string, read_id_u64, read_string, value_type, OptionsObject};
use results::{field_value, DecodedId, FieldValue, LayoutInfo};

/// The process-wide generator, made on first use from the `FLAKERY_*` environment and shared
/// by every worker thread of the process.
fn default_generator(env: napi::sys::napi_env) -> JsResult<&'static flakery::Generator> {
    flakery::default_generator().map_err(|e| core_error(env, e))
}

// ---------------------------------------------------------------------------------------------
// Generators

/// The keys of `GeneratorOptions`: the table's JavaScript names (docs/spec.md#generator-options).
fn generator_keys() -> [&'static str; table::OPTIONS.len()] {
    table::OPTIONS.map(|option| option.js)
}

fn generator_options(env: sys::napi_env, value: &Unknown) -> JsResult<Options> {
    let o = OptionsObject::read(value, "Generator options", &generator_keys())?;
    let mut options = Options {
        layout: o.layout()?,
        datacenter_id: o.u64(table::DATACENTER_ID.js)?,
        worker_id: o.u64(table::WORKER_ID.js)?,
        fields: o.fields()?,
        zookeeper: o.string(table::ZOOKEEPER.js)?,
        namespace: o.string(table::NAMESPACE.js)?,
        session_timeout_ms: o.u64(table::SESSION_TIMEOUT_MS.js)?,
        lease_dir: o.string(table::LEASE_DIR.js)?.map(Into::into),
        ..Options::default()
    };
    if let Some(url) = o.string(table::DATABASE_URL.js)? {
        options.database_url = Some(DatabaseUrl::parse(&url).or_throw(env)?);
    }
    if let Some(mode) = o.string(table::DATABASE_MODE.js)? {
        options.database_mode = Some(mode.parse::<DatabaseMode>().or_throw(env)?);
    }
    if let Some(policy) = o.string(table::SEQUENCE_POLICY.js)? {
        options.sequence_policy = policy.parse::<SequencePolicy>().or_throw(env)?;
    }
    if let Some(ms) = o.u64(table::MAX_BORROW_MS.js)? {
        options.max_borrow_ms = ms;
    }
    if let Some(ms) = o.u64(table::BACKWARDS_TOLERANCE_MS.js)? {
        options.backwards_tolerance_ms = ms;
    }
    if let Some(on) = o.bool(table::RANDOM_SEQUENCE_START.js)? {
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
        let options = generator_options(env, &options)?;
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
        let options = generator_options(env.raw(), &options)?;
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
    pub fn datacenter_id(&self) -> FieldValue {
        let bits = self.inner.layout().datacenter().map_or(0, |s| s.bits);
        field_value(self.inner.datacenter_id(), bits)
    }

    #[napi(catch_unwind, getter, ts_return_type = "number")]
    pub fn worker_id(&self) -> FieldValue {
        let bits = self.inner.layout().worker().map_or(0, |s| s.bits);
        field_value(self.inner.worker_id(), bits)
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

/// A JavaScript value made by hand: the `Generator` object of `Generator.create`, which a
/// promise settles with.
pub struct Raw(sys::napi_value);

impl napi::bindgen_prelude::ToNapiValue for Raw {
    unsafe fn to_napi_value(_env: sys::napi_env, val: Self) -> napi::Result<sys::napi_value> {
        Ok(val.0)
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
    ts_args_type = "id: bigint | string | number, options?: DecodeOptions | string"
)]
pub fn decode<'env>(
    env: &'env Env,
    id: Unknown,
    options: Unknown,
) -> napi::Result<DecodedId<'env>, &'static str> {
    let raw = env.raw();
    let id = read_id_u64(&id)?;
    let layout = match value_type(&options)? {
        ValueType::String => Layout::parse(&get_string(&options)?).or_throw(raw)?,
        _ => {
            let o = OptionsObject::read(&options, "decode options", &["layout"])?;
            layout_or_twitter(o.layout()?)
        }
    };
    let decoded = flakery::decode_u64(id, &layout).or_throw(raw)?;
    DecodedId::new(env, decoded, &layout)
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
#[napi(catch_unwind, ts_args_type = "parts: ComposeOptions")]
pub fn compose(env: Env, parts: Unknown) -> napi::Result<BigInt, &'static str> {
    let env = env.raw();
    if value_type(&parts)? == ValueType::Undefined {
        return Err(type_error(
            env,
            "compose needs an object such as {timestampMs: Date.now(), workerId: 1}".to_string(),
        ));
    }
    let o = OptionsObject::read(&parts, "compose parts", &COMPOSE_KEYS)?;
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
    Ok(BigInt::from(id))
}

// ---------------------------------------------------------------------------------------------
// Layouts

/// The presets of docs/spec.md#layouts, in its order, with their fields and capacity.
#[napi(catch_unwind)]
pub fn layouts(env: &Env) -> napi::Result<Vec<LayoutInfo<'_>>, &'static str> {
    let mut items = Vec::with_capacity(flakery::layout::PRESETS.len());
    for (name, spec) in flakery::layout::PRESETS {
        let layout = Layout::parse(spec).or_throw(env.raw())?;
        items.push(LayoutInfo::new(env, &layout, Some(name), spec)?);
    }
    Ok(items)
}

/// Parses a layout spec (`'discord'`, `'twitter;epoch=2020-01-01T00:00:00Z'`,
/// `'time:41,worker:10,sequence:12;epoch=1288834974657'`) and describes it; an invalid spec
/// throws a `RangeError` with code `invalid_layout`.
#[napi(catch_unwind, ts_args_type = "spec: string")]
pub fn layout_info_of<'env>(
    env: &'env Env,
    spec: Unknown,
) -> napi::Result<LayoutInfo<'env>, &'static str> {
    let raw = env.raw();
    let spec = read_string(&spec, "spec")?;
    let layout = Layout::parse(&spec).or_throw(raw)?;
    LayoutInfo::new(env, &layout, layout.preset_name(), &spec)
}
