//! Generates the gRPC code from the committed `.proto` with a vendored `protoc`, so a plain
//! `cargo build` needs no protoc installed and no download.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    if std::env::var_os("PROTOC").is_none() {
        std::env::set_var("PROTOC", protoc_bin_vendored::protoc_bin_path()?);
    }
    println!("cargo:rerun-if-changed=proto/flakery/v1/ids.proto");
    tonic_build::configure()
        .build_client(false)
        .compile_protos(&["proto/flakery/v1/ids.proto"], &["proto"])?;
    Ok(())
}
