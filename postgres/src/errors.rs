//! The core's errors as PostgreSQL errors: the message starts with the core's stable code
//! (docs/spec.md#errors) and the SQLSTATE is the nearest standard one (docs/postgres.md#errors).

use flakery::ErrorCode;
use pgrx::pg_sys::panic::ErrorReport;
use pgrx::{PgLogLevel, PgSqlErrorCode};

pub fn sqlstate(code: ErrorCode) -> PgSqlErrorCode {
    match code {
        ErrorCode::InvalidLayout | ErrorCode::InvalidArgument => {
            PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE
        }
        ErrorCode::TimeExhausted => PgSqlErrorCode::ERRCODE_DATETIME_FIELD_OVERFLOW,
        ErrorCode::ClockMovedBackwards
        | ErrorCode::LeaseLost
        | ErrorCode::CoordinatorUnavailable
        | ErrorCode::WorkerIdsExhausted
        | ErrorCode::Forked => PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
        // The codes of a client of `flakery serve`, which the extension does not use today:
        // the standard SQLSTATEs of a connection's failures.
        ErrorCode::ServersUnavailable => PgSqlErrorCode::ERRCODE_CONNECTION_FAILURE,
        ErrorCode::Unauthorized => PgSqlErrorCode::ERRCODE_INVALID_AUTHORIZATION_SPECIFICATION,
        ErrorCode::BadAnswer => PgSqlErrorCode::ERRCODE_PROTOCOL_VIOLATION,
        ErrorCode::TlsFailed => PgSqlErrorCode::ERRCODE_CONNECTION_FAILURE,
    }
}

/// Raises `error` as a PostgreSQL ERROR (it does not return).
pub fn raise(error: flakery::Error) -> ! {
    ErrorReport::new(
        sqlstate(error.code()),
        format!("{}: {}", error.code(), error.message()),
        "flakery",
    )
    .report(PgLogLevel::ERROR);
    unreachable!("an ERROR report returns to PostgreSQL's error handler")
}

/// The value, or the error raised.
pub trait OrRaise<T> {
    fn or_raise(self) -> T;
}

impl<T> OrRaise<T> for flakery::Result<T> {
    fn or_raise(self) -> T {
        self.unwrap_or_else(|e| raise(e))
    }
}
