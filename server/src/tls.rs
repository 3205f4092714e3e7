//! TLS for the listener (rustls with ring, as the SQL coordinators: no OpenSSL in the binary):
//! the certificate chain and key from PEM files, ALPN for HTTP/2 and HTTP/1.x, and optionally
//! client certificates checked against a CA. The files are re-read on SIGHUP and when they
//! change (`reload`); each new connection takes the configuration current at its accept,
//! so a connection open across a reload keeps the session it has.

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use rustls::pki_types::CertificateDer;
use rustls::server::WebPkiClientVerifier;
use rustls::ServerConfig;
use tokio_rustls::TlsAcceptor;

/// The files TLS is read from, as the flags name them.
#[derive(Clone, Debug, PartialEq)]
pub struct TlsFiles {
    pub cert: PathBuf,
    pub key: PathBuf,
    pub client_ca: Option<PathBuf>,
}

/// The configuration new connections get, swapped whole by a reload.
pub struct Tls {
    pub files: TlsFiles,
    current: RwLock<Arc<ServerConfig>>,
}

impl Tls {
    /// Reads the files; an error names the file and the cause, never a key's bytes.
    pub fn load(files: TlsFiles) -> Result<Tls, String> {
        let (config, dates) = server_config(&files)?;
        warn_if_out_of_date(&files.cert, &dates);
        Ok(Tls {
            files,
            current: RwLock::new(config),
        })
    }

    /// An acceptor with the configuration of the moment (the lock is held for a clone).
    pub fn acceptor(&self) -> TlsAcceptor {
        let config = match self.current.read() {
            Ok(config) => Arc::clone(&config),
            Err(poisoned) => Arc::clone(&poisoned.into_inner()),
        };
        TlsAcceptor::from(config)
    }

    /// Re-reads the files: the new pair serves new connections, or, if it is bad, the old one
    /// stays and the error is returned for the log.
    /// Answers the new certificate's last day.
    pub fn reload(&self) -> Result<String, String> {
        let (config, dates) = server_config(&self.files)?;
        match self.current.write() {
            Ok(mut current) => *current = config,
            Err(poisoned) => *poisoned.into_inner() = config,
        }
        warn_if_out_of_date(&self.files.cert, &dates);
        Ok(dates.map_or_else(|| "unknown".into(), |d| d.not_after_shown))
    }

    /// "mutual" when client certificates are required, else "on" (the start line's `tls`).
    pub fn mode(&self) -> &'static str {
        if self.files.client_ca.is_some() {
            "mutual"
        } else {
            "on"
        }
    }
}

/// The served certificate's dates (seconds since 1970), for the log.
struct Dates {
    not_before: u64,
    not_after: u64,
    not_after_shown: String,
}

/// The leaf's dates; None if rustls took a certificate this parser does not read.
fn dates(leaf: &CertificateDer) -> Option<Dates> {
    use x509_cert::der::Decode;
    let cert = x509_cert::Certificate::from_der(leaf.as_ref()).ok()?;
    let validity = cert.tbs_certificate.validity;
    Some(Dates {
        not_before: validity.not_before.to_unix_duration().as_secs(),
        not_after: validity.not_after.to_unix_duration().as_secs(),
        not_after_shown: validity.not_after.to_string(),
    })
}

/// A certificate out of its dates is served (the operator may be renewing it), but every
/// client that checks refuses it: said at start and at each reload.
fn warn_if_out_of_date(cert: &Path, dates: &Option<Dates>) {
    let Some(dates) = dates else { return };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    if now > dates.not_after || now < dates.not_before {
        tracing::warn!(
            event = "tls_certificate_out_of_date",
            cert = %cert.display(),
            not_after = %dates.not_after_shown,
            "the TLS certificate is outside its validity dates (expired, or not yet valid): \
             clients that check it refuse the connection; renew it"
        );
    }
}

fn server_config(files: &TlsFiles) -> Result<(Arc<ServerConfig>, Option<Dates>), String> {
    let key = flakery_tls::private_key(&files.key).map_err(|e| format!("--tls-key {e}"))?;
    let chain = flakery_tls::chain(&files.cert).map_err(|e| format!("--tls-cert {e}"))?;
    let dates = dates(&chain[0]);
    let builder = flakery_tls::server_builder().map_err(|e| format!("TLS: {e}"))?;
    let builder = match &files.client_ca {
        None => builder.with_no_client_auth(),
        Some(ca) => {
            let roots =
                flakery_tls::roots_of_file(ca).map_err(|e| format!("--tls-client-ca {e}"))?;
            let verifier = WebPkiClientVerifier::builder_with_provider(
                Arc::new(roots),
                flakery_tls::provider(),
            )
            .build()
            .map_err(|e| format!("--tls-client-ca {}: {e}", ca.display()))?;
            builder.with_client_cert_verifier(verifier)
        }
    };
    let mut config = builder.with_single_cert(chain, key).map_err(|e| {
        format!(
            "--tls-cert {} and --tls-key {} are not a pair: {e}",
            files.cert.display(),
            files.key.display()
        )
    })?;
    // http/1.0: what `curl --http1.0` offers, alone; hyper serves it as HTTP/1.
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec(), b"http/1.0".to_vec()];
    Ok((Arc::new(config), dates))
}

/// What a reload compares to see whether a file changed: its identity and time after symlinks
/// are followed (kubelet swaps a Secret volume's `..data` symlink; an editor writes anew).
type Stamp = Option<(u64, u64, i64, i64, u64)>;

fn stamp(path: &Path) -> Stamp {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).ok()?;
    Some((
        meta.dev(),
        meta.ino(),
        meta.mtime(),
        meta.mtime_nsec(),
        meta.len(),
    ))
}

/// The stamps of every file TLS reads.
fn stamps(files: &TlsFiles) -> Vec<Stamp> {
    [
        Some(&files.cert),
        Some(&files.key),
        files.client_ca.as_ref(),
    ]
    .into_iter()
    .flatten()
    .map(|path| stamp(path))
    .collect()
}

/// Re-reads the files on SIGHUP, and, if `watch`, when any of them changes (checked every
/// `ticks`), logging the outcome; a bad pair keeps the old one. Without TLS, SIGHUP (a
/// `systemctl reload`) is logged and otherwise ignored: its default action would end the
/// server with its lease held.
/// `hangup` is made before the identity is taken (`run_inner`), so that no SIGHUP from then
/// on finds the default action in place; one sent during the start is handled here.
pub async fn reload(
    tls: Option<Arc<Tls>>,
    watch: bool,
    mut hangup: Option<tokio::signal::unix::Signal>,
    mut ticks: crate::stopping::Ticks,
) {
    let mut seen = tls.as_ref().map(|tls| stamps(&tls.files));
    loop {
        let why = tokio::select! {
            Some(()) = async { hangup.as_mut()?.recv().await } => "SIGHUP",
            more = ticks.next() => {
                if !more {
                    return;
                }
                let now = tls.as_ref().map(|tls| stamps(&tls.files));
                if !watch || now == seen {
                    continue;
                }
                "files changed"
            }
        };
        let Some(tls) = &tls else {
            tracing::info!(
                event = "sighup",
                "SIGHUP: no TLS files to re-read, nothing done"
            );
            continue;
        };
        // Stamped before reading, so that a write during the read is seen at the next turn.
        seen = Some(stamps(&tls.files));
        match tls.reload() {
            Ok(not_after) => tracing::info!(
                event = "tls_reloaded",
                cause = why,
                cert = %tls.files.cert.display(),
                not_after,
                "TLS certificate and key re-read: new connections get them; open ones keep \
                 theirs"
            ),
            Err(error) => tracing::warn!(
                event = "tls_reload_failed",
                cause = why,
                "TLS files not reloaded, the previous certificate and key still serve: {error}"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("flakery-tls-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// A key file's contents never reach the message: only its name does.
    #[test]
    fn a_bad_key_is_named_not_shown() {
        let dir = temp_dir("badkey");
        let (cert, key) = (dir.join("c.pem"), dir.join("k.pem"));
        std::fs::write(&cert, "").unwrap();
        let secret =
            "-----BEGIN PRIVATE KEY-----\nc2VjcmV0LWtleS1ieXRlcw!!\n-----END PRIVATE KEY-----\n";
        std::fs::write(&key, secret).unwrap();
        let files = TlsFiles {
            cert: cert.clone(),
            key: key.clone(),
            client_ca: None,
        };
        let error = Tls::load(files).err().unwrap();
        assert!(
            error.starts_with("--tls-key") && error.contains(&key.display().to_string()),
            "{error}"
        );
        assert!(
            !error.contains("c2VjcmV0") && !error.contains("!!"),
            "{error}"
        );
        std::fs::remove_dir_all(dir).unwrap();
    }

    /// A key file that is not there is said so, not taken for a PEM problem.
    #[test]
    fn a_missing_key_file_says_why_it_cannot_be_read() {
        let dir = temp_dir("nokey");
        let files = TlsFiles {
            cert: dir.join("c.pem"),
            key: dir.join("missing.pem"),
            client_ca: None,
        };
        let error = Tls::load(files).err().unwrap();
        assert!(
            error.contains("missing.pem: cannot read it: No such file or directory"),
            "{error}"
        );
        std::fs::remove_dir_all(dir).unwrap();
    }
}
