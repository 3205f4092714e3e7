//! An option's value as a surface writes it, read by the core's one parser: an integer flag or
//! variable, a constant field `NAME=VALUE`, a default of the table, a client's duration (in
//! whole milliseconds on the surfaces whose keywords say `ms`, a `Duration` in Rust).

use std::time::Duration;

use super::{ClientKind, ClientOptionSpec, Kind, OptionKind, OptionSpec, Surface, FIELDS};
use crate::error::{Error, Result};

/// The shortest a client's duration may be, in milliseconds: a deadline of 0 would fail every
/// call, an age of 0 drop every ID.
const MIN_DURATION_MS: u64 = 1;

impl<K: OptionKind> OptionSpec<K> {
    /// The default of an integer option, as a number.
    pub fn default_u64(&self) -> Option<u64> {
        self.default.and_then(|d| d.parse().ok())
    }

    /// An integer option written as text (a flag, a variable) by the core's one decimal
    /// parser; the message names it as `surface` spells it.
    pub fn parse_u64(&self, surface: Surface, text: &str) -> Result<u64> {
        debug_assert!(self.kind.is_integer(), "{} is no integer", self.rust);
        crate::decimal::parse_u64(&self.name(surface), text).map_err(|e| e.about(self.rust))
    }
}

/// `ms` if it is at least `MIN_DURATION_MS`; else the one message of every surface for a
/// duration under it, naming the option as `surface` spells it.
fn at_least_min_ms<K: OptionKind>(o: &OptionSpec<K>, surface: Surface, ms: u64) -> Result<u64> {
    if ms >= MIN_DURATION_MS {
        return Ok(ms);
    }
    Err(Error::invalid_argument(format!(
        "{} must be at least {MIN_DURATION_MS}, not {ms}",
        o.name(surface)
    ))
    .about(o.rust))
}

impl OptionSpec<Kind> {
    /// A generator's duration that is not given unless set (`session_timeout_ms`): when set,
    /// at least 1 ms, so 0 is refused on every surface (ZooKeeper has no session of 0 ms)
    /// rather than read as "not given" on some.
    pub fn optional_millis(&self, surface: Surface, ms: u64) -> Result<u64> {
        debug_assert!(
            self.kind == Kind::OptionalMillis,
            "{} is no optional duration",
            self.rust
        );
        at_least_min_ms(self, surface, ms)
    }
}

impl ClientOptionSpec {
    /// A client's duration as the surfaces whose keywords say `ms` give it (Python's
    /// `max_age_ms`, C's `max_age_ms`, Node's and Java's `maxAgeMs`): at least 1, so 0 is
    /// refused, never read as the default. The message names the option as `surface` spells
    /// it and shows the number as the caller wrote it, in the keyword's unit, never as a
    /// `Duration` ("not 0ns").
    pub fn millis(&self, surface: Surface, ms: u64) -> Result<Duration> {
        debug_assert!(
            self.kind == ClientKind::Duration,
            "{} is no duration",
            self.rust
        );
        at_least_min_ms(self, surface, ms).map(Duration::from_millis)
    }

    /// A client's duration as Rust gives it, a `Duration`: its whole milliseconds, from 1 to
    /// 2^64-1; the message shows it as Rust writes it (`10µs`).
    pub fn duration_ms(&self, duration: Duration) -> Result<u64> {
        debug_assert!(
            self.kind == ClientKind::Duration,
            "{} is no duration",
            self.rust
        );
        match u64::try_from(duration.as_millis()) {
            Ok(ms) if ms >= MIN_DURATION_MS => Ok(ms),
            _ => Err(Error::invalid_argument(format!(
                "{} must be from {}, not {duration:?}",
                self.rust, self.range
            ))
            .about(self.rust)),
        }
    }
}

/// A flag written as text (`true` or `false`, as the Java package passes its builder's
/// booleans); the message names the option as the caller's surface spells it (`name`).
pub fn parse_flag(name: &str, text: &str) -> Result<bool> {
    match text {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(Error::invalid_argument(format!(
            "{name} '{}' is not true or false",
            crate::truncate::shown(text)
        ))),
    }
}

/// A constant field's value written `NAME=VALUE` (`flakery compose --field`, `flakery serve
/// --field`): the name trimmed, the value canonical decimal; messages name `--field` (the
/// only surfaces that write fields as text are flags).
pub fn parse_field(pair: &str) -> Result<(String, u64)> {
    let flag = FIELDS.name(Surface::Server);
    let (name, value) = pair.split_once('=').ok_or_else(|| {
        Error::invalid_argument(format!(
            "{flag} '{}' is not NAME=VALUE with a non-negative integer VALUE",
            crate::truncate::shown(pair)
        ))
    })?;
    let name = name.trim();
    let value = crate::decimal::parse_u64(&format!("{flag} {name}"), value)?;
    Ok((name.to_string(), value))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;
    use crate::option_table::{message_on, CLIENT_OPTIONS, MAX_AGE, OPTIONS, TIMEOUT, WORKER_ID};

    #[test]
    fn a_flag_is_true_or_false_and_nothing_else() {
        assert!(parse_flag("prefetch", "true").unwrap());
        assert!(!parse_flag("prefetch", "false").unwrap());
        for bad in ["", "TRUE", "1", "yes", " true"] {
            let err = parse_flag("preferFirst", bad).unwrap_err();
            assert_eq!(err.code(), ErrorCode::InvalidArgument);
            assert_eq!(
                err.message(),
                format!("preferFirst '{bad}' is not true or false")
            );
        }
    }

    #[test]
    fn integers_are_read_by_the_strict_parser_named_per_surface() {
        for o in OPTIONS.iter().filter(|o| o.kind.is_integer()) {
            assert_eq!(o.parse_u64(Surface::Cli, "12"), Ok(12));
            for bad in crate::decimal::REFUSED_EXAMPLES {
                for surface in [Surface::Cli, Surface::Server, Surface::Environment] {
                    let err = o.parse_u64(surface, bad).unwrap_err();
                    assert_eq!(err.code(), ErrorCode::InvalidArgument);
                    let name = o.name(surface);
                    assert!(err.message().starts_with(&*name), "{name}: {err}");
                }
            }
        }
        assert_eq!(
            WORKER_ID
                .parse_u64(Surface::Environment, "+3")
                .unwrap_err()
                .message()
                .split(" (")
                .next(),
            Some("FLAKERY_WORKER_ID='+3' is not a non-negative integer in plain decimal")
        );
    }

    #[test]
    fn a_field_is_name_equals_canonical_decimal() {
        assert_eq!(parse_field(" version =2"), Ok(("version".to_string(), 2)));
        assert_eq!(parse_field("v=0"), Ok(("v".to_string(), 0)));
        let err = parse_field("version").unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidArgument);
        assert!(
            err.message()
                .starts_with("--field 'version' is not NAME=VALUE"),
            "{err}"
        );
        for bad in crate::decimal::REFUSED_EXAMPLES {
            let err = parse_field(&format!("v={bad}")).unwrap_err();
            assert!(err.message().starts_with("--field v="), "{err}");
        }
    }

    #[test]
    fn a_client_duration_is_refused_as_each_surface_writes_it() {
        let durations: Vec<_> = CLIENT_OPTIONS
            .iter()
            .filter(|o| o.kind == ClientKind::Duration)
            .collect();
        assert_eq!(durations.len(), 3);
        for o in durations {
            assert!(o.range.starts_with("1 ms to 2^64-1 ms"), "{}", o.rust);
            for surface in [Surface::Python, Surface::Node] {
                assert_eq!(o.millis(surface, 1), Ok(Duration::from_millis(1)));
                assert_eq!(
                    o.millis(surface, u64::MAX),
                    Ok(Duration::from_millis(u64::MAX))
                );
                let err = o.millis(surface, 0).unwrap_err();
                assert_eq!(err.code(), ErrorCode::InvalidArgument);
                assert_eq!(
                    message_on(&err, surface),
                    format!("{} must be at least 1, not 0", o.name(surface))
                );
            }
            assert_eq!(o.duration_ms(Duration::from_micros(1_500)), Ok(1));
            for bad in [Duration::ZERO, Duration::from_micros(999), Duration::MAX] {
                let err = o.duration_ms(bad).unwrap_err();
                assert_eq!(err.code(), ErrorCode::InvalidArgument);
                assert_eq!(
                    err.message(),
                    format!("{} must be from {}, not {bad:?}", o.rust, o.range)
                );
            }
        }
        // `timeout` has no `_`, so `message_on` leaves the word alone: the name is spelt where
        // the message is made, as the surface writes it.
        let err = TIMEOUT.millis(Surface::Python, 0).unwrap_err();
        assert_eq!(
            message_on(&err, Surface::Python),
            "timeout_ms must be at least 1, not 0"
        );
        let err = MAX_AGE.millis(Surface::Node, 0).unwrap_err();
        assert_eq!(
            message_on(&err, Surface::Node),
            "maxAgeMs must be at least 1, not 0"
        );
    }

    /// Every generator option that is optional and a duration refuses 0 with the client's
    /// message: 0 is "not given" on no surface.
    #[test]
    fn an_optional_generator_duration_refuses_0() {
        let optional: Vec<_> = OPTIONS
            .iter()
            .filter(|o| o.kind == Kind::OptionalMillis)
            .collect();
        assert_eq!(optional.len(), 1);
        for o in optional {
            assert_eq!(o.optional_millis(Surface::Rust, 1), Ok(1));
            for surface in [Surface::Python, Surface::Node, Surface::C, Surface::Go] {
                let err = o.optional_millis(Surface::Rust, 0).unwrap_err();
                assert_eq!(err.code(), ErrorCode::InvalidArgument);
                assert_eq!(
                    message_on(&err, surface),
                    format!("{} must be at least 1, not 0", o.name(surface))
                );
            }
        }
        let err = MAX_AGE.millis(Surface::Node, 0).unwrap_err();
        assert_eq!(
            message_on(&err, Surface::Node),
            "maxAgeMs must be at least 1, not 0"
        );
    }
}
