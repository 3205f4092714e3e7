//! An option's value as a surface writes it, read by the core's one parser: an integer flag or
//! variable, a constant field `NAME=VALUE`, a default of the table.

use super::{OptionKind, OptionSpec, Surface, FIELDS};
use crate::error::{Error, Result};

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
    use crate::option_table::{OPTIONS, WORKER_ID};

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
}
