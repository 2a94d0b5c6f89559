//! Generates the protobuf types and gRPC stubs from `proto/lf/a2a/v1/a2a.proto` with a
//! pure-Rust protobuf compiler, so that building needs no `protoc`.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let proto = "proto/lf/a2a/v1/a2a.proto";
    println!("cargo:rerun-if-changed=proto");
    let descriptors = protox::compile([proto], ["proto"])?;
    tonic_prost_build::configure()
        .build_server(true)
        .build_client(true)
        .build_transport(false)
        .compile_fds(descriptors)?;
    Ok(())
}
