//! Resource instance addresses, written and parsed the way Terraform writes
//! them: `module.net["eu"].module.sub[0].data.aws_ami.base["x"]`.

use std::cmp::Ordering;
use std::fmt;

/// The key of one instance of a resource or module: none (a single
/// instance), an integer (`count`) or a string (`for_each`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub enum InstanceKey {
    #[default]
    None,
    Int(i64),
    Str(String),
}

/// Terraform's order: no key first, then integers, then strings.
impl Ord for InstanceKey {
    fn cmp(&self, other: &Self) -> Ordering {
        fn rank(k: &InstanceKey) -> u8 {
            match k {
                InstanceKey::None => 0,
                InstanceKey::Int(_) => 1,
                InstanceKey::Str(_) => 2,
            }
        }
        match (self, other) {
            (InstanceKey::Int(a), InstanceKey::Int(b)) => a.cmp(b),
            (InstanceKey::Str(a), InstanceKey::Str(b)) => a.cmp(b),
            _ => rank(self).cmp(&rank(other)),
        }
    }
}

impl PartialOrd for InstanceKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for InstanceKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InstanceKey::None => Ok(()),
            InstanceKey::Int(i) => write!(f, "[{i}]"),
            InstanceKey::Str(s) => write!(f, "[{}]", terrane_value::render::quote(s)),
        }
    }
}

/// `managed` resources or `data` sources.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Mode {
    Managed,
    Data,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Managed => "managed",
            Mode::Data => "data",
        }
    }

    pub fn parse(s: &str) -> Option<Mode> {
        match s {
            "managed" => Some(Mode::Managed),
            "data" => Some(Mode::Data),
            _ => None,
        }
    }
}

/// A module instance path: `module.a["x"].module.b` (empty for the root).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct ModulePath(pub Vec<(String, InstanceKey)>);

impl fmt::Display for ModulePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (name, key)) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(".")?;
            }
            write!(f, "module.{name}{key}")?;
        }
        Ok(())
    }
}

/// A resource (all its instances).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ResourceAddr {
    pub module: ModulePath,
    pub mode: Mode,
    pub ty: String,
    pub name: String,
}

impl fmt::Display for ResourceAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.module.0.is_empty() {
            write!(f, "{}.", self.module)?;
        }
        if self.mode == Mode::Data {
            f.write_str("data.")?;
        }
        write!(f, "{}.{}", self.ty, self.name)
    }
}

/// One resource instance.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct InstanceAddr {
    pub resource: ResourceAddr,
    pub key: InstanceKey,
}

impl fmt::Display for InstanceAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.resource, self.key)
    }
}

/// Why text is not a resource instance address.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid resource address {text:?}: {reason}")]
pub struct AddrError {
    pub text: String,
    pub reason: String,
}

impl ResourceAddr {
    pub fn managed(ty: &str, name: &str) -> ResourceAddr {
        ResourceAddr {
            module: ModulePath::default(),
            mode: Mode::Managed,
            ty: ty.into(),
            name: name.into(),
        }
    }

    pub fn instance(&self, key: InstanceKey) -> InstanceAddr {
        InstanceAddr {
            resource: self.clone(),
            key,
        }
    }
}

impl InstanceAddr {
    /// Parses `[module.NAME[KEY].]...[data.]TYPE.NAME[KEY]`.
    pub fn parse(text: &str) -> Result<InstanceAddr, AddrError> {
        let fail = |reason: &str| AddrError {
            text: text.to_string(),
            reason: reason.to_string(),
        };
        let mut rest = text;
        let mut module = Vec::new();
        while let Some(r) = rest.strip_prefix("module.") {
            let (name, r) =
                split_name(r).ok_or_else(|| fail("a module name is required after \"module.\""))?;
            let (key, r) = split_key(r).map_err(|e| fail(&e))?;
            module.push((name.to_string(), key));
            rest = r
                .strip_prefix('.')
                .ok_or_else(|| fail("a resource is required after the module path"))?;
        }
        let mode = match rest.strip_prefix("data.") {
            Some(r) => {
                rest = r;
                Mode::Data
            }
            None => Mode::Managed,
        };
        let (ty, r) = split_name(rest).ok_or_else(|| fail("a resource type is required"))?;
        let r = r
            .strip_prefix('.')
            .ok_or_else(|| fail("a resource name is required after the type"))?;
        let (name, r) =
            split_name(r).ok_or_else(|| fail("a resource name is required after the type"))?;
        let (key, r) = split_key(r).map_err(|e| fail(&e))?;
        if !r.is_empty() {
            return Err(fail(&format!("unexpected {r:?} after the address")));
        }
        Ok(InstanceAddr {
            resource: ResourceAddr {
                module: ModulePath(module),
                mode,
                ty: ty.into(),
                name: name.into(),
            },
            key,
        })
    }
}

/// What `state list|show|rm` take: a module instance (everything in it
/// and below), a resource (all its instances) or one instance. Parsed
/// strictly, with Terraform's wording for the usual mistake: a bare type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    Module(ModulePath),
    Resource(ResourceAddr),
    Instance(InstanceAddr),
}

impl Target {
    pub fn parse(text: &str) -> Result<Target, AddrError> {
        let fail = |reason: &str| AddrError {
            text: text.to_string(),
            reason: reason.to_string(),
        };
        if text.chars().any(char::is_control) {
            return Err(fail("an address cannot contain control characters"));
        }
        // A module path alone?
        let mut rest = text;
        let mut module = Vec::new();
        while let Some(r) = rest.strip_prefix("module.") {
            let (name, r) =
                split_name(r).ok_or_else(|| fail("Module address must include a module name."))?;
            let (key, r) = split_key(r).map_err(|e| fail(&e))?;
            module.push((name.to_string(), key));
            if r.is_empty() {
                return Ok(Target::Module(ModulePath(module)));
            }
            rest = r
                .strip_prefix('.')
                .ok_or_else(|| fail(&format!("unexpected {r:?} after the module path")))?;
        }
        let body = rest.strip_prefix("data.").unwrap_or(rest);
        match split_name(body) {
            Some((_, "")) | None => {
                return Err(fail(
                    "Resource specification must include a resource type and name.",
                ))
            }
            Some((_, r)) if !r.starts_with('.') => {
                return Err(fail(&format!("unexpected {r:?} after the resource type")))
            }
            _ => {}
        }
        // `type.name` without a key means the resource (all its instances).
        let keyed = text.ends_with(']');
        let a = InstanceAddr::parse(text).map_err(|e| match e.reason.as_str() {
            "a resource name is required after the type" => {
                fail("Resource specification must include a resource type and name.")
            }
            _ => e,
        })?;
        if keyed {
            Ok(Target::Instance(a))
        } else {
            Ok(Target::Resource(a.resource))
        }
    }

    /// Whether the instance at `a` is one this target means.
    pub fn matches(&self, a: &InstanceAddr) -> bool {
        match self {
            Target::Module(m) => {
                a.resource.module.0.len() >= m.0.len()
                    && a.resource.module.0[..m.0.len()] == m.0[..]
            }
            Target::Resource(r) => &a.resource == r,
            Target::Instance(i) => a == i,
        }
    }
}

fn split_name(s: &str) -> Option<(&str, &str)> {
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        .unwrap_or(s.len());
    let first = s.chars().next()?;
    (end > 0 && (first.is_ascii_alphabetic() || first == '_')).then(|| s.split_at(end))
}

fn split_key(s: &str) -> Result<(InstanceKey, &str), String> {
    let Some(r) = s.strip_prefix('[') else {
        return Ok((InstanceKey::None, s));
    };
    if let Some(r) = r.strip_prefix('"') {
        let mut out = String::new();
        let mut chars = r.char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '\\' => match chars.next() {
                    Some((_, 'n')) => out.push('\n'),
                    Some((_, 't')) => out.push('\t'),
                    Some((_, c)) => out.push(c),
                    None => return Err("unterminated string key".into()),
                },
                '"' => {
                    let r = &r[i + 1..];
                    let r = r
                        .strip_prefix(']')
                        .ok_or("a \"]\" is required after the key")?;
                    return Ok((InstanceKey::Str(out), r));
                }
                c => out.push(c),
            }
        }
        return Err("unterminated string key".into());
    }
    let end = r.find(']').ok_or("a \"]\" is required after the key")?;
    let n: i64 = r[..end]
        .parse()
        .map_err(|_| format!("invalid instance key {:?}", &r[..end]))?;
    Ok((InstanceKey::Int(n), &r[end + 1..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check(text: &str, want: Result<&str, &str>) {
        match (InstanceAddr::parse(text), want) {
            (Ok(a), Ok(w)) => assert_eq!(a.to_string(), w),
            (Err(e), Err(w)) => assert!(e.to_string().contains(w), "{e}"),
            (got, want) => panic!("{text}: got {got:?}, want {want:?}"),
        }
    }

    #[test]
    fn addresses() {
        check("aws_s3_bucket.b", Ok("aws_s3_bucket.b"));
        check("random_id.x[3]", Ok("random_id.x[3]"));
        check(r#"local_file.f["a.txt"]"#, Ok(r#"local_file.f["a.txt"]"#));
        check("data.local_file.d", Ok("data.local_file.d"));
        check(
            r#"module.net["eu"].module.sub[0].data.t.n["k\"q"]"#,
            Ok(r#"module.net["eu"].module.sub[0].data.t.n["k\"q"]"#),
        );
        check("module.m", Err("a resource is required"));
        check("aws_s3_bucket", Err("a resource name is required"));
        check("a.b[x]", Err("invalid instance key"));
        check("a.b[1", Err("is required after the key"));
        check("a.b.c", Err("unexpected"));
    }

    #[test]
    fn item9_targets_parse_strictly() {
        let cases: [(&str, Result<&str, &str>); 9] = [
            (
                "terraform_data",
                Err("must include a resource type and name"),
            ),
            (
                "data.local_file",
                Err("must include a resource type and name"),
            ),
            (
                "module.m.terraform_data",
                Err("must include a resource type and name"),
            ),
            ("module.", Err("must include a module name")),
            ("terraform_data.x", Ok("Resource(terraform_data.x)")),
            ("terraform_data.x[3]", Ok("Instance(terraform_data.x[3])")),
            ("module.m[\"a\"]", Ok("Module(module.m[\"a\"])")),
            (
                "module.m.data.t.n[\"k\"]",
                Ok("Instance(module.m.data.t.n[\"k\"])"),
            ),
            ("terraform_data.x\n", Err("control characters")),
        ];
        for (text, want) in cases {
            let got = Target::parse(text).map(|t| match t {
                Target::Module(m) => format!("Module({m})"),
                Target::Resource(r) => format!("Resource({r})"),
                Target::Instance(i) => format!("Instance({i})"),
            });
            match (got, want) {
                (Ok(g), Ok(w)) => assert_eq!(g, w, "case {text}"),
                (Err(e), Err(w)) => assert!(e.reason.contains(w), "case {text}: {e}"),
                (got, want) => panic!("case {text}: got {got:?}, want {want:?}"),
            }
        }
        let x = |k: i64| ResourceAddr::managed("terraform_data", "x").instance(InstanceKey::Int(k));
        let t = Target::parse("terraform_data.x").unwrap();
        assert!(
            t.matches(&x(0)) && t.matches(&x(4999)),
            "case resource_matches_all_instances"
        );
        assert!(
            !t.matches(&ResourceAddr::managed("terraform_data", "xy").instance(InstanceKey::None)),
            "case no_prefix_match"
        );
        let m = Target::parse("module.a").unwrap();
        let inner = InstanceAddr::parse("module.a.module.b.t.n").unwrap();
        assert!(m.matches(&inner), "case module_matches_descendants");
        assert!(
            !m.matches(&InstanceAddr::parse("module.ab.t.n").unwrap()),
            "case module_no_prefix_match"
        );
    }

    #[test]
    fn key_order_is_terraforms() {
        let mut keys = vec![
            InstanceKey::Str("b".into()),
            InstanceKey::Int(2),
            InstanceKey::None,
            InstanceKey::Int(-1),
            InstanceKey::Str("a".into()),
        ];
        keys.sort();
        assert_eq!(
            keys,
            vec![
                InstanceKey::None,
                InstanceKey::Int(-1),
                InstanceKey::Int(2),
                InstanceKey::Str("a".into()),
                InstanceKey::Str("b".into())
            ]
        );
    }
}
