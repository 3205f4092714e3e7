//! Middleware every request passes: the bearer token, the bound on requests in flight, the
//! request deadline, and the per-route metrics.

use std::sync::Arc;
use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use tokio::sync::Semaphore;

use crate::error::ApiError;
use crate::ids::Ids;

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

fn authorized(request: &Request, token: &str) -> bool {
    request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.as_bytes().strip_prefix(b"Bearer "))
        .is_some_and(|given| same_secret(given, token.as_bytes()))
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

fn refuse(request: &Request, error: ApiError) -> Response {
    if is_grpc(request) {
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
    // A health check's 503 is an answer, not a refused request.
    let health_check = is_health_check(request.uri().path());
    let response = answer(&guard, request, next).await;
    let metrics = &guard.ids.metrics;
    if !health_check {
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

async fn answer(guard: &Guard, request: Request, next: Next) -> Response {
    if let Some(token) = &guard.token {
        if !is_health_check(request.uri().path()) && !authorized(&request, token) {
            return refuse(&request, ApiError::unauthorized());
        }
    }
    let Ok(_permit) = guard.in_flight.try_acquire() else {
        return refuse(
            &request,
            ApiError::overloaded("too many requests in flight: retry shortly"),
        );
    };
    match tokio::time::timeout(guard.request_timeout, next.run(request)).await {
        Ok(response) => response,
        Err(_) => ApiError {
            code: "timeout",
            status: StatusCode::REQUEST_TIMEOUT,
            message: "the request took too long (a body sent too slowly?)".into(),
        }
        .into_response(),
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
    fn route_labels_stay_bounded() {
        let any = "/flakery.v1.Ids/*rest";
        assert_eq!(
            route_label(any, "/flakery.v1.Ids/NextId"),
            "/flakery.v1.Ids/NextId"
        );
        assert_eq!(route_label(any, "/flakery.v1.Ids/Whatever123"), any);
    }
}
