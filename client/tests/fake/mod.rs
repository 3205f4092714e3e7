//! A small fake `flakery serve` on loopback for the client's tests and benchmark: a thread
//! per connection answering `/v1/layout` (twitter) and `/v1/ids?count=N` (N increasing IDs
//! from a counter, as 8-byte words when `Accept` lists them, as the server does), with
//! keep-alive; `hold` keeps `/v1/ids` unanswered while set, `delay_ms` answers each late;
//! `refusals` answers that many requests for IDs with 503 first; `old` answers as a server
//! older than the words (lines when `Accept` starts with text/plain, else JSON); `cut` drops
//! the last byte of each answer of words.

#![allow(dead_code)]

use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;

#[derive(Default)]
pub struct Fake {
    pub next: AtomicI64,
    pub batches: AtomicUsize,
    /// Requests for IDs received, answered or not.
    pub asked: AtomicUsize,
    /// While set, `/v1/ids` is not answered.
    pub hold: AtomicBool,
    /// Each answer to `/v1/ids` waits this long first, as a server that answers slowly.
    pub delay_ms: AtomicU64,
    /// Requests for IDs still to refuse with 503 `lease_lost`, as a server whose coordinator
    /// stalled does.
    pub refusals: AtomicUsize,
    /// Answers as a server without the words.
    pub old: AtomicBool,
    /// Answers of words one byte short.
    pub cut: AtomicBool,
    /// Answers given as words.
    pub words: AtomicUsize,
}

/// Answers the requests of one connection, plain or TLS (tests/tls.rs).
pub fn answer(stream: impl Read + Write, fake: &Fake) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream);
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            return Ok(());
        }
        let path = line.split(' ').nth(1).unwrap_or_default().to_string();
        let mut accept = String::new();
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header)? == 0 || header == "\r\n" {
                break;
            }
            if let Some((name, value)) = header.split_once(':') {
                if name.eq_ignore_ascii_case("accept") {
                    accept = value.trim().to_string();
                }
            }
        }
        let (content_type, body) = if path == "/v1/layout" {
            ("application/json", b"{\"spec\":\"twitter\"}".to_vec())
        } else {
            fake.asked.fetch_add(1, SeqCst);
            let refuse = fake
                .refusals
                .fetch_update(SeqCst, SeqCst, |n| n.checked_sub(1));
            if refuse.is_ok() {
                let body = r#"{"error":{"code":"lease_lost","message":"lease unconfirmed"}}"#;
                write!(
                    reader.get_mut(),
                    "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n\
                     Content-Length: {}\r\n\r\n{body}",
                    body.len()
                )?;
                reader.get_mut().flush()?;
                continue;
            }
            while fake.hold.load(SeqCst) {
                std::thread::sleep(Duration::from_millis(5));
            }
            std::thread::sleep(Duration::from_millis(fake.delay_ms.load(SeqCst)));
            let count: i64 = path.rsplit('=').next().unwrap().parse().unwrap();
            fake.batches.fetch_add(1, SeqCst);
            let first = fake.next.fetch_add(count, SeqCst) + 1;
            let old = fake.old.load(SeqCst);
            if !old && accept.contains("application/octet-stream") {
                fake.words.fetch_add(1, SeqCst);
                // Written after the head in one buffer, as the server does: one pass, no copy.
                let mut length = count as usize * 8;
                if fake.cut.load(SeqCst) {
                    length -= 1;
                }
                let head = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n\
                     Content-Length: {length}\r\n\r\n"
                );
                let mut answer = Vec::with_capacity(head.len() + count as usize * 8);
                answer.extend_from_slice(head.as_bytes());
                for id in first..first + count {
                    answer.extend_from_slice(&id.to_le_bytes());
                }
                answer.truncate(head.len() + length);
                reader.get_mut().write_all(&answer)?;
                reader.get_mut().flush()?;
                continue;
            } else if accept.starts_with("text/plain") {
                let mut ids = String::with_capacity(count as usize * 20);
                for id in first..first + count {
                    let _ = writeln!(ids, "{id}");
                }
                ("text/plain", ids.into_bytes())
            } else {
                let ids: Vec<String> = (first..first + count)
                    .map(|id| format!("\"{id}\""))
                    .collect();
                (
                    "application/json",
                    format!("{{\"ids\":[{}]}}", ids.join(",")).into_bytes(),
                )
            }
        };
        let mut answer = format!(
            "HTTP/1.1 200 OK
Content-Type: {content_type}
Content-Length: {}

",
            body.len()
        )
        .into_bytes();
        answer.extend_from_slice(&body);
        reader.get_mut().write_all(&answer)?;
        reader.get_mut().flush()?;
    }
}

pub fn fake_server() -> (String, Arc<Fake>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let fake = Arc::new(Fake::default());
    let shared = Arc::clone(&fake);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let fake = Arc::clone(&shared);
            std::thread::spawn(move || answer(stream, &fake));
        }
    });
    (url, fake)
}

/// A client whose calls are served from its stock alone (the benchmark's and callgrind's):
/// blocks of the largest size, no prefetch (no refill runs while a block lasts), no expiry.
pub fn client_of_stock(url: &str) -> flakery_client::Client {
    flakery_client::Client::builder()
        .server(url)
        .block_sizes(flakery_client::MAX_BLOCK, flakery_client::MAX_BLOCK)
        .prefetch(false)
        .max_age(Duration::from_secs(600))
        .build()
        .expect("a client")
}

/// The embedded generator the client's calls are set beside (client/benches/steady.rs): below
/// its layout's ceiling, as bench/rust measures it (borrow policy, a day ahead allowed), so
/// that it shows the code's cost, not the layout's 4,096 IDs a millisecond.
pub fn embedded_generator() -> flakery::Generator {
    flakery::Generator::builder()
        .worker_id(1)
        .sequence_policy(flakery::SequencePolicy::Borrow)
        .max_borrow_ms(86_400_000)
        .build()
        .expect("an embedded generator")
}

/// A client sustained by its refills (prefetch on), grown to its largest block before it
/// returns.
pub fn sustained_client(url: &str) -> flakery_client::Client {
    let client = flakery_client::Client::builder()
        .server(url)
        .block_sizes(1000, flakery_client::MAX_BLOCK)
        .max_age(Duration::from_secs(600))
        .build()
        .expect("a client");
    for _ in 0..1_000_000 {
        client.next_id().unwrap();
    }
    client
}

/// A client of blocks of `size`, without prefetch or expiry: what it holds is what its calls
/// took (the tests that count blocks and IDs).
pub fn client_of_blocks(url: &str, size: usize) -> flakery_client::Client {
    flakery_client::Client::builder()
        .server(url)
        .block_sizes(size, size)
        .prefetch(false)
        .max_age(Duration::from_secs(600))
        .build()
        .expect("a client")
}
