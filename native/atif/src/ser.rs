//! Serialisation that matches `orjson.dumps` with default options byte for byte (compact
//! separators, keys in document order, non-ASCII kept, control characters escaped, floats in
//! orjson's shortest round-trip layout), plus Python's `str(None)`.

use crate::json::V;
use crate::scan::special;
use std::fmt::Write;

/// orjson refuses to serialise more than this many nested containers (the Python path then
/// falls back to `str(value)`; the caller hands such documents to it).
const MAX_NEST: usize = 254;

pub struct TooDeep;

pub fn dumps(v: &V, out: &mut String) -> Result<(), TooDeep> {
    dumps_at(v, out, 0)
}

fn dumps_at(v: &V, out: &mut String, nest: usize) -> Result<(), TooDeep> {
    if matches!(v, V::Arr(_) | V::Obj(_)) && nest >= MAX_NEST {
        return Err(TooDeep);
    }
    match v {
        V::Null => out.push_str("null"),
        V::Bool(true) => out.push_str("true"),
        V::Bool(false) => out.push_str("false"),
        V::Int(i) => {
            let _ = write!(out, "{i}");
        }
        V::UInt(u) => {
            let _ = write!(out, "{u}");
        }
        V::Float(f) => float(*f, out),
        V::Str(s) => string(s, out),
        V::Arr(a) => {
            out.push('[');
            for (n, x) in a.iter().enumerate() {
                if n > 0 {
                    out.push(',');
                }
                dumps_at(x, out, nest + 1)?;
            }
            out.push(']');
        }
        V::Obj(o) => {
            out.push('{');
            for (n, (k, x)) in o.iter().enumerate() {
                if n > 0 {
                    out.push(',');
                }
                string(k, out);
                out.push(':');
                dumps_at(x, out, nest + 1)?;
            }
            out.push('}');
        }
    }
    Ok(())
}

pub fn to_string(v: &V) -> Result<String, TooDeep> {
    let mut s = String::new();
    dumps(v, &mut s)?;
    Ok(s)
}

fn string(s: &str, out: &mut String) {
    out.reserve(s.len() + 2);
    out.push('"');
    let b = s.as_bytes();
    let mut run = 0;
    let mut i = special(b, 0); // the next '"', '\\' or control byte
    while i < b.len() {
        let c = b[i];
        out.push_str(&s[run..i]);
        match c {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            0x08 => out.push_str("\\b"),
            0x0c => out.push_str("\\f"),
            _ => {
                let _ = write!(out, "\\u{:04x}", c);
            }
        }
        run = i + 1;
        i = special(b, run);
    }
    out.push_str(&s[run..]);
    out.push('"');
}

/// orjson's float layout: shortest round-trip digits; plain notation when the decimal
/// exponent is in [-5, 15] ("1000000000000000.0", "0.00001"), else scientific ("1e+16",
/// "1.5e-7").
pub fn float(f: f64, out: &mut String) {
    if f == 0.0 {
        out.push_str(if f.is_sign_negative() { "-0.0" } else { "0.0" });
        return;
    }
    let sci = format!("{:e}", f); // e.g. "-1.2345e16", "1e-7"
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (neg, mant) = match mant.strip_prefix('-') {
        Some(m) => (true, m),
        None => (false, mant),
    };
    let mut digits: String = mant.chars().filter(|c| *c != '.').collect();
    even_tie(f.abs(), &mut digits, exp);
    if neg {
        out.push('-');
    }
    if (-5..16).contains(&exp) {
        if exp >= 0 {
            let e = exp as usize;
            if digits.len() <= e + 1 {
                out.push_str(&digits);
                for _ in digits.len()..e + 1 {
                    out.push('0');
                }
                out.push_str(".0");
            } else {
                out.push_str(&digits[..e + 1]);
                out.push('.');
                out.push_str(&digits[e + 1..]);
            }
        } else {
            out.push_str("0.");
            for _ in 0..(-exp - 1) {
                out.push('0');
            }
            out.push_str(&digits);
        }
    } else {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        if exp > 0 {
            out.push('+');
        }
        let _ = write!(out, "{exp}");
    }
}

/// Shortest round-trip digits can tie: two candidates equally close to the exact value
/// (562949953421313.25 -> ...13.2 or ...13.3). orjson (Ryu) takes the even last digit;
/// Rust's formatter may take the other one. `digits` (k digits, first at 10^exp) is
/// replaced by its even neighbour when the value is exactly halfway between them.
fn even_tie(v: f64, digits: &mut String, exp: i32) {
    let last = digits.as_bytes()[digits.len() - 1] - b'0';
    if last.is_multiple_of(2) {
        return;
    }
    let p = exp - (digits.len() as i32 - 1); // decimal position of the last digit
    let bits = v.to_bits();
    let (be, bm) = (((bits >> 52) & 0x7ff) as i32, bits & ((1u64 << 52) - 1));
    let (m, e) = if be == 0 {
        (bm, -1074)
    } else {
        (bm | (1u64 << 52), be - 1075)
    };
    // t = 2v / 10^p must be an odd integer for a tie (v = (t/2) * 10^p)
    let t: Option<u128> = if p < 0 {
        let Some(scale) = 10u128.checked_pow((-p) as u32) else {
            return;
        };
        let Some(x) = (2 * m as u128).checked_mul(scale) else {
            return;
        };
        if e >= 0 {
            return; // 2v * 10^-p is even
        }
        let sh = (-e) as u32;
        if sh >= 128 || x % (1u128 << sh) != 0 {
            return;
        }
        Some(x >> sh)
    } else {
        let y: u128 = if e + 1 >= 0 {
            let sh = (e + 1) as u32;
            if sh >= 64 {
                return;
            }
            (m as u128) << sh
        } else {
            let sh = (-(e + 1)) as u32;
            if sh >= 64 || m % (1u64 << sh) != 0 {
                return;
            }
            (m >> sh) as u128
        };
        let Some(scale) = 10u128.checked_pow(p as u32) else {
            return;
        };
        if !y.is_multiple_of(scale) {
            return;
        }
        Some(y / scale)
    };
    let Some(t) = t else { return };
    if t % 2 == 0 {
        return; // not halfway
    }
    let lower = (t - 1) / 2; // the candidate below v, in units of 10^p
    let d = (lower % 10) as u8; // its last digit; the upper one ends in d + 1
    let want = if d.is_multiple_of(2) { d } else { (d + 1) % 10 };
    if want == last || want == 0 {
        return; // already even, or a carry (cannot be shortest): leave it
    }
    digits.pop();
    digits.push((b'0' + want) as char);
}
