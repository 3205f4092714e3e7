//! `flakery.Decoded`: what `decode` returns.

use std::cmp::Ordering;
use std::sync::Arc;

use flakery::{Decoded, FieldKind, Layout};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use crate::layout::PyLayout;
use crate::time;

/// An ID taken apart under a layout. Immutable and hashable; ordered by ID first.
#[pyclass(frozen, eq, ord, hash, module = "flakery", name = "Decoded")]
pub struct PyDecoded {
    pub decoded: Decoded,
    pub layout: Arc<Layout>,
}

impl PartialEq for PyDecoded {
    fn eq(&self, other: &Self) -> bool {
        self.decoded == other.decoded && self.layout == other.layout
    }
}

impl Eq for PyDecoded {}

impl std::hash::Hash for PyDecoded {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.decoded.hash(state);
        self.layout.hash(state);
    }
}

impl PartialOrd for PyDecoded {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// What orders two decoded IDs before their layouts do; borrowed, so a comparison allocates
/// nothing.
fn decoded_key(d: &Decoded) -> (u64, i64, u64, u64, u64, &[(String, u64)]) {
    (
        d.id,
        d.timestamp_ms,
        d.datacenter_id,
        d.worker_id,
        d.sequence,
        &d.fields,
    )
}

impl Ord for PyDecoded {
    fn cmp(&self, other: &Self) -> Ordering {
        decoded_key(&self.decoded)
            .cmp(&decoded_key(&other.decoded))
            .then_with(|| {
                if self.layout == other.layout {
                    Ordering::Equal
                } else {
                    self.layout.to_string().cmp(&other.layout.to_string())
                }
            })
    }
}

#[pymethods]
impl PyDecoded {
    #[getter]
    fn id(&self) -> u64 {
        self.decoded.id
    }

    /// Unix milliseconds (the start of the ID's tick).
    #[getter]
    fn timestamp_ms(&self) -> i64 {
        self.decoded.timestamp_ms
    }

    /// The time as an aware UTC datetime.
    #[getter]
    fn datetime<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        time::of_ms(py, self.decoded.timestamp_ms)
    }

    /// 0 when the layout has no datacenter field.
    #[getter]
    fn datacenter_id(&self) -> u64 {
        self.decoded.datacenter_id
    }

    /// 0 when the layout has no worker field.
    #[getter]
    fn worker_id(&self) -> u64 {
        self.decoded.worker_id
    }

    #[getter]
    fn sequence(&self) -> u64 {
        self.decoded.sequence
    }

    /// Every field of the layout by name, in layout order, with its raw value (the time field
    /// in ticks since the epoch). A new dict on each access.
    #[getter]
    fn fields<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        for (name, value) in &self.decoded.fields {
            dict.set_item(name, value)?;
        }
        Ok(dict)
    }

    /// The layout the ID was decoded under.
    #[getter]
    fn layout(&self) -> PyLayout {
        PyLayout::new(self.layout.clone())
    }

    /// The constant fields (Vesta's version, type, method) appear by name.
    fn __repr__(&self) -> String {
        let d = &self.decoded;
        let constants: Vec<String> = self
            .layout
            .fields()
            .iter()
            .filter(|f| f.kind == FieldKind::Constant)
            .filter_map(|f| d.field(&f.name).map(|v| format!(", {}={v}", f.name)))
            .collect();
        let constants = constants.concat();
        format!(
            "Decoded(id={}, timestamp_ms={}, time='{}', datacenter_id={}, worker_id={}, \
             sequence={}{constants}, layout='{}')",
            d.id,
            d.timestamp_ms,
            flakery::timestamp::format_rfc3339_ms(d.timestamp_ms),
            d.datacenter_id,
            d.worker_id,
            d.sequence,
            self.layout
        )
    }

    /// Pickles as `decode(id, layout)`.
    fn __reduce__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyTuple>)> {
        let decode = py.import("flakery._flakery")?.getattr("decode")?;
        let args = PyTuple::new(
            py,
            [
                self.decoded.id.into_pyobject(py)?.into_any(),
                Bound::new(py, PyLayout::new(self.layout.clone()))?.into_any(),
            ],
        )?;
        Ok((decode, args))
    }
}
