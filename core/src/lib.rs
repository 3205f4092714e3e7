//! flakery: Snowflake-style 64-bit unique IDs.
//!
//! ```
//! let generator = flakery::Generator::builder().worker_id(3).build()?;
//! let id = generator.next_id()?;
//! let parts = flakery::decode(id, generator.layout())?;
//! assert_eq!(parts.worker_id, 3);
//! # Ok::<(), flakery::Error>(())
//! ```

pub mod clock;
pub mod codec;
pub mod decimal;
mod decoded_json;
mod default_generator;
#[cfg(unix)]
pub mod doctor;
pub mod error;
pub mod fork;
pub mod generator;
pub mod layout;
pub mod lease;
pub mod option_table;
pub mod options;
pub mod text;
pub mod timestamp;
pub mod truncate;

// Paths callers and bindings use since before the lease wing; the modules live in `lease/`.
#[cfg(unix)]
pub use lease::host as host_lease;
pub use lease::node;

pub use clock::{Clock, CoarseSystemClock, FakeClock, SystemClock};
pub use codec::{compose, compose_u64, decode, decode_u64, out_of_range, Decoded, Parts};
pub use decimal::{parse_id, parse_id_u64};
pub use default_generator::{default_generator, next_id, next_ids};
pub use error::{Error, ErrorCode, Result};
pub use generator::{Builder, Generator, OwnWord, SharedWord, SlowPathCounts, StateWord};
pub use layout::{Capacity, Field, FieldKind, Layout, Slot, TimeUnit};
pub use lease::connector::{install_connector, Connector, CoordinatorKind, CoordinatorPlan};
pub use lease::coordinator::{Alarm, Claim, Coordinator, Failure, Token};
pub use lease::environment::Environment;
pub use lease::kept::KeptLease;
pub use lease::node::{Asked, Fence, FixedNode, Grant, NodeId, NodeLease, NodeSource};
pub use lease::resolve::Plan;
pub use lease::status::{LeaseState, LeaseStatus, LossReason};
pub use option_table::{OptionSpec, Surface};
pub use options::{DatabaseKind, DatabaseMode, DatabaseUrl, Options, SequencePolicy};
pub use text::IdFormat;
