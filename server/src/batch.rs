//! The body of a batch answer: the IDs are made at once (so a failure is a whole error, never
//! half an answer), but their text is written a piece at a time as the transport asks for it,
//! so a batch holds 8 bytes an ID until sent instead of its whole text.

use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::Bytes;
use flakery::text::{IdFormat, BASE32_LEN, BASE62_LEN};
use http_body::{Frame, SizeHint};

use crate::budget::CHUNK;

/// What surrounds the IDs: `open` id `between` id ... `close`.
#[derive(Clone, Copy)]
pub struct Shape {
    pub open: &'static str,
    pub between: &'static str,
    pub close: &'static str,
}

pub const JSON: Shape = Shape {
    open: "{\"ids\":[\"",
    between: "\",\"",
    close: "\"]}",
};

pub const LINES: Shape = Shape {
    open: "",
    between: "\n",
    close: "\n",
};

/// The longest text of one ID in `format` (a non-negative i64 has at most 19 digits).
fn longest(format: IdFormat) -> usize {
    match format {
        IdFormat::Decimal => 19,
        IdFormat::Base32 => BASE32_LEN,
        IdFormat::Base62 => BASE62_LEN,
    }
}

/// The most bytes an answer of `count` IDs holds before it is sent: the IDs and their text.
pub fn most_bytes(count: usize, format: IdFormat, shape: Shape) -> usize {
    count * (std::mem::size_of::<i64>() + longest(format) + shape.between.len())
        + shape.open.len()
        + shape.close.len()
}

/// The most bytes a binary answer of `count` IDs holds before it is sent: the IDs made, and
/// their words.
pub fn most_word_bytes(count: usize) -> usize {
    count * 2 * std::mem::size_of::<i64>()
}

/// The IDs as 8-byte little-endian words, the binary answer's body.
pub fn little_endian(ids: &[i64]) -> Vec<u8> {
    let mut out = Vec::with_capacity(std::mem::size_of_val(ids));
    for id in ids {
        out.extend_from_slice(&id.to_le_bytes());
    }
    out
}

fn push_id(out: &mut String, id: i64, format: IdFormat, decimal: &mut itoa::Buffer) {
    // The text forms' alphabets are ASCII; an ID is never negative, the one thing they refuse.
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    match format {
        IdFormat::Decimal => out.push_str(decimal.format(id)),
        IdFormat::Base32 => out.push_str(
            &flakery::text::encode_base32(id).map_or_else(|_| "?".repeat(BASE32_LEN), |t| text(&t)),
        ),
        IdFormat::Base62 => out.push_str(
            &flakery::text::encode_base62(id).map_or_else(|_| "?".repeat(BASE62_LEN), |t| text(&t)),
        ),
    }
}

pub struct BatchBody {
    ids: Vec<i64>,
    next: usize,
    format: IdFormat,
    shape: Shape,
    len: u64,
    done: bool,
}

impl BatchBody {
    /// `ids` must not be empty (a batch is at least one ID).
    pub fn new(ids: Vec<i64>, format: IdFormat, shape: Shape) -> Self {
        let mut decimal = itoa::Buffer::new();
        let text: usize = match format {
            IdFormat::Decimal => ids.iter().map(|&id| decimal.format(id).len()).sum(),
            format => ids.len() * longest(format),
        };
        let len = text
            + shape.between.len() * ids.len().saturating_sub(1)
            + shape.open.len()
            + shape.close.len();
        BatchBody {
            ids,
            next: 0,
            format,
            shape,
            len: len as u64,
            done: false,
        }
    }

    /// The bytes this answer holds until it is sent: its IDs and its text.
    pub fn bytes(&self) -> usize {
        self.ids.len() * std::mem::size_of::<i64>() + self.len as usize
    }

    fn piece(&mut self) -> String {
        let mut out = String::with_capacity(CHUNK);
        let mut decimal = itoa::Buffer::new();
        if self.next == 0 {
            out.push_str(self.shape.open);
        }
        let room = CHUNK - longest(self.format) - self.shape.between.len();
        while self.next < self.ids.len() && out.len() <= room {
            if self.next > 0 {
                out.push_str(self.shape.between);
            }
            push_id(&mut out, self.ids[self.next], self.format, &mut decimal);
            self.next += 1;
        }
        if self.next == self.ids.len() {
            out.push_str(self.shape.close);
            self.done = true;
        }
        out
    }
}

impl http_body::Body for BatchBody {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = self.get_mut();
        if this.done {
            return Poll::Ready(None);
        }
        Poll::Ready(Some(Ok(Frame::data(Bytes::from(this.piece())))))
    }

    fn is_end_stream(&self) -> bool {
        self.done
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body::Body as _;

    fn whole(mut body: BatchBody) -> String {
        let hinted = body.size_hint().exact();
        let mut cx = Context::from_waker(std::task::Waker::noop());
        let mut out = Vec::new();
        while let Poll::Ready(Some(Ok(frame))) = Pin::new(&mut body).poll_frame(&mut cx) {
            let data = frame.into_data().unwrap();
            assert!(data.len() <= CHUNK, "a piece is at most CHUNK bytes");
            out.extend_from_slice(&data);
        }
        assert!(body.is_end_stream());
        assert_eq!(
            hinted,
            Some(out.len() as u64),
            "the length given is the length sent"
        );
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn pieces_join_to_the_whole_answer() {
        let ids: Vec<i64> = (0..5000).map(|i| i * 1_000_000_007).collect();
        let json = whole(BatchBody::new(ids.clone(), IdFormat::Decimal, JSON));
        let parsed: serde_json::Value = serde_json::from_str(&json).unwrap();
        let back: Vec<i64> = parsed["ids"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().parse().unwrap())
            .collect();
        assert_eq!(back, ids);
        let lines = whole(BatchBody::new(ids.clone(), IdFormat::Base62, LINES));
        assert_eq!(lines.lines().count(), ids.len());
        assert!(lines.ends_with('\n'));
        assert_eq!(
            whole(BatchBody::new(vec![42], IdFormat::Decimal, JSON)),
            "{\"ids\":[\"42\"]}"
        );
    }

    #[test]
    fn words_are_little_endian_and_within_their_estimate() {
        let ids = [1i64, 0x0102_0304_0506_0708, i64::MAX];
        let words = little_endian(&ids);
        assert_eq!(words.len(), 24);
        assert_eq!(words[..8], [1, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(words[8..16], [8, 7, 6, 5, 4, 3, 2, 1]);
        assert_eq!(
            words[16..],
            [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]
        );
        assert!(words.len() + ids.len() * 8 <= most_word_bytes(ids.len()));
    }

    #[test]
    fn the_estimate_covers_the_answer() {
        let ids = vec![i64::MAX; 100];
        let body = BatchBody::new(ids, IdFormat::Decimal, JSON);
        assert!(body.bytes() <= most_bytes(100, IdFormat::Decimal, JSON));
    }
}
