//! The PEM files of every flakery TLS (the client's, the server's, the ZooKeeper and
//! PostgreSQL coordinators'), read the one way, and the one crypto provider, ring: Rust and
//! assembly, so the shipped wheel, addon and C library need no OpenSSL.
//!
//! An error names the file and why it could not be used: the io error when it could not be
//! read; the PEM parser's words for a certificate file, never for a key file, where they may
//! quote a line of the key. Each caller puts its own option's name in front.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::WantsClientCert;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::{self, PemObject};
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::{ClientConfig, ConfigBuilder, RootCertStore, ServerConfig, WantsVerifier};

/// ring, the provider of every configuration flakery builds.
pub fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// Makes ring the process's default provider unless the program chose one: a library that
/// asks rustls for the default (the mysql crate) panics when the program's dependencies
/// enable two providers and none was chosen.
pub fn install_default_provider() {
    if CryptoProvider::get_default().is_none() {
        // Another thread may install one first: then that one stays, which is as good.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}

/// A client configuration with ring and rustls's safe protocol versions, to be given its
/// verifier.
pub fn client_builder() -> Result<ConfigBuilder<ClientConfig, WantsVerifier>, rustls::Error> {
    ClientConfig::builder_with_provider(provider()).with_safe_default_protocol_versions()
}

/// A client configuration that checks the server's chain against `roots` and its name.
pub fn client_builder_with_roots(
    roots: RootCertStore,
) -> Result<ConfigBuilder<ClientConfig, WantsClientCert>, rustls::Error> {
    Ok(client_builder()?.with_root_certificates(roots))
}

/// A server configuration with ring and rustls's safe protocol versions.
pub fn server_builder() -> Result<ConfigBuilder<ServerConfig, WantsVerifier>, rustls::Error> {
    ServerConfig::builder_with_provider(provider()).with_safe_default_protocol_versions()
}

/// Why a PEM file could not be used; shown as `PATH: why`.
#[derive(Debug)]
pub struct PemError {
    path: PathBuf,
    why: Why,
}

#[derive(Debug)]
enum Why {
    Unreadable(io::Error),
    /// The parser's words; only ever for a certificate file.
    NotPem(String),
    NoCertificate,
    BadCertificate(rustls::Error),
    NoPrivateKey,
}

impl PemError {
    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The io error when the file could not be read at all (missing, not permitted).
    pub fn io_error(&self) -> Option<&io::Error> {
        match &self.why {
            Why::Unreadable(e) => Some(e),
            _ => None,
        }
    }
}

impl fmt::Display for PemError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = self.path.display();
        match &self.why {
            Why::Unreadable(e) => write!(f, "{path}: cannot read it: {e}"),
            Why::NotPem(e) => write!(f, "{path}: not PEM: {e}"),
            Why::NoCertificate => write!(f, "{path}: holds no certificate (PEM)"),
            Why::BadCertificate(e) => write!(f, "{path}: holds a bad certificate: {e}"),
            Why::NoPrivateKey => write!(
                f,
                "{path}: no private key could be read from it (PEM: PKCS#8, PKCS#1 or SEC1, \
                 unencrypted)"
            ),
        }
    }
}

impl std::error::Error for PemError {}

fn error(path: &Path, why: Why) -> PemError {
    PemError {
        path: path.to_path_buf(),
        why,
    }
}

/// The certificate file's error: io's, or the parser's words (a certificate is public).
fn certificate_error(path: &Path, e: pem::Error) -> PemError {
    match e {
        pem::Error::Io(e) => error(path, Why::Unreadable(e)),
        other => error(path, Why::NotPem(other.to_string())),
    }
}

/// The certificates of a PEM file, in order (the leaf first, then its chain); at least one.
pub fn chain(path: &Path) -> Result<Vec<CertificateDer<'static>>, PemError> {
    let chain = CertificateDer::pem_file_iter(path)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|e| certificate_error(path, e))?;
    if chain.is_empty() {
        return Err(error(path, Why::NoCertificate));
    }
    Ok(chain)
}

/// The CAs of a PEM file: at least one, each one a certificate webpki takes.
pub fn roots_of_file(path: &Path) -> Result<RootCertStore, PemError> {
    let mut roots = RootCertStore::empty();
    for cert in chain(path)? {
        roots
            .add(cert)
            .map_err(|e| error(path, Why::BadCertificate(e)))?;
    }
    Ok(roots)
}

/// The first private key of a PEM file. Its error never holds what the parser says.
pub fn private_key(path: &Path) -> Result<PrivateKeyDer<'static>, PemError> {
    PrivateKeyDer::from_pem_file(path).map_err(|e| match e {
        pem::Error::Io(e) => error(path, Why::Unreadable(e)),
        _ => error(path, Why::NoPrivateKey),
    })
}

/// The operating system's store has no CA certificate this process can read.
#[derive(Debug)]
pub struct NoSystemRoots {
    first_error: Option<String>,
}

impl fmt::Display for NoSystemRoots {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("no CA certificate was found in the system's store")?;
        match &self.first_error {
            Some(e) => write!(f, " ({e})"),
            None => Ok(()),
        }
    }
}

impl std::error::Error for NoSystemRoots {}

/// The operating system's CAs: at least one.
pub fn system_roots() -> Result<RootCertStore, NoSystemRoots> {
    let found = rustls_native_certs::load_native_certs();
    let mut roots = RootCertStore::empty();
    roots.add_parsable_certificates(found.certs);
    if roots.is_empty() {
        return Err(NoSystemRoots {
            first_error: found.errors.first().map(ToString::to_string),
        });
    }
    Ok(roots)
}

#[cfg(test)]
mod tests;
