//! terrane-registry: what `terrane init` needs to install providers as
//! Terraform does.
//!
//! - [`http`]: an HTTPS GET client (rustls, `SSL_CERT_FILE`, timeouts,
//!   bearer tokens per host).
//! - [`sums`]: SHA256SUMS documents and their OpenPGP signatures (rpgp).
//! - [`install`]: service discovery, the Provider Registry Protocol,
//!   verification and unpacking into Terraform's `.terraform/providers`.
//! - [`packed`]: release zips in a filesystem mirror (the packed layout).
//! - [`modules`]: the Module Registry Protocol and go-getter style
//!   module packages (git, https archives).
//! - [`redact`]: credentials in source addresses hidden from what is
//!   printed.

pub mod http;
pub mod install;
pub mod modules;
pub mod packed;
pub mod redact;
pub mod sums;

pub use install::{InstallError, Installed, Installer, Requirement};
