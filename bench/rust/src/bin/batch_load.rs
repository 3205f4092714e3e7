//! Load on `flakery serve`'s batch route for `bench/server/run.sh`: several keep-alive
//! HTTP/1.1 connections, each asking `GET PATH` (e.g. `/v1/ids?count=100000`) again as soon as
//! an answer is in, for a fixed time; prints IDs per second as JSON.
//!
//!   batch_load HOST:PORT PATH IDS_PER_ANSWER CONNECTIONS SECONDS [CA_FILE]
//!
//! With CA_FILE, over TLS (rustls with ring, as the server): the server's certificate checked
//! against that CA for the name `localhost`, the handshake made once per connection.
//!
//! Every answer is checked, not only counted: status 200, a body of exactly its
//! `Content-Length`, shaped `{"ids":["…","…"]}`, holding exactly IDS_PER_ANSWER decimal IDs,
//! each larger than the one before on that connection. A wrong answer stops the run with an
//! error. The rate is every checked ID over the time from the start until the last answer
//! (the connections stop asking at SECONDS), so no answer is cut off at the end.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustls::pki_types::ServerName;

struct Args {
    address: String,
    path: String,
    per_answer: usize,
    connections: usize,
    seconds: f64,
    tls: Option<Arc<rustls::ClientConfig>>,
}

fn tls_config(ca: &str) -> Result<Arc<rustls::ClientConfig>, String> {
    let roots = flakery_tls::roots_of_file(Path::new(ca)).map_err(|e| e.to_string())?;
    let config = flakery_tls::client_builder_with_roots(roots)
        .map_err(|e| e.to_string())?
        .with_no_client_auth();
    Ok(Arc::new(config))
}

fn args() -> Result<Args, String> {
    let usage = "usage: batch_load HOST:PORT PATH IDS_PER_ANSWER CONNECTIONS SECONDS [CA_FILE]";
    let a: Vec<String> = std::env::args().skip(1).collect();
    if a.len() != 5 && a.len() != 6 {
        return Err(usage.into());
    }
    let number = |i: usize| {
        a[i].parse::<f64>()
            .map_err(|_| format!("{usage}: '{}'", a[i]))
    };
    Ok(Args {
        address: a[0].clone(),
        path: a[1].clone(),
        per_answer: number(2)? as usize,
        connections: number(3)? as usize,
        seconds: number(4)?,
        tls: a.get(5).map(|ca| tls_config(ca)).transpose()?,
    })
}

/// One connection's run: how many IDs it received and checked.
fn connection(args: &Args, until: Instant) -> Result<u64, String> {
    let stream = TcpStream::connect(&args.address).map_err(|e| format!("connect: {e}"))?;
    stream.set_nodelay(true).map_err(|e| e.to_string())?;
    match &args.tls {
        None => requests(args, until, stream),
        Some(config) => {
            let name = ServerName::try_from("localhost").map_err(|e| e.to_string())?;
            let tls = rustls::ClientConnection::new(Arc::clone(config), name)
                .map_err(|e| format!("TLS: {e}"))?;
            requests(args, until, rustls::StreamOwned::new(tls, stream))
        }
    }
}

/// Asks again and again on one connection, plain or TLS, until `until`.
fn requests(args: &Args, until: Instant, stream: impl Read + Write) -> Result<u64, String> {
    // One answer at a time: the reader's buffer is empty whenever a request is written.
    let mut reader = BufReader::with_capacity(1 << 16, stream);
    let request = format!(
        "GET {} HTTP/1.1\r\nHost: {}\r\nAccept: application/json\r\n\r\n",
        args.path, args.address
    );
    let (mut body, mut line) = (Vec::new(), String::new());
    let (mut ids, mut last) = (0u64, 0u64);
    while Instant::now() < until {
        reader
            .get_mut()
            .write_all(request.as_bytes())
            .map_err(|e| format!("send: {e}"))?;
        let mut length = None;
        let mut first_line = true;
        loop {
            line.clear();
            if reader.read_line(&mut line).map_err(|e| e.to_string())? == 0 {
                return Err("the server closed the connection".into());
            }
            let header = line.trim_end();
            if first_line {
                if !header.starts_with("HTTP/1.1 200") {
                    return Err(format!("answer '{header}'"));
                }
                first_line = false;
            } else if header.is_empty() {
                break;
            } else if let Some((name, value)) = header.split_once(':') {
                if name.eq_ignore_ascii_case("content-length") {
                    length = value.trim().parse::<usize>().ok();
                }
            }
        }
        let length = length.ok_or("an answer without Content-Length")?;
        body.resize(length, 0);
        reader
            .read_exact(&mut body)
            .map_err(|e| format!("body: {e}"))?;
        last = check(&body, args.per_answer, last)?;
        ids += args.per_answer as u64;
    }
    Ok(ids)
}

/// Checks one body; answers the last ID in it.
fn check(body: &[u8], per_answer: usize, mut last: u64) -> Result<u64, String> {
    let inner = body
        .strip_prefix(b"{\"ids\":[")
        .and_then(|rest| rest.strip_suffix(b"]}"))
        .ok_or("a body not shaped {\"ids\":[…]}")?;
    let mut count = 0;
    for quoted in inner.split(|&b| b == b',') {
        let id = quoted
            .strip_prefix(b"\"")
            .and_then(|q| q.strip_suffix(b"\""))
            .and_then(parse_decimal)
            .ok_or_else(|| {
                let shown = &quoted[..quoted.len().min(40)];
                format!(
                    "'{}' is not a quoted decimal ID",
                    String::from_utf8_lossy(shown)
                )
            })?;
        if id <= last {
            return Err(format!("ID {id} after {last}: not increasing"));
        }
        last = id;
        count += 1;
    }
    if count != per_answer {
        return Err(format!("{count} IDs in an answer, not {per_answer}"));
    }
    Ok(last)
}

fn parse_decimal(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() || digits.len() > 19 {
        return None;
    }
    digits.iter().try_fold(0u64, |n, &d| {
        d.is_ascii_digit().then(|| n * 10 + u64::from(d - b'0'))
    })
}

fn main() {
    let args = match args() {
        Ok(args) => args,
        Err(message) => {
            eprintln!("{message}");
            std::process::exit(2);
        }
    };
    let started = Instant::now();
    let until = started + Duration::from_secs_f64(args.seconds);
    let results: Vec<Result<u64, String>> = std::thread::scope(|scope| {
        let runs: Vec<_> = (0..args.connections)
            .map(|_| scope.spawn(|| connection(&args, until)))
            .collect();
        runs.into_iter()
            .map(|run| {
                run.join()
                    .unwrap_or_else(|_| Err("a thread panicked".into()))
            })
            .collect()
    });
    let elapsed = started.elapsed().as_secs_f64();
    let mut ids = 0;
    for result in results {
        match result {
            Ok(n) => ids += n,
            Err(message) => {
                eprintln!("batch_load: {message}");
                std::process::exit(1);
            }
        }
    }
    println!(
        "{}",
        serde_json::json!({
            "ids_per_s": ids as f64 / elapsed,
            "ids": ids,
            "seconds": elapsed,
            "connections": args.connections,
            "ids_per_answer": args.per_answer,
        })
    );
}
