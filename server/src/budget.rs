//! The bound on the bytes of answers made but not yet sent, across every connection and
//! protocol. A client that asks for large answers and never reads them (an HTTP/2 receive
//! window of 0, a gRPC stream it does not consume, an HTTP/1.1 socket it does not read) would
//! otherwise make the server hold every answer it asked for.
//!
//! Bytes are counted from before an answer is made until the transport lets go of them: a
//! handler reserves its answer's size before making it (`Conn::reserve`); the reservation
//! travels in the response's extensions to the response body (`MeteredBody`), which gives
//! each piece it yields a part of the reservation, released only when the transport drops the
//! piece (written to the socket, or discarded with its stream). What is left when a body is
//! dropped is released then. Each connection may hold at most a share of the whole, so a few
//! clients that never read cannot take it all. Past either bound a request gets 503
//! `overloaded`.

use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use axum::body::{Body, Bytes};
use http_body::{Frame, SizeHint};

use crate::error::ApiError;

/// The largest piece a body yields at once (HTTP/2's default frame size).
pub const CHUNK: usize = 16 * 1024;

/// Each connection may hold this fraction of the whole budget.
const SHARE_OF_BUDGET: usize = 8;

/// A count with a limit, taken only whole (never past the limit) or forced: bytes here, and
/// the requests in flight (`guard`).
pub(crate) struct Counter {
    used: AtomicUsize,
    limit: usize,
}

impl Counter {
    pub(crate) fn new(limit: usize) -> Self {
        Counter {
            used: AtomicUsize::new(0),
            limit,
        }
    }

    fn try_take(&self, n: usize) -> bool {
        self.used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
                used.checked_add(n).filter(|total| *total <= self.limit)
            })
            .is_ok()
    }

    /// One unit of the count until the slot is dropped, if the limit leaves one.
    pub(crate) fn slot(&self) -> Option<Slot<'_>> {
        self.try_take(1).then_some(Slot(self))
    }

    fn force(&self, n: usize) {
        self.used.fetch_add(n, Ordering::AcqRel);
    }

    fn give_back(&self, n: usize) {
        self.used.fetch_sub(n, Ordering::AcqRel);
    }
}

/// The whole budget, shared by every connection.
pub(crate) struct Slot<'a>(&'a Counter);

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        self.0.give_back(1);
    }
}

pub struct Budget {
    bytes: Counter,
}

impl Budget {
    pub fn new(limit: usize) -> Arc<Self> {
        Arc::new(Budget {
            bytes: Counter::new(limit.max(1)),
        })
    }

    /// Bytes reserved or unsent now, over every connection.
    #[cfg(test)]
    fn used(&self) -> usize {
        self.bytes.used.load(Ordering::Acquire)
    }

    /// The account of one new connection.
    pub fn connection(self: &Arc<Self>) -> Arc<Conn> {
        Arc::new(Conn {
            budget: Arc::clone(self),
            bytes: Counter::new((self.bytes.limit / SHARE_OF_BUDGET).max(1)),
        })
    }
}

/// One connection's account: its share of the budget.
pub struct Conn {
    budget: Arc<Budget>,
    bytes: Counter,
}

impl Conn {
    /// Reserves `bytes` for an answer about to be made, or refuses with 503 `overloaded`.
    pub fn reserve(self: &Arc<Self>, bytes: usize) -> Result<Reservation, ApiError> {
        if !self.bytes.try_take(bytes) {
            return Err(ApiError::overloaded(
                "this connection holds too many bytes of answers it has not read: read them, \
                 or retry shortly",
            ));
        }
        if !self.budget.bytes.try_take(bytes) {
            self.bytes.give_back(bytes);
            return Err(ApiError::overloaded(
                "too many bytes of answers are waiting for clients to read them: retry shortly",
            ));
        }
        Ok(self.reservation(bytes, false))
    }

    /// Counts `bytes` that exist already (a small answer, a health check) past the bounds.
    pub fn force(self: &Arc<Self>, bytes: usize) -> Reservation {
        self.take_forced(bytes);
        self.reservation(bytes, false)
    }

    /// Reserves the bytes a stream keeps in its pipeline for its whole life; what it yields
    /// is counted on top until the transport lets go of it.
    pub fn reserve_standing(self: &Arc<Self>, bytes: usize) -> Result<Reservation, ApiError> {
        let mut reservation = self.reserve(bytes)?;
        reservation.standing = true;
        Ok(reservation)
    }

    fn reservation(self: &Arc<Self>, bytes: usize, standing: bool) -> Reservation {
        Reservation {
            conn: Arc::clone(self),
            bytes,
            standing,
        }
    }

    fn take_forced(&self, bytes: usize) {
        self.bytes.force(bytes);
        self.budget.bytes.force(bytes);
    }

    fn give_back(&self, bytes: usize) {
        if bytes > 0 {
            self.bytes.give_back(bytes);
            self.budget.bytes.give_back(bytes);
        }
    }
}

/// Bytes counted for an answer; given back when dropped. The body splits off a part for each
/// piece it yields.
pub struct Reservation {
    conn: Arc<Conn>,
    bytes: usize,
    standing: bool,
}

impl Reservation {
    /// Gives back what the answer turned out not to need.
    pub fn shrink_to(&mut self, bytes: usize) {
        if bytes < self.bytes {
            self.conn.give_back(self.bytes - bytes);
            self.bytes = bytes;
        }
    }

    /// The part that counts `bytes` of the answer about to be yielded (counted past the bounds
    /// for what the reservation does not cover: the bytes exist already).
    fn split_off(&mut self, bytes: usize) -> Reservation {
        let covered = if self.standing {
            0
        } else {
            bytes.min(self.bytes)
        };
        self.bytes -= covered;
        self.conn.take_forced(bytes - covered);
        self.conn.reservation(bytes, false)
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.conn.give_back(self.bytes);
    }
}

/// A reservation carried in a response's extensions (which must be `Clone`) from the handler
/// that made the answer to the guard that meters its body.
#[derive(Clone)]
pub struct Attached(Arc<Mutex<Option<Reservation>>>);

impl Attached {
    pub fn new(reservation: Reservation) -> Self {
        Attached(Arc::new(Mutex::new(Some(reservation))))
    }

    pub fn take(&self) -> Option<Reservation> {
        self.0.lock().ok()?.take()
    }
}

/// A piece of an answer and the part of the reservation that counts it: released when the
/// transport drops the piece, after its last byte is written or with its stream.
struct Counted {
    piece: Bytes,
    _counted: Reservation,
}

impl AsRef<[u8]> for Counted {
    fn as_ref(&self) -> &[u8] {
        &self.piece
    }
}

/// A response body that counts what it yields until the transport lets go of it, in pieces of
/// at most `CHUNK` bytes each in an allocation of its own (a piece of a larger buffer would
/// keep the whole buffer alive until the last piece left).
pub struct MeteredBody {
    inner: Body,
    reservation: Reservation,
    pending: Option<Bytes>,
}

impl MeteredBody {
    pub fn new(inner: Body, reservation: Reservation) -> Self {
        MeteredBody {
            inner,
            reservation,
            pending: None,
        }
    }

    fn counted(&mut self, piece: Bytes) -> Bytes {
        let counted = self.reservation.split_off(piece.len());
        Bytes::from_owner(Counted {
            piece,
            _counted: counted,
        })
    }

    fn piece(&mut self) -> Option<Bytes> {
        let pending = self.pending.as_mut()?;
        let n = pending.len().min(CHUNK);
        let piece = Bytes::copy_from_slice(&pending[..n]);
        let rest = pending.split_off(n);
        self.pending = (!rest.is_empty()).then_some(rest);
        Some(self.counted(piece))
    }
}

impl http_body::Body for MeteredBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let this = self.get_mut();
        loop {
            if let Some(piece) = this.piece() {
                return Poll::Ready(Some(Ok(Frame::data(piece))));
            }
            match std::task::ready!(Pin::new(&mut this.inner).poll_frame(cx)) {
                Some(Ok(frame)) => match frame.into_data() {
                    Ok(data) if data.len() > CHUNK => this.pending = Some(data),
                    Ok(data) => return Poll::Ready(Some(Ok(Frame::data(this.counted(data))))),
                    Err(frame) => return Poll::Ready(Some(Ok(frame))),
                },
                other => return Poll::Ready(other),
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.pending.is_none() && self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        let inner = self.inner.size_hint();
        let pending = self.pending.as_ref().map_or(0, |p| p.len() as u64);
        let mut hint = SizeHint::new();
        hint.set_lower(inner.lower() + pending);
        if let Some(upper) = inner.upper() {
            hint.set_upper(upper + pending);
        }
        hint
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_connection_holds_at_most_its_share_and_the_whole_is_bounded() {
        let budget = Budget::new(80);
        let a = budget.connection();
        let held = a.reserve(10).unwrap();
        assert!(a.reserve(1).is_err(), "a connection's share is an eighth");
        drop(held);
        let conns: Vec<_> = (0..8).map(|_| budget.connection()).collect();
        let all: Vec<_> = conns.iter().map(|c| c.reserve(10).unwrap()).collect();
        assert_eq!(budget.used(), 80);
        assert!(a.reserve(1).is_err(), "the whole budget is taken");
        drop(all);
        assert_eq!(budget.used(), 0);
    }

    fn poll(body: &mut MeteredBody) -> Option<Bytes> {
        let mut cx = Context::from_waker(std::task::Waker::noop());
        match http_body::Body::poll_frame(Pin::new(body), &mut cx) {
            Poll::Ready(Some(Ok(frame))) => frame.into_data().ok(),
            _ => None,
        }
    }

    #[test]
    fn yielded_pieces_stay_counted_until_the_transport_drops_them() {
        let budget = Budget::new(8 * 1024 * 1024);
        let conn = budget.connection();
        let answer = vec![7u8; 3 * CHUNK + 5];
        let reservation = conn.reserve(answer.len() + 100).unwrap();
        let mut body = MeteredBody::new(Body::from(answer), reservation);
        let first = poll(&mut body).unwrap();
        assert_eq!(first.len(), CHUNK, "a large frame goes out in pieces");
        let rest: Vec<Bytes> = std::iter::from_fn(|| poll(&mut body)).collect();
        assert_eq!(rest.iter().map(Bytes::len).sum::<usize>(), 2 * CHUNK + 5);
        drop(body);
        assert_eq!(
            budget.used(),
            3 * CHUNK + 5,
            "the unused 100 are back; pieces held count"
        );
        drop(first);
        assert_eq!(budget.used(), 2 * CHUNK + 5);
        drop(rest);
        assert_eq!(budget.used(), 0);
    }

    #[test]
    fn a_standing_reservation_counts_what_it_yields_on_top() {
        let budget = Budget::new(800);
        let conn = budget.connection();
        let stream = conn.reserve_standing(50).unwrap();
        let mut body = MeteredBody::new(Body::from(vec![1u8; 30]), stream);
        let piece = poll(&mut body).unwrap();
        assert_eq!(budget.used(), 80);
        drop(body);
        assert_eq!(budget.used(), 30);
        drop(piece);
        assert_eq!(budget.used(), 0);
    }
}
