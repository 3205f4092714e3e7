//! flakery in PostgreSQL (docs/postgres.md): the core's IDs as SQL functions in the schema
//! `flakery`. A binding only: arguments and errors are converted here, and every rule (layouts,
//! the generator, the high-water mark) is the core's.
//!
//! `codec.rs`: the functions of IDs (decode, compose, text forms, layouts), which need no
//! configuration. `generate.rs`: `next_id`/`next_ids`, one generator per cluster on a word in
//! shared memory, and the settings that name its node; `cluster_mark.rs`: its high-water mark
//! in shared memory and in a file, written by one backend while the others wait as
//! PostgreSQL's waits do; `wal_mark.rs`: the mark in the WAL, for standbys and crash recovery. `errors.rs`: the core's errors as
//! PostgreSQL errors.

use pgrx::prelude::*;

mod cluster_mark;
mod codec;
mod errors;
mod generate;
mod grant_record;
mod record_lease;
mod settings;
mod wal_mark;
mod worker;

pgrx::pg_module_magic!();

#[pg_guard]
pub extern "C-unwind" fn _PG_init() {
    generate::init();
}
