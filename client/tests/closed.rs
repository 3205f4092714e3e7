//! `close()` is final: a client closed before its first call, or after calls, hands out
//! nothing more, in this process and in a `fork()`'s child (which makes an engine of its own),
//! whichever call it makes.

use flakery_client::{Client, ErrorCode};

#[path = "child/mod.rs"]
mod child;
#[path = "fake/mod.rs"]
mod fake;

fn client_of(url: &str) -> Client {
    fake::client_of_blocks(url, 100)
}

/// What each call answers, as one number a child can write back: 1 if every call failed with
/// the closed client's error, else -1 (an ID, or another error).
fn every_call_fails_closed(client: &Client) -> i64 {
    let closed = |e: flakery_client::Error| {
        e.code() == ErrorCode::InvalidArgument && e.message().contains("closed")
    };
    let mut out = [0; 3];
    let failed = [
        client.next_id().is_err_and(closed),
        client.next_ids(5).is_err_and(closed),
        client.fill(&mut out).is_err_and(closed),
        client
            .next_id_text(flakery::IdFormat::Decimal)
            .is_err_and(closed),
        client.try_next_id().is_none(),
        // Twice: the first failure changed nothing.
        client.next_id().is_err_and(closed),
    ];
    if failed.iter().all(|&f| f) && out == [0; 3] {
        1
    } else {
        -1
    }
}

#[test]
fn a_client_closed_before_its_first_call_hands_out_nothing() {
    let (url, fake) = fake::fake_server();
    let client = client_of(&url);
    client.close();
    assert_eq!(every_call_fails_closed(&client), 1);
    assert_eq!(
        child::in_child(|| every_call_fails_closed(&client)),
        Some(1),
        "a child forked after the close"
    );
    assert_eq!(
        fake.asked.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "no block asked for"
    );
}

#[test]
fn a_child_forked_after_its_parent_closed_hands_out_nothing() {
    let (url, _fake) = fake::fake_server();
    let client = client_of(&url);
    client.next_id().unwrap();
    client.next_id().unwrap();
    assert!(client.stats().held > 0, "the parent holds a block");
    client.close();
    assert_eq!(every_call_fails_closed(&client), 1, "the parent");
    assert_eq!(
        child::in_child(|| every_call_fails_closed(&client)),
        Some(1),
        "the child"
    );
}

/// A child that closes its own client: its later calls fail; the parent's client is its own
/// and goes on.
#[test]
fn a_child_that_closes_is_closed_and_its_parent_is_not() {
    let (url, _fake) = fake::fake_server();
    let client = client_of(&url);
    client.next_id().unwrap();
    let answered = child::in_child(|| {
        client.next_id().unwrap();
        client.close();
        every_call_fails_closed(&client)
    });
    assert_eq!(answered, Some(1));
    assert!(client.next_id().is_ok(), "the parent's client is open");
}

/// `close()` joins the client's thread only between requests (client/tests/threads.rs): one
/// in a request to a server that never answers is left to end after its `request_timeout`,
/// and `close()` returns while that request is still open.
#[test]
fn close_does_not_wait_for_a_request_in_flight() {
    use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
    use std::sync::{mpsc, Arc};
    use std::time::Duration;

    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (accepted, asked) = mpsc::channel();
    let ended = Arc::new(AtomicBool::new(false));
    let ended_by_server = Arc::clone(&ended);
    std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        accepted.send(()).unwrap();
        // Never answers; the request ends when the client gives it up (its timeout).
        let _ = std::io::copy(&mut stream, &mut std::io::sink());
        ended_by_server.store(true, SeqCst);
    });
    let client = Arc::new(
        flakery_client::Client::builder()
            .server(&url)
            .request_timeout(Duration::from_secs(20))
            .timeout(Duration::from_secs(30))
            .build()
            .unwrap(),
    );
    let caller = {
        let client = Arc::clone(&client);
        std::thread::spawn(move || client.next_id())
    };
    asked.recv().unwrap();
    client.close();
    assert!(
        !ended.load(SeqCst),
        "close() returned after the request in flight ended: it waited for the server"
    );
    let error = caller.join().unwrap().unwrap_err();
    assert_eq!(error.code(), ErrorCode::InvalidArgument, "{error}");
}
