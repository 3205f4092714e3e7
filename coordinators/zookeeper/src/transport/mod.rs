//! flakery's own ZooKeeper client: one TCP connection and one session, nothing more. It
//! replaced the `zookeeper` crate (0.8), whose hidden reconnect loop retried a refused or
//! closed connection without pause (74,649 connections in 3 s against a server that was
//! still starting), panicked on a refused connection, waited without time limits, and logged
//! an error on every clean stop (docs/keeper.md#zookeeper-connections).
//!
//! - **No reconnect inside.** A client whose connection breaks is done: it reports why (once),
//!   and the lease claims anew with a new client. Connecting (`connect::connect`) is the only
//!   loop, and it waits a capped, jittered backoff between attempts, kept across claims by the
//!   caller.
//! - **Deadlines everywhere.** Connecting, every read and write, and every request has one.
//! - **Per client, nothing process-wide.** Each client has its socket and two threads (a
//!   writer that also pings, a reader); a forked child makes a client of its own.
//! - **Nothing blocks in Drop.** Dropping a client ends its writer, which sends the session's
//!   close (best effort) and shuts the socket; a client given up on raises no alarm.

mod threads;

pub(crate) use threads::start;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Instant;

use crate::proto::{op, Acl, CreateMode, Reader, Stat, Writer, ZkError, ZkResult};

/// A request for the writer thread: its operation, its body, and where its reply goes.
struct Pending {
    op: i32,
    body: Vec<u8>,
    reply: mpsc::Sender<ZkResult<Vec<u8>>>,
}

type Waiting = VecDeque<(i32, mpsc::Sender<ZkResult<Vec<u8>>>)>;

/// What a client's threads and handle share.
struct Shared {
    /// The connection broke (or the session ended): every request answers `ConnectionLoss`.
    broken: AtomicBool,
    /// The handle was dropped or closed the session: the connection's end raises no alarm.
    closing: AtomicBool,
    /// Why the connection broke, for the lease's message.
    cause: Mutex<Option<String>>,
    /// Requests sent and not yet answered, in order (ZooKeeper answers in order).
    waiting: Mutex<Waiting>,
}

impl Shared {
    fn lock_waiting(&self) -> std::sync::MutexGuard<'_, Waiting> {
        self.waiting.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Marks the connection broken for `cause` (the first cause wins) and answers every
    /// waiting request; true the first time.
    fn break_with(&self, cause: String) -> bool {
        let first = !self.broken.swap(true, Ordering::SeqCst);
        if first {
            *self.cause.lock().unwrap_or_else(|e| e.into_inner()) = Some(cause);
        }
        let waiting = std::mem::take(&mut *self.lock_waiting());
        for (_, reply) in waiting {
            let _ = reply.send(Err(ZkError::ConnectionLoss));
        }
        first
    }
}

/// One session with a ZooKeeper server.
pub(crate) struct Client {
    requests: Option<mpsc::Sender<Pending>>,
    shared: Arc<Shared>,
    acl: Vec<Acl>,
}

impl Client {
    /// Whether the connection is up and the session not known to be over.
    pub(crate) fn connected(&self) -> bool {
        !self.shared.broken.load(Ordering::SeqCst) && !self.shared.closing.load(Ordering::SeqCst)
    }

    /// Why the connection broke, if it did.
    pub(crate) fn broken_cause(&self) -> Option<String> {
        self.shared
            .cause
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Sends a request and waits for its reply's body until `deadline` (then
    /// `ConnectionLoss`: the request may or may not have been applied).
    fn call(&self, deadline: Instant, op: i32, body: Vec<u8>) -> ZkResult<Vec<u8>> {
        if !self.connected() {
            return Err(ZkError::ConnectionLoss);
        }
        let (reply, answer) = mpsc::channel();
        let requests = self.requests.as_ref().ok_or(ZkError::ConnectionLoss)?;
        requests
            .send(Pending { op, body, reply })
            .map_err(|_| ZkError::ConnectionLoss)?;
        let left = deadline.saturating_duration_since(Instant::now());
        match answer.recv_timeout(left) {
            Ok(result) => result,
            Err(_) => Err(ZkError::ConnectionLoss),
        }
    }

    fn body() -> Writer {
        Writer::bare()
    }

    pub(crate) fn exists(&self, by: Instant, path: &str) -> ZkResult<Option<Stat>> {
        let mut w = Self::body();
        w.string(path).boolean(false);
        match self.call(by, op::EXISTS, strip(w)) {
            Ok(reply) => Ok(Some(Reader::new(&reply).stat()?)),
            Err(ZkError::NoNode) => Ok(None),
            Err(err) => Err(err),
        }
    }

    pub(crate) fn get_data(&self, by: Instant, path: &str) -> ZkResult<(Vec<u8>, Stat)> {
        let mut w = Self::body();
        w.string(path).boolean(false);
        let reply = self.call(by, op::GET_DATA, strip(w))?;
        let mut r = Reader::new(&reply);
        Ok((r.buffer()?, r.stat()?))
    }

    pub(crate) fn set_data(
        &self,
        by: Instant,
        path: &str,
        data: Vec<u8>,
        version: i32,
    ) -> ZkResult<Stat> {
        let mut w = Self::body();
        w.string(path).buffer(&data).int(version);
        let reply = self.call(by, op::SET_DATA, strip(w))?;
        Reader::new(&reply).stat()
    }

    /// Creates `path` with the client's ACL (see `Settings::acl`).
    pub(crate) fn create(
        &self,
        by: Instant,
        path: &str,
        data: Vec<u8>,
        mode: CreateMode,
    ) -> ZkResult<String> {
        self.create_with(by, path, data, mode, &self.acl)
    }

    fn create_with(
        &self,
        by: Instant,
        path: &str,
        data: Vec<u8>,
        mode: CreateMode,
        acl: &[Acl],
    ) -> ZkResult<String> {
        let flags = match mode {
            CreateMode::Persistent => 0,
            CreateMode::Ephemeral => 1,
        };
        let mut w = Self::body();
        w.string(path).buffer(&data).acl(acl).int(flags);
        let reply = self.call(by, op::CREATE, strip(w))?;
        Reader::new(&reply).string()
    }

    pub(crate) fn delete(&self, by: Instant, path: &str, version: i32) -> ZkResult<()> {
        let mut w = Self::body();
        w.string(path).int(version);
        self.call(by, op::DELETE, strip(w)).map(drop)
    }

    pub(crate) fn get_children(&self, by: Instant, path: &str) -> ZkResult<Vec<String>> {
        let mut w = Self::body();
        w.string(path).boolean(false);
        let reply = self.call(by, op::GET_CHILDREN, strip(w))?;
        Reader::new(&reply).strings()
    }

    pub(crate) fn get_acl(&self, by: Instant, path: &str) -> ZkResult<(Vec<Acl>, Stat)> {
        let mut w = Self::body();
        w.string(path);
        let reply = self.call(by, op::GET_ACL, strip(w))?;
        let mut r = Reader::new(&reply);
        Ok((r.acl()?, r.stat()?))
    }

    fn set_acl(&self, by: Instant, path: &str, acl: &[Acl], aversion: i32) -> ZkResult<Stat> {
        let mut w = Self::body();
        w.string(path).acl(acl).int(aversion);
        let reply = self.call(by, op::SET_ACL, strip(w))?;
        Reader::new(&reply).stat()
    }

    /// Ends the session (its ephemeral nodes go at once), waiting for the answer until `by`.
    pub(crate) fn close(&self, by: Instant) -> ZkResult<()> {
        // Before sending: the connection's end that follows is expected, not an alarm.
        let (reply, answer) = mpsc::channel();
        let requests = self.requests.as_ref().ok_or(ZkError::ConnectionLoss)?;
        self.shared.closing.store(true, Ordering::SeqCst);
        requests
            .send(Pending {
                op: op::CLOSE_SESSION,
                body: Vec::new(),
                reply,
            })
            .map_err(|_| ZkError::ConnectionLoss)?;
        let left = by.saturating_duration_since(Instant::now());
        answer
            .recv_timeout(left)
            .unwrap_or(Err(ZkError::ConnectionLoss))
            .map(drop)
    }

    /// Creates `path` and its parents as persistent nodes (existing ones are fine). From
    /// `root` down they have the client's ACL (an existing one is given it: `secure`); the
    /// parents above `root` (`/flakery`, a chroot) are left open to every client, so that
    /// namespaces of other credentials, or of none, can live beside this one: what protects a
    /// namespace is that its own znodes cannot be changed or deleted, and a znode with
    /// children cannot be deleted at all.
    pub(crate) fn create_parents(&self, by: Instant, path: &str, root: &str) -> ZkResult<()> {
        let mut prefix = String::new();
        for segment in path.split('/').filter(|s| !s.is_empty()) {
            prefix.push('/');
            prefix.push_str(segment);
            let own = prefix.len() >= root.len();
            let acl = if own { self.acl.clone() } else { Acl::open() };
            match self.create_with(by, &prefix, Vec::new(), CreateMode::Persistent, &acl) {
                Ok(_) => {}
                Err(ZkError::NodeExists) if own => self.secure(by, &prefix)?,
                Err(ZkError::NodeExists) => {}
                Err(err) => return Err(err),
            }
        }
        Ok(())
    }

    /// Gives the existing znode `path` this client's ACL when it has another: a znode made
    /// before credentials were configured (open to everyone) becomes writable by this identity
    /// only. Fails with `NoAuth` when another identity controls it: flakery does not take a
    /// znode it cannot administer (see docs/security.md#zookeeper). Without credentials the
    /// ACL is left as it is.
    pub(crate) fn secure(&self, by: Instant, path: &str) -> ZkResult<()> {
        if self.acl == Acl::open() {
            return Ok(());
        }
        let (acl, stat) = match self.get_acl(by, path) {
            Ok(found) => found,
            Err(ZkError::NoNode) => return Ok(()),
            Err(err) => return Err(err),
        };
        if same_entries(&acl, &self.acl) {
            return Ok(());
        }
        match self.set_acl(by, path, &self.acl.clone(), stat.aversion) {
            Ok(_) => Ok(()),
            // Changed at the same time by another holder with the same credentials.
            Err(ZkError::BadVersion) => Ok(()),
            Err(err) => Err(err),
        }
    }
}

fn same_entries(a: &[Acl], b: &[Acl]) -> bool {
    a.len() == b.len() && a.iter().all(|entry| b.contains(entry))
}

/// The body of a request built with `Client::body` (without the length prefix).
fn strip(w: Writer) -> Vec<u8> {
    w.finish().split_off(4)
}

impl Drop for Client {
    fn drop(&mut self) {
        // A client given up on reports nothing more; its writer closes the session.
        self.shared.closing.store(true, Ordering::SeqCst);
        self.requests = None;
    }
}
