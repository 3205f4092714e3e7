//! `flakery.Layout` and what it tells: `Field`, `Capacity`; a layout argument (a spec or a
//! `flakery.Layout`). `args` converts plain values and knows nothing of this module, which
//! uses it: the imports go one way.

use std::sync::{Arc, OnceLock};

use flakery::Layout;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple, PyType};

use crate::args;
use crate::errors::{wrong_type, IntoPyResult};
use crate::time;

fn twitter() -> Arc<Layout> {
    static TWITTER: OnceLock<Arc<Layout>> = OnceLock::new();
    TWITTER.get_or_init(|| Arc::new(Layout::twitter())).clone()
}

/// A layout given as a spec string or a `flakery.Layout`; `None` is the default of
/// docs/spec.md#decoding-and-composing for decoding and composing, `twitter`.
pub fn layout_or_twitter(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Arc<Layout>> {
    match obj {
        Some(obj) if !obj.is_none() => layout_arg(obj),
        _ => Ok(twitter()),
    }
}

/// The `layout` argument: a spec string or a `flakery.Layout`.
pub fn layout_arg(obj: &Bound<'_, PyAny>) -> PyResult<Arc<Layout>> {
    if let Ok(layout) = obj.cast::<PyLayout>() {
        return Ok(layout.get().inner.clone());
    }
    match obj.cast::<PyString>() {
        Ok(spec) => Ok(Arc::new(Layout::parse(&spec.to_cow()?).py()?)),
        Err(_) => Err(wrong_type("layout", "a str or a flakery.Layout", obj)),
    }
}

/// How an ID is cut into fields. Immutable and hashable; equal when two layouts cut IDs the
/// same way. `str(layout)` is the canonical spec, which `Layout(spec)` reads back.
#[pyclass(frozen, eq, hash, module = "flakery", name = "Layout")]
#[derive(PartialEq, Eq, Hash)]
pub struct PyLayout {
    pub inner: Arc<Layout>,
}

impl PyLayout {
    pub fn new(inner: Arc<Layout>) -> Self {
        PyLayout { inner }
    }
}

/// One field of a layout, most significant first in `Layout.fields`.
#[pyclass(frozen, eq, hash, get_all, module = "flakery", name = "Field")]
#[derive(PartialEq, Eq, Hash)]
pub struct PyField {
    /// `time`, `datacenter`, `worker`, `sequence`, or a constant field's own name.
    name: String,
    /// `"time"`, `"datacenter"`, `"worker"`, `"sequence"` or `"constant"`.
    kind: &'static str,
    bits: u32,
    /// Where the field's lowest bit sits in the ID.
    shift: u32,
    /// A constant field's value unless the generator is given another; 0 for the others.
    default: u64,
}

#[pymethods]
impl PyField {
    fn __repr__(&self) -> String {
        let default = if self.kind == "constant" {
            format!(", default={}", self.default)
        } else {
            String::new()
        };
        format!(
            "Field(name='{}', kind='{}', bits={}, shift={}{default})",
            self.name, self.kind, self.bits, self.shift
        )
    }
}

/// What a layout can hold, per node.
#[pyclass(frozen, eq, hash, get_all, module = "flakery", name = "Capacity")]
#[derive(PartialEq, Eq, Hash)]
pub struct PyCapacity {
    /// IDs one node can make in one tick of the time unit.
    ids_per_tick: u64,
    /// IDs one node can make in one second.
    ids_per_second: u64,
    datacenter_ids: u64,
    worker_ids: u64,
    /// Distinct node identities: datacenter IDs x worker IDs.
    node_ids: u64,
    /// The largest tick the time field can hold in a non-negative ID.
    max_tick: u64,
    /// The first Unix millisecond at which no ID can be made any more.
    exhausted_at_ms: i64,
}

#[pymethods]
impl PyCapacity {
    fn __repr__(&self) -> String {
        format!(
            "Capacity(ids_per_tick={}, ids_per_second={}, datacenter_ids={}, worker_ids={}, \
             node_ids={}, max_tick={}, exhausted_at_ms={})",
            self.ids_per_tick,
            self.ids_per_second,
            self.datacenter_ids,
            self.worker_ids,
            self.node_ids,
            self.max_tick,
            self.exhausted_at_ms
        )
    }
}

#[pymethods]
impl PyLayout {
    /// Parses a spec: a preset name (`"twitter"`), a preset with options
    /// (`"discord;epoch=2015-01-01T00:00:00Z"`) or a field list
    /// (`"time:41,worker:10,sequence:12;epoch=1288834974657;unit=ms"`).
    #[new]
    fn py_new(spec: &Bound<'_, PyAny>) -> PyResult<Self> {
        let spec = args::string(spec, "spec")?;
        Ok(PyLayout::new(Arc::new(Layout::parse(&spec).py()?)))
    }

    /// One of the presets of docs/spec.md#layouts by name.
    #[classmethod]
    fn preset(_cls: &Bound<'_, PyType>, name: &Bound<'_, PyAny>) -> PyResult<Self> {
        let name = args::string(name, "name")?;
        Ok(PyLayout::new(Arc::new(Layout::preset(&name).py()?)))
    }

    /// Every preset by name, in the order of docs/spec.md#layouts.
    #[classmethod]
    fn presets<'py>(cls: &Bound<'py, PyType>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(cls.py());
        for (name, layout) in Layout::presets() {
            dict.set_item(name, PyLayout::new(Arc::new(layout)))?;
        }
        Ok(dict)
    }

    /// The fields, most significant first.
    #[getter]
    fn fields<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let fields = self.inner.fields().iter().map(|f| PyField {
            name: f.name.clone(),
            kind: f.kind.as_str(),
            bits: f.slot.bits,
            shift: f.slot.shift,
            default: f.default,
        });
        PyTuple::new(py, fields)
    }

    /// The epoch in Unix milliseconds.
    #[getter]
    fn epoch_ms(&self) -> i64 {
        self.inner.epoch_ms()
    }

    /// The epoch as an aware UTC datetime.
    #[getter]
    fn epoch<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        time::of_ms(py, self.inner.epoch_ms())
    }

    /// The length of one tick as `unit=` writes it: `"ms"`, `"10ms"`, `"s"`, `"5ms"`, ...
    #[getter]
    fn unit(&self) -> String {
        self.inner.unit().as_str().into_owned()
    }

    /// The bits the fields use together (at most 64).
    #[getter]
    fn total_bits(&self) -> u32 {
        self.inner.total_bits()
    }

    /// The preset this layout is exactly, or None.
    #[getter]
    fn preset_name(&self) -> Option<&'static str> {
        self.inner.preset_name()
    }

    #[getter]
    fn capacity(&self) -> PyCapacity {
        let c = self.inner.capacity();
        PyCapacity {
            ids_per_tick: c.ids_per_tick,
            ids_per_second: c.ids_per_second,
            datacenter_ids: c.datacenter_ids,
            worker_ids: c.worker_ids,
            node_ids: c.node_ids,
            max_tick: c.max_tick,
            exhausted_at_ms: c.exhausted_at_ms,
        }
    }

    /// The first Unix millisecond at which this layout can make no more IDs.
    #[getter]
    fn exhausted_at_ms(&self) -> i64 {
        self.inner.capacity().exhausted_at_ms
    }

    /// Milliseconds from now until this layout can make no more IDs (0 once it has run out).
    #[getter]
    fn time_left_ms(&self) -> i64 {
        let now_ms = flakery::Clock::now_ms(&flakery::SystemClock);
        self.inner.time_left_ms(now_ms)
    }

    /// Whether IDs of this layout are unsigned 64-bit integers by definition (`discord`):
    /// then `decode` takes and `compose` gives IDs up to 2^64-1.
    #[getter]
    fn unsigned(&self) -> bool {
        self.inner.is_unsigned()
    }

    /// The instant this layout's time field runs out, as an aware UTC datetime.
    #[getter]
    fn exhausted_at<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        time::of_ms(py, self.inner.capacity().exhausted_at_ms)
    }

    /// One line for listings: fields, epoch, unit, capacity, when it runs out.
    fn describe(&self) -> String {
        flakery::layout::describe(&self.inner)
    }

    fn __str__(&self) -> String {
        self.inner.to_string()
    }

    fn __repr__(&self) -> String {
        format!("Layout('{}')", self.inner)
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyType>, (String,))> {
        Ok((slf.get_type(), (slf.get().inner.to_string(),)))
    }
}
