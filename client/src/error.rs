//! The client's errors: the core's codes (a bad argument, the fallback generator's own
//! failures) and three of the client's own, each with a stable string.

use std::fmt;

/// A stable code: `.as_str()` is the same string in every language.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// One of the core's codes (docs/errors.md): `invalid_argument` for a bad option or ID,
    /// or what the fallback generator failed with.
    Core(flakery::ErrorCode),
    /// No server gave IDs within the call's deadline: each refused, failed, timed out or
    /// answered 503 (`/readyz` not ready, draining, overloaded).
    ServersUnavailable,
    /// Every server refused the token (401): it is missing or wrong.
    Unauthorized,
    /// Every server answered something that is not a batch of IDs: not a flakery server, or a
    /// layout other than the client's.
    BadAnswer,
}

impl ErrorCode {
    pub const fn as_str(self) -> &'static str {
        match self {
            ErrorCode::Core(code) => code.as_str(),
            ErrorCode::ServersUnavailable => "servers_unavailable",
            ErrorCode::Unauthorized => "unauthorized",
            ErrorCode::BadAnswer => "bad_answer",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    code: ErrorCode,
    message: String,
}

impl Error {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Error {
            code,
            message: message.into(),
        }
    }

    pub fn invalid_argument(message: impl Into<String>) -> Self {
        Error::new(
            ErrorCode::Core(flakery::ErrorCode::InvalidArgument),
            message,
        )
    }

    pub fn code(&self) -> ErrorCode {
        self.code
    }

    pub fn message(&self) -> &str {
        &self.message
    }
}

impl From<flakery::Error> for Error {
    fn from(error: flakery::Error) -> Self {
        Error::new(ErrorCode::Core(error.code()), error.message())
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

pub type Result<T, E = Error> = std::result::Result<T, E>;
