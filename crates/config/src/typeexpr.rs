//! Type constraints as written in configuration: `string`, `number`,
//! `bool`, `any`, `list(T)`, `set(T)`, `map(T)`, `tuple([T, ...])`,
//! `object({name = T, ...})` with `optional(T)` and `optional(T, default)`
//! attributes. The result is a terrane [`Type`] with optional markers, plus
//! the default expressions by attribute path (evaluated later).

use crate::diag::{Diagnostic, LineIndex};
use std::collections::BTreeMap;
use std::sync::Arc;
use terrane_hcl::expr::{Expression, ObjectKey};
use terrane_hcl::Span;
use terrane_value::{ObjectType, Path, Type};

/// A parsed type constraint.
#[derive(Clone, Debug)]
pub struct TypeConstraint {
    pub ty: Type,
    /// Defaults of `optional(T, default)` attributes, by attribute path.
    pub defaults: BTreeMap<Path, Expression>,
}

/// Parses a type constraint expression; errors name the offending part.
pub fn parse_type(e: &Expression, index: &LineIndex) -> Result<TypeConstraint, Diagnostic> {
    let mut defaults = BTreeMap::new();
    let ty = walk(e, index, &Path::root(), &mut defaults, false)?;
    Ok(TypeConstraint { ty, defaults })
}

fn bad(e: &Expression, index: &LineIndex, detail: impl Into<String>) -> Diagnostic {
    Diagnostic::error("Invalid type specification", detail, index.range(e.span()))
}

fn walk(
    e: &Expression,
    index: &LineIndex,
    path: &Path,
    defaults: &mut BTreeMap<Path, Expression>,
    in_object: bool,
) -> Result<Type, Diagnostic> {
    match e {
        Expression::Variable(v) => match v.as_str() {
            "string" => Ok(Type::String),
            "number" => Ok(Type::Number),
            "bool" => Ok(Type::Bool),
            "any" => Ok(Type::Dynamic),
            "list" | "set" | "map" | "tuple" | "object" => Err(bad(e, index, format!("The {} type constructor requires one argument specifying the element type.", v.as_str()))),
            other => Err(bad(e, index, format!("The keyword {other:?} is not a valid type specification."))),
        },
        Expression::Parenthesis(p) => walk(p.inner(), index, path, defaults, in_object),
        Expression::FuncCall(f) => {
            let name = f.name.name.as_str();
            let args: Vec<&Expression> = f.args.iter().collect();
            let one = |what: &str| -> Result<&Expression, Diagnostic> {
                match args.as_slice() {
                    [a] => Ok(a),
                    _ => Err(bad(e, index, format!("The {what} type constructor requires one argument specifying the element type."))),
                }
            };
            match name {
                "list" => Ok(Type::list(walk(one("list")?, index, &path.index(0), defaults, false)?)),
                "set" => Ok(Type::set(walk(one("set")?, index, &path.index(0), defaults, false)?)),
                "map" => Ok(Type::map(walk(one("map")?, index, &path.key("*"), defaults, false)?)),
                "tuple" => {
                    let Expression::Array(items) = one("tuple")? else {
                        return Err(bad(e, index, "The tuple type constructor requires a list of element types."));
                    };
                    let mut ts = Vec::new();
                    for (i, t) in items.iter().enumerate() {
                        ts.push(walk(t, index, &path.index(i as i64), defaults, false)?);
                    }
                    Ok(Type::tuple(ts))
                }
                "object" => {
                    let Expression::Object(obj) = one("object")? else {
                        return Err(bad(e, index, "The object type constructor requires one argument specifying the attribute types as a map."));
                    };
                    let mut attrs = BTreeMap::new();
                    let mut optional = std::collections::BTreeSet::new();
                    for (k, v) in obj.iter() {
                        let key = match k {
                            ObjectKey::Ident(i) => i.as_str().to_string(),
                            ObjectKey::Expression(Expression::String(s)) => s.as_str().to_string(),
                            ObjectKey::Expression(other) => return Err(bad(other, index, "Object attribute names must be identifiers or strings.")),
                        };
                        let value = v.expr();
                        let (ty, opt) = match value {
                            Expression::FuncCall(of) if of.name.name.as_str() == "optional" => {
                                let oargs: Vec<&Expression> = of.args.iter().collect();
                                match oargs.as_slice() {
                                    [t] => (walk(t, index, &path.attr(key.clone()), defaults, true)?, true),
                                    [t, d] => {
                                        defaults.insert(path.attr(key.clone()), (*d).clone());
                                        (walk(t, index, &path.attr(key.clone()), defaults, true)?, true)
                                    }
                                    _ => return Err(bad(value, index, "The optional modifier takes a type and, optionally, a default value.")),
                                }
                            }
                            other => (walk(other, index, &path.attr(key.clone()), defaults, true)?, false),
                        };
                        if opt {
                            optional.insert(key.clone());
                        }
                        attrs.insert(key, ty);
                    }
                    Ok(Type::Object(Arc::new(ObjectType::with_optional(attrs, optional))))
                }
                "optional" if !in_object => Err(bad(e, index, "Optional attribute modifier is only for attribute types within an object type.")),
                other => Err(bad(e, index, format!("Keyword {other:?} is not a valid type constructor."))),
            }
        }
        _ => Err(bad(e, index, "A type specification is either a primitive type keyword (bool, number, string) or a complex type constructor call, like list(string).")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check(src: &str, want: Result<&str, &str>) {
        let text = format!("x = {src}\n");
        let body = terrane_hcl::parser::parse_body(&text).unwrap();
        let index = LineIndex::new("t.tf", &text);
        let attr = body.get_attribute("x").unwrap();
        match (parse_type(&attr.value, &index), want) {
            (Ok(t), Ok(w)) => assert_eq!(t.ty.to_string(), w, "{src}"),
            (Err(d), Err(w)) => assert!(d.to_string().contains(w), "{src}: {d}"),
            (got, want) => panic!("{src}: got {got:?}, want {want:?}"),
        }
    }

    #[test]
    fn type_constraints() {
        check("string", Ok("string"));
        check("any", Ok("any"));
        check("list(string)", Ok("list(string)"));
        check("map(set(number))", Ok("map(set(number))"));
        check("tuple([string, bool])", Ok("tuple([string, bool])"));
        check(
            "object({a = string, b = optional(number, 1), c = optional(list(bool))})",
            Ok("object({a=string, b=optional(number), c=optional(list(bool))})"),
        );
        check(
            "list(object({name = string, port = optional(number, 80)}))",
            Ok("list(object({name=string, port=optional(number)}))"),
        );
        check("strin", Err("t.tf:1:5: Error: Invalid type specification: The keyword \"strin\" is not a valid type specification."));
        check("list", Err("requires one argument"));
        check("list(string, number)", Err("requires one argument"));
        check(
            "optional(string)",
            Err("only for attribute types within an object type"),
        );
        check("object([string])", Err("attribute types as a map"));
        check("\"string\"", Err("primitive type keyword"));
        check("frob(string)", Err("not a valid type constructor"));
    }

    #[test]
    fn defaults_are_kept_by_path() {
        let text = "x = list(object({a = optional(number, 1), inner = optional(object({b = optional(string, \"d\")}))}))\n";
        let body = terrane_hcl::parser::parse_body(text).unwrap();
        let index = LineIndex::new("t.tf", text);
        let tc = parse_type(&body.get_attribute("x").unwrap().value, &index).unwrap();
        let paths: Vec<String> = tc.defaults.keys().map(ToString::to_string).collect();
        assert_eq!(paths, vec!["[0].a", "[0].inner.b"]);
    }
}
