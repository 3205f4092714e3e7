//! The ZooKeeper wire protocol, as much of it as a lease needs: jute encoding (big-endian
//! integers, length-prefixed buffers and strings, counted vectors), the framed requests and
//! replies, the server's error codes and the znode `Stat`. Pure data: no I/O here (see
//! `transport`). Reference: ZooKeeper's `zookeeper.jute` and `ZooDefs.OpCode`.

use std::fmt;

/// Operation codes (`ZooDefs.OpCode`).
pub(crate) mod op {
    pub const CREATE: i32 = 1;
    pub const DELETE: i32 = 2;
    pub const EXISTS: i32 = 3;
    pub const GET_DATA: i32 = 4;
    pub const SET_DATA: i32 = 5;
    pub const GET_ACL: i32 = 6;
    pub const SET_ACL: i32 = 7;
    pub const GET_CHILDREN: i32 = 8;
    pub const PING: i32 = 11;
    pub const AUTH: i32 = 100;
    pub const CLOSE_SESSION: i32 = -11;
}

/// Reserved request IDs (xids) of the protocol.
pub(crate) const NOTIFICATION_XID: i32 = -1;
pub(crate) const PING_XID: i32 = -2;
pub(crate) const AUTH_XID: i32 = -4;

/// The largest frame accepted from a server: a lease reads marks and a directory listing of
/// at most a few thousand short names, far below this; anything larger is a broken stream.
pub(crate) const MAX_FRAME: usize = 16 << 20;

/// ACL permissions (`ZooDefs.Perms`).
pub(crate) const PERM_READ: i32 = 1;
pub(crate) const PERM_ALL: i32 = 31;

/// An error of a request: the server's code, or the connection's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ZkError {
    /// No answer: the connection broke, or the deadline passed (the request may have been
    /// applied).
    ConnectionLoss,
    NoNode,
    NoAuth,
    BadVersion,
    NodeExists,
    NotEmpty,
    SessionExpired,
    InvalidAcl,
    AuthFailed,
    SessionMoved,
    /// A reply that does not parse.
    Marshalling,
    /// Any other code of the server.
    Other(i32),
}

impl ZkError {
    pub(crate) fn from_code(code: i32) -> ZkError {
        match code {
            -4 => ZkError::ConnectionLoss,
            -5 => ZkError::Marshalling,
            -101 => ZkError::NoNode,
            -102 => ZkError::NoAuth,
            -103 => ZkError::BadVersion,
            -110 => ZkError::NodeExists,
            -111 => ZkError::NotEmpty,
            -112 => ZkError::SessionExpired,
            -114 => ZkError::InvalidAcl,
            -115 => ZkError::AuthFailed,
            -118 => ZkError::SessionMoved,
            other => ZkError::Other(other),
        }
    }
}

impl fmt::Display for ZkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ZkError::Other(code) => write!(f, "error code {code}"),
            other => fmt::Debug::fmt(other, f),
        }
    }
}

pub type ZkResult<T> = std::result::Result<T, ZkError>;

/// How a znode lives: `Persistent` until deleted, `Ephemeral` until its session ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CreateMode {
    Persistent,
    Ephemeral,
}

/// A znode's metadata, as the server sends it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stat {
    pub czxid: i64,
    pub mzxid: i64,
    pub ctime: i64,
    pub mtime: i64,
    pub version: i32,
    pub cversion: i32,
    pub aversion: i32,
    pub ephemeral_owner: i64,
    pub data_length: i32,
    pub num_children: i32,
    pub pzxid: i64,
}

/// One entry of a znode's access control list: `perms` for `scheme:id`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Acl {
    pub perms: i32,
    pub scheme: String,
    pub id: String,
}

impl Acl {
    /// Everything for everyone (`OPEN_ACL_UNSAFE`): what a lease without credentials uses.
    pub(crate) fn open() -> Vec<Acl> {
        vec![Acl {
            perms: PERM_ALL,
            scheme: "world".into(),
            id: "anyone".into(),
        }]
    }
}

/// Jute encoding into a frame (its length is filled in by `finish`).
pub(crate) struct Writer(Vec<u8>);

impl Writer {
    /// A request frame: header (`xid`, `op`) to be followed by its body.
    pub(crate) fn request(xid: i32, op: i32) -> Writer {
        let mut w = Writer(vec![0; 4]);
        w.int(xid).int(op);
        w
    }

    /// The connect request's frame, which has no header.
    pub(crate) fn bare() -> Writer {
        Writer(vec![0; 4])
    }

    pub(crate) fn int(&mut self, v: i32) -> &mut Writer {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }

    pub(crate) fn long(&mut self, v: i64) -> &mut Writer {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }

    pub(crate) fn boolean(&mut self, v: bool) -> &mut Writer {
        self.0.push(u8::from(v));
        self
    }

    pub(crate) fn buffer(&mut self, v: &[u8]) -> &mut Writer {
        self.int(v.len() as i32);
        self.0.extend_from_slice(v);
        self
    }

    /// Bytes already encoded (a request's body).
    pub(crate) fn raw(&mut self, v: &[u8]) -> &mut Writer {
        self.0.extend_from_slice(v);
        self
    }

    pub(crate) fn string(&mut self, v: &str) -> &mut Writer {
        self.buffer(v.as_bytes())
    }

    pub(crate) fn acl(&mut self, acl: &[Acl]) -> &mut Writer {
        self.int(acl.len() as i32);
        for entry in acl {
            self.int(entry.perms)
                .string(&entry.scheme)
                .string(&entry.id);
        }
        self
    }

    pub(crate) fn finish(mut self) -> Vec<u8> {
        let len = (self.0.len() - 4) as i32;
        self.0[..4].copy_from_slice(&len.to_be_bytes());
        self.0
    }
}

/// Jute decoding of a received frame (without its length prefix).
pub(crate) struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    pub(crate) fn new(frame: &'a [u8]) -> Reader<'a> {
        Reader(frame)
    }

    fn take(&mut self, n: usize) -> ZkResult<&'a [u8]> {
        if self.0.len() < n {
            return Err(ZkError::Marshalling);
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }

    pub(crate) fn int(&mut self) -> ZkResult<i32> {
        let b = self.take(4)?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    pub(crate) fn long(&mut self) -> ZkResult<i64> {
        let b = self.take(8)?;
        let mut a = [0; 8];
        a.copy_from_slice(b);
        Ok(i64::from_be_bytes(a))
    }

    /// A buffer; `-1` (null) reads as empty.
    pub(crate) fn buffer(&mut self) -> ZkResult<Vec<u8>> {
        let len = self.int()?;
        if len == -1 {
            return Ok(Vec::new());
        }
        if len < 0 {
            return Err(ZkError::Marshalling);
        }
        Ok(self.take(len as usize)?.to_vec())
    }

    pub(crate) fn string(&mut self) -> ZkResult<String> {
        String::from_utf8(self.buffer()?).map_err(|_| ZkError::Marshalling)
    }

    fn count(&mut self) -> ZkResult<usize> {
        let n = self.int()?;
        // Every element takes at least four bytes: a count beyond that is a broken frame.
        if n < 0 || n as usize > self.0.len() / 4 {
            return Err(ZkError::Marshalling);
        }
        Ok(n as usize)
    }

    pub(crate) fn strings(&mut self) -> ZkResult<Vec<String>> {
        (0..self.count()?).map(|_| self.string()).collect()
    }

    pub(crate) fn acl(&mut self) -> ZkResult<Vec<Acl>> {
        (0..self.count()?)
            .map(|_| {
                Ok(Acl {
                    perms: self.int()?,
                    scheme: self.string()?,
                    id: self.string()?,
                })
            })
            .collect()
    }

    pub(crate) fn stat(&mut self) -> ZkResult<Stat> {
        Ok(Stat {
            czxid: self.long()?,
            mzxid: self.long()?,
            ctime: self.long()?,
            mtime: self.long()?,
            version: self.int()?,
            cversion: self.int()?,
            aversion: self.int()?,
            ephemeral_owner: self.long()?,
            data_length: self.int()?,
            num_children: self.int()?,
            pzxid: self.long()?,
        })
    }
}

/// A reply's header: the request it answers, and the server's error code (0: none).
pub(crate) struct ReplyHeader {
    pub(crate) xid: i32,
    pub(crate) err: i32,
}

pub(crate) fn reply_header(r: &mut Reader<'_>) -> ZkResult<ReplyHeader> {
    let xid = r.int()?;
    let _zxid = r.long()?;
    let err = r.int()?;
    Ok(ReplyHeader { xid, err })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_round_trips() {
        let mut w = Writer::request(7, op::CREATE);
        w.string("/a")
            .buffer(b"x")
            .acl(&Acl::open())
            .int(1)
            .long(-2)
            .boolean(true);
        let frame = w.finish();
        assert_eq!(
            i32::from_be_bytes([frame[0], frame[1], frame[2], frame[3]]) as usize,
            frame.len() - 4
        );
        let mut r = Reader::new(&frame[4..]);
        assert_eq!((r.int(), r.int()), (Ok(7), Ok(op::CREATE)));
        assert_eq!(r.string().unwrap(), "/a");
        assert_eq!(r.buffer().unwrap(), b"x");
        assert_eq!(r.acl().unwrap(), Acl::open());
        assert_eq!((r.int(), r.long()), (Ok(1), Ok(-2)));
    }

    #[test]
    fn a_broken_frame_is_an_error_not_a_panic_or_a_huge_allocation() {
        for frame in [
            &[0u8, 0, 0][..],
            &[0x7f, 0xff, 0xff, 0xff],
            &[0xff, 0xff, 0xff, 0xfe],
        ] {
            assert!(Reader::new(frame).buffer().is_err());
            assert!(Reader::new(frame).strings().is_err());
            assert!(Reader::new(frame).acl().is_err());
        }
        assert_eq!(Reader::new(&[0xff; 4]).buffer(), Ok(Vec::new()));
        assert_eq!(Reader::new(&[0; 10]).stat(), Err(ZkError::Marshalling));
    }
}
