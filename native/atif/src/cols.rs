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
        if self.len.is_multiple_of(8) {
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
        if !len.is_multiple_of(8) {
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

impl Bits {
    /// Append bits `a..b` of `other`.
    fn append_range(&mut self, other: &Bits, a: usize, b: usize) {
        if self.len.is_multiple_of(8) && a.is_multiple_of(8) {
            // whole bytes; the last one masked to the bits taken
            let (from, to) = (a / 8, b.div_ceil(8));
            self.bytes.extend_from_slice(&other.bytes[from..to]);
            self.len += b - a;
            if !self.len.is_multiple_of(8) {
                *self.bytes.last_mut().unwrap() &= (1u8 << (self.len % 8)) - 1;
            }
            return;
        }
        for i in a..b {
            self.push(other.get(i));
        }
    }
}

impl Col {
    /// Append rows `a..b` of `other` (same kind).
    fn append_rows(&mut self, other: &Col, a: usize, b: usize) {
        match (self, other) {
            (
                Col::Str { valid, offs, data },
                Col::Str {
                    valid: v2,
                    offs: o2,
                    data: d2,
                },
            ) => {
                valid.append_range(v2, a, b);
                let shift = data.len() as i64 - o2[a];
                offs.extend(o2[a + 1..=b].iter().map(|o| o + shift));
                data.extend_from_slice(&d2[o2[a] as usize..o2[b] as usize]);
            }
            (
                Col::I64 { valid, vals },
                Col::I64 {
                    valid: v2,
                    vals: x2,
                },
            ) => {
                valid.append_range(v2, a, b);
                vals.extend_from_slice(&x2[a..b]);
            }
            (
                Col::F64 { valid, vals },
                Col::F64 {
                    valid: v2,
                    vals: x2,
                },
            ) => {
                valid.append_range(v2, a, b);
                vals.extend_from_slice(&x2[a..b]);
            }
            (
                Col::Bool { valid, vals },
                Col::Bool {
                    valid: v2,
                    vals: x2,
                },
            ) => {
                valid.append_range(v2, a, b);
                vals.append_range(x2, a, b);
            }
            _ => unreachable!("tables of one layout"),
        }
    }
    fn empty_like(&self) -> Col {
        match self {
            Col::Str { .. } => Col::str(),
            Col::I64 { .. } => Col::i64(),
            Col::F64 { .. } => Col::f64(),
            Col::Bool { .. } => Col::bool(),
        }
    }
    fn reserve_like(&mut self, rows: usize, bytes: usize) {
        match self {
            Col::Str { valid, offs, data } => {
                valid.bytes.reserve(rows.div_ceil(8) + 1);
                offs.reserve(rows);
                data.reserve(bytes);
            }
            Col::I64 { valid, vals } => {
                valid.bytes.reserve(rows.div_ceil(8) + 1);
                vals.reserve(rows);
            }
            Col::F64 { valid, vals } => {
                valid.bytes.reserve(rows.div_ceil(8) + 1);
                vals.reserve(rows);
            }
            Col::Bool { valid, vals } => {
                valid.bytes.reserve(rows.div_ceil(8) + 1);
                vals.bytes.reserve(rows.div_ceil(8) + 1);
            }
        }
    }
    fn data_len(&self) -> usize {
        match self {
            Col::Str { data, .. } => data.len(),
            _ => 0,
        }
    }
}

impl Table {
    /// A table of the same layout, no rows.
    pub fn empty_like(&self) -> Table {
        Table {
            cols: self.cols.iter().map(Col::empty_like).collect(),
            rows: 0,
        }
    }
    /// Room for `rows` more rows and the string bytes of `like`'s tables.
    pub fn reserve_like(&mut self, like: &[&Table], rows: usize) {
        for (c, col) in self.cols.iter_mut().enumerate() {
            let bytes = like.iter().map(|t| t.cols[c].data_len()).sum();
            col.reserve_like(rows, bytes);
        }
    }
    /// Append rows `a..b` of `other` (same layout).
    pub fn append_rows(&mut self, other: &Table, a: usize, b: usize) {
        for (col, o) in self.cols.iter_mut().zip(&other.cols) {
            col.append_rows(o, a, b);
        }
        self.rows += b - a;
    }
}

impl Bits {
    pub fn get(&self, i: usize) -> bool {
        self.bytes[i / 8] >> (i % 8) & 1 == 1
    }
}

impl Col {
    /// Value `i` of an Int64 column (None: null, or another kind).
    pub fn int_at(&self, i: usize) -> Option<i64> {
        match self {
            Col::I64 { valid, vals } if valid.get(i) => Some(vals[i]),
            _ => None,
        }
    }
    /// Value `i` of a Float64 column (None: null, or another kind).
    pub fn float_at(&self, i: usize) -> Option<f64> {
        match self {
            Col::F64 { valid, vals } if valid.get(i) => Some(vals[i]),
            _ => None,
        }
    }
    /// A Bool column of these values, none null.
    pub fn bools(values: &[bool]) -> Col {
        let mut c = Col::bool();
        for &v in values {
            c.b(Some(v));
        }
        c
    }
}

impl Col {
    /// Valid `false` values of a Bool column; nulls of any other.
    pub fn count_false_or_null(&self) -> usize {
        match self {
            Col::Bool { valid, vals } => (0..valid.len)
                .filter(|&i| valid.get(i) && !vals.get(i))
                .count(),
            Col::Str { valid, .. } | Col::I64 { valid, .. } | Col::F64 { valid, .. } => {
                (0..valid.len).filter(|&i| !valid.get(i)).count()
            }
        }
    }
}

/// The rows of `tb` as a JSON array of arrays (numbers, strings, booleans, null).
pub fn to_json_rows(tb: &Table) -> Vec<u8> {
    let mut out = b"[".to_vec();
    for r in 0..tb.rows {
        out.extend_from_slice(if r == 0 { b"[" } else { b",[" });
        for (k, c) in tb.cols.iter().enumerate() {
            if k > 0 {
                out.push(b',');
            }
            match c {
                Col::I64 { valid, vals } if valid.get(r) => {
                    out.extend_from_slice(vals[r].to_string().as_bytes())
                }
                Col::Bool { valid, vals } if valid.get(r) => {
                    out.extend_from_slice(if vals.get(r) { b"true" } else { b"false" })
                }
                Col::F64 { valid, vals } if valid.get(r) && vals[r].is_finite() => {
                    out.extend_from_slice(format!("{:?}", vals[r]).as_bytes())
                }
                Col::Str { valid, offs, data } if valid.get(r) => {
                    json_string(&data[offs[r] as usize..offs[r + 1] as usize], &mut out)
                }
                _ => out.extend_from_slice(b"null"),
            }
        }
        out.push(b']');
    }
    out.push(b']');
    out
}

/// A JSON string of UTF-8 `s` (quotes, backslashes and control characters escaped).
fn json_string(s: &[u8], out: &mut Vec<u8>) {
    out.push(b'"');
    for &b in s {
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            0..=0x1f => out.extend_from_slice(format!("\\u{b:04x}").as_bytes()),
            _ => out.push(b),
        }
    }
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bools(b: &Bits) -> Vec<bool> {
        (0..b.len)
            .map(|i| b.bytes[i / 8] >> (i % 8) & 1 == 1)
            .collect()
    }

    #[test]
    fn row_ranges_append_every_value_in_order() {
        // uneven ranges so validity and bool bitmaps are appended at every bit offset
        let mut src = Table::new("sib");
        let mut want: Vec<(Option<String>, Option<i64>, Option<bool>)> = Vec::new();
        for r in 0..61usize {
            let s = (r % 3 != 0).then(|| format!("r{r}"));
            let i = (r % 2 == 0).then_some(r as i64);
            let b = (r % 4 != 1).then_some(r % 3 == 1);
            src.cols[0].s(s.as_deref());
            src.cols[1].i(i);
            src.cols[2].b(b);
            src.rows += 1;
            want.push((s, i, b));
        }
        let ranges = [
            (0, 3),
            (3, 3),
            (8, 17),
            (3, 8),
            (17, 18),
            (18, 40),
            (40, 61),
        ];
        let mut got = src.empty_like();
        got.reserve_like(&[&src], src.rows);
        let mut order = Vec::new();
        for &(a, b) in &ranges {
            got.append_rows(&src, a, b);
            order.extend(a..b);
        }
        assert_eq!(got.rows, order.len());
        let (
            Col::Str {
                valid: sv,
                offs,
                data,
            },
            Col::I64 { valid: iv, vals },
            Col::Bool {
                valid: bv,
                vals: bb,
            },
        ) = (&got.cols[0], &got.cols[1], &got.cols[2])
        else {
            panic!("layout");
        };
        assert_eq!(bv.bytes.len(), order.len().div_ceil(8));
        let (sv, iv, bv, bb) = (bools(sv), bools(iv), bools(bv), bools(bb));
        for (r, &k) in order.iter().enumerate() {
            let (s, i, b) = &want[k];
            let text = std::str::from_utf8(&data[offs[r] as usize..offs[r + 1] as usize]).unwrap();
            assert_eq!(sv[r].then_some(text), s.as_deref(), "row {r}");
            assert_eq!(iv[r].then_some(vals[r]), *i, "row {r}");
            assert_eq!(bv[r].then_some(bb[r]), *b, "row {r}");
        }
    }
}
