//! A call when every server is backing off (docs/client.md, "Failover and deadlines"): it
//! waits for the retry after a first failure (a blip, as a stalled coordinator makes every
//! server refuse at once), and fails at once, long before its deadline, once each server
//! failed twice in a row. Against the fake server, refusing its first requests with 503.

use std::sync::atomic::Ordering::SeqCst;
use std::time::Duration;

use flakery_client::{Client, ErrorCode};

#[path = "fake/mod.rs"]
mod fake;

use fake::{fake_server, Fake};

fn refusing(refusals: usize) -> (Client, std::sync::Arc<Fake>) {
    let (url, fake) = fake_server();
    fake.refusals.store(refusals, SeqCst);
    let client = Client::builder()
        .server(&url)
        // Far past any backoff: a failure before it is the fail-at-once, not the deadline.
        .timeout(Duration::from_secs(60))
        .prefetch(false)
        .build()
        .unwrap();
    (client, fake)
}

#[test]
fn a_call_waits_for_the_retry_after_a_first_refusal() {
    let (client, fake) = refusing(1);
    let id = client.next_id();
    assert_eq!(fake.asked.load(SeqCst), 2, "refused once, then asked again");
    assert_eq!(
        id.unwrap(),
        1,
        "the call waited through the first backoff and took the retry's ID"
    );
}

#[test]
fn a_call_fails_at_once_when_each_server_failed_twice_in_a_row() {
    let (client, fake) = refusing(usize::MAX);
    let error = client.next_id().unwrap_err();
    assert_eq!(error.code(), ErrorCode::ServersUnavailable);
    assert!(
        error.to_string().contains("each is backing off"),
        "not the fail-at-once (the deadline is 60 s away): {error}"
    );
    assert_eq!(
        fake.asked.load(SeqCst),
        2,
        "failed after the second refusal, without waiting for a third"
    );
}
