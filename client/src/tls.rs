//! `https://` servers: the rustls configuration built once from the options (the system's
//! roots, or the CA file; a client certificate for mutual TLS), the connector ureq opens each
//! connection through, and what a failed handshake is called (`tls_failed`, naming the
//! cause). The same rustls, with ring, as coordinators/sql: no OpenSSL in a binding.
//!
//! The handshake is finished in `connect`, so that an unknown CA, an expired certificate or
//! the wrong host name fails there; a server's refusal of the client's certificate comes
//! after it under TLS 1.3 (the client finishes first), as an alert on the first read, and is
//! named the same way there (`failure_of`).

use std::fmt;
use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use flakery::option_table::{self as table, ClientOptionSpec};
use flakery::{Error, Result};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::{AlertDescription, CertificateError, ClientConfig, RootCertStore};
use ureq::{ReadWrite, TlsConnector};

use crate::failure::Failure;

/// The TLS options as given (paths), before any file is read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TlsFiles {
    pub server_ca: Option<PathBuf>,
    pub client_cert: Option<PathBuf>,
    pub client_key: Option<PathBuf>,
}

/// The connector of every `https://` connection of a client: one configuration, shared.
pub struct Connector {
    config: Arc<ClientConfig>,
}

impl fmt::Debug for Connector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never the key: only whether a client certificate is configured.
        f.debug_struct("Connector")
            .field(
                "client_certificate",
                &self.config.client_auth_cert_resolver.has_certs(),
            )
            .finish()
    }
}

fn invalid(option: &ClientOptionSpec, message: String) -> Error {
    Error::invalid_argument(format!("{}: {message}", option.rust)).about(option.rust)
}

fn path_or_env(given: &Option<PathBuf>, option: &ClientOptionSpec) -> Result<Option<PathBuf>> {
    match (given, option.env) {
        (Some(path), _) => Ok(Some(path.clone())),
        (None, Some(env)) => Ok(flakery::options::env_var(env)?.map(PathBuf::from)),
        (None, None) => Ok(None),
    }
}

/// The CAs of the file: the only ones trusted when it is given.
fn roots_of_file(path: &Path) -> Result<RootCertStore> {
    flakery_tls::roots_of_file(path).map_err(|e| invalid(&table::SERVER_CA, e.to_string()))
}

fn system_roots() -> Result<RootCertStore> {
    flakery_tls::system_roots().map_err(|e| {
        invalid(
            &table::SERVER_CA,
            format!(
                "an https:// server, but {e}: give the servers' CA file ({})",
                table::SERVER_CA.env.unwrap_or_default()
            ),
        )
    })
}

/// The certificate chain and key of mutual TLS; both or neither.
fn identity(
    cert: Option<PathBuf>,
    key: Option<PathBuf>,
) -> Result<Option<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>)>> {
    let (cert, key) = match (cert, key) {
        (None, None) => return Ok(None),
        (Some(cert), Some(key)) => (cert, key),
        (Some(_), None) => {
            return Err(invalid(
                &table::CLIENT_KEY,
                format!("{} is given without a key", table::CLIENT_CERT.rust),
            ))
        }
        (None, Some(_)) => {
            return Err(invalid(
                &table::CLIENT_CERT,
                format!("{} is given without a certificate", table::CLIENT_KEY.rust),
            ))
        }
    };
    let chain =
        flakery_tls::chain(&cert).map_err(|e| invalid(&table::CLIENT_CERT, e.to_string()))?;
    // The path and io's reason only: what the file holds never goes into a message.
    let key =
        flakery_tls::private_key(&key).map_err(|e| invalid(&table::CLIENT_KEY, e.to_string()))?;
    Ok(Some((chain, key)))
}

impl Connector {
    /// The configuration of `files` (each `None` read from its variable). `None` when no
    /// server is `https://` and no TLS option is given: nothing to read.
    pub fn new(files: &TlsFiles, any_https: bool) -> Result<Option<Arc<Connector>>> {
        let server_ca = path_or_env(&files.server_ca, &table::SERVER_CA)?;
        let client_cert = path_or_env(&files.client_cert, &table::CLIENT_CERT)?;
        let client_key = path_or_env(&files.client_key, &table::CLIENT_KEY)?;
        let given = server_ca.is_some() || client_cert.is_some() || client_key.is_some();
        if !any_https && !given {
            return Ok(None);
        }
        let identity = identity(client_cert, client_key)?;
        let roots = match &server_ca {
            Some(path) => roots_of_file(path)?,
            None => system_roots()?,
        };
        let builder = flakery_tls::client_builder_with_roots(roots)
            .map_err(|e| Error::invalid_argument(format!("TLS: {e}")))?;
        let mut config = match identity {
            Some((chain, key)) => builder.with_client_auth_cert(chain, key).map_err(|e| {
                invalid(
                    &table::CLIENT_KEY,
                    format!("the client certificate and key do not go together: {e}"),
                )
            })?,
            None => builder.with_no_client_auth(),
        };
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Some(Arc::new(Connector {
            config: Arc::new(config),
        })))
    }
}

impl TlsConnector for Connector {
    fn connect(
        &self,
        dns_name: &str,
        mut io: Box<dyn ReadWrite>,
    ) -> std::result::Result<Box<dyn ReadWrite>, ureq::Error> {
        // An IPv6 address comes in brackets, which a server name does not have.
        let host = dns_name.trim_start_matches('[').trim_end_matches(']');
        let name = ServerName::try_from(host.to_string())
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        let mut connection = rustls::ClientConnection::new(Arc::clone(&self.config), name)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        while connection.is_handshaking() {
            connection.complete_io(&mut io)?;
        }
        Ok(Box::new(Stream(rustls::StreamOwned::new(connection, io))))
    }
}

struct Stream(rustls::StreamOwned<rustls::ClientConnection, Box<dyn ReadWrite>>);

impl ReadWrite for Stream {
    fn socket(&self) -> Option<&TcpStream> {
        self.0.get_ref().socket()
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self.0.read(buf) {
            // A server that closes without close_notify after a whole answer: the end.
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Ok(0),
            other => other,
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

impl fmt::Debug for Stream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("tls::Stream")
    }
}

/// The rustls error somewhere in the causes of a transport error, if it is one.
fn rustls_error<'a>(error: &'a (dyn std::error::Error + 'static)) -> Option<&'a rustls::Error> {
    let mut cause = Some(error);
    while let Some(e) = cause {
        if let Some(found) = e.downcast_ref::<rustls::Error>() {
            return Some(found);
        }
        // io::Error's `source` skips what it wraps: look inside.
        if let Some(inner) = e.downcast_ref::<io::Error>().and_then(|e| e.get_ref()) {
            if let Some(found) = inner.downcast_ref::<rustls::Error>() {
                return Some(found);
            }
        }
        cause = e.source();
    }
    None
}

/// A failed handshake with a server, as a `tls_failed` failure naming the cause; `None` when
/// the transport error is not TLS's.
pub fn failure_of(error: &ureq::Transport) -> Option<Failure> {
    let source = std::error::Error::source(error)?;
    let error = rustls_error(source)?;
    Some(Failure::tls(cause_of(error)))
}

/// What went wrong, in the words an operator looks for.
fn cause_of(error: &rustls::Error) -> String {
    use rustls::Error as E;
    let ca = table::SERVER_CA.env.unwrap_or_default();
    match error {
        E::InvalidCertificate(CertificateError::UnknownIssuer) => format!(
            "TLS: the server's certificate is signed by an unknown CA (give its CA as \
             server_ca or {ca})"
        ),
        E::InvalidCertificate(
            CertificateError::Expired | CertificateError::ExpiredContext { .. },
        ) => "TLS: the server's certificate has expired".into(),
        E::InvalidCertificate(
            CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. },
        ) => "TLS: the server's certificate is not valid yet".into(),
        E::InvalidCertificate(
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
        ) => "TLS: the server's certificate is for another host name than the URL's (wrong \
              host name)"
            .into(),
        E::AlertReceived(
            AlertDescription::CertificateRequired
            | AlertDescription::BadCertificate
            | AlertDescription::UnknownCA
            | AlertDescription::CertificateUnknown
            | AlertDescription::HandshakeFailure,
        ) => format!(
            "TLS: the server refused this client's certificate ({error}): no client \
             certificate given, or not one its client CA signed (client_cert, client_key)"
        ),
        E::InvalidMessage(_) => {
            "TLS: the server does not speak TLS on this port (an http:// server?)".into()
        }
        other => format!("TLS: the handshake failed: {other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_cause_is_named() {
        use rustls::Error as E;
        for (error, said) in [
            (
                E::InvalidCertificate(CertificateError::UnknownIssuer),
                "unknown CA",
            ),
            (E::InvalidCertificate(CertificateError::Expired), "expired"),
            (
                E::InvalidCertificate(CertificateError::NotValidForName),
                "wrong host name",
            ),
            (
                E::AlertReceived(AlertDescription::CertificateRequired),
                "no client certificate",
            ),
        ] {
            let cause = cause_of(&error);
            assert!(cause.contains(said), "{error:?}: {cause}");
        }
    }

    #[test]
    fn a_bad_file_is_refused_naming_its_option() {
        let dir = std::env::temp_dir().join(format!("flakery-tls-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let empty = dir.join("empty.pem");
        std::fs::write(&empty, "not a certificate\n").unwrap();
        let secret = dir.join("key.pem");
        std::fs::write(&secret, "-----BEGIN PRIVATE KEY-----\nc2VjcmV0\n").unwrap();
        let files = |ca: Option<&Path>, cert: Option<&Path>, key: Option<&Path>| TlsFiles {
            server_ca: ca.map(Path::to_path_buf),
            client_cert: cert.map(Path::to_path_buf),
            client_key: key.map(Path::to_path_buf),
        };
        let e = Connector::new(&files(Some(&empty), None, None), true).unwrap_err();
        assert_eq!(e.option(), Some("server_ca"), "{e}");
        let e = Connector::new(&files(Some(&dir.join("none")), None, None), true).unwrap_err();
        assert_eq!(e.option(), Some("server_ca"), "{e}");
        let e = Connector::new(&files(None, Some(&empty), None), false).unwrap_err();
        assert_eq!(e.option(), Some("client_key"), "{e}");
        let e = Connector::new(&files(None, None, Some(&secret)), false).unwrap_err();
        assert_eq!(e.option(), Some("client_cert"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
