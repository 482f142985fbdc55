//! The naming rule between Pulumi and HCL.
//!
//! Resource and function tokens: `pkg:index:Type` → `pkg_type`,
//! `pkg:mod:Type` and `pkg:mod/sub:Type` → `pkg_mod_type`, every part in
//! snake_case (`echo:index:Item` → `echo_item`, `aws:s3/bucket:Bucket` →
//! `aws_s3_bucket`). Property names: camelCase → snake_case (`fooBar` →
//! `foo_bar`).
//!
//! The rule loses information (`URL` and `url` both give `url`, the `/sub`
//! part of a module is dropped), so the way back is never guessed: a
//! [`NameMap`] is built from the names a schema actually has, refuses
//! collisions, and answers both ways. [`snake_to_camel`] is only the
//! conventional inverse for names no schema lists.

use std::collections::BTreeMap;

/// Why a name could not be mapped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    #[error("{token:?} is not a Pulumi type token (want \"package:module:Type\")")]
    BadToken { token: String },
    #[error("{first:?} and {second:?} both map to the HCL name {hcl:?}")]
    Collision {
        hcl: String,
        first: String,
        second: String,
    },
}

/// camelCase or PascalCase → snake_case. A run of capitals is one word
/// (`URLPath` → `url_path`, `someID` → `some_id`); digits stay with the
/// word before them (`ipv4Address` → `ipv4_address`); a name that is
/// already snake_case is unchanged.
pub fn camel_to_snake(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    let mut out = String::with_capacity(name.len() + 4);
    for (i, &c) in chars.iter().enumerate() {
        if c.is_uppercase() {
            let prev = i.checked_sub(1).map(|j| chars[j]);
            let next = chars.get(i + 1).copied();
            let boundary = match prev {
                None | Some('_') => false,
                Some(p) if p.is_lowercase() || p.is_ascii_digit() => true,
                Some(p) if p.is_uppercase() => next.is_some_and(|n| n.is_lowercase()),
                Some(_) => false,
            };
            if boundary {
                out.push('_');
            }
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// snake_case → lowerCamelCase, the conventional inverse of
/// [`camel_to_snake`] (`foo_bar` → `fooBar`). Only for names no schema
/// lists: use a [`NameMap`] for names a schema has.
pub fn snake_to_camel(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut upper = false;
    for c in name.chars() {
        if c == '_' && !out.is_empty() {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// A Pulumi type token's HCL name: `pkg:index:Type` → `pkg_type`,
/// `pkg:mod:Type` and `pkg:mod/sub:Type` → `pkg_mod_type`.
pub fn token_to_hcl(token: &str) -> Result<String, NameError> {
    let bad = || NameError::BadToken {
        token: token.to_string(),
    };
    let mut parts = token.split(':');
    let (Some(pkg), Some(module), Some(ty), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(bad());
    };
    let module = module.split('/').next().unwrap_or_default();
    if pkg.is_empty() || module.is_empty() || ty.is_empty() {
        return Err(bad());
    }
    let pkg = camel_to_snake(pkg).replace('-', "_");
    let ty = camel_to_snake(ty);
    if module == "index" {
        Ok(format!("{pkg}_{ty}"))
    } else {
        Ok(format!("{pkg}_{}_{ty}", camel_to_snake(module)))
    }
}

/// The package part of a token (`aws:s3/bucket:Bucket` → `aws`).
pub fn token_package(token: &str) -> Option<&str> {
    token.split(':').next().filter(|p| !p.is_empty())
}

/// A two-way map between the names a schema has and their HCL names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NameMap {
    to_hcl: BTreeMap<String, String>,
    to_pulumi: BTreeMap<String, String>,
}

impl NameMap {
    /// The map of type tokens (resources or functions) by [`token_to_hcl`].
    pub fn tokens<'a>(tokens: impl IntoIterator<Item = &'a str>) -> Result<NameMap, NameError> {
        NameMap::build(tokens, token_to_hcl)
    }

    /// The map of property names by [`camel_to_snake`].
    pub fn properties<'a>(names: impl IntoIterator<Item = &'a str>) -> Result<NameMap, NameError> {
        NameMap::build(names, |n| Ok(camel_to_snake(n)))
    }

    fn build<'a>(
        names: impl IntoIterator<Item = &'a str>,
        rule: impl Fn(&str) -> Result<String, NameError>,
    ) -> Result<NameMap, NameError> {
        let mut map = NameMap::default();
        for name in names {
            let hcl = rule(name)?;
            if let Some(first) = map.to_pulumi.get(&hcl) {
                if first != name {
                    return Err(NameError::Collision {
                        hcl,
                        first: first.clone(),
                        second: name.to_string(),
                    });
                }
                continue;
            }
            map.to_pulumi.insert(hcl.clone(), name.to_string());
            map.to_hcl.insert(name.to_string(), hcl);
        }
        Ok(map)
    }

    pub fn to_hcl(&self, pulumi: &str) -> Option<&str> {
        self.to_hcl.get(pulumi).map(String::as_str)
    }

    pub fn to_pulumi(&self, hcl: &str) -> Option<&str> {
        self.to_pulumi.get(hcl).map(String::as_str)
    }

    /// (Pulumi name, HCL name) pairs, by Pulumi name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.to_hcl.iter().map(|(p, h)| (p.as_str(), h.as_str()))
    }

    pub fn len(&self) -> usize {
        self.to_hcl.len()
    }

    pub fn is_empty(&self) -> bool {
        self.to_hcl.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_map_by_the_rule() {
        let cases = [
            ("index module", "echo:index:Item", "echo_item"),
            (
                "module with sub path",
                "aws:s3/bucket:Bucket",
                "aws_s3_bucket",
            ),
            ("plain module", "pkg:mod:Type", "pkg_mod_type"),
            ("camel type", "pkg:index:RandomString", "pkg_random_string"),
            (
                "camel module",
                "pkg:ecsCluster:TaskDef",
                "pkg_ecs_cluster_task_def",
            ),
            (
                "index with sub path",
                "random:index/randomId:RandomId",
                "random_random_id",
            ),
            (
                "dashed package",
                "azure-native:index:Thing",
                "azure_native_thing",
            ),
        ];
        for (name, token, want) in cases {
            assert_eq!(token_to_hcl(token).as_deref(), Ok(want), "{name}");
        }
        for bad in [
            "",
            "echo",
            "echo:Item",
            "a:b:c:d",
            ":index:X",
            "p::X",
            "p:m:",
        ] {
            assert!(
                matches!(token_to_hcl(bad), Err(NameError::BadToken { .. })),
                "{bad:?} should be refused"
            );
        }
    }

    #[test]
    fn property_names_snake_case() {
        let cases = [
            ("camel", "fooBar", "foo_bar"),
            ("already snake", "foo_bar", "foo_bar"),
            ("single word", "name", "name"),
            ("acronym run", "URLPath", "url_path"),
            ("trailing acronym", "someID", "some_id"),
            ("digits", "ipv4Address", "ipv4_address"),
            ("pascal", "ContentType", "content_type"),
            ("all caps", "ID", "id"),
        ];
        for (name, input, want) in cases {
            assert_eq!(camel_to_snake(input), want, "{name}");
        }
        assert_eq!(snake_to_camel("foo_bar_baz"), "fooBarBaz");
        assert_eq!(snake_to_camel("name"), "name");
    }

    #[test]
    fn name_map_answers_both_ways_and_refuses_collisions() {
        let m = NameMap::properties(["fooBar", "URL", "length"]).unwrap();
        assert_eq!(m.to_hcl("URL"), Some("url"));
        assert_eq!(m.to_pulumi("url"), Some("URL"));
        assert_eq!(m.to_pulumi("foo_bar"), Some("fooBar"));
        assert_eq!(m.to_pulumi("nope"), None);
        let err = NameMap::properties(["url", "URL"]).unwrap_err();
        assert_eq!(
            err,
            NameError::Collision {
                hcl: "url".into(),
                first: "url".into(),
                second: "URL".into()
            }
        );
        let t = NameMap::tokens(["aws:s3/bucket:Bucket", "aws:index:Provider"]).unwrap();
        assert_eq!(t.to_pulumi("aws_s3_bucket"), Some("aws:s3/bucket:Bucket"));
        assert!(NameMap::tokens(["a:s3/bucket:Bucket", "a:s3/other:Bucket"]).is_err());
    }
}
