//! `Layout::parse` on any text: a refusal is `invalid_layout`, never a panic; an accepted layout
//! has its invariants (see `check_layout`) and prints to a spec that reads back equal.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(spec) = std::str::from_utf8(data) {
        flakery_fuzz::parse_checked(spec);
    }
});
