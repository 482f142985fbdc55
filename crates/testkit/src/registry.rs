//! A local HTTPS provider registry on 127.0.0.1 for installer tests, real
//! enough for both terrane and Terraform: a throwaway CA (rcgen) written
//! to a file for `SSL_CERT_FILE`, a CLI configuration whose `host` block
//! points `registry.terrane.test` at this server, and provider releases as
//! the Provider Registry Protocol serves them (version list, download
//! metadata, zips, a SHA256SUMS signed by a throwaway OpenPGP key), and
//! the same releases as a provider network mirror under `/mirror/`
//! (`index.json`, `<version>.json` with each archive's `h1:`).
//!
//! Each path's answer can be replaced ([`Registry::set`]) to make the
//! failures the installer must report: a status, garbage, silence, or a
//! body cut short. Every request's path and whether it carried the
//! expected bearer token are recorded ([`Registry::requests`]).

use pgp::composed::{
    ArmorOptions, DetachedSignature, KeyType, SecretKeyParamsBuilder, SignedSecretKey,
};
use pgp::crypto::hash::HashAlgorithm;
use pgp::ser::Serialize;
use pgp::types::{KeyDetails, Password};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The registry host name the CLI configuration maps to this server.
pub const HOST: &str = "registry.terrane.test";

/// One path's answer.
#[derive(Clone, Debug)]
pub enum Answer {
    /// 200 with this body.
    Body(Vec<u8>),
    /// This status, empty body.
    Status(u16),
    /// Reads the request, then sends nothing until the client gives up.
    Silence,
    /// 200 announcing the full length but closing after half the body.
    CutShort(Vec<u8>),
    /// 204 with this `X-Terraform-Get` header (a module download).
    TerraformGet(String),
    /// 200 with this body, sent as this `Content-Type`.
    Typed(Vec<u8>, &'static str),
}

/// One request the server saw.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seen {
    pub path: String,
    pub authorization: Option<String>,
}

type Routes = Arc<Mutex<BTreeMap<String, Answer>>>;

/// Published releases: (namespace, type) -> version -> protocols.
type Releases = BTreeMap<(String, String), BTreeMap<String, Vec<String>>>;

/// A throwaway OpenPGP signing key.
pub struct SigningKey {
    secret: SignedSecretKey,
    /// The public key, ASCII-armored.
    pub armored: String,
    /// The key ID, 16 upper-case hex digits.
    pub id: String,
}

impl SigningKey {
    pub fn generate() -> SigningKey {
        let mut params = SecretKeyParamsBuilder::default();
        params
            .key_type(KeyType::Ed25519Legacy)
            .can_certify(true)
            .can_sign(true)
            .primary_user_id("terrane test registry <test@terrane.test>".into());
        let secret = params
            .build()
            .expect("key parameters")
            .generate(rand::thread_rng())
            .expect("generate OpenPGP key");
        let public = pgp::composed::SignedPublicKey::from(secret.clone());
        let armored = public
            .to_armored_string(ArmorOptions::default())
            .expect("armor public key");
        let id = hex::encode_upper(secret.legacy_key_id().as_ref());
        SigningKey {
            secret,
            armored,
            id,
        }
    }

    /// A binary detached signature over `data` (as HashiCorp's releases
    /// ship `SHA256SUMS.sig`).
    pub fn sign(&self, data: &[u8]) -> Vec<u8> {
        DetachedSignature::sign_binary_data(
            rand::thread_rng(),
            &self.secret.primary_key,
            &Password::empty(),
            HashAlgorithm::Sha256,
            data,
        )
        .expect("sign")
        .to_bytes()
        .expect("serialize signature")
    }
}

/// A running registry. Dropping it stops the server.
pub struct Registry {
    pub dir: tempfile::TempDir,
    pub port: u16,
    /// The CA certificate file, for `SSL_CERT_FILE`.
    pub ca_file: PathBuf,
    /// A CLI configuration file with the `host` block, for
    /// `TF_CLI_CONFIG_FILE`.
    pub cli_config: PathBuf,
    pub key: SigningKey,
    routes: Routes,
    seen: Arc<Mutex<Vec<Seen>>>,
    /// Releases: (namespace, type) -> version -> protocols.
    releases: Mutex<Releases>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// The platform name Terraform uses here (`linux_amd64`).
pub fn os_arch() -> (String, String) {
    let os = match std::env::consts::OS {
        "macos" => "darwin",
        o => o,
    };
    let arch = match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        a => a,
    };
    (os.to_string(), arch.to_string())
}

/// A zip holding `name` (mode 0755) with `content`.
pub fn zip_of(name: &str, content: &[u8]) -> Vec<u8> {
    let mut buf = std::io::Cursor::new(Vec::new());
    {
        let mut w = zip::ZipWriter::new(&mut buf);
        let opts = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated)
            .unix_permissions(0o755);
        w.start_file(name, opts).expect("zip entry");
        w.write_all(content).expect("zip write");
        w.finish().expect("zip finish");
    }
    buf.into_inner()
}

impl Registry {
    /// Starts the server with a fresh CA and signing key.
    pub fn start() -> Registry {
        let dir = crate::temp_dir();
        let ca_key = rcgen::KeyPair::generate().expect("CA key");
        let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("CA params");
        ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "terrane test registry CA");
        ca_params.key_usages = vec![
            rcgen::KeyUsagePurpose::KeyCertSign,
            rcgen::KeyUsagePurpose::DigitalSignature,
        ];
        let ca = rcgen::CertifiedIssuer::self_signed(ca_params, ca_key).expect("CA cert");
        let leaf_key = rcgen::KeyPair::generate().expect("server key");
        let mut leaf_params =
            rcgen::CertificateParams::new(vec!["localhost".to_string(), HOST.to_string()])
                .expect("server params");
        leaf_params
            .subject_alt_names
            .push(rcgen::SanType::IpAddress(std::net::IpAddr::V4(
                std::net::Ipv4Addr::LOCALHOST,
            )));
        let leaf = leaf_params.signed_by(&leaf_key, &ca).expect("server cert");
        let ca_file = dir.path().join("ca.pem");
        std::fs::write(&ca_file, ca.pem()).expect("write CA");

        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let tls = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("TLS versions")
            .with_no_client_auth()
            .with_single_cert(
                vec![leaf.der().clone()],
                rustls::pki_types::PrivateKeyDer::Pkcs8(leaf_key.serialize_der().into()),
            )
            .expect("TLS server config");
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(tls));

        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.set_nonblocking(true).expect("nonblocking");
        let port = listener.local_addr().expect("addr").port();
        let routes: Routes = Arc::default();
        let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
        let (stop, mut stopped) = tokio::sync::oneshot::channel::<()>();
        let (r, s) = (routes.clone(), seen.clone());
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
                loop {
                    tokio::select! {
                        _ = &mut stopped => break,
                        accepted = listener.accept() => {
                            let Ok((tcp, _)) = accepted else { continue };
                            let (acceptor, r, s) = (acceptor.clone(), r.clone(), s.clone());
                            tokio::spawn(async move {
                                if let Ok(tls) = acceptor.accept(tcp).await {
                                    serve(tls, r, s).await;
                                }
                            });
                        }
                    }
                }
            });
        });
        let cli_config = dir.path().join("terraform.rc");
        let reg = Registry {
            dir,
            port,
            ca_file,
            cli_config,
            key: SigningKey::generate(),
            routes,
            seen,
            releases: Mutex::default(),
            stop: Some(stop),
            thread: Some(thread),
        };
        reg.write_cli_config("");
        reg
    }

    /// The network mirror's base URL (for a `network_mirror` block).
    pub fn mirror_url(&self) -> String {
        format!("{}/mirror/", self.base())
    }

    /// `https://127.0.0.1:PORT`.
    pub fn base(&self) -> String {
        format!("https://127.0.0.1:{}", self.port)
    }

    /// Writes the CLI configuration: the `host` block, then `extra`.
    pub fn write_cli_config(&self, extra: &str) {
        let text = format!(
            "host \"{HOST}\" {{\n  services = {{\n    \"providers.v1\" = \"{}/v1/providers/\"\n    \"modules.v1\" = \"{}/v1/modules/\"\n  }}\n}}\n{extra}",
            self.base(),
            self.base()
        );
        std::fs::write(&self.cli_config, text).expect("write CLI config");
    }

    /// The environment both tools need: the CA and the CLI configuration.
    pub fn env(&self) -> Vec<(String, String)> {
        vec![
            ("SSL_CERT_FILE".into(), self.ca_file.display().to_string()),
            (
                "TF_CLI_CONFIG_FILE".into(),
                self.cli_config.display().to_string(),
            ),
        ]
    }

    /// Replaces the answer for `path`.
    pub fn set(&self, path: &str, answer: Answer) {
        self.routes.lock().unwrap().insert(path.to_string(), answer);
    }

    /// The current answer for `path`.
    pub fn get(&self, path: &str) -> Option<Answer> {
        self.routes.lock().unwrap().get(path).cloned()
    }

    /// The requests seen so far.
    pub fn requests(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    /// Publishes `namespace/type` `version` speaking `protocols`: a zip of
    /// `binary` for this platform and one for `darwin_arm64` (so the
    /// signed checksums list several platforms, as real releases do), a
    /// manifest entry, the signed SHA256SUMS, and the registry answers.
    /// Returns the path of this platform's zip.
    pub fn publish(
        &self,
        namespace: &str,
        type_name: &str,
        version: &str,
        binary: &[u8],
        protocols: &[&str],
    ) -> String {
        let (os, arch) = os_arch();
        let stem = format!("terraform-provider-{type_name}_{version}");
        let exe = format!("terraform-provider-{type_name}_v{version}");
        let dl = format!("/dl/{namespace}/{type_name}/{version}");
        let mut sums = String::new();
        let mut zips = Vec::new();
        for (o, a) in [(os.as_str(), arch.as_str()), ("darwin", "arm64")] {
            let mut content = binary.to_vec();
            if (o, a) != (os.as_str(), arch.as_str()) {
                content.extend_from_slice(b"\n# other platform\n");
            }
            let z = zip_of(&exe, &content);
            let file = format!("{stem}_{o}_{a}.zip");
            zips.push((o.to_string(), a.to_string(), file.clone(), z));
        }
        let manifest =
            format!("{{\"version\":1,\"metadata\":{{\"protocol_versions\":{protocols:?}}}}}");
        let mut lines: Vec<(String, String)> = zips
            .iter()
            .map(|(_, _, f, z)| (f.clone(), hex::encode(Sha256::digest(z))))
            .collect();
        lines.push((
            format!("{stem}_manifest.json"),
            hex::encode(Sha256::digest(manifest.as_bytes())),
        ));
        lines.sort();
        for (f, h) in &lines {
            sums.push_str(&format!("{h}  {f}\n"));
        }
        let sig = self.key.sign(sums.as_bytes());
        self.set(
            &format!("{dl}/{stem}_SHA256SUMS"),
            Answer::Body(sums.into_bytes()),
        );
        self.set(&format!("{dl}/{stem}_SHA256SUMS.sig"), Answer::Body(sig));
        let mut own_zip = String::new();
        let mut archives = Vec::new();
        for (o, a, file, z) in zips {
            // The h1: of the unpacked package: one file, so one line.
            let content = {
                let mut r = zip::ZipArchive::new(std::io::Cursor::new(&z)).expect("own zip");
                let mut f = r.by_index(0).expect("entry");
                let mut b = Vec::new();
                std::io::Read::read_to_end(&mut f, &mut b).expect("read entry");
                b
            };
            let line = format!("{}  {exe}\n", hex::encode(Sha256::digest(&content)));
            let h1 = format!(
                "h1:{}",
                base64::Engine::encode(
                    &base64::engine::general_purpose::STANDARD,
                    Sha256::digest(line.as_bytes())
                )
            );
            archives.push(format!(
                "{}:{{\"url\":{},\"hashes\":[{}]}}",
                json_str(&format!("{o}_{a}")),
                json_str(&format!("{}{dl}/{file}", self.base())),
                json_str(&h1)
            ));
            let shasum = hex::encode(Sha256::digest(&z));
            self.set(&format!("{dl}/{file}"), Answer::Body(z));
            let meta = serde_like_json(&[
                ("protocols", json_list(protocols)),
                ("os", json_str(&o)),
                ("arch", json_str(&a)),
                ("filename", json_str(&file)),
                (
                    "download_url",
                    json_str(&format!("{}{dl}/{file}", self.base())),
                ),
                (
                    "shasums_url",
                    json_str(&format!("{}{dl}/{stem}_SHA256SUMS", self.base())),
                ),
                (
                    "shasums_signature_url",
                    json_str(&format!("{}{dl}/{stem}_SHA256SUMS.sig", self.base())),
                ),
                ("shasum", json_str(&shasum)),
                (
                    "signing_keys",
                    format!(
                        "{{\"gpg_public_keys\":[{{\"key_id\":{},\"ascii_armor\":{}}}]}}",
                        json_str(&self.key.id),
                        json_str(&self.key.armored)
                    ),
                ),
            ]);
            let path = format!("/v1/providers/{namespace}/{type_name}/{version}/download/{o}/{a}");
            if (o.as_str(), a.as_str()) == (os.as_str(), arch.as_str()) {
                own_zip = format!("{dl}/{file}");
            }
            self.set(&path, Answer::Body(meta.into_bytes()));
        }
        let mirror = format!("/mirror/{HOST}/{namespace}/{type_name}");
        self.set(
            &format!("{mirror}/{version}.json"),
            Answer::Body(format!("{{\"archives\":{{{}}}}}", archives.join(",")).into_bytes()),
        );
        let mut releases = self.releases.lock().unwrap();
        let versions = releases
            .entry((namespace.to_string(), type_name.to_string()))
            .or_default();
        versions.insert(
            version.to_string(),
            protocols.iter().map(|p| p.to_string()).collect(),
        );
        let list: Vec<String> = versions
            .iter()
            .map(|(v, p)| {
                format!(
                    "{{\"version\":{},\"protocols\":{},\"platforms\":[{{\"os\":{},\"arch\":{}}},{{\"os\":\"darwin\",\"arch\":\"arm64\"}}]}}",
                    json_str(v),
                    json_list(&p.iter().map(String::as_str).collect::<Vec<_>>()),
                    json_str(&os),
                    json_str(&arch)
                )
            })
            .collect();
        let index: Vec<String> = versions
            .keys()
            .map(|v| format!("{}:{{}}", json_str(v)))
            .collect();
        self.set(
            &format!("{mirror}/index.json"),
            Answer::Body(format!("{{\"versions\":{{{}}}}}", index.join(",")).into_bytes()),
        );
        self.set(
            &format!("/v1/providers/{namespace}/{type_name}/versions"),
            Answer::Body(format!("{{\"versions\":[{}]}}", list.join(",")).into_bytes()),
        );
        own_zip
    }
}

/// A `.tar.gz` of `files` (path, content), each mode 0644.
pub fn tar_gz_of(files: &[(&str, &str)]) -> Vec<u8> {
    let mut b = tar::Builder::new(flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::default(),
    ));
    for (path, content) in files {
        let mut h = tar::Header::new_gnu();
        h.set_size(content.len() as u64);
        h.set_mode(0o644);
        h.set_entry_type(tar::EntryType::Regular);
        b.append_data(&mut h, path, content.as_bytes())
            .expect("tar entry");
    }
    b.into_inner().expect("tar").finish().expect("gzip")
}

/// A zip of `files` (path, content).
pub fn zip_files(files: &[(&str, &str)]) -> Vec<u8> {
    let mut buf = std::io::Cursor::new(Vec::new());
    {
        let mut w = zip::ZipWriter::new(&mut buf);
        let opts = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated)
            .unix_permissions(0o644);
        for (path, content) in files {
            w.start_file(*path, opts).expect("zip entry");
            w.write_all(content.as_bytes()).expect("zip write");
        }
        w.finish().expect("zip finish");
    }
    buf.into_inner()
}

impl Registry {
    /// Publishes module `namespace/name/provider` `version` as the Module
    /// Registry Protocol serves it: the version list, a download answering
    /// 204 with `X-Terraform-Get` naming a `.tar.gz` of `files` on this
    /// server. Returns the archive's path.
    pub fn publish_module(
        &self,
        namespace: &str,
        name: &str,
        provider: &str,
        version: &str,
        files: &[(&str, &str)],
    ) -> String {
        let base = format!("/v1/modules/{namespace}/{name}/{provider}");
        let archive = format!("/archives/{namespace}-{name}-{provider}-{version}.tar.gz");
        self.set(&archive, Answer::Body(tar_gz_of(files)));
        self.set(
            &format!("{base}/{version}/download"),
            Answer::TerraformGet(format!("{}{archive}", self.base())),
        );
        let mut releases = self.releases.lock().unwrap();
        let versions = releases
            .entry((format!("module:{namespace}/{name}"), provider.to_string()))
            .or_default();
        versions.insert(version.to_string(), Vec::new());
        let list: Vec<String> = versions
            .keys()
            .map(|v| format!("{{\"version\":{}}}", json_str(v)))
            .collect();
        self.set(
            &format!("{base}/versions"),
            Answer::Body(
                format!("{{\"modules\":[{{\"versions\":[{}]}}]}}", list.join(",")).into_bytes(),
            ),
        );
        archive
    }
}

fn json_str(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn json_list(items: &[&str]) -> String {
    format!(
        "[{}]",
        items
            .iter()
            .map(|s| json_str(s))
            .collect::<Vec<_>>()
            .join(",")
    )
}

fn serde_like_json(fields: &[(&str, String)]) -> String {
    format!(
        "{{{}}}",
        fields
            .iter()
            .map(|(k, v)| format!("{}:{v}", json_str(k)))
            .collect::<Vec<_>>()
            .join(",")
    )
}

impl Drop for Registry {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Answers one HTTP/1.1 request and closes the connection.
async fn serve<S>(mut io: S, routes: Routes, seen: Arc<Mutex<Vec<Seen>>>)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
        match io.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
        if buf.len() > 64 * 1024 {
            return;
        }
    }
    let head = String::from_utf8_lossy(&buf).to_string();
    let mut lines = head.split("\r\n");
    let path = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .unwrap_or("/")
        .to_string();
    let authorization = lines.take_while(|l| !l.is_empty()).find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.eq_ignore_ascii_case("authorization")
            .then(|| v.trim().to_string())
    });
    seen.lock().unwrap().push(Seen {
        path: path.clone(),
        authorization,
    });
    let answer = routes.lock().unwrap().get(&path).cloned();
    let mut extra = String::new();
    let mut typed = None;
    let (status, body, cut) = match answer {
        Some(Answer::TerraformGet(location)) => {
            extra = format!("X-Terraform-Get: {location}\r\n");
            (204, Vec::new(), false)
        }
        Some(Answer::Body(b)) => (200, b, false),
        Some(Answer::Typed(b, ty)) => {
            typed = Some(ty);
            (200, b, false)
        }
        Some(Answer::Status(s)) => (s, Vec::new(), false),
        Some(Answer::CutShort(b)) => (200, b, true),
        Some(Answer::Silence) => {
            tokio::time::sleep(std::time::Duration::from_secs(120)).await;
            return;
        }
        None => (404, Vec::new(), false),
    };
    let reason = match status {
        200 => "OK",
        204 => "No Content",
        404 => "Not Found",
        500 => "Internal Server Error",
        _ => "Status",
    };
    // JSON documents go as JSON: Terraform refuses a network mirror's
    // answer of any other type.
    let content_type = if let Some(ty) = typed {
        ty
    } else if path.split('?').next().unwrap_or("").ends_with(".json") {
        "application/json"
    } else {
        "application/octet-stream"
    };
    let header = format!(
        "HTTP/1.1 {status} {reason}\r\n{extra}Content-Length: {}\r\nContent-Type: {content_type}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = io.write_all(header.as_bytes()).await;
    let send = if cut {
        &body[..body.len() / 2]
    } else {
        &body[..]
    };
    let _ = io.write_all(send).await;
    let _ = io.flush().await;
    let _ = io.shutdown().await;
}

/// The binary a test publishes when the provider is not run: a shell
/// script that says what it is.
pub fn script_binary(name: &str) -> Vec<u8> {
    format!("#!/bin/sh\necho {name}\n").into_bytes()
}

/// Whether `dir` holds anything (a leftover temporary directory, say).
pub fn leftovers(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with(".terrane-install-"))
        {
            out.push(p.clone());
        }
        if p.is_dir() {
            out.extend(leftovers(&p));
        }
    }
    out
}

/// A throwaway CA and a server certificate it signs for the DNS `names`
/// (and 127.0.0.1), written as PEM files into `dir`: returns the paths of
/// the CA certificate (for `SSL_CERT_FILE`), the server certificate and
/// its key. For servers the tests start themselves (Azurite's --cert/--key).
pub fn throwaway_tls(dir: &Path, names: &[&str]) -> (PathBuf, PathBuf, PathBuf) {
    let ca_key = rcgen::KeyPair::generate().expect("CA key");
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("CA params");
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "terrane test CA");
    ca_params.key_usages = vec![
        rcgen::KeyUsagePurpose::KeyCertSign,
        rcgen::KeyUsagePurpose::DigitalSignature,
    ];
    let ca = rcgen::CertifiedIssuer::self_signed(ca_params, ca_key).expect("CA cert");
    let leaf_key = rcgen::KeyPair::generate().expect("server key");
    let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    let mut leaf_params = rcgen::CertificateParams::new(names).expect("server params");
    leaf_params
        .subject_alt_names
        .push(rcgen::SanType::IpAddress(std::net::IpAddr::V4(
            std::net::Ipv4Addr::LOCALHOST,
        )));
    let leaf = leaf_params.signed_by(&leaf_key, &ca).expect("server cert");
    let files = (
        dir.join("ca.pem"),
        dir.join("server.pem"),
        dir.join("server.key"),
    );
    std::fs::write(&files.0, ca.pem()).expect("write CA");
    std::fs::write(&files.1, leaf.pem()).expect("write certificate");
    std::fs::write(&files.2, leaf_key.serialize_pem()).expect("write key");
    files
}
