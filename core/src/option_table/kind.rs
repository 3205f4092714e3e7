//! What an option holds, and the type each surface that cannot read the table declares for
//! it (core/tests/option_surfaces.rs compares).

/// What an option holds; each surface has its own type for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A layout spec (or a layout object where the language has one).
    Layout,
    /// A node field (datacenter or worker ID): a non-negative integer the layout bounds.
    NodeField,
    /// `wait` or `borrow`.
    SequencePolicy,
    /// A duration in milliseconds with a default of its own.
    Millis,
    /// A duration in milliseconds that is not given unless set (then the environment's).
    OptionalMillis,
    Flag,
    /// Values of constant fields by name.
    Fields,
    /// A text (a connect string, a namespace).
    Text,
    Path,
    /// `postgres://...` or `mysql://...`.
    DatabaseUrl,
    /// `lease` or `baidu`.
    DatabaseMode,
    /// A client's servers: base URLs, several at once.
    Servers,
    /// A text that is never shown (a client's token).
    Secret,
    /// A client's duration: a `Duration` in Rust and Go, milliseconds elsewhere, with a
    /// default of its own.
    Duration,
    /// A count of IDs (a client's block size).
    BlockSize,
    /// A flag whose default is true: C and Go, whose zero value is the default, hold its
    /// negation (`no_prefetch`, `NoPrefetch`).
    FlagOn,
    /// A client's fallback generator (in C and Go: the options of one).
    Fallback,
}

impl Kind {
    /// Integers, read from text by the core's canonical-decimal parser (`crate::decimal`).
    pub const fn is_integer(self) -> bool {
        matches!(
            self,
            Kind::NodeField
                | Kind::Millis
                | Kind::OptionalMillis
                | Kind::Duration
                | Kind::BlockSize
        )
    }

    /// The annotation of `flakery.Generator`'s keyword in the `.pyi` stub.
    pub const fn python_type(self) -> &'static str {
        match self {
            Kind::Layout => "str | Layout | None",
            Kind::NodeField | Kind::OptionalMillis => "int | None",
            Kind::SequencePolicy => "Literal[\"wait\", \"borrow\"]",
            Kind::Millis => "int",
            Kind::Flag => "bool",
            Kind::Fields => "Mapping[str, int] | None",
            Kind::Text | Kind::DatabaseUrl => "str | None",
            Kind::Path => "str | os.PathLike[str] | None",
            Kind::DatabaseMode => "Literal[\"lease\", \"baidu\"] | None",
            Kind::Servers => "str | Sequence[str] | None",
            Kind::Secret => "str | None",
            Kind::Duration => "float",
            Kind::BlockSize => "int",
            Kind::FlagOn => "bool",
            Kind::Fallback => "Generator | None",
        }
    }

    /// The type of the key of `GeneratorOptions` in `types.d.ts` (every key is optional).
    pub const fn typescript_type(self) -> &'static str {
        match self {
            Kind::Layout => "string | LayoutInfo",
            Kind::NodeField => "number | bigint",
            Kind::SequencePolicy => "'wait' | 'borrow'",
            Kind::Millis | Kind::OptionalMillis => "number",
            Kind::Flag => "boolean",
            Kind::Fields => "Record<string, number | bigint>",
            Kind::Text | Kind::Path | Kind::DatabaseUrl => "string",
            Kind::DatabaseMode => "'lease' | 'baidu'",
            Kind::Servers => "string | string[]",
            Kind::Secret => "string",
            Kind::Duration | Kind::BlockSize => "number",
            Kind::FlagOn => "boolean",
            Kind::Fallback => "Generator",
        }
    }

    /// The type of the member of `flakery_options` in include/flakery.h.
    pub const fn c_type(self) -> &'static str {
        match self {
            Kind::Layout
            | Kind::Text
            | Kind::Path
            | Kind::DatabaseUrl
            | Kind::DatabaseMode
            | Kind::Servers
            | Kind::Secret => "const char *",
            Kind::NodeField | Kind::Millis | Kind::OptionalMillis | Kind::Duration => "uint64_t",
            Kind::SequencePolicy => "int32_t",
            Kind::Flag | Kind::FlagOn => "bool",
            Kind::Fields => "const char *const *",
            Kind::BlockSize => "size_t",
            Kind::Fallback => "const struct flakery_options *",
        }
    }

    /// The type of the field of the Go package's `Options`.
    pub const fn go_type(self) -> &'static str {
        match self {
            Kind::Layout
            | Kind::Text
            | Kind::Path
            | Kind::DatabaseUrl
            | Kind::DatabaseMode
            | Kind::Secret => "string",
            Kind::NodeField | Kind::Millis => "*uint64",
            Kind::OptionalMillis => "uint64",
            Kind::SequencePolicy => "SequencePolicy",
            Kind::Flag | Kind::FlagOn => "bool",
            Kind::Fields => "map[string]uint64",
            Kind::Servers => "[]string",
            Kind::Duration => "time.Duration",
            Kind::BlockSize => "int",
            Kind::Fallback => "*Options",
        }
    }
}
