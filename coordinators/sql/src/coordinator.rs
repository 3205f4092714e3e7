//! The lease protocol on a SQL table: one row per node index of a namespace, with its
//! holder, its expiry in the database's clock and its high-water mark.
//!
//! Claiming is one transaction (`claim`). Renewals and mark writes are single UPDATEs that
//! match the holder and an unexpired row (and, for the mark, the mark it replaces), extending
//! the expiry to the database's now plus the term.

use std::mem::ManuallyDrop;
use std::sync::Arc;
use std::time::Duration;

use flakery::clock::Clock;
use flakery::error::{Error, ErrorCode};
use flakery::layout::Layout;
use flakery::lease::coordinator::{Claim, Coordinator, Failure, Token};
use flakery::lease::node::NodeSource;

use super::claim::{claim_in, mark_text, ClaimRequest, Claimed};
use super::dialect::Dialect;
use super::link::{Link, Unanswered};
use flakery::{DatabaseKind, DatabaseUrl};

/// What a lease of this database was made with; a forked child leases anew with the same.
#[derive(Clone)]
struct Settings {
    url: DatabaseUrl,
    namespace: String,
    term_ms: i64,
    clock: Arc<dyn Clock>,
    datacenter: Option<Datacenter>,
}

/// A datacenter fixed alone: the node indexes of its workers, `from` to below `to`, in the
/// namespace's one sequence of rows (so holders of whole node IDs and holders under a
/// fixed datacenter never hold the same node ID).
#[derive(Clone, Copy, Debug)]
struct Datacenter {
    id: u64,
    from: i64,
    to: i64,
}

/// One holder's connection to the lease table (see the module's documentation).
pub struct SqlCoordinator {
    settings: Settings,
    holder: i64,
    holder_name: String,
    /// Never dropped in a forked child: its thread is the parent's, and so is its socket.
    link: ManuallyDrop<Option<Link>>,
    owner_pid: u32,
}

impl SqlCoordinator {
    /// A coordinator for `url` (not connected yet: the first claim connects), leasing in
    /// `namespace` with claims that last `term_ms` in the database's clock. `clock` is the
    /// keeper's: request deadlines are instants of it.
    pub fn new(
        url: DatabaseUrl,
        namespace: &str,
        term_ms: i64,
        clock: Arc<dyn Clock>,
    ) -> Result<SqlCoordinator, Error> {
        let compiled = match url.kind() {
            DatabaseKind::Postgres => cfg!(feature = "postgres"),
            DatabaseKind::MySql => cfg!(feature = "mysql"),
        };
        if !compiled {
            return Err(Error::invalid_argument(format!(
                "a {} lease was asked for ({url}), but this flakery was built without its '{}' \
                 feature",
                url.kind().name(),
                match url.kind() {
                    DatabaseKind::Postgres => "postgres",
                    DatabaseKind::MySql => "mysql",
                }
            )));
        }
        if !(1..=3_600_000).contains(&term_ms) {
            return Err(Error::invalid_argument(format!(
                "lease term {term_ms} ms is not between 1 ms and one hour"
            )));
        }
        Ok(SqlCoordinator::with_settings(Settings {
            url,
            namespace: namespace.to_string(),
            term_ms,
            clock,
            datacenter: None,
        }))
    }

    /// Leases only worker IDs of datacenter `id` of `layout` (a datacenter the layout holds:
    /// `lease::resolve` checks it).
    pub fn within_datacenter(mut self, id: u64, layout: &Layout) -> SqlCoordinator {
        let (from, to) = datacenter_range(id, layout);
        self.settings.datacenter = Some(Datacenter { id, from, to });
        self
    }

    fn with_settings(settings: Settings) -> SqlCoordinator {
        let pid = std::process::id();
        SqlCoordinator {
            settings,
            holder: holder_id(),
            holder_name: format!("{}:{pid}", host_name()),
            link: ManuallyDrop::new(None),
            owner_pid: pid,
        }
    }

    /// This holder's ID, as stored in the `holder` column.
    pub fn holder(&self) -> i64 {
        self.holder
    }

    fn remaining(&self, deadline_ms: i64) -> Duration {
        let left = deadline_ms.saturating_sub(self.settings.clock.now_ms());
        Duration::from_millis(left.max(0) as u64)
    }

    /// Runs `request` on the connection (opened first if there is none) by `deadline_ms`;
    /// any failure gives the connection up, and the next request opens a new one.
    fn request<T: Send + 'static>(
        &mut self,
        deadline_ms: i64,
        request: impl FnOnce(&mut dyn Dialect) -> Result<T, String> + Send + 'static,
    ) -> Result<T, Unanswered> {
        if self.link.is_none() {
            let url = self.settings.url.clone();
            let timeout = self.remaining(deadline_ms);
            let connect = Box::new(move || {
                let mut db = connect(&url, timeout)?;
                db.ensure_lease_table()?;
                Ok(db)
            });
            *self.link = Some(Link::open(connect, timeout, &self.settings.url)?);
        }
        let timeout = self.remaining(deadline_ms);
        let result = match self.link.as_ref() {
            Some(link) => link.call(timeout, request),
            None => Err(Unanswered::Failed("not connected".into())),
        };
        if result.is_err() {
            *self.link = None;
        }
        result
    }

    fn why(&self, unanswered: Unanswered, deadline_ms: i64, started_ms: i64) -> String {
        match unanswered {
            Unanswered::Timeout => format!(
                "{} did not answer within {} ms",
                self.describe(),
                deadline_ms.saturating_sub(started_ms).max(0)
            ),
            Unanswered::Failed(why) => {
                format!("{}: {}", self.describe(), self.settings.url.scrub(&why))
            }
        }
    }

    fn lost(&self, index: u64, what: &str) -> Failure {
        Failure::Lost(format!(
            "{what}: node index {index} is no longer held by this holder in {} (another holder \
             took it, or its expiry passed)",
            self.describe()
        ))
    }
}

/// The node indexes of datacenter `id`'s workers in `layout`: `from` to below `to`.
pub(super) fn datacenter_range(id: u64, layout: &Layout) -> (i64, i64) {
    let worker_bits = layout.worker().map_or(0, |slot| slot.bits);
    let index = |datacenter: u64| {
        i64::try_from(datacenter.checked_shl(worker_bits).unwrap_or(u64::MAX)).unwrap_or(i64::MAX)
    };
    (index(id), index(id.saturating_add(1)))
}

fn connect(url: &DatabaseUrl, timeout: Duration) -> Result<Box<dyn Dialect>, String> {
    match url.kind() {
        #[cfg(feature = "postgres")]
        DatabaseKind::Postgres => super::postgres::connect(url, timeout),
        #[cfg(feature = "mysql")]
        DatabaseKind::MySql => super::mysql::connect(url, timeout),
        #[allow(unreachable_patterns)]
        _ => {
            let _ = timeout;
            Err("this database's client is not built in".into())
        }
    }
}

/// Opens a connection to `url` (for a census or uid-generator's table), by `timeout`.
pub(super) fn open_link(url: &DatabaseUrl, timeout: Duration) -> Result<Link, Unanswered> {
    let server = url.clone();
    Link::open(Box::new(move || connect(&server, timeout)), timeout, url)
}

impl std::fmt::Debug for SqlCoordinator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqlCoordinator")
            .field("url", &self.settings.url)
            .field("namespace", &self.settings.namespace)
            .field("term_ms", &self.settings.term_ms)
            .field("datacenter", &self.settings.datacenter.map(|d| d.id))
            .field("holder", &self.holder)
            .finish()
    }
}

impl Coordinator for SqlCoordinator {
    fn source(&self) -> NodeSource {
        NodeSource::Database
    }

    fn describe(&self) -> String {
        let datacenter = self
            .settings
            .datacenter
            .map(|d| format!(", datacenter {}", d.id))
            .unwrap_or_default();
        format!(
            "{} at {} (namespace '{}'{datacenter})",
            self.settings.url.kind().name(),
            self.settings.url.host(),
            self.settings.namespace
        )
    }

    fn term_ms(&self) -> i64 {
        self.settings.term_ms
    }

    fn claim_within(
        &mut self,
        count: u64,
        mark_limit_ms: i64,
        deadline_ms: i64,
    ) -> Result<Claim, Error> {
        let started_ms = self.settings.clock.now_ms();
        let holder = self.holder;
        let count = i64::try_from(count).unwrap_or(i64::MAX);
        let (from, to) = match self.settings.datacenter {
            Some(d) => (d.from, d.to.min(count)),
            None => (0, count),
        };
        let ask = ClaimRequest {
            namespace: self.settings.namespace.clone(),
            from,
            to,
            holder,
            holder_name: self.holder_name.clone(),
            term_ms: self.settings.term_ms,
            mark_limit_ms,
        };
        let claimed = self
            .request(deadline_ms, move |db| claim_in(db, &ask))
            .map_err(|unanswered| {
                Error::new(
                    ErrorCode::CoordinatorUnavailable,
                    self.why(unanswered, deadline_ms, started_ms),
                )
            })?;
        match claimed {
            Claimed::Index {
                index,
                floor_ms,
                now_ms,
            } => Ok(Claim {
                index: index as u64,
                floor_ms,
                server_ms: Some(now_ms),
                token: Token { holder, version: 0 },
            }),
            Claimed::Exhausted { unreadable } => {
                let what = match self.settings.datacenter {
                    Some(d) => format!("all {} worker IDs of datacenter {}", to - from, d.id),
                    None => format!("all {count} node IDs"),
                };
                let mut message = format!(
                    "{what} are held in {} (table {})",
                    self.describe(),
                    super::LEASE_TABLE
                );
                if !unreadable.is_empty() {
                    message.push_str(&format!(
                        "; these are free but their high-water marks (column mark) cannot be \
                         read or are too far ahead, so they are not used: {}",
                        unreadable.join("; ")
                    ));
                }
                Err(Error::new(ErrorCode::WorkerIdsExhausted, message))
            }
        }
    }

    fn renew(&mut self, claim: &mut Claim, deadline_ms: i64) -> Result<(), Failure> {
        let started_ms = self.settings.clock.now_ms();
        let (namespace, index, holder, term_ms) = (
            self.settings.namespace.clone(),
            claim.index as i64,
            self.holder,
            self.settings.term_ms,
        );
        match self.request(deadline_ms, move |db| {
            db.renew(&namespace, index, holder, term_ms)
        }) {
            Ok(true) => Ok(()),
            Ok(false) => Err(self.lost(claim.index, "renewal refused")),
            Err(unanswered) => Err(Failure::Unanswered(self.why(
                unanswered,
                deadline_ms,
                started_ms,
            ))),
        }
    }

    fn write_mark(
        &mut self,
        claim: &mut Claim,
        expected_ms: Option<i64>,
        new_ms: i64,
        deadline_ms: i64,
    ) -> Result<(), Failure> {
        let started_ms = self.settings.clock.now_ms();
        let (namespace, index, holder, term_ms) = (
            self.settings.namespace.clone(),
            claim.index as i64,
            self.holder,
            self.settings.term_ms,
        );
        let (expected, new) = (mark_text(expected_ms), new_ms.to_string());
        match self.request(deadline_ms, move |db| {
            db.write_mark(&namespace, index, holder, term_ms, &expected, &new)
        }) {
            Ok(true) => {
                claim.token.version += 1;
                Ok(())
            }
            Ok(false) => Err(self.lost(claim.index, "high-water mark write refused")),
            Err(unanswered) => Err(Failure::Unanswered(self.why(
                unanswered,
                deadline_ms,
                started_ms,
            ))),
        }
    }

    fn release(&mut self, claim: Claim, mark_ms: Option<i64>, deadline_ms: i64) {
        let (namespace, index, holder) = (
            self.settings.namespace.clone(),
            claim.index as i64,
            self.holder,
        );
        let _ = self.request(deadline_ms, move |db| {
            db.release(
                &namespace,
                index,
                holder,
                mark_ms.map(|ms| ms.to_string()).as_deref(),
            )
        });
    }

    fn reopen(&self) -> Result<Box<dyn Coordinator>, Error> {
        Ok(Box::new(SqlCoordinator::with_settings(
            self.settings.clone(),
        )))
    }
}

impl Drop for SqlCoordinator {
    fn drop(&mut self) {
        if std::process::id() == self.owner_pid {
            // SAFETY: dropped once, here, and never used again.
            unsafe { ManuallyDrop::drop(&mut self.link) };
        }
    }
}

/// A holder ID no other holder has: random, from the kernel (a clock-and-pid mix if
/// /dev/urandom cannot be read).
fn holder_id() -> i64 {
    use std::io::Read;
    let mut bytes = [0u8; 8];
    let random = std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .is_ok();
    if !random {
        let mixed = (flakery::clock::SystemClock.now_ms() as u64).rotate_left(20)
            ^ u64::from(std::process::id()).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        bytes = mixed.to_le_bytes();
    }
    // Positive, so that it reads the same in every client.
    (u64::from_le_bytes(bytes) >> 1) as i64
}

/// This host's name, at most 64 bytes (a name that is not UTF-8 is read with U+FFFD, three
/// bytes each, so the cut must fall on a character boundary).
pub(super) fn host_name() -> String {
    let mut name = flakery::lease::environment::host_name().unwrap_or_default();
    flakery::truncate::truncate(&mut name, 64);
    name
}
