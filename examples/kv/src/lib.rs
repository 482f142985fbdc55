//! A key/value store in a JSON file as a Terraform provider: a `path` in the
//! provider block; a `kv_entry` resource (force-new key, in-place value,
//! sensitive secret, computed version, import, drift) and a `kv_entry` data
//! source, both handed the provider's typed data, the [`Store`].
use std::{io::Write, os::unix::fs::OpenOptionsExt, path::PathBuf, sync::Arc};
use terrane_sdk::serde_json::{self, Map, Value as Json};
use terrane_sdk::validate::Pattern;
use terrane_sdk::*;

/// The provider.
pub struct Kv;

/// What `configure` makes of the provider block: the store's file.
pub struct Store(PathBuf);

#[async_trait]
impl Provider for Kv {
    type Data = Store;
    fn type_name(&self) -> &str {
        "kv"
    }
    fn version(&self) -> &str {
        env!("CARGO_PKG_VERSION")
    }
    fn schema(&self) -> Result<Schema> {
        Ok(Schema::new(0).attr("path", Attr::string().required()))
    }
    async fn configure(&self, _: &Ctx, config: &Value) -> Result<Option<Store>> {
        Ok(str_attr(config, "path").map(|p| Store(p.into())))
    }
    fn resources(&self) -> Vec<Arc<dyn ResourceType<Store>>> {
        vec![Arc::new(ResourceTypeOf::new("kv_entry", schema, Entries))]
    }
    fn data_sources(&self) -> Vec<Arc<dyn DataSourceType<Store>>> {
        let lookup = || schema().data_source(&["key"]);
        vec![Arc::new(DataSourceTypeOf::new("kv_entry", lookup, Entries))]
    }
}

fn schema() -> Schema {
    let msg = "Attribute {path} must be lowercase letters, digits and underscores, got {value}.";
    let key = Pattern::new("^[a-z0-9_]+$", msg);
    let key = Attr::string().required().requires_replace().validate(key);
    Schema::new(0)
        .attr("key", key)
        .attr("value", Attr::string().required())
        .attr("secret", Attr::string().optional().sensitive())
        .attr("version", Attr::number().computed())
        .attr("id", Attr::string().computed().use_state_for_unknown())
}

/// The file holds each entry's whole object, as Terraform writes state.
impl Store {
    fn fail(&self, summary: &str, e: impl std::fmt::Display) -> Diagnostics {
        Diagnostics::error(summary, format!("{}: {e}", self.0.display()))
    }
    fn load(&self) -> Result<Map<String, Json>> {
        match std::fs::read(&self.0) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Map::new()),
            Err(e) => Err(self.fail("Cannot read the store", e)),
            Ok(b) => serde_json::from_slice(&b).map_err(|e| self.fail("Invalid store", e)),
        }
    }
    fn save(&self, m: Map<String, Json>) -> Result<()> {
        let mut f = std::fs::OpenOptions::new();
        f.write(true).create(true).truncate(true).mode(0o600);
        let (text, w) = (Json::Object(m).to_string(), "Cannot write the store");
        let mut file = f.open(&self.0).map_err(|e| self.fail(w, e))?;
        file.write_all(text.as_bytes()).map_err(|e| self.fail(w, e))
    }
    /// The entry under `key`, rebuilt wholly from the file (so drift shows).
    fn get(&self, key: &str) -> Result<Option<Value>> {
        let ty = schema().value_type();
        let entry = self.load()?.remove(key);
        entry.map(|j| values::from_json(&j, &ty)).transpose()
    }
}

/// Both the resource and the data source.
struct Entries(Option<Arc<Store>>);

#[async_trait]
impl Resource for Entries {
    async fn create(&self, ctx: &Ctx, planned: &Value, cfg: &Value) -> Result<Applied> {
        self.update(ctx, &values::null(schema().value_type()), planned, cfg)
            .await
    }
    async fn read(&self, _: &Ctx, state: &Value, _: &[u8]) -> Result<Option<Applied>> {
        let key = str_attr(state, "key").unwrap_or_default();
        Ok(configured(&self.0)?.get(&key)?.map(Applied::new))
    }
    async fn update(&self, _: &Ctx, _: &Value, planned: &Value, _: &Value) -> Result<Applied> {
        let (store, key) = (
            configured(&self.0)?,
            str_attr(planned, "key").unwrap_or_default(),
        );
        let mut m = store.load()?;
        let old = m.get(&key).and_then(|o| o["version"].as_i64());
        let state = with_attr(planned, "version", values::number(old.unwrap_or(0) + 1));
        let state = with_attr(&state, "id", values::string(key.as_str()));
        m.insert(key, values::to_json(&state, &schema().value_type())?);
        store.save(m)?;
        Ok(Applied::new(state))
    }
    async fn delete(&self, _: &Ctx, prior: &Value) -> Result<()> {
        let store = configured(&self.0)?;
        let mut m = store.load()?;
        m.remove(&str_attr(prior, "key").unwrap_or_default());
        store.save(m)
    }
    async fn import(&self, _: &Ctx, id: &str) -> Result<Value> {
        Ok(import_passthrough(&schema(), "key", id))
    }
}

#[async_trait]
impl DataSource for Entries {
    async fn read(&self, _: &Ctx, config: &Value) -> Result<Value> {
        let key = str_attr(config, "key").unwrap_or_default();
        let at = Path::root().attr("key");
        let missing =
            || Diagnostics::attr_error(at, "Entry Not Found", format!("No entry {key:?}."));
        configured(&self.0)?.get(&key)?.ok_or_else(missing)
    }
}
