//! A datacenter fixed alone under a database lease (see `db_harness` for the servers): the
//! worker ID is leased under it from the table, in the namespace's one sequence of node IDs,
//! so that holders of whole node IDs and holders under a datacenter never share one.
#![cfg(unix)]

use std::process::Stdio;

use flakery::lease::Coordinator;
use flakery::{decode, ErrorCode, Generator, Layout, NodeSource, Options};
use flakery_sql::DatabaseMode;

#[path = "../../../core/tests/common/mod.rs"]
mod common;
mod db_harness;
use common::ROLE;
use db_harness::{coordinator, each_kind, shared, soon};

/// Two datacenter bits and two worker bits: 16 node IDs, four per datacenter.
const SMALL: &str = "time:41,datacenter:2,worker:2,sequence:12;epoch=1288834974657";

fn options(url: &str, namespace: &str, datacenter_id: Option<u64>) -> Options {
    Options {
        database_url: Some(flakery_sql::DatabaseUrl::parse(url).unwrap()),
        namespace: Some(namespace.to_string()),
        layout: Some(Layout::parse(SMALL).unwrap()),
        datacenter_id,
        ..Options::default()
    }
}

/// (datacenter, worker) of the generator's IDs.
fn node_of(generator: &Generator) -> (u64, u64) {
    let parts = decode(generator.next_id().unwrap(), generator.layout()).unwrap();
    (parts.datacenter_id, parts.worker_id)
}

#[test]
fn child_entry_point() {
    if std::env::var(ROLE).as_deref() == Ok("db-datacenter") {
        // Everything from the environment, as a deployed service has it.
        match Generator::new(Options::default()) {
            Ok(generator) => {
                assert_eq!(generator.source(), NodeSource::Database);
                let (datacenter, worker) = node_of(&generator);
                println!("NODE {datacenter} {worker}");
            }
            Err(err) => println!("ERR {}: {}", err.code(), err.message()),
        }
    }
}

#[test]
fn a_datacenter_fixed_alone_leases_its_workers_from_the_table() {
    each_kind(|kind| {
        let url = &shared(kind).url;
        let namespace = format!("datacenter-{}", kind.arg());
        // Holders of whole node IDs take 0..=4; index 4 is datacenter 1's worker 0.
        let whole: Vec<Generator> = (0..5)
            .map(|_| Generator::new(options(url, &namespace, None)).unwrap())
            .collect();
        let nodes: Vec<_> = whole.iter().map(node_of).collect();
        assert_eq!(nodes, [(0, 0), (0, 1), (0, 2), (0, 3), (1, 0)], "{kind:?}");
        // Datacenter 3 fixed: its first worker, not the next whole node ID.
        let third = Generator::new(options(url, &namespace, Some(3))).unwrap();
        assert_eq!(node_of(&third), (3, 0), "{kind:?}");
        // Datacenter 1 fixed: its free workers, never the one a whole holder has.
        let under: Vec<Generator> = (0..3)
            .map(|_| Generator::new(options(url, &namespace, Some(1))).unwrap())
            .collect();
        for generator in &under {
            assert_eq!(generator.source(), NodeSource::Database, "{kind:?}");
        }
        let nodes: Vec<_> = under.iter().map(node_of).collect();
        assert_eq!(nodes, [(1, 1), (1, 2), (1, 3)], "{kind:?}");
        // Datacenter 1 is full.
        let err = Generator::new(options(url, &namespace, Some(1))).unwrap_err();
        assert_eq!(
            err.code(),
            ErrorCode::WorkerIdsExhausted,
            "{}",
            err.message()
        );
        assert!(
            err.message().contains("all 4 worker IDs of datacenter 1"),
            "{}",
            err.message()
        );
        // A whole holder now skips what the datacenter holders took.
        let next = Generator::new(options(url, &namespace, None)).unwrap();
        assert_eq!(node_of(&next), (2, 0), "{kind:?}");
        // Given back, a datacenter's worker is leased again under it.
        under.into_iter().next().unwrap().close();
        // `close` waits for the give-back at most 2 s (RELEASE_WAIT_MS), then leaves it to
        // the lease's threads: on a loaded machine the row is free only later. Its index:
        // four workers a datacenter.
        shared(kind).await_free_row(&namespace, nodes[0].0 * 4 + nodes[0].1);
        let again = Generator::new(options(url, &namespace, Some(1))).unwrap();
        assert_eq!(node_of(&again), (1, 1), "{kind:?}");
        // FLAKERY_DATACENTER_ID alone, from the environment.
        let output = common::rerun_as("db-datacenter")
            .env("FLAKERY_DATABASE_URL", url)
            .env("FLAKERY_NAMESPACE", &namespace)
            .env("FLAKERY_LAYOUT", SMALL)
            .env("FLAKERY_DATACENTER_ID", "2")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(stdout.contains("NODE 2 1\n"), "{kind:?}: {stdout}");
        drop((whole, third, next, again));
    });
}

#[test]
fn a_datacenter_the_layout_cannot_hold_or_baidu_mode_is_refused() {
    each_kind(|kind| {
        let url = &shared(kind).url;
        let err = Generator::new(options(url, "datacenter-refused", Some(4))).unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidArgument, "{}", err.message());
        assert!(err.message().contains("datacenter"), "{}", err.message());
        let baidu = Options {
            database_mode: Some(DatabaseMode::Baidu),
            ..options(url, "datacenter-refused", Some(1))
        };
        let err = Generator::new(baidu).unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidArgument, "{}", err.message());
        assert!(err.message().contains("baidu"), "{}", err.message());
        // The coordinator alone: a claim of datacenter 2's range is refused once it is full.
        let layout = Layout::parse(SMALL).unwrap();
        let namespace = format!("datacenter-range-{}", kind.arg());
        let mut held = Vec::new();
        for worker in 0..4 {
            let mut holder = coordinator(&shared(kind).database_url(), &namespace, 10_000)
                .within_datacenter(2, &layout);
            assert_eq!(holder.claim(16, soon(5000)).unwrap().index, 8 + worker);
            held.push(holder);
        }
        let mut fifth = coordinator(&shared(kind).database_url(), &namespace, 10_000)
            .within_datacenter(2, &layout);
        let err = fifth.claim(16, soon(5000)).unwrap_err();
        assert_eq!(
            err.code(),
            ErrorCode::WorkerIdsExhausted,
            "{}",
            err.message()
        );
    });
}
