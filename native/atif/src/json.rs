//! A strict JSON parser into a borrowed DOM.
//!
//! It accepts a subset of what orjson accepts (never more): UTF-8 without BOM, no NaN /
//! Infinity, no trailing commas, no leading zeros, no raw control characters in strings,
//! no lone surrogates, finite numbers, depth <= MAX_DEPTH. Objects with a repeated key are
//! refused too (orjson keeps the last value at the first key's position; the caller hands
//! such documents to the Python path). Integers follow orjson: within [i64::MIN, u64::MAX]
//! they are integers, outside they are floats.

use std::borrow::Cow;

pub const MAX_DEPTH: usize = 512;

#[derive(Debug)]
pub enum V<'a> {
    Null,
    Bool(bool),
    Int(i64),
    UInt(u64),
    Float(f64),
    Str(Cow<'a, str>),
    Arr(Vec<V<'a>>),
    Obj(Vec<(Cow<'a, str>, V<'a>)>),
}

impl<'a> V<'a> {
    /// Python truthiness of the value orjson would produce.
    pub fn truthy(&self) -> bool {
        match self {
            V::Null => false,
            V::Bool(b) => *b,
            V::Int(i) => *i != 0,
            V::UInt(u) => *u != 0,
            V::Float(f) => *f != 0.0,
            V::Str(s) => !s.is_empty(),
            V::Arr(a) => !a.is_empty(),
            V::Obj(o) => !o.is_empty(),
        }
    }
    /// `dict.get(key)` (None when not an object or key absent).
    pub fn get(&self, key: &str) -> Option<&V<'a>> {
        match self {
            V::Obj(o) => o.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }
    pub fn as_str(&self) -> Option<&str> {
        match self {
            V::Str(s) => Some(s),
            _ => None,
        }
    }
    pub fn is_obj(&self) -> bool {
        matches!(self, V::Obj(_))
    }
}

pub struct Bad;

/// Which parts of a document the extractor reads: everything under `All`; only the listed
/// keys of an object under `Keys` (other values are validated and skipped, not built);
/// each item of an array under `Items`.
pub enum Node {
    All,
    Keys(&'static [(&'static str, Node)]),
    Items(&'static Node),
}

struct P<'a> {
    s: &'a [u8],
    text: &'a str,
    i: usize,
}

/// Parse a whole document (the bytes must hold exactly one JSON value), building only the
/// parts `node` asks for; the rest is validated as strictly.
pub fn parse_sel<'a>(bytes: &'a [u8], node: &Node) -> Result<V<'a>, Bad> {
    let text = std::str::from_utf8(bytes).map_err(|_| Bad)?;
    let mut p = P { s: bytes, text, i: 0 };
    p.ws();
    let v = p.sel(0, node)?;
    p.ws();
    if p.i != p.s.len() {
        return Err(Bad);
    }
    Ok(v)
}

impl<'a> P<'a> {
    #[inline]
    fn ws(&mut self) {
        while self.i < self.s.len() {
            match self.s[self.i] {
                b' ' | b'\n' | b'\r' | b'\t' => self.i += 1,
                _ => break,
            }
        }
    }

    fn sel(&mut self, depth: usize, node: &Node) -> Result<V<'a>, Bad> {
        if depth > MAX_DEPTH || self.i >= self.s.len() {
            return Err(Bad);
        }
        match (node, self.s[self.i]) {
            (Node::Keys(keys), b'{') => self.object(depth, Some(keys)),
            (Node::Items(item), b'[') => self.array(depth, item),
            _ => self.value(depth),
        }
    }

    /// An object: every member (`keys` None), or only the listed keys, the others being
    /// validated and skipped. A repeated key among those kept is refused (orjson keeps
    /// the last value at the first key's place).
    fn object(&mut self, depth: usize, keys: Option<&[(&str, Node)]>) -> Result<V<'a>, Bad> {
        self.i += 1;
        let mut out: Vec<(Cow<'a, str>, V<'a>)> = Vec::new();
        self.ws();
        if self.s.get(self.i) == Some(&b'}') {
            self.i += 1;
            return Ok(V::Obj(out));
        }
        loop {
            self.ws();
            if self.s.get(self.i) != Some(&b'"') {
                return Err(Bad);
            }
            let k = self.string()?;
            self.ws();
            if self.s.get(self.i) != Some(&b':') {
                return Err(Bad);
            }
            self.i += 1;
            self.ws();
            let child = match keys {
                None => Some(&Node::All),
                Some(ks) => ks.iter().find(|(name, _)| *name == k).map(|(_, c)| c),
            };
            match child {
                Some(c) => {
                    let v = self.sel(depth + 1, c)?;
                    if keys.is_some() && out.iter().any(|(x, _)| *x == k) {
                        return Err(Bad);
                    }
                    out.push((k, v));
                }
                None => self.skip(depth + 1)?,
            }
            self.ws();
            match self.s.get(self.i) {
                Some(b',') => self.i += 1,
                Some(b'}') => {
                    self.i += 1;
                    break;
                }
                _ => return Err(Bad),
            }
        }
        if keys.is_none() && has_dup(&out) {
            return Err(Bad);
        }
        Ok(V::Obj(out))
    }

    fn array(&mut self, depth: usize, item: &Node) -> Result<V<'a>, Bad> {
        self.i += 1;
        let mut out = Vec::new();
        self.ws();
        if self.s.get(self.i) == Some(&b']') {
            self.i += 1;
            return Ok(V::Arr(out));
        }
        loop {
            self.ws();
            out.push(self.sel(depth + 1, item)?);
            self.ws();
            match self.s.get(self.i) {
                Some(b',') => self.i += 1,
                Some(b']') => {
                    self.i += 1;
                    return Ok(V::Arr(out));
                }
                _ => return Err(Bad),
            }
        }
    }

    /// Validate one value (as strictly as `value`) without building it.
    fn skip(&mut self, depth: usize) -> Result<(), Bad> {
        if depth > MAX_DEPTH || self.i >= self.s.len() {
            return Err(Bad);
        }
        match self.s[self.i] {
            b'{' | b'[' => {
                let close = if self.s[self.i] == b'{' { b'}' } else { b']' };
                let obj = close == b'}';
                self.i += 1;
                self.ws();
                if self.s.get(self.i) == Some(&close) {
                    self.i += 1;
                    return Ok(());
                }
                loop {
                    self.ws();
                    if obj {
                        if self.s.get(self.i) != Some(&b'"') {
                            return Err(Bad);
                        }
                        self.skip_string()?;
                        self.ws();
                        if self.s.get(self.i) != Some(&b':') {
                            return Err(Bad);
                        }
                        self.i += 1;
                        self.ws();
                    }
                    self.skip(depth + 1)?;
                    self.ws();
                    match self.s.get(self.i) {
                        Some(b',') => self.i += 1,
                        Some(c) if *c == close => {
                            self.i += 1;
                            return Ok(());
                        }
                        _ => return Err(Bad),
                    }
                }
            }
            b'"' => self.skip_string(),
            b'-' | b'0'..=b'9' => self.skip_number(),
            _ => self.value(depth).map(|_| ()),
        }
    }

    /// Validate a number; it is converted only when it could overflow to infinity.
    fn skip_number(&mut self) -> Result<(), Bad> {
        let (end, n) = number_grammar(self.s, self.i)?;
        let start = self.i;
        self.i = end;
        if n.exp || n.int_digits > 300 {
            let f: f64 = self.text[start..end].parse().map_err(|_| Bad)?;
            if !f.is_finite() {
                return Err(Bad);
            }
        }
        Ok(())
    }

    fn skip_string(&mut self) -> Result<(), Bad> {
        let s = self.s;
        let mut j = self.i + 1;
        loop {
            j = special(s, j);
            match s.get(j) {
                None => return Err(Bad),
                Some(b'"') => {
                    self.i = j + 1;
                    return Ok(());
                }
                Some(b'\\') => {
                    match s.get(j + 1) {
                        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => j += 2,
                        Some(b'u') => j = unicode_escape(s, j + 2)?.1,
                        _ => return Err(Bad),
                    }
                }
                Some(_) => return Err(Bad), // a raw control character
            }
        }
    }

    fn value(&mut self, depth: usize) -> Result<V<'a>, Bad> {
        if depth > MAX_DEPTH || self.i >= self.s.len() {
            return Err(Bad);
        }
        match self.s[self.i] {
            b'{' => self.object(depth, None),
            b'[' => self.array(depth, &Node::All),
            b'"' => Ok(V::Str(self.string()?)),
            b't' => self.lit(b"true", V::Bool(true)),
            b'f' => self.lit(b"false", V::Bool(false)),
            b'n' => self.lit(b"null", V::Null),
            b'-' | b'0'..=b'9' => self.number(),
            _ => Err(Bad),
        }
    }

    fn lit(&mut self, word: &[u8], v: V<'a>) -> Result<V<'a>, Bad> {
        if self.s[self.i..].starts_with(word) {
            self.i += word.len();
            Ok(v)
        } else {
            Err(Bad)
        }
    }

    fn string(&mut self) -> Result<Cow<'a, str>, Bad> {
        let start = self.i + 1;
        let s = self.s;
        let mut j = special(s, start);
        match s.get(j) {
            None => return Err(Bad),
            Some(b'"') => {
                self.i = j + 1;
                return Ok(Cow::Borrowed(&self.text[start..j]));
            }
            Some(b'\\') => {}
            Some(_) => return Err(Bad),
        }
        // escapes: build an owned string
        let mut buf = String::with_capacity(j - start + 16);
        buf.push_str(&self.text[start..j]);
        loop {
            if j >= s.len() {
                return Err(Bad);
            }
            let c = s[j];
            if c == b'"' {
                self.i = j + 1;
                return Ok(Cow::Owned(buf));
            }
            if c < 0x20 {
                return Err(Bad);
            }
            if c != b'\\' {
                let run = j;
                j = special(s, j);
                buf.push_str(&self.text[run..j]);
                continue;
            }
            j += 1;
            let e = *s.get(j).ok_or(Bad)?;
            j += 1;
            match e {
                b'"' => buf.push('"'),
                b'\\' => buf.push('\\'),
                b'/' => buf.push('/'),
                b'b' => buf.push('\u{8}'),
                b'f' => buf.push('\u{c}'),
                b'n' => buf.push('\n'),
                b'r' => buf.push('\r'),
                b't' => buf.push('\t'),
                b'u' => {
                    let (c, end) = unicode_escape(s, j)?;
                    j = end;
                    buf.push(c);
                }
                _ => return Err(Bad),
            }
        }
    }

    fn number(&mut self) -> Result<V<'a>, Bad> {
        let (end, n) = number_grammar(self.s, self.i)?;
        let t = &self.text[self.i..end];
        self.i = end;
        if !(n.frac || n.exp) {
            if let Ok(i) = t.parse::<i64>() {
                return Ok(V::Int(i));
            }
            if let Ok(u) = t.parse::<u64>() {
                return Ok(V::UInt(u));
            }
        }
        let f: f64 = t.parse().map_err(|_| Bad)?;
        if !f.is_finite() {
            return Err(Bad);
        }
        Ok(V::Float(f))
    }
}

/// Index of the first '"', '\\' or control byte at or after `j` (s.len() when none);
/// eight bytes at a time.
#[inline]
fn special(s: &[u8], mut j: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    while j + 8 <= s.len() {
        let w = u64::from_le_bytes(s[j..j + 8].try_into().unwrap());
        let q = w ^ (ONES * b'"' as u64);
        let b = w ^ (ONES * b'\\' as u64);
        let m = (q.wrapping_sub(ONES) & !q) | (b.wrapping_sub(ONES) & !b) | (w.wrapping_sub(ONES * 0x20) & !w);
        let m = m & HIGH;
        if m != 0 {
            return j + (m.trailing_zeros() / 8) as usize;
        }
        j += 8;
    }
    while j < s.len() {
        let c = s[j];
        if c == b'"' || c == b'\\' || c < 0x20 {
            return j;
        }
        j += 1;
    }
    j
}

struct NumShape {
    int_digits: usize,
    frac: bool,
    exp: bool,
}

/// The end of the JSON number starting at `j` (strict grammar: no leading zeros, digits
/// after '.' and after the exponent) and its shape.
fn number_grammar(s: &[u8], mut j: usize) -> Result<(usize, NumShape), Bad> {
    let digits = |s: &[u8], mut j: usize| {
        while matches!(s.get(j), Some(b'0'..=b'9')) {
            j += 1;
        }
        j
    };
    if s.get(j) == Some(&b'-') {
        j += 1;
    }
    let int_start = j;
    match s.get(j) {
        Some(b'0') => {
            j += 1;
            if matches!(s.get(j), Some(b'0'..=b'9')) {
                return Err(Bad);
            }
        }
        Some(b'1'..=b'9') => j = digits(s, j),
        _ => return Err(Bad),
    }
    let mut n = NumShape { int_digits: j - int_start, frac: false, exp: false };
    if s.get(j) == Some(&b'.') {
        n.frac = true;
        if !matches!(s.get(j + 1), Some(b'0'..=b'9')) {
            return Err(Bad);
        }
        j = digits(s, j + 1);
    }
    if matches!(s.get(j), Some(b'e') | Some(b'E')) {
        n.exp = true;
        j += 1;
        if matches!(s.get(j), Some(b'+') | Some(b'-')) {
            j += 1;
        }
        if !matches!(s.get(j), Some(b'0'..=b'9')) {
            return Err(Bad);
        }
        j = digits(s, j);
    }
    Ok((j, n))
}

/// The character of a `\\u` escape whose four hex digits start at `j` (a surrogate pair
/// taken together; a lone surrogate is refused, as orjson does) and the index after it.
fn unicode_escape(s: &[u8], j: usize) -> Result<(char, usize), Bad> {
    let hi = hex4(s, j)?;
    let (cp, end) = if (0xD800..0xDC00).contains(&hi) {
        if s.get(j + 4) != Some(&b'\\') || s.get(j + 5) != Some(&b'u') {
            return Err(Bad);
        }
        let lo = hex4(s, j + 6)?;
        if !(0xDC00..0xE000).contains(&lo) {
            return Err(Bad);
        }
        (0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00), j + 10)
    } else if (0xDC00..0xE000).contains(&hi) {
        return Err(Bad);
    } else {
        (hi, j + 4)
    };
    Ok((char::from_u32(cp).ok_or(Bad)?, end))
}

fn hex4(s: &[u8], j: usize) -> Result<u32, Bad> {
    let h = s.get(j..j + 4).ok_or(Bad)?;
    let mut v = 0u32;
    for &c in h {
        v = v * 16
            + match c {
                b'0'..=b'9' => (c - b'0') as u32,
                b'a'..=b'f' => (c - b'a' + 10) as u32,
                b'A'..=b'F' => (c - b'A' + 10) as u32,
                _ => return Err(Bad),
            };
    }
    Ok(v)
}

fn has_dup(o: &[(Cow<'_, str>, V<'_>)]) -> bool {
    if o.len() < 2 {
        return false;
    }
    if o.len() <= 24 {
        for a in 1..o.len() {
            for b in 0..a {
                if o[a].0 == o[b].0 {
                    return true;
                }
            }
        }
        return false;
    }
    let mut seen = std::collections::HashSet::with_capacity(o.len());
    o.iter().any(|(k, _)| !seen.insert(k.as_ref()))
}
