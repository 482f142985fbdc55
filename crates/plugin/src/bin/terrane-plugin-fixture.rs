//! Test fixture (not a product binary): a provider with an empty schema, served over the real plugin transport:
//! the smallest thing Terraform can launch, handshake with (AutoMTLS) and
//! ask for a schema. The transport tests point Terraform at it. With
//! `TERRANE_FIXTURE_CHILD=1` it first starts a child process (`sleep`), so
//! the process tests can check that a plugin's children go with it; with
//! `TERRANE_FIXTURE_UNWATCHED=1` it does not watch its parent.

use terrane_tfplugin6::tfplugin6::{self as tf, provider_server::Provider};
use tonic::{Request, Response, Status};

struct Empty;

#[tonic::async_trait]
impl Provider for Empty {
    async fn get_provider_schema(
        &self,
        _r: Request<tf::get_provider_schema::Request>,
    ) -> Result<Response<tf::get_provider_schema::Response>, Status> {
        Ok(Response::new(tf::get_provider_schema::Response {
            provider: Some(tf::Schema {
                version: 0,
                block: Some(Default::default()),
            }),
            server_capabilities: Some(tf::ServerCapabilities {
                get_provider_schema_optional: true,
                ..Default::default()
            }),
            ..Default::default()
        }))
    }

    async fn validate_provider_config(
        &self,
        _r: Request<tf::validate_provider_config::Request>,
    ) -> Result<Response<tf::validate_provider_config::Response>, Status> {
        Ok(Response::new(Default::default()))
    }

    async fn configure_provider(
        &self,
        _r: Request<tf::configure_provider::Request>,
    ) -> Result<Response<tf::configure_provider::Response>, Status> {
        Ok(Response::new(Default::default()))
    }

    async fn stop_provider(
        &self,
        _r: Request<tf::stop_provider::Request>,
    ) -> Result<Response<tf::stop_provider::Response>, Status> {
        Ok(Response::new(Default::default()))
    }
}

fn main() {
    if std::env::var("TERRANE_FIXTURE_CHILD").is_ok_and(|v| v == "1") {
        if let Err(e) = std::process::Command::new("sleep")
            .arg("600")
            .stdin(std::process::Stdio::null())
            .spawn()
        {
            eprintln!("cannot start the child process: {e}");
            std::process::exit(1);
        }
    }
    let mut opts = terrane_plugin::ServeOptions::new("registry.terraform.io/terrane/empty");
    // Stands in for a plugin that does not watch its parent (Go plugins).
    opts.watch_parent = std::env::var("TERRANE_FIXTURE_UNWATCHED").map_or(true, |v| v != "1");
    terrane_plugin::serve_main(Empty, opts)
}
