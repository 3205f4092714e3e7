//! The length of one tick of the time field, as `unit=` writes it (docs/spec.md#layouts).

use crate::error::{Error, Result};

/// The length of one tick of the time field: a whole number of milliseconds. Ticks are
/// counted from the Unix epoch, as Sonyflake counts them: the tick of instant `t` is
/// `floor(t/unit) - floor(epoch/unit)`, so an epoch off a unit boundary starts its tick 0 at
/// the boundary before it (docs/spec.md#layouts).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TimeUnit {
    Millis,
    TenMillis,
    Seconds,
    /// Any other length (Sonyflake v2's `TimeUnit`: 5 ms, 100 ms, ...), never 1, 10 or 1000.
    Other(u32),
}

/// The longest tick a layout may have: one day.
pub const MAX_UNIT_MS: u32 = 86_400_000;

impl TimeUnit {
    pub const fn millis(self) -> i64 {
        match self {
            TimeUnit::Millis => 1,
            TimeUnit::TenMillis => 10,
            TimeUnit::Seconds => 1000,
            TimeUnit::Other(ms) => ms as i64,
        }
    }

    /// The unit of `ms` milliseconds, one of the named variants where it is one.
    fn of_millis(ms: u32) -> Self {
        match ms {
            1 => TimeUnit::Millis,
            10 => TimeUnit::TenMillis,
            1000 => TimeUnit::Seconds,
            _ => TimeUnit::Other(ms),
        }
    }

    /// As `unit=` writes it: `ms`, `10ms`, `s`, `5ms`, `2s`.
    pub fn as_str(self) -> std::borrow::Cow<'static, str> {
        match self {
            TimeUnit::Millis => "ms".into(),
            TimeUnit::TenMillis => "10ms".into(),
            TimeUnit::Seconds => "s".into(),
            TimeUnit::Other(ms) if ms % 1000 == 0 => format!("{}s", ms / 1000).into(),
            TimeUnit::Other(ms) => format!("{ms}ms").into(),
        }
    }

    /// Reads the value of `unit=`.
    pub(super) fn parse(text: &str) -> Result<Self> {
        let (count, scale) = match text {
            "ms" => ("1", 1),
            "s" => ("1", 1000),
            _ => match text.strip_suffix("ms") {
                Some(count) => (count, 1),
                None => (text.strip_suffix('s').unwrap_or(""), 1000),
            },
        };
        let ms = count
            .parse::<u32>()
            .ok()
            .filter(|n| count.bytes().all(|b| b.is_ascii_digit()) && *n > 0)
            .and_then(|n| n.checked_mul(scale))
            .filter(|ms| *ms <= MAX_UNIT_MS);
        ms.map(TimeUnit::of_millis).ok_or_else(|| {
            Error::invalid_layout(format!(
                "unit '{text}' is not ms, s, or a whole number of them from 1 ms to one day \
                 (10ms, 5ms, 100ms, 2s)"
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_are_whole_milliseconds_and_print_back() {
        for (text, ms, printed) in [
            ("ms", 1, "ms"),
            ("1ms", 1, "ms"),
            ("10ms", 10, "10ms"),
            ("5ms", 5, "5ms"),
            ("100ms", 100, "100ms"),
            ("s", 1000, "s"),
            ("1000ms", 1000, "s"),
            ("2s", 2000, "2s"),
            ("86400s", 86_400_000, "86400s"),
        ] {
            let unit = TimeUnit::parse(text).unwrap();
            assert_eq!(
                (unit.millis(), unit.as_str().as_ref()),
                (ms, printed),
                "{text}"
            );
        }
        for bad in [
            "0ms",
            "-5ms",
            "5",
            "1.5ms",
            "+5ms",
            "86401s",
            "min",
            "",
            "99999999999ms",
        ] {
            assert!(TimeUnit::parse(bad).is_err(), "{bad}");
        }
    }
}
