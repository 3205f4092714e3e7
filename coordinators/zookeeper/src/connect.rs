//! Connecting to ZooKeeper: a TCP connection (with TLS when the connect string says
//! `secure=true`) and a session with a deadline, the credentials added, and a capped, jittered
//! backoff between attempts that the caller keeps across claims
//! (docs/keeper.md#zookeeper-connections). Also the framing of the stream (a 4-byte length,
//! then the jute body).

use std::hash::{BuildHasher, Hasher};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::link::{self, ReadHalf, WriteHalf};
use crate::proto::{self, op, reply_header, Reader, Writer, ZkError};
use crate::settings::Settings;
use crate::tls;
use crate::transport::{start, Client};
use flakery::clock::Clock;
use flakery::error::{Error, ErrorCode, Result};

/// The time the connect loop reads and waits on, in ms of the keeper's clock (a claim's
/// deadline is one of its instants): that clock and the thread's real sleep in a lease
/// (`KeeperTime`); in the tests a fake clock that a sleep moves, on which the start's timeout
/// is checked to the millisecond (`start_timeout_tests`).
pub(crate) trait Time: Send + Sync {
    fn now_ms(&self) -> i64;
    fn sleep_ms(&self, ms: i64);
}

/// The keeper's clock, and the thread's real sleep.
pub(crate) struct KeeperTime(pub(crate) Arc<dyn Clock>);

impl Time for KeeperTime {
    fn now_ms(&self) -> i64 {
        self.0.now_ms()
    }

    fn sleep_ms(&self, ms: i64) {
        std::thread::sleep(Duration::from_millis(ms.max(0) as u64));
    }
}

/// The first pause after a failed connection attempt; it doubles up to `BACKOFF_CAP`.
pub(crate) const BACKOFF_FIRST: Duration = Duration::from_millis(50);
/// The longest pause between connection attempts: short beside a ZooKeeper's restart, long
/// enough that a server still loading sees a few connections a second from each client.
pub(crate) const BACKOFF_CAP: Duration = Duration::from_secs(1);

/// The least time one attempt gets (unless the start's whole deadline is shorter): a server
/// that answers at all answers a session request in milliseconds, a loaded machine's JVM in
/// well under this.
pub(crate) const ATTEMPT_FLOOR: Duration = Duration::from_secs(2);

/// How long one connection attempt may take, of `addresses` resolved ones: a server that
/// accepts and never answers (paused by SIGSTOP, a JVM that bound its port but does not serve
/// yet) must not take the whole start. ZooKeeper's own client gives an attempt the session
/// timeout divided by the number of hosts, and moves on to the next; with one host that is
/// the whole start, so at least three attempts fit here, each of at least `ATTEMPT_FLOOR`.
pub(crate) fn attempt_bound(session_timeout: Duration, addresses: usize) -> Duration {
    let share = session_timeout / addresses.max(3) as u32;
    share.max(ATTEMPT_FLOOR.min(session_timeout))
}

/// The pause between connection attempts, kept across claims: each failure doubles it up to
/// `BACKOFF_CAP`, and each pause is drawn between half of it and all of it, so clients that
/// lost the same server do not come back in step. It also reports a failing streak once.
#[derive(Debug, Default)]
pub(crate) struct Backoff {
    delay: Option<Duration>,
    /// No attempt before this instant (`Time`'s ms).
    not_before: Option<i64>,
    failures: u64,
    /// Why the last attempt failed, for a claim that makes none before its deadline.
    last: Option<String>,
    /// Which address the next attempt tries: kept across claims, so a silent server first in
    /// the connect string does not take every claim's first attempt.
    turn: usize,
}

impl Backoff {
    /// An attempt failed at `now_ms`.
    fn failed(&mut self, now_ms: i64) {
        self.turn = self.turn.wrapping_add(1);
        let delay = self
            .delay
            .map_or(BACKOFF_FIRST, |d| (d * 2).min(BACKOFF_CAP));
        self.delay = Some(delay);
        self.failures += 1;
        let half = delay.as_millis() as i64 / 2;
        let jitter = (random() % (half as u64 + 1)) as i64;
        self.not_before = Some(now_ms.saturating_add(half + jitter));
    }

    /// A session was established: the next failure starts from the first pause again.
    fn succeeded(&mut self) -> u64 {
        let failures = self.failures;
        *self = Backoff {
            turn: self.turn,
            ..Backoff::default()
        };
        failures
    }
}

/// A random number (the standard library's per-process random hash keys, stirred with the
/// time), for jitter only.
fn random() -> u64 {
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    hasher.finish()
}

/// A session established with the server at `address`.
pub(crate) struct Session {
    pub(crate) reader: ReadHalf,
    pub(crate) writer: WriteHalf,
    pub(crate) id: i64,
    pub(crate) timeout: Duration,
}

/// Why an attempt to connect failed: worth another try, or not.
enum Refused {
    Retry(String),
    Fatal(Error),
}

/// A client with an established session, or an error by `deadline_ms` (of `time`):
/// `coordinator_unavailable` naming the last failure, once the next attempt would fall at or
/// past the deadline, or `invalid_argument` when the servers grant a shorter session than
/// asked for. Attempts wait `backoff`'s pauses; the first failure of a streak and the
/// connection after one are logged, not each attempt. `on_broken` is called (on the client's
/// reader thread) when the connection of a client still in use breaks.
pub(crate) fn connect(
    settings: &Settings,
    deadline_ms: i64,
    time: &dyn Time,
    backoff: &mut Backoff,
    on_broken: Arc<dyn Fn() + Send + Sync>,
) -> Result<Client> {
    let mut last = backoff
        .last
        .clone()
        .unwrap_or_else(|| "no attempt before the deadline".into());
    loop {
        if let Some(at) = backoff.not_before {
            if at >= deadline_ms {
                return Err(settings.unavailable(&last));
            }
            time.sleep_ms(at.saturating_sub(time.now_ms()));
        }
        let addresses = addresses(settings);
        // The socket's own timeouts are real time: the deadline's distance as an instant, and
        // no further than this attempt's own bound.
        let left = deadline_ms.saturating_sub(time.now_ms()).max(0) as u64;
        let bound = attempt_bound(settings.timeout(), addresses.len());
        let deadline = Instant::now() + Duration::from_millis(left).min(bound);
        let attempt = match addresses.get(backoff.turn % addresses.len().max(1)) {
            Some((address, host)) => handshake(settings, *address, host, deadline),
            None => Err(Refused::Retry(format!(
                "no address of {} could be resolved",
                settings.address()
            ))),
        };
        match attempt {
            Ok(session) => {
                let failures = backoff.succeeded();
                if failures > 0 {
                    tracing::info!(
                        "connected to ZooKeeper at {} after {failures} failed attempts \
                         (session 0x{:x}, timeout {} ms)",
                        settings.address(),
                        session.id,
                        session.timeout.as_millis()
                    );
                }
                return start(settings, session, on_broken);
            }
            Err(Refused::Fatal(err)) => return Err(err),
            Err(Refused::Retry(why)) => {
                if backoff.failures == 0 {
                    tracing::warn!(
                        "cannot connect to ZooKeeper at {}: {why}; retrying with a backoff of \
                         up to {} ms (logged once until connected)",
                        settings.address(),
                        BACKOFF_CAP.as_millis()
                    );
                }
                last = why.clone();
                backoff.last = Some(why);
                backoff.failed(time.now_ms());
                if time.now_ms() >= deadline_ms {
                    return Err(settings.unavailable(&last));
                }
            }
        }
    }
}

/// Each address of each server, with the `host:port` it was resolved from (TLS checks the
/// certificate against that host).
fn addresses(settings: &Settings) -> Vec<(SocketAddr, &str)> {
    settings
        .hosts
        .iter()
        .filter_map(|host| Some((host.to_socket_addrs().ok()?, host.as_str())))
        .flat_map(|(found, host)| found.map(move |address| (address, host)))
        .collect()
}

pub(crate) fn write_frame(stream: &mut impl Write, frame: &[u8]) -> std::io::Result<()> {
    stream.write_all(frame)
}

pub(crate) fn read_frame(stream: &mut impl Read) -> std::io::Result<Vec<u8>> {
    let mut len = [0u8; 4];
    stream.read_exact(&mut len)?;
    let len = i32::from_be_bytes(len);
    if len < 0 || len as usize > proto::MAX_FRAME {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("a frame of {len} bytes"),
        ));
    }
    let mut frame = vec![0; len as usize];
    stream.read_exact(&mut frame)?;
    Ok(frame)
}

fn io_cause(address: SocketAddr, err: &std::io::Error) -> String {
    match err.kind() {
        std::io::ErrorKind::UnexpectedEof => format!("{address} closed the connection"),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => {
            format!("{address} did not answer in time")
        }
        _ => format!("{address}: {err}"),
    }
}

/// The time left until `deadline`, at least 1 ms (a socket timeout of zero is none).
fn left(deadline: Instant) -> Duration {
    deadline
        .saturating_duration_since(Instant::now())
        .max(Duration::from_millis(1))
}

/// The TLS handshake with `address`, for the host `host` (`host:port` of the connect
/// string), each read and write of it bounded by `deadline`.
fn secure(
    socket: &mut TcpStream,
    tls: &tls::Tls,
    address: SocketAddr,
    host: &str,
    deadline: Instant,
) -> std::result::Result<rustls::ClientConnection, Refused> {
    let config = tls.config().map_err(Refused::Retry)?;
    let name =
        tls::server_name(host).map_err(|why| Refused::Fatal(Error::invalid_argument(why)))?;
    let shown = name.to_str().into_owned();
    let mut conn = rustls::ClientConnection::new(config, name)
        .map_err(|e| Refused::Retry(format!("{address}: TLS: {e}")))?;
    // Frames are bounded (proto::MAX_FRAME); the writer hands rustls whole frames.
    conn.set_buffer_limit(None);
    // Step by step rather than rustls' `complete_io`, which reads on within one call: each
    // read or write waits at most until the deadline.
    while conn.is_handshaking() || conn.wants_write() {
        if Instant::now() >= deadline {
            return Err(Refused::Retry(format!(
                "{address} did not finish the TLS handshake in time (a plain port \
                 (clientPort) may close or stall it; secure=true needs the server's \
                 secureClientPort)"
            )));
        }
        let step = socket
            .set_read_timeout(Some(left(deadline)))
            .and_then(|()| socket.set_write_timeout(Some(left(deadline))))
            .and_then(|()| {
                if conn.wants_write() {
                    return conn.write_tls(socket).map(drop);
                }
                match conn.read_tls(socket)? {
                    0 => Err(std::io::ErrorKind::UnexpectedEof.into()),
                    _ => conn
                        .process_new_packets()
                        .map(drop)
                        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e)),
                }
            });
        if let Err(err) = step {
            let (fatal, why) = tls::handshake_failure(&address.to_string(), &shown, &err);
            return Err(if fatal {
                Refused::Fatal(Error::new(ErrorCode::CoordinatorUnavailable, why))
            } else {
                Refused::Retry(why)
            });
        }
    }
    Ok(conn)
}

/// Connects to `address` (of `host`), establishes a session and adds the credentials.
fn handshake(
    settings: &Settings,
    address: SocketAddr,
    host: &str,
    deadline: Instant,
) -> std::result::Result<Session, Refused> {
    let left = || left(deadline);
    let io = |err: std::io::Error| Refused::Retry(io_cause(address, &err));
    let mut socket = TcpStream::connect_timeout(&address, left()).map_err(io)?;
    let _ = socket.set_nodelay(true);
    let tls = match &settings.tls {
        Some(tls) => Some(secure(&mut socket, tls, address, host, deadline)?),
        None => None,
    };
    socket.set_read_timeout(Some(left())).map_err(io)?;
    socket.set_write_timeout(Some(left())).map_err(io)?;
    let plain = tls.is_none();
    // Under TLS 1.3 the server checks our certificate after our side of the handshake is
    // done: its refusal, an alert, comes with the first read, and is as final as in `secure`.
    let read_failed = |err: std::io::Error| {
        if !tls::is_alert(&err) {
            return io(err);
        }
        let (_, why) = tls::handshake_failure(&address.to_string(), host, &err);
        Refused::Fatal(Error::new(ErrorCode::CoordinatorUnavailable, why))
    };
    let (mut reader, mut writer) = link::split(socket, tls).map_err(io)?;
    let requested = settings.session_timeout_ms as i32;
    let mut w = Writer::bare();
    w.int(0)
        .long(0)
        .int(requested)
        .long(0)
        .buffer(&[0; 16])
        .boolean(false);
    write_frame(&mut writer, &w.finish()).map_err(io)?;
    let reply = read_frame(&mut reader).map_err(|err| match err.kind() {
        // A secure port closes a plain connection this way, and so does a server still
        // starting: both are worth naming (and another try).
        std::io::ErrorKind::UnexpectedEof if plain => Refused::Retry(format!(
            "{address} closed the connection without answering the session request: a \
             ZooKeeper still starting does this, and so does a secureClientPort to a client \
             without TLS (add ?secure=true to the connect string for one)"
        )),
        _ => read_failed(err),
    })?;
    let mut r = Reader::new(&reply);
    let parsed = (|| Ok::<_, ZkError>((r.int()?, r.int()?, r.long()?)))();
    let Ok((_protocol, granted, id)) = parsed else {
        return Err(Refused::Retry(format!(
            "{address} sent a malformed session"
        )));
    };
    if granted <= 0 {
        return Err(Refused::Retry(format!("{address} refused the session")));
    }
    if granted < requested {
        return Err(Refused::Fatal(Error::invalid_argument(format!(
            "ZooKeeper at {} grants sessions of at most {granted} ms, shorter than the session \
             timeout of {requested} ms that flakery's lease relies on: set session_timeout_ms \
             (FLAKERY_SESSION_TIMEOUT_MS) to at most {granted}, or raise the servers' \
             maxSessionTimeout",
            settings.address()
        ))));
    }
    if let Some(credentials) = &settings.credentials {
        let mut w = Writer::request(proto::AUTH_XID, op::AUTH);
        w.int(0)
            .string("digest")
            .buffer(credentials.secret().as_bytes());
        write_frame(&mut writer, &w.finish()).map_err(io)?;
        let reply = read_frame(&mut reader).map_err(read_failed)?;
        let header = reply_header(&mut Reader::new(&reply))
            .map_err(|_| Refused::Retry(format!("{address} sent a malformed answer")))?;
        if header.err != 0 {
            return Err(Refused::Fatal(Error::new(
                ErrorCode::CoordinatorUnavailable,
                format!(
                    "ZooKeeper at {} refused the digest credentials of user '{}' ({}): check \
                     the user:password@ part of the connect string",
                    settings.address(),
                    credentials.user(),
                    ZkError::from_code(header.err)
                ),
            )));
        }
    }
    Ok(Session {
        reader,
        writer,
        id,
        timeout: Duration::from_millis(granted as u64),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ZooKeeper's own share (the session timeout per address), at least three attempts per
    /// start, none shorter than the floor unless the start is.
    #[test]
    fn an_attempt_gets_a_share_of_the_session_timeout() {
        let ms = Duration::from_millis;
        assert_eq!(attempt_bound(ms(60_000), 1), ms(20_000));
        assert_eq!(attempt_bound(ms(60_000), 3), ms(20_000));
        assert_eq!(attempt_bound(ms(60_000), 5), ms(12_000));
        assert_eq!(attempt_bound(ms(6_000), 1), ATTEMPT_FLOOR);
        assert_eq!(attempt_bound(ms(6_000), 10), ATTEMPT_FLOOR);
        assert_eq!(attempt_bound(ms(1_500), 2), ms(1_500));
    }

    #[test]
    fn the_backoff_doubles_to_its_cap_with_jitter_and_starts_over_after_a_session() {
        let mut backoff = Backoff::default();
        let mut pauses = Vec::new();
        for now in 0..12 {
            backoff.failed(now);
            let delay = backoff.delay.unwrap();
            let pause = backoff.not_before.unwrap() - now;
            // Between half the delay and all of it, from the instant of the failure.
            let delay_ms = delay.as_millis() as i64;
            assert!(
                pause >= delay_ms / 2 && pause <= delay_ms,
                "{pause} of {delay_ms}"
            );
            pauses.push(delay);
        }
        assert_eq!(pauses[0], BACKOFF_FIRST);
        assert_eq!(pauses[1], BACKOFF_FIRST * 2);
        assert_eq!(*pauses.last().unwrap(), BACKOFF_CAP);
        assert_eq!(backoff.succeeded(), 12);
        // The turn stays at the server that gave the session.
        assert_eq!(backoff.turn, 12);
        backoff.failed(12);
        assert_eq!(backoff.delay, Some(BACKOFF_FIRST));
        assert_eq!(backoff.turn, 13);
    }
}
