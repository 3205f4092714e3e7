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

/// The most one read of the socket takes.
const RAW_READ: usize = 16 * 1024;

fn lock(tls: &Shared) -> MutexGuard<'_, ClientConnection> {
    tls.lock().unwrap_or_else(|e| e.into_inner())
}

/// The reading half: the server's bytes, decrypted when TLS.
pub(crate) struct ReadHalf {
    socket: TcpStream,
    tls: Option<Shared>,
    /// One read of the socket, and the part of it not yet given to rustls (`raw[fed..got]`).
    raw: Box<[u8]>,
    fed: usize,
    got: usize,
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
        raw: vec![0u8; RAW_READ].into_boxed_slice(),
        fed: 0,
        got: 0,
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
        // Bounded: each turn returns, or gives rustls at least one byte of one socket read, or
        // reads the socket. rustls takes no more while 16 KiB of its plaintext is unread (one
        // read of the socket can hold a full record and more): the plaintext goes out first,
        // and the rest of the read waits in `raw` for the next turn.
        loop {
            let mut conn = lock(tls);
            match conn.reader().read(out) {
                // 0: the server's close_notify.
                Ok(n) => return Ok(n),
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => {}
                Err(err) => return Err(err),
            }
            if self.fed < self.got {
                let mut rest = &self.raw[self.fed..self.got];
                let took = conn.read_tls(&mut rest)?;
                if took == 0 {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        "TLS: a record rustls could not take",
                    ));
                }
                self.fed += took;
                conn.process_new_packets()
                    .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
                continue;
            }
            drop(conn);
            let n = self.socket.read(&mut self.raw)?;
            (self.fed, self.got) = (0, n);
            if n == 0 {
                // The socket's end: what is left, then Ok(0) after a close_notify, else
                // UnexpectedEof.
                let mut conn = lock(tls);
                conn.read_tls(&mut io::empty())?;
                return match conn.reader().read(out) {
                    Err(err) if err.kind() == io::ErrorKind::WouldBlock => {
                        Err(io::ErrorKind::UnexpectedEof.into())
                    }
                    other => other,
                };
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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    use std::net::TcpListener;

    /// A self-signed pair for localhost made for this test (openssl, P-256, to 2126): the
    /// client trusts the certificate itself.
    pub(crate) const CERT: &str = "-----BEGIN CERTIFICATE-----
MIIBkjCCATigAwIBAgIUCwsnWyFJY4ag6O8HAfd/EX20p7MwCgYIKoZIzj0EAwIw
FDESMBAGA1UEAwwJbG9jYWxob3N0MCAXDTI2MTEyODIyMDY0NVoYDzIxMjYxMTA0
MjIwNjQ1WjAUMRIwEAYDVQQDDAlsb2NhbGhvc3QwWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAAR3wyhwI0ZnGfeexciZsR0GdRawJuIlBX8wzR/vQiRshd1aTQHCcDZD
7njw8Of3DRcdKFtAYTTjuOHXJ6PtBkXPo2YwZDAdBgNVHQ4EFgQUiBS0TrGzpLq9
TjhJAEKwxKxpykwwHwYDVR0jBBgwFoAUiBS0TrGzpLq9TjhJAEKwxKxpykwwFAYD
VR0RBA0wC4IJbG9jYWxob3N0MAwGA1UdEwEB/wQCMAAwCgYIKoZIzj0EAwIDSAAw
RQIhAPGuSAMYrQaNEBNRw7adpVh0btG2TGn2/0UZe7RDjx/yAiAijU1PnEoL8Qa1
/yBepAmgfcjFdlyEO3IvvWlKYfcIrA==
-----END CERTIFICATE-----
";
    pub(crate) const KEY: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgORM2kIAaLSz1ADqY
j7f9lZhC0j3uSuom4jXF+rMMp52hRANCAAR3wyhwI0ZnGfeexciZsR0GdRawJuIl
BX8wzR/vQiRshd1aTQHCcDZD7njw8Of3DRcdKFtAYTTjuOHXJ6PtBkXP
-----END PRIVATE KEY-----
";

    /// A server that sends a full 16 KiB record and two small ones at once: the socket's
    /// second read holds the end of the full one and the others behind it, more than rustls
    /// takes before its plaintext is read. Every byte reaches the reader.
    #[test]
    fn a_full_record_and_more_in_one_socket_read_are_all_read() {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let cert = CertificateDer::from_pem_slice(CERT.as_bytes()).unwrap();
        let key = PrivateKeyDer::from_pem_slice(KEY.as_bytes()).unwrap();
        let server_config = Arc::new(
            rustls::ServerConfig::builder_with_provider(Arc::clone(&provider))
                .with_safe_default_protocol_versions()
                .unwrap()
                .with_no_client_auth()
                .with_single_cert(vec![cert.clone()], key)
                .unwrap(),
        );
        let mut roots = rustls::RootCertStore::empty();
        roots.add(cert).unwrap();
        let client_config = Arc::new(
            rustls::ClientConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()
                .unwrap()
                .with_root_certificates(roots)
                .with_no_client_auth(),
        );
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let (sent, all_sent) = std::sync::mpsc::channel();
        let server = std::thread::spawn(move || {
            let (mut sock, _) = listener.accept().unwrap();
            let mut conn = rustls::ServerConnection::new(server_config).unwrap();
            while conn.is_handshaking() {
                conn.complete_io(&mut sock).unwrap();
            }
            let mut wire = Vec::new();
            for (byte, len) in [(b'a', 16 * 1024), (b'b', 10), (b'c', 4000)] {
                conn.writer().write_all(&vec![byte; len]).unwrap();
            }
            while conn.wants_write() {
                conn.write_tls(&mut wire).unwrap();
            }
            sock.write_all(&wire).unwrap();
            sent.send(()).unwrap();
            sock
        });
        let mut sock = TcpStream::connect(addr).unwrap();
        let name = "localhost".try_into().unwrap();
        let mut conn = ClientConnection::new(client_config, name).unwrap();
        while conn.is_handshaking() {
            conn.complete_io(&mut sock).unwrap();
        }
        // Everything is in the socket before the first read.
        all_sent.recv().unwrap();
        let (mut reader, _writer) = split(sock, Some(conn)).unwrap();
        let mut got = vec![0u8; 16 * 1024 + 10 + 4000];
        reader.read_exact(&mut got).unwrap();
        assert!(got[..16 * 1024].iter().all(|&b| b == b'a'));
        assert!(got[16 * 1024..16 * 1024 + 10].iter().all(|&b| b == b'b'));
        assert!(got[16 * 1024 + 10..].iter().all(|&b| b == b'c'));
        drop(server.join().unwrap());
    }
}
