//! The context every provider call receives.

use tokio_util::sync::CancellationToken;

/// Per-call context: cancelled when Terraform stops the provider.
#[derive(Clone, Default)]
pub struct Ctx {
    /// Cancelled when Terraform sends StopProvider (for example on Ctrl-C):
    /// long operations should select on it and return an error.
    pub cancel: CancellationToken,
}
