//! Terraform's view of a backend block: each backend's schema (attribute
//! names and cty types, as Terraform 1.15 declares them), the hash
//! Terraform records for a block in `.terraform/terraform.tfstate`, the
//! comparison of a block's setting with a recorded one, and which settings
//! are secrets terrane never writes into that record.
//!
//! Facts carried over from Terraform: `configs.Backend.Hash` is CRC-32
//! (IEEE) of cty's set-hash bytes of the tuple (type, the block decoded
//! under the schema with nothing required); a nested attribute decodes to
//! an object holding every one of its attributes (null when unset).

use serde_json::Value as Json;

/// A cty type as it occurs in backend schemas.
#[derive(Clone, Copy, Debug)]
pub enum Ty {
    Str,
    Num,
    Bool,
    /// `list(string)`.
    List,
    /// `set(string)`.
    Set,
    /// `map(string)`.
    Map,
    /// A single nested attribute.
    Object(Schema),
}

/// Attribute names and types of a backend block (or a nested object).
pub type Schema = &'static [(&'static str, Ty)];

use Ty::{Bool, List, Map, Num, Object, Set, Str};

const LOCAL: Schema = &[("path", Str), ("workspace_dir", Str)];

const PG: Schema = &[
    ("conn_str", Str),
    ("schema_name", Str),
    ("skip_schema_creation", Bool),
    ("skip_table_creation", Bool),
    ("skip_index_creation", Bool),
];

const HTTP: Schema = &[
    ("address", Str),
    ("update_method", Str),
    ("lock_address", Str),
    ("lock_method", Str),
    ("unlock_address", Str),
    ("unlock_method", Str),
    ("username", Str),
    ("password", Str),
    ("skip_cert_verification", Bool),
    ("retry_max", Num),
    ("retry_wait_min", Num),
    ("retry_wait_max", Num),
    ("client_ca_certificate_pem", Str),
    ("client_certificate_pem", Str),
    ("client_private_key_pem", Str),
];

const S3_ENDPOINTS: Schema = &[
    ("dynamodb", Str),
    ("iam", Str),
    ("s3", Str),
    ("sso", Str),
    ("sts", Str),
];

const S3_ASSUME_ROLE: Schema = &[
    ("role_arn", Str),
    ("duration", Str),
    ("external_id", Str),
    ("policy", Str),
    ("policy_arns", Set),
    ("session_name", Str),
    ("source_identity", Str),
    ("tags", Map),
    ("transitive_tag_keys", Set),
];

const S3_WEB_IDENTITY: Schema = &[
    ("role_arn", Str),
    ("duration", Str),
    ("policy", Str),
    ("policy_arns", Set),
    ("session_name", Str),
    ("web_identity_token", Str),
    ("web_identity_token_file", Str),
];

const S3: Schema = &[
    ("bucket", Str),
    ("key", Str),
    ("region", Str),
    ("allowed_account_ids", Set),
    ("dynamodb_endpoint", Str),
    ("ec2_metadata_service_endpoint", Str),
    ("ec2_metadata_service_endpoint_mode", Str),
    ("endpoint", Str),
    ("endpoints", Object(S3_ENDPOINTS)),
    ("forbidden_account_ids", Set),
    ("iam_endpoint", Str),
    ("sts_endpoint", Str),
    ("sts_region", Str),
    ("encrypt", Bool),
    ("acl", Str),
    ("access_key", Str),
    ("secret_key", Str),
    ("kms_key_id", Str),
    ("dynamodb_table", Str),
    ("use_lockfile", Bool),
    ("profile", Str),
    ("retry_mode", Str),
    ("shared_config_files", Set),
    ("shared_credentials_file", Str),
    ("shared_credentials_files", Set),
    ("token", Str),
    ("skip_credentials_validation", Bool),
    ("skip_requesting_account_id", Bool),
    ("skip_metadata_api_check", Bool),
    ("skip_region_validation", Bool),
    ("skip_s3_checksum", Bool),
    ("sse_customer_key", Str),
    ("workspace_key_prefix", Str),
    ("force_path_style", Bool),
    ("use_path_style", Bool),
    ("max_retries", Num),
    ("assume_role", Object(S3_ASSUME_ROLE)),
    ("assume_role_with_web_identity", Object(S3_WEB_IDENTITY)),
    ("custom_ca_bundle", Str),
    ("http_proxy", Str),
    ("https_proxy", Str),
    ("no_proxy", Str),
    ("insecure", Bool),
    ("use_fips_endpoint", Bool),
    ("use_dualstack_endpoint", Bool),
];

const GCS: Schema = &[
    ("bucket", Str),
    ("prefix", Str),
    ("credentials", Str),
    ("access_token", Str),
    ("impersonate_service_account", Str),
    ("impersonate_service_account_delegates", List),
    ("encryption_key", Str),
    ("kms_encryption_key", Str),
    ("storage_custom_endpoint", Str),
];

const AZURERM: Schema = &[
    ("subscription_id", Str),
    ("resource_group_name", Str),
    ("storage_account_name", Str),
    ("container_name", Str),
    ("key", Str),
    ("lookup_blob_endpoint", Bool),
    ("snapshot", Bool),
    ("environment", Str),
    ("metadata_host", Str),
    ("access_key", Str),
    ("sas_token", Str),
    ("tenant_id", Str),
    ("client_id", Str),
    ("client_id_file_path", Str),
    ("endpoint", Str),
    ("client_certificate", Str),
    ("client_certificate_path", Str),
    ("client_certificate_password", Str),
    ("client_secret", Str),
    ("client_secret_file_path", Str),
    ("use_oidc", Bool),
    ("ado_pipeline_service_connection_id", Str),
    ("oidc_request_token", Str),
    ("oidc_request_url", Str),
    ("oidc_token", Str),
    ("oidc_token_file_path", Str),
    ("use_msi", Bool),
    ("msi_endpoint", Str),
    ("use_cli", Bool),
    ("use_aks_workload_identity", Bool),
    ("use_azuread_auth", Bool),
];

/// Backend `kind`'s schema as Terraform 1.15 declares it; None for kinds
/// this crate does not serve.
pub fn schema(kind: &str) -> Option<Schema> {
    match kind {
        "local" => Some(LOCAL),
        "pg" => Some(PG),
        "http" => Some(HTTP),
        "s3" => Some(S3),
        "gcs" => Some(GCS),
        "azurerm" => Some(AZURERM),
        _ => None,
    }
}

/// Settings of the cloud kinds that hold a secret (a key, a token, key
/// material). terrane keeps them out of the backend record it writes
/// (Terraform writes them there in plaintext); later commands take them
/// from the block again, or from the environment. Terraform run on such a
/// record takes them from the environment: s3's `access_key` is withheld
/// with its secret so that Terraform uses the environment's pair rather
/// than a key ID without its secret.
pub fn secrets(kind: &str) -> &'static [&'static str] {
    match kind {
        "s3" => &["access_key", "secret_key", "token", "sse_customer_key"],
        // `credentials` is a path or the key file's contents: both are
        // withheld (a path is harmless, but telling them apart would make
        // the record depend on the value).
        "gcs" => &["access_token", "credentials", "encryption_key"],
        "azurerm" => &[
            "access_key",
            "sas_token",
            "client_secret",
            "client_certificate",
            "client_certificate_password",
            "oidc_token",
            "oidc_request_token",
        ],
        _ => &[],
    }
}

/// Terraform's hash of a backend block (`configs.Backend.Hash`): CRC-32
/// (IEEE) of cty's hash bytes of the tuple (type, the block's literal
/// values decoded under the backend's schema). Values: strings quoted as
/// Go's `%q`, numbers in Go's `%.10g`, `T`/`F`, `~` for null; an object is
/// `<` each attribute's value (sorted by name) and `;` `>`, a list or set
/// `[` each element and `;` `]` (a set's strings sorted), a map `{` each
/// `key:value;` (sorted by key) `}`. `-backend-config` values are not part
/// of it, as in Terraform.
pub fn terraform_hash(kind: &str, schema: Schema, block: &crate::Settings) -> u64 {
    let mut bytes = format!("<{};", go_quote(kind));
    object_bytes(schema, &|n| block.get(n), &mut bytes);
    bytes.push_str(";>");
    u64::from(crc32(bytes.as_bytes()))
}

fn object_bytes<'a>(schema: Schema, get: &dyn Fn(&str) -> Option<&'a Json>, out: &mut String) {
    let mut names: Vec<&(&str, Ty)> = schema.iter().collect();
    names.sort_unstable_by_key(|(n, _)| *n);
    out.push('<');
    for (name, ty) in names {
        value_bytes(*ty, get(name), out);
        out.push(';');
    }
    out.push('>');
}

fn value_bytes(ty: Ty, v: Option<&Json>, out: &mut String) {
    let Some(v) = normalize(ty, v) else {
        out.push('~');
        return;
    };
    match (ty, &v) {
        (Object(s), Json::Object(m)) => object_bytes(s, &|n| m.get(n), out),
        (List | Set, Json::Array(items)) => {
            out.push('[');
            for i in items {
                value_bytes(Str, Some(i), out);
                out.push(';');
            }
            out.push(']');
        }
        (Map, Json::Object(m)) => {
            out.push('{');
            for (k, e) in m {
                out.push_str(&go_quote(k));
                out.push(':');
                value_bytes(Str, Some(e), out);
                out.push(';');
            }
            out.push('}');
        }
        (_, Json::Bool(b)) => out.push(if *b { 'T' } else { 'F' }),
        (_, Json::Number(n)) => out.push_str(&go_number(n)),
        (_, Json::String(s)) => out.push_str(&go_quote(s)),
        // A value of the wrong shape (Terraform refuses such a block).
        (_, other) => out.push_str(&go_quote(&other.to_string())),
    }
}

/// A setting's value converted to its schema type as cty would (a number
/// or bool given for a string, a string for a number or bool), a set's
/// strings sorted and deduplicated, a nested object with every attribute;
/// None for null.
pub fn normalize(ty: Ty, v: Option<&Json>) -> Option<Json> {
    let v = v.filter(|v| !v.is_null())?;
    Some(match (ty, v) {
        (Str, Json::Number(n)) => Json::String(n.to_string()),
        (Str, Json::Bool(b)) => Json::String(b.to_string()),
        (Num, Json::String(s)) => match s.parse::<serde_json::Number>() {
            Ok(n) => Json::Number(n),
            Err(_) => v.clone(),
        },
        (Bool, Json::String(s)) if s == "true" || s == "false" => Json::Bool(s == "true"),
        (List | Set, Json::Array(items)) => {
            let mut items: Vec<Json> = items
                .iter()
                .map(|i| normalize(Str, Some(i)))
                .map(|i| i.unwrap_or(Json::Null))
                .collect();
            if matches!(ty, Set) {
                items.sort_by_key(|i| i.to_string());
                items.dedup();
            }
            Json::Array(items)
        }
        (Map, Json::Object(m)) => Json::Object(
            m.iter()
                .map(|(k, e)| (k.clone(), normalize(Str, Some(e)).unwrap_or(Json::Null)))
                .collect(),
        ),
        (Object(s), Json::Object(m)) => Json::Object(
            s.iter()
                .map(|(n, t)| {
                    (
                        n.to_string(),
                        normalize(*t, m.get(*n)).unwrap_or(Json::Null),
                    )
                })
                .collect(),
        ),
        _ => v.clone(),
    })
}

/// Whether a block's setting and a recorded one are the same value once
/// decoded under backend `kind`'s schema (Terraform records a nested
/// object with every attribute, a number given as a string as a number).
pub fn same_setting(kind: &str, name: &str, a: Option<&Json>, b: Option<&Json>) -> bool {
    let ty = schema(kind)
        .and_then(|s| s.iter().find(|(n, _)| *n == name))
        .map(|(_, t)| *t);
    match ty {
        Some(t) => normalize(t, a) == normalize(t, b),
        None => a.filter(|v| !v.is_null()) == b.filter(|v| !v.is_null()),
    }
}

/// Go's `strconv.Quote`.
fn go_quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A number as Go's `big.Float.String()` (`%.10g`) prints it.
fn go_number(n: &serde_json::Number) -> String {
    match n.as_i64() {
        Some(i) if i.unsigned_abs() < 10_000_000_000 => i.to_string(),
        _ => {
            let f = n.as_f64().unwrap_or(0.0);
            if f == f.trunc() && f.abs() < 1e10 {
                format!("{f:.0}")
            } else if (1e-4..1e10).contains(&f.abs()) {
                let s = format!("{f:.10}");
                let s = s.trim_end_matches('0');
                s.trim_end_matches('.').to_string()
            } else {
                let s = format!("{f:.9e}");
                let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
                let m = m.trim_end_matches('0').trim_end_matches('.');
                let e: i32 = e.parse().unwrap_or(0);
                format!("{m}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs())
            }
        }
    }
}

/// CRC-32 (IEEE 802.3), as Go's `crc32.ChecksumIEEE`.
fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn names(kind: &str) -> Vec<&'static str> {
        schema(kind).unwrap().iter().map(|(n, _)| *n).collect()
    }

    /// Every setting a backend accepts is in Terraform's schema (the
    /// record init writes may hold no other: Terraform refuses to decode
    /// it), and the three older kinds check exactly the schema's names.
    #[test]
    fn item1_known_settings_are_in_terraforms_schema() {
        let cases: [(&str, Vec<&str>); 6] = [
            ("local", crate::local::ATTRIBUTES.to_vec()),
            ("pg", crate::pg::ATTRIBUTES.to_vec()),
            ("http", crate::http::ATTRIBUTES.to_vec()),
            ("s3", [crate::s3::SERVED, crate::s3::REFUSED].concat()),
            ("gcs", [crate::gcs::SERVED, crate::gcs::REFUSED].concat()),
            (
                "azurerm",
                [crate::azurerm::SERVED, crate::azurerm::REFUSED].concat(),
            ),
        ];
        for (kind, known) in cases {
            let schema = names(kind);
            for n in &known {
                assert!(schema.contains(n), "case {kind}: {n} is not in the schema");
            }
            if ["local", "pg", "http"].contains(&kind) {
                assert_eq!(known.len(), schema.len(), "case {kind}");
            }
            for s in secrets(kind) {
                assert!(schema.contains(s), "case {kind}: secret {s}");
            }
        }
    }

    /// Values compare as Terraform decodes them: a nested object with its
    /// unset attributes null (as Terraform records it) equals the block's
    /// shorter one; a set's order does not matter; a number given as a
    /// string is the number.
    #[test]
    fn item1_settings_compare_as_terraform_decodes_them() {
        type Case<'a> = (&'a str, &'a str, Json, Json, bool);
        let cases: [Case; 6] = [
            (
                "nested_object_with_nulls",
                "endpoints",
                json!({"s3": "http://x"}),
                json!({"s3": "http://x", "dynamodb": null, "iam": null, "sso": null, "sts": null}),
                true,
            ),
            (
                "nested_object_differs",
                "endpoints",
                json!({"s3": "http://x"}),
                json!({"s3": "http://y"}),
                false,
            ),
            (
                "set_order",
                "allowed_account_ids",
                json!(["2", "1"]),
                json!(["1", "2"]),
                true,
            ),
            (
                "number_as_string",
                "max_retries",
                json!("3"),
                json!(3),
                true,
            ),
            (
                "bool_as_string",
                "encrypt",
                json!("true"),
                json!(true),
                true,
            ),
            ("string_differs", "bucket", json!("a"), json!("b"), false),
        ];
        for (name, attr, a, b, want) in cases {
            assert_eq!(
                same_setting("s3", attr, Some(&a), Some(&b)),
                want,
                "case {name}"
            );
        }
    }
}
