//! What an option holds, and the type each surface that cannot read the table declares for
//! it (core/tests/option_surfaces.rs compares): `Kind` for a generator's options, `ClientKind`
//! for a client's, so that a surface that reads one table matches only the kinds it can meet.

/// What both kinds say, for the methods of `OptionSpec` that serve both tables.
pub trait OptionKind: Copy {
    /// Integers, read from text by the core's canonical-decimal parser (`crate::decimal`).
    fn is_integer(self) -> bool;
}

/// What a generator's option holds; each surface has its own type for it.
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
}

impl OptionKind for Kind {
    fn is_integer(self) -> bool {
        Kind::is_integer(self)
    }
}

impl Kind {
    /// Integers, read from text by the core's canonical-decimal parser (`crate::decimal`).
    pub const fn is_integer(self) -> bool {
        matches!(self, Kind::NodeField | Kind::Millis | Kind::OptionalMillis)
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
        }
    }

    /// The type of the member of `flakery_options` in include/flakery.h.
    pub const fn c_type(self) -> &'static str {
        match self {
            Kind::Layout | Kind::Text | Kind::Path | Kind::DatabaseUrl | Kind::DatabaseMode => {
                "const char *"
            }
            Kind::NodeField | Kind::Millis | Kind::OptionalMillis => "uint64_t",
            Kind::SequencePolicy => "int32_t",
            Kind::Flag => "bool",
            Kind::Fields => "const char *const *",
        }
    }

    /// The type of the field of the Go package's `Options`. Strings are pointers, as numbers
    /// are: nil is "not given", and `""` is given, judged as every surface's empty string.
    pub const fn go_type(self) -> &'static str {
        match self {
            Kind::Layout | Kind::Text | Kind::Path | Kind::DatabaseUrl | Kind::DatabaseMode => {
                "*string"
            }
            Kind::NodeField | Kind::Millis | Kind::OptionalMillis => "*uint64",
            Kind::SequencePolicy => "SequencePolicy",
            Kind::Flag => "bool",
            Kind::Fields => "map[string]uint64",
        }
    }
}

/// What a client's option (`client::CLIENT_OPTIONS`) holds; each surface has its own type for
/// it. A flag whose default is true (`prefetch`) is a `Flag` like any other: C and Go, whose
/// zero value is the default, name its negation (`no_prefetch`, `NoPrefetch`), which the
/// table's names say and its tests hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientKind {
    /// The generator's `layout`, the same on both tables.
    Layout,
    /// The servers: base URLs, several at once.
    Servers,
    /// A text that is never shown (the token).
    Secret,
    /// A file's path (a PEM file of TLS's).
    Path,
    /// A `Duration` in Rust and Go, milliseconds elsewhere (whose names say `ms`), with a
    /// default of its own.
    Duration,
    /// A count of IDs (a block size).
    BlockSize,
    Flag,
    /// The fallback generator (in C and Go: the options of one).
    Fallback,
}

impl OptionKind for ClientKind {
    fn is_integer(self) -> bool {
        ClientKind::is_integer(self)
    }
}

impl ClientKind {
    /// Integers (milliseconds, counts) where a surface writes them as numbers.
    pub const fn is_integer(self) -> bool {
        matches!(self, ClientKind::Duration | ClientKind::BlockSize)
    }

    /// The annotation of `flakery.Client`'s keyword in the `.pyi` stub.
    pub const fn python_type(self) -> &'static str {
        match self {
            ClientKind::Layout => Kind::Layout.python_type(),
            ClientKind::Servers => "str | Sequence[str] | None",
            ClientKind::Secret => "str | None",
            ClientKind::Path => Kind::Path.python_type(),
            ClientKind::Duration | ClientKind::BlockSize => "int",
            ClientKind::Flag => "bool",
            ClientKind::Fallback => "Generator | None",
        }
    }

    /// The type of the key of `ClientOptions` in `types.d.ts` (every key is optional).
    pub const fn typescript_type(self) -> &'static str {
        match self {
            ClientKind::Layout => Kind::Layout.typescript_type(),
            ClientKind::Servers => "string | string[]",
            ClientKind::Secret => "string",
            ClientKind::Path => Kind::Path.typescript_type(),
            ClientKind::Duration | ClientKind::BlockSize => "number",
            ClientKind::Flag => "boolean",
            ClientKind::Fallback => "Generator",
        }
    }

    /// The type of the member of `flakery_client_options` in include/flakery.h.
    pub const fn c_type(self) -> &'static str {
        match self {
            ClientKind::Layout => Kind::Layout.c_type(),
            ClientKind::Servers | ClientKind::Secret => "const char *",
            ClientKind::Path => Kind::Path.c_type(),
            ClientKind::Duration => "uint64_t",
            ClientKind::BlockSize => "size_t",
            ClientKind::Flag => "bool",
            ClientKind::Fallback => "const struct flakery_options *",
        }
    }

    /// The type of the field of the Go package's `ClientOptions`.
    pub const fn go_type(self) -> &'static str {
        match self {
            ClientKind::Layout => Kind::Layout.go_type(),
            ClientKind::Servers => "[]string",
            ClientKind::Secret => "*string",
            ClientKind::Path => Kind::Path.go_type(),
            ClientKind::Duration => "time.Duration",
            ClientKind::BlockSize => "int",
            ClientKind::Flag => "bool",
            ClientKind::Fallback => "*Options",
        }
    }
}
