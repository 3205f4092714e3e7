//! A call's one deadline, computed once when the call starts. A binding that fills a large
//! batch a chunk at a time (Java, to keep no second copy of the array in native memory;
//! Python, to give the GIL back between chunks and turn each into ints while it is in the
//! cache) fills every chunk within it: the whole call lasts at most one deadline, as on the
//! surfaces that fill in one piece.

use crate::options::Settings;

/// When a call of `count` IDs must have them, on the client's monotonic clock (`Ticks`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Deadline {
    pub at_ms: u64,
    /// The IDs of the whole call, and the time it is allowed: named by its error.
    count: usize,
    timeout_ms: u64,
    making_ms: u64,
}

impl Deadline {
    pub fn new(started_ms: u64, count: usize, settings: &Settings) -> Deadline {
        let making_ms = making_ms(count, || settings.layout.capacity().ids_per_second);
        let timeout_ms = settings.timeout_ms;
        Deadline {
            at_ms: started_ms.saturating_add(timeout_ms.saturating_add(making_ms)),
            count,
            timeout_ms,
            making_ms,
        }
    }

    /// How the error of a call that ran out of time says what it was allowed.
    pub fn missed(&self) -> String {
        match self.making_ms {
            0 => format!("within {} ms", self.timeout_ms),
            making => format!(
                "within {} ms (the timeout, {} ms, and {making} ms to make {} IDs at the \
                 layout's rate)",
                self.timeout_ms.saturating_add(making),
                self.timeout_ms,
                self.count
            ),
        }
    }
}

/// The least time one server of a layout making `ids_per_second` takes to make `count` IDs
/// (the layout's capacity, read only for a batch: one ID's deadline is the timeout alone).
/// A batch larger than the servers can make within the timeout is no outage: its deadline
/// gets this on top, so that it fails as unavailable (and goes to a fallback) only when the
/// servers do not keep up with their own layout.
fn making_ms(count: usize, ids_per_second: impl FnOnce() -> u64) -> u64 {
    match count {
        0 | 1 => 0,
        n => (n as u64)
            .saturating_mul(1000)
            .div_ceil(ids_per_second().max(1)),
    }
}

#[cfg(test)]
mod tests {
    use super::making_ms;

    /// Found by review: 2^24 IDs of the twitter layout take at least 4,096 ms to make, most
    /// of the default 5,000 ms timeout; 20,000,000 failed as servers_unavailable (and went to
    /// a fallback) from a healthy server.
    #[test]
    fn a_batch_gets_the_time_its_count_takes_to_make() {
        let twitter = flakery::Layout::twitter().capacity().ids_per_second;
        assert_eq!(making_ms(1, || twitter), 0, "one ID: the timeout alone");
        assert_eq!(making_ms(1 << 24, || twitter), 4096);
        assert_eq!(making_ms(20_000_000, || twitter), 4883);
        assert_eq!(making_ms(2, || 1000), 2);
        assert_eq!(
            making_ms(usize::MAX, || 1),
            u64::MAX,
            "saturates, never wraps short"
        );
    }
}
