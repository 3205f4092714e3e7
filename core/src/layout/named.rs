//! Layouts by name: the presets parsed once and looked up by name, and a layout printed as
//! its canonical spec string, which is its preset's name where it is one.

use std::fmt;
use std::sync::OnceLock;

use super::presets::{index_of, PRESETS};
use super::shape::Layout;
use crate::error::Result;

impl Layout {
    /// One of the presets (docs/spec.md#presets) by name.
    pub fn preset(name: &str) -> Result<Layout> {
        index_of(name).map(|index| parsed_presets()[index].1.clone())
    }

    /// Every preset with its name, in the order of docs/spec.md#presets.
    pub fn presets() -> Vec<(&'static str, Layout)> {
        parsed_presets().to_vec()
    }

    /// The default layout: `twitter`.
    pub fn twitter() -> Layout {
        Layout::preset("twitter").expect("twitter is a preset")
    }

    /// The name of the preset this layout is, if it is one exactly.
    pub fn preset_name(&self) -> Option<&'static str> {
        parsed_presets()
            .iter()
            .find(|(_, preset)| preset == self)
            .map(|(name, _)| *name)
    }
}

impl Default for Layout {
    fn default() -> Self {
        Layout::twitter()
    }
}

/// The canonical spec: a preset's name where the layout is one (with `;epoch=` when only the
/// epoch differs), otherwise the full field list. `Layout::parse` reads it back to an equal
/// layout.
impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let presets = parsed_presets();
        if let Some((name, _)) = presets.iter().find(|(_, p)| p == self) {
            return f.write_str(name);
        }
        if let Some((name, _)) = presets.iter().find(|(_, p)| {
            p.fields() == self.fields()
                && p.unit() == self.unit()
                && p.is_unsigned() == self.is_unsigned()
        }) {
            return write!(f, "{name};epoch={}", self.epoch_ms());
        }
        for (i, field) in self.fields().iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{}:{}", field.name, field.slot.bits)?;
            if field.default != 0 {
                write!(f, "={}", field.default)?;
            }
        }
        write!(
            f,
            ";epoch={};unit={}",
            self.epoch_ms(),
            self.unit().as_str()
        )?;
        if self.is_unsigned() {
            f.write_str(";unsigned=true")?;
        }
        Ok(())
    }
}

/// The presets, parsed once: printing a layout looks its name up among them.
fn parsed_presets() -> &'static [(&'static str, Layout)] {
    static PARSED: OnceLock<Vec<(&'static str, Layout)>> = OnceLock::new();
    PARSED.get_or_init(|| {
        PRESETS
            .iter()
            .map(|(name, spec)| (*name, Layout::parse(spec).expect("presets are valid")))
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_parse_and_print_as_their_names() {
        for (name, layout) in Layout::presets() {
            assert_eq!(layout.to_string(), name);
            assert_eq!(Layout::parse(name).unwrap(), layout);
        }
    }

    #[test]
    fn epoch_override_keeps_the_preset_name() {
        let l = Layout::parse("discord;epoch=2015-01-01T00:00:00Z").unwrap();
        assert_eq!(l.epoch_ms(), 1_420_070_400_000);
        assert_eq!(l.to_string(), "discord");
        let l = Layout::parse("twitter;epoch=1000").unwrap();
        assert_eq!(l.to_string(), "twitter;epoch=1000");
    }
}
