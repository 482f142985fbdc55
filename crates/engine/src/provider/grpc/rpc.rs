//! The two transports for tfplugin6 messages: a protocol server called
//! directly in this process ([`InProcess`], no socket, no serialization of
//! the envelope — only the DynamicValues are msgpack, exactly as on the
//! wire) and a plugin process reached through terrane-plugin's `launch`
//! and tonic's generated client ([`Plugin`]), which speaks protocol 6 or,
//! when the plugin chose it, protocol 5 under the same calls. Both implement [`Rpc`], so
//! the value layer above them is written once.
//!
//! A failed call is a [`CallError`]: `Crashed` when the plugin process went
//! away (the connection broke; every later call fails the same way without
//! touching the network), `Failed` for any other gRPC status.

use std::sync::atomic::{AtomicBool, Ordering};
use terrane_plugin::PluginClient;
use terrane_tfplugin5::tfplugin5 as t5;
use terrane_tfplugin5::tfplugin5::provider_client::ProviderClient as Provider5Client;
use terrane_tfplugin5::v6;
use terrane_tfplugin6::tfplugin6 as tf;
use terrane_tfplugin6::tfplugin6::provider_server::Provider as ProtocolServer;
use terrane_value::{Path, Value};
use tokio::sync::Mutex;
use tonic::{Code, Status};

/// Why a call did not produce a response.
#[derive(Debug)]
pub enum CallError {
    Crashed(String),
    Failed(Status),
    Closed,
}

/// How a protocol-5 plugin is asked one call (`$p`: the `Plugin`, `$c`:
/// its [`Client5`], `$r`: the protocol-6 request): `same $path` sends the
/// protocol-6 messages on the protocol-5 path ([`Plugin::unary`]);
/// `converted $m5($n5) via $back` carries the request across, calls the
/// typed client and converts the answer with `$back`.
macro_rules! call5 {
    ($p:ident, $c:ident, $r:ident, same $path:literal) => {
        $p.unary($path, &$r).await
    };
    ($p:ident, $c:ident, $r:ident, converted $m5:ident($n5:ident) via $back:path) => {{
        let r: t5::$n5::Request = v6::transcode(&$r).map_err(across)?;
        let result = $c.typed.clone().$m5(r).await;
        let r = result
            .map(tonic::Response::into_inner)
            .map_err(|s| $p.classify(s))?;
        $back(&r).map_err(across)
    }};
}

macro_rules! transports {
    ($($method:ident : $msg:ident => $path6:literal [$($v5:tt)+]),* $(,)?) => {
        /// One tfplugin6 call per method, whatever carries it. Both
        /// transports below implement every method (generated from the one
        /// list); the default, a refusal, serves test doubles that answer
        /// only the calls they are about.
        #[async_trait::async_trait]
        pub trait Rpc: Send + Sync + 'static {
            $(async fn $method(&self, _r: tf::$msg::Request) -> Result<tf::$msg::Response, CallError> {
                Err(CallError::Closed)
            })*
            /// UpgradeResourceState of an object stored at the type's
            /// current schema version, answered from its JSON without the
            /// call's encodings: only an in-process server can (see
            /// [`InProcess`]). `None`: make the call.
            fn upgrade_current(
                &self,
                _type_name: &str,
                _version: i64,
                _json: &str,
            ) -> Option<Result<terrane_value::Value, Vec<tf::Diagnostic>>> {
                None
            }
            /// The resource calls on values, when the server is in this
            /// process and open (see [`Values`]); `None`: make the calls.
            fn values(&self) -> Option<&dyn Values> {
                None
            }
            /// Ends the transport (plugin: Shutdown, then kill).
            async fn close(&self);
        }

        #[async_trait::async_trait]
        impl<S: Direct> Rpc for InProcess<S> {
            $(async fn $method(&self, r: tf::$msg::Request) -> Result<tf::$msg::Response, CallError> {
                if self.closed.load(Ordering::Acquire) {
                    return Err(CallError::Closed);
                }
                ProtocolServer::$method(&self.server, tonic::Request::new(r)).await.map(tonic::Response::into_inner).map_err(CallError::Failed)
            })*
            fn upgrade_current(
                &self,
                type_name: &str,
                version: i64,
                json: &str,
            ) -> Option<Result<terrane_value::Value, Vec<tf::Diagnostic>>> {
                if self.closed.load(Ordering::Acquire) {
                    return None;
                }
                self.server.upgrade_current(type_name, version, json)
            }
            fn values(&self) -> Option<&dyn Values> {
                if !self.values || self.closed.load(Ordering::Acquire) {
                    return None;
                }
                Some(&self.server)
            }
            async fn close(&self) {
                self.closed.store(true, Ordering::Release);
            }
        }

        /// A protocol-5 plugin answers the same calls under its names:
        /// those whose messages agree field for field with protocol 6's
        /// (`same`) are sent and read as the protocol-6 messages
        /// ([`Plugin::unary`]); the others are carried across
        /// (`converted`, see [`call5`]). Failures of either protocol go
        /// through the one [`Plugin::classify`].
        #[async_trait::async_trait]
        impl Rpc for Plugin {
            $(async fn $method(&self, r: tf::$msg::Request) -> Result<tf::$msg::Response, CallError> {
                self.check()?;
                match &self.client {
                    Client::V6 => self.unary($path6, &r).await,
                    // The typed client serves only the calls carried across.
                    Client::V5(_client) => call5!(self, _client, r, $($v5)+),
                }
            })*
            async fn close(&self) {
                self.closed.store(true, Ordering::Release);
                if let Some(p) = self.process.lock().await.take() {
                    p.shutdown().await;
                }
            }
        }
    };
}

/// A message that could not be carried between protocols 5 and 6 (the
/// two definitions disagree; the tfplugin5 tests rule it out).
fn across(e: String) -> CallError {
    CallError::Failed(Status::internal(e))
}

transports! {
    get_provider_schema: get_provider_schema => "/tfplugin6.Provider/GetProviderSchema" [converted get_schema(get_provider_schema) via v6::provider_schema_to6],
    validate_provider_config: validate_provider_config => "/tfplugin6.Provider/ValidateProviderConfig" [same "/tfplugin5.Provider/PrepareProviderConfig"],
    validate_resource_config: validate_resource_config => "/tfplugin6.Provider/ValidateResourceConfig" [same "/tfplugin5.Provider/ValidateResourceTypeConfig"],
    validate_data_resource_config: validate_data_resource_config => "/tfplugin6.Provider/ValidateDataResourceConfig" [same "/tfplugin5.Provider/ValidateDataSourceConfig"],
    configure_provider: configure_provider => "/tfplugin6.Provider/ConfigureProvider" [same "/tfplugin5.Provider/Configure"],
    upgrade_resource_state: upgrade_resource_state => "/tfplugin6.Provider/UpgradeResourceState" [same "/tfplugin5.Provider/UpgradeResourceState"],
    read_resource: read_resource => "/tfplugin6.Provider/ReadResource" [same "/tfplugin5.Provider/ReadResource"],
    plan_resource_change: plan_resource_change => "/tfplugin6.Provider/PlanResourceChange" [same "/tfplugin5.Provider/PlanResourceChange"],
    apply_resource_change: apply_resource_change => "/tfplugin6.Provider/ApplyResourceChange" [same "/tfplugin5.Provider/ApplyResourceChange"],
    import_resource_state: import_resource_state => "/tfplugin6.Provider/ImportResourceState" [same "/tfplugin5.Provider/ImportResourceState"],
    read_data_source: read_data_source => "/tfplugin6.Provider/ReadDataSource" [same "/tfplugin5.Provider/ReadDataSource"],
    call_function: call_function => "/tfplugin6.Provider/CallFunction" [same "/tfplugin5.Provider/CallFunction"],
    validate_ephemeral_resource_config: validate_ephemeral_resource_config => "/tfplugin6.Provider/ValidateEphemeralResourceConfig" [same "/tfplugin5.Provider/ValidateEphemeralResourceConfig"],
    open_ephemeral_resource: open_ephemeral_resource => "/tfplugin6.Provider/OpenEphemeralResource" [same "/tfplugin5.Provider/OpenEphemeralResource"],
    renew_ephemeral_resource: renew_ephemeral_resource => "/tfplugin6.Provider/RenewEphemeralResource" [same "/tfplugin5.Provider/RenewEphemeralResource"],
    close_ephemeral_resource: close_ephemeral_resource => "/tfplugin6.Provider/CloseEphemeralResource" [same "/tfplugin5.Provider/CloseEphemeralResource"],
    stop_provider: stop_provider => "/tfplugin6.Provider/StopProvider" [same "/tfplugin5.Provider/Stop"],
}

/// A protocol server in this process that can also answer
/// UpgradeResourceState at the current schema version from the stored
/// JSON. A no-op plan upgrades every stored object; for a built-in that
/// round trip (JSON text, then msgpack both ways) was most of its cost.
/// Plugins still get every call, as Terraform makes it.
pub trait Direct: ProtocolServer + Values {
    fn upgrade_current(
        &self,
        type_name: &str,
        version: i64,
        json: &str,
    ) -> Option<Result<terrane_value::Value, Vec<tf::Diagnostic>>>;
}

impl<P: terrane_sdk::Provider> Direct for terrane_sdk::ProviderServer<P> {
    fn upgrade_current(
        &self,
        type_name: &str,
        version: i64,
        json: &str,
    ) -> Option<Result<terrane_value::Value, Vec<tf::Diagnostic>>> {
        terrane_sdk::ProviderServer::upgrade_current(self, type_name, version, json)
    }
}

/// A resource call's answer on values: the value(s) and the provider's
/// diagnostics, or only diagnostics when the call failed (the wire call
/// then answers its request's prior values, as the SDK server does).
pub type Answer<T> = Result<T, Vec<tf::Diagnostic>>;

/// The resource calls of an in-process server on values: the same code as
/// its wire methods without msgpack between engine and provider. The
/// caller passes only values conforming to the type's value type, without
/// marks (what decoding the wire form would give the server); the server
/// answers values as decoding its wire answer would give the engine.
#[async_trait::async_trait]
pub trait Values: Send + Sync {
    fn value_type(&self, type_name: &str) -> Option<&terrane_value::Type>;
    async fn validate(&self, type_name: &str, config: &Value) -> Vec<tf::Diagnostic>;
    async fn read(
        &self,
        type_name: &str,
        state: &Value,
        private: &[u8],
    ) -> Answer<(Value, Vec<u8>)>;
    async fn plan(
        &self,
        type_name: &str,
        prior: Value,
        proposed: Value,
        config: Value,
    ) -> Answer<(Value, Vec<Path>, Vec<tf::Diagnostic>)>;
    async fn apply(
        &self,
        type_name: &str,
        prior: Value,
        planned: Value,
        config: Value,
    ) -> Answer<(Value, Vec<u8>)>;
}

#[async_trait::async_trait]
impl<P: terrane_sdk::Provider> Values for terrane_sdk::ProviderServer<P> {
    fn value_type(&self, type_name: &str) -> Option<&terrane_value::Type> {
        self.resource_value_type(type_name)
    }
    async fn validate(&self, type_name: &str, config: &Value) -> Vec<tf::Diagnostic> {
        self.validate_resource_value(type_name, config).await
    }
    async fn read(
        &self,
        type_name: &str,
        state: &Value,
        private: &[u8],
    ) -> Answer<(Value, Vec<u8>)> {
        self.read_resource_value(type_name, state, private).await
    }
    async fn plan(
        &self,
        type_name: &str,
        prior: Value,
        proposed: Value,
        config: Value,
    ) -> Answer<(Value, Vec<Path>, Vec<tf::Diagnostic>)> {
        self.plan_resource_value(type_name, prior, proposed, config)
            .await
    }
    async fn apply(
        &self,
        type_name: &str,
        prior: Value,
        planned: Value,
        config: Value,
    ) -> Answer<(Value, Vec<u8>)> {
        self.apply_resource_value(type_name, prior, planned, config)
            .await
    }
}

/// A protocol server (the SDK's `ProviderServer`) in this process.
pub struct InProcess<S> {
    server: S,
    closed: AtomicBool,
    values: bool,
}

impl<S: Direct> InProcess<S> {
    pub fn new(server: S) -> InProcess<S> {
        InProcess {
            server,
            closed: AtomicBool::new(false),
            values: true,
        }
    }

    /// Every call through the wire methods, msgpack included, as a plugin
    /// gets them: what the value path is compared with.
    pub fn wire_only(server: S) -> InProcess<S> {
        InProcess {
            values: false,
            ..InProcess::new(server)
        }
    }
}

/// The protocol the plugin chose: protocol 6's calls, and protocol 5's
/// whose messages agree with them, are unary calls on the connection
/// ([`Plugin::unary`]); protocol 5's others go through its typed client.
enum Client {
    V6,
    V5(Client5),
}

/// A protocol-5 plugin's typed client, for the calls carried across (see
/// [`call5`]).
struct Client5 {
    typed: Provider5Client<terrane_plugin::Conn>,
}

/// A launched plugin process, speaking protocol 5 or 6.
pub struct Plugin {
    client: Client,
    conn: terrane_plugin::Conn,
    process: Mutex<Option<PluginClient>>,
    crashed: AtomicBool,
    closed: AtomicBool,
}

impl Plugin {
    pub fn new(process: PluginClient) -> Plugin {
        let client = match process.protocol {
            5 => Client::V5(Client5 {
                typed: process.provider5(),
            }),
            _ => Client::V6,
        };
        Plugin {
            client,
            conn: process.conn(),
            process: Mutex::new(Some(process)),
            crashed: AtomicBool::new(false),
            closed: AtomicBool::new(false),
        }
    }

    /// One unary call of `path` with `request` on the connection, without
    /// tonic's client (see `terrane_plugin::unary`): its failures are
    /// tonic's, classified as every call's are.
    async fn unary<Req, Resp>(&self, path: &'static str, request: &Req) -> Result<Resp, CallError>
    where
        Req: prost::Message,
        Resp: prost::Message + Default,
    {
        let body = terrane_plugin::unary::frame(request.encoded_len(), |buf| {
            // A vector grows as needed: encoding cannot run out of room.
            let _ = request.encode(buf);
        })
        .map_err(CallError::Failed)?;
        let answer = self
            .conn
            .unary(path, body)
            .await
            .map_err(|s| self.classify(s))?;
        Resp::decode(answer).map_err(|e| CallError::Failed(Status::internal(e.to_string())))
    }

    fn check(&self) -> Result<(), CallError> {
        if self.closed.load(Ordering::Acquire) {
            return Err(CallError::Closed);
        }
        if self.crashed.load(Ordering::Acquire) {
            return Err(CallError::Crashed(
                "the plugin had already exited after an earlier failure".into(),
            ));
        }
        Ok(())
    }

    /// A broken connection means the process is gone (it exited, crashed
    /// or was killed); a status the plugin itself sent is an RPC failure.
    fn classify(&self, s: Status) -> CallError {
        if self.closed.load(Ordering::Acquire) {
            return CallError::Closed;
        }
        if is_transport_failure(&s) {
            self.crashed.store(true, Ordering::Release);
            return CallError::Crashed(transport_detail(&s));
        }
        CallError::Failed(s)
    }
}

/// Statuses tonic makes up when the connection breaks, as opposed to
/// statuses a live server sends.
fn is_transport_failure(s: &Status) -> bool {
    match s.code() {
        Code::Unavailable => true,
        Code::Unknown | Code::Internal | Code::Cancelled => {
            let m = s.message().to_ascii_lowercase();
            [
                "transport",
                "connection",
                "broken pipe",
                "h2 protocol",
                "stream closed",
                "reset",
                "eof",
                "error reading a body",
            ]
            .iter()
            .any(|w| m.contains(w))
        }
        _ => false,
    }
}

fn transport_detail(s: &Status) -> String {
    format!(
        "the plugin exited or closed its connection before answering ({})",
        s.message()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transport_failures_versus_plugin_statuses() {
        let check = |s: Status, want: bool, case: &str| {
            assert_eq!(is_transport_failure(&s), want, "case {case}")
        };
        check(
            Status::unavailable("error trying to connect"),
            true,
            "unavailable",
        );
        check(
            Status::unknown("transport error"),
            true,
            "unknown_transport",
        );
        check(
            Status::internal("h2 protocol error: stream no longer needed"),
            true,
            "internal_h2",
        );
        check(
            Status::unimplemented("not implemented"),
            false,
            "unimplemented",
        );
        check(
            Status::unknown("provider panicked: index out of range"),
            false,
            "unknown_from_plugin",
        );
        check(Status::invalid_argument("bad"), false, "invalid_argument");
    }
}
