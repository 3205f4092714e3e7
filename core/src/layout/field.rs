//! One field of a layout: what it holds and which bits of the ID it occupies.

/// What a field holds. Any name other than the four known ones is a constant field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FieldKind {
    Time,
    Datacenter,
    Worker,
    Sequence,
    Constant,
}

impl FieldKind {
    /// "time", "datacenter", "worker", "sequence" or "constant".
    pub const fn as_str(self) -> &'static str {
        match self {
            FieldKind::Time => "time",
            FieldKind::Datacenter => "datacenter",
            FieldKind::Worker => "worker",
            FieldKind::Sequence => "sequence",
            FieldKind::Constant => "constant",
        }
    }

    /// The kind a field named `name` in a spec string holds.
    pub(super) fn of_name(name: &str) -> Self {
        match name {
            "time" => FieldKind::Time,
            "datacenter" => FieldKind::Datacenter,
            "worker" => FieldKind::Worker,
            "sequence" => FieldKind::Sequence,
            _ => FieldKind::Constant,
        }
    }
}

/// Where a field sits in the ID.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Slot {
    pub shift: u32,
    pub bits: u32,
}

impl Slot {
    pub const fn max(self) -> u64 {
        if self.bits >= 64 {
            u64::MAX
        } else {
            (1u64 << self.bits) - 1
        }
    }

    #[inline]
    pub const fn get(self, id: u64) -> u64 {
        (id >> self.shift) & self.max()
    }

    #[inline]
    pub const fn put(self, value: u64) -> u64 {
        value << self.shift
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Field {
    pub name: String,
    pub kind: FieldKind,
    pub slot: Slot,
    /// The value a constant field takes unless the generator is given another (`type:1=1`).
    pub default: u64,
}
