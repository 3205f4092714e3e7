//! The presets (docs/spec.md#presets) as data: names and the spec strings that define them.
//! Parsing them, and naming a layout by its preset, is `named.rs`'s.

use crate::error::{Error, Result};

/// The presets (docs/spec.md#presets), as spec strings, in the order `flakery layouts` lists them.
pub const PRESETS: [(&str, &str); 9] = [
    (
        "twitter",
        "time:41,datacenter:5,worker:5,sequence:12;epoch=1288834974657;unit=ms",
    ),
    (
        // Discord's IDs are unsigned, with a 42-bit timestamp (its API reference).
        "discord",
        "time:42,datacenter:5,worker:5,sequence:12;epoch=1420070400000;unit=ms;unsigned=true",
    ),
    (
        "instagram",
        "time:41,worker:13,sequence:10;epoch=1314220021721;unit=ms",
    ),
    (
        "sonyflake",
        "time:39,sequence:8,worker:16;epoch=2014-09-01T00:00:00Z;unit=10ms",
    ),
    (
        // Sonyflake v2's defaults: v1's fields, a new start time.
        "sonyflake-v2",
        "time:39,sequence:8,worker:16;epoch=2025-01-01T00:00:00Z;unit=10ms",
    ),
    (
        "baidu",
        "time:28,worker:22,sequence:13;epoch=2016-05-20T00:00:00+08:00;unit=s",
    ),
    (
        "vesta-max-peak",
        "version:1,type:1=0,method:2,time:30,sequence:20,worker:10;epoch=1420041600000;unit=s",
    ),
    (
        "vesta-min-granularity",
        "version:1,type:1=1,method:2,time:40,sequence:10,worker:10;epoch=1420041600000;unit=ms",
    ),
    (
        "safe53",
        "time:41,worker:6,sequence:6;epoch=2024-01-01T00:00:00Z;unit=ms",
    ),
];

pub fn preset_names() -> Vec<&'static str> {
    PRESETS.iter().map(|(name, _)| *name).collect()
}

/// Where the preset `name` is in `PRESETS`, or `invalid_layout` naming the known ones.
pub(super) fn index_of(name: &str) -> Result<usize> {
    PRESETS.iter().position(|(n, _)| *n == name).ok_or_else(|| {
        Error::invalid_layout(format!(
            "unknown preset '{name}' (known: {})",
            preset_names().join(", ")
        ))
    })
}

/// The spec string of the preset `name`.
pub(super) fn spec_of(name: &str) -> Result<&'static str> {
    index_of(name).map(|index| PRESETS[index].1)
}
