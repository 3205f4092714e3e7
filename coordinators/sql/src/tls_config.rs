//! PostgreSQL's `sslmode` and `sslrootcert` as a rustls client configuration, its files read
//! and its provider (ring) made by flakery-tls, as every flakery TLS's. (The mysql crate
//! builds its own configuration from its `SslOpts`.)

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, Error, RootCertStore, SignatureScheme,
};

use super::tls::{Roots, TlsMode, TlsRequest};

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
    let chain = flakery_tls::chain(&cert).map_err(|e| format!("sslcert {e}"))?;
    // The file and io's reason only: a key's bytes never go into a message.
    let key = flakery_tls::private_key(&key).map_err(|e| format!("sslkey {e}"))?;
    Ok(Some((chain, key)))
}

fn cert_sibling_key() -> PathBuf {
    let home = std::env::var_os("HOME").unwrap_or_default();
    Path::new(&home).join(".postgresql/postgresql.key")
}

/// The CAs of `sslrootcert` (or of libpq's default for it, ~/.postgresql/root.crt).
fn load_file(path: &Path) -> Result<RootCertStore, String> {
    flakery_tls::roots_of_file(path).map_err(|e| format!("sslrootcert {e}"))
}

fn load_system() -> Result<RootCertStore, String> {
    flakery_tls::system_roots().map_err(|e| format!("sslrootcert=system, but {e}"))
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
    let provider = flakery_tls::provider();
    let builder = flakery_tls::client_builder().map_err(|e| format!("TLS: {e}"))?;
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A key file that is not there is said so (it once read "cannot read a private key
    /// (PEM)", as if the file were there and broken).
    #[test]
    fn a_missing_key_file_says_why_it_cannot_be_read() {
        let dir = std::env::temp_dir().join(format!("flakery-sql-nokey-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let cert = dir.join("c.pem");
        std::fs::write(
            &cert,
            "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n",
        )
        .unwrap();
        let missing = dir.join("missing.pem");
        let tls = TlsRequest {
            mode: TlsMode::Prefer,
            roots: Roots::Unnamed,
            crate_parameters: false,
            client_cert: Some((cert, missing.clone())),
        };
        let error = postgres_config(&tls).err().unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(
            error.starts_with(&format!(
                "sslkey {}: cannot read it: No such file",
                missing.display()
            )),
            "{error}"
        );
    }
}
