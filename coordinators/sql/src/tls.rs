//! What TLS the database URL asks for, read from its query parameters by the names the
//! database's own clients use, and removed from the URL handed to the client crate (which
//! knows only some of them). The rules are written for users in docs/databases.md (TLS).
//!
//! - PostgreSQL, as libpq: `sslmode` = `disable`, `allow` (read as `prefer`), `prefer` (the
//!   default), `require`, `verify-ca`, `verify-full`; `sslrootcert` = a PEM file of CA
//!   certificates, or `system` for the operating system's roots (then `verify-full` only);
//!   without `sslrootcert`, `~/.postgresql/root.crt` when it exists, which also makes
//!   `require` check the chain (`verify-ca`); `sslcert` and `sslkey` = a client certificate
//!   and its key (PEM), else `~/.postgresql/postgresql.crt` and `.key` when they exist.
//! - MySQL / MariaDB, as the `mysql` command-line client: `ssl-mode` = `DISABLED`,
//!   `REQUIRED`, `VERIFY_CA`, `VERIFY_IDENTITY` (any case; `PREFERRED` is refused: the client
//!   crate cannot fall back to plain text); `ssl-ca` = a PEM file of CA certificates;
//!   `ssl-cert` and `ssl-key` = a client certificate and its key (PEM). The
//!   `mysql` crate's own TLS parameters (`MYSQL_CRATE_PARAMETERS`) are left to it, but not
//!   mixed with `ssl-mode`.

use std::path::PathBuf;

use flakery::error::{Error, Result};

use flakery::options::percent_decoded;
use flakery::DatabaseKind;

/// How much of TLS a connection needs, from least to most.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum TlsMode {
    /// Plain text.
    Disable,
    /// TLS when the server offers it, else plain text; the certificate is not checked.
    Prefer,
    /// TLS or no connection; the certificate is not checked.
    Require,
    /// TLS, the certificate's chain checked against the roots (not its name).
    VerifyCa,
    /// TLS, the chain and the host name checked.
    VerifyFull,
}

/// The CA certificates a checked connection trusts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Roots {
    /// None named in the URL (PostgreSQL: `~/.postgresql/root.crt` if it exists).
    Unnamed,
    /// A PEM file.
    File(PathBuf),
    /// The operating system's store (PostgreSQL's `sslrootcert=system`).
    System,
}

/// The TLS a URL asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TlsRequest {
    pub mode: TlsMode,
    pub roots: Roots,
    /// MySQL: the URL carries the `mysql` crate's own TLS parameters (it applies them).
    pub crate_parameters: bool,
    /// A client certificate chain and its private key, PEM files (`sslcert` and `sslkey`,
    /// `ssl-cert` and `ssl-key`).
    pub client_cert: Option<(PathBuf, PathBuf)>,
}

/// The `mysql` crate's TLS parameters: any of them makes it require TLS (and it applies
/// them itself, so flakery must not set TLS options over them).
const MYSQL_CRATE_PARAMETERS: [&str; 6] = [
    "root_cert_path",
    "danger_accept_invalid_certs",
    "danger_skip_domain_validation",
    "cert_chain_path",
    "priv_key_path",
    "cipher_suites",
];

/// Reads the TLS parameters of `url` (a `kind` URL, password included) and returns the URL
/// without the ones this module applies itself, for the client crate. Messages name the
/// parameter and its value, never the URL.
pub(crate) fn split(kind: DatabaseKind, url: &str) -> Result<(String, TlsRequest)> {
    let (base, query) = match url.split_once('?') {
        Some((base, query)) => (base, query),
        None => (url, ""),
    };
    let (query, fragment) = match query.split_once('#') {
        Some((query, fragment)) => (query, Some(fragment)),
        None => (query, None),
    };
    let mut kept = Vec::new();
    let mut mode = None;
    let mut roots = Roots::Unnamed;
    let mut crate_parameters = false;
    let (mut cert, mut cert_key) = (None, None);
    for pair in query.split('&').filter(|pair| !pair.is_empty()) {
        let (key, raw) = pair.split_once('=').unwrap_or((pair, ""));
        let value = percent_decoded(raw).unwrap_or_else(|| raw.to_string());
        match (kind, key) {
            (DatabaseKind::Postgres, "sslmode") => mode = Some(postgres_mode(&value)?),
            (DatabaseKind::Postgres, "sslrootcert") => {
                roots = if value == "system" {
                    Roots::System
                } else {
                    Roots::File(non_empty_path(key, &value)?)
                }
            }
            (DatabaseKind::Postgres, "sslcert")
            | (DatabaseKind::MySql, "ssl-cert" | "ssl_cert") => {
                cert = Some(non_empty_path(key, &value)?)
            }
            (DatabaseKind::Postgres, "sslkey") | (DatabaseKind::MySql, "ssl-key" | "ssl_key") => {
                cert_key = Some(non_empty_path(key, &value)?)
            }
            (DatabaseKind::Postgres, "sslpassword" | "sslcrl" | "sslcrldir") => {
                return Err(Error::invalid_argument(format!(
                    "the database URL's '{key}' (encrypted keys, revocation lists) is not \
                     supported; sslmode, sslrootcert, sslcert and sslkey are"
                )))
            }
            (DatabaseKind::MySql, "ssl-mode" | "ssl_mode") => mode = Some(mysql_mode(&value)?),
            (DatabaseKind::MySql, "ssl-ca" | "ssl_ca") => {
                roots = Roots::File(non_empty_path(key, &value)?)
            }
            (DatabaseKind::MySql, key) if MYSQL_CRATE_PARAMETERS.contains(&key) => {
                crate_parameters = true;
                kept.push(pair);
            }
            _ => kept.push(pair),
        }
    }
    let client_cert =
        match (cert, cert_key) {
            (Some(cert), Some(key)) => Some((cert, key)),
            (None, None) => None,
            _ => return Err(Error::invalid_argument(
                "the database URL gives a client certificate without its key, or a key without \
                 its certificate: give both (sslcert and sslkey; for MySQL ssl-cert and ssl-key)",
            )),
        };
    let request = match kind {
        DatabaseKind::Postgres => {
            let mode = mode.unwrap_or(TlsMode::Prefer);
            if roots == Roots::System && mode != TlsMode::VerifyFull {
                return Err(Error::invalid_argument(
                    "the database URL's sslrootcert=system needs sslmode=verify-full (as libpq: \
                     the system's roots vouch for any public name, so the name must be checked)",
                ));
            }
            TlsRequest {
                mode,
                roots,
                crate_parameters: false,
                client_cert,
            }
        }
        DatabaseKind::MySql => {
            if crate_parameters && mode.is_some() {
                return Err(Error::invalid_argument(
                    "the database URL mixes ssl-mode with the mysql crate's root_cert_path / \
                     danger_* parameters: use ssl-mode and ssl-ca",
                ));
            }
            if crate_parameters && client_cert.is_some() {
                return Err(Error::invalid_argument(
                    "the database URL mixes ssl-cert / ssl-key with the mysql crate's TLS \
                     parameters: use ssl-mode, ssl-ca, ssl-cert and ssl-key",
                ));
            }
            if mode == Some(TlsMode::Disable) && (roots != Roots::Unnamed || client_cert.is_some())
            {
                return Err(Error::invalid_argument(
                    "the database URL has ssl-ca, ssl-cert or ssl-key with ssl-mode=DISABLED",
                ));
            }
            let mode = match (mode, &roots) {
                (Some(mode), _) => mode,
                // As the mysql client: a CA alone asks for its check.
                (None, Roots::File(_)) => TlsMode::VerifyCa,
                (None, _) if crate_parameters || client_cert.is_some() => TlsMode::Require,
                (None, _) => TlsMode::Disable,
            };
            TlsRequest {
                mode,
                roots,
                crate_parameters,
                client_cert,
            }
        }
    };
    let mut client = base.to_string();
    if !kept.is_empty() {
        client.push('?');
        client.push_str(&kept.join("&"));
    }
    if let Some(fragment) = fragment {
        client.push('#');
        client.push_str(fragment);
    }
    Ok((client, request))
}

/// `message` (a client crate's, about a failed connection) with what to check when it is
/// a certificate the client did not trust.
#[cfg(all(unix, any(feature = "postgres", feature = "mysql")))]
pub(crate) fn with_hint(message: String) -> String {
    if message.contains("UnknownIssuer") {
        format!(
            "{message} (the server's certificate is not signed by a CA this client trusts: \
             check sslrootcert / ssl-ca)"
        )
    } else if message.contains("not valid for name") {
        format!(
            "{message} (connect by a name the certificate is for, or check only the chain: \
             sslmode=verify-ca / ssl-mode=VERIFY_CA)"
        )
    } else {
        message
    }
}

impl TlsRequest {
    /// Checks that every file the URL names (the CAs, the client certificate and key) can be
    /// read, naming the parameter, the file and the reason when one cannot: the client crates
    /// report an unreadable CA file as something else ("server does not have this
    /// capability"), or not until the handshake. Nothing of a file's contents is shown.
    #[cfg_attr(not(any(feature = "postgres", feature = "mysql")), allow(dead_code))]
    pub(crate) fn check_files(&self, kind: DatabaseKind) -> std::result::Result<(), String> {
        let (ca, cert, key) = match kind {
            DatabaseKind::Postgres => ("sslrootcert", "sslcert", "sslkey"),
            DatabaseKind::MySql => ("ssl-ca", "ssl-cert", "ssl-key"),
        };
        let mut named = Vec::new();
        if let Roots::File(path) = &self.roots {
            named.push((ca, path));
        }
        if let Some((cert_path, key_path)) = &self.client_cert {
            named.push((cert, cert_path));
            named.push((key, key_path));
        }
        for (parameter, path) in named {
            readable(path).map_err(|e| {
                format!(
                    "cannot read the file {} that the database URL's {parameter} names: {e}",
                    path.display()
                )
            })?;
        }
        Ok(())
    }
}

/// Whether a byte of `path` can be read (a directory opens, but reads fail).
fn readable(path: &std::path::Path) -> std::io::Result<()> {
    use std::io::Read;
    let mut byte = [0u8; 1];
    std::fs::File::open(path)?.read(&mut byte).map(|_| ())
}

fn postgres_mode(value: &str) -> Result<TlsMode> {
    match value {
        "disable" => Ok(TlsMode::Disable),
        // libpq's `allow` tries plain text first; TLS first is never less safe.
        "allow" | "prefer" => Ok(TlsMode::Prefer),
        "require" => Ok(TlsMode::Require),
        "verify-ca" => Ok(TlsMode::VerifyCa),
        "verify-full" => Ok(TlsMode::VerifyFull),
        other => Err(Error::invalid_argument(format!(
            "the database URL's sslmode '{}' is not disable, allow, prefer, require, verify-ca \
             or verify-full",
            other.escape_debug()
        ))),
    }
}

fn mysql_mode(value: &str) -> Result<TlsMode> {
    match value.to_ascii_uppercase().as_str() {
        "DISABLED" => Ok(TlsMode::Disable),
        "REQUIRED" => Ok(TlsMode::Require),
        "VERIFY_CA" => Ok(TlsMode::VerifyCa),
        "VERIFY_IDENTITY" => Ok(TlsMode::VerifyFull),
        "PREFERRED" => Err(Error::invalid_argument(
            "the database URL's ssl-mode=PREFERRED is not supported (the MySQL client in \
             flakery cannot fall back to plain text): use REQUIRED, VERIFY_CA, VERIFY_IDENTITY \
             or DISABLED",
        )),
        _ => Err(Error::invalid_argument(format!(
            "the database URL's ssl-mode '{}' is not DISABLED, REQUIRED, VERIFY_CA or \
             VERIFY_IDENTITY",
            value.escape_debug()
        ))),
    }
}

fn non_empty_path(key: &str, value: &str) -> Result<PathBuf> {
    if value.is_empty() {
        return Err(Error::invalid_argument(format!(
            "the database URL's '{key}' is empty: give the path of a PEM file of CA certificates"
        )));
    }
    Ok(PathBuf::from(value))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An unreadable CA file, certificate or key is named with the parameter and the reason
    /// before any connection is tried (MySQL's client said "server does not have this
    /// capability" of an unreadable ssl-ca).
    #[test]
    fn unreadable_files_are_named_with_the_reason() {
        let dir = std::env::temp_dir().join(format!("flakery-tls-files-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let pem = dir.join("ok.pem");
        std::fs::write(&pem, "-----BEGIN CERTIFICATE-----\n").unwrap();
        let missing = dir.join("missing.pem");
        let (ok, gone, folder) = (pem.display(), missing.display(), dir.display());
        for (kind, url, parameter, file, reason) in [
            (
                DatabaseKind::MySql,
                format!("mysql://h/db?ssl-ca={gone}"),
                "ssl-ca",
                &missing,
                "No such file",
            ),
            (
                DatabaseKind::MySql,
                format!("mysql://h/db?ssl-ca={folder}"),
                "ssl-ca",
                &dir,
                "directory",
            ),
            (
                DatabaseKind::MySql,
                format!("mysql://h/db?ssl-ca={ok}&ssl-cert={ok}&ssl-key={gone}"),
                "ssl-key",
                &missing,
                "No such file",
            ),
            (
                DatabaseKind::Postgres,
                format!("postgres://h/db?sslmode=verify-ca&sslrootcert={gone}"),
                "sslrootcert",
                &missing,
                "No such file",
            ),
            (
                DatabaseKind::Postgres,
                format!("postgres://h/db?sslcert={folder}&sslkey={ok}"),
                "sslcert",
                &dir,
                "directory",
            ),
        ] {
            let (_, tls) = split(kind, &url).unwrap();
            let message = tls.check_files(kind).unwrap_err();
            assert!(message.contains(parameter), "{message}");
            assert!(message.contains(&file.display().to_string()), "{message}");
            assert!(message.contains(reason), "{message}");
        }
        let (_, tls) = split(DatabaseKind::MySql, &format!("mysql://h/db?ssl-ca={ok}")).unwrap();
        assert_eq!(tls.check_files(DatabaseKind::MySql), Ok(()));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn pg(url: &str) -> Result<(String, TlsRequest)> {
        split(DatabaseKind::Postgres, url)
    }

    fn my(url: &str) -> Result<(String, TlsRequest)> {
        split(DatabaseKind::MySql, url)
    }

    #[test]
    fn postgres_parameters_are_read_and_removed() {
        let (client, tls) =
            pg("postgres://u:p@h/db?application_name=x&sslmode=verify-full&sslrootcert=%2Fca.pem")
                .unwrap();
        assert_eq!(client, "postgres://u:p@h/db?application_name=x");
        assert_eq!(tls.mode, TlsMode::VerifyFull);
        assert_eq!(tls.roots, Roots::File("/ca.pem".into()));
        let (client, tls) = pg("postgres://u:p@h/db").unwrap();
        assert_eq!(client, "postgres://u:p@h/db");
        assert_eq!((tls.mode, tls.roots), (TlsMode::Prefer, Roots::Unnamed));
        assert_eq!(
            pg("postgres://h?sslmode=allow").unwrap().1.mode,
            TlsMode::Prefer
        );
        assert_eq!(
            pg("postgres://h?sslmode=disable").unwrap().1.mode,
            TlsMode::Disable
        );
    }

    #[test]
    fn postgres_refusals_name_the_parameter_not_the_url() {
        for url in [
            "postgres://u:hunter2@h/db?sslmode=verify_full",
            "postgres://u:hunter2@h/db?sslmode=require&sslrootcert=system",
            "postgres://u:hunter2@h/db?sslcert=/c.pem",
            "postgres://u:hunter2@h/db?sslpassword=x",
            "postgres://u:hunter2@h/db?sslmode=verify-ca&sslrootcert=",
        ] {
            let err = pg(url).unwrap_err();
            assert!(!err.message().contains("hunter2"), "{}", err.message());
            assert!(err.message().contains("ssl"), "{}", err.message());
        }
    }

    #[test]
    fn mysql_modes_and_the_crates_own_parameters() {
        let (client, tls) = my("mysql://u:p@h/db?ssl-mode=verify_identity&ssl-ca=/ca.pem").unwrap();
        assert_eq!(client, "mysql://u:p@h/db");
        assert_eq!(tls.mode, TlsMode::VerifyFull);
        assert_eq!(tls.roots, Roots::File("/ca.pem".into()));
        assert_eq!(
            my("mysql://h/db?ssl-ca=/ca.pem").unwrap().1.mode,
            TlsMode::VerifyCa
        );
        assert_eq!(my("mysql://h/db").unwrap().1.mode, TlsMode::Disable);
        let (client, tls) = my("mysql://h/db?root_cert_path=/ca.pem&prefer_socket=false").unwrap();
        assert_eq!(
            client,
            "mysql://h/db?root_cert_path=/ca.pem&prefer_socket=false"
        );
        assert!(tls.crate_parameters);
        assert_eq!(tls.mode, TlsMode::Require);
        for url in [
            "mysql://h/db?ssl-mode=PREFERRED",
            "mysql://h/db?ssl-mode=on",
            "mysql://h/db?ssl-mode=REQUIRED&root_cert_path=/ca.pem",
            "mysql://h/db?ssl-mode=DISABLED&ssl-ca=/ca.pem",
            "mysql://h/db?ssl-mode=DISABLED&cipher_suites=TLS13_AES_128_GCM_SHA256",
        ] {
            assert!(my(url).is_err(), "{url}");
        }
        let (client, tls) = my("mysql://h/db?ssl-cert=/c.pem&ssl-key=/k.pem").unwrap();
        assert_eq!(client, "mysql://h/db");
        assert_eq!(tls.mode, TlsMode::Require);
        assert!(my("mysql://h/db?ssl-cert=/c.pem&root_cert_path=/ca.pem&ssl-key=/k").is_err());
        // Client certificates through the crate: TLS, which flakery leaves to it.
        let (_, tls) = my("mysql://h/db?cert_chain_path=/c.pem&priv_key_path=/k.pem").unwrap();
        assert!(tls.crate_parameters);
    }
}
