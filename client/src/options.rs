//! A client's settings, each checked once when the client is built: the servers, the token
//! (from the option, else `FLAKERY_SERVER_TOKEN`, the variable `flakery serve` reads), the
//! layout, the ages, the deadlines, the block sizes, the fallback generator. Their names,
//! variables, ranges and defaults are the core's table (`flakery::option_table::client`).

use std::fmt;
use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use flakery::option_table::{self as table, ClientOptionSpec};
use flakery::{Error, Generator, Layout, Result};

use crate::tls::{Connector, TlsFiles};

/// The variable of the servers' URLs (comma-separated) when none are given.
pub const SERVERS_ENV: &str = match table::SERVERS.env {
    Some(env) => env,
    None => panic!("the servers have a variable"),
};
/// The variable of the token when none is given: the one `flakery serve` reads.
pub const TOKEN_ENV: &str = match table::TOKEN.env {
    Some(env) => env,
    None => panic!("the token has a variable"),
};
/// The most IDs one request may ask for: the server's batch limit (`/v1/ids`, 100000).
pub const MAX_BLOCK: usize = table::MAX_BLOCK_SIZE as usize;

/// The table's default of an integer option (a table test holds each to be one).
fn default_of(spec: &ClientOptionSpec) -> u64 {
    spec.default_u64().unwrap_or_default()
}

/// What a `Client` is built from; `Client::builder()` sets it field by field.
#[derive(Clone)]
pub struct Options {
    /// Base URLs, `http://host:port` or `https://host:port` (a path prefix allowed). At
    /// least one.
    pub servers: Vec<String>,
    /// The bearer token; `None`: `FLAKERY_SERVER_TOKEN`, else none.
    pub token: Option<String>,
    /// The servers' layout, for `decode` and checked against each server's `/v1/layout`;
    /// `None`: `FLAKERY_LAYOUT`, else twitter.
    pub layout: Option<Layout>,
    /// An ID held longer than this is dropped, never handed out.
    pub max_age: Duration,
    /// Every call returns or fails within this; a batch within this plus the time its count
    /// takes at the layout's rate.
    pub timeout: Duration,
    /// One request to one server may take this long before the next server is tried.
    pub request_timeout: Duration,
    /// The smallest and largest block asked for (the size adapts between them).
    pub min_block: usize,
    pub max_block: usize,
    /// Ask for the next block in the background when half the current one is used (a whole
    /// block ahead when blocks of the largest size go faster than two round trips).
    pub prefetch: bool,
    /// A generator of its own node ID to use when every server is unavailable.
    pub fallback: Option<Arc<Generator>>,
    /// Ask the servers in the order given, the first one first (a local server before remote
    /// ones), instead of starting each process at a server of its own to spread the load.
    pub prefer_first: bool,
    /// The CAs (PEM) an `https://` server's certificate must be signed by; `None`:
    /// `FLAKERY_SERVER_CA`, else the system's roots.
    pub server_ca: Option<PathBuf>,
    /// The certificate (PEM, with its chain) for a server that asks for one (mutual TLS);
    /// `None`: `FLAKERY_CLIENT_CERT`, else none.
    pub client_cert: Option<PathBuf>,
    /// Its private key (PEM); `None`: `FLAKERY_CLIENT_KEY`. Only the path is ever shown.
    pub client_key: Option<PathBuf>,
    /// Send the token over `http://` to a host that is not loopback, readable by anyone on
    /// the path; without it such a client is refused when built.
    pub send_token_in_clear: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            servers: Vec::new(),
            token: None,
            layout: None,
            max_age: Duration::from_millis(default_of(&table::MAX_AGE)),
            timeout: Duration::from_millis(default_of(&table::TIMEOUT)),
            request_timeout: Duration::from_millis(default_of(&table::REQUEST_TIMEOUT)),
            min_block: default_of(&table::MIN_BLOCK) as usize,
            max_block: default_of(&table::MAX_BLOCK) as usize,
            prefetch: table::PREFETCH.default == Some("true"),
            fallback: None,
            prefer_first: table::PREFER_FIRST.default == Some("true"),
            server_ca: None,
            client_cert: None,
            client_key: None,
            send_token_in_clear: table::SEND_TOKEN_IN_CLEAR.default == Some("true"),
        }
    }
}

/// Written by hand: the token is never shown.
impl fmt::Debug for Options {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Options")
            .field("servers", &self.servers)
            .field("token", &self.token.as_ref().map(|_| "<hidden>"))
            .field("layout", &self.layout.as_ref().map(Layout::to_string))
            .field("max_age", &self.max_age)
            .field("timeout", &self.timeout)
            .field("request_timeout", &self.request_timeout)
            .field("min_block", &self.min_block)
            .field("max_block", &self.max_block)
            .field("prefetch", &self.prefetch)
            .field("fallback", &self.fallback)
            .field("prefer_first", &self.prefer_first)
            .field("server_ca", &self.server_ca)
            .field("client_cert", &self.client_cert)
            .field("client_key", &self.client_key)
            .field("send_token_in_clear", &self.send_token_in_clear)
            .finish()
    }
}

/// The settings a client runs with: what the options left to the environment resolved, and
/// the options themselves, checked.
pub(crate) struct Settings {
    pub servers: Vec<String>,
    /// `Bearer <token>`.
    pub authorization: Option<String>,
    pub layout: Layout,
    pub max_age_ms: u64,
    pub timeout_ms: u64,
    /// The TLS configuration, when a server is `https://` or a TLS option is given.
    pub tls: Option<Arc<Connector>>,
    /// The options as given, each in its range; `request_timeout` at most `timeout`, and no
    /// token (it is in `authorization`).
    pub given: Options,
}

impl Settings {
    pub fn resolve(options: Options) -> Result<Settings> {
        let mut servers = options.servers;
        if servers.is_empty() {
            if let Some(list) = flakery::options::env_var(SERVERS_ENV)? {
                servers = split_servers(&list);
            }
        }
        if servers.is_empty() {
            return Err(Error::invalid_argument(format!(
                "no server given: pass one or more URLs (http://host:port) or set {SERVERS_ENV}"
            )));
        }
        let servers = servers
            .iter()
            .map(|s| server_url(s))
            .collect::<Result<Vec<_>>>()?;
        let token = match options.token {
            Some(token) => Some(token),
            None => flakery::options::env_var(TOKEN_ENV)?,
        };
        if token.is_some() && !options.send_token_in_clear {
            if let Some(server) = servers.iter().find(|s| in_clear_off_host(s)) {
                return Err(Error::invalid_argument(format!(
                    "{}: the token would cross the network in clear to {server}: use \
                     https://, or set {} if the path to it is trusted",
                    table::SEND_TOKEN_IN_CLEAR.rust,
                    table::SEND_TOKEN_IN_CLEAR.rust
                ))
                .about(table::SEND_TOKEN_IN_CLEAR.rust));
            }
        }
        let tls = Connector::new(
            &TlsFiles {
                server_ca: options.server_ca.clone(),
                client_cert: options.client_cert.clone(),
                client_key: options.client_key.clone(),
            },
            servers.iter().any(|s| s.starts_with("https://")),
        )?;
        let layout = flakery::Options {
            layout: options.layout.clone(),
            ..flakery::Options::default()
        }
        .resolved_layout()?;
        // A fallback of another layout would make IDs that `decode` misreads and that may
        // equal the servers' (its node bits sit elsewhere): refused, never mixed in.
        if let Some(fallback) = &options.fallback {
            if *fallback.layout() != layout {
                return Err(Error::invalid_argument(format!(
                    "{}: the fallback generator's layout ({}) is not the servers' ({layout}); \
                     build it with the servers' layout and a node ID of its own",
                    table::FALLBACK.rust,
                    fallback.layout()
                ))
                .about(table::FALLBACK.rust));
            }
        }
        let max_age_ms = table::MAX_AGE.duration_ms(options.max_age)?;
        let timeout_ms = table::TIMEOUT.duration_ms(options.timeout)?;
        table::REQUEST_TIMEOUT.duration_ms(options.request_timeout)?;
        if !(1..=MAX_BLOCK).contains(&options.min_block)
            || !(options.min_block..=MAX_BLOCK).contains(&options.max_block)
        {
            return Err(Error::invalid_argument(format!(
                "min_block {} and max_block {} must be 1 <= min_block <= max_block <= {MAX_BLOCK}",
                options.min_block, options.max_block
            )));
        }
        Ok(Settings {
            servers,
            authorization: token.map(|t| checked_token(&t)).transpose()?,
            layout,
            max_age_ms,
            timeout_ms,
            tls,
            given: Options {
                servers: Vec::new(),
                token: None,
                request_timeout: options.request_timeout.min(options.timeout),
                ..options
            },
        })
    }
}

/// URLs given as one string: comma-separated, spaces around each ignored.
pub fn split_servers(list: &str) -> Vec<String> {
    list.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

/// `http[s]://host[:port][/prefix]` without a trailing slash. Credentials in the URL are
/// refused (they would show in every error that names the server): the token is an option.
fn server_url(text: &str) -> Result<String> {
    let refuse = |why: &str| {
        Err(Error::invalid_argument(format!(
            "server URL '{}' {why}",
            text.escape_debug()
        )))
    };
    let Some(rest) = text
        .strip_prefix("http://")
        .or_else(|| text.strip_prefix("https://"))
    else {
        return refuse("is not http://host:port or https://host:port");
    };
    let authority = rest.split('/').next().unwrap_or_default();
    if let Some((_, host)) = authority.rsplit_once('@') {
        // Not `refuse`: the message must not show the credentials.
        return Err(Error::invalid_argument(format!(
            "server URL '…@{}' has credentials in it: give the token as the token \
             option or {TOKEN_ENV}",
            host.escape_debug()
        )));
    }
    if authority.is_empty() || authority.starts_with(':') {
        return refuse("has no host");
    }
    if text.chars().any(|c| c.is_whitespace() || c.is_control()) || text.contains(['?', '#']) {
        return refuse("has white space, a control character, a query or a fragment");
    }
    Ok(text.trim_end_matches('/').to_string())
}

/// Whether `url` (checked by `server_url`) is `http://` to a host that is not loopback:
/// 127.0.0.0/8, ::1 or `localhost` (which resolves to loopback, RFC 6761).
fn in_clear_off_host(url: &str) -> bool {
    let Some(rest) = url.strip_prefix("http://") else {
        return false;
    };
    let authority = rest.split('/').next().unwrap_or_default();
    let host = match authority.strip_prefix('[') {
        Some(bracketed) => bracketed.split(']').next().unwrap_or_default(),
        None => authority
            .rsplit_once(':')
            .map_or(authority, |(host, _)| host),
    };
    let loopback = host.eq_ignore_ascii_case("localhost")
        || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback());
    !loopback
}

/// The header value for a token an HTTP header can carry.
fn checked_token(token: &str) -> Result<String> {
    if token.trim().is_empty() || token.trim() != token || token.chars().any(char::is_control) {
        return Err(Error::invalid_argument(format!(
            "the token (the token option or {TOKEN_ENV}) is empty, has white space at an end or \
             a control character: an Authorization header cannot carry it"
        )));
    }
    Ok(format!("Bearer {token}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(servers: &[&str]) -> Result<Settings> {
        Settings::resolve(Options {
            servers: servers.iter().map(|s| s.to_string()).collect(),
            token: Some("s3cret".into()),
            send_token_in_clear: true,
            ..Options::default()
        })
    }

    #[test]
    fn urls_are_http_or_https_without_credentials() {
        let s = settings(&["http://127.0.0.1:8080/", "http://ids.internal/prefix"]).unwrap();
        assert_eq!(
            s.servers,
            ["http://127.0.0.1:8080", "http://ids.internal/prefix"]
        );
        for bad in [
            "ftp://a:1",
            "https://user:pw@a:1",
            "127.0.0.1:8080",
            "http://user:pw@a:1",
            "http://",
            "http://:80",
            "http://a:1/?x=1",
            "http://a b",
        ] {
            let e = settings(&[bad])
                .err()
                .unwrap_or_else(|| panic!("{bad} taken"));
            assert_eq!(e.code().as_str(), "invalid_argument", "{bad}");
            assert!(!e.message().contains("pw@"), "{e}");
        }
        assert_eq!(
            split_servers(" http://a:1, ,http://b:2 "),
            ["http://a:1", "http://b:2"]
        );
    }

    #[test]
    fn the_token_is_never_shown() {
        let options = Options {
            servers: vec!["http://127.0.0.1:1".into()],
            token: Some("s3cret".into()),
            ..Options::default()
        };
        let shown = format!("{options:?}");
        assert!(!shown.contains("s3cret"), "{shown}");
        assert!(shown.contains("<hidden>"), "{shown}");
        for bad in [" s3cret", "s3cret\n", "", "a\u{7}b"] {
            let e = Settings::resolve(Options {
                token: Some(bad.into()),
                ..options.clone()
            })
            .err()
            .unwrap();
            assert!(
                !bad.trim().is_empty() && !e.message().contains(bad.trim())
                    || bad.trim().is_empty(),
                "{e}"
            );
        }
        let s = Settings::resolve(options).unwrap();
        assert_eq!(s.authorization.as_deref(), Some("Bearer s3cret"));
    }

    #[test]
    fn a_token_is_refused_in_clear_off_the_host() {
        let with = |servers: &[&str], token: Option<&str>, in_clear: bool| {
            Settings::resolve(Options {
                servers: servers.iter().map(|s| s.to_string()).collect(),
                token: token.map(String::from),
                send_token_in_clear: in_clear,
                ..Options::default()
            })
        };
        for off_host in [
            "http://10.0.0.1:8080",
            "http://ids.internal",
            "http://[2001:db8::1]:80",
            "http://128.0.0.1:1",
            "http://127.0.0.1.nip.io:1",
            "http://localhost.example:1",
        ] {
            let e = with(&["http://127.0.0.1:1", off_host], Some("s3cret"), false)
                .err()
                .unwrap_or_else(|| panic!("{off_host} taken"));
            assert_eq!(e.code().as_str(), "invalid_argument", "{e}");
            assert_eq!(e.option(), Some("send_token_in_clear"), "{e}");
            assert!(e.message().contains(off_host), "{e}");
            assert!(!e.message().contains("s3cret"), "{e}");
            assert!(
                with(&[off_host], Some("s3cret"), true).is_ok(),
                "{off_host}"
            );
            assert!(with(&[off_host], None, false).is_ok(), "{off_host}");
        }
        for loopback in [
            "http://127.0.0.1:1",
            "http://127.9.9.9:1/p",
            "http://[::1]:1",
            "http://localhost:1",
            "http://LOCALHOST",
        ] {
            assert!(
                with(&[loopback], Some("s3cret"), false).is_ok(),
                "{loopback}"
            );
        }
    }

    #[test]
    fn the_defaults_are_the_tables() {
        let defaults = Options::default();
        let ms = |d: Duration| Some(d.as_millis().to_string());
        assert_eq!(ms(defaults.max_age).as_deref(), table::MAX_AGE.default);
        assert_eq!(ms(defaults.timeout).as_deref(), table::TIMEOUT.default);
        assert_eq!(
            ms(defaults.request_timeout).as_deref(),
            table::REQUEST_TIMEOUT.default
        );
        let n = |n: usize| Some(n.to_string());
        assert_eq!(n(defaults.min_block).as_deref(), table::MIN_BLOCK.default);
        assert_eq!(n(defaults.max_block).as_deref(), table::MAX_BLOCK.default);
        let flag = |b: bool| Some(b.to_string());
        assert_eq!(flag(defaults.prefetch).as_deref(), table::PREFETCH.default);
        assert_eq!(
            flag(defaults.prefer_first).as_deref(),
            table::PREFER_FIRST.default
        );
        assert_eq!(
            flag(defaults.send_token_in_clear).as_deref(),
            table::SEND_TOKEN_IN_CLEAR.default
        );
        assert_eq!(Some(SERVERS_ENV), table::SERVERS.env);
        assert_eq!(Some(TOKEN_ENV), table::TOKEN.env);
    }

    #[test]
    fn messages_name_each_option_as_each_surface_spells_it() {
        let e = Settings::resolve(Options {
            servers: vec!["http://a:1".into()],
            request_timeout: Duration::ZERO,
            ..Options::default()
        })
        .err()
        .unwrap();
        assert!(
            e.message().starts_with("request_timeout must be from 1 ms"),
            "{e}"
        );
        for (surface, name) in [
            (table::Surface::Node, "requestTimeoutMs "),
            (table::Surface::C, "request_timeout_ms "),
            (table::Surface::Go, "RequestTimeout "),
        ] {
            let shown = table::message_on(&e, surface);
            assert!(shown.starts_with(name), "{surface:?}: {shown}");
        }
    }

    #[test]
    fn limits_are_checked() {
        let base = Options {
            servers: vec!["http://a:1".into()],
            ..Options::default()
        };
        for bad in [
            Options {
                min_block: 0,
                ..base.clone()
            },
            Options {
                min_block: 20,
                max_block: 10,
                ..base.clone()
            },
            Options {
                max_block: MAX_BLOCK + 1,
                ..base.clone()
            },
            Options {
                max_age: Duration::ZERO,
                ..base.clone()
            },
            Options {
                timeout: Duration::from_micros(10),
                ..base.clone()
            },
        ] {
            assert!(Settings::resolve(bad).is_err());
        }
        let s = Settings::resolve(Options {
            request_timeout: Duration::from_secs(9),
            ..base
        })
        .unwrap();
        assert_eq!(
            s.given.request_timeout,
            Duration::from_secs(5),
            "never past the call's deadline"
        );
    }

    #[test]
    fn a_fallback_of_another_layout_is_refused() {
        let fallback = |spec: &str| {
            Arc::new(
                Generator::builder()
                    .layout_spec(spec)
                    .unwrap()
                    .datacenter_id(31)
                    .worker_id(1)
                    .build()
                    .unwrap(),
            )
        };
        let options = |layout: &str, generator: &str| Options {
            servers: vec!["http://a:1".into()],
            layout: Some(Layout::parse(layout).unwrap()),
            fallback: Some(fallback(generator)),
            ..Options::default()
        };
        let e = Settings::resolve(options("twitter", "discord"))
            .err()
            .expect("a discord fallback for twitter servers");
        assert_eq!(e.code().as_str(), "invalid_argument", "{e}");
        assert_eq!(e.option(), Some(table::FALLBACK.rust), "{e}");
        assert!(e.message().contains("servers' layout"), "{e}");
        assert!(Settings::resolve(options("twitter", "twitter")).is_ok());
    }
}
