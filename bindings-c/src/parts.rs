//! Decoding, composing and describing layouts.

use std::ffi::c_char;
use std::ptr;

use flakery_core::{Decoded, Error, ErrorCode, Layout, Parts};

use crate::error::{flakery_status, guard, str_arg, write_out, write_string};
use crate::options::constant_fields;
use crate::{flakery_generator, generator_ref};

/// An ID taken apart (`flakery_decode`), or what to build one from (`flakery_compose`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct flakery_parts {
    /// Unix milliseconds: the start of the ID's tick.
    pub timestamp_ms: i64,
    /// 0 when the layout has no datacenter field.
    pub datacenter_id: u64,
    /// 0 when the layout has no worker field.
    pub worker_id: u64,
    pub sequence: u64,
    /// `flakery_compose` only: values of constant fields by name (`field_count` of each); a
    /// constant not named takes its layout default. Both may be NULL when `field_count` is 0.
    /// `flakery_decode` sets them to NULL and 0: read constants with `flakery_decode_field`.
    pub field_names: *const *const c_char,
    pub field_values: *const u64,
    pub field_count: usize,
}

impl From<&Decoded> for flakery_parts {
    fn from(decoded: &Decoded) -> Self {
        flakery_parts {
            timestamp_ms: decoded.timestamp_ms,
            datacenter_id: decoded.datacenter_id,
            worker_id: decoded.worker_id,
            sequence: decoded.sequence,
            field_names: ptr::null(),
            field_values: ptr::null(),
            field_count: 0,
        }
    }
}

/// What a layout can hold (`flakery_layout_capacity`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct flakery_capacity {
    /// Unix milliseconds of tick 0.
    pub epoch_ms: i64,
    /// Milliseconds per tick: 1, 10 or 1000.
    pub unit_ms: i64,
    /// Bits the fields use together (at most 64).
    pub total_bits: u32,
    /// IDs one node can make in one tick.
    pub ids_per_tick: u64,
    /// IDs one node can make in one second (saturating).
    pub ids_per_second: u64,
    pub datacenter_ids: u64,
    pub worker_ids: u64,
    /// Distinct node identities (datacenter x worker).
    pub node_ids: u64,
    /// The largest tick the time field can hold in a non-negative ID.
    pub max_tick: u64,
    /// The first Unix millisecond at which no ID can be made any more.
    pub exhausted_at_ms: i64,
}

/// # Safety
/// `spec` is NULL or NUL-terminated.
unsafe fn layout_arg(spec: *const c_char) -> Result<Layout, Error> {
    // SAFETY: as the caller promises.
    Layout::parse(unsafe { str_arg(spec, "layout")? })
}

/// Takes `id` apart under `layout` (a layout spec string, such as "twitter" or
/// "discord") into `*out`. Errors: `FLAKERY_STATUS_INVALID_LAYOUT`,
/// `FLAKERY_STATUS_INVALID_ARGUMENT` (NULL pointers, a negative ID, bits set above the
/// layout's). Example: `flakery_decode("discord", 175928847299117063, &parts)` gives
/// timestamp_ms 1462015105796, datacenter_id 1, worker_id 0, sequence 7.
#[no_mangle]
pub unsafe extern "C" fn flakery_decode(
    layout: *const c_char,
    id: i64,
    out: *mut flakery_parts,
) -> flakery_status {
    guard(|| {
        // SAFETY: the header requires a NUL-terminated layout.
        let layout = unsafe { layout_arg(layout)? };
        let decoded = flakery_core::decode(id, &layout)?;
        // SAFETY: the header requires NULL or a writable flakery_parts.
        unsafe { write_out(out, flakery_parts::from(&decoded)) }
    })
}

/// Takes `id` apart under the generator's own layout, as `flakery_decode` does, without
/// parsing a layout string.
#[no_mangle]
pub unsafe extern "C" fn flakery_generator_decode(
    generator: *const flakery_generator,
    id: i64,
    out: *mut flakery_parts,
) -> flakery_status {
    guard(|| {
        // SAFETY: the header requires NULL or a live generator.
        let generator = unsafe { generator_ref(generator)? };
        let decoded = flakery_core::decode(id, generator.layout())?;
        // SAFETY: the header requires NULL or a writable flakery_parts.
        unsafe { write_out(out, flakery_parts::from(&decoded)) }
    })
}

/// The raw value of one named field of `id` under `layout` into `*out`: "time" (in ticks since
/// the epoch), "datacenter", "worker", "sequence", or a constant field such as Vesta's
/// "version". Errors: `FLAKERY_STATUS_INVALID_ARGUMENT` also when the layout has no such field.
#[no_mangle]
pub unsafe extern "C" fn flakery_decode_field(
    layout: *const c_char,
    id: i64,
    field: *const c_char,
    out: *mut u64,
) -> flakery_status {
    guard(|| {
        // SAFETY: the header requires NUL-terminated strings.
        let (layout, name) = unsafe { (layout_arg(layout)?, str_arg(field, "field")?) };
        let decoded = flakery_core::decode(id, &layout)?;
        let value = decoded.field(name).ok_or_else(|| {
            Error::new(
                ErrorCode::InvalidArgument,
                format!("layout '{layout}' has no field '{name}'"),
            )
        })?;
        // SAFETY: the header requires NULL or a writable uint64_t.
        unsafe { write_out(out, value) }
    })
}

/// The ID that `flakery_decode` would take apart into `*parts`, into `*out`. The timestamp
/// is rounded down to its tick; every other value must fit its field. Errors:
/// `FLAKERY_STATUS_INVALID_LAYOUT`, `FLAKERY_STATUS_INVALID_ARGUMENT` (NULL pointers, a value
/// that does not fit, a time before the epoch or past the layout's end, an unknown constant,
/// an ID of 2^63 or above, which only `flakery_compose_u64` gives).
#[no_mangle]
pub unsafe extern "C" fn flakery_compose(
    layout: *const c_char,
    parts: *const flakery_parts,
    out: *mut i64,
) -> flakery_status {
    guard(|| {
        // SAFETY: the header requires a NUL-terminated layout and a readable parts.
        let (layout, parts) = unsafe { (layout_arg(layout)?, read_parts(parts)?) };
        let id = flakery_core::compose(&parts, &layout)?;
        // SAFETY: the header requires NULL or a writable int64_t.
        unsafe { write_out(out, id) }
    })
}

/// `flakery_decode` of an ID as an unsigned 64-bit integer: IDs of 2^63 and above decode under
/// a layout that is unsigned by definition (`discord`, `;unsigned=true`), and are refused with
/// `FLAKERY_STATUS_INVALID_ARGUMENT` under any other.
#[no_mangle]
pub unsafe extern "C" fn flakery_decode_u64(
    layout: *const c_char,
    id: u64,
    out: *mut flakery_parts,
) -> flakery_status {
    guard(|| {
        // SAFETY: the header requires a NUL-terminated layout.
        let layout = unsafe { layout_arg(layout)? };
        let decoded = flakery_core::decode_u64(id, &layout)?;
        // SAFETY: the header requires NULL or a writable flakery_parts.
        unsafe { write_out(out, flakery_parts::from(&decoded)) }
    })
}

/// `flakery_compose` into a `uint64_t`: under an unsigned layout (`discord`) the time field may
/// use its top bit, which makes IDs of 2^63 and above.
#[no_mangle]
pub unsafe extern "C" fn flakery_compose_u64(
    layout: *const c_char,
    parts: *const flakery_parts,
    out: *mut u64,
) -> flakery_status {
    guard(|| {
        // SAFETY: the header requires a NUL-terminated layout and a readable parts.
        let (layout, parts) = unsafe { (layout_arg(layout)?, read_parts(parts)?) };
        let id = flakery_core::compose_u64(&parts, &layout)?;
        // SAFETY: the header requires NULL or a writable uint64_t.
        unsafe { write_out(out, id) }
    })
}

/// `*parts` as the core's `Parts`.
///
/// # Safety
/// `parts` is NULL or a readable `flakery_parts` whose `field_count` names and values are
/// readable.
unsafe fn read_parts(parts: *const flakery_parts) -> Result<Parts, Error> {
    // SAFETY: the caller's contract.
    let Some(parts) = (unsafe { parts.as_ref() }) else {
        return Err(crate::error::null("parts"));
    };
    Ok(Parts {
        timestamp_ms: parts.timestamp_ms,
        datacenter_id: parts.datacenter_id,
        worker_id: parts.worker_id,
        sequence: parts.sequence,
        // SAFETY: the caller's contract.
        fields: unsafe {
            constant_fields(
                parts.field_names,
                parts.field_values,
                parts.field_count,
                "parts->field_names",
            )?
        },
    })
}

/// What `layout` can hold, into `*out`. Errors: `FLAKERY_STATUS_INVALID_LAYOUT`,
/// `FLAKERY_STATUS_INVALID_ARGUMENT` (NULL pointers).
#[no_mangle]
pub unsafe extern "C" fn flakery_layout_capacity(
    layout: *const c_char,
    out: *mut flakery_capacity,
) -> flakery_status {
    guard(|| {
        // SAFETY: the header requires a NUL-terminated layout.
        let layout = unsafe { layout_arg(layout)? };
        let c = layout.capacity();
        let capacity = flakery_capacity {
            epoch_ms: layout.epoch_ms(),
            unit_ms: layout.unit().millis(),
            total_bits: layout.total_bits(),
            ids_per_tick: c.ids_per_tick,
            ids_per_second: c.ids_per_second,
            datacenter_ids: c.datacenter_ids,
            worker_ids: c.worker_ids,
            node_ids: c.node_ids,
            max_tick: c.max_tick,
            exhausted_at_ms: c.exhausted_at_ms,
        };
        // SAFETY: the header requires NULL or a writable flakery_capacity.
        unsafe { write_out(out, capacity) }
    })
}

/// Milliseconds from now (the system clock) until `layout` can make no more IDs, into
/// `*out`; 0 once it has run out. Errors: `FLAKERY_STATUS_INVALID_LAYOUT`,
/// `FLAKERY_STATUS_INVALID_ARGUMENT` (NULL pointers).
#[no_mangle]
pub unsafe extern "C" fn flakery_layout_time_left_ms(
    layout: *const c_char,
    out: *mut i64,
) -> flakery_status {
    guard(|| {
        // SAFETY: the header requires a NUL-terminated layout.
        let layout = unsafe { layout_arg(layout)? };
        let now_ms = flakery_core::Clock::now_ms(&flakery_core::SystemClock);
        // SAFETY: the header requires NULL or a writable int64_t.
        unsafe { write_out(out, layout.time_left_ms(now_ms)) }
    })
}

/// The canonical spec of `layout` (a preset's name where it is one, else the full field list)
/// into `buf`, NUL-terminated, and its length without the NUL into `*written`. With `buf`
/// NULL and `len` 0, only the length is written. A buffer too small is
/// `FLAKERY_STATUS_INVALID_ARGUMENT`, and nothing is written.
#[no_mangle]
pub unsafe extern "C" fn flakery_layout_normalize(
    layout: *const c_char,
    buf: *mut c_char,
    len: usize,
    written: *mut usize,
) -> flakery_status {
    guard(|| {
        // SAFETY: the header requires a NUL-terminated layout.
        let layout = unsafe { layout_arg(layout)? };
        // SAFETY: the header requires `len` writable bytes at `buf` and a writable `written`.
        unsafe { write_string(&layout.to_string(), buf, len, written) }
    })
}
