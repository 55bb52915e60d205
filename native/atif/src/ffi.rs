//! A result table handed to Polars through the Arrow C stream interface
//! (https://arrow.apache.org/docs/format/CStreamInterface.html): one record batch, the
//! table's buffers moved into it (no copy), freed when the consumer releases the batch.
//! `native.py` wraps the stream in a PyCapsule and builds the frame with one
//! `pl.DataFrame(...)` call, instead of a pyarrow array and a Series per column.

use crate::cols::{Col, Table};
use std::ffi::{c_char, c_int, c_void, CString};
use std::ptr::{null, null_mut};

#[repr(C)]
pub struct ArrowSchema {
    format: *const c_char,
    name: *const c_char,
    metadata: *const c_char,
    flags: i64,
    n_children: i64,
    children: *mut *mut ArrowSchema,
    dictionary: *mut ArrowSchema,
    release: Option<unsafe extern "C" fn(*mut ArrowSchema)>,
    private_data: *mut c_void,
}

#[repr(C)]
pub struct ArrowArray {
    length: i64,
    null_count: i64,
    offset: i64,
    n_buffers: i64,
    n_children: i64,
    buffers: *mut *const c_void,
    children: *mut *mut ArrowArray,
    dictionary: *mut ArrowArray,
    release: Option<unsafe extern "C" fn(*mut ArrowArray)>,
    private_data: *mut c_void,
}

#[repr(C)]
pub struct ArrowArrayStream {
    get_schema: Option<unsafe extern "C" fn(*mut ArrowArrayStream, *mut ArrowSchema) -> c_int>,
    get_next: Option<unsafe extern "C" fn(*mut ArrowArrayStream, *mut ArrowArray) -> c_int>,
    get_last_error: Option<unsafe extern "C" fn(*mut ArrowArrayStream) -> *const c_char>,
    release: Option<unsafe extern "C" fn(*mut ArrowArrayStream)>,
    private_data: *mut c_void,
}

/// What the stream yields: the columns, their names and Arrow formats.
struct Batch {
    cols: Vec<Col>,
    rows: usize,
}

struct StreamData {
    batch: Option<Batch>,
    names: Vec<CString>,
    formats: Vec<CString>,
}

/// Arrow format a column of this kind may be exported as.
fn fits(col: &Col, format: &str) -> bool {
    match col {
        Col::I64 { .. } => format == "l" || format.starts_with("ts"),
        Col::F64 { .. } => format == "g",
        Col::Bool { .. } => format == "b",
        Col::Str { .. } => format == "U",
    }
}

/// A column of `rows` nulls in this Arrow format (None for a format not written here).
fn nulls(format: &str, rows: usize) -> Option<Col> {
    let mut c = match format {
        "l" => Col::i64(),
        f if f.starts_with("ts") => Col::i64(),
        "g" => Col::f64(),
        "b" => Col::bool(),
        "U" => Col::str(),
        _ => return None,
    };
    for _ in 0..rows {
        match &mut c {
            Col::I64 { .. } => c.i(None),
            Col::F64 { .. } => c.f(None),
            Col::Bool { .. } => c.b(None),
            Col::Str { .. } => c.s(None),
        }
    }
    Some(c)
}

/// Where an exported column comes from.
pub enum Source {
    /// Column k of the table (each at most once).
    Col(usize),
    /// All null.
    Null,
    /// The trial id at the position held in the row's column 0.
    Id,
    /// The trial id at the row's own position (tables with a row per trial).
    RowId,
}

/// A stream over `table` giving the columns `names` (Arrow `formats`, from `sources`);
/// `ids` = (bytes, boundaries) of the trial ids when a column is `Source::Id`; `keep`: only
/// the rows whose Bool column `keep` is true. None when these do not fit the table.
pub fn stream(
    table: Table,
    names: &[&str],
    formats: &[&str],
    sources: &[Source],
    ids: Option<(&[u8], &[u64])>,
    keep: Option<usize>,
) -> Option<*mut ArrowArrayStream> {
    if names.len() != sources.len() || formats.len() != sources.len() {
        return None;
    }
    let mask: Option<Vec<bool>> = match keep {
        None => None,
        Some(k) => match table.cols.get(k)? {
            Col::Bool { valid, vals } => Some(
                (0..table.rows)
                    .map(|i| valid.get(i) && vals.get(i))
                    .collect(),
            ),
            _ => return None,
        },
    };
    let Table { cols, rows } = table;
    let ids_of = |pos: &mut dyn Iterator<Item = i64>| -> Option<Col> {
        let (data, offs) = ids?;
        let n = offs.len().checked_sub(1)?;
        let mut col = Col::str();
        for k in pos {
            let k = usize::try_from(k).ok().filter(|k| *k < n)?;
            let id = data.get(offs[k] as usize..offs[k + 1] as usize)?;
            col.s(Some(std::str::from_utf8(id).ok()?));
        }
        Some(col)
    };
    let mut id_col = None;
    if sources.iter().any(|s| matches!(s, Source::Id)) {
        let Col::I64 { vals, .. } = cols.first()? else {
            return None;
        };
        id_col = Some(ids_of(&mut vals.iter().take(rows).copied())?);
    }
    let mut row_id_col = None;
    if sources.iter().any(|s| matches!(s, Source::RowId)) {
        row_id_col = Some(ids_of(&mut (0..rows as i64))?);
    }
    let mut pool: Vec<Option<Col>> = cols.into_iter().map(Some).collect();
    let mut out = Vec::with_capacity(sources.len());
    for (src, f) in sources.iter().zip(formats) {
        let col = match src {
            Source::Col(k) => pool.get_mut(*k)?.take()?,
            Source::Null => nulls(f, rows)?,
            Source::Id => id_col.take()?,
            Source::RowId => row_id_col.take()?,
        };
        if !fits(&col, f) {
            return None;
        }
        out.push(col);
    }
    let (out, rows) = match mask {
        Some(m) if m.contains(&false) => keep_rows(out, rows, &m),
        _ => (out, rows),
    };
    let data = StreamData {
        batch: Some(Batch { cols: out, rows }),
        names: names
            .iter()
            .map(|s| CString::new(*s).ok())
            .collect::<Option<_>>()?,
        formats: formats
            .iter()
            .map(|s| CString::new(*s).ok())
            .collect::<Option<_>>()?,
    };
    Some(Box::into_raw(Box::new(ArrowArrayStream {
        get_schema: Some(get_schema),
        get_next: Some(get_next),
        get_last_error: Some(last_error),
        release: Some(release_stream),
        private_data: Box::into_raw(Box::new(data)) as *mut c_void,
    })))
}

/// The rows of `cols` where `mask` is true (each run of kept rows copied at once).
fn keep_rows(cols: Vec<Col>, rows: usize, mask: &[bool]) -> (Vec<Col>, usize) {
    let src = Table { cols, rows };
    let mut out = src.empty_like();
    let mut i = 0;
    while i < rows {
        let a = i;
        while i < rows && mask[i] {
            i += 1;
        }
        if i > a {
            out.append_rows(&src, a, i);
        }
        i += 1; // a dropped row (or the end)
    }
    (out.cols, out.rows)
}

/// Free a stream made by `stream` (released first if the consumer did not take it).
///
/// # Safety
/// `s` must come from `stream` and not be freed.
pub unsafe fn free(s: *mut ArrowArrayStream) {
    if s.is_null() {
        return;
    }
    if let Some(rel) = (*s).release {
        rel(s);
    }
    drop(Box::from_raw(s));
}

struct SchemaData {
    _formats: Vec<CString>,
    _names: Vec<CString>,
    _children: Vec<ArrowSchema>,
    ptrs: Vec<*mut ArrowSchema>,
}

unsafe extern "C" fn get_schema(s: *mut ArrowArrayStream, out: *mut ArrowSchema) -> c_int {
    let d = &*((*s).private_data as *const StreamData);
    // the schema owns copies of the strings (it may outlive the stream); a CString's
    // bytes stay where they are when the Vec holding it moves
    let (formats, names) = (d.formats.clone(), d.names.clone());
    let mut children: Vec<ArrowSchema> = names
        .iter()
        .zip(&formats)
        .map(|(n, f)| ArrowSchema {
            format: f.as_ptr(),
            name: n.as_ptr(),
            metadata: null(),
            flags: 2, // nullable
            n_children: 0,
            children: null_mut(),
            dictionary: null_mut(),
            release: Some(release_child_schema),
            private_data: null_mut(),
        })
        .collect();
    let ptrs: Vec<*mut ArrowSchema> = children.iter_mut().map(|c| c as *mut _).collect();
    let mut data = Box::new(SchemaData {
        _formats: formats,
        _names: names,
        _children: children,
        ptrs,
    });
    let n = data.ptrs.len() as i64;
    let children = data.ptrs.as_mut_ptr();
    out.write(ArrowSchema {
        format: c"+s".as_ptr(),
        name: c"".as_ptr(),
        metadata: null(),
        flags: 0,
        n_children: n,
        children,
        dictionary: null_mut(),
        release: Some(release_schema),
        private_data: Box::into_raw(data) as *mut c_void,
    });
    0
}

unsafe extern "C" fn release_child_schema(s: *mut ArrowSchema) {
    (*s).release = None; // its memory belongs to the parent
}

unsafe extern "C" fn release_schema(s: *mut ArrowSchema) {
    let data = Box::from_raw((*s).private_data as *mut SchemaData);
    for &c in &data.ptrs {
        if let Some(rel) = (*c).release {
            rel(c);
        }
    }
    drop(data);
    (*s).release = None;
}

struct ArrayData {
    _batch: Batch,
    children: Vec<ArrowArray>,
    ptrs: Vec<*mut ArrowArray>,
    bufs: Vec<[*const c_void; 3]>,
    root_bufs: [*const c_void; 1],
}

fn null_count(valid: &crate::cols::Bits) -> i64 {
    let ones: u32 = valid.bytes.iter().map(|b| b.count_ones()).sum();
    valid.len as i64 - ones as i64
}

unsafe extern "C" fn get_next(s: *mut ArrowArrayStream, out: *mut ArrowArray) -> c_int {
    let d = &mut *((*s).private_data as *mut StreamData);
    let Some(batch) = d.batch.take() else {
        // end of stream: a released array
        out.write(ArrowArray {
            length: 0,
            null_count: 0,
            offset: 0,
            n_buffers: 0,
            n_children: 0,
            buffers: null_mut(),
            children: null_mut(),
            dictionary: null_mut(),
            release: None,
            private_data: null_mut(),
        });
        return 0;
    };
    let rows = batch.rows as i64;
    let mut bufs: Vec<[*const c_void; 3]> = Vec::with_capacity(batch.cols.len());
    let mut nulls = Vec::with_capacity(batch.cols.len());
    for c in &batch.cols {
        let (valid, b1, b2) = match c {
            Col::Str { valid, offs, data } => (
                valid,
                offs.as_ptr() as *const c_void,
                data.as_ptr() as *const c_void,
            ),
            Col::I64 { valid, vals } => (valid, vals.as_ptr() as *const c_void, null()),
            Col::F64 { valid, vals } => (valid, vals.as_ptr() as *const c_void, null()),
            Col::Bool { valid, vals } => (valid, vals.bytes.as_ptr() as *const c_void, null()),
        };
        let nc = null_count(valid);
        // a validity bitmap may be left out when nothing is null
        let v = if nc == 0 {
            null()
        } else {
            valid.bytes.as_ptr() as *const c_void
        };
        bufs.push([v, b1, b2]);
        nulls.push(nc);
    }
    let mut children: Vec<ArrowArray> = Vec::with_capacity(bufs.len());
    for (k, c) in batch.cols.iter().enumerate() {
        children.push(ArrowArray {
            length: rows,
            null_count: nulls[k],
            offset: 0,
            n_buffers: if matches!(c, Col::Str { .. }) { 3 } else { 2 },
            n_children: 0,
            buffers: null_mut(), // set below, once `bufs` no longer moves
            children: null_mut(),
            dictionary: null_mut(),
            release: Some(release_child_array),
            private_data: null_mut(),
        });
    }
    let mut data = Box::new(ArrayData {
        _batch: batch,
        children,
        ptrs: Vec::new(),
        bufs,
        root_bufs: [null()],
    });
    let data_ref = &mut *data;
    for (c, b) in data_ref.children.iter_mut().zip(data_ref.bufs.iter_mut()) {
        c.buffers = b.as_mut_ptr();
    }
    data_ref.ptrs = data_ref.children.iter_mut().map(|c| c as *mut _).collect();
    let n_children = data_ref.ptrs.len() as i64;
    let children = data_ref.ptrs.as_mut_ptr();
    let buffers = data_ref.root_bufs.as_mut_ptr();
    out.write(ArrowArray {
        length: rows,
        null_count: 0,
        offset: 0,
        n_buffers: 1,
        n_children,
        buffers,
        children,
        dictionary: null_mut(),
        release: Some(release_array),
        private_data: Box::into_raw(data) as *mut c_void,
    });
    0
}

unsafe extern "C" fn release_child_array(a: *mut ArrowArray) {
    (*a).release = None; // its buffers belong to the parent
}

unsafe extern "C" fn release_array(a: *mut ArrowArray) {
    let data = Box::from_raw((*a).private_data as *mut ArrayData);
    for &c in &data.ptrs {
        if let Some(rel) = (*c).release {
            rel(c);
        }
    }
    drop(data);
    (*a).release = None;
}

unsafe extern "C" fn last_error(_s: *mut ArrowArrayStream) -> *const c_char {
    null()
}

unsafe extern "C" fn release_stream(s: *mut ArrowArrayStream) {
    drop(Box::from_raw((*s).private_data as *mut StreamData));
    (*s).release = None;
}
