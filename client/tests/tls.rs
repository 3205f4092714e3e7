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

#[test]
fn the_system_roots_do_not_know_the_test_ca() {
    // No CA file (and no FLAKERY_SERVER_CA): the system's roots, which never signed it.
    if std::env::var_os("FLAKERY_SERVER_CA").is_some() {
        return;
    }
    let url = tls_server("server", None);
    let e = Client::builder()
        .server(&url)
        .prefetch(false)
        .build()
        .and_then(|c| c.next_id())
        .unwrap_err();
    // Either no system root store at all (refused when built), or an unknown CA.
    assert!(
        e.code() == ErrorCode::TlsFailed && e.message().contains("unknown CA")
            || e.option() == Some("server_ca"),
        "{e}"
    );
}
