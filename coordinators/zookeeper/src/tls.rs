//! TLS to ZooKeeper's `secureClientPort` (3.5+): the connect string's query
//! (`?secure=true&ca=FILE&cert=FILE&key=FILE`, after ZooKeeper's own `zookeeper.client.secure`
//! and `zookeeper.ssl.*` settings), the rustls client configuration (ring, as flakery-sql), and
//! what a failed handshake means in words (docs/identity.md#zookeeper-over-tls).
//!
//! The files are read again for each connection, so a renewed client certificate or CA is
//! used by the next session without a restart; they are read once when the lease is made
//! too, so a wrong path fails the start with `invalid_argument`.

use std::path::PathBuf;
use std::sync::Arc;

use flakery::error::{Error, Result};
use flakery::options::percent_decoded;
use rustls::pki_types::ServerName;
use rustls::{AlertDescription, CertificateError, ClientConfig};

/// The TLS of a connect string with `secure=true`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Tls {
    /// A PEM file of the CA certificates to trust; `None`: the operating system's.
    pub(crate) ca: Option<PathBuf>,
    /// A client certificate chain and its private key (PEM files), for a server with
    /// `ssl.clientAuth=need` (or `want`).
    pub(crate) identity: Option<(PathBuf, PathBuf)>,
}

impl Tls {
    /// Reads the query of the connect string `connect` (shown in messages, without its
    /// credentials): `None` for plain TCP (`secure=false`, or no `secure`). The files are
    /// read by `config`.
    pub(crate) fn parse(query: &str, connect: &str) -> Result<Option<Tls>> {
        let refuse = |why: String| {
            Err(Error::invalid_argument(format!(
                "ZooKeeper connect string '{connect}': {why} (expected \
                 host:port[,host:port...][/chroot][?secure=true&ca=FILE&cert=FILE&key=FILE])"
            )))
        };
        let (mut secure, mut ca, mut cert, mut key) = (None, None, None, None);
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            let value = percent_decoded(value).unwrap_or_else(|| value.to_string());
            let slot = match name {
                "secure" => {
                    secure = match value.as_str() {
                        "true" => Some(true),
                        "false" => Some(false),
                        _ => return refuse(format!("secure={value} is not true or false")),
                    };
                    continue;
                }
                "ca" => &mut ca,
                "cert" => &mut cert,
                "key" => &mut key,
                _ => {
                    return refuse(format!(
                        "unknown parameter '{name}' (known: secure, ca, cert, key)"
                    ))
                }
            };
            if value.is_empty() {
                return refuse(format!("{name}= names no file"));
            }
            *slot = Some(PathBuf::from(value));
        }
        if secure != Some(true) {
            if ca.is_some() || cert.is_some() || key.is_some() {
                return refuse("ca, cert and key need secure=true".into());
            }
            return Ok(None);
        }
        let identity = match (cert, key) {
            (Some(cert), Some(key)) => Some((cert, key)),
            (None, None) => None,
            _ => return refuse("cert and key go together: give both or neither".into()),
        };
        Ok(Some(Tls { ca, identity }))
    }

    /// The client configuration, the files read now. Errors name the file, never a key's
    /// bytes.
    pub(crate) fn config(&self) -> std::result::Result<Arc<ClientConfig>, String> {
        let roots = match &self.ca {
            Some(path) => flakery_tls::roots_of_file(path).map_err(|e| format!("ca={e}"))?,
            None => flakery_tls::system_roots().map_err(|e| {
                format!("secure=true without ca=FILE trusts the system's CAs, and {e}: give ca=FILE (PEM)")
            })?,
        };
        let builder =
            flakery_tls::client_builder_with_roots(roots).map_err(|e| format!("TLS: {e}"))?;
        let config = match &self.identity {
            Some((cert, key)) => {
                let chain = flakery_tls::chain(cert).map_err(|e| format!("cert={e}"))?;
                let key = flakery_tls::private_key(key).map_err(|e| format!("key={e}"))?;
                builder.with_client_auth_cert(chain, key).map_err(|e| {
                    format!(
                        "the certificate {} and the key do not go together: {e}",
                        cert.display()
                    )
                })?
            }
            None => builder.with_no_client_auth(),
        };
        Ok(Arc::new(config))
    }
}

/// The name the server's certificate must be for: the host of `host:port` as written in the
/// connect string (a name, or an address: `127.0.0.1`, `[::1]`).
pub(crate) fn server_name(host_port: &str) -> std::result::Result<ServerName<'static>, String> {
    let host = host_port
        .rsplit_once(':')
        .map_or(host_port, |(host, _)| host);
    let host = host.trim_start_matches('[').trim_end_matches(']');
    ServerName::try_from(host.to_string())
        .map_err(|_| format!("'{host}' is not a host name TLS can check a certificate for"))
}

/// Whether a read failed on the server's TLS alert.
pub(crate) fn is_alert(err: &std::io::Error) -> bool {
    matches!(
        err.get_ref()
            .and_then(|inner| inner.downcast_ref::<rustls::Error>()),
        Some(rustls::Error::AlertReceived(_))
    )
}

/// Why a TLS handshake with `address` (`host`: the name checked) failed, in words; `true`
/// when another attempt cannot help (a certificate refused either way), and the words are
/// then the whole message.
pub(crate) fn handshake_failure(address: &str, host: &str, err: &std::io::Error) -> (bool, String) {
    let tls = err
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>());
    let Some(tls) = tls else {
        return match err.kind() {
            std::io::ErrorKind::UnexpectedEof | std::io::ErrorKind::ConnectionReset => (
                false,
                format!(
                    "{address} closed the connection during the TLS handshake: a plain port \
                     (clientPort) does this; secure=true needs the server's secureClientPort"
                ),
            ),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => (
                false,
                format!(
                    "{address} did not finish the TLS handshake in time (a plain port \
                     (clientPort) may close or stall it; secure=true needs the server's \
                     secureClientPort)"
                ),
            ),
            _ => (false, format!("{address}: TLS handshake: {err}")),
        };
    };
    // Each of these fails every attempt alike: said at once, as ZooKeeper at ADDRESS: ...
    let why = match tls {
        rustls::Error::InvalidCertificate(cert) => match cert {
            CertificateError::UnknownIssuer | CertificateError::BadSignature => {
                "its certificate is not signed by a trusted CA (ca=FILE names the CA that \
                 signed the server's certificate)"
                    .to_string()
            }
            CertificateError::Expired | CertificateError::ExpiredContext { .. } => {
                "its certificate has expired".to_string()
            }
            CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => {
                "its certificate is not valid yet".to_string()
            }
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. } => {
                format!("its certificate is not for the host name '{host}' of the connect string")
            }
            other => format!("its certificate was refused: {other:?}"),
        },
        rustls::Error::AlertReceived(alert) => match alert {
            AlertDescription::CertificateRequired
            | AlertDescription::BadCertificate
            | AlertDescription::UnknownCA
            | AlertDescription::CertificateUnknown => format!(
                "it refused the TLS handshake ({alert:?}): it asks for a client certificate \
                 that its truststore trusts (cert=FILE&key=FILE)"
            ),
            other => format!("it refused the TLS handshake ({other:?})"),
        },
        rustls::Error::InvalidMessage(_) | rustls::Error::InappropriateMessage { .. } => {
            "it does not speak TLS: secure=true needs the server's secureClientPort, not its \
             clientPort"
                .to_string()
        }
        other => format!("TLS handshake: {other}"),
    };
    (true, format!("ZooKeeper at {address}: {why}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A key file that is not there is said so, not taken for a PEM problem.
    #[test]
    fn a_missing_key_file_says_why_it_cannot_be_read() {
        let dir = std::env::temp_dir().join(format!("flakery-zk-nokey-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let cert = dir.join("c.pem");
        std::fs::write(&cert, crate::link::tests::CERT).unwrap();
        let tls = Tls {
            ca: Some(cert.clone()),
            identity: Some((cert, dir.join("missing.pem"))),
        };
        let error = tls.config().err().unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(
            error.contains("key=") && error.contains("missing.pem: cannot read it: No such file"),
            "{error}"
        );
    }
}
