//! The server's errors: the core's codes plus `unauthorized`, `not_found` and `overloaded`,
//! each with its HTTP status and gRPC status, answered as `{"error":{"code","message"}}`.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use flakery::ErrorCode;

/// Seconds a client is told to wait before retrying a 503.
pub const RETRY_AFTER_S: &str = "1";

#[derive(Debug, Clone)]
pub struct ApiError {
    pub code: &'static str,
    pub status: StatusCode,
    pub message: String,
}

impl ApiError {
    pub fn bad_request(message: impl Into<String>) -> Self {
        ApiError {
            code: ErrorCode::InvalidArgument.as_str(),
            status: StatusCode::BAD_REQUEST,
            message: message.into(),
        }
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        ApiError {
            code: "not_found",
            status: StatusCode::NOT_FOUND,
            message: message.into(),
        }
    }

    pub fn unauthorized() -> Self {
        ApiError {
            code: "unauthorized",
            status: StatusCode::UNAUTHORIZED,
            message: "a bearer token is required: send 'Authorization: Bearer <token>'".into(),
        }
    }

    pub fn overloaded(message: impl Into<String>) -> Self {
        ApiError {
            code: "overloaded",
            status: StatusCode::SERVICE_UNAVAILABLE,
            message: message.into(),
        }
    }

    pub fn is_unavailable(&self) -> bool {
        self.status == StatusCode::SERVICE_UNAVAILABLE
    }

    pub fn grpc_status(&self) -> tonic::Status {
        let code = match self.status {
            StatusCode::BAD_REQUEST => tonic::Code::InvalidArgument,
            StatusCode::UNAUTHORIZED => tonic::Code::Unauthenticated,
            StatusCode::NOT_FOUND => tonic::Code::NotFound,
            StatusCode::SERVICE_UNAVAILABLE => tonic::Code::Unavailable,
            _ => tonic::Code::Internal,
        };
        tonic::Status::new(code, format!("{}: {}", self.code, self.message))
    }
}

impl From<flakery::Error> for ApiError {
    fn from(error: flakery::Error) -> Self {
        let status = match error.code() {
            ErrorCode::InvalidArgument | ErrorCode::InvalidLayout => StatusCode::BAD_REQUEST,
            ErrorCode::LeaseLost
            | ErrorCode::CoordinatorUnavailable
            | ErrorCode::ClockMovedBackwards => StatusCode::SERVICE_UNAVAILABLE,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        ApiError {
            code: error.code().as_str(),
            status,
            message: error.message().to_string(),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = serde_json::json!({"error": {"code": self.code, "message": self.message}});
        let mut response = (self.status, axum::Json(body)).into_response();
        if self.is_unavailable() {
            response
                .extensions_mut()
                .insert(crate::unavailable::AnsweredCode(self.code));
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static(RETRY_AFTER_S));
        }
        response
    }
}
