//! ZooKeeper settings: the connect string
//! (`[user:password@]host:port[,host:port...][/chroot][?secure=true&ca=FILE&cert=FILE&key=FILE]`),
//! the namespace and session timeout, the ACL of the znodes, and the paths of a namespace's
//! znodes:
//! `<chroot>/flakery/<namespace>/nodes/<index>` (ephemeral, one per held index) and
//! `.../hwm/<index>` (persistent, the high-water mark).

use std::time::Duration;

use crate::proto::{Acl, ZkError, PERM_ALL, PERM_READ};
use crate::tls::Tls;
use flakery::error::{Error, ErrorCode, Result};
use flakery::layout::Layout;

/// The shortest session timeout that can hold a lease: IDs are issued for half of it after
/// each answer, and it is renewed a quarter of it after each, so a shorter one would renew
/// faster than a server answers across a data centre.
pub const MIN_SESSION_TIMEOUT_MS: u64 = 1000;

/// ZooKeeper digest credentials (`user:password`). The password is sent to the server when
/// a session starts and shown nowhere: not in errors, logs or `Debug`.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Credentials {
    user: String,
    password: String,
}

impl Credentials {
    pub(crate) fn user(&self) -> &str {
        &self.user
    }

    /// `user:password`, as the digest scheme's `addauth` takes it.
    pub(crate) fn secret(&self) -> String {
        format!("{}:{}", self.user, self.password)
    }

    /// The identity ZooKeeper's digest scheme gives these credentials in an ACL:
    /// `user:base64(sha1(user:password))`.
    pub(crate) fn digest_id(&self) -> String {
        use base64::Engine;
        use sha1::Digest;
        let hash = sha1::Sha1::digest(self.secret().as_bytes());
        format!(
            "{}:{}",
            self.user,
            base64::engine::general_purpose::STANDARD.encode(hash)
        )
    }
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("user", &self.user)
            .field("password", &"<redacted>")
            .finish()
    }
}

/// What a lease was made with; a forked child leases anew with the same.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    /// The connect string as given, without its credentials, for messages.
    pub(crate) connect: String,
    /// Digest credentials: the session adds them, and every znode flakery creates lets only
    /// them write (`acl`). `None`: znodes are open to every client.
    pub(crate) credentials: Option<Credentials>,
    /// `host:port` of each server.
    pub(crate) hosts: Vec<String>,
    /// TLS to every server (`?secure=true`, ZooKeeper's `secureClientPort`); `None`: plain.
    pub(crate) tls: Option<Tls>,
    /// The chroot suffix of the connect string (`""` or `/a/b`), prefixed to every path here.
    pub(crate) chroot: String,
    pub(crate) namespace: String,
    pub(crate) session_timeout_ms: u64,
    pub(crate) layout: Layout,
}

impl Settings {
    pub(crate) fn parse(
        connect: &str,
        namespace: &str,
        session_timeout_ms: u64,
        layout: &Layout,
    ) -> Result<Settings> {
        let (credentials, whole) = split_credentials(connect.trim())?;
        // From here on, messages show the connect string without its credentials.
        let connect = whole;
        let (text, tls) = match whole.split_once('?') {
            Some((text, query)) => (text, Tls::parse(query, connect)?),
            None => (whole, None),
        };
        let (hosts_part, chroot) = match text.find('/') {
            Some(at) => (&text[..at], text[at..].trim_end_matches('/')),
            None => (text, ""),
        };
        if chroot
            .split('/')
            .skip(1)
            .any(|segment| segment.is_empty() || segment == "." || segment == "..")
        {
            return Err(Error::invalid_argument(format!(
                "ZooKeeper connect string '{connect}': the chroot '{chroot}' is not a valid path"
            )));
        }
        let mut hosts = Vec::new();
        for host in hosts_part
            .split(',')
            .map(str::trim)
            .filter(|h| !h.is_empty())
        {
            let has_port = match host.rfind(':') {
                Some(at) => !host[at..].contains(']') && host[at + 1..].parse::<u16>().is_ok(),
                None => false,
            };
            let bare_v6 = host.matches(':').count() > 1 && !host.starts_with('[');
            if bare_v6 {
                return Err(Error::invalid_argument(format!(
                    "ZooKeeper connect string '{connect}': write an IPv6 address in brackets, \
                     as [::1]:2181"
                )));
            }
            hosts.push(if has_port {
                host.to_string()
            } else if host.contains(':') && !host.ends_with(']') {
                return Err(Error::invalid_argument(format!(
                    "ZooKeeper connect string '{connect}': '{host}' has no valid port"
                )));
            } else {
                format!("{host}:2181")
            });
        }
        if let Some(tls) = &tls {
            let refuse = |why| {
                Error::invalid_argument(format!("ZooKeeper connect string '{connect}': {why}"))
            };
            for host in &hosts {
                crate::tls::server_name(host).map_err(refuse)?;
            }
            // The files now, so that a wrong path fails the start.
            tls.config().map_err(refuse)?;
        }
        if hosts.is_empty() {
            return Err(Error::invalid_argument(format!(
                "ZooKeeper connect string '{connect}' names no server (expected \
                 host:port[,host:port...][/chroot])"
            )));
        }
        if !(MIN_SESSION_TIMEOUT_MS..=3_600_000).contains(&session_timeout_ms) {
            return Err(Error::invalid_argument(format!(
                "session timeout {session_timeout_ms} ms is not between {MIN_SESSION_TIMEOUT_MS} \
                 ms and one hour: flakery issues IDs for half the session timeout after each \
                 answer of the server and renews it a quarter of it after each, so \
                 a shorter session could never hold a lease; set session_timeout_ms \
                 (FLAKERY_SESSION_TIMEOUT_MS) to at least {MIN_SESSION_TIMEOUT_MS}"
            )));
        }
        let namespace = flakery::lease::resolve::check_namespace(namespace.to_string())?;
        Ok(Settings {
            connect: whole.to_string(),
            credentials,
            hosts,
            tls,
            chroot: chroot.to_string(),
            namespace,
            session_timeout_ms,
            layout: layout.clone(),
        })
    }

    /// The ACL of every znode flakery creates: with credentials, everything for them and
    /// reading for everyone (operators can look without them); without, open to all.
    pub(crate) fn acl(&self) -> Vec<Acl> {
        match &self.credentials {
            Some(credentials) => vec![
                Acl {
                    perms: PERM_ALL,
                    scheme: "digest".into(),
                    id: credentials.digest_id(),
                },
                Acl {
                    perms: PERM_READ,
                    scheme: "world".into(),
                    id: "anyone".into(),
                },
            ],
            None => Acl::open(),
        }
    }

    pub(crate) fn timeout(&self) -> Duration {
        Duration::from_millis(self.session_timeout_ms)
    }

    pub(crate) fn root(&self) -> String {
        format!("{}/flakery/{}", self.chroot, self.namespace)
    }

    pub(crate) fn nodes_dir(&self) -> String {
        format!("{}/nodes", self.root())
    }

    pub(crate) fn hwm_dir(&self) -> String {
        format!("{}/hwm", self.root())
    }

    pub(crate) fn node_path(&self, index: u64) -> String {
        format!("{}/nodes/{index}", self.root())
    }

    pub(crate) fn hwm_path(&self, index: u64) -> String {
        format!("{}/hwm/{index}", self.root())
    }

    pub(crate) fn address(&self) -> String {
        self.hosts.join(",")
    }

    pub(crate) fn unavailable(&self, detail: &str) -> Error {
        Error::new(
            ErrorCode::CoordinatorUnavailable,
            format!(
                "ZooKeeper at {} did not answer within {} ms: {detail}",
                self.address(),
                self.session_timeout_ms
            ),
        )
    }

    pub(crate) fn failed(&self, what: &str, err: ZkError) -> Error {
        Error::new(
            ErrorCode::CoordinatorUnavailable,
            match err {
                ZkError::NoAuth => format!(
                    "ZooKeeper at {}: {what} failed: the znode is protected by other ZooKeeper \
                     credentials than this lease's (or by credentials while this lease has \
                     none); every holder of a namespace must connect with the same \
                     user:password@ (docs/security.md#zookeeper)",
                    self.address()
                ),
                err => format!("ZooKeeper at {}: {what} failed: {err}", self.address()),
            },
        )
    }
}

/// The warning a lease logs once at its start when its znodes or its credentials are open to
/// others: no credentials (any client can change the znodes), or credentials over a plain
/// connection (anyone on the path reads them, and the session's traffic).
pub(crate) fn exposure_warning(settings: &Settings) -> Option<String> {
    let address = settings.address();
    let add_tls = "add ?secure=true (and ca=FILE) to the connect string for ZooKeeper's \
                   secureClientPort";
    match (&settings.credentials, &settings.tls) {
        (Some(_), Some(_)) => None,
        (None, tls) => Some(format!(
            "ZooKeeper at {address} without credentials: any client that can reach the \
             ensemble can change flakery's znodes and make two holders share a node ID; add \
             user:password@ to the connect string{} (docs/security.md#zookeeper)",
            match tls {
                Some(_) => String::new(),
                None => format!(
                    ", and the connection is not encrypted, so those credentials would travel \
                     in clear: {add_tls}"
                ),
            }
        )),
        (Some(credentials), None) => Some(format!(
            "ZooKeeper at {address} without TLS: the digest credentials of user '{}' travel \
             in clear, readable (and reusable) by anyone on the network path; {add_tls} \
             (docs/security.md#zookeeper-over-tls)",
            credentials.user()
        )),
    }
}

/// Splits `user:password@rest` at the last `@` into credentials and the rest; text without
/// `@` has none. The password may hold any character, `@` and `:` included; the user no `:`.
/// Errors never show the password.
fn split_credentials(text: &str) -> Result<(Option<Credentials>, &str)> {
    let Some(at) = text.rfind('@') else {
        return Ok((None, text));
    };
    let (userinfo, rest) = (&text[..at], &text[at + 1..]);
    let refuse = |why: &str| {
        Err(Error::invalid_argument(format!(
            "ZooKeeper connect string '<credentials>@{rest}': {why} (expected \
             user:password@host:port[,host:port...][/chroot])"
        )))
    };
    let Some((user, password)) = userinfo.split_once(':') else {
        return refuse("the credentials before '@' have no ':' between user and password");
    };
    if user.is_empty() || password.is_empty() {
        return refuse("the credentials before '@' need a user and a password, both non-empty");
    }
    // A raw `@` in a parameter (`ca=/run/credentials/flakery@orders.service/ca.pem`) ends the
    // credentials there: the hosts and the TLS parameters would be read as password, and TLS
    // silently dropped. No real password holds a query of these parameters.
    if password.split('?').skip(1).any(|query| {
        query.split('&').any(|pair| {
            pair.split_once('=')
                .is_some_and(|(key, _)| matches!(key, "secure" | "ca" | "cert" | "key"))
        })
    }) {
        return Err(Error::invalid_argument(
            "ZooKeeper connect string: an '@' after its '?' (in a parameter's value): the \
             credentials end at the last '@', so the hosts and parameters would be read as the \
             password; write '@' in a parameter as %40"
                .to_string(),
        ));
    }
    Ok((
        Some(Credentials {
            user: user.to_string(),
            password: password.to_string(),
        }),
        rest,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(connect: &str) -> Result<Settings> {
        Settings::parse(connect, "default", 10_000, &Layout::twitter())
    }

    /// An `@` in a TLS file's path would end the credentials there and drop TLS: refused,
    /// without the password; written as %40 it is the path's.
    #[test]
    fn an_at_sign_in_a_parameter_is_refused_not_read_as_the_password() {
        let raw = "flakery:a-long-random-password@zk1:2281,zk2:2281/myapp?secure=true\
                   &ca=/run/credentials/flakery@orders.service/zk-ca.pem";
        let err = parse(raw).unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidArgument, "{err}");
        let message = err.to_string();
        assert!(message.contains("%40"), "{message}");
        assert!(!message.contains("a-long-random-password"), "{message}");
        // A password with '?' and '=' that are no such parameters is still a password.
        let s = parse("u:pa?ss=w@rd@zk1:2281/app").unwrap();
        assert_eq!(s.hosts, ["zk1:2281"]);
        assert_eq!(s.credentials.unwrap().password, "pa?ss=w@rd");
    }

    #[test]
    fn connect_strings() {
        let s = parse("127.0.0.1:2181").unwrap();
        assert_eq!(s.hosts, ["127.0.0.1:2181"]);
        assert_eq!(s.chroot, "");
        assert_eq!(s.node_path(3), "/flakery/default/nodes/3");
        let s = parse(" zk1:2181, zk2 ,[::1]:2182/apps/ids/ ").unwrap();
        assert_eq!(s.hosts, ["zk1:2181", "zk2:2181", "[::1]:2182"]);
        assert_eq!(s.chroot, "/apps/ids");
        assert_eq!(s.hwm_path(0), "/apps/ids/flakery/default/hwm/0");
        let s = parse("h:1/").unwrap();
        assert_eq!(s.chroot, "");
        for bad in ["", "/x", "h:1/a//b", "h:1/a/../b", "::1:2181", "h:notaport"] {
            let err = parse(bad).unwrap_err();
            assert_eq!(err.code(), ErrorCode::InvalidArgument, "{bad}: {err}");
        }
        let err = Settings::parse("h:1", "a/b", 10_000, &Layout::twitter()).unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidArgument);
        let err = Settings::parse("h:1", "a", 0, &Layout::twitter()).unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidArgument);
    }

    #[test]
    fn credentials_come_before_the_last_at_and_never_show() {
        let s = parse("flakery:p@ss:w/rd@zk1:2181,zk2/app").unwrap();
        let credentials = s.credentials.clone().unwrap();
        assert_eq!(credentials.user(), "flakery");
        assert_eq!(credentials.secret(), "flakery:p@ss:w/rd");
        assert_eq!(s.hosts, ["zk1:2181", "zk2:2181"]);
        assert_eq!(s.chroot, "/app");
        assert_eq!(s.connect, "zk1:2181,zk2/app");
        assert!(!format!("{s:?}").contains("p@ss"), "{s:?}");
        assert_eq!(s.acl().len(), 2);
        // ZooKeeper's DigestAuthenticationProvider: user:base64(sha1(user:password)).
        let superuser = parse("super:superpw@h:1").unwrap().credentials.unwrap();
        assert_eq!(superuser.digest_id(), "super:g9oN2HttPfn8MMWJZ2r45Np/LIA=");
        assert_eq!(parse("h:1").unwrap().acl(), Acl::open());
        for bad in [
            "u@h:1",
            ":p@h:1",
            "u:@h:1",
            "u:secret-pw@h:x",
            "u:secret-pw@",
        ] {
            let err = parse(bad).unwrap_err();
            assert_eq!(err.code(), ErrorCode::InvalidArgument, "{bad}: {err}");
            assert!(!err.message().contains("secret-pw"), "{err}");
        }
    }

    #[test]
    fn the_query_turns_tls_on_and_names_its_files() {
        let s = parse("u:pw?x@h1:2281,h2:2281/app?secure=false").unwrap();
        assert_eq!(s.tls, None);
        assert_eq!(s.chroot, "/app");
        assert_eq!(s.credentials.unwrap().secret(), "u:pw?x");
        assert_eq!(parse("h:1?").unwrap().tls, None);
        let missing = "/nonexistent/flakery-ca.pem";
        for (bad, says) in [
            ("h:1?secure=yes", "secure=yes is not true or false"),
            ("h:1?secure=true&cafile=x", "unknown parameter 'cafile'"),
            ("h:1?ca=/x.pem", "need secure=true"),
            ("h:1?secure=true&ca=", "ca= names no file"),
            (
                "h:1?secure=true&ca=/x.pem&cert=/c.pem",
                "cert and key go together",
            ),
            (
                "u:secret-pw@h:1/app?secure=true&ca=/nonexistent/flakery%2Dca.pem",
                missing,
            ),
            ("a..b:1?secure=true&ca=/x.pem", "'a..b' is not a host name"),
        ] {
            let err = parse(bad).unwrap_err();
            assert_eq!(err.code(), ErrorCode::InvalidArgument, "{bad}: {err}");
            assert!(err.message().contains(says), "{bad}: {err}");
            assert!(!err.message().contains("secret-pw"), "{err}");
        }
    }

    fn with(credentials: bool, tls: bool) -> Settings {
        let mut s = parse(if credentials {
            "u:secret-pw@h:1"
        } else {
            "h:1"
        })
        .unwrap();
        s.tls = tls.then_some(Tls {
            ca: None,
            identity: None,
        });
        s
    }

    #[test]
    fn the_start_warns_of_credentials_in_clear_without_tls_only() {
        let clear = "travel in clear";
        let none_plain = exposure_warning(&with(false, false)).unwrap();
        assert!(none_plain.contains("without credentials"), "{none_plain}");
        assert!(none_plain.contains(clear), "{none_plain}");
        let none_tls = exposure_warning(&with(false, true)).unwrap();
        assert!(none_tls.contains("without credentials"), "{none_tls}");
        assert!(!none_tls.contains(clear), "{none_tls}");
        let some_plain = exposure_warning(&with(true, false)).unwrap();
        assert!(some_plain.contains(clear), "{some_plain}");
        assert!(!some_plain.contains("secret-pw"), "{some_plain}");
        assert_eq!(exposure_warning(&with(true, true)), None);
    }

    #[test]
    fn a_session_timeout_too_short_to_hold_a_lease_is_refused() {
        for short in [0, 1, MIN_SESSION_TIMEOUT_MS - 1] {
            let err = Settings::parse("h:1", "a", short, &Layout::twitter()).unwrap_err();
            assert_eq!(err.code(), ErrorCode::InvalidArgument);
            assert!(err.message().contains("at least 1000"), "{err}");
        }
        assert!(Settings::parse("h:1", "a", MIN_SESSION_TIMEOUT_MS, &Layout::twitter()).is_ok());
    }
}
