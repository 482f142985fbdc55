//! Ephemeral resources (Terraform 1.10+): values a configuration reads for
//! the length of one plan or apply and that never reach a plan or state
//! file, such as a short-lived credential or a generated password.
//!
//! The host opens one (`OpenEphemeralResource`) with its configuration,
//! renews it while it still needs it if the provider asked for that
//! (`RenewEphemeralResource`, when `renew_at` is due), and closes it at
//! the end of the phase (`CloseEphemeralResource`). Between the calls the
//! provider keeps what it needs in `private` bytes the host hands back;
//! like the result, they are never written anywhere.
//!
//! The split mirrors resources: an [`EphemeralResourceType`] declares the
//! schema and makes a fresh [`EphemeralResource`] per call from the data
//! `configure` produced; [`SimpleEphemeral`] serves providers that need no
//! split.

use crate::ctx::Ctx;
use crate::diag::Diagnostics;
use crate::schema::ResourceSchema;
use async_trait::async_trait;
use std::sync::Arc;
use std::time::SystemTime;
use terrane_value::Value;

/// What a successful open returns.
#[derive(Clone, Debug)]
pub struct Opened {
    /// The configuration with every computed attribute set; wholly known.
    pub result: Value,
    /// Provider-private bytes handed back to renew and close.
    pub private: Vec<u8>,
    /// When the host must call renew if it still holds the resource.
    pub renew_at: Option<SystemTime>,
}

impl Opened {
    /// An opened resource with no private bytes that never needs renewing.
    pub fn new(result: Value) -> Opened {
        Opened {
            result,
            private: Vec::new(),
            renew_at: None,
        }
    }
}

/// What a successful renew returns.
#[derive(Clone, Debug, Default)]
pub struct Renewed {
    /// Replaces the private bytes the host holds.
    pub private: Vec<u8>,
    /// When to renew again, if ever.
    pub renew_at: Option<SystemTime>,
}

/// An ephemeral resource type: schema and shared state; `D` is the
/// provider's [`Provider::Data`](crate::Provider::Data).
pub trait EphemeralResourceType<D = ()>: Send + Sync {
    /// Full type name, e.g. `random_password`.
    fn name(&self) -> &str;
    /// The ephemeral resource's schema (a data source's rules apply: no
    /// plan, no state).
    fn schema(&self) -> Result<ResourceSchema, Diagnostics>;
    /// A fresh instance for one call, given what `configure` produced.
    fn instance(&self, data: Option<Arc<D>>) -> Box<dyn EphemeralResource>;
}

/// One ephemeral resource's operations.
#[async_trait]
pub trait EphemeralResource: Send + Sync {
    /// Opens the resource for `config` (wholly known: the host does not
    /// open one whose configuration is still unknown).
    async fn open(&self, ctx: &Ctx, config: &Value) -> Result<Opened, Diagnostics>;
    /// Extends the resource's life; by default nothing needs doing.
    async fn renew(&self, _ctx: &Ctx, private: &[u8]) -> Result<Renewed, Diagnostics> {
        Ok(Renewed {
            private: private.to_vec(),
            renew_at: None,
        })
    }
    /// Releases what open acquired; by default nothing.
    async fn close(&self, _ctx: &Ctx, _private: &[u8]) -> Result<(), Diagnostics> {
        Ok(())
    }
    /// Extra configuration checks beyond the schema's validators.
    async fn validate(&self, _config: &Value) -> Diagnostics {
        Diagnostics::new()
    }
}

/// An ephemeral resource type for providers that need no type/instance
/// split: the same value serves every call.
pub struct SimpleEphemeral<E> {
    /// Full type name, e.g. `random_password`.
    pub name: &'static str,
    /// Builds the schema.
    pub schema: fn() -> ResourceSchema,
    /// The value that serves every call.
    pub resource: E,
}

impl<E: EphemeralResource + Clone + 'static, D> EphemeralResourceType<D> for SimpleEphemeral<E> {
    fn name(&self) -> &str {
        self.name
    }
    fn schema(&self) -> Result<ResourceSchema, Diagnostics> {
        Ok((self.schema)())
    }
    fn instance(&self, _data: Option<Arc<D>>) -> Box<dyn EphemeralResource> {
        Box::new(self.resource.clone())
    }
}
