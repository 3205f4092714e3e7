//! What every request passes, in front of the routes: the size of its head, the bearer token,
//! the bound on requests in flight, the request deadline, the per-route metrics; and on the way
//! out, every refusal in the error shape, every answer's bytes counted until sent (`budget`),
//! and `Connection: close` while draining.
//!
//! One service around the whole router, not `Router::layer` middleware: a layer there wraps
//! each route in a boxed service of its own, cloned (allocated) and its future boxed at each
//! level for every request. Measured with bench/server/profile.sh (callgrind, user-space
//! instructions per `GET /v1/id`): the guard, the drain check and the body limit as three
//! layers cost about a third of the server's instructions per request.

use std::convert::Infallible;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use axum::body::{Body, Bytes};
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Router;
use http_body::Body as _;
use tower::{Layer, ServiceExt};

use crate::answer::Answer;
use crate::budget::{Attached, Conn, Counter, MeteredBody};
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
    /// A count, not tokio's semaphore: a request never waits for a slot, and the semaphore
    /// locks its waiters' mutex, shared by every worker thread, at each release.
    pub in_flight: Counter,
    pub request_timeout: std::time::Duration,
}

/// Routes a load balancer or orchestrator probes without credentials.
fn is_health_check(path: &str) -> bool {
    matches!(path, "/healthz" | "/readyz") || path.starts_with("/grpc.health.v1.Health/")
}

fn is_grpc<B>(request: &axum::http::Request<B>) -> bool {
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
fn authorized<B>(request: &axum::http::Request<B>, token: &str) -> bool {
    request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| bearer(v.as_bytes()))
        .is_some_and(|given| !given.is_empty() && same_secret(given, token.as_bytes()))
}

fn head_within_bounds<B>(request: &axum::http::Request<B>) -> Result<(), ApiError> {
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

/// The router behind the guard (`serve::app`); `for_connection` gives each connection its
/// own, which knows the connection's account of unsent answers (`budget`).
#[derive(Clone)]
pub struct Guarded {
    guard: Arc<Guard>,
    routes: Router,
    body_limit: DefaultBodyLimit,
    conn: Option<Arc<Conn>>,
    /// Set by the connection's first request: until then the connection is on its deadline.
    asked: Option<Arc<AtomicBool>>,
}

impl Guarded {
    pub fn new(guard: Arc<Guard>, routes: Router, max_body_bytes: usize) -> Self {
        Guarded {
            guard,
            routes,
            body_limit: DefaultBodyLimit::max(max_body_bytes),
            conn: None,
            asked: None,
        }
    }

    pub fn for_connection(&self, conn: Arc<Conn>, asked: Arc<AtomicBool>) -> Self {
        Guarded {
            conn: Some(conn),
            asked: Some(asked),
            ..self.clone()
        }
    }
}

/// `GET /v1/id`, answered past the router: its dispatch (the path looked up, its parameters
/// and matched path put in the request, the route's boxed service cloned) cost about a fifth
/// of such a request's instructions, and its future, moved at each await, the memcpy of it.
fn is_one_id(request: &axum::http::Request<impl Sized>) -> bool {
    request.method() == Method::GET && request.uri().path() == "/v1/id"
}

impl<B> tower::Service<axum::http::Request<B>> for Guarded
where
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<axum::BoxError>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Answer;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        // A router is always ready.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: axum::http::Request<B>) -> Self::Future {
        if let Some(asked) = &self.asked {
            asked.store(true, Ordering::Relaxed);
        }
        let guard = Arc::clone(&self.guard);
        let conn = self.conn.clone();
        let one_id = is_one_id(&request);
        if one_id {
            if let Some(response) = guard.one_id_now(&request, conn.as_ref()) {
                return Answer::Now(Some(response));
            }
        }
        let mut request = request.map(Body::new);
        if one_id {
            let ids = Arc::clone(&guard.ids);
            return Answer::Later(Box::pin(async move {
                let one_id = |request| async move {
                    crate::http::next_id(State(ids), request)
                        .await
                        .into_response()
                };
                guard.guard(request, conn, one_id).await
            }));
        }
        // The routes read it from here (`Extension<Arc<Conn>>`): the batch routes reserve
        // their bytes before they make their IDs.
        if let Some(conn) = &conn {
            request.extensions_mut().insert(Arc::clone(conn));
        }
        let routes = self.body_limit.layer(self.routes.clone());
        Answer::Later(Box::pin(async move {
            let routed = |request| async move {
                match routes.oneshot(request).await {
                    Ok(response) => response,
                    Err(never) => match never {},
                }
            };
            guard.guard(request, conn, routed).await
        }))
    }
}

/// What the guard reads of a request before it is answered, to count and shape the answer.
struct Seen<'a> {
    started: Instant,
    route_series: crate::metrics::Route<'a>,
    http1: bool,
    kind: Kind,
}

impl Guard {
    fn seen<B>(&self, request: &axum::http::Request<B>) -> Seen<'_> {
        let started = Instant::now();
        // The route's series are found once, here: no label is hashed or copied per request.
        let route_series = self.ids.metrics.route(request.uri().path());
        let kind = Kind {
            grpc: is_grpc(request),
            health: is_health_check(request.uri().path()),
            compat: is_compat_route(route_series.label()),
            joins_repeated: route_series.label() == "/decodeSnowflakeId",
        };
        Seen {
            started,
            route_series,
            // HTTP/2 has no such header (hyper would strip it): its connections are ended by
            // GOAWAY.
            http1: request.version() <= axum::http::Version::HTTP_11,
            kind,
        }
    }

    async fn guard<F, R>(&self, request: Request, conn: Option<Arc<Conn>>, route: R) -> Response
    where
        R: FnOnce(Request) -> F,
        F: Future<Output = Response>,
    {
        let seen = self.seen(&request);
        let mut response = answer(self, seen.kind, request, route).await;
        if !seen.kind.grpc {
            response = shaped(response, seen.kind.compat).await;
        }
        self.finish(seen, conn.as_ref(), response)
    }

    /// `GET /v1/id` answered in the call, without a future (a boxed one is allocated, moved
    /// at each await and freed for every request), when it passes every check and the
    /// generator's fast path has an ID now: nearly always. Anything else (None, before an ID
    /// is taken) leaves the request to `guard`, which checks it anew and answers it as any
    /// other (a refusal, a wait for the next tick, the timeout). No await, so no timeout.
    fn one_id_now<B>(
        &self,
        request: &axum::http::Request<B>,
        conn: Option<&Arc<Conn>>,
    ) -> Option<Response> {
        let seen = self.seen(request);
        checked(self, seen.kind, request).ok()?;
        let _slot = self.in_flight.slot()?;
        let asked = crate::http::OneId::of(request).ok()?;
        let made = self.ids.next_id_now()?;
        // A 200, or an error already in its shape (`shaped` would leave either as it is).
        let response = made.and_then(|id| asked.answer(id)).into_response();
        Some(self.finish(seen, conn, response))
    }

    /// The answer counted until sent, counted in the metrics, and closing a draining
    /// connection.
    fn finish(&self, seen: Seen<'_>, conn: Option<&Arc<Conn>>, response: Response) -> Response {
        let Seen {
            started,
            route_series,
            http1,
            kind,
        } = seen;
        let metrics = &self.ids.metrics;
        let mut response = match conn {
            Some(conn) => metered(kind, conn, response),
            None => response,
        };
        if !kind.health && (kind.grpc || response.status() == StatusCode::SERVICE_UNAVAILABLE) {
            crate::unavailable::count(metrics, &response);
        }
        if http1 && self.ids.readiness.is_draining() {
            crate::drain::close(&mut response);
        }
        metrics.answered(
            &route_series,
            response.status(),
            started.elapsed().as_secs_f64(),
        );
        response
    }
}

/// The checks of a request's head and credentials, before it takes a slot.
fn checked<B>(guard: &Guard, kind: Kind, request: &axum::http::Request<B>) -> Result<(), ApiError> {
    head_within_bounds(request)?;
    if let Some(token) = &guard.token {
        if !kind.health && !authorized(request, token) {
            return Err(ApiError::unauthorized());
        }
    }
    if !kind.joins_repeated {
        crate::query::refuse_repeated(request.uri())?;
    }
    Ok(())
}

async fn answer<F, R>(guard: &Guard, kind: Kind, request: Request, route: R) -> Response
where
    R: FnOnce(Request) -> F,
    F: Future<Output = Response>,
{
    if let Err(error) = checked(guard, kind, &request) {
        return refuse(kind.grpc, error);
    }
    let Some(_slot) = guard.in_flight.slot() else {
        return refuse(
            kind.grpc,
            ApiError::overloaded("too many requests in flight: retry shortly"),
        );
    };
    // Pinned here, the timeout takes a reference: the route's future is not moved again.
    let routed = route(request);
    tokio::pin!(routed);
    match tokio::time::timeout(guard.request_timeout, routed).await {
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
}
