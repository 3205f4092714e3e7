//! What every engine of one client shares, in this process and in every `fork()`'s child
//! (which makes an engine of its own but inherits this): whether the client was closed, and
//! the node IDs its servers issue with, against which the fallback generator's is checked.
//!
//! A fallback on a node ID a server holds makes that server's IDs whenever the two share a
//! millisecond and a sequence number: a client cut off from the server uses the fallback while
//! other clients still draw from it. The client learns each server's node from the blocks it
//! takes (the node bits of a block's first and last ID, once a block: never per ID on the hot
//! path). From the moment a block shows the node the fallback has, or a fallback ID shows a
//! node a block showed, the configuration is known wrong and the client fails closed: every
//! later call fails with `invalid_argument` naming the node, in every fork generation, until
//! the client is built again with another fallback.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering::Acquire, Ordering::Release};
use std::sync::Mutex;

use flakery::option_table as table;
use flakery::{fork, Error, Generator, Layout, NodeId, Slot};

pub struct Shared {
    /// `close()` was called (in this process or in a parent before the fork).
    closed: AtomicBool,
    /// `seen.refusal` is set: read without the lock by every call that reaches the engine.
    refused: AtomicBool,
    /// Taken inside a fork section (`fork::lock`): a child never finds it held.
    seen: Mutex<Seen>,
    datacenter: Option<Slot>,
    worker: Option<Slot>,
}

#[derive(Default)]
struct Seen {
    /// A server node's bits (in place in the ID), and the server whose block showed it first.
    nodes: HashMap<u64, String>,
    refusal: Option<Error>,
}

impl Shared {
    pub fn new(layout: &Layout) -> Self {
        Shared {
            closed: AtomicBool::new(false),
            refused: AtomicBool::new(false),
            seen: Mutex::new(Seen::default()),
            datacenter: layout.datacenter(),
            worker: layout.worker(),
        }
    }

    pub fn close(&self) {
        self.closed.store(true, Release);
    }

    /// The error every call fails with from now on, if any: closed, or refused.
    pub fn failure(&self) -> Option<Error> {
        if self.closed.load(Acquire) {
            return Some(Error::invalid_argument("the client is closed"));
        }
        if self.refused.load(Acquire) {
            return fork::lock(&self.seen).refusal.clone();
        }
        None
    }

    /// The datacenter and worker bits of `id` (a layout with neither has one node: 0).
    #[inline]
    fn node_of(&self, id: i64) -> u64 {
        let mask = |slot: Option<Slot>| slot.map_or(0, |s| s.put(s.max()));
        id as u64 & (mask(self.datacenter) | mask(self.worker))
    }

    fn node_bits(&self, node: NodeId) -> u64 {
        let put = |slot: Option<Slot>, value: u64| slot.map_or(0, |s| s.put(value & s.max()));
        put(self.datacenter, node.datacenter_id) | put(self.worker, node.worker_id)
    }

    /// A block of `ids` came from `server`: its nodes are remembered, and the client is
    /// refused if the fallback's node (now) is one a server has used. Answers the refusal.
    pub fn saw_block(
        &self,
        ids: &[i64],
        server: &str,
        fallback: Option<&Generator>,
    ) -> Option<Error> {
        let (first, last) = (ids.first()?, ids.last()?);
        let mut seen = fork::lock(&self.seen);
        for node in [self.node_of(*first), self.node_of(*last)] {
            seen.nodes.entry(node).or_insert_with(|| server.to_string());
        }
        let fallback = self.node_bits(fallback?.node());
        self.refuse_if_seen(&mut seen, fallback)
    }

    /// The fallback made `ids`: an error (and every later call refused) if one of them has a
    /// node a server has used. Checked on the IDs themselves: a leased fallback's node can
    /// change between two calls.
    pub fn check_fallback(&self, ids: &[i64]) -> Result<(), Error> {
        let mut seen = fork::lock(&self.seen);
        if let Some(refusal) = &seen.refusal {
            return Err(refusal.clone());
        }
        let mut checked = None;
        for &id in ids {
            let node = self.node_of(id);
            if checked != Some(node) {
                if let Some(refusal) = self.refuse_if_seen(&mut seen, node) {
                    return Err(refusal);
                }
                checked = Some(node);
            }
        }
        Ok(())
    }

    fn refuse_if_seen(&self, seen: &mut Seen, node: u64) -> Option<Error> {
        if seen.refusal.is_none() {
            let server = seen.nodes.get(&node)?;
            seen.refusal = Some(self.refusal(node, server));
            self.refused.store(true, Release);
        }
        seen.refusal.clone()
    }

    fn refusal(&self, node: u64, server: &str) -> Error {
        let field =
            |slot: Option<Slot>, name: &str| slot.map(|s| format!("{name} {}", s.get(node)));
        let named: Vec<String> = [
            field(self.datacenter, "datacenter_id"),
            field(self.worker, "worker_id"),
        ]
        .into_iter()
        .flatten()
        .collect();
        let named = match named.is_empty() {
            true => "the layout's only node ID".to_string(),
            false => named.join(", "),
        };
        Error::invalid_argument(format!(
            "{}: the fallback generator's node ID ({named}) is one server {server} issues IDs \
             with, so its IDs could equal that server's; this client refuses every call until \
             it is built with a fallback whose node ID no server can hold (lease it from the \
             servers' own coordinator and namespace, or give it a datacenter ID or worker ID \
             range kept for fallbacks)",
            table::FALLBACK.rust
        ))
        .about(table::FALLBACK.rust)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn twitter_id(datacenter: u64, worker: u64, sequence: u64) -> i64 {
        ((1u64 << 30) | (datacenter << 17) | (worker << 12) | sequence) as i64
    }

    fn generator(datacenter: u64, worker: u64) -> Generator {
        Generator::builder()
            .datacenter_id(datacenter)
            .worker_id(worker)
            .build()
            .unwrap()
    }

    #[test]
    fn a_block_on_the_fallbacks_node_refuses_the_client_naming_the_node() {
        let shared = Shared::new(&Layout::twitter());
        let fallback = generator(1, 3);
        let block = [twitter_id(1, 2, 0), twitter_id(1, 2, 1)];
        assert!(shared
            .saw_block(&block, "http://a:1", Some(&fallback))
            .is_none());
        assert!(shared.failure().is_none());
        assert!(shared.check_fallback(&[twitter_id(1, 3, 5)]).is_ok());
        let block = [twitter_id(1, 3, 0), twitter_id(1, 3, 9)];
        let refusal = shared
            .saw_block(&block, "http://b:2", Some(&fallback))
            .expect("the fallback's node");
        assert_eq!(refusal.code().as_str(), "invalid_argument");
        assert_eq!(refusal.option(), Some(table::FALLBACK.rust));
        let message = refusal.message();
        assert!(
            message.contains("datacenter_id 1, worker_id 3"),
            "{message}"
        );
        assert!(message.contains("http://b:2"), "{message}");
        assert_eq!(shared.failure(), Some(refusal.clone()), "every later call");
        assert_eq!(shared.check_fallback(&[twitter_id(1, 4, 0)]), Err(refusal));
    }

    /// A leased fallback whose node changed to one a server used: its IDs are refused.
    #[test]
    fn a_fallback_id_on_a_node_a_server_used_is_refused() {
        let shared = Shared::new(&Layout::twitter());
        let fallback = generator(0, 7);
        let block = [twitter_id(0, 1, 0), twitter_id(0, 1, 4)];
        assert!(shared
            .saw_block(&block, "http://a:1", Some(&fallback))
            .is_none());
        let ids = [
            twitter_id(0, 7, 0),
            twitter_id(0, 7, 1),
            twitter_id(0, 1, 0),
        ];
        let refusal = shared
            .check_fallback(&ids)
            .expect_err("the last is a server's node");
        assert!(refusal.message().contains("worker_id 1"), "{refusal}");
        assert!(shared.failure().is_some());
    }

    #[test]
    fn a_layout_of_one_node_refuses_any_fallback() {
        let layout = Layout::parse("time:41,sequence:12;epoch=1288834974657").unwrap();
        let shared = Shared::new(&layout);
        let fallback = Generator::builder()
            .layout(layout)
            .worker_id(0)
            .build()
            .unwrap();
        let refusal = shared
            .saw_block(&[5, 6], "http://a:1", Some(&fallback))
            .expect("one node: the server's");
        assert!(
            refusal.message().contains("the layout's only node ID"),
            "{refusal}"
        );
    }

    #[test]
    fn closed_is_final() {
        let shared = Shared::new(&Layout::twitter());
        shared.close();
        let failure = shared.failure().expect("closed");
        assert_eq!(failure.code().as_str(), "invalid_argument");
        assert!(failure.message().contains("closed"), "{failure}");
    }
}
