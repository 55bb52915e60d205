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
mod io;
mod json;
mod parse;
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

pub(crate) use io::{read_file, read_into};

#[global_allocator]
static GLOBAL: alloc::Cached = alloc::Cached;

/// Result handle: per thread part, its tables (parse: docs, steps, calls; probe: one).
pub struct Batch {
    parts: Vec<Vec<cols::Table>>,
    /// Text handed out by `ek_errors_json`.
    text: Vec<u8>,
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

/// Several counts in one call (Python asks ~15 of them after a parse; a ctypes call costs
/// 1-3 us): `spec` holds `n` triples (table, column, op), `out` gets `n` values. op 0: rows
/// of the table (column ignored); 1: the `false` values of a Bool column (rows the
/// extractor left to Python), or the nulls of another kind; 2: values of an Int64 column
/// equal to 1; 3: parts of the result (table and column ignored). -1 when out of range.
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
