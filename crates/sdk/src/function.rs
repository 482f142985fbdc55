//! Provider-defined functions (`provider::NAME::FUNCTION(...)` in
//! configuration): typed parameters, an optional variadic parameter, a
//! return type, and a call that returns a value or an error naming the
//! argument at fault.

use terrane_value::{Type, Value};

/// One parameter.
#[derive(Clone, Debug)]
pub struct Param {
    pub name: String,
    pub ty: Type,
    pub description: String,
    pub allow_null: bool,
    pub allow_unknown: bool,
}

impl Param {
    pub fn new(name: &str, ty: Type) -> Param {
        Param {
            name: name.into(),
            ty,
            description: String::new(),
            allow_null: false,
            allow_unknown: false,
        }
    }
    pub fn describe(mut self, text: &str) -> Param {
        self.description = text.into();
        self
    }
}

/// Why a call failed; `argument` is the index of the argument at fault.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionError {
    pub text: String,
    pub argument: Option<i64>,
}

impl FunctionError {
    pub fn argument(index: i64, text: impl Into<String>) -> FunctionError {
        FunctionError {
            text: text.into(),
            argument: Some(index),
        }
    }
    pub fn general(text: impl Into<String>) -> FunctionError {
        FunctionError {
            text: text.into(),
            argument: None,
        }
    }
}

/// A provider-defined function.
pub trait Function: Send + Sync {
    fn name(&self) -> &str;
    fn summary(&self) -> &str {
        ""
    }
    fn description(&self) -> &str {
        ""
    }
    fn params(&self) -> Vec<Param>;
    fn variadic(&self) -> Option<Param> {
        None
    }
    fn return_type(&self) -> Type;
    /// Runs the function; arguments arrive converted to the parameter types.
    fn call(&self, args: &[Value]) -> Result<Value, FunctionError>;
}
