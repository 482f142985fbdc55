//! Provider-defined functions (`provider::NAME::FUNCTION(...)` in
//! configuration): typed parameters, an optional variadic parameter, a
//! return type, and a call that returns a value or an error naming the
//! argument at fault.

use terrane_value::{Type, Value};

/// One parameter.
#[derive(Clone, Debug)]
pub struct Param {
    /// The parameter name, shown in errors and documentation.
    pub name: String,
    /// The parameter type; arguments are converted to it.
    pub ty: Type,
    /// What the parameter means.
    pub description: String,
    /// Whether `null` may be passed.
    pub allow_null: bool,
    /// Whether an unknown value may be passed.
    pub allow_unknown: bool,
}

impl Param {
    /// A parameter that accepts neither null nor unknown values.
    pub fn new(name: &str, ty: Type) -> Param {
        Param {
            name: name.into(),
            ty,
            description: String::new(),
            allow_null: false,
            allow_unknown: false,
        }
    }
    /// Sets the description.
    pub fn describe(mut self, text: &str) -> Param {
        self.description = text.into();
        self
    }
}

/// Why a call failed; `argument` is the index of the argument at fault.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionError {
    /// The message shown to the user.
    pub text: String,
    /// The index of the argument at fault, if one is.
    pub argument: Option<i64>,
}

impl FunctionError {
    /// An error blamed on argument `index`.
    pub fn argument(index: i64, text: impl Into<String>) -> FunctionError {
        FunctionError {
            text: text.into(),
            argument: Some(index),
        }
    }
    /// An error blamed on no argument in particular.
    pub fn general(text: impl Into<String>) -> FunctionError {
        FunctionError {
            text: text.into(),
            argument: None,
        }
    }
}

/// A provider-defined function.
pub trait Function: Send + Sync {
    /// The function name, as in `provider::NAME::this_name(...)`.
    fn name(&self) -> &str;
    /// A one-line summary.
    fn summary(&self) -> &str {
        ""
    }
    /// A longer description.
    fn description(&self) -> &str {
        ""
    }
    /// The positional parameters.
    fn params(&self) -> Vec<Param>;
    /// The parameter repeated for any further arguments, if any.
    fn variadic(&self) -> Option<Param> {
        None
    }
    /// The type of the result.
    fn return_type(&self) -> Type;
    /// Runs the function; arguments arrive converted to the parameter types.
    fn call(&self, args: &[Value]) -> Result<Value, FunctionError>;
}
