//! The high-water mark in PostgreSQL's WAL, so that a streaming standby has it when it is
//! promoted (docs/postgres.md, "Standbys"). Each new mark is a record of flakery's own WAL
//! resource manager, inserted and flushed (and, when synchronous replication is configured,
//! confirmed by the synchronous standby as a commit is) before the mark file is written and
//! before any ID under it is issued (`SharedMark`'s journal). Replayed, by crash recovery or by
//! a standby, the record raises the mark file and the run's floor in shared memory: a standby
//! promoted while it runs starts above every mark its primary journaled, whatever its clock.
//!
//! Why a WAL record, and not a table row: the generator is one per cluster, not per database,
//! and a mark must be written ahead from any session, in any transaction (read-only, or one
//! that rolls back), which a row in a table cannot be without a transaction of its own.

use std::ffi::CString;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use flakery::lease::shared_mark::{MarkJournal, SharedMark};
use flakery::{Error, ErrorCode, NodeId};
use pgrx::pg_sys;
use pgrx::PgTryBuilder;

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

#[derive(Debug)]
pub struct WalJournal;

impl WalJournal {
    pub fn shared() -> Arc<dyn MarkJournal> {
        Arc::new(WalJournal)
    }
}

impl MarkJournal for WalJournal {
    fn record(&self, mark_ms: i64) -> flakery::Result<()> {
        if in_recovery() {
            return Err(recovery_refusal());
        }
        // A PostgreSQL error here (out of WAL space, an I/O error) is caught and returned:
        // the mark file's lock is held by the caller and must be released.
        PgTryBuilder::new(AssertUnwindSafe(|| journal(mark_ms)))
            .catch_others(|caught| {
                let message = match caught {
                    pgrx::pg_sys::panic::CaughtError::PostgresError(report)
                    | pgrx::pg_sys::panic::CaughtError::ErrorReport(report) => {
                        report.message().to_string()
                    }
                    pgrx::pg_sys::panic::CaughtError::RustPanic { ereport, .. } => {
                        ereport.message().to_string()
                    }
                };
                Err(Error::new(
                    ErrorCode::LeaseLost,
                    format!("the high-water mark could not be written to the WAL: {message}"),
                ))
            })
            .execute()
    }
}

fn journal(mark_ms: i64) -> flakery::Result<()> {
    let mut data = mark_ms.to_le_bytes();
    // SAFETY: the WAL insertion protocol: begin, register the data (copied at insert), insert.
    let lsn = unsafe {
        pg_sys::XLogBeginInsert();
        pg_sys::XLogRegisterData(data.as_mut_ptr().cast(), data.len() as i32);
        pg_sys::XLogInsert(RMGR_ID, XLOG_FLAKERY_MARK)
    };
    // SAFETY: flushes the WAL up to the record; waits, as a commit does, for the synchronous
    // standby when synchronous replication is configured for this session.
    unsafe {
        pg_sys::XLogFlush(lsn);
        pg_sys::SyncRepWaitForLSN(lsn, false);
    }
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

/// When synchronous replication is configured for this session and the synchronous standby
/// has not confirmed `lsn` (the wait was canceled): why.
fn synchronous_standby_behind(lsn: pg_sys::XLogRecPtr) -> Option<String> {
    // SAFETY: globals this backend set from its settings; WalSndCtl is in shared memory, and
    // its positions are 8-byte words the walsenders only raise.
    unsafe {
        let mode = match pg_sys::synchronous_commit as u32 {
            pg_sys::SyncCommitLevel::SYNCHRONOUS_COMMIT_REMOTE_WRITE => 0,
            pg_sys::SyncCommitLevel::SYNCHRONOUS_COMMIT_REMOTE_FLUSH => 1,
            pg_sys::SyncCommitLevel::SYNCHRONOUS_COMMIT_REMOTE_APPLY => 2,
            _ => return None,
        };
        let ctl = pg_sys::WalSndCtl;
        if pg_sys::max_wal_senders == 0
            || ctl.is_null()
            || u32::from((*ctl).sync_standbys_status) & pg_sys::SYNC_STANDBY_DEFINED == 0
        {
            return None;
        }
        let confirmed = std::ptr::read_volatile(std::ptr::addr_of!((*ctl).lsn[mode]));
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
    crate::generate::raise_floor(mark_ms);
    let raised = SharedMark::open(&crate::generate::mark_path(), NodeId::default(), i64::MIN)
        .and_then(|mark| mark.raise(mark_ms));
    if let Err(e) = raised {
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
