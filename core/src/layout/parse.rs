//! Reading a spec string (docs/spec.md#layouts): a preset name, a preset with options, or a
//! field list with options. Printing one back is `named.rs`'s.

use std::str::FromStr;

use super::field::{Field, FieldKind, Slot};
use super::presets::{preset_names, spec_of};
use super::shape::Layout;
use super::units::TimeUnit;
use crate::error::{Error, Result};
use crate::timestamp::parse_instant_ms;

impl Layout {
    /// Parses a spec string: a preset name, a preset with options, or a field list with options.
    pub fn parse(spec: &str) -> Result<Layout> {
        let mut parts = spec.split(';');
        let head = parts.next().unwrap_or("").trim();
        if head.is_empty() {
            return Err(Error::invalid_layout(format!(
                "layout '{spec}' is empty: give a preset name ({}) or a field list such as \
                 time:41,worker:10,sequence:12;epoch=1288834974657",
                preset_names().join(", ")
            )));
        }
        let (fields, mut epoch, mut unit, mut unsigned) = if head.contains(':') {
            (parse_fields(head)?, None, None, false)
        } else {
            // A preset's own spec is a field list: this recursion is one level deep.
            let base = Layout::parse(spec_of(head)?)?;
            (
                base.fields().to_vec(),
                Some(base.epoch_ms()),
                Some(base.unit()),
                base.is_unsigned(),
            )
        };
        let mut seen_epoch = false;
        let mut seen_unit = false;
        let mut seen_unsigned = false;
        for option in parts {
            let option = option.trim();
            let (key, value) = option.split_once('=').ok_or_else(|| {
                Error::invalid_layout(format!(
                    "option '{option}' in layout '{spec}' is not key=value"
                ))
            })?;
            let (key, value) = (key.trim(), value.trim());
            match key {
                "epoch" if !seen_epoch => {
                    seen_epoch = true;
                    epoch = Some(parse_instant_ms(value).map_err(|e| {
                        Error::invalid_layout(format!("epoch in layout '{spec}': {e}"))
                    })?);
                }
                "unit" if !seen_unit => {
                    seen_unit = true;
                    unit = Some(TimeUnit::parse(value)?);
                }
                "unsigned" if !seen_unsigned => {
                    seen_unsigned = true;
                    unsigned = match value {
                        "true" => true,
                        "false" => false,
                        _ => {
                            return Err(Error::invalid_layout(format!(
                                "unsigned='{value}' in layout '{spec}' is not true or false"
                            )))
                        }
                    };
                }
                "epoch" | "unit" | "unsigned" => {
                    return Err(Error::invalid_layout(format!(
                        "option '{key}' appears twice in layout '{spec}'"
                    )))
                }
                _ => {
                    return Err(Error::invalid_layout(format!(
                        "unknown option '{key}' in layout '{spec}' (known: epoch, unit, unsigned)"
                    )))
                }
            }
        }
        let epoch = epoch.ok_or_else(|| {
            Error::invalid_layout(format!(
                "layout '{spec}' needs an epoch: add ;epoch=<Unix ms or RFC 3339>"
            ))
        })?;
        Layout::from_fields(fields, epoch, unit.unwrap_or(TimeUnit::Millis), unsigned)
    }
}

impl FromStr for Layout {
    type Err = Error;

    fn from_str(spec: &str) -> Result<Layout> {
        Layout::parse(spec)
    }
}

/// The fields of `name:bits[=value],...`, most significant first, packed down to bit 0.
fn parse_fields(list: &str) -> Result<Vec<Field>> {
    let mut parsed: Vec<(String, u32, u64)> = Vec::new();
    for item in list.split(',') {
        let item = item.trim();
        let (name, rest) = item
            .split_once(':')
            .ok_or_else(|| Error::invalid_layout(format!("field '{item}' is not name:bits")))?;
        let name = name.trim();
        let (bits, default) = match rest.split_once('=') {
            Some((bits, default)) => (bits.trim(), Some(default.trim())),
            None => (rest.trim(), None),
        };
        if name.is_empty()
            || name.len() > 32
            || !name.starts_with(|c: char| c.is_ascii_lowercase())
            || !name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        {
            return Err(Error::invalid_layout(format!(
                "field name '{name}' must be lower-case letters, digits or '_', starting with a letter"
            )));
        }
        let bits = crate::decimal::parse_u64("", bits)
            .ok()
            .and_then(|bits| u32::try_from(bits).ok())
            .ok_or_else(|| {
                Error::invalid_layout(format!(
                    "field '{name}' has width '{bits}', not a number of bits in plain decimal"
                ))
            })?;
        if bits == 0 || bits > 63 {
            return Err(Error::invalid_layout(format!(
                "field '{name}' has {bits} bits; a field has 1 to 63"
            )));
        }
        if parsed.iter().any(|(n, _, _)| n == name) {
            return Err(Error::invalid_layout(format!(
                "field '{name}' appears twice"
            )));
        }
        let default = match default {
            None => 0,
            Some(_) if FieldKind::of_name(name) != FieldKind::Constant => {
                return Err(Error::invalid_layout(format!(
                    "field '{name}' is not a constant and cannot have a value"
                )))
            }
            Some(text) => {
                let value = crate::decimal::parse_u64("", text).map_err(|_| {
                    Error::invalid_layout(format!(
                        "constant '{name}' has value '{text}', not a non-negative integer in \
                         plain decimal"
                    ))
                })?;
                if bits < 64 && value >> bits != 0 {
                    return Err(Error::invalid_layout(format!(
                        "constant '{name}' = {value} does not fit its {bits} bits"
                    )));
                }
                value
            }
        };
        parsed.push((name.to_string(), bits, default));
    }
    let total: u32 = parsed.iter().map(|(_, bits, _)| bits).sum();
    if total > 64 {
        return Err(Error::invalid_layout(format!(
            "fields use {total} bits; an ID has 64"
        )));
    }
    // Fields are listed most significant first and packed down to bit 0.
    let mut shift = total;
    Ok(parsed
        .into_iter()
        .map(|(name, bits, default)| {
            shift -= bits;
            Field {
                kind: FieldKind::of_name(&name),
                name,
                slot: Slot { shift, bits },
                default,
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn custom_layout_round_trips() {
        let spec = "v:2=3,time:40,worker:7,sequence:12;epoch=1700000000000;unit=10ms";
        let l = Layout::parse(spec).unwrap();
        assert_eq!(l.to_string(), spec);
        assert_eq!(l.field("v").unwrap().default, 3);
        assert_eq!(l.total_bits(), 61);
    }

    #[test]
    fn invalid_specs_name_the_bad_part() {
        for (spec, needle) in [
            ("", "empty"),
            ("nope", "unknown preset 'nope'"),
            ("time:41,sequence:12", "needs an epoch"),
            ("time:41,sequence:12;epoch=0;unit=min", "unit 'min'"),
            ("time:41,sequence:12;epoch=0;unit=0ms", "unit '0ms'"),
            ("time:41,sequence:0;epoch=0", "'sequence' has 0 bits"),
            ("time:41,time:3,sequence:2;epoch=0", "'time' appears twice"),
            ("time:41,worker:12,sequence:12;epoch=0", "65 bits"),
            ("worker:10,sequence:12;epoch=0", "needs a 'time'"),
            ("time:41,worker:10;epoch=0", "needs a 'sequence'"),
            (
                "time:41,sequence:12;epoch=0;color=red",
                "unknown option 'color'",
            ),
            ("time:41,Sequence:12;epoch=0", "field name 'Sequence'"),
            ("time:x,sequence:12;epoch=0", "width 'x'"),
            // Canonical decimal only (docs/spec.md#decimal-text).
            ("time:+41,sequence:12;epoch=0", "width '+41'"),
            ("time:041,sequence:12;epoch=0", "width '041'"),
            ("time:41,v:3=+1,sequence:12;epoch=0", "value '+1'"),
            ("time:41,v:3=01,sequence:12;epoch=0", "value '01'"),
            ("twitter;epoch=01288834974657", "leading zero"),
            ("time:41,v:1=2,sequence:12;epoch=0", "does not fit"),
            ("worker:11,time:41,sequence:12;epoch=0", "sign bit"),
            ("twitter;epoch=yesterday", "epoch in layout"),
        ] {
            let err = Layout::parse(spec).unwrap_err();
            assert_eq!(err.code(), crate::ErrorCode::InvalidLayout, "{spec}");
            assert!(
                err.message().contains(needle),
                "{spec}: {} lacks {needle}",
                err.message()
            );
        }
    }
}
