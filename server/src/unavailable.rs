//! Counts every 503 (and gRPC UNAVAILABLE) by its error code, so that an operator can tell a
//! lost lease (`lease_lost`) from a full server (`overloaded`) or a clock behind its mark.

use axum::http::StatusCode;
use axum::response::Response;

use crate::metrics::Metrics;

/// The error code an `ApiError` answered with, carried to the middleware on its response.
#[derive(Clone, Copy)]
pub struct AnsweredCode(pub &'static str);

/// gRPC's UNAVAILABLE.
const GRPC_UNAVAILABLE: &str = "14";

pub fn count(metrics: &Metrics, response: &Response) {
    let code = if response.status() == StatusCode::SERVICE_UNAVAILABLE {
        response
            .extensions()
            .get::<AnsweredCode>()
            .map_or("other", |c| c.0)
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
    const CODES: [&str; 5] = [
        "lease_lost",
        "overloaded",
        "coordinator_unavailable",
        "clock_moved_backwards",
        "draining",
    ];
    CODES
        .iter()
        .find(|c| **c == text)
        .copied()
        .unwrap_or("other")
}

#[cfg(test)]
mod tests {
    #[test]
    fn labels_stay_bounded() {
        assert_eq!(super::known_code("lease_lost"), "lease_lost");
        assert_eq!(super::known_code("anything a client sent"), "other");
    }
}
