//! posixpath on bytes (normpath, join, dirname, basename) and the file lookups of
//! extract.py's orchestration (_resolve, _prefix, _sub_label, the cont-N number).

use std::ffi::OsStr;
use std::fs;
use std::os::unix::ffi::OsStrExt;

/// posixpath.normpath on bytes.
pub fn normpath(p: &[u8]) -> Vec<u8> {
    if p.is_empty() {
        return b".".to_vec();
    }
    let mut lead = if p.starts_with(b"/") { 1 } else { 0 };
    if p.starts_with(b"//") && !p.starts_with(b"///") {
        lead = 2;
    }
    let mut out: Vec<&[u8]> = Vec::new();
    for c in p.split(|b| *b == b'/') {
        if c.is_empty() || c == b"." {
            continue;
        }
        if c != b".." || (lead == 0 && out.is_empty()) || out.last() == Some(&&b".."[..]) {
            out.push(c);
        } else if !out.is_empty() {
            out.pop();
        }
    }
    let mut r = vec![b'/'; lead];
    r.extend_from_slice(&out.join(&b'/'));
    if r.is_empty() {
        b".".to_vec()
    } else {
        r
    }
}

/// posixpath.join(a, b) for one component.
pub fn join(a: &[u8], b: &[u8]) -> Vec<u8> {
    if b.starts_with(b"/") {
        return b.to_vec();
    }
    let mut p = a.to_vec();
    if !(p.is_empty() || p.ends_with(b"/")) {
        p.push(b'/');
    }
    p.extend_from_slice(b);
    p
}

pub fn dirname(p: &[u8]) -> &[u8] {
    let i = p.iter().rposition(|b| *b == b'/').map_or(0, |i| i + 1);
    let head = &p[..i];
    if !head.is_empty() && head.iter().any(|b| *b != b'/') {
        let mut h = head;
        while h.ends_with(b"/") {
            h = &h[..h.len() - 1];
        }
        h
    } else {
        head
    }
}

pub fn basename(p: &[u8]) -> &[u8] {
    let i = p.iter().rposition(|b| *b == b'/').map_or(0, |i| i + 1);
    &p[i..]
}

pub fn is_file(p: &[u8]) -> bool {
    fs::metadata(OsStr::from_bytes(p))
        .map(|m| m.is_file())
        .unwrap_or(false)
}

/// extract._resolve: a referenced file inside base_dir, else None.
pub fn resolve(base_dir: &[u8], prefix: &str, r: &str) -> Option<Vec<u8>> {
    if r.is_empty() || r.contains('\0') {
        return None;
    }
    let rb = r.as_bytes();
    let first = if rb.starts_with(b"/") {
        basename(rb).to_vec()
    } else {
        rb.to_vec()
    };
    let mut names = vec![first.clone()];
    if !prefix.is_empty() {
        let mut n = prefix.as_bytes().to_vec();
        n.extend_from_slice(&first);
        names.push(n);
    }
    let root = normpath(base_dir);
    let mut rs = root.clone();
    rs.push(b'/');
    for n in names {
        let cand = normpath(&join(&root, &n));
        if cand.starts_with(&rs) && is_file(&cand) {
            return Some(cand);
        }
    }
    None
}

pub fn prefix_of(path: &[u8]) -> &[u8] {
    let b = basename(path);
    b.strip_suffix(b"trajectory.json").unwrap_or(b"")
}

pub fn sub_label(path: &str, prefix: &str) -> String {
    let mut base = &path[path.rfind('/').map_or(0, |i| i + 1)..];
    let head = format!("{prefix}trajectory.");
    if let Some(rest) = base.strip_prefix(head.as_str()) {
        base = rest;
    }
    base.strip_suffix(".json").unwrap_or(base).to_string()
}

/// The numeric part of an exact `trajectory.cont-<digits>.json` name.
pub fn cont_number(name: &str) -> Option<u128> {
    let d = name
        .strip_prefix("trajectory.cont-")?
        .strip_suffix(".json")?;
    if d.is_empty() || d.len() > 30 || !d.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    Some(d.bytes().fold(0u128, |a, c| {
        a.saturating_mul(10).saturating_add((c - b'0') as u128)
    }))
}
