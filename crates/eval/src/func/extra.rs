//! Functions that were missing from the library (issue 20 item 7): the
//! hashes and encodings of a file's raw bytes (`filebase64`, `filemd5`,
//! `filesha1`, `filesha256`, `filesha512`, `filebase64sha256`,
//! `filebase64sha512`), `base64gzip`, `matchkeys`, `textencodebase64` /
//! `textdecodebase64` and `templatestring`.
//!
//! `textencodebase64` and `textdecodebase64` know UTF-8, UTF-16 (BE, LE,
//! and with a byte-order mark) and ISO-8859-1 under their IANA names and
//! aliases; any other name is refused with a diagnostic naming it.

use super::crypto::b64;
use super::spec::{arg_err, call_err, elems, p_str, s, Func, Param, Res};
use super::FuncCtx;
use base64::Engine as _;
use sha2::Digest;
use std::io::Write;
use terrane_value::convert::convert;
use terrane_value::{Type, Value};

pub(super) const NAMES: &[&str] = &[
    "filebase64",
    "filebase64sha256",
    "filebase64sha512",
    "filemd5",
    "filesha1",
    "filesha256",
    "filesha512",
    "base64gzip",
    "matchkeys",
    "textencodebase64",
    "textdecodebase64",
    "templatestring",
];

pub(super) fn lookup(name: &str) -> Option<Func> {
    let file_fn = |imp| Func::new(vec![p_str("path")], Type::String, imp);
    Some(match name {
        "filebase64" => file_fn(|a, _, c| Ok(Value::string(b64(&read(c, &a[0])?)))),
        "filebase64sha256" => {
            file_fn(|a, _, c| Ok(Value::string(b64(&sha2::Sha256::digest(read(c, &a[0])?)))))
        }
        "filebase64sha512" => {
            file_fn(|a, _, c| Ok(Value::string(b64(&sha2::Sha512::digest(read(c, &a[0])?)))))
        }
        "filemd5" => file_fn(|a, _, c| {
            Ok(Value::string(hex::encode(md5::Md5::digest(read(
                c, &a[0],
            )?))))
        }),
        "filesha1" => file_fn(|a, _, c| {
            Ok(Value::string(hex::encode(sha1::Sha1::digest(read(
                c, &a[0],
            )?))))
        }),
        "filesha256" => file_fn(|a, _, c| {
            Ok(Value::string(hex::encode(sha2::Sha256::digest(read(
                c, &a[0],
            )?))))
        }),
        "filesha512" => file_fn(|a, _, c| {
            Ok(Value::string(hex::encode(sha2::Sha512::digest(read(
                c, &a[0],
            )?))))
        }),
        "base64gzip" => Func::new(vec![p_str("str")], Type::String, base64gzip),
        "matchkeys" => Func::ret_fn(
            vec![
                Param::new("values", Type::list(Type::Dynamic)),
                Param::new("keys", Type::list(Type::Dynamic)),
                Param::new("searchset", Type::list(Type::Dynamic)),
            ],
            |a| Ok(a[0].ty().clone()),
            matchkeys,
        ),
        "textencodebase64" => Func::new(
            vec![p_str("string"), p_str("encoding")],
            Type::String,
            textencodebase64,
        ),
        "textdecodebase64" => Func::new(
            vec![p_str("source"), p_str("encoding")],
            Type::String,
            textdecodebase64,
        ),
        "templatestring" => Func::new(
            vec![
                p_str("template"),
                Param::new("vars", Type::Dynamic).unknown().dynamic(),
            ],
            Type::String,
            templatestring,
        ),
        _ => return None,
    })
}

/// A file's bytes, relative paths against the function context's
/// directory; a missing file is Go's "open PATH: no such file or
/// directory", as Terraform reports it.
fn read(ctx: &FuncCtx, path: &Value) -> Res<Vec<u8>> {
    let name = s(path);
    let full = {
        let p = std::path::PathBuf::from(name);
        if p.is_absolute() {
            p
        } else {
            ctx.base_dir.join(p)
        }
    };
    std::fs::read(&full).or_else(|e| {
        let why = match e.kind() {
            std::io::ErrorKind::NotFound => "no such file or directory".to_string(),
            std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
            _ => e.to_string(),
        };
        call_err(format!("open {name}: {why}"))
    })
}

fn base64gzip(a: &[Value], _: &Type, _: &FuncCtx) -> Res<Value> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let done = gz.write_all(s(&a[0]).as_bytes()).and_then(|_| gz.finish());
    match done {
        Ok(bytes) => Ok(Value::string(b64(&bytes))),
        Err(e) => call_err(format!("failed to compress string: {e}")),
    }
}

fn matchkeys(a: &[Value], ret: &Type, _: &FuncCtx) -> Res<Value> {
    let (values, keys, search) = (elems(&a[0]), elems(&a[1]), elems(&a[2]));
    let elem = ret.element_type().cloned().unwrap_or(Type::Dynamic);
    if values.len() != keys.len() {
        return call_err("length of keys and values should be equal");
    }
    if values.is_empty() {
        return Ok(Value::list(elem, Vec::new()));
    }
    // Keys and search set are compared as one type, as Terraform unifies
    // them ("1" and 1 match).
    let key_ty = a[1].ty().element_type().cloned().unwrap_or(Type::Dynamic);
    let search: Vec<Value> = search
        .iter()
        .map(|v| convert(v, &key_ty).unwrap_or_else(|_| v.clone()))
        .collect();
    if search.iter().any(|v| v.ty() != &key_ty) && !key_ty.is_dynamic() {
        return call_err("keys and searchset must be of the same type");
    }
    let out: Vec<Value> = values
        .iter()
        .zip(keys)
        .filter(|(_, k)| search.iter().any(|x| x == *k))
        .map(|(v, _)| v.clone())
        .collect();
    Ok(Value::list(elem, out))
}

/// The text encodings terrane converts, by IANA name and alias.
#[derive(Clone, Copy, PartialEq)]
enum Encoding {
    Utf8,
    Utf16Be,
    Utf16Le,
    /// UTF-16 with a byte-order mark (big-endian when encoding).
    Utf16,
    Latin1,
}

fn encoding(name: &str) -> Option<Encoding> {
    let n = name.to_ascii_lowercase();
    Some(match n.as_str() {
        "utf-8" | "csutf8" => Encoding::Utf8,
        "utf-16be" | "csutf16be" => Encoding::Utf16Be,
        "utf-16le" | "csutf16le" => Encoding::Utf16Le,
        "utf-16" | "csutf16" => Encoding::Utf16,
        "iso-8859-1" | "iso_8859-1" | "iso_8859-1:1987" | "iso-ir-100" | "latin1" | "l1"
        | "ibm819" | "cp819" | "csisolatin1" => Encoding::Latin1,
        _ => return None,
    })
}

fn unknown_encoding<T>(i: usize, name: &str) -> Res<T> {
    arg_err(
        i,
        format!(
            "{name:?} is not a supported IANA encoding name or alias in this Terraform version"
        ),
    )
}

fn textencodebase64(a: &[Value], _: &Type, _: &FuncCtx) -> Res<Value> {
    let text = s(&a[0]);
    let Some(enc) = encoding(s(&a[1])) else {
        return unknown_encoding(1, s(&a[1]));
    };
    let units = |le: bool| -> Vec<u8> {
        text.encode_utf16()
            .flat_map(|u| if le { u.to_le_bytes() } else { u.to_be_bytes() })
            .collect()
    };
    let bytes = match enc {
        Encoding::Utf8 => text.as_bytes().to_vec(),
        Encoding::Utf16Be => units(false),
        Encoding::Utf16Le => units(true),
        Encoding::Utf16 => [vec![0xfe, 0xff], units(false)].concat(),
        Encoding::Latin1 => {
            let mut out = Vec::with_capacity(text.len());
            for c in text.chars() {
                match u8::try_from(u32::from(c)) {
                    Ok(b) => out.push(b),
                    Err(_) => {
                        return arg_err(
                            0,
                            format!(
                            "the given string contains characters that cannot be represented in {}",
                            s(&a[1])
                        ),
                        )
                    }
                }
            }
            out
        }
    };
    Ok(Value::string(b64(&bytes)))
}

fn textdecodebase64(a: &[Value], _: &Type, _: &FuncCtx) -> Res<Value> {
    let Some(enc) = encoding(s(&a[1])) else {
        return unknown_encoding(1, s(&a[1]));
    };
    let src = s(&a[0]);
    let bytes = match base64::engine::general_purpose::STANDARD.decode(src) {
        Ok(b) => b,
        Err(e) => {
            let offset = match e {
                base64::DecodeError::InvalidByte(at, _)
                | base64::DecodeError::InvalidLastSymbol(at, _) => at,
                _ => src.len(),
            };
            return arg_err(
                0,
                format!("the given value is has an invalid base64 symbol at offset {offset}"),
            );
        }
    };
    let utf16 = |b: &[u8], le: bool| -> String {
        let units: Vec<u16> = b
            .chunks(2)
            .map(|c| {
                let pair = [c[0], *c.get(1).unwrap_or(&0)];
                if le {
                    u16::from_le_bytes(pair)
                } else {
                    u16::from_be_bytes(pair)
                }
            })
            .collect();
        String::from_utf16_lossy(&units)
    };
    let text = match enc {
        Encoding::Utf8 => String::from_utf8_lossy(&bytes).into_owned(),
        Encoding::Utf16Be => utf16(&bytes, false),
        Encoding::Utf16Le => utf16(&bytes, true),
        Encoding::Utf16 => match bytes.as_slice() {
            [0xff, 0xfe, rest @ ..] => utf16(rest, true),
            [0xfe, 0xff, rest @ ..] => utf16(rest, false),
            rest => utf16(rest, false),
        },
        Encoding::Latin1 => bytes.iter().map(|b| char::from(*b)).collect(),
    };
    Ok(Value::string(text))
}

fn templatestring(a: &[Value], _: &Type, ctx: &FuncCtx) -> Res<Value> {
    let vars = &a[1];
    if !matches!(vars.ty(), Type::Object(_) | Type::Map(_) | Type::Dynamic) || vars.is_null() {
        return arg_err(1, "invalid vars value: must be a map");
    }
    let v = (ctx.render_template)(s(&a[0]), std::path::Path::new("<templatestring>"), vars)
        .or_else(call_err)?;
    convert(&v, &Type::String).or_else(|e| call_err(format!("invalid template result: {e}")))
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use terrane_value::Type;

    /// Item 7: each function against the result `terraform console` gives
    /// for the same call (Terraform v1.15).
    #[test]
    fn item7_missing_functions_as_terraform() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("f.txt"), "hello\nworld\n").unwrap();
        let f = || vec![st("f.txt")];
        let ok = |v: &str| Ok(st(v));
        let cases: Vec<(&str, &str, Vec<_>, Result<_, &str>)> = vec![
            ("filebase64", "filebase64", f(), ok("aGVsbG8Kd29ybGQK")),
            ("filebase64sha256", "filebase64sha256", f(), ok("Sh5n8v4dHMezHQyi7EQdpHeCA6A2p32hA0TIXiT/D5I=")),
            ("filebase64sha512", "filebase64sha512", f(), ok("WVvusT5UO3EHwYK7I6x3Zr1iqzEi4lDpBXPrVA+JUgEiFQ5fabuZFAvEerUmybeyo7JAKwm0S3ORUBoUmHZ2XA==")),
            ("filemd5", "filemd5", f(), ok("0f723ae7f9bf07744445e93ac5595156")),
            ("filesha1", "filesha1", f(), ok("58853e8a5e8272b1012f9a52a80758b27bd0d3cb")),
            ("filesha256", "filesha256", f(), ok("4a1e67f2fe1d1cc7b31d0ca2ec441da4778203a036a77da10344c85e24ff0f92")),
            ("filesha512", "filesha512", f(), ok("595beeb13e543b7107c182bb23ac7766bd62ab3122e250e90573eb540f89520122150e5f69bb99140bc47ab526c9b7b2a3b2402b09b44b7391501a149876765c")),
            ("file_missing", "filemd5", vec![st("nope.txt")], Err("Error in function call: Call to function \"filemd5\" failed: open nope.txt: no such file or directory.")),
            ("matchkeys", "matchkeys", vec![strs(&["a", "b", "c"]), strs(&["x", "y", "z"]), strs(&["z", "x"])], Ok(strs(&["a", "c"]))),
            ("matchkeys_unified", "matchkeys", vec![nums(&[1, 2]), nums(&[1, 2]), strs(&["1"])], Ok(nums(&[1]))),
            ("matchkeys_lengths", "matchkeys", vec![strs(&["a"]), strs(&["x", "y"]), strs(&["x"])], Err("Error in function call: Call to function \"matchkeys\" failed: length of keys and values should be equal.")),
            ("encode_utf16le", "textencodebase64", vec![st("Hello"), st("UTF-16LE")], ok("SABlAGwAbABvAA==")),
            ("encode_utf8", "textencodebase64", vec![st("Hello"), st("UTF-8")], ok("SGVsbG8=")),
            ("encode_latin1", "textencodebase64", vec![st("Héllo"), st("ISO-8859-1")], ok("SOlsbG8=")),
            ("encode_utf16be", "textencodebase64", vec![st("Hello"), st("UTF-16BE")], ok("AEgAZQBsAGwAbw==")),
            ("encode_utf16_bom", "textencodebase64", vec![st("Hello"), st("utf-16")], ok("/v8ASABlAGwAbABv")),
            ("encode_unknown", "textencodebase64", vec![st("Hello"), st("nope")], Err("Invalid function argument: Invalid value for \"encoding\" parameter: \"nope\" is not a supported IANA encoding name or alias in this Terraform version.")),
            ("decode_utf16le", "textdecodebase64", vec![st("SABlAGwAbABvAA=="), st("UTF-16LE")], ok("Hello")),
            ("decode_latin1", "textdecodebase64", vec![st("SOlsbG8="), st("ISO-8859-1")], ok("Héllo")),
            ("decode_bad_base64", "textdecodebase64", vec![st("!!"), st("UTF-8")], Err("Invalid function argument: Invalid value for \"source\" parameter: the given value is has an invalid base64 symbol at offset 0.")),
            ("templatestring", "templatestring", vec![st("hi ${name}"), obj(vec![("name", st("x"))])], ok("hi x")),
        ];
        for (case, name, args, want) in cases {
            let got = run_in(dir.path(), name, args);
            assert_eq!(got, want.map_err(str::to_string), "case {case}");
        }
        // Go's gzip writer frames the stream differently from flate2, so the
        // bytes differ from Terraform's; what they decode to must not.
        let ours = run("base64gzip", vec![st("hello world")]).unwrap();
        let theirs = "H4sIAAAAAAAA/8pIzcnJVyjPL8pJAQAAAP//AQAA//+FEUoNCwAAAA==";
        assert_eq!(
            gunzip(ours.as_str().unwrap()),
            gunzip(theirs),
            "case base64gzip"
        );
        assert_eq!(gunzip(theirs), "hello world");
        let empty = run("matchkeys", vec![strs(&[]), strs(&[]), strs(&["a"])]).unwrap();
        assert!(
            matches!(empty.ty(), Type::List(_)) && empty.length() == Some(0),
            "case matchkeys_empty: {empty:?}"
        );
    }

    fn gunzip(b64: &str) -> String {
        use base64::Engine as _;
        use std::io::Read;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(b64)
            .unwrap();
        let mut out = String::new();
        flate2::read::GzDecoder::new(bytes.as_slice())
            .read_to_string(&mut out)
            .unwrap();
        out
    }
}
