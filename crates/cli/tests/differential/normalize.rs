//! Comparing Terraform's and terrane's documents and texts.
//!
//! Both tools drive the same provider binaries, so everything except
//! randomness must come out equal. Randomness is handled narrowly:
//! - Only attributes that really are random are learned ([`random_attr`]:
//!   `result`, `id`, `b64_*`, `hex`, `dec`, `bcrypt_hash` of `random_*`, the
//!   UUID `id` of terraform_data), each pair (terrane's value, Terraform's)
//!   keyed by the instance it came from ([`Subst::learn`]).
//! - A pair is used only where its value can flow: in the instance itself
//!   and in what depends on it ([`Subst::scope`]), the dependencies read
//!   from Terraform's plan configuration and state `depends_on`. Texts
//!   (human plans, apply output) use the pairs of long random strings
//!   everywhere and the others only on their own instance's lines.
//! - A learned value that changes on one side only, or on both without a
//!   planned replacement, is reported; so is a random value that breaks its
//!   own resource's constraints ([`shape_problems`]: `upper = false`, the
//!   length, a UUID's form ...), the one thing pairing cannot see.
//!
//! Digests of random-derived file contents cannot be paired; they are the
//! one thing left out (see [`DIGESTS`]).

use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};

/// Attributes of local_* files that are hashes of their content: not
/// compared when the content itself came from a random value.
pub const DIGESTS: &[&str] = &[
    "id",
    "content_md5",
    "content_sha1",
    "content_sha256",
    "content_sha512",
    "content_base64sha256",
    "content_base64sha512",
];

/// Whether attribute `attr` of a resource of type `ty` holds a random value.
pub fn random_attr(ty: &str, attr: &str) -> bool {
    if ty == "terraform_data" {
        return attr == "id";
    }
    ty.starts_with("random_")
        && (matches!(attr, "result" | "id" | "hex" | "dec" | "bcrypt_hash")
            || attr.starts_with("b64_"))
}

/// The configuration address of an instance address: every instance key
/// (`[0]`, `["a"]`) removed, and a ` deposed` suffix dropped.
pub fn config_addr(addr: &str) -> String {
    let addr = addr.strip_suffix(" deposed").unwrap_or(addr);
    let mut out = String::with_capacity(addr.len());
    let (mut depth, mut quoted, mut escaped) = (0usize, false, false);
    for c in addr.chars() {
        if depth > 0 {
            if quoted {
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == '"' {
                    quoted = false;
                }
            } else if c == '"' {
                quoted = true;
            } else if c == ']' {
                depth -= 1;
            }
            continue;
        }
        if c == '[' {
            depth += 1;
        } else {
            out.push(c);
        }
    }
    out
}

/// One learned pair: terrane's random value and Terraform's.
#[derive(Debug, Clone, PartialEq)]
struct Pair {
    terrane: Value,
    terraform: Value,
}

/// terrane's random values -> Terraform's, learned from states and scoped
/// to where they can flow.
#[derive(Default, Debug, Clone)]
pub struct Subst {
    /// By instance address, then attribute.
    pairs: BTreeMap<String, BTreeMap<String, Pair>>,
    /// Direct dependencies between configuration addresses (resources,
    /// `output.NAME`, `module.X`, `module.X.var.V`), from Terraform.
    deps: BTreeMap<String, BTreeSet<String>>,
}

/// The pairs usable at one place.
pub struct Scope<'a> {
    pairs: Vec<&'a Pair>,
}

impl Subst {
    /// Pairs up the random attributes of the instances present in both
    /// states. Returns the problems found: a learned value that changed on
    /// one side only, or on both when `replaced` (the instances the step's
    /// plan creates; `None` when the step had no saved plan) does not hold
    /// it, and random values that break their resource's constraints.
    pub fn learn(
        &mut self,
        terraform_state: &Value,
        terrane_state: &Value,
        replaced: Option<&BTreeSet<String>>,
    ) -> Vec<String> {
        let mut problems = Vec::new();
        let tf = state_resources(terraform_state);
        let tr = state_resources(terrane_state);
        self.learn_state_deps(terraform_state);
        for (addr, r) in &tr {
            let ty = r["type"].as_str().unwrap_or_default();
            problems.extend(shape_problems(addr, ty, &r["values"]));
        }
        // An instance gone from Terraform's state takes its pairs with it.
        self.pairs.retain(|addr, _| tf.contains_key(addr));
        for (addr, a) in &tf {
            let Some(b) = tr.get(addr) else { continue };
            let ty = a["type"].as_str().unwrap_or_default();
            let (Some(av), Some(bv)) = (a["values"].as_object(), b["values"].as_object()) else {
                continue;
            };
            let known = self.pairs.entry(addr.clone()).or_default();
            for (k, x) in av {
                if !random_attr(ty, k) {
                    continue;
                }
                let Some(y) = bv.get(k) else { continue };
                let new = Pair {
                    terrane: y.clone(),
                    terraform: x.clone(),
                };
                if let Some(old) = known.get(k) {
                    let tf_changed = old.terraform != new.terraform;
                    let tr_changed = old.terrane != new.terrane;
                    let planned = replaced.is_none_or(|r| r.contains(addr));
                    if tf_changed != tr_changed {
                        let (who, other) = if tf_changed {
                            ("Terraform", "terrane kept")
                        } else {
                            ("terrane", "Terraform kept")
                        };
                        problems.push(format!(
                            "{addr}.{k}: random value changed under {who} only \
                             ({other} {}): terraform {} -> {}, terrane {} -> {}",
                            if tf_changed {
                                &old.terrane
                            } else {
                                &old.terraform
                            },
                            old.terraform,
                            new.terraform,
                            old.terrane,
                            new.terrane
                        ));
                    } else if tf_changed && !planned {
                        problems.push(format!(
                            "{addr}.{k}: random value changed without a planned replacement: \
                             terraform {} -> {}, terrane {} -> {}",
                            old.terraform, new.terraform, old.terrane, new.terrane
                        ));
                    }
                }
                known.insert(k.clone(), new);
            }
        }
        // A local file whose content is random-derived has random digests
        // too (its id among them): paired once the content matches.
        for (addr, a) in &tf {
            let Some(b) = tr.get(addr) else { continue };
            let ty = a["type"].as_str().unwrap_or_default();
            let (x, y) = (&a["values"]["content"], &b["values"]["content"]);
            if !ty.starts_with("local_") || x == y || self.scope(addr).apply_against(x, y) != *x {
                continue;
            }
            let digests: Vec<(String, Pair)> = DIGESTS
                .iter()
                .filter_map(|k| {
                    let (x, y) = (a["values"].get(*k)?, b["values"].get(*k)?);
                    Some((
                        k.to_string(),
                        Pair {
                            terrane: y.clone(),
                            terraform: x.clone(),
                        },
                    ))
                })
                .collect();
            self.pairs.entry(addr.clone()).or_default().extend(digests);
        }
        problems
    }

    /// Carries the pairs of every instance a plan moves (`moved` blocks,
    /// `count` added or removed) to its new address.
    pub fn learn_moves(&mut self, plan: &Value) {
        for rc in plan["resource_changes"].as_array().into_iter().flatten() {
            let (Some(from), Some(to)) = (rc["previous_address"].as_str(), rc["address"].as_str())
            else {
                continue;
            };
            if let Some(p) = self.pairs.remove(from) {
                self.pairs.insert(to.to_string(), p);
            }
        }
    }

    /// Records the `depends_on` of every instance of a state document.
    pub fn learn_state_deps(&mut self, state: &Value) {
        for (addr, r) in state_resources(state) {
            let node = config_addr(&addr);
            for d in r["depends_on"].as_array().into_iter().flatten() {
                if let Some(d) = d.as_str() {
                    self.deps
                        .entry(node.clone())
                        .or_default()
                        .insert(config_addr(d));
                }
            }
        }
    }

    /// Records the references of a plan document's `configuration` (and
    /// the `depends_on` of its prior state).
    pub fn learn_plan_deps(&mut self, plan: &Value) {
        if let Some(prior) = plan.get("prior_state") {
            self.learn_state_deps(prior);
        }
        self.config_module(&plan["configuration"]["root_module"], "");
    }

    fn depend(&mut self, node: &str, on: String) {
        self.deps.entry(node.to_string()).or_default().insert(on);
    }

    /// Records one module's references; returns every node inside it.
    fn config_module(&mut self, m: &Value, prefix: &str) -> Vec<String> {
        let mut members = Vec::new();
        let refs = |e: &Value| -> Vec<String> {
            let mut out = Vec::new();
            walk_refs(e, &mut out);
            out
        };
        for r in m["resources"].as_array().into_iter().flatten() {
            let node = format!("{prefix}{}", r["address"].as_str().unwrap_or_default());
            members.push(node.clone());
            let mut rs = refs(&r["expressions"]);
            rs.extend(refs(&r["count_expression"]));
            rs.extend(refs(&r["for_each_expression"]));
            for d in r["depends_on"].as_array().into_iter().flatten() {
                rs.extend(d.as_str().map(str::to_string));
            }
            for x in rs {
                if let Some(on) = ref_node(&x, prefix) {
                    self.depend(&node, on);
                }
            }
            // Locals are not in the JSON configuration: a resource that
            // reads one may read anything in its module.
            if refs(&r["expressions"])
                .iter()
                .any(|x| x.starts_with("local."))
            {
                self.depend(&node, format!("{prefix}local"));
            }
        }
        for (name, o) in m["outputs"].as_object().into_iter().flatten() {
            let node = format!("{prefix}output.{name}");
            members.push(node.clone());
            for x in refs(&o["expression"]) {
                if let Some(on) = ref_node(&x, prefix) {
                    self.depend(&node, on);
                }
                if x.starts_with("local.") {
                    self.depend(&node, format!("{prefix}local"));
                }
            }
        }
        for (name, call) in m["module_calls"].as_object().into_iter().flatten() {
            let inner = format!("{prefix}module.{name}.");
            let call_node = format!("{prefix}module.{name}");
            members.push(call_node.clone());
            let mut call_refs = refs(&call["count_expression"]);
            call_refs.extend(refs(&call["for_each_expression"]));
            for (var, e) in call["expressions"].as_object().into_iter().flatten() {
                let var_node = format!("{inner}var.{var}");
                for x in refs(e).into_iter().chain(call_refs.clone()) {
                    if let Some(on) = ref_node(&x, prefix) {
                        self.depend(&var_node, on);
                    }
                }
            }
            // The call stands for everything inside it.
            let inside = self.config_module(&call["module"], &inner);
            for k in &inside {
                self.depend(&call_node, k.clone());
            }
            members.extend(inside);
        }
        let local = format!("{prefix}local");
        for x in &members {
            self.depend(&local, x.clone());
        }
        members
    }

    /// Whether `target` (a configuration address) may hold a value that
    /// flowed from `source`.
    fn reaches(&self, target: &str, source: &str) -> bool {
        let mut seen = BTreeSet::new();
        let mut todo = vec![target.to_string()];
        while let Some(n) = todo.pop() {
            if n == source {
                return true;
            }
            if !seen.insert(n.clone()) {
                continue;
            }
            for d in self.deps.get(&n).into_iter().flatten() {
                todo.push(d.clone());
            }
        }
        false
    }

    /// The pairs usable at `target`: an instance address, or `output.NAME`.
    pub fn scope(&self, target: &str) -> Scope<'_> {
        let t = config_addr(target);
        let pairs = self
            .pairs
            .iter()
            .filter(|(src, _)| {
                // Another instance of the same resource is unrelated.
                *src == target || {
                    let s = config_addr(src);
                    s != t && self.reaches(&t, &s)
                }
            })
            .flat_map(|(_, m)| m.values())
            .filter(|p| p.terrane != p.terraform)
            .collect();
        Scope { pairs }
    }

    /// The pairs usable anywhere in a text: long random strings only,
    /// which no unrelated text holds by chance.
    pub fn text_scope(&self) -> Scope<'_> {
        let pairs = self
            .pairs
            .values()
            .flat_map(|m| m.values())
            .filter(|p| p.terrane != p.terraform && long_string(&p.terrane))
            .collect();
        Scope { pairs }
    }

    /// The pairs of one instance only (its own lines in a text), its
    /// `id` first: random_id's b64_std may equal its id on one side only,
    /// and `[id=...]` is the id.
    pub fn own_scope(&self, addr: &str) -> Scope<'_> {
        let mut pairs: Vec<(&String, &Pair)> = self
            .pairs
            .get(addr)
            .into_iter()
            .flatten()
            .filter(|(_, p)| p.terrane != p.terraform)
            .collect();
        pairs.sort_by_key(|(k, _)| *k != "id");
        Scope {
            pairs: pairs.into_iter().map(|(_, p)| p).collect(),
        }
    }
}

/// Strings of 8 characters or more are long enough to stand for
/// themselves in a text.
fn long_string(v: &Value) -> bool {
    v.as_str().is_some_and(|s| s.chars().count() >= 8)
}

/// Every `references` entry under a configuration expression.
fn walk_refs(e: &Value, out: &mut Vec<String>) {
    match e {
        Value::Object(m) => {
            for (k, v) in m {
                if k == "references" {
                    out.extend(
                        v.as_array()
                            .into_iter()
                            .flatten()
                            .filter_map(|s| s.as_str().map(str::to_string)),
                    );
                } else {
                    walk_refs(v, out);
                }
            }
        }
        Value::Array(xs) => xs.iter().for_each(|x| walk_refs(x, out)),
        _ => {}
    }
}

/// The dependency node a reference (`random_pet.p.id`, `var.x`,
/// `module.m.out`, `data.a.b`) names inside the module at `prefix`.
fn ref_node(r: &str, prefix: &str) -> Option<String> {
    let r = config_addr(r);
    let parts: Vec<&str> = r.split('.').collect();
    match parts.as_slice() {
        ["var", v, ..] => Some(format!("{prefix}var.{v}")),
        ["module", m, ..] => Some(format!("{prefix}module.{m}")),
        ["data", t, n, ..] => Some(format!("{prefix}data.{t}.{n}")),
        ["local", ..] => None,
        ["count" | "each" | "path" | "self" | "terraform", ..] => None,
        [t, n, ..] => Some(format!("{prefix}{t}.{n}")),
        _ => None,
    }
}

impl<'a> Scope<'a> {
    /// terrane's value `tr` with its random values replaced by Terraform's,
    /// walking Terraform's `tf` alongside: a part already equal to
    /// Terraform's is kept as is, so a configured value that happens to
    /// equal some random number (a byte_length of 6 and a random result of
    /// 6) is never rewritten.
    pub fn apply_against(&self, tf: &Value, tr: &Value) -> Value {
        if tf == tr {
            return tr.clone();
        }
        match (tf, tr) {
            (Value::Object(a), Value::Object(b)) => Value::Object(
                b.iter()
                    .map(|(k, y)| {
                        let v = match a.get(k) {
                            Some(x) => self.apply_against(x, y),
                            None => self.apply(y),
                        };
                        (k.clone(), v)
                    })
                    .collect(),
            ),
            (Value::Array(a), Value::Array(b)) if a.len() == b.len() => Value::Array(
                a.iter()
                    .zip(b)
                    .map(|(x, y)| self.apply_against(x, y))
                    .collect(),
            ),
            _ if self
                .pairs
                .iter()
                .any(|p| &p.terrane == tr && &p.terraform == tf) =>
            {
                tf.clone()
            }
            _ => self.apply(tr),
        }
    }

    /// terrane's value with its random values replaced by Terraform's:
    /// whole values equal to a learned one, and learned strings inside
    /// longer strings (longest first).
    pub fn apply(&self, v: &Value) -> Value {
        if let Some(p) = self.pairs.iter().find(|p| &p.terrane == v) {
            return p.terraform.clone();
        }
        match v {
            Value::String(s) => Value::String(self.replace_in(s)),
            Value::Array(xs) => Value::Array(xs.iter().map(|x| self.apply(x)).collect()),
            Value::Object(m) => {
                Value::Object(m.iter().map(|(k, x)| (k.clone(), self.apply(x))).collect())
            }
            other => other.clone(),
        }
    }

    /// `s` with every learned string of 6 characters or more replaced, in
    /// one pass from the left, the longest at each place: a replacement's
    /// result is never matched again (terrane's new value may be equal to
    /// Terraform's old one, and must not become Terraform's new one twice).
    pub fn replace_in(&self, s: &str) -> String {
        let mut strings: Vec<(String, String)> = self
            .pairs
            .iter()
            .filter_map(|p| Some((p.terrane.as_str()?, p.terraform.as_str()?)))
            .filter(|(from, _)| from.chars().count() >= 6)
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        // Shorter ones only as a whole `[id=...]`.
        strings.extend(
            self.pairs
                .iter()
                .filter_map(|p| Some((p.terrane.as_str()?, p.terraform.as_str()?)))
                .map(|(a, b)| (format!("[id={a}]"), format!("[id={b}]"))),
        );
        // Longest first, and the first learned among equals (the scopes'
        // order: an earlier step's pairs before a later one's).
        strings.sort_by_key(|(from, _)| std::cmp::Reverse(from.len()));
        let mut out = String::with_capacity(s.len());
        let mut rest = s;
        while let Some(c) = rest.chars().next() {
            match strings
                .iter()
                .find(|(from, _)| rest.starts_with(from.as_str()))
            {
                Some((from, to)) => {
                    out.push_str(to);
                    rest = &rest[from.len()..];
                }
                None => {
                    out.push(c);
                    rest = &rest[c.len_utf8()..];
                }
            }
        }
        out
    }

    /// Both scopes' pairs.
    pub fn and(mut self, other: Scope<'a>) -> Scope<'a> {
        self.pairs.extend(other.pairs);
        self
    }
}

/// A character class of random_string: its flag, its `min_*`, and a test.
type Class = (&'static str, &'static str, fn(&char) -> bool);

/// What is wrong with the random values of one instance, given its own
/// configured attributes: pairing hides the value itself, so the
/// constraints it must meet are checked instead.
pub fn shape_problems(addr: &str, ty: &str, values: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let s = |k: &str| values.get(k).and_then(Value::as_str);
    let n = |k: &str| values.get(k).and_then(Value::as_i64);
    let flag = |k: &str| values.get(k).and_then(Value::as_bool);
    let mut bad = |what: String| out.push(format!("{addr}: random value breaks {what}"));
    match ty {
        "random_string" | "random_password" => {
            let Some(r) = s("result") else { return out };
            let chars: Vec<char> = r.chars().collect();
            if let Some(len) = n("length") {
                if chars.len() as i64 != len {
                    bad(format!(
                        "length = {len}: result has {} characters",
                        chars.len()
                    ));
                }
            }
            let special = s("override_special").unwrap_or("!@#$%&*()-_=+[]{}<>:?");
            let classes: [Class; 3] = [
                ("upper", "min_upper", char::is_ascii_uppercase),
                ("lower", "min_lower", char::is_ascii_lowercase),
                ("numeric", "min_numeric", char::is_ascii_digit),
            ];
            for (on, min, class) in classes {
                let count = chars.iter().filter(|c| class(c)).count() as i64;
                if flag(on) == Some(false) && count > 0 {
                    bad(format!("{on} = false: result {r:?}"));
                }
                if n(min).is_some_and(|m| count < m) {
                    bad(format!("{min} = {}: result {r:?}", n(min).unwrap_or(0)));
                }
            }
            let specials = chars.iter().filter(|c| !c.is_ascii_alphanumeric());
            let count = specials.clone().count() as i64;
            if flag("special") == Some(false) && count > 0 {
                bad(format!("special = false: result {r:?}"));
            }
            if let Some(c) = specials.clone().find(|c| !special.contains(**c)) {
                bad(format!(
                    "the special characters ({c:?} is not one): result {r:?}"
                ));
            }
            if n("min_special").is_some_and(|m| count < m) {
                bad(format!("min_special: result {r:?}"));
            }
        }
        "random_pet" => {
            let Some(id) = s("id") else { return out };
            let sep = s("separator").unwrap_or("-");
            let body = match s("prefix") {
                Some(p) => match id.strip_prefix(&format!("{p}{sep}")) {
                    Some(b) => b,
                    None => {
                        bad(format!("prefix = {p:?}: id {id:?}"));
                        return out;
                    }
                },
                None => id,
            };
            let words = if sep.is_empty() {
                1
            } else {
                body.split(sep).count() as i64
            };
            if let Some(len) = n("length") {
                if !sep.is_empty() && words != len {
                    bad(format!("length = {len}: id {id:?}"));
                }
            }
        }
        "random_integer" => {
            let Some(r) = n("result") else { return out };
            if let (Some(lo), Some(hi)) = (n("min"), n("max")) {
                if r < lo || r > hi {
                    bad(format!("min = {lo}, max = {hi}: result {r}"));
                }
            }
            if s("id") != Some(r.to_string().as_str()) {
                bad(format!("id = result: id {:?}, result {r}", s("id")));
            }
        }
        "random_id" => {
            let Some(hex) = s("hex") else { return out };
            let prefix = s("prefix").unwrap_or_default();
            let digits = hex.strip_prefix(prefix).unwrap_or(hex);
            if let Some(len) = n("byte_length") {
                if digits.len() as i64 != 2 * len || !digits.chars().all(|c| c.is_ascii_hexdigit())
                {
                    bad(format!("byte_length = {len}: hex {hex:?}"));
                }
            }
            if let Ok(bytes) = (0..digits.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(digits.get(i..i + 2).unwrap_or("x"), 16))
                .collect::<Result<Vec<u8>, _>>()
            {
                use base64::Engine as _;
                let url = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&bytes);
                let std = base64::engine::general_purpose::STANDARD.encode(&bytes);
                if s("b64_url") != Some(format!("{prefix}{url}").as_str()) {
                    bad(format!("b64_url = hex in base64: {:?}", s("b64_url")));
                }
                if s("b64_std") != Some(format!("{prefix}{std}").as_str()) {
                    bad(format!("b64_std = hex in base64: {:?}", s("b64_std")));
                }
            }
        }
        "random_uuid" => {
            let Some(r) = s("result") else { return out };
            if !uuid_like(r) {
                bad(format!("the UUID form: result {r:?}"));
            }
            if s("id") != Some(r) {
                bad(format!("id = result: id {:?}", s("id")));
            }
        }
        "terraform_data" => {
            if let Some(id) = s("id") {
                if !uuid_like(id) {
                    bad(format!("the UUID form: id {id:?}"));
                }
            }
        }
        _ => {}
    }
    out
}

/// 8-4-4-4-12 hexadecimal digits.
fn uuid_like(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    parts.iter().map(|p| p.len()).eq([8, 4, 4, 4, 12])
        && parts
            .iter()
            .all(|p| p.chars().all(|c| c.is_ascii_hexdigit()))
}

/// Every resource instance of a state document (root and child modules),
/// keyed by address (plus ` deposed` for deposed objects).
pub fn state_resources(doc: &Value) -> BTreeMap<String, Value> {
    module_resources(&doc["values"])
}

/// Every resource instance under a `values`-shaped document (`values` of a
/// state, `planned_values` of a plan): `root_module` and its children.
fn module_resources(values: &Value) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    fn walk(m: &Value, out: &mut BTreeMap<String, Value>) {
        for r in m["resources"].as_array().into_iter().flatten() {
            let mut key = r["address"].as_str().unwrap_or_default().to_string();
            if r.get("deposed_key").is_some() {
                key.push_str(" deposed");
            }
            out.insert(key, r.clone());
        }
        for c in m["child_modules"].as_array().into_iter().flatten() {
            walk(c, out);
        }
    }
    walk(&values["root_module"], &mut out);
    out
}

/// Records differences between `tf` and `tr` (already substituted) at
/// `path`, skipping object keys in `skip`.
pub fn diff(path: &str, tf: &Value, tr: &Value, skip: &[&str], out: &mut Vec<String>) {
    match (tf, tr) {
        (Value::Object(a), Value::Object(b)) => {
            let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            for k in keys {
                if skip.contains(&k.as_str()) {
                    continue;
                }
                let p = format!("{path}.{k}");
                match (a.get(k), b.get(k)) {
                    (Some(x), Some(y)) => diff(&p, x, y, &[], out),
                    (Some(x), None) => {
                        out.push(format!("{p}: terraform {x}, terrane has no such key"))
                    }
                    (None, Some(y)) => {
                        out.push(format!("{p}: terrane {y}, terraform has no such key"))
                    }
                    (None, None) => {}
                }
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                diff(&format!("{path}[{i}]"), x, y, &[], out);
            }
        }
        _ if tf == tr => {}
        _ => out.push(format!("{path}: terraform {tf}, terrane {tr}")),
    }
}

/// Whether the object's values needed the substitution to match: then its
/// content digests are random too.
fn random_derived(tf: &Value, tr_raw: &Value, tr: &Value) -> bool {
    match (tf, tr_raw, tr) {
        (Value::Object(a), Value::Object(r), Value::Object(s)) => a
            .iter()
            .any(|(k, x)| r.get(k) != s.get(k) && s.get(k) == Some(x)),
        _ => tr_raw != tr && tf == tr,
    }
}

/// The digest keys to skip for a resource of type `ty` whose values
/// (`tf`, raw `tr`, substituted `tr`) are given.
fn skip_for(ty: &str, pairs: &[(&Value, &Value, &Value)]) -> &'static [&'static str] {
    if ty.starts_with("local_") && pairs.iter().any(|(a, r, s)| random_derived(a, r, s)) {
        DIGESTS
    } else {
        &[]
    }
}

/// The comparable part of one resource change.
fn change_view(rc: &Value) -> Value {
    let c = &rc["change"];
    let mut m = Map::new();
    for k in [
        "actions",
        "before",
        "after",
        "after_unknown",
        "before_sensitive",
        "after_sensitive",
        "importing",
        "replace_paths",
        "generated_config",
    ] {
        if let Some(v) = c.get(k) {
            m.insert(k.into(), v.clone());
        }
    }
    for k in ["action_reason", "previous_address", "mode", "type", "name"] {
        if let Some(v) = rc.get(k) {
            m.insert(k.into(), v.clone());
        }
    }
    Value::Object(m)
}

fn changes_by_address(doc: &Value, field: &str) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    for rc in doc[field].as_array().into_iter().flatten() {
        let mut key = rc["address"].as_str().unwrap_or_default().to_string();
        if rc.get("deposed").is_some() {
            key.push_str(" deposed");
        }
        out.insert(key, rc.clone());
    }
    out
}

fn compare_keyed(
    what: &str,
    tf: &BTreeMap<String, Value>,
    tr: &BTreeMap<String, Value>,
    out: &mut Vec<String>,
) -> bool {
    let a: Vec<&String> = tf.keys().collect();
    let b: Vec<&String> = tr.keys().collect();
    if a != b {
        out.push(format!("{what}: terraform has {a:?}, terrane has {b:?}"));
        return false;
    }
    true
}

/// Compares one list of resource changes (`resource_changes` or
/// `resource_drift`) in full.
fn compare_changes(field: &str, tf: &Value, tr: &Value, subst: &Subst, out: &mut Vec<String>) {
    let a = changes_by_address(tf, field);
    let b = changes_by_address(tr, field);
    compare_keyed(&format!("{field} addresses"), &a, &b, out);
    for (addr, x) in &a {
        let Some(y) = b.get(addr) else { continue };
        let scope = subst.scope(addr.strip_suffix(" deposed").unwrap_or(addr));
        let (xv, yraw) = (change_view(x), change_view(y));
        let mut yv = yraw.clone();
        for k in ["before", "after"] {
            yv[k] = scope.apply_against(&xv[k], &yraw[k]);
        }
        let ty = x["type"].as_str().unwrap_or_default();
        let pairs = [
            (&xv["before"], &yraw["before"], &yv["before"]),
            (&xv["after"], &yraw["after"], &yv["after"]),
        ];
        let skip = skip_for(ty, &pairs);
        let prefix = if field == "resource_changes" {
            addr.clone()
        } else {
            format!("{field} {addr}")
        };
        for k in [
            "actions",
            "action_reason",
            "previous_address",
            "importing",
            "replace_paths",
            "generated_config",
            "mode",
            "after_unknown",
            "before_sensitive",
            "after_sensitive",
        ] {
            let (p, q) = (xv.get(k), yv.get(k));
            // A missing list or object and an empty one mean the same.
            if k == "replace_paths" && p.is_none_or(empty) && q.is_none_or(empty) {
                continue;
            }
            diff(
                &format!("{prefix}: {k}"),
                p.unwrap_or(&Value::Null),
                q.unwrap_or(&Value::Null),
                &[],
                out,
            );
        }
        for k in ["before", "after"] {
            diff(&format!("{prefix}: {k}"), &xv[k], &yv[k], skip, out);
        }
    }
}

fn empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Array(a) => a.is_empty(),
        Value::Object(m) => m.is_empty(),
        _ => false,
    }
}

/// Differences between two saved-plan documents (`show -json PLAN`): the
/// resource changes and drift in full, output changes, prior state,
/// planned values, relevant attributes, checks and the plan's flags.
pub fn compare_plans(tf: &Value, tr: &Value, subst: &Subst) -> Vec<String> {
    let mut out = Vec::new();
    compare_changes("resource_changes", tf, tr, subst, &mut out);
    compare_changes("resource_drift", tf, tr, subst, &mut out);
    let none = Value::Object(Map::new());
    let oa = tf.get("output_changes").unwrap_or(&none);
    let ob = tr.get("output_changes").unwrap_or(&none);
    compare_outputs("output_changes", oa, ob, subst, &mut out);
    compare_values(
        "prior_state",
        &tf["prior_state"]["values"],
        &tr["prior_state"]["values"],
        subst,
        &mut out,
    );
    compare_values(
        "planned_values",
        &tf["planned_values"],
        &tr["planned_values"],
        subst,
        &mut out,
    );
    let relevant = |d: &Value| -> BTreeSet<String> {
        d["relevant_attributes"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|r| {
                format!(
                    "{} {}",
                    r["resource"].as_str().unwrap_or_default(),
                    r["attribute"]
                )
            })
            .collect()
    };
    let (ra, rb) = (relevant(tf), relevant(tr));
    if ra != rb {
        out.push(format!(
            "relevant_attributes: terraform only {:?}, terrane only {:?}",
            ra.difference(&rb).collect::<Vec<_>>(),
            rb.difference(&ra).collect::<Vec<_>>()
        ));
    }
    let checks = |d: &Value| -> Value {
        let mut cs: Vec<Value> = d["checks"].as_array().cloned().unwrap_or_default();
        cs.sort_by_key(|c| c["address"]["to_display"].to_string());
        Value::Array(cs)
    };
    diff("checks", &checks(tf), &checks(tr), &[], &mut out);
    for k in ["applyable", "complete", "errored"] {
        diff(
            k,
            tf.get(k).unwrap_or(&Value::Null),
            tr.get(k).unwrap_or(&Value::Null),
            &[],
            &mut out,
        );
    }
    out
}

/// Compares an object of outputs (state outputs or output changes), each
/// output with the pairs that can reach it.
fn compare_outputs(what: &str, tf: &Value, tr: &Value, subst: &Subst, out: &mut Vec<String>) {
    let none = Map::new();
    let a = tf.as_object().unwrap_or(&none);
    let b = tr.as_object().unwrap_or(&none);
    let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    for k in keys {
        let p = format!("{what}.{k}");
        match (a.get(k), b.get(k)) {
            (Some(x), Some(y)) => {
                let y = subst.scope(&format!("output.{k}")).apply_against(x, y);
                diff(&p, x, &y, &[], out);
            }
            (Some(x), None) => out.push(format!("{p}: terraform {x}, terrane has no such key")),
            (None, Some(y)) => out.push(format!("{p}: terrane {y}, terraform has no such key")),
            (None, None) => {}
        }
    }
}

/// Compares two `values`-shaped documents: every resource instance (its
/// values, flags and dependencies) and the outputs.
fn compare_values(what: &str, tf: &Value, tr: &Value, subst: &Subst, out: &mut Vec<String>) {
    let prefix = |s: String| {
        if what.is_empty() {
            s
        } else {
            format!("{what}: {s}")
        }
    };
    let mut found = Vec::new();
    let a = module_resources(tf);
    let b = module_resources(tr);
    compare_keyed("addresses", &a, &b, &mut found);
    for (addr, x) in &a {
        let Some(yraw) = b.get(addr) else { continue };
        let scope = subst.scope(addr.strip_suffix(" deposed").unwrap_or(addr));
        let mut y = yraw.clone();
        y["values"] = scope.apply_against(&x["values"], &yraw["values"]);
        let ty = x["type"].as_str().unwrap_or_default();
        let skip = skip_for(ty, &[(&x["values"], &yraw["values"], &y["values"])]);
        diff(
            &format!("{addr}: values"),
            &x["values"],
            &y["values"],
            skip,
            &mut found,
        );
        for k in [
            "sensitive_values",
            "tainted",
            "mode",
            "type",
            "name",
            "index",
            "provider_name",
            "schema_version",
        ] {
            diff(
                &format!("{addr}: {k}"),
                x.get(k).unwrap_or(&Value::Null),
                y.get(k).unwrap_or(&Value::Null),
                &[],
                &mut found,
            );
        }
        let deps = |v: &Value| -> Vec<String> {
            let mut d: Vec<String> = v["depends_on"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect();
            d.sort();
            d
        };
        if deps(x) != deps(&y) {
            found.push(format!(
                "{addr}: depends_on: terraform {:?}, terrane {:?}",
                deps(x),
                deps(&y)
            ));
        }
    }
    let none = Value::Object(Map::new());
    compare_outputs(
        "outputs",
        tf.get("outputs").unwrap_or(&none),
        tr.get("outputs").unwrap_or(&none),
        subst,
        &mut found,
    );
    out.extend(found.into_iter().map(prefix));
}

/// Differences between two state documents (`show -json`).
pub fn compare_states(tf: &Value, tr: &Value, subst: &Subst) -> Vec<String> {
    let mut out = Vec::new();
    compare_values("", &tf["values"], &tr["values"], subst, &mut out);
    out
}

/// The part of a human plan that shows the changes: from the drift note
/// ("Objects have changed outside"), "will perform the following
/// actions" or the outputs' changes to the rule before the closing note,
/// with the refresh-only and no-changes headlines; prose paragraphs are
/// joined into one line each (they wrap around the tool's name).
fn plan_body(text: &str) -> String {
    // Deposed keys are random in both tools.
    let text = &strip_colors(text)
        .lines()
        .map(deposed_keys)
        .collect::<Vec<_>>()
        .join("\n");
    let start = [
        "Note: Objects have changed outside",
        "will perform the following actions:",
        "planned the following actions, but then encountered a problem:",
        "Changes to Outputs:",
        "No changes.",
        "This is a refresh-only plan",
    ]
    .iter()
    .filter_map(|m| text.find(m))
    .min()
    .unwrap_or(text.len());
    let body = &text[start..];
    let end = ["Saved the plan to", "\u{2577}", "\nYou can apply this plan"]
        .iter()
        .filter_map(|m| body.find(m))
        .min()
        .unwrap_or(body.len());
    // The rule between the drift note and the changes is as wide as the
    // terminal: left out.
    let body: Vec<&str> = body[..end]
        .lines()
        .filter(|l| !l.starts_with('\u{2500}'))
        .collect();
    reflow(body.join("\n").trim_end())
}

/// Prose paragraphs (consecutive lines starting with a letter) joined
/// into one line each; indented lines (plans, values) kept as they are.
fn reflow(text: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut prose = false;
    for line in text.lines() {
        let is_prose = line
            .chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '"' || c == '(')
            && address_line(line).is_none()
            && !line.contains(" = ");
        match out.last_mut() {
            Some(last) if prose && is_prose => {
                last.push(' ');
                last.push_str(line.trim_end());
            }
            _ => out.push(line.trim_end().to_string()),
        }
        prose = is_prose;
    }
    out.join("\n")
}

/// The name each tool has for itself, made the same.
fn same_name(text: &str) -> String {
    text.replace("Terraform", "terrane")
        .replace("terraform apply", "terrane apply")
        .replace("terraform plan", "terrane plan")
}

/// Compares the changes two human plans show, line for line, with
/// Terraform's name for itself and terrane's random values normalized.
/// Returns the first differing lines with their context.
pub fn compare_plan_texts(tf: &str, tr: &str, subst: &Subst) -> Option<String> {
    let tf = same_name(&plan_body(tf));
    let tr = same_name(&subst.text_scope().replace_in(&plan_body(tr)));
    first_difference(&tf, &tr)
}

/// The first differing line of two texts, with context.
fn first_difference(tf: &str, tr: &str) -> Option<String> {
    if tf == tr {
        return None;
    }
    let (a, b): (Vec<&str>, Vec<&str>) = (tf.lines().collect(), tr.lines().collect());
    let at = a
        .iter()
        .zip(&b)
        .position(|(x, y)| x != y)
        .unwrap_or(a.len().min(b.len()));
    let from = at.saturating_sub(3);
    let show = |ls: &[&str]| ls[from.min(ls.len())..(at + 4).min(ls.len())].join("\n");
    Some(format!(
        "line {}:\n--- terraform:\n{}\n--- terrane:\n{}",
        at + 1,
        show(&a),
        show(&b)
    ))
}

/// The address an apply progress line is about (`ADDR: Creating...`).
fn address_line(line: &str) -> Option<&str> {
    const VERBS: &[&str] = &[
        "Creating",
        "Creation",
        "Modifying",
        "Modifications",
        "Destroying",
        "Destruction",
        "Reading",
        "Read complete",
        "Refreshing",
        "Importing",
        "Import",
        "Preparing import",
        "Still",
        "Provisioning",
        "Drift detected",
    ];
    let (addr, rest) = line.split_once(": ")?;
    let bare = addr.split(" (deposed object").next().unwrap_or(addr);
    (!bare.is_empty()
        && !bare.contains(' ')
        && bare.contains('.')
        && VERBS.iter().any(|v| rest.starts_with(v)))
    .then_some(bare)
}

/// A command's output made comparable: colors and diagnostic boxes (those
/// are compared on their own) removed, `Still ...` lines dropped,
/// durations as `Ns`, the tools' names made equal, random values
/// normalized (an instance's own values on its lines, long random strings
/// everywhere), prose paragraphs joined, and the progress lines grouped by
/// address in address order (instances run concurrently; each one's lines
/// keep their order) after the other lines.
pub fn run_text(text: &str, substs: &[&Subst]) -> String {
    let text = strip_colors(text);
    let mut other = Vec::new();
    let mut by_addr: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut in_box = false;
    let mut in_plain = false;
    for line in text.lines() {
        if line.starts_with('\u{2577}') {
            in_box = true;
            continue;
        }
        if in_box {
            in_box = !line.starts_with('\u{2575}');
            continue;
        }
        // A diagnostic printed without its box (terrane writing to a pipe,
        // as Terraform with -no-color): up to the next line that is
        // something else the command says.
        if line.starts_with("Error: ") || line.starts_with("Warning: ") {
            in_plain = true;
            continue;
        }
        if in_plain {
            if !resumes_after_diagnostic(line) {
                continue;
            }
            in_plain = false;
        }
        let line = deposed_keys(&durations(line));
        match address_line(&line) {
            Some(addr) => {
                if line[addr.len()..].contains(": Still ") {
                    continue;
                }
                let addr = addr.to_string();
                let line = substs
                    .iter()
                    .fold(Scope { pairs: vec![] }, |sc, s| sc.and(s.own_scope(&addr)))
                    .replace_in(&line);
                by_addr.entry(addr).or_default().push(line);
            }
            None => other.push(line),
        }
    }
    let mut text = reflow(other.join("\n").trim());
    for (_, lines) in by_addr {
        text.push('\n');
        text.push_str(&lines.join("\n"));
    }
    let text = substs
        .iter()
        .fold(Scope { pairs: vec![] }, |sc, s| sc.and(s.text_scope()))
        .replace_in(&text);
    same_name(&text)
}

/// Whether `line` is command output again after a diagnostic printed
/// without its box (whose detail may run over several paragraphs).
fn resumes_after_diagnostic(line: &str) -> bool {
    const STARTS: &[&str] = &[
        "Apply complete!",
        "Destroy complete!",
        "Outputs:",
        "No changes.",
        "Plan: ",
        "Changes to Outputs:",
        "Note: ",
        "  # ",
    ];
    address_line(line).is_some()
        || STARTS.iter().any(|s| line.starts_with(s))
        || line.contains("will perform the following actions")
}

/// `(deposed object 1a2b3c4d)` with the random key as `KEY`.
fn deposed_keys(line: &str) -> String {
    const AT: &str = "(deposed object ";
    match line.find(AT) {
        Some(i) => match line[i + AT.len()..].find(')') {
            Some(j) => format!("{}{AT}KEY{}", &line[..i], &line[i + AT.len() + j..]),
            None => line.to_string(),
        },
        None => line.to_string(),
    }
}

/// `after 12s`, `after 1m3s`, `[10s elapsed]` with the time as `Ns`.
fn durations(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find(|c: char| c.is_ascii_digit()) {
        let (head, tail) = rest.split_at(at);
        let n = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '.'))
            .unwrap_or(tail.len());
        let token = &tail[..n];
        let is_duration = token.ends_with('s')
            && token
                .trim_end_matches('s')
                .trim_end_matches('m')
                .chars()
                .all(|c| c.is_ascii_digit() || c == '.' || c == 'm' || c == 'h')
            && (head.ends_with("after ") || head.ends_with('['));
        out.push_str(head);
        out.push_str(if is_duration { "Ns" } else { token });
        rest = &tail[n..];
    }
    out.push_str(rest);
    out
}

/// Compares two commands' outputs ([`run_text`]), terrane's normalized
/// with the pairs of `substs` (those from before the step and after it:
/// a replacement shows both ids).
pub fn compare_run_texts(tf: &str, tr: &str, substs: &[&Subst]) -> Option<String> {
    first_difference(&run_text(tf, &[]), &run_text(tr, substs))
}

/// One diagnostic as a human box shows it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Diag {
    pub severity: String,
    pub summary: String,
    /// `with ADDR,`
    pub address: Option<String>,
    /// `on FILE line N`
    pub at: Option<String>,
}

impl std::fmt::Display for Diag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.severity, self.summary)?;
        if let Some(a) = &self.address {
            write!(f, " (with {a})")?;
        }
        if let Some(a) = &self.at {
            write!(f, " (on {a})")?;
        }
        Ok(())
    }
}

/// The diagnostics of a command's output, sorted: boxed (`╷ │ ╵`, as
/// Terraform prints them in color) or plain (`Error: ...` at the start of
/// a line, as with `-no-color`).
pub fn diagnostics(text: &str) -> Vec<Diag> {
    let text = strip_colors(text);
    let mut out = Vec::new();
    let mut cur: Option<Diag> = None;
    for line in text.lines() {
        if line.starts_with('\u{2577}') || line.starts_with('\u{2575}') {
            out.extend(cur.take());
            continue;
        }
        let body = match line.strip_prefix('\u{2502}') {
            Some(b) => b.strip_prefix(' ').unwrap_or(b),
            None => line,
        };
        let start = ["Error", "Warning"].iter().find_map(|sev| {
            let s = body.strip_prefix(sev)?.strip_prefix(": ")?;
            Some((sev, s))
        });
        if let Some((sev, summary)) = start {
            out.extend(cur.take());
            cur = Some(Diag {
                severity: sev.to_string(),
                summary: cycle_members_sorted(summary.trim_end()),
                address: None,
                at: None,
            });
            continue;
        }
        let Some(d) = cur.as_mut() else { continue };
        let t = body.trim();
        if let Some(a) = t.strip_prefix("with ") {
            let a = a.strip_suffix(',').unwrap_or(a);
            if d.address.is_none() && !a.contains(' ') {
                d.address = Some(a.to_string());
            }
        }
        if let Some((file, rest)) = t.strip_prefix("on ").and_then(|r| r.split_once(" line ")) {
            let n: String = rest.chars().take_while(char::is_ascii_digit).collect();
            if d.at.is_none() && !file.contains(' ') && !n.is_empty() {
                d.at = Some(format!("{file}:{n}"));
            }
        }
    }
    out.extend(cur);
    out.sort();
    out
}

/// A "Cycle: a, b" summary with its members in one order: Terraform lists
/// them in an order that changes from run to run (its graph walk iterates
/// a map), so only the set of members is compared.
fn cycle_members_sorted(summary: &str) -> String {
    let Some(members) = summary.strip_prefix("Cycle: ") else {
        return summary.to_string();
    };
    let mut m: Vec<&str> = members.split(", ").collect();
    m.sort_unstable();
    format!("Cycle: {}", m.join(", "))
}

/// Diagnostics the harness itself causes: its CLI configuration points
/// Terraform at our plugin binaries with `dev_overrides`, which Terraform
/// warns about at every plan and apply.
const HARNESS_DIAGNOSTICS: &[&str] = &["Provider development overrides are in effect"];

/// The diagnostics to compare: errors with severity, summary, address
/// and file:line; warnings by summary once each (Terraform consolidates
/// warnings that share a summary into the first one shown, and which is
/// first depends on the order of concurrent work).
fn comparable(text: &str) -> Vec<Diag> {
    let mut out: Vec<Diag> = diagnostics(text)
        .into_iter()
        .filter(|d| !HARNESS_DIAGNOSTICS.contains(&d.summary.as_str()))
        // Each tool names itself in some summaries.
        .map(|d| Diag {
            summary: same_name(&d.summary),
            ..d
        })
        .map(|d| match d.severity.as_str() {
            "Warning" => Diag {
                address: None,
                at: None,
                ..d
            },
            _ => d,
        })
        .collect();
    out.sort();
    out.dedup_by(|x, y| x.severity == "Warning" && x == y);
    out
}

/// Compares the diagnostics of two runs ([`comparable`]; without
/// [`HARNESS_DIAGNOSTICS`]).
pub fn compare_diagnostics(tf: &str, tr: &str) -> Option<String> {
    let (a, b) = (comparable(tf), comparable(tr));
    if a == b {
        return None;
    }
    let list = |ds: &[Diag]| {
        ds.iter()
            .map(|d| format!("  {d}"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    Some(format!(
        "--- terraform:\n{}\n--- terrane:\n{}",
        list(&a),
        list(&b)
    ))
}

/// Differences terrane is known to have everywhere, left out of every
/// scenario's verdict and each kept honest by a test that fails once the
/// gap closes (main.rs `known_gap_*`): the text every such problem
/// contains, and why.
pub const KNOWN_GAPS: &[(&str, &str)] = &[
    (
        ": plan: relevant_attributes:",
        "terrane's plans record no relevant_attributes (Terraform's analysis of which \
         resource attributes contribute to the planned changes); the drift note of a \
         normal plan depends on it",
    ),
    (
        ": plan: checks:",
        "terrane's plan JSON has no checks (the status of every checkable object: \
         conditions, check blocks, variable validations); the conditions themselves \
         are enforced and their diagnostics compared",
    ),
];

/// Whether a problem is one of the [`KNOWN_GAPS`].
pub fn known_gap(problem: &str) -> bool {
    KNOWN_GAPS.iter().any(|(text, _)| problem.contains(text))
}

/// Text without ANSI color sequences (`ESC [ ... m`).
fn strip_colors(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' && chars.peek() == Some(&'[') {
            for d in chars.by_ref() {
                if d == 'm' {
                    break;
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests;
