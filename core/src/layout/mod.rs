//! How a 64-bit ID is cut into fields: parsed from a spec string (docs/spec.md#layouts),
//! validated, printable back to a spec string, and able to tell its capacity.
//!
//! The modules depend one way: `field` and `units` (the parts) and `presets` (data) know
//! nothing of the rest; `shape` (the type) builds on the parts; `parse` reads spec strings
//! into a `shape`; `named` parses the presets once and prints a layout by its name;
//! `capacity` tells what a layout can hold.

mod capacity;
mod field;
mod named;
mod parse;
mod presets;
mod shape;
mod units;

pub use capacity::{describe, exhaustion_warning_days, Capacity, DEFAULT_EXHAUSTION_WARNING_DAYS};
pub use field::{Field, FieldKind, Slot};
pub use presets::{preset_names, PRESETS};
pub use shape::Layout;
pub use units::{TimeUnit, MAX_UNIT_MS};
