//! How much of everything to do: a full run, or the smoke run CI makes (tiny counts, no timing
//! asserted).

use std::time::Duration;

/// How much of everything to do.
#[derive(Clone, Copy)]
pub struct Plan {
    pub smoke: bool,
    pub warm_up: Duration,
    pub measurement: Duration,
    pub samples: usize,
    pub sustained: Duration,
    pub batch: usize,
    pub batch_repeat: usize,
    pub per_thread: usize,
    pub tight_calls: u64,
}

impl Plan {
    pub fn new(smoke: bool) -> Plan {
        if smoke {
            Plan {
                smoke,
                warm_up: Duration::from_millis(5),
                measurement: Duration::from_millis(30),
                samples: 10,
                sustained: Duration::from_millis(30),
                batch: 10_000,
                batch_repeat: 1,
                per_thread: 5_000,
                tight_calls: 100_000,
            }
        } else {
            Plan {
                smoke,
                warm_up: Duration::from_millis(300),
                measurement: Duration::from_secs(2),
                samples: 20,
                sustained: Duration::from_secs(1),
                batch: 1_000_000,
                batch_repeat: 3,
                per_thread: 500_000,
                tight_calls: 10_000_000,
            }
        }
    }
}
