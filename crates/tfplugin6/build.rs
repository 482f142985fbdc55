//! Compiles the project's own .proto files with the pure-Rust `protox`
//! compiler (no system protoc needed) and generates tonic client and server
//! code for them.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let files = ["proto/tfplugin6.proto", "proto/goplugin.proto"];
    for f in files {
        println!("cargo:rerun-if-changed={f}");
    }
    let fds = protox::compile(files, ["proto"])?;
    tonic_prost_build::configure().build_client(true).build_server(true).compile_fds(fds)?;
    Ok(())
}
