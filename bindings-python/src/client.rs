//! `flakery.Client`: IDs from `flakery serve` instances through the Rust client
//! (`flakery-client`), with the calls of a `Generator` (`next_id`, `next_ids`, `decode`) and
//! the text forms (`next_id_text`). Argument and error conversion only: the blocks, prefetch,
//! age, failover and deadlines are the crate's.
//!
//! `next_id` answers from the client's stock with the GIL held, as the generator's answers
//! from the core (`fast`); any call that may wait on the network (an empty stock, a batch, a
//! failover) waits without the GIL, at most the client's `timeout_ms`.

use std::sync::Arc;
use std::time::Duration;

use flakery::option_table::{ClientOptionSpec, MAX_AGE, REQUEST_TIMEOUT, TIMEOUT};
use flakery::{Layout, Surface};
use flakery_client::Options;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString};

use crate::args;
use crate::decoded::PyDecoded;
use crate::errors::{to_py, wrong_type, IntoPyResult};
use crate::fast::{self, NoArgs};
use crate::generator::PyGenerator;
use crate::layout::PyLayout;
use crate::source;

/// `servers`: a string of URLs separated by commas, or a sequence of them.
fn servers(obj: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    if let Ok(text) = obj.cast::<PyString>() {
        return Ok(flakery_client::split_servers(&text.to_cow()?));
    }
    let items = obj
        .try_iter()
        .map_err(|_| wrong_type("servers", "a str or a sequence of str", obj))?;
    let mut servers = Vec::new();
    for item in items {
        servers.extend(flakery_client::split_servers(&args::string(
            &item?,
            "servers[]",
        )?));
    }
    Ok(servers)
}

/// A client of one or more `flakery serve` instances, with the calls of a `Generator`: switch
/// between embedded and central with one line (docs/client.md). Safe to share between threads.
#[pyclass(frozen, module = "flakery", name = "Client")]
pub struct PyClient {
    inner: Arc<flakery_client::Client>,
    layout: Arc<Layout>,
}

#[pymethods]
impl PyClient {
    /// Every argument is keyword-only; one left out (or None) takes the environment's value
    /// (`FLAKERY_SERVERS`, `FLAKERY_SERVER_TOKEN`, `FLAKERY_LAYOUT`) or the default of
    /// docs/client.md#options. Asks no server yet.
    #[new]
    #[pyo3(
        signature = (
            *, servers=None, token=None, layout=None, max_age_ms=None, timeout_ms=None,
            request_timeout_ms=None, min_block=None, max_block=None, prefetch=None,
            prefer_first=None, fallback=None, server_ca=None, client_cert=None,
            client_key=None, send_token_in_clear=None
        ),
        text_signature = "(*, servers=None, token=None, layout=None, max_age_ms=10000, \
            timeout_ms=5000, request_timeout_ms=1000, min_block=16, max_block=10000, \
            prefetch=True, prefer_first=False, fallback=None, server_ca=None, \
            client_cert=None, client_key=None, send_token_in_clear=False)"
    )]
    #[allow(clippy::too_many_arguments)]
    fn py_new(
        py: Python<'_>,
        servers: Option<&Bound<'_, PyAny>>,
        token: Option<&Bound<'_, PyAny>>,
        layout: Option<&Bound<'_, PyAny>>,
        max_age_ms: Option<&Bound<'_, PyAny>>,
        timeout_ms: Option<&Bound<'_, PyAny>>,
        request_timeout_ms: Option<&Bound<'_, PyAny>>,
        min_block: Option<&Bound<'_, PyAny>>,
        max_block: Option<&Bound<'_, PyAny>>,
        prefetch: Option<&Bound<'_, PyAny>>,
        prefer_first: Option<&Bound<'_, PyAny>>,
        fallback: Option<&Bound<'_, PyAny>>,
        server_ca: Option<&Bound<'_, PyAny>>,
        client_cert: Option<&Bound<'_, PyAny>>,
        client_key: Option<&Bound<'_, PyAny>>,
        send_token_in_clear: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let mut options = Options::default();
        if let Some(list) = servers.filter(|s| !s.is_none()) {
            options.servers = self::servers(list)?;
        }
        options.token = args::opt_string(token, "token")?;
        if let Some(layout) = layout.filter(|l| !l.is_none()) {
            options.layout = Some(Layout::clone(&*crate::layout::layout_arg(layout)?));
        }
        // Checked here, where the value is still the caller's milliseconds: the client's own
        // check sees a `Duration` and would show one ("not 0ns").
        let ms = |obj, spec: &ClientOptionSpec, default: Duration| -> PyResult<Duration> {
            match args::opt_u64_arg(obj, spec.python)? {
                Some(ms) => spec.millis(Surface::Python, ms).py(),
                None => Ok(default),
            }
        };
        options.max_age = ms(max_age_ms, &MAX_AGE, options.max_age)?;
        options.timeout = ms(timeout_ms, &TIMEOUT, options.timeout)?;
        options.request_timeout = ms(
            request_timeout_ms,
            &REQUEST_TIMEOUT,
            options.request_timeout,
        )?;
        let block = |obj, name, default: usize| -> PyResult<usize> {
            Ok(args::opt_u64_arg(obj, name)?
                .map_or(default, |n| usize::try_from(n).unwrap_or(usize::MAX)))
        };
        options.min_block = block(min_block, "min_block", options.min_block)?;
        options.max_block = block(max_block, "max_block", options.max_block)?;
        options.prefetch = args::boolean(prefetch, "prefetch")?.unwrap_or(options.prefetch);
        options.prefer_first =
            args::boolean(prefer_first, "prefer_first")?.unwrap_or(options.prefer_first);
        options.server_ca = args::opt_path(server_ca, "server_ca")?;
        options.client_cert = args::opt_path(client_cert, "client_cert")?;
        options.client_key = args::opt_path(client_key, "client_key")?;
        options.send_token_in_clear = args::boolean(send_token_in_clear, "send_token_in_clear")?
            .unwrap_or(options.send_token_in_clear);
        if let Some(fallback) = fallback.filter(|f| !f.is_none()) {
            let generator = fallback
                .cast::<PyGenerator>()
                .map_err(|_| wrong_type("fallback", "a flakery.Generator", fallback))?;
            options.fallback = Some(generator.get().owned().ok_or_else(|| {
                crate::errors::invalid_argument(
                    "fallback cannot be the process-wide generator: give it a Generator with a \
                     node ID no server holds (docs/client.md#fallback)",
                )
            })?);
        }
        let inner = py
            .detach(|| flakery_client::Client::new(options))
            .map_err(to_py)?;
        Ok(PyClient {
            layout: Arc::new(inner.layout().clone()),
            inner: Arc::new(inner),
        })
    }

    /// One new ID. From the client's stock in the steady state (the plain method of `fast`
    /// answers that without calling this); waits without the GIL for a block otherwise.
    fn next_id(&self, py: Python<'_>) -> PyResult<i64> {
        source::next_id(py, &*self.inner)
    }

    /// `n` new IDs, increasing within each block (docs/client.md#what-is-guaranteed).
    fn next_ids<'py>(
        &self,
        py: Python<'py>,
        n: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        source::next_ids(py, &*self.inner, n)
    }

    /// One new ID as text: `"decimal"` (the default), or `"base32"` or `"base62"`, whose
    /// strings sort as the IDs do.
    #[pyo3(signature = (format=None), text_signature = "($self, format='decimal')")]
    fn next_id_text(&self, py: Python<'_>, format: Option<&Bound<'_, PyAny>>) -> PyResult<String> {
        source::next_id_text(py, &*self.inner, format)
    }

    /// Takes an ID apart under the servers' layout.
    fn decode(&self, id: &Bound<'_, PyAny>) -> PyResult<PyDecoded> {
        source::decode(id, self.layout.clone())
    }

    /// The servers' layout.
    #[getter]
    fn layout(&self) -> PyLayout {
        PyLayout::new(self.layout.clone())
    }

    /// The servers' base URLs.
    #[getter]
    fn servers(&self) -> Vec<String> {
        self.inner.servers().to_vec()
    }

    /// Stops the client: the IDs it holds are dropped (never given back); later calls raise
    /// `InvalidArgumentError`. Never waits for a server.
    fn close(&self, py: Python<'_>) {
        let client = &self.inner;
        py.detach(|| client.close());
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    /// Closes the client; exceptions propagate.
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

    /// The servers and the layout; never the token.
    fn __repr__(&self) -> String {
        let servers: Vec<String> = self
            .inner
            .servers()
            .iter()
            .map(|s| format!("'{s}'"))
            .collect();
        format!(
            "Client(servers=[{}], layout='{}')",
            servers.join(", "),
            self.layout
        )
    }
}

/// `Client.next_id` as a plain method: the stock's ID, else the pyo3 method above.
struct ClientNextId;

static CLIENT_SLOW: std::sync::OnceLock<Py<PyAny>> = std::sync::OnceLock::new();

impl NoArgs for ClientNextId {
    #[inline(always)]
    unsafe fn fast(slf: *mut ffi::PyObject) -> Option<i64> {
        // SAFETY: the GIL is held and `slf` is a `Client` (the method's descriptor checked it;
        // the class is final), as `NoArgs::fast` promises.
        let client = unsafe {
            let py = Python::assume_attached();
            Bound::ref_from_ptr(py, &slf).cast_unchecked::<PyClient>()
        };
        client.get().inner.try_next_id()
    }

    fn slow() -> &'static std::sync::OnceLock<Py<PyAny>> {
        &CLIENT_SLOW
    }

    const TAKES_SELF: bool = true;
}

/// Adds `Client` to the module, its `next_id` the plain method of `fast`.
pub fn add_class(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyClient>()?;
    let class = m.py().get_type::<PyClient>();
    let slow = class.getattr("next_id")?;
    fast::set_method::<ClientNextId>(
        &class,
        c"next_id",
        c"next_id($self)\n--\n\nOne new ID: from the client's stock in the steady state; waits (without the GIL) for a block otherwise, at most timeout_ms.",
        slow,
    )
}
