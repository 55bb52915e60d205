//! Arrow-layout column builders (validity bitmaps LSB first, 64-bit string offsets), read
//! by `evalkit/load/steps/native.py` through `pyarrow.Array.from_buffers`.

#[derive(Default)]
pub struct Bits {
    pub bytes: Vec<u8>,
    pub len: usize,
}

impl Bits {
    #[inline]
    pub fn push(&mut self, b: bool) {
        if self.len % 8 == 0 {
            self.bytes.push(0);
        }
        if b {
            *self.bytes.last_mut().unwrap() |= 1 << (self.len % 8);
        }
        self.len += 1;
    }
}

pub enum Col {
    Str {
        valid: Bits,
        offs: Vec<i64>,
        data: Vec<u8>,
    },
    I64 {
        valid: Bits,
        vals: Vec<i64>,
    },
    F64 {
        valid: Bits,
        vals: Vec<f64>,
    },
    Bool {
        valid: Bits,
        vals: Bits,
    },
}

impl Col {
    pub fn str() -> Col {
        Col::Str {
            valid: Bits::default(),
            offs: vec![0],
            data: Vec::new(),
        }
    }
    pub fn i64() -> Col {
        Col::I64 {
            valid: Bits::default(),
            vals: Vec::new(),
        }
    }
    pub fn f64() -> Col {
        Col::F64 {
            valid: Bits::default(),
            vals: Vec::new(),
        }
    }
    pub fn bool() -> Col {
        Col::Bool {
            valid: Bits::default(),
            vals: Bits::default(),
        }
    }
    #[inline]
    pub fn s(&mut self, v: Option<&str>) {
        if let Col::Str { valid, offs, data } = self {
            valid.push(v.is_some());
            if let Some(t) = v {
                data.extend_from_slice(t.as_bytes());
            }
            offs.push(data.len() as i64);
        }
    }
    #[inline]
    pub fn i(&mut self, v: Option<i64>) {
        if let Col::I64 { valid, vals } = self {
            valid.push(v.is_some());
            vals.push(v.unwrap_or(0));
        }
    }
    #[inline]
    pub fn f(&mut self, v: Option<f64>) {
        if let Col::F64 { valid, vals } = self {
            valid.push(v.is_some());
            vals.push(v.unwrap_or(0.0));
        }
    }
    #[inline]
    pub fn b(&mut self, v: Option<bool>) {
        if let Col::Bool { valid, vals } = self {
            valid.push(v.is_some());
            vals.push(v.unwrap_or(false));
        }
    }
    /// Buffer `part` (0 validity, 1 values / offsets, 2 string data) as (ptr, bytes).
    pub fn buf(&self, part: u32) -> Option<(*const u8, usize)> {
        fn raw<T>(v: &[T]) -> (*const u8, usize) {
            (v.as_ptr() as *const u8, std::mem::size_of_val(v))
        }
        match (self, part) {
            (Col::Str { valid, .. }, 0)
            | (Col::I64 { valid, .. }, 0)
            | (Col::F64 { valid, .. }, 0)
            | (Col::Bool { valid, .. }, 0) => Some(raw(&valid.bytes)),
            (Col::Str { offs, .. }, 1) => Some(raw(offs)),
            (Col::Str { data, .. }, 2) => Some(raw(data)),
            (Col::I64 { vals, .. }, 1) => Some(raw(vals)),
            (Col::F64 { vals, .. }, 1) => Some(raw(vals)),
            (Col::Bool { vals, .. }, 1) => Some(raw(&vals.bytes)),
            _ => None,
        }
    }
}

/// Columns of one table, in the order `native.py` declares them.
pub struct Table {
    pub cols: Vec<Col>,
    pub rows: usize,
}

impl Table {
    pub fn new(kinds: &str) -> Table {
        let cols = kinds
            .bytes()
            .map(|k| match k {
                b's' => Col::str(),
                b'i' => Col::i64(),
                b'f' => Col::f64(),
                _ => Col::bool(),
            })
            .collect();
        Table { cols, rows: 0 }
    }
}

impl Bits {
    pub fn truncate(&mut self, len: usize) {
        self.len = len;
        self.bytes.truncate(len.div_ceil(8));
        if len % 8 != 0 {
            if let Some(b) = self.bytes.last_mut() {
                *b &= (1u8 << (len % 8)) - 1;
            }
        }
    }
}

impl Col {
    fn truncate(&mut self, n: usize) {
        match self {
            Col::Str { valid, offs, data } => {
                valid.truncate(n);
                offs.truncate(n + 1);
                data.truncate(*offs.last().unwrap_or(&0) as usize);
            }
            Col::I64 { valid, vals } => {
                valid.truncate(n);
                vals.truncate(n);
            }
            Col::F64 { valid, vals } => {
                valid.truncate(n);
                vals.truncate(n);
            }
            Col::Bool { valid, vals } => {
                valid.truncate(n);
                vals.truncate(n);
            }
        }
    }
}

impl Col {
    /// Drop the last value (a row being rewritten).
    pub fn truncate_last(&mut self) {
        let n = match self {
            Col::Str { valid, .. }
            | Col::I64 { valid, .. }
            | Col::F64 { valid, .. }
            | Col::Bool { valid, .. } => valid.len,
        };
        self.truncate(n.saturating_sub(1));
    }
}

impl Table {
    pub fn mark(&self) -> usize {
        self.rows
    }
    /// Drop the rows added since `mark` (a document that fell back half-way).
    pub fn rollback(&mut self, mark: usize) {
        for c in &mut self.cols {
            c.truncate(mark);
        }
        self.rows = mark;
    }
}
