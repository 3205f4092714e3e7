//! PostgreSQL's `sslmode` and `sslrootcert` as a rustls client configuration, with ring as
//! the crypto provider (Rust and assembly: the shipped wheel, addon and C library need no
//! OpenSSL). (The mysql crate builds its own configuration from its `SslOpts`.)

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, Error, RootCertStore, SignatureScheme,
};

use super::tls::{Roots, TlsMode, TlsRequest};

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// libpq's default file `~/.postgresql/NAME`, when it exists.
fn libpq_default(name: &str) -> Option<PathBuf> {
    let home = std::env::var_os("HOME")?;
    let path = Path::new(&home).join(".postgresql").join(name);
    path.is_file().then_some(path)
}

/// The client certificate chain and key: the URL's `sslcert` and `sslkey`, else libpq's
/// `~/.postgresql/postgresql.crt` and `.key` when the certificate exists.
fn client_identity(
    tls: &TlsRequest,
) -> Result<Option<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>)>, String> {
    let (cert, key) = match (&tls.client_cert, libpq_default("postgresql.crt")) {
        (Some((cert, key)), _) => (cert.clone(), key.clone()),
        (None, Some(cert)) => (cert, cert_sibling_key()),
        (None, None) => return Ok(None),
    };
    let chain = CertificateDer::pem_file_iter(&cert)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|e| format!("cannot read the client certificate {}: {e}", cert.display()))?;
    if chain.is_empty() {
        return Err(format!("{} holds no certificate", cert.display()));
    }
    // The error names the file only: a key's bytes never go into a message.
    let key = PrivateKeyDer::from_pem_file(&key)
        .map_err(|_| format!("cannot read a private key (PEM) from {}", key.display()))?;
    Ok(Some((chain, key)))
}

fn cert_sibling_key() -> PathBuf {
    let home = std::env::var_os("HOME").unwrap_or_default();
    Path::new(&home).join(".postgresql/postgresql.key")
}

fn load_file(path: &Path) -> Result<RootCertStore, String> {
    let shown = path.display();
    let mut store = RootCertStore::empty();
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| format!("cannot read the CA file {shown}: {e}"))?;
    for cert in certs {
        let cert = cert.map_err(|e| format!("the CA file {shown} is not PEM: {e}"))?;
        store
            .add(cert)
            .map_err(|e| format!("the CA file {shown} holds a bad certificate: {e}"))?;
    }
    if store.is_empty() {
        return Err(format!("the CA file {shown} holds no certificate"));
    }
    Ok(store)
}

fn load_system() -> Result<RootCertStore, String> {
    let found = rustls_native_certs::load_native_certs();
    let mut store = RootCertStore::empty();
    let (added, _ignored) = store.add_parsable_certificates(found.certs);
    if added == 0 {
        return Err(format!(
            "sslrootcert=system, but no CA certificate was found in the system's store{}",
            found
                .errors
                .first()
                .map(|e| format!(" ({e})"))
                .unwrap_or_default()
        ));
    }
    Ok(store)
}

/// The client configuration for PostgreSQL's `sslmode` and `sslrootcert`, as libpq reads
/// them: `require` with a CA file checks the chain; `verify-ca` and `verify-full` need CAs.
pub(super) fn postgres_config(tls: &TlsRequest) -> Result<ClientConfig, String> {
    let roots = match &tls.roots {
        Roots::File(path) => Some(load_file(path)?),
        Roots::System => Some(load_system()?),
        Roots::Unnamed if tls.mode >= TlsMode::Require => libpq_default("root.crt")
            .map(|p| load_file(&p))
            .transpose()?,
        Roots::Unnamed => None,
    };
    let provider = provider();
    let builder = ClientConfig::builder_with_provider(Arc::clone(&provider))
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?;
    let verifier: Arc<dyn ServerCertVerifier> = match (tls.mode, roots) {
        (TlsMode::VerifyCa | TlsMode::VerifyFull, None) => {
            return Err(
                "sslmode=verify-ca and verify-full need the server's CA: give \
                        sslrootcert=FILE (PEM), sslrootcert=system with verify-full, or \
                        ~/.postgresql/root.crt"
                    .into(),
            )
        }
        (TlsMode::Disable | TlsMode::Prefer, _) | (TlsMode::Require, None) => Arc::new(Relaxed {
            chain: None,
            provider,
        }),
        (mode, Some(roots)) => {
            let webpki =
                WebPkiServerVerifier::builder_with_provider(Arc::new(roots), Arc::clone(&provider))
                    .build()
                    .map_err(|e| format!("TLS: {e}"))?;
            if mode == TlsMode::VerifyFull {
                webpki
            } else {
                Arc::new(Relaxed {
                    chain: Some(webpki),
                    provider,
                })
            }
        }
    };
    let builder = builder
        .dangerous()
        .with_custom_certificate_verifier(verifier);
    match client_identity(tls)? {
        Some((chain, key)) => builder
            .with_client_auth_cert(chain, key)
            .map_err(|e| format!("the client certificate and key do not go together: {e}")),
        None => Ok(builder.with_no_client_auth()),
    }
}

/// What libpq checks short of `verify-full`: with `chain`, the certificate's chain up to a
/// trusted CA, whatever name it is for (`verify-ca`); without, nothing (`prefer`, and
/// `require` without a CA: encrypted, not authenticated). The handshake's signatures are
/// checked either way.
#[derive(Debug)]
struct Relaxed {
    chain: Option<Arc<WebPkiServerVerifier>>,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for Relaxed {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        let Some(chain) = &self.chain else {
            return Ok(ServerCertVerified::assertion());
        };
        match chain.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now) {
            Err(Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        let algorithms = &self.provider.signature_verification_algorithms;
        verify_tls12_signature(message, cert, dss, algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        let algorithms = &self.provider.signature_verification_algorithms;
        verify_tls13_signature(message, cert, dss, algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}
