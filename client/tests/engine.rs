//! The client against a small fake server on loopback (a thread answering `/v1/layout` and
//! `/v1/ids` from a counter): prefetch and block growth, age, fallback, close, and a `Drop`
//! that does not wait for a request in flight. Real servers are tests/client's.

use std::net::TcpListener;
use std::sync::atomic::Ordering::SeqCst;
use std::sync::mpsc;
use std::time::Duration;

use flakery_client::{Client, ErrorCode};

#[path = "fake/mod.rs"]
mod fake;

use fake::fake_server;

fn dead_url() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    format!("http://{}", listener.local_addr().unwrap())
}

#[test]
fn blocks_grow_with_use_and_ids_increase() {
    let (url, fake) = fake_server();
    let client = Client::builder()
        .server(&url)
        .block_sizes(16, 1000)
        .build()
        .unwrap();
    let ids: Vec<i64> = (0..20_000).map(|_| client.next_id().unwrap()).collect();
    assert!(
        ids.windows(2).all(|w| w[0] < w[1]),
        "one server, one thread"
    );
    let batches = fake.batches.load(SeqCst);
    // 16, 32, ..., 512, then 1000s: under 40 requests; at the smallest size, 1250.
    assert!(batches < 40, "{batches} requests for 20000 IDs");
}

#[test]
fn an_id_older_than_max_age_is_dropped() {
    let (url, fake) = fake_server();
    let client = Client::builder()
        .server(&url)
        .max_age(Duration::from_millis(50))
        .build()
        .unwrap();
    let first = client.next_id().unwrap();
    let held = client.stats().held;
    assert!(held > 0);
    let asked = fake.next.load(SeqCst);
    std::thread::sleep(Duration::from_millis(120));
    let second = client.next_id().unwrap();
    assert!(
        second > asked,
        "{second} is not from a new block (first {first})"
    );
    assert!(client.stats().dropped_for_age >= held as u64);
}

#[test]
fn the_fallback_takes_over_when_every_server_is_down() {
    let fallback = flakery::Generator::builder()
        .datacenter_id(31)
        .worker_id(31)
        .build()
        .unwrap();
    let client = Client::builder()
        .server(&dead_url())
        .fallback(fallback)
        .build()
        .unwrap();
    let id = client.next_id().unwrap();
    assert_eq!(client.decode(id).unwrap().worker_id, 31);
    let without = Client::builder().server(&dead_url()).build().unwrap();
    let error = without.next_id().unwrap_err();
    assert_eq!(error.code(), ErrorCode::ServersUnavailable);
    assert_eq!(error.code().as_str(), "servers_unavailable");
}

#[test]
fn a_closed_client_hands_out_nothing() {
    let (url, _fake) = fake_server();
    let client = Client::builder().server(&url).build().unwrap();
    client.next_id().unwrap();
    client.close();
    let error = client.next_id().unwrap_err();
    assert_eq!(error.code().as_str(), "invalid_argument");
}

/// The order of events: the client is dropped while its refill is held by the server, and
/// the drop returns before the server is let go.
#[test]
fn drop_does_not_wait_for_a_request_in_flight() {
    let (url, fake) = fake_server();
    let client = Client::builder()
        .server(&url)
        .block_sizes(4, 4)
        .build()
        .unwrap();
    client.next_id().unwrap();
    fake.hold.store(true, SeqCst);
    // Below the watermark: the prefetch is sent and held.
    client.next_id().unwrap();
    client.next_id().unwrap();
    while fake.asked.load(SeqCst) < 2 {
        std::thread::sleep(Duration::from_millis(1));
    }
    let (done, dropped) = mpsc::channel();
    std::thread::spawn(move || {
        drop(client);
        done.send(()).unwrap();
    });
    // A failsafe for a hang, not a bound on speed.
    let returned = dropped.recv_timeout(Duration::from_secs(60));
    fake.hold.store(false, SeqCst);
    assert!(returned.is_ok(), "drop waited for the request in flight");
}

/// The calls after the first of a block take from it without the lock: a block held that grew
/// too old is not taken from.
#[test]
fn a_held_block_too_old_is_not_taken_from() {
    let (url, fake) = fake_server();
    let client = Client::builder()
        .server(&url)
        .block_sizes(100, 100)
        .max_age(Duration::from_millis(50))
        .build()
        .unwrap();
    // The first waits for the block; the second takes this thread's hold on it.
    client.next_id().unwrap();
    client.next_id().unwrap();
    let asked = fake.next.load(SeqCst);
    std::thread::sleep(Duration::from_millis(120));
    let third = client.next_id().unwrap();
    assert!(
        third > asked,
        "{third} is from the block made before {asked}"
    );
}

/// Prefetch, as an order of events: the call that leaves half a block held asks for the next
/// block, long before this block's last ID is claimed (the refiller's own idle rounds are not
/// callers' asks: they cannot hide a prefetch that is never asked for).
#[test]
fn the_next_block_is_asked_for_at_half_a_block_before_its_last_id() {
    let (url, _fake) = fake_server();
    let client = Client::builder()
        .server(&url)
        .block_sizes(100, 100)
        .max_age(Duration::from_secs(600))
        .build()
        .unwrap();
    client.next_id().unwrap();
    assert_eq!(
        client.stats().refills_asked,
        1,
        "the first call found nothing"
    );
    let mut asked_after = None;
    for claimed in 2..=100 {
        client.next_id().unwrap();
        if asked_after.is_none() && client.stats().refills_asked > 1 {
            asked_after = Some(claimed);
        }
    }
    assert_eq!(
        asked_after,
        Some(50),
        "the next block was asked for after this many IDs of 100"
    );
}

/// A server older than the words answers lines to the client's `Accept`: the client takes
/// them, with no request more.
#[test]
fn ids_come_as_words_and_as_lines_from_an_older_server() {
    let (url, fake) = fake_server();
    let client = fake::client_of_blocks(&url, 100);
    let first: Vec<i64> = (0..250).map(|_| client.next_id().unwrap()).collect();
    assert_eq!(fake.words.load(SeqCst), fake.batches.load(SeqCst));
    assert_eq!(first, (1..=250).collect::<Vec<_>>());
    fake.old.store(true, SeqCst);
    let asked = fake.asked.load(SeqCst);
    let words = fake.words.load(SeqCst);
    let rest: Vec<i64> = (0..250).map(|_| client.next_id().unwrap()).collect();
    assert!(rest.windows(2).all(|w| w[0] < w[1]) && rest[0] > first[249]);
    assert_eq!(fake.words.load(SeqCst), words, "lines, not words");
    assert_eq!(
        fake.asked.load(SeqCst) - asked,
        fake.batches.load(SeqCst) - asked,
        "each block one request"
    );
}

/// An answer of words one byte short is refused with the reason, never taken as IDs.
#[test]
fn words_cut_short_are_refused_with_a_clear_error() {
    let (url, fake) = fake_server();
    fake.cut.store(true, SeqCst);
    let client = Client::builder()
        .server(&url)
        .block_sizes(10, 10)
        .prefetch(false)
        .timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    let error = client.next_id().unwrap_err();
    assert_eq!(error.code(), ErrorCode::BadAnswer);
    assert!(
        error
            .message()
            .contains("79 bytes, not a whole number of 8-byte IDs"),
        "{}",
        error.message()
    );
    fake.cut.store(false, SeqCst);
}

/// A binding that fills a batch in chunks (Java's 4,096, Python's 16 Ki) gave each chunk a
/// deadline of its own: one call could last a timeout per chunk. With `Client::batch` the
/// call has one. Each answer comes at least 300 ms after its request and each chunk needs
/// one (one refiller asking in turn, blocks of exactly a chunk, no prefetch): the fourth
/// answer cannot come before 1,200 ms, after the call's deadline of 1,001 ms, however slow
/// the machine (with a deadline a chunk, all four fill).
#[test]
fn a_batch_in_chunks_fails_within_its_one_deadline() {
    const CHUNK: usize = 1000;
    let (url, fake) = fake_server();
    fake.delay_ms.store(300, SeqCst);
    let client = Client::builder()
        .server(&url)
        .block_sizes(CHUNK, CHUNK)
        .prefetch(false)
        .timeout(Duration::from_millis(1000))
        .request_timeout(Duration::from_millis(1000))
        .build()
        .unwrap();
    let mut batch = client.batch(4 * CHUNK);
    let mut chunk = [0i64; CHUNK];
    let failed = (0..4).find_map(|i| batch.fill(&mut chunk).err().map(|e| (i, e)));
    let (_, error) = failed.expect("four answers of 300 ms each came within 1,001 ms");
    assert_eq!(error.code(), ErrorCode::ServersUnavailable, "{error}");
    assert!(
        error
            .message()
            .contains("within 1001 ms (the timeout, 1000 ms, and 1 ms to make 4000 IDs"),
        "the whole call's deadline, not a chunk's: {error}"
    );
}
