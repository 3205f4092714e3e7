//! The server's errors: the core's codes plus the server's own (`unauthorized`, `not_found`,
//! `method_not_allowed`, `timeout`, `body_too_large`, `uri_too_long`, `headers_too_large`,
//! `unsupported_media_type`, `overloaded`, `internal`), each with its HTTP status and gRPC
//! status, answered as `{"error":{"code","message"}}`.

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

/// Marks a response as already in the error shape, so the guard leaves it as it is.
#[derive(Clone, Copy)]
pub struct Shaped;

impl ApiError {
    /// The error a framework's bare refusal with this status stands for.
    pub fn for_status(status: StatusCode, message: impl Into<String>) -> Self {
        let code = match status {
            StatusCode::BAD_REQUEST | StatusCode::UNPROCESSABLE_ENTITY => {
                ErrorCode::InvalidArgument.as_str()
            }
            StatusCode::UNAUTHORIZED => "unauthorized",
            StatusCode::NOT_FOUND => "not_found",
            StatusCode::METHOD_NOT_ALLOWED => "method_not_allowed",
            StatusCode::REQUEST_TIMEOUT => "timeout",
            StatusCode::PAYLOAD_TOO_LARGE => "body_too_large",
            StatusCode::URI_TOO_LONG => "uri_too_long",
            StatusCode::UNSUPPORTED_MEDIA_TYPE => "unsupported_media_type",
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE => "headers_too_large",
            StatusCode::SERVICE_UNAVAILABLE => "overloaded",
            status if status.is_client_error() => ErrorCode::InvalidArgument.as_str(),
            _ => "internal",
        };
        ApiError {
            code,
            status,
            message: message.into(),
        }
    }

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
            StatusCode::REQUEST_TIMEOUT => tonic::Code::DeadlineExceeded,
            status if status.is_client_error() => tonic::Code::InvalidArgument,
            _ => tonic::Code::Internal,
        };
        tonic::Status::new(code, format!("{}: {}", self.code, self.message))
    }
}

/// The HTTP status the server answers a core error with.
pub fn status_of(code: ErrorCode) -> StatusCode {
    match code {
        ErrorCode::InvalidArgument | ErrorCode::InvalidLayout => StatusCode::BAD_REQUEST,
        ErrorCode::LeaseLost
        | ErrorCode::CoordinatorUnavailable
        | ErrorCode::ClockMovedBackwards => StatusCode::SERVICE_UNAVAILABLE,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

impl From<flakery::Error> for ApiError {
    fn from(error: flakery::Error) -> Self {
        ApiError {
            code: error.code().as_str(),
            status: status_of(error.code()),
            message: error.message().to_string(),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = serde_json::json!({"error": {"code": self.code, "message": self.message}});
        let mut response = (self.status, axum::Json(body)).into_response();
        response.extensions_mut().insert(Shaped);
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
