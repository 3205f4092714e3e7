//! A session's connection as two halves, one for the reader thread and one for the writer:
//! plain TCP, or TLS over it. TLS keeps one state for both directions (rustls'
//! `ClientConnection`), shared by the halves; its lock is held only to encrypt or decrypt
//! bytes in memory, never across a read or write of the socket, so a reader waiting for the
//! server never holds up the writer.
//!
//! Only the writer writes to the socket, so the records reach it in the order rustls made
//! them. What the reader's side of TLS may have to send (a TLS 1.3 key update answered) is
//! queued by rustls before any later data and goes out with the writer's next frame or ping,
//! as TLS 1.3 asks ("before its next application data").

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::{Arc, Mutex, MutexGuard};

use rustls::ClientConnection;

type Shared = Arc<Mutex<ClientConnection>>;

fn lock(tls: &Shared) -> MutexGuard<'_, ClientConnection> {
    tls.lock().unwrap_or_else(|e| e.into_inner())
}

/// The reading half: the server's bytes, decrypted when TLS.
pub(crate) struct ReadHalf {
    socket: TcpStream,
    tls: Option<Shared>,
}

/// The writing half: our bytes, encrypted when TLS.
pub(crate) struct WriteHalf {
    socket: TcpStream,
    tls: Option<Shared>,
}

/// Splits a connected socket (and its TLS, its handshake done) into halves.
pub(crate) fn split(
    socket: TcpStream,
    tls: Option<ClientConnection>,
) -> io::Result<(ReadHalf, WriteHalf)> {
    let tls = tls.map(|tls| Arc::new(Mutex::new(tls)));
    let reader = ReadHalf {
        socket: socket.try_clone()?,
        tls: tls.clone(),
    };
    Ok((reader, WriteHalf { socket, tls }))
}

impl ReadHalf {
    /// The socket, for its timeouts, address and shutdown (which wakes the other half too).
    pub(crate) fn socket(&self) -> &TcpStream {
        &self.socket
    }
}

impl WriteHalf {
    pub(crate) fn shutdown(&self, how: Shutdown) {
        let _ = self.socket.shutdown(how);
    }
}

impl Read for ReadHalf {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let Some(tls) = &self.tls else {
            return self.socket.read(out);
        };
        // Bounded: each turn either returns or feeds the bytes of one read of the socket.
        loop {
            match lock(tls).reader().read(out) {
                // 0: the server's close_notify.
                Ok(n) => return Ok(n),
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => {}
                Err(err) => return Err(err),
            }
            let mut raw = [0u8; 16 * 1024];
            let n = self.socket.read(&mut raw)?;
            let mut conn = lock(tls);
            if n == 0 {
                // The socket's end: what is left, then Ok(0) after a close_notify, else
                // UnexpectedEof.
                conn.read_tls(&mut io::empty())?;
                return match conn.reader().read(out) {
                    Err(err) if err.kind() == io::ErrorKind::WouldBlock => {
                        Err(io::ErrorKind::UnexpectedEof.into())
                    }
                    other => other,
                };
            }
            let mut fed = &raw[..n];
            while !fed.is_empty() {
                conn.read_tls(&mut fed)?;
                conn.process_new_packets()
                    .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
            }
        }
    }
}

impl Write for WriteHalf {
    fn write(&mut self, frame: &[u8]) -> io::Result<usize> {
        self.write_all(frame)?;
        Ok(frame.len())
    }

    fn write_all(&mut self, frame: &[u8]) -> io::Result<()> {
        let Some(tls) = &self.tls else {
            return self.socket.write_all(frame);
        };
        let records = {
            let mut conn = lock(tls);
            // The buffer limit is lifted at the handshake: this takes the whole frame.
            conn.writer().write_all(frame)?;
            let mut records = Vec::with_capacity(frame.len() + 64);
            while conn.wants_write() {
                conn.write_tls(&mut records)?;
            }
            records
        };
        self.socket.write_all(&records)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
