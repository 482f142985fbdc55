//! `#[derive(Model)]`: maps a struct with named fields to and from a
//! terrane object value whose attributes are the fields (renamed with
//! `#[model(rename = "...")]`). Each field type implements
//! `terrane_sdk::model::Field`, so `Option<T>` maps null, `Known<T>` maps
//! unknown, collections map lists, sets and maps. The generated code only
//! calls the SDK's `model` module; this crate knows nothing else about it.

use proc_macro::TokenStream;
use quote::quote;
use syn::{parse_macro_input, Data, DeriveInput, Fields, LitStr};

/// Derives `terrane_sdk::model::Model` for a struct with named fields:
/// `object_type` is the object of the fields' types, `from_value` reads
/// each field from the object attribute of its name (or
/// `#[model(rename = "...")]`), `to_value` writes them back. Use it
/// through the SDK's re-export, `terrane_sdk::Model`.
#[proc_macro_derive(Model, attributes(model))]
pub fn derive_model(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    let name = &input.ident;
    let Data::Struct(data) = &input.data else {
        return syn::Error::new_spanned(
            &input.ident,
            "Model can only be derived for structs with named fields",
        )
        .to_compile_error()
        .into();
    };
    let Fields::Named(fields) = &data.fields else {
        return syn::Error::new_spanned(
            &input.ident,
            "Model can only be derived for structs with named fields",
        )
        .to_compile_error()
        .into();
    };
    let mut idents = Vec::new();
    let mut keys = Vec::new();
    let mut types = Vec::new();
    for f in &fields.named {
        let ident = f.ident.clone().expect("named field");
        let mut key = ident.to_string();
        for attr in &f.attrs {
            if !attr.path().is_ident("model") {
                continue;
            }
            let res = attr.parse_nested_meta(|meta| {
                if meta.path.is_ident("rename") {
                    let lit: LitStr = meta.value()?.parse()?;
                    key = lit.value();
                    Ok(())
                } else {
                    Err(meta.error("unsupported model attribute; expected `rename = \"...\"`"))
                }
            });
            if let Err(e) = res {
                return e.to_compile_error().into();
            }
        }
        idents.push(ident);
        keys.push(key);
        types.push(f.ty.clone());
    }
    let expanded = quote! {
        impl ::terrane_sdk::model::Model for #name {
            fn object_type() -> ::terrane_sdk::Type {
                ::terrane_sdk::Type::object([#( (#keys, <#types as ::terrane_sdk::model::Field>::ty()) ),*])
            }

            fn from_value(v: &::terrane_sdk::Value) -> ::std::result::Result<Self, ::terrane_sdk::Diagnostics> {
                let root = ::terrane_sdk::Path::root();
                ::std::result::Result::Ok(#name {
                    #( #idents: ::terrane_sdk::model::field_from(v, #keys, &root)?, )*
                })
            }

            fn to_value(&self) -> ::terrane_sdk::Value {
                ::terrane_sdk::Value::object_from([
                    #( (#keys, ::terrane_sdk::model::Field::to_value(&self.#idents)) ),*
                ])
            }
        }
    };
    expanded.into()
}
