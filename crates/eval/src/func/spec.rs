//! The declarative function model every built-in is described with, and the
//! one generic `invoke` that applies it: arity, argument conversion to the
//! parameter types, null rejection, unknown short-circuiting (with the
//! result refined as Terraform refines it) and sensitive-mark propagation.
//!
//! A function body therefore sees converted, unmarked, non-null and wholly
//! known arguments unless its parameters asked for more.

use super::{FuncCtx, FuncError};
use terrane_config::DiagId;
use terrane_value::convert::{convert, type_convertible};
use terrane_value::{Number, Refinements, Type, Value};

/// A failure reported by a function body or a return-type function; the
/// machinery turns it into a [`FuncError`] with the function's and the
/// parameter's names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Fail {
    /// The argument at this index is at fault.
    Arg(usize, String),
    /// The call as a whole failed.
    Call(String),
}

pub(crate) type Res<T> = Result<T, Fail>;

pub(crate) fn arg_err<T>(i: usize, msg: impl Into<String>) -> Res<T> {
    Err(Fail::Arg(i, msg.into()))
}

pub(crate) fn call_err<T>(msg: impl Into<String>) -> Res<T> {
    Err(Fail::Call(msg.into()))
}

/// One parameter: its name (used in messages), the type arguments are
/// converted to, and what it accepts beyond plain known values.
#[derive(Clone)]
pub(crate) struct Param {
    pub name: &'static str,
    pub ty: Type,
    pub allow_null: bool,
    pub allow_unknown: bool,
    pub allow_dynamic: bool,
    pub allow_marked: bool,
}

impl Param {
    pub fn new(name: &'static str, ty: Type) -> Param {
        Param {
            name,
            ty,
            allow_null: false,
            allow_unknown: false,
            allow_dynamic: false,
            allow_marked: false,
        }
    }
    pub fn null(mut self) -> Param {
        self.allow_null = true;
        self
    }
    pub fn unknown(mut self) -> Param {
        self.allow_unknown = true;
        self
    }
    pub fn dynamic(mut self) -> Param {
        self.allow_dynamic = true;
        self
    }
    pub fn marked(mut self) -> Param {
        self.allow_marked = true;
        self
    }
}

/// Shorthands for the common parameter types.
pub(crate) fn p_str(name: &'static str) -> Param {
    Param::new(name, Type::String)
}
pub(crate) fn p_num(name: &'static str) -> Param {
    Param::new(name, Type::Number)
}
pub(crate) fn p_any(name: &'static str) -> Param {
    Param::new(name, Type::Dynamic)
}

pub(crate) type RetFn = fn(&[Value]) -> Res<Type>;
pub(crate) type ImplFn = fn(&[Value], &Type, &FuncCtx) -> Res<Value>;

/// How the result type is decided.
pub(crate) enum Ret {
    Fixed(Type),
    /// Computed from the converted arguments (which may be unknown or null
    /// where the parameters allow it).
    From(RetFn),
}

/// A function's description.
pub(crate) struct Func {
    pub params: Vec<Param>,
    pub variadic: Option<Param>,
    pub ret: Ret,
    /// Unknown results are refined as not null (true for almost all).
    pub not_null: bool,
    /// Impure functions give unknown results during validation.
    pub impure: bool,
    pub imp: ImplFn,
}

impl Func {
    pub fn new(params: Vec<Param>, ret: Type, imp: ImplFn) -> Func {
        Func {
            params,
            variadic: None,
            ret: Ret::Fixed(ret),
            not_null: true,
            impure: false,
            imp,
        }
    }
    pub fn ret_fn(params: Vec<Param>, ret: RetFn, imp: ImplFn) -> Func {
        Func {
            params,
            variadic: None,
            ret: Ret::From(ret),
            not_null: true,
            impure: false,
            imp,
        }
    }
    pub fn variadic(mut self, p: Param) -> Func {
        self.variadic = Some(p);
        self
    }
    pub fn may_be_null(mut self) -> Func {
        self.not_null = false;
        self
    }
    pub fn impure(mut self) -> Func {
        self.impure = true;
        self
    }

    fn param(&self, i: usize) -> Option<&Param> {
        self.params.get(i).or(self.variadic.as_ref())
    }
}

/// Terraform's message for a value whose type has no conversion at all.
pub(crate) fn mismatch(want: &Type, have: &Type) -> String {
    format!(
        "{} required, but have {}",
        want.friendly_name(),
        have.friendly_name()
    )
}

/// Converts `v` to `want` with Terraform's wording on failure.
pub(crate) fn convert_msg(v: &Value, want: &Type) -> Result<Value, String> {
    if !type_convertible(v.ty(), want) {
        return Err(mismatch(want, v.ty()));
    }
    convert(v, want).map_err(|e| e.to_string())
}

/// Checks the number of arguments of a call of `name`, described by `f`:
/// the error carries the id code places it by (the closing parenthesis
/// for a missing argument, the first extra argument otherwise).
pub(crate) fn arity(name: &str, f: &Func, given: usize) -> Result<(), (DiagId, FuncError)> {
    let min = f.params.len();
    if given < min {
        let at_least = if f.variadic.is_some() {
            "at least "
        } else {
            ""
        };
        return Err((
            DiagId::NotEnoughFunctionArguments,
            FuncError {
                arg: None,
                summary: "Not enough function arguments".into(),
                detail: format!(
                    "Function \"{name}\" expects {at_least}{min} argument(s). Missing value for \"{}\".",
                    f.params[given].name
                ),
            },
        ));
    }
    if f.variadic.is_none() && given > min {
        return Err((
            DiagId::TooManyFunctionArguments,
            FuncError {
                arg: Some(min),
                summary: "Too many function arguments".into(),
                detail: format!("Function \"{name}\" expects only {min} argument(s)."),
            },
        ));
    }
    Ok(())
}

/// Runs function `name` described by `f` on `args`.
pub(crate) fn invoke(
    name: &str,
    f: &Func,
    args: Vec<Value>,
    ctx: &FuncCtx,
) -> Result<Value, FuncError> {
    let err = |fail: Fail| to_func_error(name, f, fail);
    arity(name, f, args.len()).map_err(|(_, e)| e)?;
    let mut conv = Vec::with_capacity(args.len());
    for (i, a) in args.iter().enumerate() {
        let p = f.param(i).expect("arity checked");
        conv.push(convert_msg(a, &p.ty).map_err(|m| err(Fail::Arg(i, m)))?);
    }
    let mut marks = terrane_value::Marks::NONE;
    let mut dynamic = false;
    let mut unknown = false;
    for (i, a) in conv.iter_mut().enumerate() {
        let p = f.param(i).expect("arity checked");
        if !p.allow_marked && !a.deep_marks().is_empty() {
            marks |= a.deep_marks();
            *a = a.unmark_deep();
        }
        if a.is_null() && !p.allow_null {
            return Err(err(Fail::Arg(i, "argument must not be null".into())));
        }
        if a.ty().is_dynamic() && !a.is_null() && !p.allow_dynamic {
            dynamic = true;
        }
        if !p.allow_unknown && !a.is_wholly_known() {
            unknown = true;
        }
    }
    let mark = |v: Value| v.with_marks(marks);
    let ret = if dynamic {
        Type::Dynamic
    } else {
        match &f.ret {
            Ret::Fixed(t) => t.clone(),
            Ret::From(rf) => rf(&conv).map_err(err)?,
        }
    };
    if unknown || (f.impure && ctx.pure_only) {
        let r = if f.not_null {
            Refinements::not_null()
        } else {
            Refinements::default()
        };
        return Ok(mark(Value::unknown_refined(ret, r)));
    }
    let out = (f.imp)(&conv, &ret, ctx).map_err(err)?;
    Ok(mark(out))
}

fn to_func_error(name: &str, f: &Func, fail: Fail) -> FuncError {
    match fail {
        Fail::Arg(i, msg) => {
            let pname = f.param(i).map(|p| p.name).unwrap_or("?");
            FuncError {
                arg: Some(i),
                summary: "Invalid function argument".into(),
                detail: format!("Invalid value for \"{pname}\" parameter: {msg}."),
            }
        }
        Fail::Call(msg) => FuncError {
            arg: None,
            summary: "Error in function call".into(),
            detail: format!("Call to function \"{name}\" failed: {msg}."),
        },
    }
}

// ---- small accessors for function bodies ------------------------------

/// The text of a known string argument (guaranteed by the machinery).
pub(crate) fn s(v: &Value) -> &str {
    v.as_str().unwrap_or_default()
}

pub(crate) fn n(v: &Value) -> Number {
    v.as_number().cloned().unwrap_or_else(Number::zero)
}

/// Elements of a known list, tuple or set argument.
pub(crate) fn elems(v: &Value) -> &[Value] {
    v.elements().unwrap_or(&[])
}

/// A whole-number argument as i64, with Terraform's complaint otherwise.
pub(crate) fn int_arg(args: &[Value], i: usize) -> Res<i64> {
    let num = n(&args[i]);
    if !num.is_finite() {
        return arg_err(i, "value must be a whole number");
    }
    match num.to_i64() {
        Some(x) => Ok(x),
        None if num.is_integer() => arg_err(i, "value is too large"),
        None => arg_err(i, "value must be a whole number"),
    }
}

/// An unknown of type `ty` refined not null.
pub(crate) fn unknown_nn(ty: Type) -> Value {
    Value::unknown_refined(ty, Refinements::not_null())
}
