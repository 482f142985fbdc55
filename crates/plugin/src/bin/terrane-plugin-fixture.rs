//! Test fixture (not a product binary): a provider with an empty schema, served over the real plugin transport:
//! the smallest thing Terraform can launch, handshake with (AutoMTLS) and
//! ask for a schema. The transport tests point Terraform at it.

use terrane_tfplugin6::tfplugin6::{self as tf, provider_server::Provider};
use tonic::{Request, Response, Status};

struct Empty;

#[tonic::async_trait]
impl Provider for Empty {
    async fn get_provider_schema(&self, _r: Request<tf::get_provider_schema::Request>) -> Result<Response<tf::get_provider_schema::Response>, Status> {
        Ok(Response::new(tf::get_provider_schema::Response {
            provider: Some(tf::Schema { version: 0, block: Some(Default::default()) }),
            server_capabilities: Some(tf::ServerCapabilities { get_provider_schema_optional: true, ..Default::default() }),
            ..Default::default()
        }))
    }

    async fn validate_provider_config(&self, _r: Request<tf::validate_provider_config::Request>) -> Result<Response<tf::validate_provider_config::Response>, Status> {
        Ok(Response::new(Default::default()))
    }

    async fn configure_provider(&self, _r: Request<tf::configure_provider::Request>) -> Result<Response<tf::configure_provider::Response>, Status> {
        Ok(Response::new(Default::default()))
    }

    async fn stop_provider(&self, _r: Request<tf::stop_provider::Request>) -> Result<Response<tf::stop_provider::Response>, Status> {
        Ok(Response::new(Default::default()))
    }
}

fn main() {
    terrane_plugin::serve_main(Empty, terrane_plugin::ServeOptions::new("registry.terraform.io/terrane/empty"))
}
