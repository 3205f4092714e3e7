//! Middleware every request passes: the size of its head, the bearer token, the bound on
//! requests in flight, the request deadline, the per-route metrics; and on the way out, every
//! refusal in the error shape and every answer's bytes counted until sent (`budget`).

use std::sync::Arc;
use std::time::Instant;

use axum::body::Body;
use axum::extract::{MatchedPath, Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body::Body as _;
use tokio::sync::Semaphore;

use crate::budget::{Attached, Conn, MeteredBody};
use crate::error::{ApiError, Shaped};
use crate::ids::Ids;

/// The longest path and query a request may have (414 `uri_too_long`).
const MAX_URI_BYTES: usize = 8 * 1024;

/// The largest request head (path, query and headers; 431 `headers_too_large`). The transport
/// reads up to twice this before it gives up on a request without an answer of this shape.
pub const MAX_HEAD_BYTES: usize = 16 * 1024;

pub struct Guard {
    pub ids: Arc<Ids>,
    pub token: Option<String>,
    pub in_flight: Arc<Semaphore>,
    pub request_timeout: std::time::Duration,
}

/// Routes a load balancer or orchestrator probes without credentials.
fn is_health_check(path: &str) -> bool {
    matches!(path, "/healthz" | "/readyz") || path.starts_with("/grpc.health.v1.Health/")
}

fn is_grpc(request: &Request) -> bool {
    request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/grpc"))
}

/// Compares in time independent of where the first difference is.
fn same_secret(given: &[u8], expected: &[u8]) -> bool {
    let mut diff = given.len() ^ expected.len();
    for (i, b) in expected.iter().enumerate() {
        diff |= usize::from(given.get(i).copied().unwrap_or(0) ^ b);
    }
    diff == 0
}

/// The credentials of `Authorization: Bearer <credentials>` (the scheme in any case).
fn bearer(value: &[u8]) -> Option<&[u8]> {
    let space = value.iter().position(|b| *b == b' ')?;
    let (scheme, rest) = value.split_at(space);
    scheme
        .eq_ignore_ascii_case(b"bearer")
        .then(|| rest.trim_ascii_start())
}

/// Nothing after `Bearer ` is never a token: the server refuses to start with an empty one.
fn authorized(request: &Request, token: &str) -> bool {
    request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| bearer(v.as_bytes()))
        .is_some_and(|given| !given.is_empty() && same_secret(given, token.as_bytes()))
}

fn head_within_bounds(request: &Request) -> Result<(), ApiError> {
    let uri = request
        .uri()
        .path_and_query()
        .map_or(0, |p| p.as_str().len());
    if uri > MAX_URI_BYTES {
        return Err(ApiError::for_status(
            StatusCode::URI_TOO_LONG,
            format!("the path and query are over {MAX_URI_BYTES} bytes"),
        ));
    }
    let headers: usize = request
        .headers()
        .iter()
        .map(|(name, value)| name.as_str().len() + value.len() + 4)
        .sum();
    if uri + headers > MAX_HEAD_BYTES {
        return Err(ApiError::for_status(
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            format!("the request's path and headers are over {MAX_HEAD_BYTES} bytes"),
        ));
    }
    Ok(())
}

/// The Vesta and Leaf drop-in routes answer their own errors in their own form.
fn is_compat_route(matched: &str) -> bool {
    matches!(
        matched,
        "/genid"
            | "/expid"
            | "/makeid"
            | "/transtime"
            | "/api/snowflake/get/:key"
            | "/decodeSnowflakeId"
    )
}

/// A refusal the framework answered itself (an empty 405, a plain-text rejection) in the
/// error shape, with a code that says what it is.
async fn shaped(response: Response, compat_route: bool) -> Response {
    let status = response.status();
    if status.as_u16() < 400 || response.extensions().get::<Shaped>().is_some() {
        return response;
    }
    let empty = response.body().size_hint().exact() == Some(0);
    let plain = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/plain"));
    if !(empty || plain && !compat_route) {
        return response;
    }
    let (parts, body) = response.into_parts();
    let text = axum::body::to_bytes(body, 4096).await.unwrap_or_default();
    let text = String::from_utf8_lossy(&text);
    let message = match text.trim() {
        "" if status == StatusCode::METHOD_NOT_ALLOWED => {
            "this route does not answer that method (see the Allow header)".to_string()
        }
        "" => status
            .canonical_reason()
            .unwrap_or("refused")
            .to_lowercase(),
        text => text.to_string(),
    };
    let mut shaped = ApiError::for_status(status, message).into_response();
    if let Some(allow) = parts.headers.get(header::ALLOW) {
        shaped.headers_mut().insert(header::ALLOW, allow.clone());
    }
    shaped
}

/// Counts the answer's bytes until they are written: the reservation its handler made, or
/// its size now. A small answer past the budget is refused like a large one; refusals and
/// health checks are counted without a limit (they are small, and must get through).
fn metered(request_kind: Kind, conn: &Arc<Conn>, response: Response) -> Response {
    let attached = response
        .extensions()
        .get::<Attached>()
        .and_then(Attached::take);
    let bytes = response.body().size_hint().lower() as usize;
    let (response, reservation) = match attached {
        Some(reservation) => (response, reservation),
        None if request_kind.health || response.status().as_u16() >= 400 => {
            (response, conn.force(bytes))
        }
        None => match conn.reserve(bytes) {
            Ok(reservation) => (response, reservation),
            Err(error) => {
                let refusal = refuse(request_kind.grpc, error);
                let bytes = refusal.body().size_hint().lower() as usize;
                (refusal, conn.force(bytes))
            }
        },
    };
    let (parts, body) = response.into_parts();
    Response::from_parts(parts, Body::new(MeteredBody::new(body, reservation)))
}

#[derive(Clone, Copy)]
struct Kind {
    grpc: bool,
    health: bool,
    compat: bool,
    /// Leaf's `/decodeSnowflakeId` joins a repeated parameter's values as Spring does
    /// (docs/server.md#leaf); every other route refuses a repeated parameter.
    joins_repeated: bool,
}

/// A gRPC client reads its status from trailers-only responses, not from the HTTP status.
fn grpc_error(error: &ApiError) -> Response {
    let status = error.grpc_status();
    let mut response = StatusCode::OK.into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/grpc"),
    );
    headers.insert("grpc-status", HeaderValue::from(status.code() as i32));
    if let Ok(message) = HeaderValue::from_str(status.message()) {
        headers.insert("grpc-message", message);
    }
    response
}

fn refuse(grpc: bool, error: ApiError) -> Response {
    if grpc {
        grpc_error(&error)
    } else {
        error.into_response()
    }
}

pub async fn guard(State(guard): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    let started = Instant::now();
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or("unmatched", |path| {
            route_label(path.as_str(), request.uri().path())
        })
        .to_owned();
    let kind = Kind {
        grpc: is_grpc(&request),
        health: is_health_check(request.uri().path()),
        compat: is_compat_route(&route),
        joins_repeated: route == "/decodeSnowflakeId",
    };
    let conn = request.extensions().get::<Arc<Conn>>().cloned();
    let mut response = answer(&guard, kind, request, next).await;
    if !kind.grpc {
        response = shaped(response, kind.compat).await;
    }
    if let Some(conn) = conn {
        response = metered(kind, &conn, response);
    }
    let metrics = &guard.ids.metrics;
    if !kind.health {
        crate::unavailable::count(metrics, &response);
    }
    metrics
        .requests
        .with_label_values(&[&route, response.status().as_str()])
        .inc();
    metrics
        .latency
        .with_label_values(&[&route])
        .observe(started.elapsed().as_secs_f64());
    response
}

/// The route as a bounded label: a gRPC method's own path when it is one of ours.
fn route_label<'a>(matched: &'a str, path: &'a str) -> &'a str {
    const GRPC_METHODS: [&str; 6] = [
        "/flakery.v1.Ids/NextId",
        "/flakery.v1.Ids/NextIds",
        "/flakery.v1.Ids/StreamIds",
        "/flakery.v1.Ids/Decode",
        "/grpc.health.v1.Health/Check",
        "/grpc.health.v1.Health/Watch",
    ];
    GRPC_METHODS
        .iter()
        .find(|m| **m == path)
        .copied()
        .unwrap_or(matched)
}

async fn answer(guard: &Guard, kind: Kind, request: Request, next: Next) -> Response {
    if let Err(error) = head_within_bounds(&request) {
        return refuse(kind.grpc, error);
    }
    if let Some(token) = &guard.token {
        if !kind.health && !authorized(&request, token) {
            return refuse(kind.grpc, ApiError::unauthorized());
        }
    }
    if !kind.joins_repeated {
        if let Err(error) = crate::query::refuse_repeated(request.uri()) {
            return refuse(kind.grpc, error);
        }
    }
    let Ok(_permit) = guard.in_flight.try_acquire() else {
        return refuse(
            kind.grpc,
            ApiError::overloaded("too many requests in flight: retry shortly"),
        );
    };
    match tokio::time::timeout(guard.request_timeout, next.run(request)).await {
        Ok(response) => response,
        Err(_) => refuse(
            kind.grpc,
            ApiError::for_status(
                StatusCode::REQUEST_TIMEOUT,
                "the request took too long (a body sent too slowly?)",
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_match_only_when_equal() {
        assert!(same_secret(b"token", b"token"));
        assert!(!same_secret(b"toke", b"token"));
        assert!(!same_secret(b"tokenx", b"token"));
        assert!(!same_secret(b"tokem", b"token"));
        assert!(!same_secret(b"", b"token"));
    }

    #[test]
    fn bearer_credentials_are_what_follows_the_scheme() {
        assert_eq!(bearer(b"Bearer abc"), Some(&b"abc"[..]));
        assert_eq!(bearer(b"bearer  abc"), Some(&b"abc"[..]));
        assert_eq!(
            bearer(b"Bearer "),
            Some(&b""[..]),
            "nothing after it: empty, refused"
        );
        assert_eq!(bearer(b"Bearer"), None);
        assert_eq!(bearer(b"Basic abc"), None);
        assert_eq!(bearer(b"Bearerabc"), None);
    }

    #[test]
    fn route_labels_stay_bounded() {
        let any = "/flakery.v1.Ids/*rest";
        assert_eq!(
            route_label(any, "/flakery.v1.Ids/NextId"),
            "/flakery.v1.Ids/NextId"
        );
        assert_eq!(route_label(any, "/flakery.v1.Ids/Whatever123"), any);
    }
}
