//! Trial-folder listing (`probe` in `evalkit/load/steps/table.py`, same results): the
//! names in `agent/`, whether `steps/` exists, and in signature mode the cache signature
//! `name:size:mtime_ns|...` of every file in `agent/` and `steps/*/agent/`.

use crate::cols::Table;
use crate::paths::join;
use std::ffi::OsStr;
use std::fs;
use std::io::ErrorKind;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;

/// agent names ('\0'-joined; null = unknown), steps (1/0/null), signature (null: Python
/// must probe this folder), total bytes, reserved.
pub const PROBE_KINDS: &str = "sisii";

fn os(p: &[u8]) -> &OsStr {
    OsStr::from_bytes(p)
}

/// The names in a folder: Ok(names), Err(true) when it does not exist, Err(false) when it
/// cannot be listed.
fn list(d: &[u8]) -> Result<Vec<fs::DirEntry>, bool> {
    match fs::read_dir(os(d)) {
        Ok(rd) => rd.collect::<Result<Vec<_>, _>>().map_err(|_| false),
        Err(e) => Err(e.kind() == ErrorKind::NotFound),
    }
}

fn utf8(b: &[u8]) -> Option<&str> {
    std::str::from_utf8(b).ok()
}

fn null_row(t: &mut Table) {
    // a folder this port does not describe exactly (non-UTF-8 names): Python probes it
    let c = &mut t.cols;
    c[0].s(None);
    c[1].i(None);
    c[2].s(None);
    c[3].i(None);
    c[4].i(None);
    t.rows += 1;
}

pub fn probe(dir: &[u8], sign: bool, t: &mut Table) {
    let adir = join(dir, b"agent");
    let sdir = join(dir, b"steps");
    let joined = |v: &[fs::DirEntry]| -> Vec<u8> {
        let mut out = Vec::new();
        for (i, e) in v.iter().enumerate() {
            if i > 0 {
                out.push(0);
            }
            out.extend_from_slice(e.file_name().as_bytes());
        }
        out
    };
    if !sign {
        let agent = match list(&adir) {
            Ok(v) => Some(joined(&v)),
            Err(true) => Some(Vec::new()),
            Err(false) => None,
        };
        let steps = match fs::metadata(os(&sdir)) {
            Ok(_) => Some(1),
            Err(e) if e.kind() == ErrorKind::NotFound => Some(0),
            Err(_) => None,
        };
        if agent.as_deref().is_some_and(|b| utf8(b).is_none()) {
            return null_row(t);
        }
        let c = &mut t.cols;
        c[0].s(agent.as_deref().and_then(utf8));
        c[1].i(steps);
        c[2].s(Some("-"));
        c[3].i(Some(0));
        c[4].i(Some(0));
        t.rows += 1;
        return;
    }
    let mut dirs: Vec<(Vec<u8>, Vec<u8>)> = vec![(Vec::new(), adir)];
    let steps = match list(&sdir) {
        Ok(v) => {
            let mut names: Vec<Vec<u8>> = v
                .iter()
                .map(|e| e.file_name().as_bytes().to_vec())
                .collect();
            names.sort();
            for n in names {
                let mut pre = n.clone();
                pre.push(b'/');
                dirs.push((pre, join(&join(&sdir, &n), b"agent")));
            }
            Some(1)
        }
        Err(true) => Some(0),
        Err(false) => None,
    };
    let mut parts: Vec<Vec<u8>> = Vec::new();
    let mut total: i64 = 0;
    let mut agent: Option<Vec<u8>> = None;
    for (k, (pre, d)) in dirs.iter().enumerate() {
        let names = match list(d) {
            Ok(v) => {
                for e in &v {
                    // Python's DirEntry.is_file() / stat() follow symbolic links
                    if let Ok(md) = fs::metadata(e.path()) {
                        if md.is_file() {
                            let mut part = pre.clone();
                            part.extend_from_slice(e.file_name().as_bytes());
                            let ns = md.mtime() as i128 * 1_000_000_000 + md.mtime_nsec() as i128;
                            part.extend_from_slice(format!(":{}:{}", md.size(), ns).as_bytes());
                            parts.push(part);
                            total += md.size() as i64;
                        }
                    }
                }
                Some(joined(&v))
            }
            Err(true) => Some(Vec::new()),
            Err(false) => None,
        };
        if k == 0 {
            agent = names;
        }
    }
    parts.sort();
    let sig = if parts.is_empty() {
        b"-".to_vec()
    } else {
        parts.join(&b'|')
    };
    if agent.as_deref().is_some_and(|b| utf8(b).is_none()) || utf8(&sig).is_none() {
        return null_row(t);
    }
    let c = &mut t.cols;
    c[0].s(agent.as_deref().and_then(utf8));
    c[1].i(steps);
    c[2].s(utf8(&sig));
    c[3].i(Some(total));
    c[4].i(Some(0));
    t.rows += 1;
}
