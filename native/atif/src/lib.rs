//! C ABI of evalkit's ATIF extractor (loaded by `evalkit/load/steps/native.py` via ctypes).
//!
//! `ek_start` sets the pool threads to parse a batch of trial folders and returns;
//! `ek_finish` has the calling thread join them and returns the result (trial.rs: listing
//! through dir.rs, continuations, subagents, labels, errors; extract.rs: per-step values;
//! finish.rs: exit codes, is_error, retried, timestamps; sched.rs, pool.rs: threads): one
//! part of four Arrow-layout tables, steps, calls, trials (a row per folder), errors
//! (column order in extract.rs). A trial the port does not cover exactly gets status 1 and
//! no rows: the Python path handles it. `ek_compare` compares final_metrics totals with the
//! result.json totals Python passes; `ek_counts` / `ek_errors_json` answer what Python asks
//! before taking the tables; `ek_stream` hands a table to Polars as an Arrow C stream in a
//! layout asked by Python (ffi.rs). `ek_warm` wakes the pool ahead of a batch. `ek_probe`
//! lists folders for the cache signatures. The library's allocations go through a
//! per-thread small-block cache (alloc.rs).

mod alloc;
mod cols;
mod dir;
mod extract;
mod ffi;
mod finish;
mod json;
mod paths;
mod pool;
mod probe;
mod scan;
mod sched;
mod ser;
mod shell;
mod sniff;
mod text;
mod trial;

use extract::Out;

#[global_allocator]
static GLOBAL: alloc::Cached = alloc::Cached;
use std::ffi::OsStr;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::panic::{catch_unwind, AssertUnwindSafe};

const O_NONBLOCK: i32 = 0o4000; // Linux (x86_64, aarch64): a FIFO must not block the open

/// Result handle: per thread part, its tables (parse: docs, steps, calls; probe: one).
pub struct Batch {
    parts: Vec<Vec<cols::Table>>,
    /// Text handed out by `ek_errors_json`.
    text: Vec<u8>,
}

/// Open a file for reading (O_NONBLOCK: a FIFO must not block the open); None on error.
pub(crate) fn open_file(path: &[u8]) -> Option<std::fs::File> {
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(O_NONBLOCK)
        .open(OsStr::from_bytes(path))
        .ok()
}

/// Read a regular file within `cap` bytes into `buf` (replacing its content); false on
/// anything else (missing, FIFO, folder, too large, I/O error: the Python path reports it).
pub(crate) fn read_into(path: &[u8], cap: u64, buf: &mut Vec<u8>) -> bool {
    open_file(path).is_some_and(|f| read_file(f, cap, buf))
}

/// `read_into` for a file already open.
pub(crate) fn read_file(mut f: std::fs::File, cap: u64, buf: &mut Vec<u8>) -> bool {
    let Ok(md) = f.metadata() else { return false };
    if !md.is_file() || md.len() > cap {
        return false;
    }
    // one read() for the whole file (read_to_end starts small and grows: 4-5 calls for
    // 80 KB); a file that grew since fstat is read on up to cap
    let want = md.len() as usize + 1;
    buf.clear();
    buf.resize(want, 0);
    let mut got = 0;
    loop {
        match f.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(k) => got += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return false,
        }
        if got == want - 1 {
            break; // the size fstat gave: no read() only to see the end (a file written to
                   // while it is read is a snapshot either way)
        }
        if got == buf.len() {
            if got as u64 > cap {
                return false;
            }
            buf.resize((2 * got).min(cap as usize + 1).max(got + 1), 0);
        }
    }
    buf.truncate(got);
    got as u64 <= cap
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
        t[8].b(Some(false));
        t[9].i(None);
        t[10].b(Some(false));
        out.trials.rows += 1;
    }
}

/// What a thread parsing trials keeps: its tables and its read buffer.
type TrialState = (Out, Vec<u8>);
type TrialInit = Box<dyn Fn() -> TrialState + Send + Sync>;
type TrialWork = Box<dyn Fn(&mut TrialState, usize) + Send + Sync>;

/// A parse started by `ek_start`, to be finished by `ek_finish`.
pub struct Pending(sched::Started<TrialState, TrialInit, TrialWork>);

/// Start parsing the trajectories of `n` trial folders (paths concatenated in `dirs`,
/// boundaries in `offs[0..=n]`; copied, the caller may free them) on `threads` threads:
/// the pool threads begin now, and `ek_finish` has the calling thread join them and
/// returns the result (tables per part: steps, calls, trials, errors).
///
/// # Safety
/// `dirs` must hold `offs[n]` bytes and `offs` n + 1 offsets.
#[no_mangle]
pub unsafe extern "C" fn ek_start(
    dirs: *const u8,
    offs: *const u64,
    n: u64,
    cap: u64,
    threads: u32,
) -> *mut Pending {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| std::panic::set_hook(Box::new(|_| {})));
    let n = n as usize;
    let offs = std::slice::from_raw_parts(offs, n + 1).to_vec();
    let all = std::slice::from_raw_parts(dirs, offs[n] as usize).to_vec();
    let init: TrialInit = Box::new(|| (Out::new(), Vec::new()));
    let work: TrialWork = Box::new(move |(o, buf), i| {
        let dir = &all[offs[i] as usize..offs[i + 1] as usize];
        one_trial(dir, i as i64, cap, o, buf)
    });
    Box::into_raw(Box::new(Pending(sched::start(n, threads, init, work))))
}

/// Finish a parse `ek_start` began (this thread works too) and return its result.
///
/// # Safety
/// `p` must come from `ek_start` and not be finished yet (it is freed here).
#[no_mangle]
pub unsafe extern "C" fn ek_finish(p: *mut Pending) -> *mut Batch {
    let pending = Box::from_raw(p);
    let parts = vec![pending.0.finish().unwrap_or_default()];
    Box::into_raw(Box::new(Batch {
        parts,
        text: Vec::new(),
    }))
}

/// Compare the final_metrics totals of the parsed trials (status 0) of an `ek_finish`
/// result with the trials' result.json totals (`totals`: 4 * n values, input, output,
/// cache tokens, cost, each total's n values in a row; NaN = unknown) into the TRIALS
/// table's `differ` column (`trial::totals_differ`); returns how many differ, or -1 when
/// the TRIALS table does not have `n` rows.
///
/// # Safety
/// `b` must come from `ek_finish`, its TRIALS table not taken; `totals` must
/// hold 4 * n values.
#[no_mangle]
pub unsafe extern "C" fn ek_compare(b: *mut Batch, totals: *const f64, n: u64) -> i64 {
    let n = n as usize;
    let batch = &mut *b;
    let Some(tb) = batch.parts.get_mut(0).and_then(|p| p.get_mut(2)) else {
        return -1;
    };
    if tb.rows != n {
        return -1;
    }
    let t = std::slice::from_raw_parts(totals, 4 * n);
    let mut differ = vec![false; n];
    for (i, d) in differ.iter_mut().enumerate() {
        if tb.cols[0].int_at(i) != Some(0) {
            continue; // not parsed here: nothing to compare
        }
        let fm = [3, 4, 5, 6].map(|c| tb.cols[c].float_at(i));
        *d = trial::totals_differ(&fm, &[t[i], t[n + i], t[2 * n + i], t[3 * n + i]]);
    }
    let count = differ.iter().filter(|&&d| d).count();
    tb.cols[10] = cols::Col::bools(&differ);
    count as i64
}

/// Start the pool threads a batch of `helpers` + 1 threads uses and have them spin for up
/// to `ns` nanoseconds (at most 5 ms): Python calls this before it prepares a batch, so
/// `ek_start` finds them awake (waking a sleeping thread costs 30-80 us on a VM).
#[no_mangle]
pub extern "C" fn ek_warm(helpers: u32, ns: u64) {
    pool::warm(helpers as usize, ns);
}

impl sched::State for (Out, Vec<u8>) {
    fn tables(&self) -> Vec<&cols::Table> {
        let o = &self.0;
        vec![&o.steps, &o.calls, &o.trials, &o.errors]
    }
    fn into_tables(self) -> Vec<cols::Table> {
        let o = self.0;
        vec![o.steps, o.calls, o.trials, o.errors]
    }
}

impl sched::State for cols::Table {
    fn tables(&self) -> Vec<&cols::Table> {
        vec![self]
    }
    fn into_tables(self) -> Vec<cols::Table> {
        vec![self]
    }
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
    let init = || cols::Table::new(probe::PROBE_KINDS);
    let work = |tb: &mut cols::Table, i: usize| probe::probe(dir(i), sign != 0, tb);
    let parts = vec![sched::run(n, threads, init, work).unwrap_or_default()];
    Box::into_raw(Box::new(Batch {
        parts,
        text: Vec::new(),
    }))
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
        text: Vec::new(),
    }))
}

/// The column layout this build writes (kinds of steps | calls | trials | errors | probe
/// tables, then an ABI revision): native.py refuses a library whose layout differs from
/// its own (a stale build after an update), and uses the Python path instead.
#[no_mangle]
pub extern "C" fn ek_layout() -> *const u8 {
    concat!(
        "iisbisssssiiifisbisi|iiisbssssssbisibsbib|iiiffffsbib|isss|sisii|5",
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

/// Table `t` of part `p` as an Arrow C stream of one record batch (see ffi.rs), the
/// table moved out of the result (its rows are then 0). Column c of the batch is named
/// `names[c]`, has Arrow format `formats[c]` (both '\0'-separated) and comes from
/// `sources[c]`: k >= 0 the table's column k (each at most once), -1 all null, -2 the
/// trial id (`ids`, boundaries in `id_offs[0..=n_ids]`) at the position held in the
/// row's column 0, -3 the trial id at the row's position (each id column at most once). Null when these do not fit the table. Free with `ek_stream_free`
/// (after the consumer has taken the stream, or not).
///
/// # Safety
/// `b` must come from `ek_finish` and not be freed; the byte ranges must be readable,
/// `sources` must hold `n_cols` values and `id_offs` n_ids + 1 when ids are used.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn ek_stream(
    b: *mut Batch,
    p: u32,
    t: u32,
    names: *const u8,
    names_len: u64,
    formats: *const u8,
    formats_len: u64,
    sources: *const i64,
    n_cols: u64,
    ids: *const u8,
    id_offs: *const u64,
    n_ids: u64,
    keep: i64,
) -> *mut ffi::ArrowArrayStream {
    let batch = &mut *b;
    let Some(tb) = batch
        .parts
        .get_mut(p as usize)
        .and_then(|x| x.get_mut(t as usize))
    else {
        return std::ptr::null_mut();
    };
    let split = |ptr: *const u8, len: u64| -> Option<Vec<&str>> {
        let s = std::str::from_utf8(std::slice::from_raw_parts(ptr, len as usize)).ok()?;
        Some(s.split('\0').collect())
    };
    let (Some(names), Some(formats)) = (split(names, names_len), split(formats, formats_len))
    else {
        return std::ptr::null_mut();
    };
    let Some(sources) = std::slice::from_raw_parts(sources, n_cols as usize)
        .iter()
        .map(|&k| match k {
            -1 => Some(ffi::Source::Null),
            -2 => Some(ffi::Source::Id),
            -3 => Some(ffi::Source::RowId),
            k => usize::try_from(k).ok().map(ffi::Source::Col),
        })
        .collect::<Option<Vec<_>>>()
    else {
        return std::ptr::null_mut();
    };
    let ids = (!ids.is_null()).then(|| {
        let offs = std::slice::from_raw_parts(id_offs, n_ids as usize + 1);
        (
            std::slice::from_raw_parts(ids, offs[n_ids as usize] as usize),
            offs,
        )
    });
    let table = std::mem::replace(tb, cols::Table::new(""));
    let keep = usize::try_from(keep).ok();
    ffi::stream(table, &names, &formats, &sources, ids, keep).unwrap_or(std::ptr::null_mut())
}

/// Values of column `c` of table `t` in part `p` that are `false` (a Bool column: rows the
/// extractor left to Python) or, for another kind, that are null; -1 when out of range.
///
/// # Safety
/// `b` must come from `ek_finish` / `ek_probe` and not be freed.
#[no_mangle]
pub unsafe extern "C" fn ek_count(b: *const Batch, p: u32, t: u32, c: u32) -> i64 {
    let Some(col) = table(&*b, p, t).and_then(|x| x.cols.get(c as usize)) else {
        return -1;
    };
    col.count_false_or_null() as i64
}

/// Several counts in one call (Python asks ~15 of them after a parse; a ctypes call costs
/// 1-3 us): `spec` holds `n` triples (table, column, op), `out` gets `n` values. op 0: rows
/// of the table (column ignored); 1: `ek_count`; 2: values of an Int64 column equal to 1;
/// 3: parts of the result (table and column ignored). -1 when out of range.
///
/// # Safety
/// `b` must come from `ek_finish` / `ek_probe` and not be freed; `spec` must hold 3 * n
/// values and `out` n writable ones.
#[no_mangle]
pub unsafe extern "C" fn ek_counts(
    b: *const Batch,
    p: u32,
    spec: *const u32,
    n: u64,
    out: *mut i64,
) {
    let spec = std::slice::from_raw_parts(spec, 3 * n as usize);
    let out = std::slice::from_raw_parts_mut(out, n as usize);
    for (k, s) in spec.chunks_exact(3).enumerate() {
        let tb = table(&*b, p, s[0]);
        let col = || tb.and_then(|x| x.cols.get(s[1] as usize));
        out[k] = match s[2] {
            0 => tb.map_or(-1, |x| x.rows as i64),
            1 => col().map_or(-1, |c| c.count_false_or_null() as i64),
            2 => match col() {
                Some(cols::Col::I64 { vals, .. }) => {
                    vals.iter().filter(|&&v| v == 1).count() as i64
                }
                _ => -1,
            },
            3 => (*b).parts.len() as i64,
            _ => -1,
        };
    }
}

/// The values of Int64 column `c` of table `t` in part `p` (a null reads as 0), for
/// `ek_rows` of them; null when out of range or not an Int64 column. Valid until the
/// table is taken or the result freed.
///
/// # Safety
/// `b` must come from `ek_finish` / `ek_probe` and not be freed.
#[no_mangle]
pub unsafe extern "C" fn ek_ints(b: *const Batch, p: u32, t: u32, c: u32) -> *const i64 {
    match table(&*b, p, t).and_then(|x| x.cols.get(c as usize)) {
        Some(cols::Col::I64 { vals, .. }) => vals.as_ptr(),
        _ => std::ptr::null(),
    }
}

/// The error rows of part `p` (table 3) as JSON text, `[[trial, path, kind, message],
/// ...]`, its length in `len` (valid until the result is freed).
///
/// # Safety
/// `b` must come from `ek_finish` and not be freed; `len` must be writable.
#[no_mangle]
pub unsafe extern "C" fn ek_errors_json(b: *mut Batch, p: u32, len: *mut u64) -> *const u8 {
    let batch = &mut *b;
    let text = match table(batch, p, 3) {
        Some(tb) => cols::to_json_rows(tb),
        None => b"[]".to_vec(),
    };
    batch.text = text;
    *len = batch.text.len() as u64;
    batch.text.as_ptr()
}

/// # Safety
/// `s` must come from `ek_stream` and not be freed.
#[no_mangle]
pub unsafe extern "C" fn ek_stream_free(s: *mut ffi::ArrowArrayStream) {
    ffi::free(s);
}

/// # Safety
/// `b` must come from `ek_parse`; it is invalid afterwards.
#[no_mangle]
pub unsafe extern "C" fn ek_free(b: *mut Batch) {
    if !b.is_null() {
        drop(Box::from_raw(b));
    }
}
