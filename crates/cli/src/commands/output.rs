//! `output`: stored output values, as HCL, `-json` or `-raw`.

use crate::args::Args;
use crate::session::Ui;
use std::path::Path;
use terrane_render::{human, text};

pub fn output(ui: &Ui, dir: &Path, a: &Args) -> u8 {
    let s = match crate::session::read_state(ui, dir) {
        Ok(s) => s,
        Err(c) => return c,
    };
    if let Some(name) = a.positional.first() {
        let Some(o) = s.outputs.get(name) else {
            return ui.error("Output not found", "The output variable requested could not be found in the state file. If you recently added this to your configuration, be sure to run `terrane apply`, since the state won't be updated with new output variables until that command is run.");
        };
        if a.has("raw") {
            match &o.value {
                serde_json::Value::String(v) => print!("{v}"),
                serde_json::Value::Number(n) => print!("{n}"),
                serde_json::Value::Bool(b) => print!("{b}"),
                _ => return ui.error("Unsupported value for raw output", format!("The -raw option only supports strings, numbers, and boolean values, but output value {name:?} is not one of those.")),
            }
        } else if ui.json {
            println!("{}", o.value);
        } else if o.sensitive {
            println!("(sensitive value)");
        } else {
            println!("{}", text::hcl_value(&o.stored_value(), 0));
        }
        return 0;
    }
    if ui.json {
        let m: serde_json::Map<String, serde_json::Value> = s
            .outputs
            .iter()
            .map(|(k, o)| {
                (
                    k.clone(),
                    serde_json::json!({"sensitive": o.sensitive, "type": o.ty, "value": o.value}),
                )
            })
            .collect();
        println!("{}", serde_json::Value::Object(m));
    } else {
        print!(
            "{}",
            human::stored_outputs(&s, "<sensitive>", text::hcl_value)
        );
    }
    0
}
