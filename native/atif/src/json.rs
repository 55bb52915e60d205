//! A strict JSON parser into a borrowed DOM.
//!
//! It accepts a subset of what orjson accepts (never more): UTF-8 without BOM, no NaN /
//! Infinity, no trailing commas, no leading zeros, no raw control characters in strings,
//! no lone surrogates, finite numbers, depth <= MAX_DEPTH. Objects with a repeated key are
//! refused too (orjson keeps the last value at the first key's position; the caller hands
//! such documents to the Python path). Integers follow orjson: within [i64::MIN, u64::MAX]
//! they are integers, outside they are floats.

use crate::scan::{has_dup, number_grammar, special, unicode_escape};
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
    /// Deepest nesting accepted (MAX_DEPTH, or ENV_DEPTH for envelopes).
    limit: usize,
    /// Set when `limit` was what refused the document.
    deep: bool,
    /// serde_json's rule for repeated keys (the last value wins) instead of refusing.
    last_wins: bool,
}

/// Parse a whole document (the bytes must hold exactly one JSON value), building only the
/// parts `node` asks for; the rest is validated as strictly.
pub fn parse_sel<'a>(bytes: &'a [u8], node: &Node) -> Result<V<'a>, Bad> {
    let text = std::str::from_utf8(bytes).map_err(|_| Bad)?;
    let mut p = P {
        s: bytes,
        text,
        i: 0,
        limit: MAX_DEPTH,
        deep: false,
        last_wins: false,
    };
    p.whole(node)
}

/// Below serde_json's recursion limit (128), with a margin.
pub const ENV_DEPTH: usize = 100;

/// Why `parse_env` refused a text.
pub enum EnvBad {
    /// serde_json refuses it too (json_path_match gives null).
    Invalid,
    /// Nested deeper than ENV_DEPTH: serde_json's verdict is not known here.
    Deep,
}

/// A JSON-envelope observation the way Polars' `json_path_match` reads it (serde_json):
/// the same strict grammar, repeated keys keep the last value; only the members
/// `success` and `error` are built.
pub fn parse_env(bytes: &[u8]) -> Result<V<'_>, EnvBad> {
    static KEYS: [(&str, Node); 2] = [("success", Node::All), ("error", Node::All)];
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Err(EnvBad::Invalid);
    };
    let mut p = P {
        s: bytes,
        text,
        i: 0,
        limit: ENV_DEPTH,
        deep: false,
        last_wins: true,
    };
    let r = p.whole(&Node::Keys(&KEYS));
    match r {
        Ok(v) => Ok(v),
        Err(_) if p.deep => Err(EnvBad::Deep),
        Err(_) => Err(EnvBad::Invalid),
    }
}

impl<'a> P<'a> {
    fn whole(&mut self, node: &Node) -> Result<V<'a>, Bad> {
        self.ws();
        let v = self.sel(0, node)?;
        self.ws();
        if self.i != self.s.len() {
            return Err(Bad);
        }
        Ok(v)
    }

    #[inline]
    fn too_deep(&mut self, depth: usize) -> bool {
        if depth > self.limit {
            self.deep = true;
        }
        depth > self.limit
    }

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
        if self.too_deep(depth) || self.i >= self.s.len() {
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
        self.ws();
        if self.s.get(self.i) == Some(&b'}') {
            self.i += 1;
            return Ok(V::Obj(Vec::new()));
        }
        // one allocation for most objects (steps, metrics, tool calls: up to ~8 members)
        let mut out: Vec<(Cow<'a, str>, V<'a>)> = Vec::with_capacity(8);
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
                    // kept keys: a repeat is refused, or (serde_json) replaces the value;
                    // all keys: has_dup below (not needed for last_wins, whose nested
                    // values are only tested for emptiness)
                    let at = match keys {
                        Some(_) => out.iter().position(|(x, _)| *x == k),
                        None => None,
                    };
                    match at {
                        Some(at) if self.last_wins => out[at].1 = v,
                        Some(_) => return Err(Bad),
                        None => out.push((k, v)),
                    }
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
        if keys.is_none() && !self.last_wins && has_dup(&out) {
            return Err(Bad);
        }
        Ok(V::Obj(out))
    }

    fn array(&mut self, depth: usize, item: &Node) -> Result<V<'a>, Bad> {
        self.i += 1;
        self.ws();
        if self.s.get(self.i) == Some(&b']') {
            self.i += 1;
            return Ok(V::Arr(Vec::new()));
        }
        let mut out = Vec::with_capacity(4);
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
        if self.too_deep(depth) || self.i >= self.s.len() {
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
                Some(b'\\') => match s.get(j + 1) {
                    Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => j += 2,
                    Some(b'u') => j = unicode_escape(s, j + 2)?.1,
                    _ => return Err(Bad),
                },
                Some(_) => return Err(Bad), // a raw control character
            }
        }
    }

    fn value(&mut self, depth: usize) -> Result<V<'a>, Bad> {
        if self.too_deep(depth) || self.i >= self.s.len() {
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
        // escapes: build an owned string, allocated once (the decoded text is never longer
        // than the escaped one: find the closing quote first)
        let mut end = j;
        while let Some(&c) = s.get(end) {
            match c {
                b'"' => break,
                b'\\' => end = special(s, end + 2),
                _ => end = special(s, end + 1),
            }
        }
        let mut buf = String::with_capacity(end.min(s.len()) - start);
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
