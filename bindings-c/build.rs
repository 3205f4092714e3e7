//! Gives libflakery.so a SONAME, so that programs linked against it record which ABI they
//! need and a newer, incompatible library can be installed beside it.
//!
//! The SONAME follows Cargo's semver: `libflakery.so.MAJOR` from 1.0 on, and
//! `libflakery.so.0.MINOR` before (where a minor release may break compatibility).
//! dist/build.sh installs the file as `libflakery.so.VERSION` with the SONAME and
//! `libflakery.so` as links to it.

fn main() {
    let major = std::env::var("CARGO_PKG_VERSION_MAJOR").unwrap_or_default();
    let minor = std::env::var("CARGO_PKG_VERSION_MINOR").unwrap_or_default();
    let abi = if major == "0" {
        format!("0.{minor}")
    } else {
        major
    };
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    // ELF platforms only: Mach-O has install names and Windows DLLs have neither.
    if !matches!(os.as_str(), "macos" | "ios" | "windows") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libflakery.so.{abi}");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
