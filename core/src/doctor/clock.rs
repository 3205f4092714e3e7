//! The clock: whether the kernel thinks it is synchronised (`adjtimex` read-only: modes 0
//! changes nothing and needs no privilege), who keeps it, and the step back a generator
//! waits out.

use super::value::{MapBuilder, Value};
use super::{Finding, Level};

/// The kernel's clock state, as `adjtimex` answers it (times in microseconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelClock {
    /// `adjtimex`'s return: TIME_OK (0), TIME_INS, TIME_DEL, TIME_OOP, TIME_WAIT, TIME_ERROR (5).
    pub state: i32,
    /// The `STA_*` bits.
    pub status: i32,
    pub esterror_us: i64,
    pub maxerror_us: i64,
}

// The kernel's values (include/uapi/linux/timex.h), written out so that the classification
// is tested against them rather than against the libc crate's copy.
const STA_INS: i32 = 0x0010;
const STA_DEL: i32 = 0x0020;
const STA_UNSYNC: i32 = 0x0040;
const TIME_INS: i32 = 1;
const TIME_DEL: i32 = 2;
const TIME_OOP: i32 = 3;
const TIME_WAIT: i32 = 4;
const TIME_ERROR: i32 = 5;

/// What the kernel's answer means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sync {
    pub synchronised: bool,
    /// "none", "insert pending", "delete pending", "in progress", "just happened".
    pub leap: &'static str,
}

impl KernelClock {
    /// Reads the kernel's state without changing it; `None` where there is no `adjtimex`.
    pub fn read() -> Option<KernelClock> {
        #[cfg(target_os = "linux")]
        {
            // SAFETY: a zeroed timex is valid input, and modes 0 asks only to read.
            let mut tx: libc::timex = unsafe { std::mem::zeroed() };
            tx.modes = 0;
            // SAFETY: tx is a valid, writable timex.
            let state = unsafe { libc::adjtimex(&mut tx) };
            if state < 0 {
                return None;
            }
            Some(KernelClock {
                state,
                status: tx.status,
                esterror_us: tx.esterror as i64,
                maxerror_us: tx.maxerror as i64,
            })
        }
        #[cfg(not(target_os = "linux"))]
        None
    }

    /// Unsynchronised when `STA_UNSYNC` is set or the kernel answers TIME_ERROR (which it does
    /// for STA_UNSYNC and for a clock whose error grew past its bound).
    pub fn classify(&self) -> Sync {
        let leap = match self.state {
            TIME_INS => "insert pending",
            TIME_DEL => "delete pending",
            TIME_OOP => "in progress",
            TIME_WAIT => "just happened",
            _ if self.status & STA_INS != 0 => "insert pending",
            _ if self.status & STA_DEL != 0 => "delete pending",
            _ => "none",
        };
        Sync {
            synchronised: self.status & STA_UNSYNC == 0 && self.state != TIME_ERROR,
            leap,
        }
    }
}

/// The time daemons looked for, by the name the kernel gives their process (`comm`, at most
/// 15 bytes: timesyncd's is cut).
const DAEMONS: [(&str, &str); 5] = [
    ("chronyd", "chrony"),
    ("ntpd", "ntpd"),
    ("openntpd", "OpenNTPD"),
    ("systemd-timesyn", "systemd-timesyncd"),
    ("ptp4l", "linuxptp"),
];

/// The time daemons running, each with how it was found; only processes this one can see
/// (in a container: its own, and the host's daemon is invisible, which the report says).
pub fn daemons() -> Vec<Value> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return found;
    };
    // Bounded: /proc lists each process once.
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        let Ok(comm) = std::fs::read_to_string(entry.path().join("comm")) else {
            continue;
        };
        if let Some((_, daemon)) = DAEMONS.iter().find(|(c, _)| *c == comm.trim()) {
            found.push(
                MapBuilder::new()
                    .put("daemon", *daemon)
                    .put(
                        "how",
                        format!("process {pid} named {} in /proc", comm.trim()),
                    )
                    .build(),
            );
        }
    }
    if std::path::Path::new("/run/systemd/timesync/synchronized").exists() {
        found.push(
            MapBuilder::new()
                .put("daemon", "systemd-timesyncd")
                .put(
                    "how",
                    "/run/systemd/timesync/synchronized exists (its last sync)",
                )
                .build(),
        );
    }
    found
}

pub(super) fn section(
    kernel: Option<KernelClock>,
    daemons: Vec<Value>,
    backwards_tolerance_ms: u64,
    findings: &mut Vec<Finding>,
) -> Value {
    let mut map = MapBuilder::new();
    match kernel {
        None => {
            findings.push(Finding::new(
                Level::Note,
                "clock",
                "the kernel's clock state cannot be read here (no adjtimex)",
                "",
            ));
            map = map.put("synchronised", Value::Null);
        }
        Some(k) => {
            let sync = k.classify();
            if !sync.synchronised {
                findings.push(Finding::new(
                    Level::Warning,
                    "clock",
                    "the kernel marks the clock unsynchronised (adjtimex: STA_UNSYNC or \
                     TIME_ERROR): IDs of this host may be out of order with other hosts' by \
                     as much as the clocks differ",
                    "run a time daemon (chrony, ntpd or systemd-timesyncd) and let it \
                     synchronise the clock",
                ));
            }
            if sync.leap != "none" {
                findings.push(Finding::new(
                    Level::Note,
                    "clock",
                    &format!("leap second: {}", sync.leap),
                    "",
                ));
            }
            map = map
                .put("synchronised", sync.synchronised)
                .put("estimated_error_us", k.esterror_us)
                .put("maximum_error_us", k.maxerror_us)
                .put("leap_second", sync.leap)
                .put("adjtimex_state", k.state)
                .put("adjtimex_status", k.status);
        }
    }
    map.put("daemons", Value::List(daemons))
        .put("backwards_tolerance_ms", backwards_tolerance_ms)
        .put(
            "step_back",
            format!(
                "a step back of up to {backwards_tolerance_ms} ms is waited out; a larger one \
                 fails with clock_moved_backwards"
            ),
        )
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernel(state: i32, status: i32) -> KernelClock {
        KernelClock {
            state,
            status,
            esterror_us: 16,
            maxerror_us: 500,
        }
    }

    /// Values a kernel answers: chrony synchronised (STA_PLL), a fresh boot (STA_UNSYNC,
    /// TIME_ERROR), an insert announced (STA_INS, TIME_INS), the second itself (TIME_OOP).
    #[test]
    fn the_kernels_answers_are_classified() {
        let synced = kernel(0, 0x2001).classify();
        assert_eq!((synced.synchronised, synced.leap), (true, "none"));
        let boot = kernel(5, 0x0041).classify();
        assert!(!boot.synchronised);
        assert!(!kernel(0, 0x0040).classify().synchronised);
        assert!(!kernel(5, 0x2001).classify().synchronised);
        assert_eq!(kernel(1, 0x2011).classify().leap, "insert pending");
        assert_eq!(kernel(0, 0x2021).classify().leap, "delete pending");
        assert_eq!(kernel(3, 0x2011).classify().leap, "in progress");
        assert_eq!(kernel(4, 0x2001).classify().leap, "just happened");
        assert_eq!(STA_UNSYNC, libc::STA_UNSYNC);
    }

    #[test]
    fn an_unsynchronised_clock_is_a_warning_with_its_fix() {
        let mut findings = Vec::new();
        let v = section(Some(kernel(5, 0x41)), Vec::new(), 1000, &mut findings);
        assert_eq!(v.get("synchronised"), Some(&Value::Bool(false)));
        assert_eq!(findings.len(), 1);
        assert_eq!(findings[0].level, Level::Warning);
        assert!(findings[0].fix.contains("chrony"));
    }
}
