//! The database options (`database_url`, `database_mode`; docs/spec.md#generator-options).
//! A database URL holds a password: it is kept whole only for the coordinator that connects
//! with it (the `flakery-sql` crate, which also reads its TLS parameters), and every other use
//! (messages, `Debug`, `Display`) sees it with the password masked. The core reads only the
//! URL's shape; it never connects.

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};

/// How node IDs are taken from the database.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DatabaseMode {
    /// Leased rows of flakery's own table, renewed, with a high-water mark (the default).
    #[default]
    Lease,
    /// uid-generator's `WORKER_NODE`: one new row per start, its `ID` the worker ID.
    Baidu,
}

impl DatabaseMode {
    pub const fn as_str(self) -> &'static str {
        match self {
            DatabaseMode::Lease => "lease",
            DatabaseMode::Baidu => "baidu",
        }
    }
}

impl FromStr for DatabaseMode {
    type Err = Error;

    fn from_str(text: &str) -> Result<Self> {
        match text.trim() {
            "lease" => Ok(DatabaseMode::Lease),
            "baidu" => Ok(DatabaseMode::Baidu),
            other => Err(Error::invalid_argument(format!(
                "database mode '{other}' is not 'lease' (flakery's table, the default) or \
                 'baidu' (uid-generator's WORKER_NODE table)"
            ))),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DatabaseKind {
    Postgres,
    MySql,
}

impl DatabaseKind {
    pub const fn name(self) -> &'static str {
        match self {
            DatabaseKind::Postgres => "PostgreSQL",
            DatabaseKind::MySql => "MySQL",
        }
    }
}

/// `postgres://user:password@host:port/db?...`, `postgresql://...` or `mysql://...`
/// (`mariadb://` is read as `mysql://`).
#[derive(Clone, PartialEq, Eq)]
pub struct DatabaseUrl {
    kind: DatabaseKind,
    /// The URL as given (the scheme `mariadb` replaced by `mysql`).
    secret: String,
    /// The same with every password replaced by `***`.
    masked: String,
    /// `host:port` (or the hosts as written), for messages.
    host: String,
    /// The passwords in the URL, to scrub from the client crates' messages.
    passwords: Vec<String>,
}

const MASK: &str = "***";

impl DatabaseUrl {
    pub fn parse(text: &str) -> Result<DatabaseUrl> {
        let text = text.trim();
        let (scheme, rest) = text.split_once("://").ok_or_else(|| {
            Error::invalid_argument(
                "the database URL must start with postgres://, postgresql:// or mysql://",
            )
        })?;
        let (kind, secret) = match scheme.to_ascii_lowercase().as_str() {
            "postgres" | "postgresql" => (DatabaseKind::Postgres, text.to_string()),
            "mysql" => (DatabaseKind::MySql, text.to_string()),
            "mariadb" => (DatabaseKind::MySql, format!("mysql://{rest}")),
            _ => {
                return Err(Error::invalid_argument(format!(
                    "the database URL's scheme '{}' is not postgres, postgresql or mysql",
                    scheme.escape_debug()
                )))
            }
        };
        // The authority ends at the first '/', '?' or '#'; its user information at its last '@'.
        let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let (authority, tail) = rest.split_at(authority_end);
        let (userinfo, hosts) = match authority.rfind('@') {
            Some(at) => (Some(&authority[..at]), &authority[at + 1..]),
            None => (None, authority),
        };
        let mut passwords = Vec::new();
        let masked_userinfo = userinfo.map(|info| match info.split_once(':') {
            Some((user, password)) => {
                passwords.push(password.to_string());
                format!("{user}:{MASK}@")
            }
            None => format!("{info}@"),
        });
        let masked_tail = mask_query_passwords(tail, &mut passwords);
        for password in passwords.clone() {
            if let Some(decoded) = percent_decoded(&password) {
                passwords.push(decoded);
            }
        }
        passwords.retain(|p| !p.is_empty());
        let host = if hosts.is_empty() {
            "localhost".to_string()
        } else {
            hosts.to_string()
        };
        let scheme_shown = if scheme.eq_ignore_ascii_case("mariadb") {
            "mysql"
        } else {
            scheme
        };
        Ok(DatabaseUrl {
            kind,
            masked: format!(
                "{scheme_shown}://{}{hosts}{masked_tail}",
                masked_userinfo.unwrap_or_default()
            ),
            secret,
            host,
            passwords,
        })
    }

    pub fn kind(&self) -> DatabaseKind {
        self.kind
    }

    /// The URL as given (the scheme `mariadb` read as `mysql`), password included: only for
    /// the coordinator that connects with it. Never show it.
    pub fn expose_secret(&self) -> &str {
        &self.secret
    }

    /// The URL with its password masked.
    pub fn masked(&self) -> &str {
        &self.masked
    }

    /// The host (and port) as written in the URL.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// `message` with every password of this URL replaced by `***` (the client crates' errors
    /// may quote what they were given).
    pub fn scrub(&self, message: &str) -> String {
        let mut out = message.to_string();
        for password in &self.passwords {
            out = out.replace(password.as_str(), MASK);
        }
        out.replace(self.secret.as_str(), &self.masked)
    }
}

/// `?password=...` (and `pass=`) values replaced by the mask, their values collected.
fn mask_query_passwords(tail: &str, passwords: &mut Vec<String>) -> String {
    let Some((path, query)) = tail.split_once('?') else {
        return tail.to_string();
    };
    let parts: Vec<String> = query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((key, value))
                if key.eq_ignore_ascii_case("password") || key.eq_ignore_ascii_case("pass") =>
            {
                passwords.push(value.to_string());
                format!("{key}={MASK}")
            }
            _ => pair.to_string(),
        })
        .collect();
    format!("{path}?{}", parts.join("&"))
}

/// `text` with its `%XX` escapes decoded, if it has any and they make UTF-8.
pub fn percent_decoded(text: &str) -> Option<String> {
    if !text.contains('%') {
        return None;
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at] == b'%' && at + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[at + 1..at + 3]).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            at += 3;
        } else {
            out.push(bytes[at]);
            at += 1;
        }
    }
    String::from_utf8(out).ok()
}

impl fmt::Display for DatabaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.masked)
    }
}

impl fmt::Debug for DatabaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("DatabaseUrl").field(&self.masked).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_masked_everywhere() {
        let url =
            DatabaseUrl::parse("postgres://app:s3cr%40t@db1:5433/ids?sslmode=require").unwrap();
        assert_eq!(url.kind(), DatabaseKind::Postgres);
        assert_eq!(
            url.masked(),
            "postgres://app:***@db1:5433/ids?sslmode=require"
        );
        assert_eq!(url.host(), "db1:5433");
        for shown in [
            format!("{url}"),
            format!("{url:?}"),
            url.scrub("bad s3cr@t and s3cr%40t"),
        ] {
            assert!(!shown.contains("s3cr"), "{shown}");
        }
        let url = DatabaseUrl::parse("mysql://root@h/db?password=hunter2&x=1").unwrap();
        assert_eq!(url.masked(), "mysql://root@h/db?password=***&x=1");
        assert_eq!(url.scrub("said hunter2"), "said ***");
        let url = DatabaseUrl::parse("mariadb://u:p@q@h:3306/d").unwrap();
        assert_eq!(url.kind(), DatabaseKind::MySql);
        assert_eq!(url.masked(), "mysql://u:***@h:3306/d");
        assert!(url.expose_secret().starts_with("mysql://u:p@q@"));
        let url = DatabaseUrl::parse("postgres://u:pw@h/d?sslmode=verify-full").unwrap();
        assert_eq!(url.masked(), "postgres://u:***@h/d?sslmode=verify-full");
    }

    #[test]
    fn other_schemes_are_refused_without_echoing_the_url() {
        let err = DatabaseUrl::parse("redis://u:topsecret@h").unwrap_err();
        assert!(!err.message().contains("topsecret"), "{}", err.message());
        assert!(DatabaseUrl::parse("no scheme").is_err());
    }
}
