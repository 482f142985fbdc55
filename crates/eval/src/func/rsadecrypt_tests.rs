//! `rsadecrypt`: the keys and ciphertext are the differential corpus's
//! (tests/corpus/files), whose results real Terraform gives in
//! tests/differential.rs; the expected texts here are Terraform's.

use super::super::test_support::*;
use terrane_value::Value;

const KEYS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/corpus/files/");
/// "Hello, terrane!" encrypted (PKCS #1 v1.5) to the corpus's RSA key.
const CIPHERTEXT: &str = "gNqJc/2IomXtzbY69GQtGAvCzLWAU41JFIzgILSMLx9G3RcYWVNZR7OMWau28VOYfuZcrBkVURLkSPP0uc5/+sjdvjq98nWsiExNIVPTu5CloEYVnC35bfNY4j0Cg3Fiu/CxXn21kxsHdP1CRS1aN8KrLv7Wa+8sJmUA10EFCZXdVLTxwBOiPC4zaryOPZRbIctoLE85ETmS28rpyF7aSzJ1eZN0Al5mLt6PrthPTZabEeHhyQdc4D00fk8TTGQdgadYbY0ak+v0xaHKrP2VPy6ywdJKz8oqRVPncH6flQMIvtw3MBIBCKWZbxdf9U510FeYJtBl6G7YQeADZuOCzw==";

fn key(name: &str) -> Value {
    st(&std::fs::read_to_string(format!("{KEYS}{name}")).unwrap())
}

#[track_caller]
fn check(case: &str, ciphertext: &str, key: Value, want: &Result<&str, String>) {
    let got = run("rsadecrypt", vec![st(ciphertext), key]);
    match want {
        Ok(text) => assert_eq!(got, Ok(st(text)), "{case}"),
        Err(m) => assert_eq!(&got.unwrap_err(), m, "{case}"),
    }
}

#[test]
fn item1_rsadecrypt_as_terraform() {
    let arg1 = "Invalid function argument: Invalid value for \"privatekey\" parameter: ";
    let cases: Vec<(&str, &str, Value, Result<&str, String>)> = vec![
        ("pkcs1 key, text before the block", CIPHERTEXT, key("rsa_pkcs1.pem"), Ok("Hello, terrane!")),
        ("pkcs8 key", CIPHERTEXT, key("rsa_pkcs8.pem"), Ok("Hello, terrane!")),
        ("openssh key", CIPHERTEXT, key("rsa_openssh.pem"), Ok("Hello, terrane!")),
        (
            "ciphertext not base64",
            "abc",
            st("def"),
            Err("Invalid function argument: Invalid value for \"ciphertext\" parameter: failed to decode input \"abc\": cipher text must be base64-encoded.".into()),
        ),
        ("no pem block", "YWJj", st("no key here"), Err(format!("{arg1}invalid private key: ssh: no key found."))),
        (
            "passphrase protected",
            CIPHERTEXT,
            key("rsa_encrypted.pem"),
            Err(format!("{arg1}invalid private key: ssh: this private key is passphrase protected.")),
        ),
        (
            "truncated der",
            CIPHERTEXT,
            key("rsa_truncated.pem"),
            Err(format!("{arg1}invalid ASN1 data in the given private key: data truncated.")),
        ),
        (
            "unsupported block type",
            CIPHERTEXT,
            st("-----BEGIN FOO KEY-----\nMIIB\n-----END FOO KEY-----\n"),
            Err(format!("{arg1}invalid private key: ssh: unsupported key type \"FOO KEY\".")),
        ),
        (
            "wrong key for the ciphertext",
            "AAAA",
            key("rsa_pkcs1.pem"),
            Err("Error in function call: Call to function \"rsadecrypt\" failed: failed to decrypt: crypto/rsa: decryption error.".into()),
        ),
        // Terraform prints the EC key's numbers here; terrane names the kind only.
        (
            "not an rsa key",
            CIPHERTEXT,
            key("ec.pem"),
            Err(format!("{arg1}invalid private key type: an RSA private key is required, not an EC key.")),
        ),
    ];
    for (case, ct, k, want) in &cases {
        check(case, ct, k.clone(), want);
    }
}
