//! One error type for every surface: a stable code (docs/spec.md#errors) and a message
//! that names what was wrong.

use std::borrow::Cow;
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
}

impl ErrorCode {
    pub const ALL: [ErrorCode; 8] = [
        ErrorCode::InvalidLayout,
        ErrorCode::InvalidArgument,
        ErrorCode::TimeExhausted,
        ErrorCode::ClockMovedBackwards,
        ErrorCode::LeaseLost,
        ErrorCode::CoordinatorUnavailable,
        ErrorCode::WorkerIdsExhausted,
        ErrorCode::Forked,
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
    /// a binding can name it its own way (`message_naming`).
    pub fn about(mut self, option: &'static str) -> Self {
        self.option = Some(option);
        self
    }

    /// The option the message names, if it names one: `worker_id`, `datacenter_id`, ...
    pub fn option(&self) -> Option<&'static str> {
        self.option
    }

    /// The message with the option it names spelt as `name` spells it: `workerId` in
    /// JavaScript, `--worker-id` on the command line. Only whole words are replaced.
    pub fn message_naming(&self, name: impl FnOnce(&str) -> String) -> Cow<'_, str> {
        let Some(option) = self.option else {
            return Cow::Borrowed(&self.message);
        };
        let spelt = name(option);
        let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_';
        let mut out = String::with_capacity(self.message.len() + spelt.len());
        let mut rest = self.message.as_str();
        while let Some(at) = rest.find(option) {
            let before = rest[..at].chars().next_back();
            let after = rest[at + option.len()..].chars().next();
            out.push_str(&rest[..at]);
            if before.is_some_and(is_word) || after.is_some_and(is_word) {
                out.push_str(option);
            } else {
                out.push_str(&spelt);
            }
            rest = &rest[at + option.len()..];
        }
        out.push_str(rest);
        Cow::Owned(out)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_naming_spells_the_option_as_asked() {
        let error = Error::invalid_argument(
            "layout 'x' has no worker field, so worker_id must be 0, not 3 (max_worker_id)",
        )
        .about("worker_id");
        assert_eq!(error.option(), Some("worker_id"));
        assert_eq!(
            error.message_naming(|_| "workerId".to_string()),
            "layout 'x' has no worker field, so workerId must be 0, not 3 (max_worker_id)"
        );
        assert_eq!(error.message(), error.to_string());
        let plain = Error::invalid_argument("worker_id 3");
        assert_eq!(
            plain.message_naming(|_| "workerId".to_string()),
            "worker_id 3"
        );
    }
}
