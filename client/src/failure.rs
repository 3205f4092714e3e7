//! Why a server gave no IDs, and the one error a call fails with when none did: it names each
//! server and what went wrong with it (never the token), under the code they share.

use flakery::{Error, ErrorCode};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Refused, timed out, cut off, 5xx or 503 (not ready, draining, overloaded).
    Unavailable,
    /// 401: the token is missing or wrong.
    Unauthorized,
    /// Not a batch of IDs, or another layout: not a flakery server, or not this client's.
    BadAnswer,
    /// The TLS handshake failed: the server's certificate, or the server's refusal of ours.
    Tls,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub kind: Kind,
    pub reason: String,
}

impl Failure {
    pub fn unavailable(reason: impl Into<String>) -> Self {
        Failure {
            kind: Kind::Unavailable,
            reason: reason.into(),
        }
    }

    pub fn unauthorized(reason: impl Into<String>) -> Self {
        Failure {
            kind: Kind::Unauthorized,
            reason: reason.into(),
        }
    }

    pub fn tls(reason: impl Into<String>) -> Self {
        Failure {
            kind: Kind::Tls,
            reason: reason.into(),
        }
    }

    pub fn bad_answer(reason: impl Into<String>) -> Self {
        Failure {
            kind: Kind::BadAnswer,
            reason: reason.into(),
        }
    }
}

/// The error of a call that got no IDs: `servers[i]` with `failures` of each (`None`: no
/// answer yet), and why the call stopped waiting.
pub fn error<'a>(
    servers: &[String],
    failures: impl Iterator<Item = (usize, Option<&'a Failure>)>,
    why: &str,
) -> Error {
    let mut kinds = Vec::new();
    let mut parts = Vec::new();
    for (i, failure) in failures {
        let server = servers.get(i).map_or("?", String::as_str);
        match failure {
            Some(failure) => {
                kinds.push(Some(failure.kind));
                parts.push(format!("{server}: {}", failure.reason));
            }
            None => {
                kinds.push(None);
                parts.push(format!("{server}: no answer yet"));
            }
        }
    }
    let code = match kinds.first() {
        Some(&Some(first)) if kinds.iter().all(|k| *k == Some(first)) => match first {
            Kind::Unavailable => ErrorCode::ServersUnavailable,
            Kind::Unauthorized => ErrorCode::Unauthorized,
            Kind::BadAnswer => ErrorCode::BadAnswer,
            Kind::Tls => ErrorCode::TlsFailed,
        },
        _ => ErrorCode::ServersUnavailable,
    };
    let advice = match code {
        ErrorCode::Unauthorized => {
            "set the servers' token (FLAKERY_SERVER_TOKEN or the token option)"
        }
        ErrorCode::BadAnswer => "check that each URL is a flakery server with this layout",
        ErrorCode::TlsFailed => {
            "check the servers' CA (server_ca, FLAKERY_SERVER_CA), the host names of the URLs \
             and the client certificate (client_cert, client_key)"
        }
        _ => "check that the servers run and are ready (/readyz), or configure a fallback",
    };
    Error::new(
        code,
        format!(
            "no IDs from any server {why} ({}): {advice}",
            parts.join("; ")
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_code_is_the_one_every_server_shares() {
        let servers = vec!["http://a".to_string(), "http://b".to_string()];
        let denied = Failure::unauthorized("401 unauthorized");
        let down = Failure::unavailable("connection refused");
        let both = [Some(&denied), Some(&denied)];
        let e = error(&servers, both.into_iter().enumerate(), "within 5000 ms");
        assert_eq!(e.code(), ErrorCode::Unauthorized);
        assert!(e.message().contains("http://a: 401 unauthorized"), "{e}");
        let mixed = [Some(&denied), Some(&down)];
        let e = error(&servers, mixed.into_iter().enumerate(), "now");
        assert_eq!(e.code(), ErrorCode::ServersUnavailable);
        let unasked = [Some(&denied), None];
        let e = error(&servers, unasked.into_iter().enumerate(), "now");
        assert_eq!(e.code(), ErrorCode::ServersUnavailable);
        assert!(e.message().contains("http://b: no answer yet"), "{e}");
    }
}
