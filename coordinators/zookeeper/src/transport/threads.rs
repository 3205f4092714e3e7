//! The two threads of a session: a writer that sends requests in order and pings when idle,
//! and a reader that hands each reply to its request. Whichever sees the connection end
//! first reports it (`Breaks`).

use std::collections::VecDeque;
use std::net::Shutdown;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use super::{Client, Pending, Shared};
use crate::connect::{read_frame, write_frame, Session};
use crate::link::{ReadHalf, WriteHalf};
use crate::proto::{self, op, reply_header, Reader, Writer, ZkError};
use crate::settings::Settings;
use flakery::error::{Error, ErrorCode, Result};

/// Starts the writer and reader threads of an established session.
pub(crate) fn start(
    settings: &Settings,
    session: Session,
    on_broken: Arc<dyn Fn() + Send + Sync>,
) -> Result<Client> {
    let thread_error = |e: std::io::Error| {
        Error::new(
            ErrorCode::CoordinatorUnavailable,
            format!("cannot start a ZooKeeper client thread: {e}"),
        )
    };
    let Session {
        reader,
        writer,
        id,
        timeout,
    } = session;
    let socket = reader.socket();
    let address = socket
        .peer_addr()
        .map_or_else(|_| settings.address(), |a| a.to_string());
    // The server hears from us at least every third of the session; we from it as often
    // (its answers to the pings), so silence for two thirds of it is a dead connection.
    let ping_every = timeout / 3;
    let silence = timeout * 2 / 3;
    let _ = socket.set_read_timeout(Some(silence));
    let _ = socket.set_write_timeout(Some(silence));
    let shared = Arc::new(Shared {
        broken: AtomicBool::new(false),
        closing: AtomicBool::new(false),
        cause: Mutex::new(None),
        waiting: Mutex::new(VecDeque::new()),
    });
    let (requests, queue) = mpsc::channel::<Pending>();
    let writer_breaks = Breaks {
        shared: Arc::clone(&shared),
        address: address.clone(),
        session_id: id,
        on_broken: Arc::clone(&on_broken),
    };
    std::thread::Builder::new()
        .name("flakery-zk-writer".into())
        .spawn(move || write_loop(writer, queue, &writer_breaks, ping_every))
        .map_err(thread_error)?;
    let reader_shared = Arc::clone(&shared);
    std::thread::Builder::new()
        .name("flakery-zk-reader".into())
        .spawn(move || {
            let breaks = Breaks {
                shared: reader_shared,
                address,
                session_id: id,
                on_broken,
            };
            read_loop(reader, &breaks)
        })
        .map_err(thread_error)?;
    Ok(Client {
        requests: Some(requests),
        shared,
        acl: settings.acl(),
    })
}

/// What the reader and the writer share to report the connection's end: whichever of them
/// sees it first records the cause (with the session), raises the alarm and logs it once.
struct Breaks {
    shared: Arc<Shared>,
    address: String,
    session_id: i64,
    on_broken: Arc<dyn Fn() + Send + Sync>,
}

impl Breaks {
    fn report(&self, cause: String) {
        let closing = self.shared.closing.load(Ordering::SeqCst);
        let cause = format!("session 0x{:x}: {cause}", self.session_id);
        if self.shared.break_with(cause.clone()) && !closing {
            // The alarm first: the keeper has fenced once the line is out, so a reader of the
            // log (the reconnect test) sees the lease's state after the fence, not a race.
            (self.on_broken)();
            tracing::warn!("the ZooKeeper connection broke ({cause}); leasing again");
        }
    }
}

/// Sends requests in order, pings when idle, and ends the session when the handle is gone.
fn write_loop(
    mut stream: WriteHalf,
    queue: mpsc::Receiver<Pending>,
    breaks: &Breaks,
    ping_every: Duration,
) {
    let shared = &breaks.shared;
    let mut xid: i32 = 0;
    let mut closed = false;
    loop {
        let frame = match queue.recv_timeout(ping_every) {
            Ok(pending) => {
                if shared.broken.load(Ordering::SeqCst) {
                    let _ = pending.reply.send(Err(ZkError::ConnectionLoss));
                    continue;
                }
                xid = if xid == i32::MAX { 1 } else { xid + 1 };
                closed |= pending.op == op::CLOSE_SESSION;
                let mut w = Writer::request(xid, pending.op);
                w.raw(&pending.body);
                let frame = w.finish();
                shared.lock_waiting().push_back((xid, pending.reply));
                frame
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if shared.broken.load(Ordering::SeqCst) {
                    break;
                }
                Writer::request(proto::PING_XID, op::PING).finish()
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                if !closed && !shared.broken.load(Ordering::SeqCst) {
                    let frame = Writer::request(xid.wrapping_add(1), op::CLOSE_SESSION).finish();
                    let _ = write_frame(&mut stream, &frame);
                }
                break;
            }
        };
        if let Err(err) = write_frame(&mut stream, &frame) {
            // The peer's address as connected: after a reset the socket no longer knows it.
            breaks.report(format!(
                "writing to ZooKeeper at {} failed: {err}",
                breaks.address
            ));
            // Wakes the reader too.
            stream.shutdown(Shutdown::Both);
            return;
        }
    }
    // The reader reads on until the server closes: the answer to the session's close.
    stream.shutdown(Shutdown::Write);
}

/// Hands each reply to its request; on the connection's end, answers every waiting request,
/// records why, and (for a client still in use) logs it once and raises the alarm.
fn read_loop(mut stream: ReadHalf, breaks: &Breaks) {
    let (shared, address) = (&breaks.shared, &breaks.address);
    let cause = loop {
        let frame = match read_frame(&mut stream) {
            Ok(frame) => frame,
            Err(err) => {
                break match err.kind() {
                    std::io::ErrorKind::UnexpectedEof => {
                        format!("ZooKeeper at {address} closed the connection")
                    }
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => format!(
                        "ZooKeeper at {address} sent nothing for two thirds of the session \
                         timeout"
                    ),
                    _ => format!("the connection to ZooKeeper at {address} failed: {err}"),
                }
            }
        };
        let mut r = Reader::new(&frame);
        let Ok(header) = reply_header(&mut r) else {
            break format!("ZooKeeper at {address} sent a malformed answer");
        };
        if header.xid == proto::PING_XID
            || header.xid == proto::NOTIFICATION_XID
            || header.xid == proto::AUTH_XID
        {
            continue;
        }
        let Some((xid, reply)) = shared.lock_waiting().pop_front() else {
            break format!("ZooKeeper at {address} answered a request never sent");
        };
        if xid != header.xid {
            break format!("ZooKeeper at {address} answered out of order");
        }
        let err = ZkError::from_code(header.err);
        let _ = reply.send(if header.err == 0 {
            Ok(frame[16..].to_vec())
        } else {
            Err(err)
        });
        if matches!(err, ZkError::SessionExpired | ZkError::SessionMoved) && header.err != 0 {
            break format!("ZooKeeper at {address} ended the session ({err})");
        }
    };
    breaks.report(cause);
    let _ = stream.socket().shutdown(Shutdown::Both);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    fn breaks(closing: bool) -> (Breaks, Arc<AtomicUsize>) {
        let alarms = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&alarms);
        let breaks = Breaks {
            shared: Arc::new(Shared {
                broken: AtomicBool::new(false),
                closing: AtomicBool::new(closing),
                cause: Mutex::new(None),
                waiting: Mutex::new(VecDeque::new()),
            }),
            address: "127.0.0.1:2181".into(),
            session_id: 0x2a,
            on_broken: Arc::new(move || {
                counted.fetch_add(1, Ordering::SeqCst);
            }),
        };
        (breaks, alarms)
    }

    /// The writer and the reader may each see the end; the first names the cause with the
    /// session, and the alarm is raised once, whichever it is.
    #[test]
    fn the_first_to_see_the_end_records_it_with_the_session_and_raises_one_alarm() {
        let (breaks, alarms) = breaks(false);
        breaks.report("writing to ZooKeeper at 127.0.0.1:2181 failed: reset".into());
        breaks.report("ZooKeeper at 127.0.0.1:2181 closed the connection".into());
        assert!(breaks.shared.broken.load(Ordering::SeqCst));
        assert_eq!(
            breaks.shared.cause.lock().unwrap().as_deref(),
            Some("session 0x2a: writing to ZooKeeper at 127.0.0.1:2181 failed: reset")
        );
        assert_eq!(alarms.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn an_end_while_closing_raises_no_alarm() {
        let (breaks, alarms) = breaks(true);
        breaks.report("ZooKeeper at 127.0.0.1:2181 closed the connection".into());
        assert!(breaks.shared.broken.load(Ordering::SeqCst));
        assert_eq!(alarms.load(Ordering::SeqCst), 0);
    }
}
