//! `flakery.Generator` and the process-wide generator. The calls that make IDs are
//! `source`'s, shared with `Client`; the GIL is released whenever the core may block (making
//! or closing a generator too).

use std::sync::{Arc, OnceLock};

use flakery::{Generator, Layout};
use pyo3::prelude::*;
use pyo3::types::PyList;

use crate::decoded::PyDecoded;
use crate::errors::IntoPyResult;
use crate::layout::PyLayout;
use crate::options::GeneratorArgs;
use crate::source;

/// The process-wide generator (the core's), remembered here so that the module-level
/// `next_id()` costs one load.
static DEFAULT: OnceLock<&'static Generator> = OnceLock::new();

/// The process-wide generator: inlined into `next_id()`, where it is one load and a branch
/// (as a call returning a `PyResult` it cost 26 instructions of each `flakery.next_id()`,
/// under callgrind).
#[inline(always)]
pub fn default_generator(py: Python<'_>) -> PyResult<&'static Generator> {
    match DEFAULT.get() {
        Some(generator) => Ok(generator),
        None => make_default_generator(py),
    }
}

/// The process-wide generator if it was made, for the module-level `next_id()`'s hot path
/// (`fast.rs`), which leaves its making to the slow path.
#[inline(always)]
pub fn default_if_made() -> Option<&'static Generator> {
    DEFAULT.get().copied()
}

/// The first use: made without the GIL, as making it may block (leases).
#[cold]
#[inline(never)]
fn make_default_generator(py: Python<'_>) -> PyResult<&'static Generator> {
    let generator = py.detach(flakery::default_generator).py()?;
    Ok(DEFAULT.get_or_init(|| generator))
}

enum Handle {
    /// On the heap: the core's generator is aligned to a cache line (64 bytes), more than the
    /// memory Python allocates objects in guarantees. Shared: a `Client` may hold it as its
    /// fallback.
    Owned(Arc<Generator>),
    /// The process-wide generator: `close()` leaves it alone.
    Shared(&'static Generator),
}

/// Makes IDs: unique and increasing, safe to share between threads.
#[pyclass(frozen, module = "flakery", name = "Generator")]
pub struct PyGenerator {
    handle: Handle,
    layout: Arc<Layout>,
}

impl PyGenerator {
    pub fn shared(generator: &'static Generator) -> Self {
        PyGenerator {
            layout: Arc::new(generator.layout().clone()),
            handle: Handle::Shared(generator),
        }
    }

    /// The generator, for a `Client`'s fallback; the process-wide one is not given out (a
    /// fallback needs a node ID no server holds, which the environment's is not made for).
    pub fn owned(&self) -> Option<Arc<Generator>> {
        match &self.handle {
            Handle::Owned(generator) => Some(Arc::clone(generator)),
            Handle::Shared(_) => None,
        }
    }

    #[inline(always)]
    fn generator(&self) -> &Generator {
        match &self.handle {
            Handle::Owned(generator) => generator,
            Handle::Shared(generator) => generator,
        }
    }
}

#[pymethods]
impl PyGenerator {
    /// Every argument is keyword-only; one left out (or None) takes the environment's value
    /// (`FLAKERY_LAYOUT`, `FLAKERY_WORKER_ID`, `FLAKERY_DATACENTER_ID`, ...) or the default.
    #[new]
    #[pyo3(
        signature = (
            *, layout=None, datacenter_id=None, worker_id=None, sequence_policy=None,
            max_borrow_ms=None, backwards_tolerance_ms=None, random_sequence_start=None,
            fields=None, zookeeper=None, namespace=None, session_timeout_ms=None, lease_dir=None,
            database_url=None, database_mode=None
        ),
        text_signature = "(*, layout=None, datacenter_id=None, worker_id=None, \
            sequence_policy='wait', max_borrow_ms=1000, backwards_tolerance_ms=1000, \
            random_sequence_start=False, fields=None, zookeeper=None, namespace=None, \
            session_timeout_ms=None, lease_dir=None, database_url=None, database_mode=None)"
    )]
    #[allow(clippy::too_many_arguments)]
    fn py_new(
        py: Python<'_>,
        layout: Option<&Bound<'_, PyAny>>,
        datacenter_id: Option<&Bound<'_, PyAny>>,
        worker_id: Option<&Bound<'_, PyAny>>,
        sequence_policy: Option<&Bound<'_, PyAny>>,
        max_borrow_ms: Option<&Bound<'_, PyAny>>,
        backwards_tolerance_ms: Option<&Bound<'_, PyAny>>,
        random_sequence_start: Option<&Bound<'_, PyAny>>,
        fields: Option<&Bound<'_, PyAny>>,
        zookeeper: Option<&Bound<'_, PyAny>>,
        namespace: Option<&Bound<'_, PyAny>>,
        session_timeout_ms: Option<&Bound<'_, PyAny>>,
        lease_dir: Option<&Bound<'_, PyAny>>,
        database_url: Option<&Bound<'_, PyAny>>,
        database_mode: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let options = GeneratorArgs {
            layout,
            datacenter_id,
            worker_id,
            sequence_policy,
            max_borrow_ms,
            backwards_tolerance_ms,
            random_sequence_start,
            fields,
            zookeeper,
            namespace,
            session_timeout_ms,
            lease_dir,
            database_url,
            database_mode,
        }
        .options()?;
        let generator = py.detach(|| Generator::new(options)).py()?;
        Ok(PyGenerator {
            layout: Arc::new(generator.layout().clone()),
            handle: Handle::Owned(Arc::new(generator)),
        })
    }

    /// One new ID, larger than every ID this generator returned before.
    fn next_id(&self, py: Python<'_>) -> PyResult<i64> {
        source::next_id(py, self.generator())
    }

    /// `n` new IDs in increasing order.
    fn next_ids<'py>(
        &self,
        py: Python<'py>,
        n: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        source::next_ids(py, self.generator(), n)
    }

    /// One new ID as text: `"decimal"` (the default), or `"base32"` or `"base62"`, whose
    /// strings sort as the IDs do.
    #[pyo3(signature = (format=None), text_signature = "($self, format='decimal')")]
    fn next_id_text(&self, py: Python<'_>, format: Option<&Bound<'_, PyAny>>) -> PyResult<String> {
        source::next_id_text(py, self.generator(), format)
    }

    /// Takes an ID apart under this generator's layout.
    fn decode(&self, id: &Bound<'_, PyAny>) -> PyResult<PyDecoded> {
        source::decode(id, self.layout.clone())
    }

    #[getter]
    fn layout(&self) -> PyLayout {
        PyLayout::new(self.layout.clone())
    }

    #[getter]
    fn datacenter_id(&self) -> u64 {
        self.generator().datacenter_id()
    }

    #[getter]
    fn worker_id(&self) -> u64 {
        self.generator().worker_id()
    }

    /// Where the node ID came from: `"explicit"`, `"environment"`, `"hostname"`,
    /// `"zookeeper"`, `"database"` or `"host_lease"`.
    #[getter]
    fn source(&self) -> &'static str {
        self.generator().source().as_str()
    }

    /// `"wait"` or `"borrow"`.
    #[getter]
    fn sequence_policy(&self) -> &'static str {
        self.generator().sequence_policy().as_str()
    }

    #[getter]
    fn closed(&self) -> bool {
        self.generator().is_closed()
    }

    /// Releases the node ID (a lease) now; later calls raise `LeaseLostError`. The
    /// process-wide generator (`flakery.default_generator()`) is never closed: for it this
    /// does nothing.
    fn close(&self, py: Python<'_>) {
        if let Handle::Owned(generator) = &self.handle {
            py.detach(|| generator.close());
        }
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    /// Closes the generator; exceptions propagate.
    fn __exit__(
        &self,
        py: Python<'_>,
        exc_type: &Bound<'_, PyAny>,
        exc_value: &Bound<'_, PyAny>,
        traceback: &Bound<'_, PyAny>,
    ) {
        let _ = (exc_type, exc_value, traceback);
        self.close(py);
    }

    fn __repr__(&self) -> String {
        let generator = self.generator();
        let node = generator.node();
        let closed = if generator.is_closed() {
            ", closed=True"
        } else {
            ""
        };
        format!(
            "Generator(layout='{}', datacenter_id={}, worker_id={}, source='{}'{closed})",
            self.layout,
            node.datacenter_id,
            node.worker_id,
            generator.source()
        )
    }
}
