//! The random provider on terrane's SDK, with the resource names, arguments
//! and behaviour users know from the widely used `random` provider:
//! `random_id`, `random_string`, `random_password` (sensitive result and
//! bcrypt hash), `random_integer`, `random_pet`, `random_uuid`,
//! `random_shuffle`. Every argument, including `keepers`, forces
//! replacement; results are generated once at create and kept.
//! `random_password` is also an ephemeral resource (`ephemeral.rs`).

mod ephemeral;
mod words;

use async_trait::async_trait;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;
use std::sync::Arc;
use terrane_sdk::validate::Between;
use terrane_sdk::{
    Applied, Attr, Ctx, Diagnostics, EphemeralResourceType, Provider, Resource, ResourceSchema,
    ResourceType, SimpleEphemeral, SimpleResource, Type, Value,
};

/// The provider.
pub struct RandomProvider;

impl Provider for RandomProvider {
    type Data = ();
    fn type_name(&self) -> &str {
        "random"
    }
    fn version(&self) -> &str {
        env!("CARGO_PKG_VERSION")
    }
    fn resources(&self) -> Vec<Arc<dyn ResourceType>> {
        [
            Kind::Id,
            Kind::String,
            Kind::Password,
            Kind::Integer,
            Kind::Pet,
            Kind::Uuid,
            Kind::Shuffle,
        ]
        .into_iter()
        .map(|k| {
            Arc::new(SimpleResource {
                name: k.name(),
                schema: k.schema_fn(),
                resource: Random(k),
            }) as Arc<dyn ResourceType>
        })
        .collect()
    }
    fn ephemeral_resources(&self) -> Vec<Arc<dyn EphemeralResourceType>> {
        vec![Arc::new(SimpleEphemeral {
            name: "random_password",
            schema: ephemeral::password_schema,
            resource: ephemeral::EphemeralPassword,
        })]
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Id,
    String,
    Password,
    Integer,
    Pet,
    Uuid,
    Shuffle,
}

// Upper bounds of what the provider allocates. Without them a length such
// as 1e11 aborts the process on a failed allocation (with the state lock
// held) instead of getting a diagnostic at the attribute.
/// Characters of `random_string`/`random_password` (and each `min_*`).
const MAX_LENGTH: i64 = 65_536;
/// Bytes of `random_id`.
const MAX_BYTE_LENGTH: i64 = 4_096;
/// Words of `random_pet`.
const MAX_PET_WORDS: i64 = 1_024;

fn keepers() -> Attr {
    Attr::of(Type::map(Type::String))
        .optional()
        .requires_replace()
        .describe(
            "Arbitrary map of values that, when changed, will trigger recreation of resource.",
        )
}

fn id_schema() -> ResourceSchema {
    ResourceSchema::new(0)
        .attr(
            "byte_length",
            Attr::number()
                .required()
                .requires_replace()
                .validate(Between(1, MAX_BYTE_LENGTH)),
        )
        .attr("prefix", Attr::string().optional().requires_replace())
        .attr("keepers", keepers())
        .attr("id", Attr::string().computed().use_state_for_unknown())
        .attr("b64_url", Attr::string().computed().use_state_for_unknown())
        .attr("b64_std", Attr::string().computed().use_state_for_unknown())
        .attr("hex", Attr::string().computed().use_state_for_unknown())
        .attr("dec", Attr::string().computed().use_state_for_unknown())
}

fn string_schema_with(sensitive: bool) -> ResourceSchema {
    let flag = || Attr::bool().default(Value::bool(true)).requires_replace();
    let min = || {
        Attr::number()
            .default(Value::number(0))
            .requires_replace()
            .validate(Between(0, MAX_LENGTH))
    };
    let result = Attr::string().computed().use_state_for_unknown();
    let s = ResourceSchema::new(if sensitive { 3 } else { 2 })
        .attr(
            "length",
            Attr::number()
                .required()
                .requires_replace()
                .validate(Between(1, MAX_LENGTH)),
        )
        .attr("special", flag())
        .attr("upper", flag())
        .attr("lower", flag())
        .attr("numeric", flag())
        .attr("min_numeric", min())
        .attr("min_upper", min())
        .attr("min_lower", min())
        .attr("min_special", min())
        .attr(
            "override_special",
            Attr::string().optional().requires_replace(),
        )
        .attr("keepers", keepers())
        .attr("id", Attr::string().computed().use_state_for_unknown());
    if sensitive {
        s.attr("result", result.sensitive()).attr(
            "bcrypt_hash",
            Attr::string()
                .computed()
                .sensitive()
                .use_state_for_unknown(),
        )
    } else {
        s.attr("result", result)
    }
}

fn string_schema() -> ResourceSchema {
    string_schema_with(false)
}

fn password_schema() -> ResourceSchema {
    string_schema_with(true)
}

fn integer_schema() -> ResourceSchema {
    ResourceSchema::new(0)
        .attr("min", Attr::number().required().requires_replace())
        .attr("max", Attr::number().required().requires_replace())
        .attr("seed", Attr::string().optional().requires_replace())
        .attr("keepers", keepers())
        .attr("result", Attr::number().computed().use_state_for_unknown())
        .attr("id", Attr::string().computed().use_state_for_unknown())
}

fn pet_schema() -> ResourceSchema {
    ResourceSchema::new(0)
        .attr(
            "length",
            Attr::number()
                .default(Value::number(2))
                .requires_replace()
                .validate(Between(1, MAX_PET_WORDS)),
        )
        .attr("prefix", Attr::string().optional().requires_replace())
        .attr(
            "separator",
            Attr::string()
                .default(Value::string("-"))
                .requires_replace(),
        )
        .attr("keepers", keepers())
        .attr("id", Attr::string().computed().use_state_for_unknown())
}

fn uuid_schema() -> ResourceSchema {
    ResourceSchema::new(0)
        .attr("keepers", keepers())
        .attr("result", Attr::string().computed().use_state_for_unknown())
        .attr("id", Attr::string().computed().use_state_for_unknown())
}

fn shuffle_schema() -> ResourceSchema {
    ResourceSchema::new(0)
        .attr(
            "input",
            Attr::of(Type::list(Type::String))
                .required()
                .requires_replace(),
        )
        .attr("seed", Attr::string().optional().requires_replace())
        .attr(
            "result_count",
            Attr::number()
                .optional()
                .requires_replace()
                .validate(terrane_sdk::validate::AtLeast(0)),
        )
        .attr("keepers", keepers())
        .attr(
            "result",
            Attr::of(Type::list(Type::String))
                .computed()
                .use_state_for_unknown(),
        )
        .attr("id", Attr::string().computed().use_state_for_unknown())
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Id => "random_id",
            Kind::String => "random_string",
            Kind::Password => "random_password",
            Kind::Integer => "random_integer",
            Kind::Pet => "random_pet",
            Kind::Uuid => "random_uuid",
            Kind::Shuffle => "random_shuffle",
        }
    }

    fn schema_fn(self) -> fn() -> ResourceSchema {
        match self {
            Kind::Id => id_schema,
            Kind::String => string_schema,
            Kind::Password => password_schema,
            Kind::Integer => integer_schema,
            Kind::Pet => pet_schema,
            Kind::Uuid => uuid_schema,
            Kind::Shuffle => shuffle_schema,
        }
    }
}

#[derive(Clone)]
struct Random(Kind);

fn num(v: &Value, name: &str) -> Option<i64> {
    v.get_attr(name)
        .and_then(Value::as_number)
        .and_then(|n| n.to_i64())
}

fn flag(v: &Value, name: &str) -> bool {
    v.get_attr(name).and_then(Value::as_bool).unwrap_or(true)
}

fn text(v: &Value, name: &str) -> Option<String> {
    terrane_sdk::str_attr(v, name)
}

fn bad(summary: &str, detail: String) -> Diagnostics {
    Diagnostics::error(summary, detail)
}

/// An RNG seeded from a `seed` string when one is given.
fn rng_for(seed: Option<String>) -> rand::rngs::StdRng {
    match seed {
        Some(s) => {
            let mut h: u64 = 0xcbf29ce484222325;
            for b in s.bytes() {
                h = (h ^ u64::from(b)).wrapping_mul(0x100000001b3);
            }
            rand::rngs::StdRng::seed_from_u64(h)
        }
        None => rand::rngs::StdRng::from_entropy(),
    }
}

/// Fills the computed attributes for a new object from its planned value.
fn generate(kind: Kind, planned: &Value) -> Result<BTreeMap<String, Value>, Diagnostics> {
    let mut out = BTreeMap::new();
    let mut rng = rand::thread_rng();
    match kind {
        Kind::Id => {
            let n = num(planned, "byte_length").unwrap_or(0);
            if !(1..=MAX_BYTE_LENGTH).contains(&n) {
                return Err(bad(
                    "Invalid byte_length",
                    format!("byte_length must be between 1 and {MAX_BYTE_LENGTH}, got {n}"),
                ));
            }
            let bytes: Vec<u8> = (0..n).map(|_| rng.gen()).collect();
            id_fields(
                &bytes,
                text(planned, "prefix").unwrap_or_default(),
                &mut out,
            );
        }
        Kind::String | Kind::Password => {
            let s = random_string(planned, &mut rng)?;
            out.insert("result".into(), Value::string(s.clone()));
            if kind == Kind::Password {
                out.insert("id".into(), Value::string("none"));
                let hash = bcrypt::hash(&s, bcrypt::DEFAULT_COST)
                    .map_err(|e| bad("bcrypt failed", e.to_string()))?;
                out.insert("bcrypt_hash".into(), Value::string(hash));
            } else {
                out.insert("id".into(), Value::string(s));
            }
        }
        Kind::Integer => {
            let (min, max) = (
                num(planned, "min").unwrap_or(0),
                num(planned, "max").unwrap_or(0),
            );
            if max < min {
                return Err(Diagnostics::attr_error(
                    terrane_sdk::Path::root().attr("max"),
                    "Invalid range",
                    format!(
                        "the minimum ({min}) must be less than or equal to the maximum ({max})"
                    ),
                ));
            }
            let n = rng_for(text(planned, "seed")).gen_range(min..=max);
            out.insert("result".into(), Value::number(n));
            out.insert("id".into(), Value::string(n.to_string()));
        }
        Kind::Pet => {
            let len = num(planned, "length").unwrap_or(2).clamp(1, MAX_PET_WORDS) as usize;
            let mut parts: Vec<String> = Vec::new();
            if let Some(p) = text(planned, "prefix") {
                parts.push(p);
            }
            for i in 0..len {
                let list = if i + 1 == len {
                    words::ANIMALS
                } else if i + 2 == len {
                    words::ADJECTIVES
                } else {
                    words::ADVERBS
                };
                parts.push(list.choose(&mut rng).copied().unwrap_or("pet").to_string());
            }
            out.insert(
                "id".into(),
                Value::string(
                    parts.join(&text(planned, "separator").unwrap_or_else(|| "-".into())),
                ),
            );
        }
        Kind::Uuid => {
            let u = uuid::Uuid::new_v4().to_string();
            out.insert("result".into(), Value::string(u.clone()));
            out.insert("id".into(), Value::string(u));
        }
        Kind::Shuffle => {
            let mut input: Vec<Value> = planned
                .get_attr("input")
                .and_then(Value::elements)
                .map(<[Value]>::to_vec)
                .unwrap_or_default();
            input.shuffle(&mut rng_for(text(planned, "seed")));
            if let Some(n) = num(planned, "result_count") {
                input.truncate(n.max(0) as usize);
            }
            out.insert("result".into(), Value::list(Type::String, input));
            out.insert("id".into(), Value::string("-"));
        }
    }
    Ok(out)
}

fn id_fields(bytes: &[u8], prefix: String, out: &mut BTreeMap<String, Value>) {
    use base64::Engine as _;
    let url = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
    out.insert("id".into(), Value::string(url.clone()));
    out.insert("b64_url".into(), Value::string(format!("{prefix}{url}")));
    out.insert(
        "b64_std".into(),
        Value::string(format!(
            "{prefix}{}",
            base64::engine::general_purpose::STANDARD.encode(bytes)
        )),
    );
    out.insert(
        "hex".into(),
        Value::string(format!("{prefix}{}", hex::encode(bytes))),
    );
    out.insert(
        "dec".into(),
        Value::string(format!(
            "{prefix}{}",
            num_bigint::BigUint::from_bytes_be(bytes)
        )),
    );
}

const LOWER: &str = "abcdefghijklmnopqrstuvwxyz";
const UPPER: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const NUMERIC: &str = "0123456789";
const SPECIAL: &str = "!@#$%&*()-_=+[]{}<>:?";

fn random_string(planned: &Value, rng: &mut impl Rng) -> Result<String, Diagnostics> {
    let length = num(planned, "length").unwrap_or(0).max(0);
    // Validation refuses these at the attribute; checked again here so no
    // path reaches a huge allocation.
    let mins = ["min_upper", "min_lower", "min_numeric", "min_special"];
    if length > MAX_LENGTH
        || mins
            .iter()
            .any(|m| num(planned, m).unwrap_or(0) > MAX_LENGTH)
    {
        return Err(bad(
            "Invalid Attribute Value",
            format!("length and min_* must be at most {MAX_LENGTH}"),
        ));
    }
    let length = length as usize;
    let special = text(planned, "override_special").unwrap_or_else(|| SPECIAL.to_string());
    let classes: Vec<(bool, &str, usize)> = vec![
        (
            flag(planned, "upper"),
            UPPER,
            num(planned, "min_upper").unwrap_or(0).max(0) as usize,
        ),
        (
            flag(planned, "lower"),
            LOWER,
            num(planned, "min_lower").unwrap_or(0).max(0) as usize,
        ),
        (
            flag(planned, "numeric"),
            NUMERIC,
            num(planned, "min_numeric").unwrap_or(0).max(0) as usize,
        ),
        (
            flag(planned, "special"),
            special.as_str(),
            num(planned, "min_special").unwrap_or(0).max(0) as usize,
        ),
    ];
    let mut chars: Vec<char> = Vec::with_capacity(length);
    let mut pool = String::new();
    for (on, set, min) in &classes {
        if *on {
            pool.push_str(set);
        }
        let set: Vec<char> = set.chars().collect();
        for _ in 0..*min {
            if let Some(c) = set.choose(rng) {
                chars.push(*c);
            }
        }
    }
    if chars.len() > length {
        return Err(bad(
            "Invalid Attribute Combination",
            format!(
                "length ({length}) must be at least the sum of the min_* values ({})",
                chars.len()
            ),
        ));
    }
    let pool: Vec<char> = pool.chars().collect();
    if pool.is_empty() {
        return Err(bad(
            "Invalid Attribute Combination",
            "at least one of upper, lower, numeric and special must be true".into(),
        ));
    }
    while chars.len() < length {
        chars.push(*pool.choose(rng).unwrap_or(&'a'));
    }
    chars.shuffle(rng);
    Ok(chars.into_iter().collect())
}

/// `planned` with every unknown attribute replaced from `fill`.
fn complete(planned: &Value, fill: &BTreeMap<String, Value>) -> Value {
    let mut m = planned.entries().map(|e| (*e).clone()).unwrap_or_default();
    for (k, v) in fill {
        if m.get(k).is_none_or(|cur| !cur.is_known()) {
            m.insert(k.clone(), v.clone());
        }
    }
    Value::object_of(m)
}

#[async_trait]
impl Resource for Random {
    async fn create(
        &self,
        _ctx: &Ctx,
        planned: &Value,
        _config: &Value,
    ) -> Result<Applied, Diagnostics> {
        let fill = if self.0 == Kind::Password {
            // bcrypt is slow on purpose (tens of milliseconds): it runs on a
            // blocking thread so the calls around it keep flowing.
            let (kind, p) = (self.0, planned.clone());
            tokio::task::spawn_blocking(move || generate(kind, &p))
                .await
                .map_err(|e| bad("bcrypt failed", e.to_string()))??
        } else {
            generate(self.0, planned)?
        };
        Ok(Applied::new(complete(planned, &fill)))
    }

    async fn read(
        &self,
        _ctx: &Ctx,
        state: &Value,
        private: &[u8],
    ) -> Result<Option<Applied>, Diagnostics> {
        Ok(Some(Applied {
            state: state.clone(),
            private: private.to_vec(),
        }))
    }

    async fn update(
        &self,
        _ctx: &Ctx,
        prior: &Value,
        planned: &Value,
        _config: &Value,
    ) -> Result<Applied, Diagnostics> {
        let keep = prior.entries().map(|e| e.to_map()).unwrap_or_default();
        Ok(Applied::new(complete(planned, &keep)))
    }

    async fn delete(&self, _ctx: &Ctx, _prior: &Value) -> Result<(), Diagnostics> {
        Ok(())
    }

    async fn import(&self, _ctx: &Ctx, id: &str) -> Result<Value, Diagnostics> {
        let schema = (self.0.schema_fn())();
        let ty = schema.block_schema().implied_type();
        let empty = schema.block_schema().empty_value();
        let mut m = empty.entries().map(|e| e.to_map()).unwrap_or_default();
        for (name, attr) in schema.attrs() {
            if let Some(d) = terrane_sdk::default_of(attr) {
                m.insert(name.clone(), d);
            }
        }
        match self.0 {
            Kind::Id => {
                use base64::Engine as _;
                let (prefix, b64) = id.split_once(',').unwrap_or(("", id));
                let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
                    .decode(b64)
                    .map_err(|e| {
                        bad(
                            "Invalid import ID",
                            format!(
                                "expected the id's base64 URL form, optionally as PREFIX,B64: {e}"
                            ),
                        )
                    })?;
                m.insert("byte_length".into(), Value::number(bytes.len() as i64));
                if !prefix.is_empty() {
                    m.insert("prefix".into(), Value::string(prefix));
                }
                id_fields(&bytes, prefix.to_string(), &mut m);
            }
            Kind::String | Kind::Password => {
                m.insert("length".into(), Value::number(id.chars().count() as i64));
                m.insert("result".into(), Value::string(id));
                if self.0 == Kind::Password {
                    m.insert("id".into(), Value::string("none"));
                    let hash = bcrypt::hash(id, bcrypt::DEFAULT_COST)
                        .map_err(|e| bad("bcrypt failed", e.to_string()))?;
                    m.insert("bcrypt_hash".into(), Value::string(hash));
                } else {
                    m.insert("id".into(), Value::string(id));
                }
            }
            Kind::Integer => {
                let parts: Vec<&str> = id.split(',').collect();
                let parse = |s: &str| {
                    s.trim().parse::<i64>().map_err(|_| {
                        bad(
                            "Invalid import ID",
                            format!("expected RESULT,MIN,MAX[,SEED], got {id:?}"),
                        )
                    })
                };
                if parts.len() < 3 || parts.len() > 4 {
                    return Err(bad(
                        "Invalid import ID",
                        format!("expected RESULT,MIN,MAX[,SEED], got {id:?}"),
                    ));
                }
                let (result, min, max) = (parse(parts[0])?, parse(parts[1])?, parse(parts[2])?);
                m.insert("result".into(), Value::number(result));
                m.insert("id".into(), Value::string(result.to_string()));
                m.insert("min".into(), Value::number(min));
                m.insert("max".into(), Value::number(max));
                if let Some(seed) = parts.get(3) {
                    m.insert("seed".into(), Value::string(*seed));
                }
            }
            Kind::Uuid => {
                let u = uuid::Uuid::parse_str(id)
                    .map_err(|e| bad("Invalid import ID", format!("expected a UUID: {e}")))?;
                m.insert("result".into(), Value::string(u.to_string()));
                m.insert("id".into(), Value::string(u.to_string()));
            }
            Kind::Pet | Kind::Shuffle => {
                return Err(bad(
                    "Resource Import Not Implemented",
                    format!(
                        "{} cannot be imported: its arguments cannot be recovered from an ID.",
                        self.0.name()
                    ),
                ))
            }
        }
        Ok(Value::object_typed(&ty, m))
    }
}
