//! Compiles terrane's own pulumirpc.proto with the pure-Rust `protox`
//! compiler (no system protoc) and generates tonic clients and servers.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let file = "proto/pulumirpc.proto";
    println!("cargo:rerun-if-changed={file}");
    let fds = protox::compile([file], ["proto"])?;
    // Default stubs answer Unimplemented for RPCs a server does not provide.
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        .generate_default_stubs(true)
        .compile_fds(fds)?;
    Ok(())
}
