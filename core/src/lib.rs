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
#[cfg(unix)]
mod container;
mod default_generator;
pub mod error;
pub mod fork;
pub mod generator;
#[cfg(unix)]
pub mod host_lease;
pub mod layout;
pub mod node;
pub mod options;
#[cfg(unix)]
mod secure_dir;
pub mod text;
pub mod timestamp;
#[cfg(all(unix, feature = "zookeeper"))]
pub mod zookeeper_lease;

pub use clock::{Clock, FakeClock, SystemClock};
pub use codec::{compose, decode, parse_id, Decoded, Parts};
pub use default_generator::{default_generator, next_id, next_ids};
pub use error::{Error, ErrorCode, Result};
pub use generator::{Builder, Generator};
pub use layout::{Capacity, Field, FieldKind, Layout, Slot, TimeUnit};
pub use node::{Fence, FixedNode, Grant, NodeId, NodeLease, NodeSource};
pub use options::{Options, SequencePolicy};
pub use text::IdFormat;
