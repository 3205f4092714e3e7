//! A client of `flakery serve` with the calls of a [`flakery::Generator`]: `next_id`,
//! `next_ids`, `fill`, `decode`, the text forms. Switching between an embedded generator and
//! a central server is one line.
//!
//! ```no_run
//! let client = flakery_client::Client::builder()
//!     .server("http://127.0.0.1:8080")
//!     .server("http://127.0.0.1:8081")
//!     .build()?;
//! let id = client.next_id()?;
//! let parts = client.decode(id)?;
//! # Ok::<(), flakery_client::Error>(())
//! ```
//!
//! IDs come in blocks from `GET /v1/ids?count=N` and are handed out locally: `next_id` in the
//! steady state is one atomic add on the block its thread holds (no lock), while a thread of
//! the client asks for the next block when half of the current one is used (prefetch; a whole
//! block ahead when blocks of the largest size go faster than two round trips). A block's
//! size adapts to the rate of use between `min_block` and `max_block` (as Meituan Leaf's segment step does: a block that lasts
//! under half of a quarter of `max_age` doubles the next, one that lasts over twice that halves
//! it). An ID held longer than `max_age` is dropped, never handed out. A server that fails,
//! times out or answers 503 is skipped and asked again after a backoff (100 ms doubling to
//! 3 s); every call returns or fails within `timeout` with a stable code
//! ([`ErrorCode`]); an optional fallback generator with a node ID of its own takes over when
//! every server is down (one on a node ID a server issues with is refused, `shared`).
//!
//! Never a duplicate: each block is the server's answer to one request, handed to this client
//! only; after `fork()` the child makes its own stock and never hands out the parent's (the
//! core's fork detection, `current`); a client dropped or closed gives nothing back, and its
//! `Drop` never waits (its thread ends by itself after its request in flight).
//!
//! Why plain HTTP/1.1 and `ureq` rather than gRPC: the HTTP batch route gives the same IDs
//! (up to 100,000 a request) with the same errors, and `/readyz`'s 503s; a blocking client
//! keeps no async runtime, whose threads a `fork()`'s child would not have and whose state it
//! would inherit half-changed, and it is a few hundred kilobytes in each binding instead of
//! tokio, hyper, h2 and tonic. `StreamIds` would save a request per block, but its flow
//! control lets the server make IDs ahead of their use, against `max_age`; a block of IDs a
//! request keeps each block's age known.

mod current;
mod deadline;
mod engine;
mod failover;
mod failure;
mod held;
mod options;
mod shared;
mod sizing;
mod stock;
mod ticks;
mod tls;
mod transport;

use std::sync::Arc;
use std::time::Duration;

use flakery::{Decoded, Generator, IdFormat, Layout};

/// The core's error: the client's own codes (`servers_unavailable`, `unauthorized`,
/// `bad_answer`) are in its one table, with the codes of the fallback generator and of bad
/// arguments.
pub use flakery::{Error, ErrorCode, Result};
pub use options::{split_servers, Options, MAX_BLOCK, SERVERS_ENV, TOKEN_ENV};

use current::Current;
use deadline::Deadline;
use engine::Engine;
use options::Settings;
use shared::Shared;

/// IDs from `flakery serve`, with the calls of a `Generator`. Share it between threads
/// (`Arc<Client>`); it is `Send + Sync`.
pub struct Client {
    /// Names the blocks its engines' threads hold (`held`).
    owner: u64,
    settings: Arc<Settings>,
    /// Closed, and the servers' node IDs against the fallback's: shared by the engines of
    /// every fork generation, so a child inherits a close or a refusal.
    shared: Arc<Shared>,
    current: Current,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("servers", &self.settings.servers)
            .field("layout", &self.settings.layout.to_string())
            .field(
                "token",
                &self.settings.authorization.as_ref().map(|_| "<hidden>"),
            )
            .finish()
    }
}

impl Client {
    pub fn builder() -> Builder {
        Builder::default()
    }

    pub fn new(options: Options) -> Result<Client> {
        let settings = Arc::new(Settings::resolve(options)?);
        let shared = Arc::new(Shared::new(&settings.layout));
        let owner = held::next_owner();
        let engine = Engine::new(
            Arc::clone(&settings),
            Arc::clone(&shared),
            owner,
            flakery::fork::generation(),
        );
        Ok(Client {
            owner,
            settings,
            shared,
            current: Current::new(engine),
        })
    }

    fn engine(&self) -> &Arc<Engine> {
        self.current.get(|generation| {
            let shared = Arc::clone(&self.shared);
            Engine::new(Arc::clone(&self.settings), shared, self.owner, generation)
        })
    }

    /// One new ID. From the block this thread holds in the steady state; it waits for a
    /// block (at most `timeout`) only when the stock is empty.
    #[inline]
    pub fn next_id(&self) -> Result<i64> {
        match held::claim(self.owner) {
            Some((id, false)) => Ok(id),
            claimed => self.next_id_from_engine(claimed),
        }
    }

    /// The held block had nothing, or its claim left the stock low.
    #[cold]
    #[inline(never)]
    fn next_id_from_engine(&self, claimed: Option<(i64, bool)>) -> Result<i64> {
        match self.engine().next_id(claimed) {
            Ok(id) => Ok(id),
            Err(error) => {
                let id = self.fallback(error)?.next_id()?;
                self.checked_fallback(&mut [id])?;
                Ok(id)
            }
        }
    }

    /// One new ID if the stock holds one now, without waiting; `None` when `next_id` would
    /// wait for a block or fail (then `next_id` says which). For a binding whose caller holds
    /// a lock of its own (Python's GIL) only while the call cannot block.
    #[inline]
    pub fn try_next_id(&self) -> Option<i64> {
        match held::claim(self.owner) {
            Some((id, false)) => Some(id),
            claimed => self.engine().try_next_id(claimed),
        }
    }

    /// `n` new IDs, increasing within each block (see the docs on order).
    pub fn next_ids(&self, n: usize) -> Result<Vec<i64>> {
        let mut ids = vec![0; n];
        self.fill(&mut ids)?;
        Ok(ids)
    }

    /// Fills `out` with new IDs.
    pub fn fill(&self, out: &mut [i64]) -> Result<()> {
        self.batch(out.len()).fill(out)
    }

    /// A call of `count` IDs that its caller fills a chunk at a time ([`Batch::fill`]), all
    /// within the one deadline that `fill` of `count` IDs has, which starts now: for a
    /// binding that must not hold the whole batch twice, or gives a lock back between chunks.
    pub fn batch(&self, count: usize) -> Batch<'_> {
        Batch {
            client: self,
            deadline: self.engine().deadline(count),
        }
    }

    /// One new ID in a text form (decimal, or base32/base62, which sort as the IDs do).
    pub fn next_id_text(&self, format: IdFormat) -> Result<String> {
        format.format(self.next_id()?)
    }

    /// The parts of `id` under the servers' layout.
    pub fn decode(&self, id: i64) -> Result<Decoded> {
        flakery::decode(id, &self.settings.layout)
    }

    /// The layout the servers issue IDs of (checked against each server's `/v1/layout`).
    pub fn layout(&self) -> &Layout {
        &self.settings.layout
    }

    pub fn servers(&self) -> &[String] {
        &self.settings.servers
    }

    /// What this process's client holds: for tests and metrics.
    pub fn stats(&self) -> Stats {
        let (held, dropped_for_age, refills_asked) = self.engine().stats();
        Stats {
            held,
            dropped_for_age,
            refills_asked,
        }
    }

    /// The error every call fails with from now on, if any: closed, or refused. For a binding
    /// that settles a call later than it took its IDs (Node's Promises): one settled after
    /// `close` fails as a call made then would.
    pub fn failure(&self) -> Option<flakery::Error> {
        self.shared.failure()
    }

    /// Stops the client for good: the IDs it holds are dropped (never given back), every
    /// later call fails with `invalid_argument`, here and in any child forked after this.
    /// Its thread has ended when this returns, unless it was in a request: that one ends by
    /// itself after it (within `request_timeout`); this never waits for a server.
    pub fn close(&self) {
        self.shared.close();
        if let Some(refiller) = self.current.own().and_then(|engine| engine.stop()) {
            // Between requests: it returns at its next look at `stop`. A client made and
            // closed in a loop would otherwise leave threads that pile up when they end late.
            let _ = refiller.join();
        }
    }

    /// With every server unavailable, the fallback generator (its node ID is its own: checked
    /// on what it makes, `checked_fallback`). A wrong token or a server that is not one stays
    /// an error: it is a configuration to fix.
    fn fallback(&self, error: Error) -> Result<&Generator> {
        match &self.settings.given.fallback {
            Some(generator) if error.code() == ErrorCode::ServersUnavailable => Ok(generator),
            _ => Err(error),
        }
    }

    /// The fallback made `ids`: none may have a node a server has used (then the client is
    /// refused for good, and `ids` are zeroed: never handed out).
    fn checked_fallback(&self, ids: &mut [i64]) -> Result<()> {
        let checked = self.shared.check_fallback(ids);
        if checked.is_err() {
            ids.fill(0);
            if let Some(engine) = self.current.own() {
                // Not joined (a call's path waits for no other thread): the refiller ends at
                // its next look at `stop`, and a later `close()` has no thread left to join.
                drop(engine.stop());
            }
        }
        checked
    }
}

/// One call of a number of IDs, filled in chunks within its one deadline (`Client::batch`).
#[derive(Debug)]
pub struct Batch<'a> {
    client: &'a Client,
    deadline: Deadline,
}

impl Batch<'_> {
    /// Fills `chunk`, a part of the call's IDs, waiting at most until the call's deadline:
    /// once it has passed, a chunk the stock cannot fill at once fails as the call would
    /// (or comes from the fallback).
    pub fn fill(&mut self, chunk: &mut [i64]) -> Result<()> {
        let client = self.client;
        match client.engine().fill(chunk, &self.deadline) {
            Ok(()) => Ok(()),
            Err(error) => {
                client.fallback(error)?.fill(chunk)?;
                client.checked_fallback(chunk)
            }
        }
    }
}

/// What a client holds, in this process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stats {
    /// IDs in the stock.
    pub held: usize,
    /// IDs dropped unused because they grew older than `max_age`.
    pub dropped_for_age: u64,
    /// Times a call asked the client's thread for a block: once a block with prefetch (when
    /// the stock runs low), and when a call finds the stock empty.
    pub refills_asked: u64,
}

/// Builds a [`Client`]; every setting is optional but a server (or `FLAKERY_SERVERS`).
#[derive(Debug, Default, Clone)]
pub struct Builder {
    options: Options,
}

impl Builder {
    /// A server's base URL, `http://host:port`; call once per server, or give several
    /// separated by commas.
    pub fn server(mut self, url: &str) -> Self {
        self.options.servers.extend(split_servers(url));
        self
    }

    /// The bearer token (default: `FLAKERY_SERVER_TOKEN`). Never shown by `Debug` or errors.
    pub fn token(mut self, token: impl Into<String>) -> Self {
        self.options.token = Some(token.into());
        self
    }

    /// The servers' layout (default: `FLAKERY_LAYOUT`, else twitter).
    pub fn layout(mut self, layout: Layout) -> Self {
        self.options.layout = Some(layout);
        self
    }

    /// An ID held longer than this is dropped (default 10 s).
    pub fn max_age(mut self, max_age: Duration) -> Self {
        self.options.max_age = max_age;
        self
    }

    /// Every call returns or fails within this (default 5 s); a batch within this plus the
    /// time its count takes at the layout's rate, once for the whole call however a binding
    /// fills it.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.options.timeout = timeout;
        self
    }

    /// One request may take this long before the next server is asked (default 1 s).
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.options.request_timeout = timeout;
        self
    }

    /// The block size's limits (default 16 to 10000; at most 100000).
    pub fn block_sizes(mut self, min: usize, max: usize) -> Self {
        self.options.min_block = min;
        self.options.max_block = max;
        self
    }

    /// Ask for the next block before the stock runs out (default true).
    pub fn prefetch(mut self, prefetch: bool) -> Self {
        self.options.prefetch = prefetch;
        self
    }

    /// Used when every server is unavailable: lease its node ID from the servers' own
    /// coordinator and namespace (it cannot collide), or give it one no server can hold (its
    /// own datacenter ID, or a range of worker IDs kept for it). One on a node ID a server
    /// issues with is refused: every call fails with `invalid_argument` from the first block
    /// that shows it (docs/client.md, Fallback).
    pub fn fallback(mut self, generator: Generator) -> Self {
        self.options.fallback = Some(Arc::new(generator));
        self
    }

    /// Ask the servers in the order given, the first first (default false: each process
    /// starts at a server of its own, which spreads the load).
    pub fn prefer_first(mut self, prefer_first: bool) -> Self {
        self.options.prefer_first = prefer_first;
        self
    }

    /// The CAs (a PEM file) an `https://` server's certificate must be signed by (default:
    /// `FLAKERY_SERVER_CA`, else the system's roots).
    pub fn server_ca(mut self, path: impl Into<std::path::PathBuf>) -> Self {
        self.options.server_ca = Some(path.into());
        self
    }

    /// A certificate (PEM, with its chain) and its key for servers that ask for one (mutual
    /// TLS; default: `FLAKERY_CLIENT_CERT` and `FLAKERY_CLIENT_KEY`).
    pub fn client_cert(
        mut self,
        cert: impl Into<std::path::PathBuf>,
        key: impl Into<std::path::PathBuf>,
    ) -> Self {
        self.options.client_cert = Some(cert.into());
        self.options.client_key = Some(key.into());
        self
    }

    /// Send the token over `http://` to a host that is not loopback (default false: such a
    /// client is refused with `invalid_argument`).
    pub fn send_token_in_clear(mut self, send: bool) -> Self {
        self.options.send_token_in_clear = send;
        self
    }

    pub fn options(&self) -> &Options {
        &self.options
    }

    pub fn build(self) -> Result<Client> {
        Client::new(self.options)
    }
}
