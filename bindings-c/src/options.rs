//! `flakery_options`: every generator option of docs/spec.md#generator-options, read into the core's `Options`.

use std::ffi::{c_char, OsStr};
use std::path::PathBuf;

use flakery_core::options::{DatabaseMode, DatabaseUrl};
use flakery_core::options::{
    DEFAULT_BACKWARDS_TOLERANCE_MS, DEFAULT_MAX_BORROW_MS, DEFAULT_SESSION_TIMEOUT_MS,
};
use flakery_core::{Error, ErrorCode, Layout, Options, SequencePolicy};

use crate::error::{flakery_status, guard, in_slice, str_arg};

/// What a generator does when a tick's sequence numbers are used up (the `sequence_policy`
/// member of `flakery_options`).
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum flakery_sequence_policy {
    /// Wait for the next tick (the default).
    Wait = 0,
    /// Use ticks ahead of the clock, at most `max_borrow_ms` ahead; then wait.
    Borrow = 1,
}

/// The options of `flakery_generator_new`, one member per option of docs/spec.md#generator-options.
///
/// Always fill it with `flakery_options_init(&opts)` first, then set what you need.
/// `flakery_options_init` is an inline function of this header that passes the `sizeof` of the
/// struct your program was compiled with to `flakery_options_init_sized`, which sets
/// `struct_size` to it and every member to its default, and writes nothing past it. So a
/// program built against an older header works with a newer library (the members it does not
/// know take their defaults), and a program built against a newer header works with an older
/// library as long as it leaves the members that library does not know unset (all zero);
/// setting one is `FLAKERY_STATUS_INVALID_ARGUMENT` (docs/c.md#versions). Strings are
/// borrowed only during `flakery_generator_new`; NULL means "not given". Unset options are
/// taken from the environment (`FLAKERY_LAYOUT`, `FLAKERY_WORKER_ID`, `FLAKERY_DATACENTER_ID`,
/// `FLAKERY_ZOOKEEPER`, ...) as docs/spec.md#node-identity says.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct flakery_options {
    /// `sizeof(flakery_options)` of the header the caller was compiled with; set by
    /// `flakery_options_init`. Never change it.
    pub struct_size: usize,
    /// A layout spec: a preset name ("twitter", "discord;epoch=2015-01-01T00:00:00Z") or a
    /// field list ("time:41,worker:10,sequence:12;epoch=1288834974657"). NULL:
    /// `FLAKERY_LAYOUT`, else "twitter".
    pub layout: *const c_char,
    /// Whether `datacenter_id` is given. When neither node ID is given, the node identity
    /// comes from ZooKeeper, the environment or a host-local lease.
    pub has_datacenter_id: bool,
    pub datacenter_id: u64,
    /// Whether `worker_id` is given (see `has_datacenter_id`).
    pub has_worker_id: bool,
    pub worker_id: u64,
    /// A `flakery_sequence_policy`: `FLAKERY_SEQUENCE_POLICY_WAIT` (default) or
    /// `FLAKERY_SEQUENCE_POLICY_BORROW`. Any other value is `FLAKERY_STATUS_INVALID_ARGUMENT`.
    pub sequence_policy: i32,
    /// With `FLAKERY_SEQUENCE_POLICY_BORROW`: how far ahead of the clock IDs may go
    /// (default 1000).
    pub max_borrow_ms: u64,
    /// A clock step backwards up to this is waited out; a larger one fails with
    /// `FLAKERY_STATUS_CLOCK_MOVED_BACKWARDS` (default 1000).
    pub backwards_tolerance_ms: u64,
    /// Start each tick's sequence at a random value instead of 0 (default false).
    pub random_sequence_start: bool,
    /// Values of constant fields (Vesta's "version", "type", "method"): `field_count` names
    /// and values. Both may be NULL when `field_count` is 0.
    pub field_names: *const *const c_char,
    pub field_values: *const u64,
    pub field_count: usize,
    /// ZooKeeper connect string with optional chroot ("127.0.0.1:2181/flakery"). NULL:
    /// `FLAKERY_ZOOKEEPER`.
    pub zookeeper: *const c_char,
    /// The ZooKeeper namespace of the leases (`namespace` in docs/spec.md#generator-options; C++ reserves the
    /// word). NULL: `FLAKERY_NAMESPACE`, else "default".
    pub namespace_: *const c_char,
    /// ZooKeeper session timeout, at least 1. `FLAKERY_SESSION_TIMEOUT_MS_NOT_GIVEN` (what
    /// `flakery_options_init` writes): `FLAKERY_SESSION_TIMEOUT_MS`, else 10000. 0 is
    /// `FLAKERY_STATUS_INVALID_ARGUMENT`, as on every surface, never "not given".
    pub session_timeout_ms: u64,
    /// Directory of the host-local lease files (`flakery.<namespace>.node-<index>`, directly
    /// in it). NULL: `FLAKERY_LEASE_DIR`, else `/run/lock` (outside containers only).
    pub lease_dir: *const c_char,
    /// Database for leased node IDs: "postgres://user:password@host:5432/db" or
    /// "mysql://..." ("mariadb://" is read as "mysql://"). NULL: `FLAKERY_DATABASE_URL`. Its
    /// password never appears in an error message.
    pub database_url: *const c_char,
    /// "lease" (flakery's table, the default) or "baidu" (uid-generator's `WORKER_NODE`).
    /// NULL: `FLAKERY_DATABASE_MODE`, else "lease".
    pub database_mode: *const c_char,
    // A member added later goes here, at the end, with all-zero bytes as its default (an
    // older library zeroes the bytes it does not know), and its end joins `LAYOUT_ENDS`.
}

/// Where each layout of `flakery_options` there has been ends (after its last member, before
/// any padding), oldest first; the last is this library's own. A caller's `struct_size` up to
/// this library's size must be one of them, rounded up to the struct's alignment, as its
/// compiler's `sizeof` does.
const LAYOUT_ENDS: [usize; 2] = [
    // The first layout, 17 members: `struct_size` to `lease_dir` (the C ABI as first built).
    std::mem::offset_of!(flakery_options, database_url),
    // 19 members: + `database_url`, `database_mode`.
    std::mem::size_of::<flakery_options>(),
];

/// The members of this library's `flakery_options`, for the message to a newer program
/// (src/header_test.rs counts them in the header).
pub(crate) const MEMBERS: usize = 19;

/// A `struct_size` above this is no `flakery_options` of any version (most likely a struct
/// that `flakery_options_init` never filled); it is refused before a byte past the library's
/// own size is read.
const MAX_STRUCT_SIZE: usize = 4096;

/// How many of the caller's bytes this library takes as members, for a `struct_size` of
/// `size`: the end of the caller's layout when it is not newer than this library's, else this
/// library's whole struct (the caller's bytes past it must then be zero).
fn known_bytes(size: usize, name: &str) -> Result<usize, Error> {
    let ours = std::mem::size_of::<flakery_options>();
    if size > ours && size <= MAX_STRUCT_SIZE {
        return Ok(ours);
    }
    let align = std::mem::align_of::<flakery_options>();
    if let Some(&end) = LAYOUT_ENDS
        .iter()
        .find(|end| end.next_multiple_of(align) == size)
    {
        return Ok(end);
    }
    let sizes: Vec<String> = LAYOUT_ENDS
        .iter()
        .map(|end| end.next_multiple_of(align).to_string())
        .collect();
    Err(Error::new(
        ErrorCode::InvalidArgument,
        format!(
            "{name} is {size}, which is the sizeof no version of flakery_options ({} bytes, or \
             more up to {MAX_STRUCT_SIZE} for a newer header): fill the options with \
             flakery_options_init before setting any member, and never change struct_size",
            sizes.join(", ")
        ),
    ))
}

impl Default for flakery_options {
    fn default() -> Self {
        flakery_options {
            struct_size: std::mem::size_of::<flakery_options>(),
            layout: std::ptr::null(),
            has_datacenter_id: false,
            datacenter_id: 0,
            has_worker_id: false,
            worker_id: 0,
            sequence_policy: flakery_sequence_policy::Wait as i32,
            max_borrow_ms: DEFAULT_MAX_BORROW_MS,
            backwards_tolerance_ms: DEFAULT_BACKWARDS_TOLERANCE_MS,
            random_sequence_start: false,
            field_names: std::ptr::null(),
            field_values: std::ptr::null(),
            field_count: 0,
            zookeeper: std::ptr::null(),
            namespace_: std::ptr::null(),
            session_timeout_ms: FLAKERY_SESSION_TIMEOUT_MS_NOT_GIVEN,
            lease_dir: std::ptr::null(),
            database_url: std::ptr::null(),
            database_mode: std::ptr::null(),
        }
    }
}

/// The `session_timeout_ms` of `flakery_options` that is "not given" (the option's default
/// comes from the environment, so the struct cannot hold it): `flakery_options_init` writes
/// it. 0 is no stand-in: it is refused, as on every surface (docs/spec.md#generator-options).
/// No ZooKeeper session timeout is this long (ZooKeeper's is a 32-bit count of ms).
pub const FLAKERY_SESSION_TIMEOUT_MS_NOT_GIVEN: u64 = u64::MAX;

// The header documents 10000 as the default of a timeout not given; keep that honest.
const _: () = assert!(DEFAULT_SESSION_TIMEOUT_MS == 10_000);

/// Fills the caller's `flakery_options` of `size` bytes (its `sizeof`) with every default and
/// sets its `struct_size` to `size`; writes nothing past `size` bytes. Members this library
/// does not know (a program compiled with a newer header) are set to zero, their default.
/// Call it through `flakery_options_init(&opts)`, which passes the size for you. Errors:
/// `FLAKERY_STATUS_INVALID_ARGUMENT` for NULL or a `size` that is no version's `sizeof`
/// (nothing is written then).
#[no_mangle]
pub unsafe extern "C" fn flakery_options_init_sized(
    opts: *mut flakery_options,
    size: usize,
) -> flakery_status {
    guard(|| {
        if opts.is_null() {
            return Err(crate::error::null("opts"));
        }
        let known = known_bytes(size, "size")?;
        let defaults = flakery_options {
            struct_size: size,
            ..flakery_options::default()
        };
        let out = opts.cast::<u8>();
        // SAFETY: the caller's struct is writable for `size` bytes, as the header requires;
        // `known` is at most `size` and at most the size of `defaults`. An untyped copy, so
        // the padding of `defaults` may be copied as it is.
        unsafe {
            std::ptr::copy_nonoverlapping(std::ptr::addr_of!(defaults).cast::<u8>(), out, known);
            std::ptr::write_bytes(out.add(known), 0, size - known);
        }
        Ok(())
    })
}

/// The core's `Options` from the caller's struct (NULL: the defaults).
///
/// # Safety
/// `opts` is NULL or points to a `flakery_options` of at least its own `struct_size` bytes,
/// whose pointers are NULL or valid as documented.
pub(crate) unsafe fn read(opts: *const flakery_options) -> Result<Options, Error> {
    if opts.is_null() {
        return Ok(Options::default());
    }
    // SAFETY: `struct_size` is the first member of every version of the struct.
    let size = unsafe { std::ptr::addr_of!((*opts).struct_size).read() };
    let known = known_bytes(size, "opts->struct_size")?;
    let ours = std::mem::size_of::<flakery_options>();
    let newer: &[u8] = if size > ours {
        // SAFETY: the caller's struct has `size` bytes, as it says; `known == ours`.
        unsafe { std::slice::from_raw_parts(opts.cast::<u8>().add(known), size - known) }
    } else {
        &[]
    };
    if let Some(at) = newer.iter().position(|&byte| byte != 0) {
        return Err(Error::new(
            ErrorCode::InvalidArgument,
            format!(
                "opts->struct_size is {size}: the program was compiled with a newer flakery.h \
                 than this library (flakery {}, whose flakery_options has {MEMBERS} members in \
                 {known} bytes), and sets an option this library does not have (byte {} is not \
                 zero). Link the library of the header the program was compiled with, or leave \
                 the options after the first {MEMBERS} unset",
                env!("CARGO_PKG_VERSION"),
                known + at
            ),
        ));
    }
    // Members past the caller's layout keep their defaults.
    let mut c = std::mem::MaybeUninit::new(flakery_options::default());
    // SAFETY: `known` bytes of the caller's struct are readable and are whole members of the
    // same layout as ours (`known_bytes`), valid for their types as the header requires.
    let c = unsafe {
        std::ptr::copy_nonoverlapping(opts.cast::<u8>(), c.as_mut_ptr().cast::<u8>(), known);
        c.assume_init()
    };
    let mut options = Options::default();
    if !c.layout.is_null() {
        // SAFETY: non-NULL strings are NUL-terminated, as documented.
        options.layout = Some(Layout::parse(unsafe {
            str_arg(c.layout, "opts->layout")?
        })?);
    }
    options.datacenter_id = c.has_datacenter_id.then_some(c.datacenter_id);
    options.worker_id = c.has_worker_id.then_some(c.worker_id);
    options.sequence_policy = match c.sequence_policy {
        0 => SequencePolicy::Wait,
        1 => SequencePolicy::Borrow,
        other => {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                format!(
                    "opts->sequence_policy is {other}, not FLAKERY_SEQUENCE_POLICY_WAIT (0) or \
                     FLAKERY_SEQUENCE_POLICY_BORROW (1)"
                ),
            ))
        }
    };
    options.max_borrow_ms = c.max_borrow_ms;
    options.backwards_tolerance_ms = c.backwards_tolerance_ms;
    options.random_sequence_start = c.random_sequence_start;
    // SAFETY: the arrays hold `field_count` elements, as documented.
    options.fields = unsafe {
        constant_fields(
            c.field_names,
            c.field_values,
            c.field_count,
            "opts->field_names",
        )?
    };
    // SAFETY: non-NULL strings are NUL-terminated, as documented.
    unsafe {
        options.zookeeper = opt_string(c.zookeeper, "opts->zookeeper")?;
        options.namespace = opt_string(c.namespace_, "opts->namespace_")?;
        if !c.lease_dir.is_null() {
            let bytes = std::ffi::CStr::from_ptr(c.lease_dir).to_bytes();
            options.lease_dir = Some(PathBuf::from(os_str(bytes)));
        }
        if let Some(url) = opt_string(c.database_url, "opts->database_url")? {
            options.database_url = Some(DatabaseUrl::parse(&url)?);
        }
        if let Some(mode) = opt_string(c.database_mode, "opts->database_mode")? {
            options.database_mode = Some(mode.parse::<DatabaseMode>()?);
        }
    }
    // 0 is kept, for the core to refuse with every surface's message.
    options.session_timeout_ms = (c.session_timeout_ms != FLAKERY_SESSION_TIMEOUT_MS_NOT_GIVEN)
        .then_some(c.session_timeout_ms);
    Ok(options)
}

/// Names and values of constant fields from two parallel C arrays.
///
/// # Safety
/// When `count > 0`, `names` and `values` are NULL or hold `count` elements, each name NULL
/// or NUL-terminated.
pub(crate) unsafe fn constant_fields(
    names: *const *const c_char,
    values: *const u64,
    count: usize,
    what: &str,
) -> Result<Vec<(String, u64)>, Error> {
    // SAFETY: as the caller promises.
    let (names, values) = unsafe {
        (
            in_slice(names, count, what)?,
            in_slice(values, count, &what.replace("names", "values"))?,
        )
    };
    names
        .iter()
        .zip(values)
        .enumerate()
        .map(|(i, (&name, &value))| {
            // SAFETY: as the caller promises.
            let name = unsafe { str_arg(name, &format!("{what}[{i}]"))? };
            Ok((name.to_string(), value))
        })
        .collect()
}

/// # Safety
/// `ptr` is NULL or NUL-terminated.
unsafe fn opt_string(ptr: *const c_char, name: &str) -> Result<Option<String>, Error> {
    if ptr.is_null() {
        return Ok(None);
    }
    // SAFETY: as the caller promises.
    Ok(Some(unsafe { str_arg(ptr, name)? }.to_string()))
}

#[cfg(unix)]
fn os_str(bytes: &[u8]) -> &OsStr {
    std::os::unix::ffi::OsStrExt::from_bytes(bytes)
}

#[cfg(not(unix))]
fn os_str(bytes: &[u8]) -> &OsStr {
    OsStr::new(std::str::from_utf8(bytes).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use flakery_core::option_table::{self as table, OPTIONS};

    /// `flakery_options_init`'s defaults are the table's (core/src/option_table/); an option
    /// with no default of its own is "not given": NULL, `has_* = false`, or
    /// `FLAKERY_SESSION_TIMEOUT_MS_NOT_GIVEN`, never 0 (which the core refuses).
    #[test]
    fn the_defaults_are_the_tables() {
        let c = flakery_options::default();
        for option in OPTIONS {
            let number = |default: Option<&str>| default.map(|d| d.parse::<u64>().unwrap());
            match option.c {
                "max_borrow_ms" => assert_eq!(Some(c.max_borrow_ms), number(option.default)),
                "backwards_tolerance_ms" => {
                    assert_eq!(Some(c.backwards_tolerance_ms), number(option.default))
                }
                "sequence_policy" => {
                    assert_eq!(option.default, Some("wait"));
                    assert_eq!(c.sequence_policy, flakery_sequence_policy::Wait as i32);
                }
                "random_sequence_start" => {
                    assert_eq!(
                        Some(c.random_sequence_start.to_string().as_str()),
                        option.default
                    )
                }
                "session_timeout_ms" => {
                    assert_eq!(option.default, None);
                    assert_eq!(c.session_timeout_ms, FLAKERY_SESSION_TIMEOUT_MS_NOT_GIVEN);
                    assert_ne!(c.session_timeout_ms, 0);
                }
                "datacenter_id" => assert_eq!((option.default, c.has_datacenter_id), (None, false)),
                "worker_id" => assert_eq!((option.default, c.has_worker_id), (None, false)),
                "field_names" => assert_eq!((option.default, c.field_count), (None, 0)),
                "layout" | "zookeeper" | "namespace_" | "lease_dir" | "database_url"
                | "database_mode" => assert_eq!(option.default, None, "{}", option.c),
                other => panic!("the table's C member {other} is not read here"),
            }
        }
        assert_eq!(table::NAMESPACE.c, "namespace_");
    }
}
