//! terrane-tfplugin6: the wire types of Terraform's provider protocol 6 and
//! of the go-plugin services, generated from terrane's own `.proto` files
//! (`proto/`), with tonic clients and servers.
//!
//! This crate holds generated code and nothing else. Architecture
//! invariant: protobuf types are used only here, in the plugin transport,
//! the SDK's server module and the engine's plugin client; everything else
//! speaks terrane-value.

#[allow(clippy::all, missing_docs, unreachable_pub)]
pub mod tfplugin6 {
    tonic::include_proto!("tfplugin6");
}

#[allow(clippy::all, missing_docs, unreachable_pub)]
pub mod plugin {
    tonic::include_proto!("plugin");
}

/// The protocol version this definition implements.
pub const PROTOCOL_VERSION: &str = "6.11";

#[cfg(test)]
mod tests {
    use super::tfplugin6 as tf;
    use prost::Message;

    #[test]
    fn field_numbers_match_the_protocol() {
        // Hand-encoded bytes pin field numbers that a typo would move:
        // PlanResourceChange.Request.planned_private = 9 (6.11),
        // Schema.Attribute.nested_type = 10, write_only = 11.
        let req = tf::plan_resource_change::Request {
            planned_private: vec![1],
            ..Default::default()
        };
        assert_eq!(req.encode_to_vec(), vec![0x4a, 0x01, 0x01]);
        let attr = tf::schema::Attribute {
            write_only: true,
            ..Default::default()
        };
        assert_eq!(attr.encode_to_vec(), vec![0x58, 0x01]);
        let attr = tf::schema::Attribute {
            nested_type: Some(Default::default()),
            ..Default::default()
        };
        assert_eq!(attr.encode_to_vec(), vec![0x52, 0x00]);
        let caps = tf::ClientCapabilities {
            computed_blocks_allowed: true,
            ..Default::default()
        };
        assert_eq!(caps.encode_to_vec(), vec![0x20, 0x01]);
        let resp = tf::get_provider_schema::Response {
            server_capabilities: Some(tf::ServerCapabilities {
                plan_destroy: true,
                ..Default::default()
            }),
            ..Default::default()
        };
        assert_eq!(resp.encode_to_vec(), vec![0x32, 0x02, 0x08, 0x01]);
        let stop = tf::stop_provider::Response { error: "x".into() };
        assert_eq!(stop.encode_to_vec(), vec![0x0a, 0x01, b'x']);
    }
}
