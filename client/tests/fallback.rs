//! A fallback generator on a node ID a server issues with is refused: from the first block
//! that shows that node, every call fails with `invalid_argument` naming the node (the servers
//! answer on), in this process and in a `fork()`'s child. A fallback of a node of its own
//! takes over when the servers stop answering. (With real servers and a partition:
//! tests/partition/client_fallback.py.)

use std::sync::atomic::Ordering::SeqCst;
use std::time::Duration;

use flakery_client::{Client, ErrorCode};

#[path = "child/mod.rs"]
mod child;
#[path = "fake/mod.rs"]
mod fake;

/// The fake server's next IDs carry twitter's datacenter 0, worker `worker` (its counter
/// starts at that node's first ID; blocks of 16 stay on it for 256 blocks).
fn fake_server_on_worker(worker: i64) -> (String, std::sync::Arc<fake::Fake>) {
    let (url, fake) = fake::fake_server();
    fake.next.store(worker << 12, SeqCst);
    (url, fake)
}

fn client_with_fallback(url: &str, worker: u64) -> Client {
    let fallback = flakery::Generator::builder()
        .datacenter_id(0)
        .worker_id(worker)
        .build()
        .unwrap();
    Client::builder()
        .server(url)
        .block_sizes(16, 16)
        .timeout(Duration::from_secs(30))
        .request_timeout(Duration::from_millis(200))
        .fallback(fallback)
        .build()
        .unwrap()
}

fn is_refusal(error: &flakery_client::Error) -> bool {
    error.code() == ErrorCode::InvalidArgument
        && error.option() == Some("fallback")
        && error.message().contains("(datacenter_id 0, worker_id 5)")
}

#[test]
fn a_fallback_on_a_servers_node_is_refused_at_the_first_block() {
    let (url, fake) = fake_server_on_worker(5);
    let client = client_with_fallback(&url, 5);
    let error = client
        .next_id()
        .expect_err("the fallback is on the server's node");
    assert!(is_refusal(&error), "{error}");
    assert!(error.message().contains(&url), "names the server: {error}");
    assert!(fake.batches.load(SeqCst) >= 1, "the server answered");
    // The servers answer on, and the client still refuses every call, in a child too.
    let refused = || {
        let mut out = [0; 4];
        let all = [
            client.next_id().is_err_and(|e| is_refusal(&e)),
            client.next_ids(3).is_err_and(|e| is_refusal(&e)),
            client.fill(&mut out).is_err_and(|e| is_refusal(&e)),
            client.try_next_id().is_none(),
        ];
        i64::from(all.iter().all(|&r| r) && out == [0; 4])
    };
    assert_eq!(refused(), 1, "this process");
    assert_eq!(child::in_child(refused), Some(1), "a fork's child");
}

/// A fallback of a node of its own: the servers' IDs while they answer, the fallback's once
/// they stop (held unanswered here), with no refusal.
#[test]
fn a_fallback_of_its_own_node_takes_over_when_the_servers_stop_answering() {
    let (url, fake) = fake_server_on_worker(5);
    let client = client_with_fallback(&url, 9);
    let served = client.next_id().unwrap();
    assert_eq!(client.decode(served).unwrap().worker_id, 5);
    fake.hold.store(true, SeqCst);
    let mut fallback_ids = 0;
    // Bounded: the stock (at most a few blocks of 16) runs out, then the fallback answers.
    for _ in 0..1000 {
        let id = client.next_id().unwrap();
        if client.decode(id).unwrap().worker_id == 9 {
            fallback_ids += 1;
            if fallback_ids == 10 {
                break;
            }
        }
    }
    fake.hold.store(false, SeqCst);
    assert_eq!(fallback_ids, 10, "the fallback took over");
}
