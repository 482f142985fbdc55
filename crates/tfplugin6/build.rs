//! Compiles the project's own .proto files with the pure-Rust `protox`
//! compiler (no system protoc needed) and generates tonic client and server
//! code for them.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let files = ["proto/tfplugin6.proto", "proto/goplugin.proto"];
    for f in files {
        println!("cargo:rerun-if-changed={f}");
    }
    let fds = protox::compile(files, ["proto"])?;
    // Default stubs answer Unimplemented for RPCs a server does not provide.
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        .generate_default_stubs(true)
        .compile_fds(fds)?;
    Ok(())
}
