//! `https://` servers: a rustls server on loopback with the certificates of
//! tests/tls_certs.py (openssl); IDs over TLS, and each failure (unknown CA, expired, wrong
//! host name, no client certificate) with `tls_failed` and its cause.

mod fake;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use flakery_client::{Client, ErrorCode};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use rustls::{RootCertStore, ServerConfig};

/// The directory of the test certificates, made once per run.
fn certs() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        // A child of `system_roots` uses its parent's certificates (made again, they would
        // change under the parent's other tests).
        if let Some(dir) = std::env::var_os(CHILD_CERTS) {
            return PathBuf::from(dir);
        }
        // Cargo's directory for integration tests' files, in the target directory.
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("client-tls-certs");
        let maker = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/tls_certs.py");
        let made = std::process::Command::new("python3")
            .arg(maker)
            .arg(&dir)
            .output()
            .expect("python3 runs tests/tls_certs.py");
        assert!(made.status.success(), "{made:?}");
        dir
    })
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// A fake server over TLS with `name`.crt/.key; with `client_ca`, it asks for a client
/// certificate that CA signed and refuses a connection without one.
fn tls_server(name: &str, client_ca: Option<&str>) -> String {
    let dir = certs();
    let chain = CertificateDer::pem_file_iter(dir.join(format!("{name}.crt")))
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    let key = name.trim_end_matches("-chain");
    let key = PrivateKeyDer::from_pem_file(dir.join(format!("{key}.key"))).unwrap();
    let builder = ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .unwrap();
    let builder = match client_ca {
        Some(ca) => {
            let mut roots = RootCertStore::empty();
            for cert in CertificateDer::pem_file_iter(dir.join(ca)).unwrap() {
                roots.add(cert.unwrap()).unwrap();
            }
            let verifier = WebPkiClientVerifier::builder_with_provider(roots.into(), provider())
                .build()
                .unwrap();
            builder.with_client_cert_verifier(verifier)
        }
        None => builder.with_no_client_auth(),
    };
    let config = Arc::new(builder.with_single_cert(chain, key).unwrap());
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let fake = Arc::new(fake::Fake::default());
    std::thread::spawn(move || {
        for tcp in listener.incoming().flatten() {
            let (config, fake) = (Arc::clone(&config), Arc::clone(&fake));
            std::thread::spawn(move || {
                let connection = rustls::ServerConnection::new(config).unwrap();
                let _ = fake::answer(rustls::StreamOwned::new(connection, tcp), &fake);
            });
        }
    });
    format!("https://localhost:{port}")
}

fn client(url: &str, ca: &str) -> flakery_client::Builder {
    Client::builder()
        .server(url)
        .server_ca(certs().join(ca))
        .timeout(Duration::from_secs(5))
        .prefetch(false)
}

#[test]
fn ids_come_over_tls_with_the_ca_file() {
    let url = tls_server("server-chain", None);
    let c = client(&url, "ca.pem").token("s3cret").build().unwrap();
    let ids = c.next_ids(100).unwrap();
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
}

#[test]
fn mutual_tls_takes_the_client_certificate() {
    let url = tls_server("server", Some("ca.pem"));
    let dir = certs();
    let c = client(&url, "ca.pem")
        .client_cert(dir.join("client.crt"), dir.join("client.key"))
        .build()
        .unwrap();
    assert_eq!(c.next_ids(3).unwrap().len(), 3);
    let shown = format!("{:?}", c);
    assert!(!shown.contains("PRIVATE"), "{shown}");
}

/// Each failure has `tls_failed` and a message that names its cause.
fn fails_with(builder: flakery_client::Builder, cause: &str) {
    let e = builder.build().unwrap().next_id().unwrap_err();
    assert_eq!(e.code(), ErrorCode::TlsFailed, "{e}");
    assert!(e.message().contains(cause), "{cause}: {e}");
}

#[test]
fn a_certificate_of_an_unknown_ca_is_refused() {
    fails_with(
        client(&tls_server("server", None), "other-ca.pem"),
        "unknown CA",
    );
}

#[test]
fn an_expired_certificate_is_refused() {
    fails_with(client(&tls_server("expired", None), "ca.pem"), "expired");
}

#[test]
fn a_certificate_for_another_host_is_refused() {
    fails_with(
        client(&tls_server("wrong-host", None), "ca.pem"),
        "wrong host name",
    );
}

#[test]
fn mutual_tls_without_a_client_certificate_is_refused() {
    let url = tls_server("server", Some("ca.pem"));
    fails_with(client(&url, "ca.pem"), "no client certificate");
    let dir = certs();
    fails_with(
        client(&url, "ca.pem")
            .client_cert(dir.join("other-client.crt"), dir.join("other-client.key")),
        "refused this client's certificate",
    );
}

/// Set in a child of `system_roots`: the directory of its parent's certificates.
const CHILD_CERTS: &str = "FLAKERY_TEST_TLS_CERTS";

/// A client with no CA file in a child process whose system store is `store` (the
/// `SSL_CERT_FILE` every rustls-native-certs platform reads first; no `SSL_CERT_DIR`, no
/// `FLAKERY_*`), asking a server whose certificate the test CA signed: "ok" with its IDs, or
/// the error's code, option and message.
fn system_roots(store: &Path) -> String {
    let mut child = std::process::Command::new(std::env::current_exe().unwrap());
    child
        .args([
            "--exact",
            "system_roots_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_CERTS, certs())
        .env("SSL_CERT_FILE", store)
        .env_remove("SSL_CERT_DIR");
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("FLAKERY_") {
            child.env_remove(name);
        }
    }
    let output = child.output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{output:?}");
    match stdout.split_once("OUTCOME ") {
        Some((_, outcome)) => outcome.lines().next().unwrap().to_string(),
        None => panic!("the child reported nothing: {output:?}"),
    }
}

#[test]
fn system_roots_child() {
    if std::env::var_os(CHILD_CERTS).is_none() {
        return; // not a child: `system_roots` runs this in one
    }
    let url = tls_server("server", None);
    let outcome = match Client::builder()
        .server(&url)
        .prefetch(false)
        .timeout(Duration::from_secs(5))
        .build()
        .and_then(|c| c.next_ids(3))
    {
        Ok(ids) => format!("ok {}", ids.len()),
        Err(e) => format!("{} {:?} {}", e.code(), e.option(), e.message()),
    };
    println!("OUTCOME {outcome}");
}

/// With no CA file the client trusts the system's roots, and only them: a store that holds
/// another CA refuses the test CA's certificate as signed by an unknown CA (the handshake's
/// cause, not a missing store); the same store holding the test CA trusts it; an empty one
/// is refused when the client is built, naming `server_ca`.
#[test]
fn the_system_roots_do_not_know_the_test_ca() {
    let dir = certs();
    let outcome = system_roots(&dir.join("other-ca.pem"));
    assert!(
        outcome.starts_with("tls_failed None ") && outcome.contains("unknown CA"),
        "{outcome}"
    );
    assert_eq!(system_roots(&dir.join("ca.pem")), "ok 3");
    let empty = dir.join("empty-store.pem");
    std::fs::write(&empty, "").unwrap();
    let outcome = system_roots(&empty);
    assert!(
        outcome.starts_with("invalid_argument Some(\"server_ca\") ")
            && outcome.contains("no CA certificate was found in the system's store"),
        "{outcome}"
    );
}
