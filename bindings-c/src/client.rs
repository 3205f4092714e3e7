//! `flakery_client`: IDs from `flakery serve` instances through the Rust client
//! (`flakery-client`), with the calls of a generator. Argument and error conversion only.

use std::ffi::c_char;
use std::sync::Arc;

use flakery_client_rs::{Client, Options};
use flakery_core::option_table::{
    ClientOptionSpec, MAX_AGE, MAX_BLOCK, MIN_BLOCK, PREFER_FIRST, PREFETCH, REQUEST_TIMEOUT,
    SEND_TOKEN_IN_CLEAR, TIMEOUT,
};
use flakery_core::{Error, Generator, Layout, Surface};

use crate::error::{flakery_status, guard, null, out_slice, str_arg, write_string};
use crate::options::flakery_options;
use crate::parts::flakery_parts;

/// A client of one or more `flakery serve` instances: IDs come in blocks that it holds
/// locally, so `flakery_client_next_id` is a local call in the steady state (docs/client.md).
///
/// Made by `flakery_client_new`, released by `flakery_client_free`. Thread-safe as a
/// `flakery_generator` is: any number of threads may call it at once; only
/// `flakery_client_free` must not run while another call on the same client is in progress.
pub struct flakery_client {
    inner: Client,
}

/// The options of `flakery_client_new` (docs/client.md#options). Fill it with
/// `flakery_client_options_init(&opts)` first, which sets `struct_size` (as
/// `flakery_options_init` does) and every member to its default from the options table, then
/// set what you need. A duration or block size of 0 is refused, as on every surface: it is
/// never read as "the default". Strings are borrowed only during `flakery_client_new`; NULL
/// means "not given".
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct flakery_client_options {
    /// `sizeof(flakery_client_options)` of the header the caller was compiled with; set by
    /// `flakery_client_options_init`. Never change it.
    pub struct_size: usize,
    /// The servers' base URLs, `http://host:port` or `https://host:port`, separated by
    /// commas. NULL: `FLAKERY_SERVERS`.
    pub servers: *const c_char,
    /// The bearer token. NULL: `FLAKERY_SERVER_TOKEN`, else none. Never in an error message.
    pub token: *const c_char,
    /// The servers' layout spec, for decoding (checked against each server). NULL:
    /// `FLAKERY_LAYOUT`, else "twitter".
    pub layout: *const c_char,
    /// An ID held longer than this is dropped, never handed out (default 10000, at least 1).
    pub max_age_ms: u64,
    /// Every call returns or fails within this (default 5000, at least 1); a batch within
    /// this plus the time its count takes at the layout's rate.
    pub timeout_ms: u64,
    /// One request to one server may take this long before the next is asked (default 1000,
    /// at least 1; at most `timeout_ms` is used).
    pub request_timeout_ms: u64,
    /// The smallest block of IDs asked for (the size adapts to the rate of use): default 16,
    /// 1 to `max_block`.
    pub min_block: usize,
    /// The largest block of IDs asked for: default 10000, `min_block` to 100000.
    pub max_block: usize,
    /// Do not ask for the next block before the stock runs out (default false: prefetch).
    pub no_prefetch: bool,
    /// Ask the servers in the order given, the first first (default false).
    pub prefer_first: bool,
    /// The options of a generator used when every server is unavailable
    /// (`FLAKERY_STATUS_SERVERS_UNAVAILABLE`), filled by `flakery_options_init`; NULL: none.
    /// `flakery_client_new` makes the generator, which the client owns. Give it a node ID no
    /// server ever holds (its own datacenter ID, or a worker ID kept for fallbacks): only then
    /// are its IDs unique against the servers'.
    pub fallback: *const flakery_options,
    /// The CAs (a PEM file) an `https://` server's certificate must be signed by. NULL:
    /// `FLAKERY_SERVER_CA`, else the system's roots.
    pub server_ca: *const c_char,
    /// A certificate (PEM, with its chain) for servers that ask for one (mutual TLS). NULL:
    /// `FLAKERY_CLIENT_CERT`, else none.
    pub client_cert: *const c_char,
    /// The PEM file of its private key. NULL: `FLAKERY_CLIENT_KEY`. Only its path is ever
    /// shown in a message.
    pub client_key: *const c_char,
    /// Send the token over `http://` to a host that is not loopback (default false: such a
    /// client is refused, `FLAKERY_STATUS_INVALID_ARGUMENT`).
    pub send_token_in_clear: bool,
    // A member added later goes here, at the end, with all-zero bytes as its default.
}

/// The size of the first version of the struct (up to `fallback`), which this library still
/// reads: its later members are then zero, their default.
const FIRST_SIZE: usize = std::mem::offset_of!(flakery_client_options, server_ca);

/// A `struct_size` above this is no `flakery_client_options` of any version.
const MAX_STRUCT_SIZE: usize = 4096;

/// The bytes of the caller's struct this library reads: its own struct's, or the first
/// version's (`FIRST_SIZE`); a newer header's members past ours must be zero (unset).
///
/// # Safety
/// `opts` is non-NULL and its `struct_size` bytes are readable.
unsafe fn checked_size(opts: *const flakery_client_options, size: usize) -> Result<(), Error> {
    let ours = std::mem::size_of::<flakery_client_options>();
    if size == ours || size == FIRST_SIZE {
        return Ok(());
    }
    if size < ours || size > MAX_STRUCT_SIZE {
        return Err(Error::invalid_argument(format!(
            "opts->struct_size is {size}, which is the sizeof no version of \
             flakery_client_options ({ours} bytes): fill the options with \
             flakery_client_options_init before setting any member"
        )));
    }
    // SAFETY: the caller's struct has `size` bytes, as it says.
    let newer = unsafe { std::slice::from_raw_parts(opts.cast::<u8>().add(ours), size - ours) };
    if newer.iter().any(|&byte| byte != 0) {
        return Err(Error::invalid_argument(format!(
            "opts->struct_size is {size}: the program was compiled with a newer flakery.h than \
             this library (flakery {}) and sets a client option this library does not have",
            env!("CARGO_PKG_VERSION")
        )));
    }
    Ok(())
}

/// A numeric default of the options table (core/src/option_table/client.rs), which has one
/// for every duration and block size (its own test holds it).
fn table_default(spec: &ClientOptionSpec) -> u64 {
    spec.default_u64().unwrap_or_default()
}

/// A flag's default in the table, `true` or `false`.
fn table_flag(spec: &ClientOptionSpec) -> bool {
    spec.default == Some("true")
}

impl Default for flakery_client_options {
    /// Every default of the options table; NULL for what is "not given".
    fn default() -> Self {
        flakery_client_options {
            struct_size: std::mem::size_of::<flakery_client_options>(),
            servers: std::ptr::null(),
            token: std::ptr::null(),
            layout: std::ptr::null(),
            max_age_ms: table_default(&MAX_AGE),
            timeout_ms: table_default(&TIMEOUT),
            request_timeout_ms: table_default(&REQUEST_TIMEOUT),
            min_block: table_default(&MIN_BLOCK) as usize,
            max_block: table_default(&MAX_BLOCK) as usize,
            no_prefetch: !table_flag(&PREFETCH),
            prefer_first: table_flag(&PREFER_FIRST),
            fallback: std::ptr::null(),
            server_ca: std::ptr::null(),
            client_cert: std::ptr::null(),
            client_key: std::ptr::null(),
            send_token_in_clear: table_flag(&SEND_TOKEN_IN_CLEAR),
        }
    }
}

/// Fills the caller's `flakery_client_options` of `size` bytes with every default of the
/// options table (docs/client.md#options) and sets its `struct_size` to `size`; the bytes of
/// a newer header past this library's struct are set to zero, their "not given". Call it
/// through `flakery_client_options_init(&opts)`. Errors: `FLAKERY_STATUS_INVALID_ARGUMENT` for
/// NULL or a `size` smaller than the first version's (nothing is written then).
#[no_mangle]
pub unsafe extern "C" fn flakery_client_options_init_sized(
    opts: *mut flakery_client_options,
    size: usize,
) -> flakery_status {
    guard(|| {
        if opts.is_null() {
            return Err(null("opts"));
        }
        let ours = std::mem::size_of::<flakery_client_options>();
        if size != FIRST_SIZE && !(ours..=MAX_STRUCT_SIZE).contains(&size) {
            return Err(Error::invalid_argument(format!(
                "size {size} is the sizeof no version of flakery_client_options"
            )));
        }
        let defaults = flakery_client_options {
            struct_size: size,
            ..flakery_client_options::default()
        };
        // SAFETY: the caller's struct is writable for `size` bytes, as the header requires.
        // An untyped copy, so the padding of `defaults` may be copied.
        unsafe {
            std::ptr::copy_nonoverlapping(
                std::ptr::addr_of!(defaults).cast::<u8>(),
                opts.cast::<u8>(),
                ours.min(size),
            );
            if size > ours {
                std::ptr::write_bytes(opts.cast::<u8>().add(ours), 0, size - ours);
            }
        }
        Ok(())
    })
}

/// A string member: NULL is "not given".
///
/// # Safety
/// `ptr` is NULL or a NUL-terminated string.
unsafe fn optional_str(ptr: *const c_char, name: &str) -> Result<Option<String>, Error> {
    if ptr.is_null() {
        return Ok(None);
    }
    // SAFETY: as the caller promises.
    Ok(Some(unsafe { str_arg(ptr, name) }?.to_string()))
}

/// The client's options from the caller's struct (NULL: every default).
///
/// # Safety
/// `opts` is NULL or a struct filled by `flakery_client_options_init`.
unsafe fn read(opts: *const flakery_client_options) -> Result<Options, Error> {
    let mut options = Options::default();
    if opts.is_null() {
        return Ok(options);
    }
    // SAFETY: `struct_size` is the first member of every version of the struct.
    let size = unsafe { std::ptr::addr_of!((*opts).struct_size).read() };
    // SAFETY: the caller's struct has `size` bytes.
    unsafe { checked_size(opts, size)? };
    // The caller's bytes over a struct of ours whose later members are zero (not given),
    // for a struct of the first version.
    let mut whole = flakery_client_options {
        server_ca: std::ptr::null(),
        client_cert: std::ptr::null(),
        client_key: std::ptr::null(),
        send_token_in_clear: false,
        ..flakery_client_options::default()
    };
    // SAFETY: the caller's struct has `size` bytes, at least `FIRST_SIZE` (`checked_size`);
    // ours has `size_of` bytes.
    unsafe {
        std::ptr::copy_nonoverlapping(
            opts.cast::<u8>(),
            std::ptr::addr_of_mut!(whole).cast::<u8>(),
            size.min(std::mem::size_of::<flakery_client_options>()),
        );
    }
    let c = &whole;
    // SAFETY: the header requires NULL or NUL-terminated strings.
    if let Some(servers) = unsafe { optional_str(c.servers, "servers")? } {
        options.servers = flakery_client_rs::split_servers(&servers);
        if options.servers.is_empty() {
            return Err(Error::invalid_argument(
                "servers names no URL: give one or more, separated by commas, or NULL",
            ));
        }
    }
    // SAFETY: as above.
    options.token = unsafe { optional_str(c.token, "token")? };
    // SAFETY: as above.
    if let Some(layout) = unsafe { optional_str(c.layout, "layout")? } {
        options.layout = Some(Layout::parse(&layout)?);
    }
    // Every member is the caller's: `flakery_client_options_init` wrote the table's defaults,
    // so a 0 left here was set (or the struct was never filled) and is refused as every
    // surface refuses it, named as C spells it.
    options.max_age = MAX_AGE.millis(Surface::C, c.max_age_ms)?;
    options.timeout = TIMEOUT.millis(Surface::C, c.timeout_ms)?;
    options.request_timeout = REQUEST_TIMEOUT.millis(Surface::C, c.request_timeout_ms)?;
    options.min_block = c.min_block;
    options.max_block = c.max_block;
    options.prefetch = !c.no_prefetch;
    options.prefer_first = c.prefer_first;
    // SAFETY: as above.
    options.server_ca = unsafe { optional_str(c.server_ca, "server_ca")? }.map(Into::into);
    // SAFETY: as above.
    options.client_cert = unsafe { optional_str(c.client_cert, "client_cert")? }.map(Into::into);
    // SAFETY: as above.
    options.client_key = unsafe { optional_str(c.client_key, "client_key")? }.map(Into::into);
    options.send_token_in_clear = c.send_token_in_clear;
    if !c.fallback.is_null() {
        // SAFETY: the header requires a `flakery_options` filled by `flakery_options_init`.
        let generator = unsafe { crate::options::read(c.fallback)? };
        crate::install_coordinators();
        options.fallback = Some(Arc::new(Generator::new(generator)?));
    }
    Ok(options)
}

/// Makes a client from `opts` (NULL: every option from the environment, `FLAKERY_SERVERS`
/// and `FLAKERY_SERVER_TOKEN`) and stores it in `*out`. It asks no server yet: a server that
/// is down is found by the first call. On failure `*out` is left unchanged; errors:
/// `FLAKERY_STATUS_INVALID_ARGUMENT` (no server, a URL that is not `http://host:port`, a bad
/// token or limit), `FLAKERY_STATUS_INVALID_LAYOUT`. Free it with `flakery_client_free`.
#[no_mangle]
pub unsafe extern "C" fn flakery_client_new(
    opts: *const flakery_client_options,
    out: *mut *mut flakery_client,
) -> flakery_status {
    guard(|| {
        if out.is_null() {
            return Err(null("out"));
        }
        // SAFETY: as the header requires.
        let options = unsafe { read(opts)? };
        let inner = Client::new(options)?;
        let raw = Box::into_raw(Box::new(flakery_client { inner }));
        // SAFETY: `out` is non-NULL and writable, as the header asks.
        unsafe { out.write(raw) };
        Ok(())
    })
}

/// Releases a client: the IDs it holds are dropped, never given back. Never waits for a
/// server. NULL is allowed and does nothing; no other thread may be using the client.
#[no_mangle]
pub unsafe extern "C" fn flakery_client_free(client: *mut flakery_client) {
    if client.is_null() {
        return;
    }
    let _ = guard(|| {
        // SAFETY: the header requires a pointer from `flakery_client_new`, not yet freed.
        drop(unsafe { Box::from_raw(client) });
        Ok(())
    });
}

/// Stops the client while keeping the handle valid: the IDs it holds are dropped, every
/// later call fails with `FLAKERY_STATUS_INVALID_ARGUMENT`. Closing twice is fine.
#[no_mangle]
pub unsafe extern "C" fn flakery_client_close(client: *const flakery_client) -> flakery_status {
    guard(|| {
        // SAFETY: the header requires NULL or a live client.
        unsafe { client_ref(client)? }.close();
        Ok(())
    })
}

/// One new ID into `*out`: from the client's stock in the steady state; it waits for a block
/// at most the client's `timeout_ms`. IDs increase within a block; across servers they may
/// interleave (docs/client.md#what-is-guaranteed). Errors: `FLAKERY_STATUS_SERVERS_UNAVAILABLE`,
/// `FLAKERY_STATUS_UNAUTHORIZED`, `FLAKERY_STATUS_BAD_ANSWER`, `FLAKERY_STATUS_TLS_FAILED`,
/// `FLAKERY_STATUS_INVALID_ARGUMENT` (NULL pointers, a closed client).
#[no_mangle]
pub unsafe extern "C" fn flakery_client_next_id(
    client: *const flakery_client,
    out: *mut i64,
) -> flakery_status {
    guard(|| {
        // SAFETY: the header requires NULL or a live client.
        let client = unsafe { client_ref(client)? };
        if out.is_null() {
            return Err(null("out"));
        }
        let id = client.next_id()?;
        // SAFETY: `out` is non-NULL and writable, as the header asks.
        unsafe { out.write(id) };
        Ok(())
    })
}

/// `n` new IDs into `out[0]` to `out[n-1]`, as `flakery_client_next_id` gives them. `out`
/// must not be NULL (even when `n` is 0). On failure `out` is left unchanged.
#[no_mangle]
pub unsafe extern "C" fn flakery_client_next_ids(
    client: *const flakery_client,
    out: *mut i64,
    n: usize,
) -> flakery_status {
    guard(|| {
        // SAFETY: the header requires NULL or a live client.
        let client = unsafe { client_ref(client)? };
        // SAFETY: the header requires `out` to hold `n` writable int64_t.
        let out = unsafe { out_slice(out, n)? };
        // Into a buffer of the client's, copied when every ID came: a failure leaves `out`
        // as it was, as `flakery_next_ids` does.
        out.copy_from_slice(&client.next_ids(n)?);
        Ok(())
    })
}

/// Takes `id` apart under the servers' layout into `*out`, as `flakery_generator_decode`
/// does.
#[no_mangle]
pub unsafe extern "C" fn flakery_client_decode(
    client: *const flakery_client,
    id: i64,
    out: *mut flakery_parts,
) -> flakery_status {
    guard(|| {
        // SAFETY: the header requires NULL or a live client.
        let decoded = unsafe { client_ref(client)? }.decode(id)?;
        if out.is_null() {
            return Err(null("out"));
        }
        // SAFETY: non-NULL and writable, as the header asks.
        unsafe { out.write(flakery_parts::from(&decoded)) };
        Ok(())
    })
}

/// The servers' layout as its canonical spec string, written into `buf` as
/// `flakery_generator_layout` writes it.
#[no_mangle]
pub unsafe extern "C" fn flakery_client_layout(
    client: *const flakery_client,
    buf: *mut c_char,
    len: usize,
    written: *mut usize,
) -> flakery_status {
    guard(|| {
        // SAFETY: the header requires NULL or a live client.
        let layout = unsafe { client_ref(client)? }.layout().to_string();
        // SAFETY: the header requires `buf` of `len` writable bytes and a writable `written`.
        unsafe { write_string(&layout, buf, len, written) }
    })
}

/// Borrows the client behind a C pointer.
///
/// # Safety
/// `client` is NULL or came from `flakery_client_new` and was not freed.
unsafe fn client_ref<'a>(client: *const flakery_client) -> Result<&'a Client, Error> {
    // SAFETY: as the caller promises.
    match unsafe { client.as_ref() } {
        Some(client) => Ok(&client.inner),
        None => Err(null("client")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flakery_core::option_table::{ClientKind, CLIENT_OPTIONS};
    use flakery_core::ErrorCode;

    /// `flakery_client_options_init`'s defaults are the table's, member by member, named as
    /// the table names C's members; what has no default is NULL.
    #[test]
    fn the_defaults_are_the_tables() {
        let mut c = std::mem::MaybeUninit::<flakery_client_options>::uninit();
        let size = std::mem::size_of::<flakery_client_options>();
        // SAFETY: a struct of `size` bytes.
        let status = unsafe { flakery_client_options_init_sized(c.as_mut_ptr(), size) };
        assert_eq!(status, flakery_status::Ok);
        // SAFETY: filled by the call above.
        let c = unsafe { c.assume_init() };
        assert_eq!(c.struct_size, size);
        for o in CLIENT_OPTIONS {
            let number = || o.default_u64().unwrap_or_else(|| panic!("{}", o.c));
            match o.c {
                "max_age_ms" => assert_eq!(c.max_age_ms, number()),
                "timeout_ms" => assert_eq!(c.timeout_ms, number()),
                "request_timeout_ms" => assert_eq!(c.request_timeout_ms, number()),
                "min_block" => assert_eq!(c.min_block as u64, number()),
                "max_block" => assert_eq!(c.max_block as u64, number()),
                "no_prefetch" => assert_eq!(Some((!c.no_prefetch).to_string().as_str()), o.default),
                "prefer_first" => assert_eq!(Some(c.prefer_first.to_string().as_str()), o.default),
                "send_token_in_clear" => {
                    assert_eq!(Some(c.send_token_in_clear.to_string().as_str()), o.default)
                }
                "servers" | "token" | "layout" | "fallback" | "server_ca" | "client_cert"
                | "client_key" => assert_eq!(o.default, None),
                other => panic!("the table's C member {other} is not written here"),
            }
        }
        assert!(c.servers.is_null() && c.token.is_null() && c.layout.is_null());
        assert!(c.fallback.is_null());
        assert!(c.server_ca.is_null() && c.client_cert.is_null() && c.client_key.is_null());
    }

    /// A program compiled with the first header (no TLS members) still makes clients: its
    /// smaller struct is read, the TLS members as not given; a size between is refused.
    #[test]
    fn the_first_versions_struct_is_read() {
        let mut c = flakery_client_options::default();
        // SAFETY: a struct of at least `FIRST_SIZE` bytes.
        let status = unsafe { flakery_client_options_init_sized(&mut c, FIRST_SIZE) };
        assert_eq!(status, flakery_status::Ok);
        assert_eq!(c.struct_size, FIRST_SIZE);
        // Past the first version's bytes, a token over plain HTTP to another host would be
        // sent if the library read garbage as `send_token_in_clear`.
        c.send_token_in_clear = true;
        c.servers = c"http://10.0.0.1:9".as_ptr();
        c.token = c"s3cret".as_ptr();
        // SAFETY: as above.
        let options = unsafe { read(&c) }.unwrap();
        assert!(!options.send_token_in_clear);
        c.struct_size = FIRST_SIZE + 1;
        // SAFETY: as above.
        assert!(unsafe { read(&c) }.is_err());
    }

    /// A duration of 0 is the caller's and is refused with the table's message in C's names,
    /// never read as the default; 1 is taken.
    #[test]
    fn a_zero_duration_is_refused_as_c_names_it() {
        let mut seen = 0;
        for o in CLIENT_OPTIONS
            .iter()
            .filter(|o| o.kind == ClientKind::Duration)
        {
            seen += 1;
            for (value, refused) in [(0, true), (1, false)] {
                let mut c = flakery_client_options {
                    servers: c"http://127.0.0.1:9".as_ptr(),
                    ..flakery_client_options::default()
                };
                match o.c {
                    "max_age_ms" => c.max_age_ms = value,
                    "timeout_ms" => c.timeout_ms = value,
                    "request_timeout_ms" => c.request_timeout_ms = value,
                    other => panic!("{other}"),
                }
                // SAFETY: a struct of this library's own size.
                let read = unsafe { read(&c) };
                match read {
                    Err(err) if refused => {
                        assert_eq!(err.code(), ErrorCode::InvalidArgument);
                        assert_eq!(err.message(), format!("{} must be at least 1, not 0", o.c));
                    }
                    Ok(_) if !refused => {}
                    other => panic!("{} = {value}: {:?}", o.c, other.err()),
                }
            }
        }
        assert_eq!(
            seen, 3,
            "a duration of the table that this test does not set"
        );
    }
}
