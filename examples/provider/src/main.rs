//! A complete provider in under 100 lines: `greeting_message` turns a name
//! into a greeting. Copy this file to start a provider with terrane's SDK.
//! Build it, point Terraform at it with `dev_overrides` for
//! `registry.terraform.io/terrane/greeting`, and write:
//!
//! ```hcl
//! resource "greeting_message" "hi" {
//!   name = "Ada"
//! }
//! ```

use std::sync::Arc;
use terrane_sdk::validate::LengthBetween;
use terrane_sdk::{
    async_trait, Applied, Attr, Ctx, Known, Model, Provider, Resource, ResourceType, Result,
    Schema, SimpleResource, Value,
};

struct Greeting;

impl Provider for Greeting {
    type Data = ();
    fn type_name(&self) -> &str {
        "greeting"
    }
    fn version(&self) -> &str {
        env!("CARGO_PKG_VERSION")
    }
    fn resources(&self) -> Vec<Arc<dyn ResourceType<()>>> {
        vec![Arc::new(SimpleResource {
            name: "greeting_message",
            schema,
            resource: Message,
        })]
    }
}

/// Arguments, computed attributes and their behaviour, in one place.
fn schema() -> Schema {
    Schema::new(0)
        .describe("A greeting for someone.")
        .attr(
            "name",
            Attr::string()
                .required()
                .validate(LengthBetween(1, 64))
                .describe("Who to greet."),
        )
        .attr(
            "punctuation",
            Attr::string()
                .default(Value::string("!"))
                .describe("How to end it."),
        )
        .attr(
            "language",
            Attr::string()
                .default(Value::string("en"))
                .requires_replace(),
        )
        .attr("text", Attr::string().computed().describe("The greeting."))
        .attr("id", Attr::string().computed().use_state_for_unknown())
}

#[derive(Clone)]
struct Message;

/// The resource's attributes as a typed struct (`#[derive(Model)]`).
#[derive(Model)]
struct State {
    name: String,
    punctuation: String,
    language: String,
    text: Known<String>,
    id: Known<String>,
}

fn greet(mut s: State) -> Value {
    let hello = match s.language.as_str() {
        "fr" => "Bonjour",
        "de" => "Hallo",
        _ => "Hello",
    };
    s.text = Known::Value(format!("{hello}, {}{}", s.name, s.punctuation));
    s.to_value()
}

#[async_trait]
impl Resource for Message {
    async fn create(&self, _ctx: &Ctx, planned: &Value, _config: &Value) -> Result<Applied> {
        let mut s = State::from_value(planned)?;
        s.id = Known::Value(format!("greeting-{}", s.name.to_lowercase()));
        Ok(Applied::new(greet(s)))
    }

    async fn read(&self, _ctx: &Ctx, state: &Value, _private: &[u8]) -> Result<Option<Applied>> {
        Ok(Some(Applied::new(state.clone())))
    }

    async fn update(
        &self,
        _ctx: &Ctx,
        _prior: &Value,
        planned: &Value,
        _config: &Value,
    ) -> Result<Applied> {
        Ok(Applied::new(greet(State::from_value(planned)?)))
    }

    async fn delete(&self, _ctx: &Ctx, _prior: &Value) -> Result<()> {
        Ok(())
    }
}

fn main() {
    terrane_sdk::serve("terrane", Greeting)
}
