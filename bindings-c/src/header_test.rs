//! include/flakery.h must be what cbindgen generates from this crate, so that the committed
//! header never drifts from the library.

use std::path::Path;

#[test]
fn header_is_up_to_date() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml"))
        .expect("bindings-c/cbindgen.toml is readable and valid");
    let bindings = cbindgen::Builder::new()
        .with_config(config)
        .with_src(crate_dir.join("src/lib.rs"))
        .generate()
        .expect("cbindgen generates the header");
    let mut generated = Vec::new();
    bindings.write(&mut generated);

    let header = crate_dir.join("../include/flakery.h");
    if std::env::var("FLAKERY_BLESS").as_deref() == Ok("1") {
        std::fs::write(&header, &generated).expect("include/flakery.h is writable");
        eprintln!("wrote {}", header.display());
        return;
    }
    let text = String::from_utf8_lossy(&generated);
    let body = text
        .split("typedef struct flakery_options {")
        .nth(1)
        .and_then(|rest| rest.split("} flakery_options;").next())
        .expect("the header defines flakery_options");
    // Every member is one declaration line ending in ';' (comments end in '*/').
    let members = body
        .lines()
        .filter(|line| line.trim_end().ends_with(';'))
        .count();
    assert_eq!(
        members,
        crate::options::MEMBERS,
        "options::MEMBERS (named in the error for a newer header) is not the member count"
    );
    let committed = std::fs::read(&header).unwrap_or_default();
    assert!(
        committed == generated,
        "include/flakery.h differs from what cbindgen generates from bindings-c/src.\n\
         Regenerate it with\n    FLAKERY_BLESS=1 cargo test -p flakery-c header\n\
         and commit it."
    );
}
