//! The high-water mark in PostgreSQL's WAL, so that a streaming standby has it when it is
//! promoted (docs/postgres.md, "Standbys"). Each new mark is a record of flakery's own WAL
//! resource manager, inserted and flushed (and, when `flakery.synchronous_mark` is on and
//! synchronous replication is configured, confirmed flushed by the synchronous standby) before
//! the mark file is written and before any ID under it is issued (`cluster_mark.rs`).
//! Replayed, by crash recovery or by a standby, the record raises the mark file and the run's
//! floor in shared memory: a standby promoted while it runs starts above every mark its
//! primary journaled, whatever its clock.
//!
//! Why a WAL record, and not a table row: the generator is one per cluster, not per database,
//! and a mark must be written ahead from any session, in any transaction (read-only, or one
//! that rolls back), which a row in a table cannot be without a transaction of its own.

use std::ffi::CString;

use flakery::{Error, ErrorCode};
use pgrx::pg_sys;

/// flakery's custom WAL resource manager ID (128-255 are for extensions; 128 is for
/// development). Not yet reserved on the PostgreSQL wiki's list of custom resource managers
/// (none listed uses it); a server that loads another extension with the same ID refuses to
/// start, naming both.
pub const RMGR_ID: u8 = 174;
/// The one kind of record: a new mark, its 8 bytes little-endian the record's data.
const XLOG_FLAKERY_MARK: u8 = 0x00;

static mut RMGR: pg_sys::RmgrData = pg_sys::RmgrData {
    rm_name: c"flakery".as_ptr(),
    rm_redo: Some(redo),
    rm_desc: Some(desc),
    rm_identify: Some(identify),
    rm_startup: None,
    rm_cleanup: None,
    rm_mask: None,
    rm_decode: None,
};

/// In `_PG_init`, while the server loads shared_preload_libraries.
pub fn register() {
    // SAFETY: RegisterCustomRmgr copies the struct; called once, in the postmaster.
    unsafe { pg_sys::RegisterCustomRmgr(RMGR_ID, std::ptr::addr_of_mut!(RMGR)) };
}

/// Whether this server is a standby (or still recovering from a crash): it can write no WAL,
/// so it issues no ID.
pub fn in_recovery() -> bool {
    // SAFETY: reads shared memory the server keeps; cheap once recovery is over.
    unsafe { pg_sys::RecoveryInProgress() }
}

/// Journals `mark_ms`: a record inserted, flushed, and confirmed by the synchronous standby
/// when the settings ask for it. Called by the one process that writes the mark, with no lock
/// held; a PostgreSQL error (a cancel, a terminate, the disk) is raised as it is.
pub fn journal(mark_ms: i64) -> flakery::Result<()> {
    if in_recovery() {
        return Err(recovery_refusal());
    }
    let mut data = mark_ms.to_le_bytes();
    // SAFETY: the WAL insertion protocol: begin, register the data (copied at insert), insert.
    let lsn = unsafe {
        pg_sys::XLogBeginInsert();
        pg_sys::XLogRegisterData(data.as_mut_ptr().cast(), data.len() as i32);
        pg_sys::XLogInsert(RMGR_ID, XLOG_FLAKERY_MARK)
    };
    // SAFETY: flushes the WAL up to the record.
    unsafe { pg_sys::XLogFlush(lsn) };
    if crate::settings::synchronous_mark() {
        wait_for_synchronous_standby(lsn)?;
    }
    Ok(())
}

/// The wait a commit makes for the synchronous standby, for the flush of `lsn` (the level
/// PostgreSQL caps a wait for anything but a commit at: a standby reports no apply position
/// for a record that is not a commit). The session's `synchronous_commit` decides nothing: it
/// is set to `on` for the wait alone, as a function's SET clause sets a setting, so a session
/// that lowered it still waits.
fn wait_for_synchronous_standby(lsn: pg_sys::XLogRecPtr) -> flakery::Result<()> {
    // SAFETY: read-only globals of this backend.
    if unsafe { pg_sys::max_wal_senders } == 0 {
        return Ok(());
    }
    // SAFETY: the GUC nesting protocol (restored by AtEOXact_GUC below, or by the abort of
    // the transaction if an error is raised in between). SyncRepWaitForLSN asserts that
    // interrupts are held: it looks at a cancel or a terminate itself, ends its wait with a
    // WARNING, and leaves a terminate pending, raised by CHECK_FOR_INTERRUPTS below.
    unsafe {
        let nest = pg_sys::NewGUCNestLevel();
        pg_sys::set_config_option(
            c"synchronous_commit".as_ptr(),
            c"on".as_ptr(),
            pg_sys::GucContext::PGC_USERSET,
            pg_sys::GucSource::PGC_S_SESSION,
            pg_sys::GucAction::GUC_ACTION_SAVE,
            true,
            0,
            false,
        );
        pg_sys::InterruptHoldoffCount += 1;
        pg_sys::SyncRepWaitForLSN(lsn, false);
        pg_sys::InterruptHoldoffCount -= 1;
        pg_sys::AtEOXact_GUC(true, nest);
    }
    pgrx::check_for_interrupts!();
    if let Some(behind) = synchronous_standby_behind(lsn) {
        return Err(Error::new(
            ErrorCode::LeaseLost,
            format!(
                "the synchronous standby did not confirm the high-water mark ({behind}); no ID \
                 is issued under a mark a promoted standby might not have"
            ),
        ));
    }
    Ok(())
}

/// When synchronous standbys are configured and have not confirmed the flush of `lsn` (the
/// wait was canceled): why.
fn synchronous_standby_behind(lsn: pg_sys::XLogRecPtr) -> Option<String> {
    // SAFETY: WalSndCtl is in shared memory, and its positions are 8-byte words the
    // walsenders only raise.
    unsafe {
        let ctl = pg_sys::WalSndCtl;
        if ctl.is_null()
            || u32::from((*ctl).sync_standbys_status) & pg_sys::SYNC_STANDBY_DEFINED == 0
        {
            return None;
        }
        let flush = pg_sys::SYNC_REP_WAIT_FLUSH as usize;
        let confirmed = std::ptr::read_volatile(std::ptr::addr_of!((*ctl).lsn[flush]));
        (confirmed < lsn).then(|| "the wait for it was canceled".to_string())
    }
}

pub fn recovery_refusal() -> Error {
    Error::new(
        ErrorCode::InvalidArgument,
        "this server is a standby in recovery (read-only): next_id issues IDs only on a \
         primary, whose WAL carries its high-water mark; call it on the primary, or promote \
         this standby",
    )
}

/// The mark in a record of ours.
unsafe fn mark_of(record: *mut pg_sys::XLogReaderState) -> Option<i64> {
    let decoded = (*record).record;
    if decoded.is_null() || (*decoded).main_data_len != 8 {
        return None;
    }
    let bytes = std::slice::from_raw_parts((*decoded).main_data as *const u8, 8);
    Some(i64::from_le_bytes(bytes.try_into().ok()?))
}

/// Replay (crash recovery, or a standby's startup process): the mark file and the run's
/// floor raised to the mark. An error stops recovery: a server that cannot keep the mark
/// must not come up without it.
#[pgrx::pg_guard]
unsafe extern "C-unwind" fn redo(record: *mut pg_sys::XLogReaderState) {
    let Some(mark_ms) = mark_of(record) else {
        pgrx::error!("flakery: a WAL record of flakery's resource manager that holds no mark");
    };
    if let Err(e) = crate::generate::replay(mark_ms) {
        pgrx::error!(
            "flakery: replaying a high-water mark: {}: {}",
            e.code(),
            e.message()
        );
    }
}

#[pgrx::pg_guard]
unsafe extern "C-unwind" fn desc(buf: pg_sys::StringInfo, record: *mut pg_sys::XLogReaderState) {
    let text = match mark_of(record) {
        Some(mark_ms) => format!(
            "mark {} ({mark_ms})",
            flakery::timestamp::format_rfc3339_ms(mark_ms)
        ),
        None => "no mark".to_string(),
    };
    let text = CString::new(text).unwrap_or_default();
    pg_sys::appendStringInfoString(buf, text.as_ptr());
}

unsafe extern "C-unwind" fn identify(info: u8) -> *const std::ffi::c_char {
    match info & !(pg_sys::XLR_INFO_MASK as u8) {
        XLOG_FLAKERY_MARK => c"MARK".as_ptr(),
        _ => std::ptr::null(),
    }
}
