//! One error type for every surface: a stable code (docs/spec.md#errors) and a message
//! that names what was wrong.

use std::fmt;

/// The stable error codes (docs/spec.md#errors). The string of each is the same in every binding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(i32)]
pub enum ErrorCode {
    InvalidLayout = 1,
    InvalidArgument = 2,
    TimeExhausted = 3,
    ClockMovedBackwards = 4,
    LeaseLost = 5,
    CoordinatorUnavailable = 6,
    WorkerIdsExhausted = 7,
    Forked = 8,
    /// A client of `flakery serve` got no IDs within its deadline: each server refused, failed,
    /// timed out or answered 503. The numbers from 20 are the client's (C publishes them).
    ServersUnavailable = 20,
    /// Every server a client asked refused its token (401): it is missing or wrong.
    Unauthorized = 21,
    /// Every server a client asked answered something that is not a batch of IDs: not a
    /// flakery server, or a layout other than the client's.
    BadAnswer = 22,
    /// The TLS handshake with every server a client asked failed: a certificate signed by a CA
    /// the client does not trust, expired, for another host name, or the server refused the
    /// client's certificate (or its absence). Not `servers_unavailable`: it is a configuration
    /// to fix, not a server to wait for, and a fallback would hide it.
    TlsFailed = 23,
}

impl ErrorCode {
    pub const ALL: [ErrorCode; 12] = [
        ErrorCode::InvalidLayout,
        ErrorCode::InvalidArgument,
        ErrorCode::TimeExhausted,
        ErrorCode::ClockMovedBackwards,
        ErrorCode::LeaseLost,
        ErrorCode::CoordinatorUnavailable,
        ErrorCode::WorkerIdsExhausted,
        ErrorCode::Forked,
        ErrorCode::ServersUnavailable,
        ErrorCode::Unauthorized,
        ErrorCode::BadAnswer,
        ErrorCode::TlsFailed,
    ];

    pub const fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidLayout => "invalid_layout",
            ErrorCode::InvalidArgument => "invalid_argument",
            ErrorCode::TimeExhausted => "time_exhausted",
            ErrorCode::ClockMovedBackwards => "clock_moved_backwards",
            ErrorCode::LeaseLost => "lease_lost",
            ErrorCode::CoordinatorUnavailable => "coordinator_unavailable",
            ErrorCode::WorkerIdsExhausted => "worker_ids_exhausted",
            ErrorCode::Forked => "forked",
            ErrorCode::ServersUnavailable => "servers_unavailable",
            ErrorCode::Unauthorized => "unauthorized",
            ErrorCode::BadAnswer => "bad_answer",
            ErrorCode::TlsFailed => "tls_failed",
        }
    }

    /// Whether the error is the caller's input being wrong (Python also raises these as
    /// `ValueError`, Node as `RangeError`/`TypeError`).
    pub const fn is_argument_error(self) -> bool {
        matches!(self, ErrorCode::InvalidLayout | ErrorCode::InvalidArgument)
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
    /// The option the message names, as the Rust API spells it (`worker_id`).
    option: Option<&'static str>,
}

impl Error {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Error {
            code,
            message: message.into(),
            option: None,
        }
    }

    /// Marks the message as naming `option` (as the Rust API spells it, `worker_id`), so that
    /// a binding can name it its own way (`option_table::message_on`).
    pub fn about(mut self, option: &'static str) -> Self {
        self.option = Some(option);
        self
    }

    /// The option the message names, if it names one: `worker_id`, `datacenter_id`, ...
    pub fn option(&self) -> Option<&'static str> {
        self.option
    }

    pub fn code(&self) -> ErrorCode {
        self.code
    }

    pub fn message(&self) -> &str {
        &self.message
    }

    pub fn invalid_layout(message: impl Into<String>) -> Self {
        Error::new(ErrorCode::InvalidLayout, message)
    }

    pub fn invalid_argument(message: impl Into<String>) -> Self {
        Error::new(ErrorCode::InvalidArgument, message)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

pub type Result<T, E = Error> = std::result::Result<T, E>;
