//! `flakery serve`'s settings: each a flag and a `FLAKERY_*` variable (the flag wins).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

/// What `--help` says of the node identity, which comes from the environment as for every
/// flakery generator.
pub const IDENTITY_HELP: &str = "\
Node identity, the first source configured wins:
  --datacenter-id/--worker-id     fixed values
  FLAKERY_ZOOKEEPER=host:2181/chroot   lease from ZooKeeper (FLAKERY_NAMESPACE,
                                  FLAKERY_SESSION_TIMEOUT_MS); ID routes answer 503 and
                                  /readyz 503 while the lease may be lost
  FLAKERY_DATABASE_URL            lease from PostgreSQL/MySQL
  FLAKERY_WORKER_ID, FLAKERY_DATACENTER_ID   fixed by the environment
                                  (FLAKERY_WORKER_ID=hostname-ordinal: the host name's number)
  otherwise                       a host-local lease under FLAKERY_LEASE_DIR (default
                                  /run/lock; inside a container it must be set)
Logs go to stderr (FLAKERY_LOG=info|debug|...); the token is never logged.";

/// `flakery serve`'s flags; each also reads the `FLAKERY_*` variable shown. `Debug` is
/// written by hand: it never shows the token.
#[derive(Args, Clone)]
pub struct ServeArgs {
    /// Address to listen on (HTTP/1.1, h2c and gRPC share it).
    #[arg(long, env = "FLAKERY_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,

    /// Layout spec or preset name (default: twitter).
    #[arg(long, env = "FLAKERY_LAYOUT")]
    pub layout: Option<String>,

    /// Datacenter ID, fixed (give --worker-id too; FLAKERY_DATACENTER_ID alone leases the
    /// worker ID under it instead).
    #[arg(long, value_parser = decimal_u64, allow_hyphen_values = true)]
    pub datacenter_id: Option<u64>,

    /// Worker ID, fixed (FLAKERY_WORKER_ID also takes `hostname-ordinal`).
    #[arg(long, value_parser = decimal_u64, allow_hyphen_values = true)]
    pub worker_id: Option<u64>,

    /// Warn at start (one log line) when the layout has fewer days than this left.
    #[arg(long, env = "FLAKERY_EXHAUSTION_WARNING_DAYS", default_value_t = flakery::layout::DEFAULT_EXHAUSTION_WARNING_DAYS, value_parser = decimal_u64)]
    pub exhaustion_warning_days: u64,

    /// A constant field's value, NAME=VALUE (repeatable; Vesta's version, type, method).
    #[arg(long = "field", value_name = "NAME=VALUE")]
    pub fields: Vec<String>,

    /// What to do when a millisecond's sequence is used up: wait or borrow.
    #[arg(long, env = "FLAKERY_SEQUENCE_POLICY", default_value = "wait")]
    pub sequence_policy: String,

    /// How far ahead of the clock the borrow policy may run, in ms.
    #[arg(long, env = "FLAKERY_MAX_BORROW_MS", default_value_t = 1000, value_parser = decimal_u64)]
    pub max_borrow_ms: u64,

    /// A clock step back up to this long (ms) is waited out; a longer one is an error.
    #[arg(long, env = "FLAKERY_BACKWARDS_TOLERANCE_MS", default_value_t = 1000, value_parser = decimal_u64)]
    pub backwards_tolerance_ms: u64,

    /// Bearer token every route but /healthz, /readyz and gRPC health requires. Prefer the
    /// variable: a flag is visible to other users in the process list.
    #[arg(long, env = "FLAKERY_SERVER_TOKEN", hide_env_values = true)]
    pub token: Option<String>,

    /// Most connections open at once; more are closed as soon as they are accepted.
    #[arg(long, env = "FLAKERY_MAX_CONNECTIONS", default_value_t = 4096, value_parser = decimal_usize)]
    pub max_connections: usize,

    /// Most requests being answered at once; more get 503 with Retry-After.
    #[arg(long, env = "FLAKERY_MAX_IN_FLIGHT", default_value_t = 1024, value_parser = decimal_usize)]
    pub max_in_flight: usize,

    /// Most bytes of answers made but not yet sent, over every connection (each connection may
    /// hold an eighth); past it requests get 503 `overloaded`.
    #[arg(long, env = "FLAKERY_MAX_UNSENT_BYTES", default_value_t = 64 * 1024 * 1024, value_parser = decimal_usize)]
    pub max_unsent_bytes: usize,

    /// Largest request body in bytes (only POST /v1/compose has one).
    #[arg(long, env = "FLAKERY_MAX_BODY_BYTES", default_value_t = 16 * 1024, value_parser = decimal_usize)]
    pub max_body_bytes: usize,

    /// Seconds a client may take to send a request's headers, and a connection may sit idle.
    #[arg(long, env = "FLAKERY_HEADER_TIMEOUT_S", default_value_t = 10, value_parser = seconds)]
    pub header_timeout_s: u64,

    /// Seconds a request may take in all (reading its body included).
    #[arg(long, env = "FLAKERY_REQUEST_TIMEOUT_S", default_value_t = 30, value_parser = seconds)]
    pub request_timeout_s: u64,

    /// Milliseconds the server keeps serving after SIGTERM/SIGINT while /readyz answers 503,
    /// so that load balancers stop sending first: longer than the health check's interval
    /// times its failure count (haproxy `inter 1s fall 2` needs more than 2 s). 0 stops at
    /// once. A second signal ends the delay.
    #[arg(long, env = "FLAKERY_DRAIN_DELAY_MS", default_value_t = 5000, value_parser = milliseconds)]
    pub drain_delay_ms: u64,

    /// Seconds in-flight requests get to finish after the drain delay.
    #[arg(long, env = "FLAKERY_SHUTDOWN_GRACE_S", default_value_t = 30, value_parser = seconds)]
    pub shutdown_grace_s: u64,

    /// Log format: text or json.
    #[arg(long, env = "FLAKERY_LOG_FORMAT", default_value = "text")]
    pub log_format: String,

    /// Serve TLS with this certificate: a PEM file, the server's certificate first, then the
    /// intermediates (give --tls-key too). Re-read on SIGHUP and when it changes.
    #[arg(long, env = "FLAKERY_TLS_CERT", value_name = "PEM")]
    pub tls_cert: Option<PathBuf>,

    /// The private key of --tls-cert (PEM: PKCS#8, PKCS#1 or SEC1, unencrypted).
    #[arg(long, env = "FLAKERY_TLS_KEY", value_name = "PEM")]
    pub tls_key: Option<PathBuf>,

    /// Require a client certificate signed by a CA of this PEM file (mutual TLS): a client
    /// without one is refused during the handshake.
    #[arg(long, env = "FLAKERY_TLS_CLIENT_CA", value_name = "PEM")]
    pub tls_client_ca: Option<PathBuf>,

    /// Seconds between looks at the TLS files: when one has changed (a Secret volume updated
    /// by kubelet, a renewal written in place) they are re-read. 0: only on SIGHUP.
    #[arg(long, env = "FLAKERY_TLS_WATCH_S", default_value_t = 10, value_parser = seconds)]
    pub tls_watch_s: u64,
}

impl std::fmt::Debug for ServeArgs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Every field named, so that a new one cannot be left out (or shown) unawares.
        let ServeArgs {
            listen,
            layout,
            datacenter_id,
            worker_id,
            exhaustion_warning_days,
            fields,
            sequence_policy,
            max_borrow_ms,
            backwards_tolerance_ms,
            token,
            max_connections,
            max_in_flight,
            max_unsent_bytes,
            max_body_bytes,
            header_timeout_s,
            request_timeout_s,
            drain_delay_ms,
            shutdown_grace_s,
            log_format,
            tls_cert,
            tls_key,
            tls_client_ca,
            tls_watch_s,
        } = self;
        f.debug_struct("ServeArgs")
            .field("listen", listen)
            .field("layout", layout)
            .field("datacenter_id", datacenter_id)
            .field("worker_id", worker_id)
            .field("exhaustion_warning_days", exhaustion_warning_days)
            .field("fields", fields)
            .field("sequence_policy", sequence_policy)
            .field("max_borrow_ms", max_borrow_ms)
            .field("backwards_tolerance_ms", backwards_tolerance_ms)
            .field("token", &token.as_ref().map(|_| "<hidden>"))
            .field("max_connections", max_connections)
            .field("max_in_flight", max_in_flight)
            .field("max_unsent_bytes", max_unsent_bytes)
            .field("max_body_bytes", max_body_bytes)
            .field("header_timeout_s", header_timeout_s)
            .field("request_timeout_s", request_timeout_s)
            .field("drain_delay_ms", drain_delay_ms)
            .field("shutdown_grace_s", shutdown_grace_s)
            .field("log_format", log_format)
            .field("tls_cert", tls_cert)
            .field("tls_key", tls_key)
            .field("tls_client_ca", tls_client_ca)
            .field("tls_watch_s", tls_watch_s)
            .finish()
    }
}

/// Unsets each variable of `serve`'s flags that is empty or only white space, as every
/// `FLAKERY_*` variable is unset then (docs/spec.md#decimal-text): clap would take it as given
/// and refuse it (`FLAKERY_MAX_BORROW_MS=`) or read an empty value (`FLAKERY_LAYOUT=`). But
/// `FLAKERY_SERVER_TOKEN`: set but empty, it is refused (`checked_token`), never taken as no
/// token. Call it before the flags are parsed, while the process has one thread.
pub fn unset_empty_variables() {
    let command = <ServeArgs as clap::Args>::augment_args(clap::Command::new("serve"));
    for arg in command.get_arguments() {
        let Some(name) = arg.get_env() else { continue };
        let empty = std::env::var_os(name)
            .is_some_and(|value| value.to_str().is_some_and(|v| v.trim().is_empty()));
        if empty && arg.get_id() != "token" {
            std::env::remove_var(name);
        }
    }
}

/// An integer flag or variable in canonical decimal, read by the core's one parser (clap
/// names the flag; the message says what is wrong with the value).
fn decimal_u64(text: &str) -> Result<u64, String> {
    flakery::decimal::parse_u64("", text).map_err(|e| format!("{}: {}", e.code(), e.message()))
}

/// The longest any duration flag takes: far past any sensible setting, and far from where
/// adding it to the clock overflows (an `Instant` past its range panics).
pub const MAX_DURATION_S: u64 = 24 * 60 * 60;

/// A duration flag in seconds, at most `MAX_DURATION_S`.
fn seconds(text: &str) -> Result<u64, String> {
    at_most(decimal_u64(text)?, MAX_DURATION_S, "s")
}

/// A duration flag in milliseconds, at most `MAX_DURATION_S`.
fn milliseconds(text: &str) -> Result<u64, String> {
    at_most(decimal_u64(text)?, MAX_DURATION_S * 1000, "ms")
}

fn at_most(value: u64, max: u64, unit: &str) -> Result<u64, String> {
    if value > max {
        return Err(format!(
            "invalid_argument: {value} {unit} is longer than the most a duration takes, \
             {max} {unit} (a day)"
        ));
    }
    Ok(value)
}

fn decimal_usize(text: &str) -> Result<usize, String> {
    usize::try_from(decimal_u64(text)?).map_err(|_| format!("'{text}' is too large"))
}

impl ServeArgs {
    pub fn header_timeout(&self) -> Duration {
        Duration::from_secs(self.header_timeout_s.max(1))
    }

    pub fn request_timeout(&self) -> Duration {
        Duration::from_secs(self.request_timeout_s.max(1))
    }

    /// The bearer token, refused when it could never be sent or would guard nothing: empty or
    /// only white space (an `EnvironmentFile` line `FLAKERY_SERVER_TOKEN=`), white space at
    /// either end (HTTP drops it from a header), or control characters.
    pub fn checked_token(&self) -> Result<Option<String>, String> {
        let Some(token) = &self.token else {
            return Ok(None);
        };
        const WHICH: &str = "the server token (FLAKERY_SERVER_TOKEN or --token)";
        if token.trim().is_empty() {
            return Err(format!(
                "invalid_argument: {WHICH} is set but empty: set it to a secret, or unset it \
                 to serve without one"
            ));
        }
        if token.trim() != token || token.chars().any(char::is_control) {
            return Err(format!(
                "invalid_argument: {WHICH} has white space at an end or a control character: \
                 an Authorization header cannot carry it"
            ));
        }
        Ok(Some(token.clone()))
    }

    /// The TLS files: a certificate and a key, both or neither; a client CA only with them.
    pub fn tls_files(&self) -> Result<Option<crate::tls::TlsFiles>, String> {
        match (&self.tls_cert, &self.tls_key) {
            (Some(cert), Some(key)) => Ok(Some(crate::tls::TlsFiles {
                cert: cert.clone(),
                key: key.clone(),
                client_ca: self.tls_client_ca.clone(),
            })),
            (None, None) if self.tls_client_ca.is_some() => Err(
                "invalid_argument: --tls-client-ca (FLAKERY_TLS_CLIENT_CA) needs --tls-cert and \
                 --tls-key: client certificates are checked in a TLS handshake"
                    .into(),
            ),
            (None, None) => Ok(None),
            _ => Err("invalid_argument: give both --tls-cert and --tls-key \
                 (FLAKERY_TLS_CERT, FLAKERY_TLS_KEY), or neither"
                .into()),
        }
    }

    /// None when the files are only re-read on SIGHUP.
    pub fn tls_watch(&self) -> Option<Duration> {
        (self.tls_watch_s > 0).then(|| Duration::from_secs(self.tls_watch_s))
    }

    pub fn drain_delay(&self) -> Duration {
        Duration::from_millis(self.drain_delay_ms)
    }

    pub fn shutdown_grace(&self) -> Duration {
        Duration::from_secs(self.shutdown_grace_s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{CommandFactory, Parser};
    use flakery::decimal::{is_canonical_integer, REFUSED_EXAMPLES};
    use flakery::option_table::OPTIONS;

    #[derive(Parser)]
    struct Serve {
        #[command(flatten)]
        args: ServeArgs,
    }

    fn parse(args: &[&str]) -> Result<ServeArgs, clap::Error> {
        Serve::try_parse_from(std::iter::once("serve").chain(args.iter().copied()))
            .map(|serve| serve.args)
    }

    /// The flags that take integers: those of the table's integer options, and every other
    /// whose default is an integer.
    fn integer_flags() -> Vec<(String, Option<String>)> {
        let command = Serve::command();
        let flags: Vec<_> = command
            .get_arguments()
            .filter(|arg| {
                let table = OPTIONS
                    .iter()
                    .any(|o| o.kind.is_integer() && o.server == arg.get_long());
                let defaults = arg.get_default_values();
                table
                    || (!defaults.is_empty()
                        && defaults
                            .iter()
                            .all(|d| is_canonical_integer(&d.to_string_lossy())))
            })
            .map(|arg| {
                let env = arg.get_env().map(|e| e.to_string_lossy().into_owned());
                (arg.get_long().unwrap_or_default().to_string(), env)
            })
            .collect();
        assert!(flags.len() >= 12, "{flags:?}");
        flags
    }

    /// Every integer flag and its variable refuse what the core's decimal parser refuses (two
    /// once took `+3`: `--max-unsent-bytes` and `--exhaustion-warning-days`, read by Rust's
    /// `FromStr`), and an empty variable is unset (it was refused). One test sets the
    /// variables, one at a time: no other test of this crate parses the flags.
    #[test]
    fn every_integer_flag_and_variable_is_canonical_decimal() {
        for (flag, env) in integer_flags() {
            assert!(parse(&[&format!("--{flag}=7")]).is_ok(), "--{flag}");
            for bad in REFUSED_EXAMPLES {
                assert!(
                    parse(&[&format!("--{flag}={bad}")]).is_err(),
                    "--{flag}={bad:?} was taken"
                );
                let Some(env) = &env else { continue };
                std::env::set_var(env, bad);
                unset_empty_variables();
                let result = parse(&[]);
                std::env::remove_var(env);
                // An empty variable is unset, as every FLAKERY_* variable is.
                if bad.is_empty() {
                    assert!(result.is_ok(), "{env}={bad:?} was not unset");
                } else {
                    assert!(result.is_err(), "{env}={bad:?} was taken");
                }
            }
        }
    }

    /// Every duration flag takes up to a day and refuses more, naming the flag and the most
    /// (u64::MAX seconds was taken and panicked the server at its first connection: the
    /// clock plus it overflows).
    #[test]
    fn every_duration_flag_is_at_most_a_day() {
        let durations = [
            ("header-timeout-s", MAX_DURATION_S),
            ("request-timeout-s", MAX_DURATION_S),
            ("shutdown-grace-s", MAX_DURATION_S),
            ("tls-watch-s", MAX_DURATION_S),
            ("drain-delay-ms", MAX_DURATION_S * 1000),
        ];
        for (flag, max) in durations {
            assert!(
                parse(&[&format!("--{flag}={max}")]).is_ok(),
                "--{flag}={max}"
            );
            for bad in [max + 1, u64::MAX] {
                let error = parse(&[&format!("--{flag}={bad}")])
                    .err()
                    .unwrap_or_else(|| panic!("--{flag}={bad} was taken"))
                    .to_string();
                assert!(
                    error.contains(&format!("--{flag}")) && error.contains(&max.to_string()),
                    "{error}"
                );
            }
        }
        // Each flag whose name is a duration is in the list above.
        let named = Serve::command()
            .get_arguments()
            .filter_map(|arg| arg.get_long())
            .filter(|long| long.ends_with("-s") || long.ends_with("-ms"))
            .filter(|long| !["max-borrow-ms", "backwards-tolerance-ms"].contains(long))
            .count();
        assert_eq!(named, durations.len());
    }

    /// The generator's options among the flags are the table's: the flag, the variable, the
    /// default.
    #[test]
    fn the_generator_flags_are_the_tables() {
        let command = Serve::command();
        for option in OPTIONS {
            let arg = command
                .get_arguments()
                .find(|arg| arg.get_id().as_str() == option.rust);
            let Some(flag) = option.server else {
                assert!(arg.is_none(), "--{} is not in the table", option.rust);
                continue;
            };
            let arg = arg.unwrap_or_else(|| panic!("no flag for {}", option.rust));
            assert_eq!(arg.get_long(), Some(flag));
            let env = arg.get_env().map(|e| e.to_string_lossy().into_owned());
            // clap reads the variable only `serve` has; the core reads the others (clap may
            // read `FLAKERY_LAYOUT` too: the same variable).
            match option.server_env {
                Some(server_env) => assert_eq!(env.as_deref(), Some(server_env), "{flag}"),
                None => assert!(env.is_none() || env.as_deref() == option.env, "{flag}"),
            }
            let default: Vec<_> = arg
                .get_default_values()
                .iter()
                .map(|d| d.to_string_lossy().into_owned())
                .collect();
            assert_eq!(
                default.first().map(String::as_str),
                option.default,
                "{flag}"
            );
        }
    }
}
