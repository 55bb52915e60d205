//! Byte-level pieces of the JSON parser: the string scanner, the number grammar, \\u
//! escapes and the repeated-key check.

use crate::json::{Bad, V};
use std::borrow::Cow;

/// Index of the first '"', '\\' or control byte at or after `j` (s.len() when none).
/// Sixteen bytes at a time with SSE2 (every x86_64 CPU has it), then eight at a time.
#[inline]
pub fn special(s: &[u8], j: usize) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        special_sse2(s, j)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        special_swar(s, j)
    }
}

#[cfg(target_arch = "x86_64")]
#[inline]
fn special_sse2(s: &[u8], mut j: usize) -> usize {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8,
    };
    // SAFETY: SSE2 is part of x86_64; loads are unaligned and within `s`
    unsafe {
        let quote = _mm_set1_epi8(b'"' as i8);
        let slash = _mm_set1_epi8(b'\\' as i8);
        let ctl = _mm_set1_epi8(0x1f);
        while j + 16 <= s.len() {
            let x = _mm_loadu_si128(s.as_ptr().add(j) as *const __m128i);
            // x <= 0x1f (unsigned) <=> min(x, 0x1f) == x
            let low = _mm_cmpeq_epi8(_mm_min_epu8(x, ctl), x);
            let hit = _mm_or_si128(
                _mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, slash)),
                low,
            );
            let mask = _mm_movemask_epi8(hit) as u32;
            if mask != 0 {
                return j + mask.trailing_zeros() as usize;
            }
            j += 16;
        }
    }
    special_swar(s, j)
}

/// `special`, eight bytes at a time.
#[inline]
fn special_swar(s: &[u8], mut j: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    while j + 8 <= s.len() {
        let w = u64::from_le_bytes(s[j..j + 8].try_into().unwrap());
        let q = w ^ (ONES * b'"' as u64);
        let b = w ^ (ONES * b'\\' as u64);
        let m = (q.wrapping_sub(ONES) & !q)
            | (b.wrapping_sub(ONES) & !b)
            | (w.wrapping_sub(ONES * 0x20) & !w);
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

/// Index of the first byte at or after `j` equal to one of `set` (s.len() when none);
/// eight bytes at a time.
#[inline]
pub fn find_any(s: &[u8], mut j: usize, set: [u8; 4]) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
    while j + 8 <= s.len() {
        let w = u64::from_le_bytes(s[j..j + 8].try_into().unwrap());
        let m = set.iter().fold(0, |m, &c| m | zero(w ^ (ONES * c as u64)));
        if m != 0 {
            return j + (m.trailing_zeros() / 8) as usize;
        }
        j += 8;
    }
    while j < s.len() && !set.contains(&s[j]) {
        j += 1;
    }
    j
}

pub struct NumShape {
    pub int_digits: usize,
    pub frac: bool,
    pub exp: bool,
}

/// The end of the JSON number starting at `j` (strict grammar: no leading zeros, digits
/// after '.' and after the exponent) and its shape.
pub fn number_grammar(s: &[u8], mut j: usize) -> Result<(usize, NumShape), Bad> {
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
    let mut n = NumShape {
        int_digits: j - int_start,
        frac: false,
        exp: false,
    };
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
pub fn unicode_escape(s: &[u8], j: usize) -> Result<(char, usize), Bad> {
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

pub fn hex4(s: &[u8], j: usize) -> Result<u32, Bad> {
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

pub fn has_dup(o: &[(Cow<'_, str>, V<'_>)]) -> bool {
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

#[cfg(test)]
mod tests {
    use super::{find_any, special, special_swar};

    #[test]
    fn special_agrees_with_a_plain_search() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let pick = b"ab\"\\\x00\x1f\x20\x7f\x80\xff\n\t{}x";
        for len in 0..80 {
            for _ in 0..60 {
                let text: Vec<u8> = (0..len)
                    .map(|_| {
                        x = x
                            .wrapping_mul(6364136223846793005)
                            .wrapping_add(1442695040888963407);
                        // mostly plain bytes, now and then one of the special ones
                        if (x >> 60) < 13 {
                            b'a' + (x >> 33) as u8 % 26
                        } else {
                            pick[(x >> 40) as usize % pick.len()]
                        }
                    })
                    .collect();
                for start in 0..=len {
                    let want = (start..len)
                        .find(|&i| matches!(text[i], b'"' | b'\\' | 0..=0x1f))
                        .unwrap_or(len);
                    assert_eq!(special(&text, start), want, "{text:?} from {start}");
                    assert_eq!(special_swar(&text, start), want, "{text:?} from {start}");
                }
            }
        }
    }

    #[test]
    fn find_any_agrees_with_a_plain_search() {
        let text = b"abc[de<fg\nhiPjk\n[[xyz  P";
        let set = [b'[', b'<', b'P', b'\n'];
        for start in 0..=text.len() + 2 {
            let want = (start..text.len())
                .find(|&i| set.contains(&text[i]))
                .unwrap_or(text.len().max(start));
            assert_eq!(find_any(text, start, set), want, "from {start}");
        }
        assert_eq!(find_any(b"", 0, set), 0);
        assert_eq!(find_any(b"\xff\x80abcdefgh", 0, [b'h'; 4]), 9);
    }
}
