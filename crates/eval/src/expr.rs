//! The evaluator: every HCL expression form over terrane values.
//!
//! Errors follow HCL's way: a failing sub-expression adds a diagnostic at
//! its own source range and evaluates to an unknown `dynamic` value, so the
//! rest of the expression is still checked without a cascade of follow-on
//! errors. Unknown inputs give unknown results of the right type; sensitive
//! marks on inputs mark results.

use crate::func::{self, FuncCtx, FuncError};
use crate::marks::{mark, unknown_not_null};
use crate::scope::Scope;
use std::collections::BTreeMap;
use std::ops::Range;
use terrane_config::{DiagId, Diagnostic, LineIndex, SourceRange};
use terrane_hcl::expr::{BinaryOperator, Expression, FuncCall, ObjectKey, UnaryOperator};
use terrane_hcl::Span;
use terrane_value::convert::{convert, unify};
use terrane_value::{Kind, Number, Type, Value};

/// Calls a provider-defined function (`provider::NAME::FUNC`): provider
/// local name, function name, arguments.
pub type ProviderFunctions<'a> = dyn Fn(&str, &str, Vec<Value>) -> Result<Value, FuncError> + 'a;

/// One evaluation: scope, function context and the diagnostics found.
pub struct Evaluator<'a> {
    scope: &'a dyn Scope,
    ctx: &'a FuncCtx<'a>,
    index: &'a LineIndex,
    /// A piece of a file being evaluated (a heredoc re-read from source).
    index_override: Option<LineIndex>,
    provider_functions: Option<&'a ProviderFunctions<'a>>,
    /// Names bound by `for` expressions and template `for` directives,
    /// innermost last.
    pub(crate) locals: Vec<(String, Value)>,
    pub(crate) diags: Vec<Diagnostic>,
}

impl<'a> Evaluator<'a> {
    pub fn new(scope: &'a dyn Scope, ctx: &'a FuncCtx<'a>, index: &'a LineIndex) -> Evaluator<'a> {
        Evaluator {
            scope,
            ctx,
            index,
            index_override: None,
            provider_functions: None,
            locals: Vec::new(),
            diags: Vec::new(),
        }
    }

    /// Provider-defined functions for `provider::NAME::FUNC(...)` calls.
    pub fn with_provider_functions(mut self, f: &'a ProviderFunctions<'a>) -> Evaluator<'a> {
        self.provider_functions = Some(f);
        self
    }

    /// The diagnostics found so far.
    pub fn into_diagnostics(self) -> Vec<Diagnostic> {
        self.diags
    }

    /// Takes the diagnostics found so far, leaving none.
    pub fn take_diagnostics(&mut self) -> Vec<Diagnostic> {
        std::mem::take(&mut self.diags)
    }

    /// Runs `f` with `name` bound to `value` (a `dynamic` block iterator,
    /// a template variable), innermost.
    pub fn with_local<R>(&mut self, name: &str, value: Value, f: impl FnOnce(&mut Self) -> R) -> R {
        self.locals.push((name.to_string(), value));
        let r = f(self);
        self.locals.pop();
        r
    }

    /// Evaluates `e`, which lives in the file of `index` (a body evaluated
    /// with one evaluator may span files only through this).
    pub fn eval_in(&mut self, index: &'a LineIndex, e: &Expression) -> Value {
        let saved = std::mem::replace(&mut self.index, index);
        let v = self.eval(e);
        self.index = saved;
        v
    }

    pub(crate) fn range(&self, span: Option<Range<usize>>) -> Option<SourceRange> {
        match &self.index_override {
            Some(i) => i.range(span),
            None => self.index.range(span),
        }
    }

    /// The index spans currently refer to.
    pub(crate) fn current_index(&self) -> LineIndex {
        self.index_override
            .clone()
            .unwrap_or_else(|| self.index.clone())
    }

    /// Runs `f` with spans referring to `index`.
    pub(crate) fn with_index<R>(&mut self, index: &LineIndex, f: impl FnOnce(&mut Self) -> R) -> R {
        let saved = self.index_override.replace(index.clone());
        let r = f(self);
        self.index_override = saved;
        r
    }

    /// Records an error at `span` and returns the placeholder result.
    pub(crate) fn error(
        &mut self,
        span: Option<Range<usize>>,
        summary: &str,
        detail: impl Into<String>,
    ) -> Value {
        let range = self.range(span);
        self.diags.push(Diagnostic::error(summary, detail, range));
        Value::unknown(Type::Dynamic)
    }

    /// Evaluates `e`.
    pub fn eval(&mut self, e: &Expression) -> Value {
        match e {
            Expression::Null(_) => Value::null(Type::Dynamic),
            Expression::Bool(b) => Value::bool(*b.value()),
            Expression::Number(n) => {
                let text = n
                    .as_repr()
                    .map(|r| r.to_string())
                    .unwrap_or_else(|| n.value().to_string());
                match Number::parse(text.trim()) {
                    Ok(n) => Value::number(n),
                    Err(_) => self.error(
                        e.span(),
                        "Invalid number literal",
                        format!("{text:?} is not a valid number."),
                    ),
                }
            }
            Expression::String(s) => Value::string(s.value().as_str()),
            Expression::Array(items) => {
                let vals: Vec<Value> = items.iter().map(|i| self.eval(i)).collect();
                Value::tuple(vals)
            }
            Expression::Object(o) => self.object(o),
            Expression::StringTemplate(t) => self.string_template(t),
            Expression::HeredocTemplate(h) => {
                let index = self.current_index();
                self.heredoc(h, &index)
            }
            Expression::Parenthesis(p) => self.eval(p.inner()),
            Expression::Variable(v) => self.variable(v.as_str(), e.span()),
            Expression::Conditional(c) => {
                self.conditional(&c.cond_expr, &c.true_expr, &c.false_expr)
            }
            Expression::FuncCall(f) => self.func_call(f, e.span()),
            Expression::Traversal(t) => self.traversal(t),
            Expression::UnaryOp(u) => self.unary(*u.operator.value(), &u.expr, e.span()),
            Expression::BinaryOp(b) => {
                self.binary(&b.lhs_expr, *b.operator.value(), &b.rhs_expr, e.span())
            }
            Expression::ForExpr(f) => self.for_expr(f),
        }
    }

    /// A name bound by a `for`, else a root name of the scope.
    pub(crate) fn variable(&mut self, name: &str, span: Option<Range<usize>>) -> Value {
        if let Some((_, v)) = self.locals.iter().rev().find(|(n, _)| n == name) {
            return v.clone();
        }
        match self.scope.root(name) {
            Some(v) => v,
            None => self.error(
                span,
                "Unknown variable",
                format!("There is no variable named {name:?}."),
            ),
        }
    }

    pub(crate) fn is_local(&self, name: &str) -> bool {
        self.locals.iter().any(|(n, _)| n == name)
    }

    pub(crate) fn scope(&self) -> &'a dyn Scope {
        self.scope
    }

    fn object(&mut self, o: &terrane_hcl::expr::Object) -> Value {
        let mut attrs = BTreeMap::new();
        let mut sensitive = terrane_value::Marks::NONE;
        let mut unknown_key = false;
        for (k, v) in o.iter() {
            let key = match k {
                ObjectKey::Ident(i) => Some(i.as_str().to_string()),
                ObjectKey::Expression(ke) => {
                    let kv = self.eval(ke);
                    sensitive |= kv.deep_marks();
                    // Terraform points a null key at the value expression.
                    let at = if kv.is_null() {
                        v.expr().span()
                    } else {
                        ke.span()
                    };
                    match self.object_key(&kv, at) {
                        Ok(Some(s)) => Some(s),
                        Ok(None) => {
                            unknown_key = true;
                            None
                        }
                        Err(()) => None,
                    }
                }
            };
            let val = self.eval(v.expr());
            if let Some(key) = key {
                attrs.insert(key, val);
            }
        }
        if unknown_key {
            return mark(Value::unknown(Type::Dynamic), sensitive);
        }
        mark(Value::object(attrs), sensitive)
    }

    /// An object key: `Ok(None)` when unknown.
    fn object_key(&mut self, kv: &Value, span: Option<Range<usize>>) -> Result<Option<String>, ()> {
        if kv.is_null() {
            self.error(
                span,
                "Null value as key",
                "Can't use a null value as a key.",
            );
            return Err(());
        }
        if !kv.is_known() {
            return Ok(None);
        }
        match convert(&kv.unmark_deep(), &Type::String) {
            Ok(s) => Ok(s.as_str().map(str::to_string)),
            Err(e) => {
                self.error(
                    span,
                    "Incorrect key type",
                    format!("Can't use this value as a key: {e}."),
                );
                Err(())
            }
        }
    }

    fn conditional(&mut self, cond: &Expression, t: &Expression, f: &Expression) -> Value {
        let c = self.eval(cond);
        // Only the chosen branch's errors count, so `x != null ? x.a : ""`
        // works; both branches are evaluated for the result type.
        let outer = std::mem::take(&mut self.diags);
        let tv = self.eval(t);
        let tdiags = std::mem::take(&mut self.diags);
        let fv = self.eval(f);
        let fdiags = std::mem::replace(&mut self.diags, outer);
        let Some(ty) = unify(&[tv.ty().clone(), fv.ty().clone()]) else {
            self.diags.extend(tdiags);
            self.diags.extend(fdiags);
            let detail = format!(
                "The true and false result expressions must have consistent types. The 'true' value is {}, but the 'false' value is {}.",
                describe_type(tv.ty()),
                describe_type(fv.ty())
            );
            return self.error(
                t.span().zip(f.span()).map(|(a, b)| a.start..b.end),
                "Inconsistent conditional result types",
                detail,
            );
        };
        let c_sens = c.marks();
        if c.is_null() {
            return self.error(
                cond.span(),
                "Null condition",
                "The condition value is null. Conditions must either be true or false.",
            );
        }
        let c = match convert(&c, &Type::Bool) {
            Ok(c) => c,
            Err(_) => {
                return self.error(
                    cond.span(),
                    "Incorrect condition type",
                    "The condition expression must be of type bool.",
                );
            }
        };
        let conv_branch = |me: &mut Self, v: Value, e: &Expression| -> Value {
            match convert(&v, &ty) {
                Ok(v) => v,
                Err(err) => me.error(
                    e.span(),
                    "Inconsistent conditional result types",
                    format!(
                        "The result value can't be converted to the common result type: {err}."
                    ),
                ),
            }
        };
        match c.as_bool() {
            None => {
                self.diags.extend(tdiags);
                self.diags.extend(fdiags);
                mark(Value::unknown(ty), c_sens)
            }
            Some(true) => {
                self.diags.extend(tdiags);
                mark(conv_branch(self, tv, t), c_sens)
            }
            Some(false) => {
                self.diags.extend(fdiags);
                mark(conv_branch(self, fv, f), c_sens)
            }
        }
    }

    fn unary(&mut self, op: UnaryOperator, e: &Expression, span: Option<Range<usize>>) -> Value {
        let v = self.eval(e);
        let sens = v.deep_marks();
        let (want, what) = match op {
            UnaryOperator::Neg => (Type::Number, "a number is required"),
            UnaryOperator::Not => (Type::Bool, "a bool is required"),
        };
        let v = match convert(&v.unmark_deep(), &want) {
            Ok(v) => v,
            Err(_) => {
                return self.error(
                    e.span(),
                    "Invalid operand",
                    format!("Unsuitable value for unary operand: {what}."),
                )
            }
        };
        if v.is_null() {
            return self.error(
                span,
                "Operation failed",
                "Error during operation: argument must not be null.",
            );
        }
        let out = match (op, v.kind()) {
            (_, Kind::Unknown(_)) => unknown_not_null(want),
            (UnaryOperator::Neg, Kind::Number(n)) => Value::number(crate::arith::neg(n)),
            (UnaryOperator::Not, Kind::Bool(b)) => Value::bool(!b),
            _ => Value::unknown(want),
        };
        mark(out, sens)
    }

    fn binary(
        &mut self,
        l: &Expression,
        op: BinaryOperator,
        r: &Expression,
        span: Option<Range<usize>>,
    ) -> Value {
        let lv = self.eval(l);
        // `false && x` and `true || x` decide without the right operand:
        // its errors are dropped (so `x != null && x.a` works).
        let decisive = match op {
            BinaryOperator::And => Some(false),
            BinaryOperator::Or => Some(true),
            _ => None,
        };
        if let Some(d) = decisive {
            if convert(&lv.unmark_deep(), &Type::Bool)
                .ok()
                .and_then(|b| b.as_bool())
                == Some(d)
            {
                let outer = std::mem::take(&mut self.diags);
                let _ = self.eval(r);
                self.diags = outer;
                return mark(Value::bool(d), lv.deep_marks());
            }
        }
        let rv = self.eval(r);
        match crate::ops::binary(op, lv, rv, l.span(), r.span(), span) {
            Ok(v) => v,
            Err(errs) => {
                for e in errs {
                    self.error(e.span, e.summary, e.detail);
                }
                Value::unknown(Type::Dynamic)
            }
        }
    }

    fn func_call(&mut self, f: &FuncCall, span: Option<Range<usize>>) -> Value {
        let name = f.name.name.as_str();
        let arg_exprs: Vec<&Expression> = f.args.iter().collect();
        if f.name.namespace.is_empty() && (name == "try" || name == "can") {
            return self.try_can(name, &arg_exprs, span);
        }
        // `convert`'s second argument is a type constraint, not a value:
        // it is read as one below, never evaluated.
        let converting = f.name.namespace.is_empty() && name == "convert";
        let mut args: Vec<Value> = arg_exprs
            .iter()
            .enumerate()
            .map(|(i, a)| match i {
                1.. if converting => Value::null(Type::Dynamic),
                _ => self.eval(a),
            })
            .collect();
        // A quoted string argument is reported at its content, as HCL's
        // template ranges exclude the quotes.
        let mut spans: Vec<Option<Range<usize>>> = arg_exprs
            .iter()
            .map(|a| match a {
                Expression::String(_) | Expression::StringTemplate(_) => a.span().map(|r| {
                    if r.end > r.start + 1 {
                        r.start + 1..r.end - 1
                    } else {
                        r
                    }
                }),
                _ => a.span(),
            })
            .collect();
        if f.args.expand_final() {
            let last = args.pop().unwrap_or_else(|| Value::null(Type::Dynamic));
            let last_span = spans.pop().flatten();
            if last.is_null() {
                return self.error(
                    last_span,
                    "Invalid expanding argument value",
                    "The expanding argument (indicated by ...) must not be null.",
                );
            }
            if !last.is_known() {
                return Value::unknown(Type::Dynamic);
            }
            let sens = last.marks();
            match last.elements() {
                Some(es) if matches!(last.ty(), Type::List(_) | Type::Set(_) | Type::Tuple(_)) => {
                    for e in es.iter() {
                        args.push(mark(e.clone(), sens));
                        spans.push(last_span.clone());
                    }
                }
                _ => {
                    return self.error(
                        last_span,
                        "Invalid expanding argument value",
                        "The expanding argument (indicated by ...) must be of a tuple, list, or set type.",
                    )
                }
            }
        }
        let result = if f.name.namespace.is_empty() {
            if !func::available(name, self.ctx) {
                return self.error(
                    f.name.name.span(),
                    "Call to unknown function",
                    format!("There is no function named {name:?}."),
                );
            }
            match (converting, args.len(), f.args.expand_final()) {
                (true, 2, false) => match self.convert_call(args.swap_remove(0), arg_exprs[1]) {
                    Some(r) => r,
                    None => return Value::unknown(Type::Dynamic),
                },
                _ => func::call_with_id(name, args, self.ctx),
            }
        } else {
            let ns: Vec<&str> = f.name.namespace.iter().map(|i| i.as_str()).collect();
            match (ns.as_slice(), self.provider_functions) {
                (["provider", provider], Some(pf)) => {
                    pf(provider, name, args).map_err(|e| (None, e))
                }
                _ => {
                    let full = format!("{}::{name}", ns.join("::"));
                    return self.error(
                        span,
                        "Call to unknown function",
                        format!("There is no function named {full:?}."),
                    );
                }
            }
        };
        match result {
            Ok(v) => v,
            Err((id, err)) => {
                // A missing argument is reported at the closing parenthesis.
                let close = span
                    .clone()
                    .filter(|_| id == Some(DiagId::NotEnoughFunctionArguments))
                    .map(|r| r.end.saturating_sub(1)..r.end);
                // The call as a whole failing is reported at its name and
                // opening parenthesis (HCL's start range of the call).
                let full_len =
                    f.name.namespace.iter().map(|n| n.len() + 2).sum::<usize>() + f.name.name.len();
                let start = span
                    .clone()
                    .filter(|_| err.arg.is_none())
                    .map(|r| r.start..(r.start + full_len + 1).min(r.end));
                let at = close
                    .or_else(|| err.arg.and_then(|i| spans.get(i).cloned().flatten()))
                    .or(start)
                    .or(span);
                let range = self.range(at);
                let mut d = Diagnostic::error(err.summary, err.detail, range);
                d.id = id;
                self.diags.push(d);
                Value::unknown(Type::Dynamic)
            }
        }
    }

    /// `convert(value, type)`: `value` converted to the type constraint
    /// written as the second argument (with `optional` attributes and
    /// their defaults, as for input variables). Marks are set aside and
    /// put back on the result. `None` when the type expression is invalid
    /// (its diagnostic is recorded).
    fn convert_call(
        &mut self,
        value: Value,
        ty: &Expression,
    ) -> Option<Result<Value, (Option<DiagId>, FuncError)>> {
        let index = self.current_index();
        let tc = match terrane_config::parse_type(ty, &index) {
            Ok(tc) => tc,
            Err(d) => {
                self.diags.push(d);
                return None;
            }
        };
        let marks = value.deep_marks();
        let plain = value.unmark_deep();
        let fail = |msg: String| {
            Err((
                None,
                FuncError {
                    arg: Some(0),
                    summary: "Invalid function argument".into(),
                    detail: format!("Invalid value for \"value\" parameter: {msg}."),
                },
            ))
        };
        if !terrane_value::convert::type_convertible(plain.ty(), &tc.ty) {
            return Some(fail(terrane_config::type_mismatch_message(
                plain.ty(),
                &tc.ty,
            )));
        }
        Some(
            match crate::convert_to_constraint(&plain, &tc, self.ctx, &index) {
                Ok(v) => Ok(v.with_marks(marks)),
                Err(crate::ConstraintError::Convert(e)) => fail(e.message),
                Err(e) => fail(e.to_string()),
            },
        )
    }

    /// `try(...)` and `can(...)`: arguments are evaluated one by one and
    /// their errors caught; an argument that is not yet wholly known makes
    /// the result unknown.
    fn try_can(&mut self, name: &str, args: &[&Expression], span: Option<Range<usize>>) -> Value {
        if name == "can" && args.len() != 1 {
            return self.error(
                span,
                "Invalid function call",
                "Function \"can\" expects exactly one argument.",
            );
        }
        if args.is_empty() {
            return self.error(
                span,
                "Invalid function call",
                "Function \"try\" requires at least one argument.",
            );
        }
        let outer = std::mem::take(&mut self.diags);
        let mut failures = Vec::new();
        let mut result = None;
        for a in args {
            let v = self.eval(a);
            let d = std::mem::take(&mut self.diags);
            if d.is_empty() {
                result = Some(v);
                break;
            }
            failures.extend(d);
        }
        self.diags = outer;
        match (name, result) {
            ("can", Some(v)) if !v.is_wholly_known() => unknown_not_null(Type::Bool),
            ("can", Some(_)) => Value::bool(true),
            ("can", None) => Value::bool(false),
            (_, Some(v)) if !v.is_wholly_known() => Value::unknown(Type::Dynamic),
            (_, Some(v)) => v,
            (_, None) => {
                let list: Vec<String> = failures
                    .iter()
                    .map(|d| format!("- {}", d.detail.trim_end_matches('.')))
                    .collect();
                self.error(
                    span,
                    "Error in function call",
                    format!("Call to function \"try\" failed: no expression succeeded:\n{}\n\nAt least one expression must produce a successful result.", list.join("\n")),
                )
            }
        }
    }
}

/// How Terraform names a type in messages: `number`, `list of string`,
/// `object`, `tuple`.
pub(crate) fn describe_type(t: &Type) -> String {
    t.friendly_name()
}
