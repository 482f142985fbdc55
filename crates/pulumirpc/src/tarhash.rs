//! The hash Pulumi's engine gives an archive that is not an archive file
//! (an archive of assets, or a directory): the SHA-256 of the tar stream Go's
//! `archive/tar` writer makes of its members. Each member is a USTAR header
//! (its name, mode 0600, its size; every other field zero or empty) and its
//! contents padded to 512 bytes; the stream ends with two zero blocks.
//! Members come in the archive reader's order, and a name already written is
//! skipped.
//!
//! Where USTAR cannot hold a member (a name that is not ASCII, or is too
//! long to split into prefix and name; a member of 8 GiB or more), Go
//! writes a PAX extended header before it, and so does this module
//! ([`headers`]).
//!
//! This module also reads the members of what an archive may point at:
//! a directory ([`dir_members`], in the order Go's `filepath.Walk` visits
//! it) and a tar, gzipped tar or zip file ([`file_members`]).

use sha2::Digest as _;
use std::collections::BTreeSet;
use std::io::Read as _;
use std::path::{Path, PathBuf};

/// The contents of a member.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Blob {
    Bytes(Vec<u8>),
    /// A file, read when the stream is hashed.
    File(PathBuf),
}

/// A header field: `s` and a NUL terminator when there is room (Go's
/// formatString).
fn put_str(field: &mut [u8], s: &[u8]) {
    field[..s.len()].copy_from_slice(s);
    if let Some(end) = field.get_mut(s.len()) {
        *end = 0;
    }
}

/// A numeric field: octal, zero-padded, leaving room for the NUL (Go's
/// formatOctal). The caller has checked that the number fits.
fn put_octal(field: &mut [u8], n: u64) {
    let digits = format!("{n:0width$o}", width = field.len() - 1);
    put_str(field, digits.as_bytes());
}

/// Go's splitUSTARPath: a name over 100 bytes split at a slash into a
/// prefix of at most 155 bytes and a name of at most 100.
fn split_name(name: &str) -> Option<(&str, &str)> {
    let mut length = name.len();
    if length <= 100 || !name.is_ascii() {
        return None;
    }
    if length > 156 {
        length = 156;
    } else if name.as_bytes()[length - 1] == b'/' {
        length -= 1;
    }
    let i = name[..length].rfind('/')?;
    let (prefix, rest) = (&name[..i], &name[i + 1..]);
    (i > 0 && !rest.is_empty() && rest.len() <= 100 && prefix.len() <= 155)
        .then_some((prefix, rest))
}

/// Go's isASCII: every character below 0x80 and none NUL.
fn go_ascii(s: &str) -> bool {
    s.bytes().all(|c| c != 0 && c < 0x80)
}

/// Go's toASCII: `s` without its non-ASCII characters and NULs.
fn to_ascii(s: &str) -> String {
    s.chars().filter(|&c| c != '\0' && c.is_ascii()).collect()
}

/// Go's formatString for the name field when the name may be longer than
/// it: the bytes that fit, NUL-terminated when shorter; a cut name that
/// would end in `/` loses its trailing slashes.
fn put_name(field: &mut [u8], s: &[u8]) {
    let n = s.len().min(field.len());
    field[..n].copy_from_slice(&s[..n]);
    if s.len() < field.len() {
        field[s.len()] = 0;
    }
    if s.len() > field.len() && field[field.len() - 1] == b'/' {
        let kept = s[..field.len()]
            .iter()
            .rposition(|&c| c != b'/')
            .map_or(0, |i| i + 1);
        field[kept] = 0;
    }
}

/// Sets the USTAR magic and version, then the checksum, which counts its
/// own field as spaces: six octal digits, NUL, space (Go's setFormat).
fn finish(b: &mut [u8; 512]) {
    put_str(&mut b[257..263], b"ustar\0");
    put_str(&mut b[263..265], b"00");
    b[148..156].fill(b' ');
    let sum: u64 = b.iter().map(|&c| u64::from(c)).sum();
    put_octal(&mut b[148..155], sum);
    b[155] = b' ';
}

/// The header of a regular file, as Go's templateV7Plus fills it: the name
/// field, mode 0600, owner 0, the size (0 where it does not fit in octal:
/// a PAX record carries it), mtime 0, the device numbers 0, and `prefix`.
fn file_header(name: &[u8], prefix: &[u8], size: u64) -> [u8; 512] {
    let mut b = [0u8; 512];
    put_name(&mut b[0..100], name);
    put_octal(&mut b[100..108], 0o600);
    put_octal(&mut b[108..116], 0); // uid
    put_octal(&mut b[116..124], 0); // gid
    put_octal(
        &mut b[124..136],
        if size < OCTAL_SIZE_LIMIT { size } else { 0 },
    );
    put_octal(&mut b[136..148], 0); // mtime: the Unix epoch
    b[156] = b'0';
    put_octal(&mut b[329..337], 0); // devmajor
    put_octal(&mut b[337..345], 0); // devminor
    put_str(&mut b[345..500], prefix);
    finish(&mut b);
    b
}

/// The largest size an octal size field holds, plus one (8 GiB).
const OCTAL_SIZE_LIMIT: u64 = 1 << 33;

/// One PAX record, `LEN key=value\n`, LEN counting itself (Go's
/// formatPAXRecord).
fn pax_record(key: &str, value: &str) -> String {
    let body = key.len() + value.len() + 3;
    let mut size = body + body.to_string().len();
    if (size).to_string().len() + body != size {
        size = size.to_string().len() + body;
    }
    format!("{size} {key}={value}\n")
}

/// Go's path.Join(dir, "PaxHeaders.0", file) of `name` split at its last
/// slash: where Go names a member's extended header.
fn pax_header_name(name: &str) -> String {
    let (dir, file) = match name.rfind('/') {
        Some(i) => (&name[..=i], &name[i + 1..]),
        None => ("", name),
    };
    let joined = [dir, "PaxHeaders.0", file]
        .iter()
        .filter(|p| !p.is_empty())
        .copied()
        .collect::<Vec<_>>()
        .join("/");
    clean(&joined)
}

/// The blocks Go's tar writer puts before a regular file's contents.
///
/// USTAR when it can hold the member (an ASCII name of at most 100 bytes,
/// or one that splits into prefix and name; a size under 8 GiB). Otherwise
/// PAX (Go's writePAXHeader): an extended header `PaxHeaders.0/NAME`
/// (type `x`, mode and owner 0, no device numbers) whose contents are the
/// sorted records (`path` for a name that is not ASCII or is over 100
/// bytes, `size` for one that does not fit), padded to a block, then the
/// file's header with the name reduced to ASCII and cut to 100 bytes, no
/// prefix. A name holding NUL is an error, as Go refuses it.
fn headers(name: &str, size: u64) -> Result<Vec<u8>, String> {
    if name.contains('\0') {
        return Err(format!(
            "the archive member name {name:?} holds a NUL byte, which no tar header can carry"
        ));
    }
    let ascii = go_ascii(name);
    let name_ustar = ascii && name.len() <= 100;
    let split = split_name(name);
    if (name_ustar || split.is_some()) && size < OCTAL_SIZE_LIMIT {
        let (prefix, rest) = split.unwrap_or(("", name));
        return Ok(file_header(rest.as_bytes(), prefix.as_bytes(), size).to_vec());
    }
    let mut records = String::new();
    if !name_ustar {
        records.push_str(&pax_record("path", name));
    }
    if size >= OCTAL_SIZE_LIMIT {
        records.push_str(&pax_record("size", &size.to_string()));
    }
    let mut xname = to_ascii(&pax_header_name(name));
    xname.truncate(100);
    let xname = xname.trim_end_matches('/');
    let mut x = [0u8; 512];
    put_str(&mut x[0..100], xname.as_bytes());
    put_octal(&mut x[100..108], 0);
    put_octal(&mut x[108..116], 0);
    put_octal(&mut x[116..124], 0);
    put_octal(&mut x[124..136], records.len() as u64);
    put_octal(&mut x[136..148], 0);
    x[156] = b'x';
    finish(&mut x);
    let mut out = x.to_vec();
    out.extend_from_slice(records.as_bytes());
    out.resize(out.len().div_ceil(512) * 512, 0);
    out.extend_from_slice(&file_header(to_ascii(name).as_bytes(), b"", size));
    Ok(out)
}

/// The hex SHA-256 of the tar stream of `members`. A file that cannot be read, or
/// changes size while it is read, is an error naming it.
pub(crate) fn tar_hash(members: Vec<(String, Blob)>) -> Result<String, String> {
    let mut h = sha2::Sha256::new();
    let mut seen = BTreeSet::new();
    for (name, blob) in members {
        if !seen.insert(name.clone()) {
            continue;
        }
        let size = match &blob {
            Blob::Bytes(b) => b.len() as u64,
            Blob::File(f) => std::fs::metadata(f)
                .map_err(|e| format!("cannot read {} to hash it: {e}", f.display()))?
                .len(),
        };
        h.update(headers(&name, size)?);
        match &blob {
            Blob::Bytes(b) => h.update(b),
            Blob::File(f) => {
                let err =
                    |e: std::io::Error| format!("cannot read {} to hash it: {e}", f.display());
                let mut file = std::fs::File::open(f).map_err(err)?;
                let mut buf = vec![0u8; 64 * 1024];
                let mut read = 0u64;
                loop {
                    let n = file.read(&mut buf).map_err(err)?;
                    if n == 0 {
                        break;
                    }
                    read += n as u64;
                    h.update(&buf[..n]);
                }
                if read != size {
                    return Err(format!(
                        "{} changed while it was hashed ({size} bytes, then {read})",
                        f.display()
                    ));
                }
            }
        }
        let pad = (512 - size % 512) % 512;
        h.update(vec![0u8; pad as usize]);
    }
    h.update([0u8; 1024]);
    Ok(hex::encode(h.finalize()))
}

/// Go's path.Clean: the shortest lexically equal path.
pub(crate) fn clean(p: &str) -> String {
    let rooted = p.starts_with('/');
    let mut out: Vec<&str> = Vec::new();
    for part in p.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if out.last().is_some_and(|l| *l != "..") {
                    out.pop();
                } else if !rooted {
                    out.push("..");
                }
            }
            _ => out.push(part),
        }
    }
    let body = out.join("/");
    match (rooted, body.is_empty()) {
        (true, _) => format!("/{body}"),
        (false, true) => ".".to_string(),
        (false, false) => body,
    }
}

/// Go's filepath.Join of two names.
pub(crate) fn join(root: &str, name: &str) -> String {
    match (root.is_empty(), name.is_empty()) {
        (true, true) => String::new(),
        (true, false) => clean(name),
        (false, true) => clean(root),
        (false, false) => clean(&format!("{root}/{name}")),
    }
}

/// The file name endings Pulumi's engine takes for archive files.
pub(crate) const ARCHIVE_EXTS: [&str; 5] = [".tar", ".tgz", ".tar.gz", ".zip", ".jar"];

/// Whether Pulumi's engine reads `path` as an archive file.
pub(crate) fn is_archive_file(path: &str) -> bool {
    ARCHIVE_EXTS.iter().any(|e| path.ends_with(e))
}

/// The files under `dir`, as Go's filepath.Walk visits them (each
/// directory's entries sorted by name, depth first), named relative to it
/// with `/`. Directories are not members; `.pulumi` is skipped; a symbolic
/// link to a file is the file, one to a directory is skipped.
pub(crate) fn dir_members(dir: &Path) -> Result<Vec<(String, Blob)>, String> {
    fn walk(dir: &Path, rel: &str, out: &mut Vec<(String, Blob)>) -> Result<(), String> {
        let err = |e: std::io::Error| format!("cannot read {} to hash it: {e}", dir.display());
        let mut names: Vec<_> = std::fs::read_dir(dir)
            .map_err(err)?
            .map(|e| e.map(|e| e.file_name()))
            .collect::<Result<_, _>>()
            .map_err(err)?;
        names.sort();
        for name in names {
            let Some(n) = name.to_str() else {
                return Err(format!(
                    "{} holds a file name that is not UTF-8",
                    dir.display()
                ));
            };
            if n == ".pulumi" {
                continue;
            }
            let path = dir.join(n);
            let member = if rel.is_empty() {
                n.to_string()
            } else {
                format!("{rel}/{n}")
            };
            let err = |e: std::io::Error| format!("cannot read {} to hash it: {e}", path.display());
            let meta = std::fs::symlink_metadata(&path).map_err(err)?;
            if meta.is_dir() {
                walk(&path, &member, out)?;
            } else if meta.file_type().is_symlink() {
                if !std::fs::metadata(&path).map_err(err)?.is_dir() {
                    out.push((member, Blob::File(path)));
                }
            } else {
                out.push((member, Blob::File(path)));
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    walk(dir, "", &mut out)?;
    Ok(out)
}

/// The files of a tar, gzipped tar or zip file, in the order they are
/// stored, names cleaned; directories are not members.
pub(crate) fn file_members(path: &Path) -> Result<Vec<(String, Blob)>, String> {
    let shown = path.display().to_string();
    let file =
        std::fs::File::open(path).map_err(|e| format!("cannot read {shown} to hash it: {e}"))?;
    read_members(&path.to_string_lossy(), &shown, file)
}

/// The files of an archive file's bytes (fetched from a URI): its format
/// from `name`'s extension, as [`file_members`].
pub(crate) fn bytes_members(name: &str, bytes: Vec<u8>) -> Result<Vec<(String, Blob)>, String> {
    read_members(name, name, std::io::Cursor::new(bytes))
}

/// The members of the archive `file`, its format told by `name`'s ending;
/// `shown` names it in errors.
fn read_members<R: std::io::Read + std::io::Seek>(
    name: &str,
    shown: &str,
    file: R,
) -> Result<Vec<(String, Blob)>, String> {
    if name.ends_with(".zip") || name.ends_with(".jar") {
        let mut zip = zip::ZipArchive::new(file)
            .map_err(|e| format!("cannot read the zip archive {shown}: {e}"))?;
        let mut out = Vec::new();
        for i in 0..zip.len() {
            let mut f = zip
                .by_index(i)
                .map_err(|e| format!("cannot read the zip archive {shown}: {e}"))?;
            if f.is_dir() {
                continue;
            }
            let member = clean(
                &f.name()
                    .map_err(|e| format!("cannot read the zip archive {shown}: {e}"))?,
            );
            let mut bytes = Vec::new();
            f.read_to_end(&mut bytes)
                .map_err(|e| format!("cannot read {member} in {shown}: {e}"))?;
            out.push((member, Blob::Bytes(bytes)));
        }
        return Ok(out);
    }
    let reader: Box<dyn std::io::Read> = if name.ends_with(".tar") {
        Box::new(file)
    } else {
        Box::new(flate2::read::GzDecoder::new(file))
    };
    let mut tar = tar::Archive::new(reader);
    let mut out = Vec::new();
    let entries = tar
        .entries()
        .map_err(|e| format!("cannot read the tar archive {shown}: {e}"))?;
    for entry in entries {
        let mut entry = entry.map_err(|e| format!("cannot read the tar archive {shown}: {e}"))?;
        let raw = entry.path_bytes().into_owned();
        let member = String::from_utf8_lossy(&raw).into_owned();
        // Go reads the old regular-file flag (NUL) on a name ending in `/`
        // as a directory.
        let ty = entry.header().entry_type();
        if ty.is_dir() || (ty.as_byte() == 0 && member.ends_with('/')) {
            continue;
        }
        if !ty.is_file() {
            return Err(format!(
                "{member} in {shown} is neither a file nor a directory ({ty:?}); Pulumi's engine cannot read it either"
            ));
        }
        let mut bytes = Vec::new();
        entry
            .read_to_end(&mut bytes)
            .map_err(|e| format!("cannot read {member} in {shown}: {e}"))?;
        out.push((clean(&member), Blob::Bytes(bytes)));
    }
    Ok(out)
}

#[cfg(test)]
#[path = "tarhash_tests.rs"]
mod tests;
