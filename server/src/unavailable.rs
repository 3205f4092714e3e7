//! Counts every 503 (and gRPC UNAVAILABLE) by its error code, so that an operator can tell a
//! lost lease (`lease_lost`) from a full server (`overloaded`) or a clock behind its mark.

use axum::http::StatusCode;
use axum::response::Response;
use flakery::ErrorCode;

use crate::error::{status_of, ApiError};
use crate::metrics::Metrics;

/// The error code an `ApiError` answered with, carried to the middleware on its response.
#[derive(Clone, Copy)]
pub struct AnsweredCode(pub &'static str);

/// gRPC's UNAVAILABLE.
const GRPC_UNAVAILABLE: &str = "14";

/// A 503 whose code is none of `codes()` (a framework's own refusal).
const OTHER: &str = "other";

/// Every code a counted 503 carries, each a label of `flakery_unavailable_total` from the
/// start: the core's codes that the server answers with 503 (the core's table read through
/// the one mapping, `status_of`), the server's own `overloaded`, and `other`.
/// Health checks are not counted, so `/readyz`'s `draining` is not among them.
pub fn codes() -> impl Iterator<Item = &'static str> {
    ErrorCode::ALL
        .into_iter()
        .filter(|&code| status_of(code) == StatusCode::SERVICE_UNAVAILABLE)
        .map(ErrorCode::as_str)
        .chain([ApiError::overloaded("").code, OTHER])
}

pub fn count(metrics: &Metrics, response: &Response) {
    let code = if response.status() == StatusCode::SERVICE_UNAVAILABLE {
        response
            .extensions()
            .get::<AnsweredCode>()
            .map_or(OTHER, |c| known_code(c.0))
    } else if response
        .headers()
        .get("grpc-status")
        .is_some_and(|s| s == GRPC_UNAVAILABLE)
    {
        // Our gRPC messages start with the code: "lease_lost: ...".
        let message = response
            .headers()
            .get("grpc-message")
            .and_then(|m| m.to_str().ok())
            .unwrap_or("");
        known_code(message.split(':').next().unwrap_or(""))
    } else {
        return;
    };
    metrics.unavailable.with_label_values(&[code]).inc();
}

/// The codes a 503 carries: a bounded label set, whatever a message says.
fn known_code(text: &str) -> &'static str {
    codes().find(|c| *c == text).unwrap_or(OTHER)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_stay_bounded() {
        assert_eq!(known_code("lease_lost"), "lease_lost");
        assert_eq!(known_code("anything a client sent"), "other");
    }

    /// The labels are the core's table read through the server's mapping: every core code
    /// answered 503, and no other; then the server's own.
    #[test]
    fn the_codes_are_the_tables_503s() {
        let codes: Vec<_> = codes().collect();
        for code in ErrorCode::ALL {
            let answered = ApiError::from(flakery::Error::new(code, "x"));
            assert_eq!(
                codes.contains(&code.as_str()),
                answered.status == StatusCode::SERVICE_UNAVAILABLE,
                "{code}"
            );
        }
        assert!(codes.ends_with(&["overloaded", "other"]), "{codes:?}");
        assert_eq!(known_code("lease_lost"), "lease_lost");
    }
}
