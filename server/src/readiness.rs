//! Whether this server should be sent requests now (`/readyz`, gRPC health): the lease can
//! issue (read lock-free from the core), the last attempt to issue did not fail for a cause
//! that lasts (a lost lease, a clock behind a mark), and the server is not draining.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

use flakery::{ErrorCode, LeaseStatus};

use crate::error::ApiError;

pub struct Readiness {
    lease: LeaseStatus,
    /// The last attempt to issue (a request's or the probe's) succeeded, or failed for a cause
    /// that passes with the next tick.
    issuing: AtomicBool,
    /// SIGTERM was received: load balancers must stop sending here.
    draining: AtomicBool,
}

/// Why the server is not ready, as `/readyz` reports it.
pub enum NotReady {
    Draining,
    Lease(&'static str),
    CannotIssue,
}

impl Readiness {
    pub fn new(lease: LeaseStatus) -> Readiness {
        Readiness {
            lease,
            issuing: AtomicBool::new(true),
            draining: AtomicBool::new(false),
        }
    }

    pub fn lease(&self) -> &LeaseStatus {
        &self.lease
    }

    pub fn check(&self) -> Result<(), NotReady> {
        if self.draining.load(Relaxed) {
            return Err(NotReady::Draining);
        }
        let state = self.lease.state();
        if !state.can_issue() {
            return Err(NotReady::Lease(state.as_str()));
        }
        if !self.issuing.load(Relaxed) {
            return Err(NotReady::CannotIssue);
        }
        Ok(())
    }

    pub fn is_ready(&self) -> bool {
        self.check().is_ok()
    }

    pub fn start_draining(&self) {
        self.draining.store(true, Relaxed);
    }

    pub fn is_draining(&self) -> bool {
        self.draining.load(Relaxed)
    }

    /// Records an attempt to issue; answers whether readiness changed because of it.
    pub fn record(&self, outcome: Result<(), ErrorCode>) -> bool {
        let issuing = match outcome {
            Ok(()) => true,
            Err(
                ErrorCode::LeaseLost
                | ErrorCode::CoordinatorUnavailable
                | ErrorCode::ClockMovedBackwards,
            ) => false,
            Err(_) => return false,
        };
        // Read first: every request records, and a write each time would bounce the line
        // between the cores although it almost never changes.
        self.issuing.load(Relaxed) != issuing && self.issuing.swap(issuing, Relaxed) != issuing
    }

    /// The refusal for an ID request that would only wait on a lease that cannot issue now:
    /// 503 `lease_lost` at once, with Retry-After, so a client or load balancer tries
    /// another server instead of queueing here.
    pub fn refuse_fast(&self) -> Option<ApiError> {
        let state = self.lease.state();
        if state.can_issue() {
            return None;
        }
        let mut error = ApiError::from(flakery::Error::new(
            ErrorCode::LeaseLost,
            format!(
                "the node ID lease is {} ({}): no IDs until it is confirmed; retry shortly or \
                 on another server",
                state.as_str(),
                self.lease.coordinator().unwrap_or("the coordinator")
            ),
        ));
        error.status = axum::http::StatusCode::SERVICE_UNAVAILABLE;
        Some(error)
    }
}

impl NotReady {
    pub fn message(&self) -> String {
        match self {
            NotReady::Draining => {
                "the server is stopping: it finishes the requests it has; send new ones to \
                 another server"
                    .into()
            }
            NotReady::Lease(state) => format!(
                "the node ID lease is {state}: no IDs are issued until it is held and confirmed"
            ),
            NotReady::CannotIssue => "the last attempt to issue an ID failed (see the log): no \
                                      IDs until one succeeds"
                .into(),
        }
    }

    pub fn code(&self) -> &'static str {
        match self {
            NotReady::Draining => "draining",
            _ => ErrorCode::LeaseLost.as_str(),
        }
    }
}
