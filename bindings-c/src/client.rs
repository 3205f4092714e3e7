//! `flakery_client`: IDs from `flakery serve` instances through the Rust client
//! (`flakery-client`), with the calls of a generator. Argument and error conversion only.

use std::ffi::c_char;
use std::sync::Arc;
use std::time::Duration;

use flakery_client_rs::{Client, Options};
use flakery_core::{Error, Generator, Layout};

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

/// The options of `flakery_client_new` (docs/client.md#options). Every member's default is
/// all-zero bytes: fill it with `flakery_client_options_init(&opts)` first (which sets
/// `struct_size`, as `flakery_options_init` does), then set what you need. Strings are
/// borrowed only during `flakery_client_new`; NULL means "not given".
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct flakery_client_options {
    /// `sizeof(flakery_client_options)` of the header the caller was compiled with; set by
    /// `flakery_client_options_init`. Never change it.
    pub struct_size: usize,
    /// The servers' base URLs, `http://host:port`, separated by commas. NULL:
    /// `FLAKERY_SERVERS`.
    pub servers: *const c_char,
    /// The bearer token. NULL: `FLAKERY_SERVER_TOKEN`, else none. Never in an error message.
    pub token: *const c_char,
    /// The servers' layout spec, for decoding (checked against each server). NULL:
    /// `FLAKERY_LAYOUT`, else "twitter".
    pub layout: *const c_char,
    /// An ID held longer than this is dropped, never handed out. 0: 10000.
    pub max_age_ms: u64,
    /// Every call returns or fails within this. 0: 5000.
    pub timeout_ms: u64,
    /// One request to one server may take this long before the next is asked. 0: 1000.
    pub request_timeout_ms: u64,
    /// The smallest block of IDs asked for (the size adapts to the rate of use). 0: 16.
    pub min_block: usize,
    /// The largest block of IDs asked for (at most 100000). 0: 10000.
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
    // A member added later goes here, at the end, with all-zero bytes as its default.
}

/// A `struct_size` above this is no `flakery_client_options` of any version.
const MAX_STRUCT_SIZE: usize = 4096;

/// The bytes of the caller's struct this library reads: its own struct's, the one version
/// there is so far; a newer header's members past it must be zero (unset).
///
/// # Safety
/// `opts` is non-NULL and its `struct_size` bytes are readable.
unsafe fn checked_size(opts: *const flakery_client_options, size: usize) -> Result<(), Error> {
    let ours = std::mem::size_of::<flakery_client_options>();
    if size == ours {
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

/// Fills the caller's `flakery_client_options` of `size` bytes with every default (all zero)
/// and sets its `struct_size` to `size`. Call it through `flakery_client_options_init(&opts)`.
/// Errors: `FLAKERY_STATUS_INVALID_ARGUMENT` for NULL or a `size` smaller than the first
/// version's (nothing is written then).
#[no_mangle]
pub unsafe extern "C" fn flakery_client_options_init_sized(
    opts: *mut flakery_client_options,
    size: usize,
) -> flakery_status {
    guard(|| {
        if opts.is_null() {
            return Err(null("opts"));
        }
        if !(std::mem::size_of::<flakery_client_options>()..=MAX_STRUCT_SIZE).contains(&size) {
            return Err(Error::invalid_argument(format!(
                "size {size} is the sizeof no version of flakery_client_options"
            )));
        }
        // SAFETY: the caller's struct is writable for `size` bytes, as the header requires.
        unsafe {
            std::ptr::write_bytes(opts.cast::<u8>(), 0, size);
            std::ptr::addr_of_mut!((*opts).struct_size).write(size);
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
    // SAFETY: the size is this library's own.
    let c = unsafe { &*opts };
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
    let ms = |value: u64, default: Duration| {
        if value == 0 {
            default
        } else {
            Duration::from_millis(value)
        }
    };
    options.max_age = ms(c.max_age_ms, options.max_age);
    options.timeout = ms(c.timeout_ms, options.timeout);
    options.request_timeout = ms(c.request_timeout_ms, options.request_timeout);
    if c.min_block != 0 {
        options.min_block = c.min_block;
    }
    if c.max_block != 0 {
        options.max_block = c.max_block;
    }
    options.prefetch = !c.no_prefetch;
    options.prefer_first = c.prefer_first;
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
/// `FLAKERY_STATUS_UNAUTHORIZED`, `FLAKERY_STATUS_BAD_ANSWER`,
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
