//! `notes`: a provider whose configuration names a directory and whose
//! `notes_note` resource is a text file in it. Rename and extend it.

use std::path::PathBuf;
use std::sync::Arc;
use terrane_sdk::*;

/// The provider.
pub struct Notes;

/// What `configure` makes of the provider block, handed to every
/// resource instance.
pub struct Dir(PathBuf);

#[async_trait]
impl Provider for Notes {
    type Data = Dir;
    fn type_name(&self) -> &str {
        "notes"
    }
    fn version(&self) -> &str {
        env!("CARGO_PKG_VERSION")
    }
    fn schema(&self) -> Result<Schema> {
        Ok(Schema::new(0).attr("directory", Attr::string().required()))
    }
    async fn configure(&self, _: &Ctx, config: &Value) -> Result<Option<Dir>> {
        Ok(str_attr(config, "directory").map(|d| Dir(d.into())))
    }
    fn resources(&self) -> Vec<Arc<dyn ResourceType<Dir>>> {
        vec![Arc::new(ResourceTypeOf::new("notes_note", schema, Note))]
    }
}

fn schema() -> Schema {
    let name = validate::Pattern::new(
        "^[a-z0-9-]+$",
        "Attribute {path} must be a plain file name, got {value}.",
    );
    Schema::new(0)
        .attr(
            "name",
            Attr::string().required().requires_replace().validate(name),
        )
        .attr("text", Attr::string().required())
        .attr("id", Attr::string().computed().use_state_for_unknown())
}

struct Note(Option<Arc<Dir>>);

impl Note {
    fn file(&self, v: &Value) -> Result<PathBuf> {
        Ok(configured(&self.0)?
            .0
            .join(str_attr(v, "name").unwrap_or_default()))
    }
    fn write(&self, planned: &Value) -> Result<Applied> {
        let file = self.file(planned)?;
        let text = str_attr(planned, "text").unwrap_or_default();
        std::fs::write(&file, text).map_err(|e| {
            Diagnostics::error("Cannot write the note", format!("{}: {e}", file.display()))
        })?;
        Ok(Applied::new(with_attr(
            planned,
            "id",
            values::string(file.display().to_string()),
        )))
    }
}

#[async_trait]
impl Resource for Note {
    async fn create(&self, _: &Ctx, planned: &Value, _: &Value) -> Result<Applied> {
        self.write(planned)
    }
    async fn read(&self, _: &Ctx, state: &Value, _: &[u8]) -> Result<Option<Applied>> {
        match std::fs::read_to_string(self.file(state)?) {
            Ok(text) => Ok(Some(Applied::new(with_attr(
                state,
                "text",
                values::string(text),
            )))),
            Err(_) => Ok(None),
        }
    }
    async fn update(&self, _: &Ctx, _: &Value, planned: &Value, _: &Value) -> Result<Applied> {
        self.write(planned)
    }
    async fn delete(&self, _: &Ctx, prior: &Value) -> Result<()> {
        let file = self.file(prior)?;
        std::fs::remove_file(&file).map_err(|e| {
            Diagnostics::error("Cannot delete the note", format!("{}: {e}", file.display()))
        })
    }
}
