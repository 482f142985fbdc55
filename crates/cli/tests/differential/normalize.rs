//! Comparing Terraform's and terrane's `show -json` documents.
//!
//! Both tools drive the same provider binaries, so everything except
//! randomness must come out equal. Random values (random_* attributes, the
//! UUID `id` of terraform_data) are paired up by address and attribute
//! from the states both tools wrote ([`Subst::learn`]); terrane's strings
//! then have terrane's random values replaced by Terraform's before the
//! comparison, so values built from them (templates, file contents) compare
//! too. Digests of random-derived file contents cannot be paired that way;
//! they are the one thing left out (see [`DIGESTS`]).

use serde_json::{Map, Value};
use std::collections::BTreeMap;

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

/// terrane's random values -> Terraform's, learned from states.
#[derive(Default, Debug, Clone)]
pub struct Subst {
    strings: BTreeMap<String, String>,
    /// Whole-value pairs (numbers, short strings): replaced only when equal.
    numbers: Vec<(Value, Value)>,
    /// Every pairing seen, whole values: one terrane value may stand for
    /// several Terraform values (random_id's b64_std and b64_url are equal
    /// strings on one side when the bytes need no '+' or '/').
    seen: Vec<(Value, Value)>,
}

impl Subst {
    /// Pairs up the random attributes of resources present in both states.
    pub fn learn(&mut self, terraform_state: &Value, terrane_state: &Value) {
        let tf = state_resources(terraform_state);
        let tr = state_resources(terrane_state);
        for (addr, a) in &tf {
            let Some(b) = tr.get(addr) else { continue };
            let ty = a["type"].as_str().unwrap_or_default();
            let (Some(av), Some(bv)) = (a["values"].as_object(), b["values"].as_object()) else {
                continue;
            };
            for (k, x) in av {
                let random = ty.starts_with("random_") || (ty == "terraform_data" && k == "id");
                if !random {
                    continue;
                }
                let Some(y) = bv.get(k) else { continue };
                if x != y {
                    self.seen.push((y.clone(), x.clone()));
                }
                match (x, y) {
                    // Short strings (random_integer's id) would replace
                    // unrelated text: only values of 6 characters or more.
                    (Value::String(x), Value::String(y)) if x != y && y.len() >= 6 => {
                        self.strings.insert(y.clone(), x.clone());
                    }
                    (Value::String(_), Value::String(_)) if x != y => {
                        self.numbers.push((y.clone(), x.clone()))
                    }
                    (Value::Number(_), Value::Number(_)) if x != y => {
                        self.numbers.push((y.clone(), x.clone()))
                    }
                    _ => {}
                }
            }
        }
    }

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
            _ if self.seen.iter().any(|(from, to)| from == tr && to == tf) => tf.clone(),
            _ => self.apply(tr),
        }
    }

    /// terrane's value with its random values replaced by Terraform's.
    pub fn apply(&self, v: &Value) -> Value {
        if let Some((_, to)) = self.numbers.iter().find(|(from, _)| from == v) {
            return to.clone();
        }
        match v {
            Value::String(s) => {
                let mut keys: Vec<&String> = self.strings.keys().collect();
                keys.sort_by_key(|k| std::cmp::Reverse(k.len()));
                let mut out = s.clone();
                for k in keys {
                    if out.contains(k.as_str()) {
                        out = out.replace(k.as_str(), &self.strings[k]);
                    }
                }
                Value::String(out)
            }
            Value::Array(xs) => Value::Array(xs.iter().map(|x| self.apply(x)).collect()),
            Value::Object(m) => {
                Value::Object(m.iter().map(|(k, x)| (k.clone(), self.apply(x))).collect())
            }
            other => other.clone(),
        }
    }
}

/// Every resource instance of a state document (root and child modules),
/// keyed by address (plus ` deposed` for deposed objects).
pub fn state_resources(doc: &Value) -> BTreeMap<String, Value> {
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
    walk(&doc["values"]["root_module"], &mut out);
    out
}

/// Records differences between `tf` and `tr` (already substituted) at
/// `path`, skipping object keys in `skip`.
pub fn diff(path: &str, tf: &Value, tr: &Value, skip: &[&str], out: &mut Vec<String>) {
    match (tf, tr) {
        (Value::Object(a), Value::Object(b)) => {
            let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
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
    ] {
        if let Some(v) = c.get(k) {
            m.insert(k.into(), v.clone());
        }
    }
    for k in ["action_reason", "previous_address"] {
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

/// Differences between two saved-plan documents (`show -json PLAN`).
pub fn compare_plans(tf: &Value, tr: &Value, subst: &Subst) -> Vec<String> {
    let mut out = Vec::new();
    let a = changes_by_address(tf, "resource_changes");
    let b = changes_by_address(tr, "resource_changes");
    compare_keyed("resource_changes addresses", &a, &b, &mut out);
    for (addr, x) in &a {
        let Some(y) = b.get(addr) else { continue };
        let (xv, yraw) = (change_view(x), change_view(y));
        let mut yv = yraw.clone();
        for k in ["before", "after"] {
            yv[k] = subst.apply_against(&xv[k], &yraw[k]);
        }
        let ty = x["type"].as_str().unwrap_or_default();
        let pairs = [
            (&xv["before"], &yraw["before"], &yv["before"]),
            (&xv["after"], &yraw["after"], &yv["after"]),
        ];
        let skip = skip_for(ty, &pairs);
        for k in [
            "actions",
            "action_reason",
            "previous_address",
            "importing",
            "after_unknown",
            "before_sensitive",
            "after_sensitive",
        ] {
            diff(
                &format!("{addr}: {k}"),
                xv.get(k).unwrap_or(&Value::Null),
                yv.get(k).unwrap_or(&Value::Null),
                &[],
                &mut out,
            );
        }
        for k in ["before", "after"] {
            diff(&format!("{addr}: {k}"), &xv[k], &yv[k], skip, &mut out);
        }
    }
    let drift = |d: &Value| -> Vec<(String, Value)> {
        changes_by_address(d, "resource_drift")
            .into_iter()
            .map(|(k, v)| (k, v["change"]["actions"].clone()))
            .collect()
    };
    let (da, db) = (drift(tf), drift(tr));
    if da != db {
        out.push(format!("resource_drift: terraform {da:?}, terrane {db:?}"));
    }
    let empty = Value::Object(Map::new());
    let oa = tf.get("output_changes").unwrap_or(&empty);
    let ob = subst.apply_against(oa, tr.get("output_changes").unwrap_or(&empty));
    diff("output_changes", oa, &ob, &[], &mut out);
    out
}

/// Differences between two state documents (`show -json`).
pub fn compare_states(tf: &Value, tr: &Value, subst: &Subst) -> Vec<String> {
    let mut out = Vec::new();
    let a = state_resources(tf);
    let b = state_resources(tr);
    compare_keyed("state addresses", &a, &b, &mut out);
    for (addr, x) in &a {
        let Some(yraw) = b.get(addr) else { continue };
        let mut y = yraw.clone();
        y["values"] = subst.apply_against(&x["values"], &yraw["values"]);
        let ty = x["type"].as_str().unwrap_or_default();
        let skip = skip_for(ty, &[(&x["values"], &yraw["values"], &y["values"])]);
        diff(
            &format!("{addr}: values"),
            &x["values"],
            &y["values"],
            skip,
            &mut out,
        );
        for k in [
            "sensitive_values",
            "tainted",
            "mode",
            "type",
            "provider_name",
            "schema_version",
        ] {
            diff(
                &format!("{addr}: {k}"),
                x.get(k).unwrap_or(&Value::Null),
                y.get(k).unwrap_or(&Value::Null),
                &[],
                &mut out,
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
            out.push(format!(
                "{addr}: depends_on: terraform {:?}, terrane {:?}",
                deps(x),
                deps(&y)
            ));
        }
    }
    let empty = Value::Object(Map::new());
    let oa = tf["values"].get("outputs").unwrap_or(&empty);
    let ob = subst.apply_against(oa, tr["values"].get("outputs").unwrap_or(&empty));
    diff("outputs", oa, &ob, &[], &mut out);
    out
}

/// The part of a human plan that shows the changes: from "will perform
/// the following actions" (or the outputs' changes) to the rule before the
/// closing note; for a plan without changes, its headline.
fn plan_body(text: &str) -> String {
    let text = &without_deposed_keys(&strip_colors(text));
    if let Some(at) = text.find("No changes.") {
        // Only the headline: the paragraph under it wraps around the name.
        return text[at..].lines().next().unwrap_or_default().to_string();
    }
    let start = ["will perform the following actions:", "Changes to Outputs:"]
        .iter()
        .filter_map(|m| text.find(m))
        .min()
        .unwrap_or(text.len());
    let body = &text[start..];
    // Up to the closing rule or diagnostics, and without the outputs-only
    // paragraph (it wraps around the tool's name).
    let end = [
        "\u{2500}",
        "Saved the plan to",
        "\u{2577}",
        "\nYou can apply this plan",
    ]
    .iter()
    .filter_map(|m| body.find(m))
    .min()
    .unwrap_or(body.len());
    body[..end].trim_end().to_string()
}

/// Compares the changes two human plans show, line for line, with
/// Terraform's name for itself and terrane's random values normalized.
/// Returns the first differing lines with their context.
pub fn compare_plan_texts(tf: &str, tr: &str, subst: &Subst) -> Option<String> {
    let tf = plan_body(tf)
        .replace("Terraform", "terrane")
        .replace("terraform apply", "terrane apply");
    let tr = match subst.apply(&Value::String(plan_body(tr))) {
        Value::String(s) => s,
        _ => unreachable!("a string stays a string"),
    };
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

/// Text with every `(deposed object KEY)` written `(deposed object *)`:
/// deposed keys are random in both tools.
fn without_deposed_keys(text: &str) -> String {
    const MARK: &str = "(deposed object ";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(MARK) {
        out.push_str(&rest[..at + MARK.len()]);
        rest = &rest[at + MARK.len()..];
        match rest.find(')') {
            Some(end) if end <= 16 => {
                out.push('*');
                rest = &rest[end..];
            }
            _ => {}
        }
    }
    out.push_str(rest);
    out
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
mod tests {
    use super::*;
    use serde_json::json;

    fn state(resources: Value) -> Value {
        json!({"values": {"root_module": {"resources": resources}}})
    }

    fn pet(id: &str) -> Value {
        json!({"address": "random_pet.p", "type": "random_pet", "values": {"id": id, "length": 2}})
    }

    fn file(content: &str, sha: &str) -> Value {
        json!({"address": "local_file.f", "type": "local_file", "values": {"content": content, "content_sha1": sha, "id": sha}})
    }

    fn plan(rcs: Value) -> Value {
        json!({"resource_changes": rcs})
    }

    fn rc(
        addr: &str,
        ty: &str,
        actions: Value,
        before: Value,
        after: Value,
        unknown: Value,
    ) -> Value {
        json!({"address": addr, "type": ty, "change": {"actions": actions, "before": before, "after": after, "after_unknown": unknown}})
    }

    /// One table case: the differences compare_states reports.
    fn check_states(name: &str, tf: Value, tr: Value, want: &[&str]) {
        let mut s = Subst::default();
        s.learn(&tf, &tr);
        let got = compare_states(&tf, &tr, &s);
        assert_eq!(got, want, "{name}");
    }

    fn check_plans(name: &str, learn: (Value, Value), tf: Value, tr: Value, want: &[&str]) {
        let mut s = Subst::default();
        s.learn(&learn.0, &learn.1);
        let got = compare_plans(&tf, &tr, &s);
        assert_eq!(got, want, "{name}");
    }

    #[test]
    fn states() {
        check_states(
            "equal",
            state(json!([pet("alpha-bee")])),
            state(json!([pet("alpha-bee")])),
            &[],
        );
        check_states(
            "random ids are paired",
            state(json!([pet("alpha-bee")])),
            state(json!([pet("gamma-doe")])),
            &[],
        );
        check_states(
            "random-derived content and its digests",
            state(json!([pet("alpha-bee"), file("x alpha-bee", "111")])),
            state(json!([pet("gamma-doe"), file("x gamma-doe", "222")])),
            &[],
        );
        check_states(
            "digests compared when the content is not random",
            state(json!([file("fixed", "111")])),
            state(json!([file("fixed", "222")])),
            &[
                "local_file.f: values.content_sha1: terraform \"111\", terrane \"222\"",
                "local_file.f: values.id: terraform \"111\", terrane \"222\"",
            ],
        );
        check_states(
            "config value differs",
            state(json!([pet("alpha-bee"), file("x alpha-bee", "1")])),
            state(json!([pet("gamma-doe"), file("y gamma-doe", "2")])),
            &[
                "local_file.f: values.content: terraform \"x alpha-bee\", terrane \"y alpha-bee\"",
                "local_file.f: values.content_sha1: terraform \"1\", terrane \"2\"",
                "local_file.f: values.id: terraform \"1\", terrane \"2\"",
            ],
        );
        check_states(
            "missing instance",
            state(json!([pet("alpha-bee"), file("x", "1")])),
            state(json!([pet("gamma-doe")])),
            &["state addresses: terraform has [\"local_file.f\", \"random_pet.p\"], terrane has [\"random_pet.p\"]"],
        );
        check_states(
            "tainted flag",
            state(
                json!([{"address": "kv_item.a", "type": "kv_item", "tainted": true, "values": {}}]),
            ),
            state(json!([{"address": "kv_item.a", "type": "kv_item", "values": {}}])),
            &["kv_item.a: tainted: terraform true, terrane null"],
        );
        check_states(
            "outputs",
            json!({"values": {"outputs": {"o": {"value": "s", "sensitive": true}}, "root_module": {}}}),
            json!({"values": {"outputs": {"o": {"value": "s", "sensitive": false}}, "root_module": {}}}),
            &["outputs.o.sensitive: terraform true, terrane false"],
        );
        check_states(
            "child modules and depends_on",
            json!({"values": {"root_module": {"child_modules": [{"resources": [{"address": "module.m.terraform_data.d", "type": "terraform_data", "values": {"id": "u1"}, "depends_on": ["b", "a"]}]}]}}}),
            json!({"values": {"root_module": {"child_modules": [{"resources": [{"address": "module.m.terraform_data.d", "type": "terraform_data", "values": {"id": "u2"}, "depends_on": ["a"]}]}]}}}),
            &["module.m.terraform_data.d: depends_on: terraform [\"a\", \"b\"], terrane [\"a\"]"],
        );
    }

    #[test]
    fn plans() {
        let none = (json!({}), json!({}));
        check_plans(
            "equal create",
            none.clone(),
            plan(json!([rc(
                "a.b",
                "terraform_data",
                json!(["create"]),
                json!(null),
                json!({"input": 1}),
                json!({"id": true})
            )])),
            plan(json!([rc(
                "a.b",
                "terraform_data",
                json!(["create"]),
                json!(null),
                json!({"input": 1}),
                json!({"id": true})
            )])),
            &[],
        );
        check_plans(
            "actions and unknowns differ",
            none.clone(),
            plan(json!([rc(
                "a.b",
                "terraform_data",
                json!(["create"]),
                json!(null),
                json!({"input": 1}),
                json!({"id": true, "output": true})
            )])),
            plan(json!([rc(
                "a.b",
                "terraform_data",
                json!(["update"]),
                json!(null),
                json!({"input": 1, "output": 1}),
                json!({"id": true})
            )])),
            &[
                "a.b: actions[0]: terraform \"create\", terrane \"update\"",
                "a.b: after_unknown.output: terraform true, terrane has no such key",
                "a.b: after.output: terrane 1, terraform has no such key",
            ],
        );
        check_plans(
            "prior random values are paired in before and after",
            (
                state(json!([pet("alpha-bee")])),
                state(json!([pet("gamma-doe")])),
            ),
            plan(json!([rc(
                "random_pet.p",
                "random_pet",
                json!(["no-op"]),
                json!({"id": "alpha-bee"}),
                json!({"id": "alpha-bee"}),
                json!({})
            )])),
            plan(json!([rc(
                "random_pet.p",
                "random_pet",
                json!(["no-op"]),
                json!({"id": "gamma-doe"}),
                json!({"id": "gamma-doe"}),
                json!({})
            )])),
            &[],
        );
        check_plans(
            "reasons and addresses",
            none.clone(),
            plan(json!([{"address": "x.y", "action_reason": "replace_because_tainted", "change": {"actions": ["delete", "create"]}}])),
            plan(json!([{"address": "x.y", "change": {"actions": ["delete", "create"]}}, {"address": "x.z", "change": {"actions": ["create"]}}])),
            &["resource_changes addresses: terraform has [\"x.y\"], terrane has [\"x.y\", \"x.z\"]", "x.y: action_reason: terraform \"replace_because_tainted\", terrane null"],
        );
        check_plans(
            "output changes (missing means none)",
            none,
            json!({"resource_changes": [], "output_changes": {"o": {"actions": ["create"], "after_unknown": true}}}),
            json!({"resource_changes": []}),
            &["output_changes.o: terraform {\"actions\":[\"create\"],\"after_unknown\":true}, terrane has no such key"],
        );
    }

    #[test]
    fn substitution_prefers_longer_values() {
        let mut s = Subst::default();
        s.strings.insert("ab".into(), "X".into());
        s.strings.insert("abc".into(), "Y".into());
        assert_eq!(s.apply(&json!(["abc-ab"])), json!(["Y-X"]));
        s.numbers.push((json!(7), json!(9)));
        assert_eq!(s.apply(&json!({"n": 7, "m": 8})), json!({"n": 9, "m": 8}));
        // A value already equal to Terraform's is not rewritten, even when
        // it equals a random value of terrane's.
        assert_eq!(
            s.apply_against(&json!({"len": 7, "r": 9}), &json!({"len": 7, "r": 7})),
            json!({"len": 7, "r": 9})
        );
    }
}
