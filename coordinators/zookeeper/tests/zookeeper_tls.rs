//! ZooKeeper over TLS against a real server (its secureClientPort, `ssl.clientAuth=need`, a
//! CA made by tests/tls_certs.py): a generator leases through it with digest credentials,
//! and every way a connection can be wrong fails with a message that names it
//! (docs/identity.md#zookeeper-over-tls). One server for all of it: starting one is most of
//! the time. The certificates a ZooKeeper of the test would need a start of its own for (for
//! another host name, expired) are served by a TLS listener of the test's own.
#![cfg(unix)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use flakery::{Error, ErrorCode, Generator, Options};

mod zk_harness;
use zk_harness::{log_lines, repo_root, serial, DataDir, Server};

const SECRET: &str = "pw-51c9:tls@s3cret";
/// The warning of a lease whose digest credentials go over plain TCP.
const IN_CLEAR: &str = "travel in clear";

fn options(connect: &str, namespace: &str) -> Options {
    Options {
        zookeeper: Some(connect.to_string()),
        namespace: Some(namespace.to_string()),
        // Short: the failures that are tried again until the start's timeout end sooner.
        session_timeout_ms: Some(2000),
        ..Options::default()
    }
}

fn make_certs(dir: &Path) {
    let made = Command::new("python3")
        .arg(repo_root().join("tests/tls_certs.py"))
        .arg(dir)
        .output()
        .expect("run tests/tls_certs.py");
    assert!(
        made.status.success(),
        "tests/tls_certs.py: {}",
        String::from_utf8_lossy(&made.stderr)
    );
}

/// The generator's start fails with `coordinator_unavailable`, saying `says`.
fn refused(connect: &str, says: &str) -> Error {
    let err = Generator::new(options(connect, "tls")).unwrap_err();
    assert_eq!(err.code(), ErrorCode::CoordinatorUnavailable, "{err}");
    assert!(err.message().contains(says), "{connect}: {err}");
    assert!(!format!("{err} {err:?}").contains(SECRET), "{err:?}");
    err
}

fn log_since(start: usize) -> Vec<String> {
    log_lines().lock().unwrap()[start..].to_vec()
}

#[test]
fn leases_through_the_secure_port_and_names_each_wrong_connection() {
    let _serial = serial();
    let lines = log_lines();
    let certs = DataDir::new("zk-tls-certs");
    make_certs(&certs.0);
    let Some(server) = Server::start_tls(&certs.0) else {
        return;
    };
    let file = |name: &str| certs.0.join(name).display().to_string();
    let secure = format!("127.0.0.1:{}", server.secure_port.unwrap());
    let client = format!("cert={}&key={}", file("client.crt"), file("client.key"));
    let tls = format!("?secure=true&ca={}&{client}", file("ca.pem"));

    // A generator leases through TLS, digest credentials on, and says nothing of clear text.
    let from = lines.lock().unwrap().len();
    let connect = format!("flakery:{SECRET}@{secure}{tls}");
    let generator = Generator::new(options(&connect, "tls")).unwrap();
    let ids = generator.next_ids(100).unwrap();
    assert!(ids.windows(2).all(|pair| pair[0] < pair[1]));
    assert_eq!(generator.worker_id(), 0);
    let logged = log_since(from);
    assert!(!logged.iter().any(|l| l.contains(IN_CLEAR)), "{logged:?}");
    assert!(!logged.iter().any(|l| l.contains(SECRET)), "{logged:?}");
    // The node is held, as the plain port shows, and only the digest identity can write.
    let anonymous = server.client();
    assert!(anonymous
        .exists("/flakery/tls/nodes/0", false)
        .unwrap()
        .is_some());
    assert_eq!(
        anonymous
            .set_data("/flakery/tls/hwm/0", b"0".to_vec(), None)
            .err(),
        Some(zookeeper::ZkError::NoAuth)
    );
    // That crate's client waits without a limit to close against a paused server: gone first.
    drop(anonymous);
    // A second holder by the host name (the certificate is for localhost and 127.0.0.1).
    let by_name = format!(
        "flakery:{SECRET}@localhost:{}{tls}",
        server.secure_port.unwrap()
    );
    let second = Generator::new(options(&by_name, "tls")).unwrap();
    assert_eq!(second.worker_id(), 1);
    drop(second);

    // Nothing of the credentials on the wire: a relay of the test's own records the bytes of a
    // holder's connections, over TLS and (to show it would see them) over the plain port.
    for (target, query, in_clear) in [(&secure, tls.as_str(), false), (&server.connect, "", true)] {
        let (relay, wire) = recording_relay(target);
        let holder = format!("flakery:{SECRET}@{relay}{query}");
        let generator = Generator::new(options(&holder, "wire")).unwrap();
        generator.next_ids(10).unwrap();
        drop(generator);
        let wire = wire.lock().unwrap();
        let seen = wire.windows(SECRET.len()).any(|w| w == SECRET.as_bytes());
        assert_eq!(seen, in_clear, "{target}{query}: {} bytes", wire.len());
    }

    // No client certificate: the server (ssl.clientAuth=need) refuses the handshake.
    refused(
        &format!("{secure}?secure=true&ca={}", file("ca.pem")),
        "client certificate",
    );
    // A CA that did not sign the server's certificate.
    refused(
        &format!("{secure}?secure=true&ca={}&{client}", file("other-ca.pem")),
        "not signed by a trusted CA",
    );
    // A plain client at the secure port, TLS at the plain one.
    refused(&secure, "secureClientPort to a client without TLS");
    refused(
        &format!("{}{tls}", server.connect),
        "plain port (clientPort)",
    );

    // Credentials over the plain port: said at the start, without the secret.
    let from = lines.lock().unwrap().len();
    let plain = Generator::new(options(
        &format!("flakery:{SECRET}@{}", server.connect),
        "plain",
    ))
    .unwrap();
    plain.next_ids(10).unwrap();
    let warnings: Vec<String> = log_since(from)
        .into_iter()
        .filter(|l| l.contains(IN_CLEAR))
        .collect();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].starts_with("WARN"), "{warnings:?}");
    assert!(!warnings[0].contains(SECRET), "{warnings:?}");
    drop(plain);

    // The TLS holder kept its node through all of it.
    let after = generator.next_ids(100).unwrap();
    assert!(after[0] > *ids.last().unwrap());
    assert_eq!(generator.worker_id(), 0);

    // A server that stops answering: the client finds the TLS connection silent (as a plain
    // one), the holder stops issuing, then leases again over TLS once it answers (an order of
    // events; the guard against a hang is not measured).
    let from = lines.lock().unwrap().len();
    server.pause();
    until(|| {
        log_since(from)
            .iter()
            .any(|l| l.contains(&format!("{secure} sent nothing for two thirds")))
            .then_some(())
    });
    let lost = until(|| generator.next_id().err());
    assert_eq!(lost.code(), ErrorCode::LeaseLost, "{lost}");
    server.resume();
    let again = until(|| generator.next_id().ok());
    assert!(again > *after.last().unwrap());
}

/// A relay on 127.0.0.1 to `target` that keeps every byte it passes, both ways; its address.
fn recording_relay(target: &str) -> (String, Arc<Mutex<Vec<u8>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap().to_string();
    let wire = Arc::new(Mutex::new(Vec::new()));
    let (kept, target) = (Arc::clone(&wire), target.to_string());
    std::thread::spawn(move || {
        for client in listener.incoming().flatten() {
            let Ok(server) = TcpStream::connect(&target) else {
                continue;
            };
            for (mut from, mut to) in [
                (client.try_clone().unwrap(), server.try_clone().unwrap()),
                (server, client),
            ] {
                let kept = Arc::clone(&kept);
                std::thread::spawn(move || {
                    let mut buffer = [0u8; 4096];
                    while let Ok(n @ 1..) = from.read(&mut buffer) {
                        kept.lock().unwrap().extend_from_slice(&buffer[..n]);
                        if to.write_all(&buffer[..n]).is_err() {
                            break;
                        }
                    }
                    let _ = to.shutdown(std::net::Shutdown::Write);
                });
            }
        }
    });
    (address, wire)
}

/// A TLS server on 127.0.0.1 with the pair `name`.crt/.key of `certs` that completes
/// handshakes (and nothing more) until the test process ends, of the protocol `version`, and
/// requiring a client certificate of `client_ca` if given; its port, and a count of the
/// connections it accepted.
fn tls_listener(
    certs: &Path,
    name: &str,
    version: &'static rustls::SupportedProtocolVersion,
    client_ca: Option<&Path>,
) -> (u16, Arc<AtomicUsize>) {
    let chain = CertificateDer::pem_file_iter(certs.join(format!("{name}.crt")))
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    let key = PrivateKeyDer::from_pem_file(certs.join(format!("{name}.key"))).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ServerConfig::builder_with_provider(Arc::clone(&provider))
        .with_protocol_versions(&[version])
        .unwrap();
    let builder = match client_ca {
        None => builder.with_no_client_auth(),
        Some(ca) => {
            let mut roots = rustls::RootCertStore::empty();
            for cert in CertificateDer::pem_file_iter(ca).unwrap() {
                roots.add(cert.unwrap()).unwrap();
            }
            let verifier =
                rustls::server::WebPkiClientVerifier::builder_with_provider(roots.into(), provider)
                    .build()
                    .unwrap();
            builder.with_client_cert_verifier(verifier)
        }
    };
    let config = Arc::new(builder.with_single_cert(chain, key).unwrap());
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let accepted = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&accepted);
    std::thread::spawn(move || {
        for socket in listener.incoming().flatten() {
            counted.fetch_add(1, Ordering::SeqCst);
            let mut socket = socket;
            let _ = socket.set_read_timeout(Some(Duration::from_secs(10)));
            let mut conn = rustls::ServerConnection::new(Arc::clone(&config)).unwrap();
            // Either side refuses the other's certificate: this ends with an alert.
            let _ = conn.complete_io(&mut socket);
            // Until the client closes: what it sent unread would turn the close into a reset
            // that could overtake the alert.
            let _ = std::io::copy(&mut socket, &mut std::io::sink());
        }
    });
    (port, accepted)
}

#[test]
fn a_certificate_for_another_host_or_expired_is_refused_at_once_naming_why() {
    let certs = DataDir::new("zk-tls-listener-certs");
    make_certs(&certs.0);
    let ca = certs.0.join("ca.pem");
    let tls13 = &rustls::version::TLS13;
    for (name, says) in [
        (
            "wrong-host",
            "its certificate is not for the host name '127.0.0.1'",
        ),
        ("expired", "its certificate has expired"),
    ] {
        let (port, accepted) = tls_listener(&certs.0, name, tls13, None);
        let err = refused(
            &format!("127.0.0.1:{port}?secure=true&ca={}", ca.display()),
            says,
        );
        assert!(
            err.message().starts_with("ZooKeeper at 127.0.0.1:"),
            "{err}"
        );
        // At once: another attempt could not fare better.
        assert_eq!(accepted.load(Ordering::SeqCst), 1, "{err}");
    }
}

/// A server that requires a client certificate refuses a client without one at once, under
/// TLS 1.3 too, where its refusal comes after the client's side of the handshake is done (on
/// the first read of the session's answer).
#[test]
fn a_missing_client_certificate_is_refused_at_once_in_either_version() {
    let certs = DataDir::new("zk-tls-need-cert-certs");
    make_certs(&certs.0);
    let ca = certs.0.join("ca.pem");
    for version in [&rustls::version::TLS13, &rustls::version::TLS12] {
        let (port, accepted) = tls_listener(&certs.0, "server", version, Some(&ca));
        let err = refused(
            &format!("127.0.0.1:{port}?secure=true&ca={}", ca.display()),
            "client certificate",
        );
        assert!(
            err.message().starts_with("ZooKeeper at 127.0.0.1:"),
            "{err}"
        );
        assert_eq!(accepted.load(Ordering::SeqCst), 1, "{version:?}: {err}");
    }
}

/// A server that answers a TLS client's hello with the start of a record and then one byte
/// every 20 ms for 30 s: what a handshake that reads on while bytes come never leaves.
/// Whether each connection's client left before the drip ended, in the order they came.
fn dripping_listener() -> (u16, std::sync::mpsc::Receiver<bool>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (left_early, told) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for socket in listener.incoming().flatten() {
            let left_early = left_early.clone();
            std::thread::spawn(move || {
                let mut socket = socket;
                let _ = socket.read(&mut [0u8; 4096]);
                let mut gone = socket.write_all(&[0x16, 0x03, 0x03, 0x3f, 0xff]).is_err();
                for _ in 0..1500 {
                    if gone {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(20));
                    gone = socket.write_all(&[0]).is_err();
                }
                let _ = left_early.send(gone);
            });
        }
    });
    (port, told)
}

#[test]
fn a_handshake_that_drags_on_ends_at_the_starts_timeout() {
    let certs = DataDir::new("zk-tls-drip-certs");
    make_certs(&certs.0);
    let (port, told) = dripping_listener();
    refused(
        &format!(
            "127.0.0.1:{port}?secure=true&ca={}",
            certs.0.join("ca.pem").display()
        ),
        "did not finish the TLS handshake in time",
    );
    // The client gave up on the first connection while the server still sent.
    assert!(
        told.recv().unwrap(),
        "the handshake read on past its deadline"
    );
}

/// The first `Some` of `poll`, asked every 10 ms; the guard against a hang is generous and is
/// not what the test measures.
fn until<T>(mut poll: impl FnMut() -> Option<T>) -> T {
    let since = Instant::now();
    loop {
        if let Some(found) = poll() {
            return found;
        }
        assert!(since.elapsed() < Duration::from_secs(120), "waited in vain");
        std::thread::sleep(Duration::from_millis(10));
    }
}
