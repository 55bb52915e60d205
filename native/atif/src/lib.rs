//! C ABI of evalkit's ATIF extractor (loaded by `evalkit/load/steps/native.py` via ctypes).
//!
//! `ek_parse` reads and extracts a batch of trajectory files on `threads` threads and returns
//! a handle holding one part per thread, each with three Arrow-layout tables (docs, steps,
//! calls; column order in extract.rs). A file that cannot be read as a regular file under
//! the size cap, is not strict JSON, or needs a rule the port does not cover, gets docs
//! status 1 and no rows: the Python path handles it (and reports its errors).

mod cols;
mod extract;
mod finish;
mod json;
mod paths;
mod probe;
mod scan;
mod ser;
mod shell;
mod sniff;
mod text;
mod trial;

use extract::Out;
use std::ffi::OsStr;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::panic::{catch_unwind, AssertUnwindSafe};

const O_NONBLOCK: i32 = 0o4000; // Linux (x86_64, aarch64): a FIFO must not block the open

/// Result handle: per thread part, its tables (parse: docs, steps, calls; probe: one).
pub struct Batch {
    parts: Vec<Vec<cols::Table>>,
}

/// Read a regular file within `cap` bytes into `buf` (replacing its content); false on
/// anything else (missing, FIFO, folder, too large, I/O error: the Python path reports it).
pub(crate) fn read_into(path: &[u8], cap: u64, buf: &mut Vec<u8>) -> bool {
    let Ok(f) = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(O_NONBLOCK)
        .open(OsStr::from_bytes(path))
    else {
        return false;
    };
    let Ok(md) = f.metadata() else { return false };
    if !md.is_file() || md.len() > cap {
        return false;
    }
    buf.clear();
    buf.reserve(md.len() as usize + 1);
    if f.take(cap + 1).read_to_end(buf).is_err() {
        return false;
    }
    buf.len() as u64 <= cap
}

fn one_trial(dir: &[u8], idx: i64, cap: u64, out: &mut Out, buf: &mut Vec<u8>) {
    let marks = (
        out.steps.mark(),
        out.calls.mark(),
        out.errors.mark(),
        out.trials.mark(),
    );
    out.seen.clear();
    let ok = catch_unwind(AssertUnwindSafe(|| trial::trial(dir, idx, cap, out, buf)));
    if ok.is_err() {
        out.steps.rollback(marks.0);
        out.calls.rollback(marks.1);
        out.errors.rollback(marks.2);
        out.trials.rollback(marks.3);
        let t = &mut out.trials.cols;
        t[0].i(Some(1));
        t[1].i(None);
        t[2].i(None);
        for k in 0..4 {
            t[3 + k].f(None);
        }
        t[7].s(None);
        out.trials.rows += 1;
    }
}

/// Parse the trajectories of `n` trial folders (paths concatenated in `dirs`, boundaries
/// in `offs[0..=n]`) on `threads` threads; tables per part: steps, calls, trials, errors.
///
/// # Safety
/// `dirs` must hold `offs[n]` bytes and `offs` n + 1 offsets.
#[no_mangle]
pub unsafe extern "C" fn ek_trials(
    dirs: *const u8,
    offs: *const u64,
    n: u64,
    cap: u64,
    threads: u32,
) -> *mut Batch {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| std::panic::set_hook(Box::new(|_| {})));
    let n = n as usize;
    let offs = std::slice::from_raw_parts(offs, n + 1);
    let all = std::slice::from_raw_parts(dirs, offs[n] as usize);
    let dir = |i: usize| &all[offs[i] as usize..offs[i + 1] as usize];
    let parts = in_parts(n, threads, |range| {
        let mut o = Out::new();
        let mut buf = Vec::new();
        for i in range {
            one_trial(dir(i), i as i64, cap, &mut o, &mut buf);
        }
        vec![o.steps, o.calls, o.trials, o.errors]
    });
    Box::into_raw(Box::new(Batch { parts }))
}

/// List `n` trial folders (see probe.rs); one table with a row per folder, in order.
///
/// # Safety
/// `dirs` must hold `offs[n]` bytes and `offs` n + 1 offsets.
#[no_mangle]
pub unsafe extern "C" fn ek_probe(
    dirs: *const u8,
    offs: *const u64,
    n: u64,
    sign: u32,
    threads: u32,
) -> *mut Batch {
    let n = n as usize;
    let offs = std::slice::from_raw_parts(offs, n + 1);
    let all = std::slice::from_raw_parts(dirs, offs[n] as usize);
    let dir = |i: usize| &all[offs[i] as usize..offs[i + 1] as usize];
    let parts = in_parts(n, threads, |range| {
        let mut tb = cols::Table::new(probe::PROBE_KINDS);
        for i in range {
            probe::probe(dir(i), sign != 0, &mut tb);
        }
        vec![tb]
    });
    Box::into_raw(Box::new(Batch { parts }))
}

/// Run `work` over `0..n` split into contiguous ranges, one per thread (at most `threads`);
/// the parts come back in order. A worker that panicked leaves an empty part (the caller
/// sees the row count fall short and uses the Python path).
fn in_parts<F>(n: usize, threads: u32, work: F) -> Vec<Vec<cols::Table>>
where
    F: Fn(std::ops::Range<usize>) -> Vec<cols::Table> + Sync,
{
    let t = (threads.max(1) as usize).min(n.max(1));
    let per = n.div_ceil(t).max(1);
    let range = |k: usize| (k * per)..((k + 1) * per).min(n);
    if t <= 1 {
        return vec![work(0..n)];
    }
    std::thread::scope(|sc| {
        let work = &work;
        let hs: Vec<_> = (0..t).map(|k| sc.spawn(move || work(range(k)))).collect();
        hs.into_iter()
            .map(|h| h.join().unwrap_or_default())
            .collect()
    })
}

/// Test hook (`tests/load_steps/test_native_finish.py`): the finishing rules of finish.rs
/// over rows given as a JSON array of `[observation, shell, s_err, s_exit, timestamp]`;
/// one part with one table: exit_code, is_error, is_error_source, fin, ts_us, ts_fin.
/// Null when the text is not such an array.
///
/// # Safety
/// `text` must hold `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn ek_finish_json(text: *const u8, len: u64) -> *mut Batch {
    use json::{parse_sel, Node, V};
    let bytes = std::slice::from_raw_parts(text, len as usize);
    let Ok(V::Arr(rows)) = parse_sel(bytes, &Node::All) else {
        return std::ptr::null_mut();
    };
    let mut tb = cols::Table::new("ibsbib");
    for r in &rows {
        let V::Arr(f) = r else {
            return std::ptr::null_mut();
        };
        let get = |k: usize| f.get(k).filter(|v| !matches!(v, V::Null));
        let obs = get(0).and_then(|v| v.as_str());
        let shell = matches!(get(1), Some(V::Bool(true)));
        let s_err = match get(2) {
            Some(V::Bool(b)) => Some(*b),
            _ => None,
        };
        let s_exit = match get(3) {
            Some(V::Int(i)) => Some(*i),
            _ => None,
        };
        let c = &mut tb.cols;
        if let [code, err, src, fin, ..] = &mut c[..] {
            finish::write(
                finish::signals(obs, shell, s_err, s_exit),
                code,
                err,
                src,
                fin,
            );
        }
        match get(4).and_then(|v| v.as_str()).map(finish::timestamp_us) {
            None => {
                c[4].i(None);
                c[5].b(Some(true));
            }
            Some(Ok(us)) => {
                c[4].i(Some(us));
                c[5].b(Some(true));
            }
            Some(Err(_)) => {
                c[4].i(None);
                c[5].b(Some(false));
            }
        }
        tb.rows += 1;
    }
    Box::into_raw(Box::new(Batch {
        parts: vec![vec![tb]],
    }))
}

/// The column layout this build writes (kinds of steps | calls | trials | errors | probe
/// tables, then an ABI revision): native.py refuses a library whose layout differs from
/// its own (a stale build after an update), and uses the Python path instead.
#[no_mangle]
pub extern "C" fn ek_layout() -> *const u8 {
    concat!(
        "iisbisssssiiifisbisi|iiisbssssssbisibsbib|iiiffffs|isss|sisii|2",
        "\0"
    )
    .as_ptr()
}

fn table(b: &Batch, part: u32, table: u32) -> Option<&cols::Table> {
    b.parts.get(part as usize)?.get(table as usize)
}

/// # Safety
/// `b` must come from `ek_parse` and not be freed.
#[no_mangle]
pub unsafe extern "C" fn ek_parts(b: *const Batch) -> u32 {
    (*b).parts.len() as u32
}

/// Rows of table `t` (0 docs, 1 steps, 2 calls) in part `p`; -1 when out of range.
///
/// # Safety
/// `b` must come from `ek_parse` and not be freed.
#[no_mangle]
pub unsafe extern "C" fn ek_rows(b: *const Batch, p: u32, t: u32) -> i64 {
    table(&*b, p, t).map_or(-1, |x| x.rows as i64)
}

/// Every buffer of table `t` in part `p` at once: column c's validity, values / offsets
/// and string data at `3c`, `3c + 1`, `3c + 2` of `ptrs` / `lens` (length 0 where a column
/// has no such buffer). Returns the row count, or -1 when out of range or `n` (entries of
/// the arrays) is not 3 x the columns.
///
/// # Safety
/// `b` must come from `ek_trials` / `ek_probe` and not be freed; `ptrs` and `lens` must
/// hold `n` entries.
#[no_mangle]
pub unsafe extern "C" fn ek_bufs(
    b: *const Batch,
    p: u32,
    t: u32,
    ptrs: *mut *const u8,
    lens: *mut u64,
    n: u32,
) -> i64 {
    let Some(tb) = table(&*b, p, t) else {
        return -1;
    };
    if n as usize != 3 * tb.cols.len() {
        return -1;
    }
    let ptrs = std::slice::from_raw_parts_mut(ptrs, n as usize);
    let lens = std::slice::from_raw_parts_mut(lens, n as usize);
    for (c, col) in tb.cols.iter().enumerate() {
        for k in 0..3 {
            let (q, l) = col.buf(k as u32).unwrap_or((std::ptr::null(), 0));
            ptrs[3 * c + k] = q;
            lens[3 * c + k] = l as u64;
        }
    }
    tb.rows as i64
}

/// # Safety
/// `b` must come from `ek_parse`; it is invalid afterwards.
#[no_mangle]
pub unsafe extern "C" fn ek_free(b: *mut Batch) {
    if !b.is_null() {
        drop(Box::from_raw(b));
    }
}
