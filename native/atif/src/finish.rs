//! Port of the call rules that Python applies with Polars expressions after extraction
//! (`commands.finish_tool_calls`: JSON envelopes, exit-code markers, the error-text
//! heuristic; `frames.finish_calls`: retried), so rows of the compiled path come out
//! finished.
//!
//! Polars evaluates those rules with the Rust `regex` crate (Unicode `\s` and `\d`) and
//! `serde_json`. Where this port cannot be sure to agree (a non-ASCII character where a
//! pattern's `\s` or `\d` could match it, a digit run Polars' integer cast may read
//! differently, an envelope nested deeper than serde_json's recursion limit), it returns
//! `None`: the row is marked not exact and Python computes it with the Polars rules.
//! `tests/load_steps/test_native_finish.py` checks both against each other.

use crate::cols::Col;
use crate::json::{parse_env, EnvBad, V};
use crate::scan::find_any;

/// exit_code, is_error, is_error_source of one call.
pub struct Signals {
    pub exit_code: Option<i64>,
    pub is_error: Option<bool>,
    pub source: Option<&'static str>,
}

/// Not decidable here: Python computes the row.
pub struct Defer;

/// Write a row's `signals` result: exit_code, is_error, is_error_source, and `fin`
/// (false: undecided, the three are null and Python computes them).
pub fn write(
    r: Result<Signals, Defer>,
    code: &mut Col,
    err: &mut Col,
    src: &mut Col,
    fin: &mut Col,
) {
    let sg = r.as_ref().ok();
    code.i(sg.and_then(|s| s.exit_code));
    err.b(sg.and_then(|s| s.is_error));
    src.s(sg.and_then(|s| s.source));
    fin.b(Some(sg.is_some()));
}

/// `finish_tool_calls` for one row (`command` is only tested for null).
pub fn signals(
    obs: Option<&str>,
    shell: bool,
    s_err: Option<bool>,
    s_exit: Option<i64>,
) -> Result<Signals, Defer> {
    let (mut flag, mut code) = (s_err, s_exit);
    if let Some(o) = obs.filter(|o| !shell && envelope_candidate(o)) {
        if flag.is_none() {
            flag = envelope_flag(o)?;
        }
        if code.is_none() {
            code = envelope_code(o)?;
        }
    }
    if code.is_none() {
        if let Some(o) = obs {
            code = marker_code(o, shell)?;
        }
    }
    let (is_error, source) = match (flag, code, obs) {
        (Some(f), _, _) => (Some(f), Some("structured")),
        (None, Some(c), _) => (Some(c != 0), Some("exit_code")),
        (None, None, Some(o)) => (Some(error_text(o)), Some("text")),
        (None, None, None) => (None, None),
    };
    Ok(Signals {
        exit_code: code,
        is_error,
        source,
    })
}

const ENVELOPE_KEYS: [&str; 7] = [
    "\"success\"",
    "\"error\"",
    "\"exit_code\"",
    "\"exitCode\"",
    "\"returncode\"",
    "\"return_code\"",
    "\\u",
];

/// `commands._envelope_columns`' row filter: a non-shell observation that is a JSON object
/// (after leading Unicode whitespace, as `str.strip_chars_start`) naming a signal key.
fn envelope_candidate(o: &str) -> bool {
    o.trim_start().starts_with('{') && ENVELOPE_KEYS.iter().any(|k| o.contains(k))
}

/// `json_path_match('$.key')` text: strings as they are, JSON null as null, other values
/// as JSON text (only whether that text is empty, 'true', 'false', '{}' or '[]' matters).
fn path_text<'a>(v: Option<&'a V<'a>>) -> Option<&'a str> {
    match v? {
        V::Null => None,
        V::Str(s) => Some(s),
        V::Bool(true) => Some("true"),
        V::Bool(false) => Some("false"),
        V::Arr(a) if a.is_empty() => Some("[]"),
        V::Obj(o) if o.is_empty() => Some("{}"),
        _ => Some("<value>"), // a number or a non-empty container: non-empty JSON text
    }
}

/// The envelope flag (`commands._envelope_signals`): success false, or a non-empty error,
/// -> True; success true -> False; else null (also when serde_json would not parse it).
fn envelope_flag(o: &str) -> Result<Option<bool>, Defer> {
    let doc = match parse_env(o.as_bytes()) {
        Ok(d) => d,
        Err(EnvBad::Invalid) => return Ok(None),
        Err(EnvBad::Deep) => return Err(Defer),
    };
    let success = path_text(doc.get("success"));
    let err = path_text(doc.get("error"));
    let failed = success == Some("false")
        || err.is_some_and(|e| !matches!(e, "" | "false" | "null" | "{}" | "[]"));
    Ok(if failed {
        Some(true)
    } else if success == Some("true") {
        Some(false)
    } else {
        None
    })
}

/// `"(?:exit_code|exitCode|returncode|return_code)"\s*:\s*(-?\d+)`, first match, cast.
fn envelope_code(o: &str) -> Result<Option<i64>, Defer> {
    let b = o.as_bytes();
    for (q, _) in o.match_indices('"') {
        let rest = &b[q + 1..];
        let Some(k) = ["exit_code\"", "exitCode\"", "returncode\"", "return_code\""]
            .iter()
            .find(|k| rest.starts_with(k.as_bytes()))
        else {
            continue;
        };
        let j = ws(b, q + 1 + k.len())?;
        if b.get(j) != Some(&b':') {
            continue;
        }
        let j = ws(b, j + 1)?;
        if let Some((s, e)) = digits(b, j, true)? {
            return cast(&o[s..e]);
        }
    }
    Ok(None)
}

/// Skip `\s*` over ASCII whitespace; a non-ASCII character could be Unicode whitespace.
fn ws(b: &[u8], mut j: usize) -> Result<usize, Defer> {
    while let Some(&c) = b.get(j) {
        match c {
            b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r' => j += 1,
            0x80.. => return Err(Defer),
            _ => break,
        }
    }
    Ok(j)
}

/// `-?\d+` at `j` (ASCII digits): the span, or None; a non-ASCII character where `\d`
/// could continue or start the run defers.
fn digits(b: &[u8], j: usize, minus: bool) -> Result<Option<(usize, usize)>, Defer> {
    let mut k = j;
    if minus && b.get(k) == Some(&b'-') {
        k += 1;
    }
    let d0 = k;
    while b.get(k).is_some_and(|c| c.is_ascii_digit()) {
        k += 1;
    }
    if b.get(k).is_some_and(|&c| c >= 0x80) {
        return Err(Defer);
    }
    if k == d0 {
        // no digit after '-': the pattern without '-' cannot match at '-' either
        return Ok(None);
    }
    Ok(Some((j, k)))
}

/// The captured digits as Polars casts them to Int64 (null when out of range). Long runs
/// (leading zeros) are left to Polars.
fn cast(t: &str) -> Result<Option<i64>, Defer> {
    if t.len() > 18 {
        return Err(Defer);
    }
    Ok(t.parse::<i64>().ok())
}

/// `commands.exit_code_expr`: the first of EXIT_MARKERS (then SHELL_EXIT_MARKERS for
/// shell calls) that matches, its capture cast to Int64.
fn marker_code(o: &str, shell: bool) -> Result<Option<i64>, Defer> {
    // The markers in priority order (Polars coalesces the patterns: the first pattern
    // that matches anywhere wins). One pass over the text, stopping only at the markers'
    // first bytes; for each pattern the first position that decides it (a match, or
    // Defer) is kept, as a search per pattern would.
    let b = o.as_bytes();
    let mut got: [Option<Result<(usize, usize), Defer>>; 6] = Default::default();
    let mut keep = |hit: Option<(usize, Found)>| {
        if let Some((k, r)) = hit {
            if got[k].is_none() {
                got[k] = r.transpose();
            }
        }
    };
    if shell {
        keep(shell_marker(b, 0));
    }
    let set = [b'[', b'<', b'P', if shell { b'\n' } else { b'P' }];
    let mut j = find_any(b, 0, set);
    while j < b.len() {
        keep(if b[j] == b'\n' {
            shell_marker(b, j + 1)
        } else {
            marker(b, j)
        });
        j = find_any(b, j + 1, set);
    }
    for g in got {
        match g {
            Some(Ok((s, e))) => return cast(&o[s..e]),
            Some(Err(d)) => return Err(d),
            None => {}
        }
    }
    Ok(None)
}

/// A marker's digits (start, end), None when the text there does not match it.
type Found = Result<Option<(usize, usize)>, Defer>;

/// The marker (its priority) that may start anywhere and starts at `p`, if one does.
fn marker(b: &[u8], p: usize) -> Option<(usize, Found)> {
    let t = &b[p..];
    if t.starts_with(b"[exit_code]") {
        // \[exit_code\]\s*(-?\d+)
        return Some((0, ws(b, p + 11).and_then(|j| digits(b, j, true))));
    }
    if t.starts_with(b"<exit_code>") {
        // <exit_code>\s*(-?\d+)\s*</exit_code>
        let r = ws(b, p + 11)
            .and_then(|j| digits(b, j, true))
            .and_then(|d| match d {
                Some((s, e)) => Ok(b[ws(b, e)?..]
                    .starts_with(b"</exit_code>")
                    .then_some((s, e))),
                None => Ok(None),
            });
        return Some((1, r));
    }
    if t.starts_with(b"[Command finished with exit code ") {
        // \[Command finished with exit code (-?\d+)\]
        let r = digits(b, p + 33, true).map(|d| d.filter(|&(_, e)| b.get(e) == Some(&b']')));
        return Some((2, r));
    }
    if t.starts_with(b"Process exited with code ") {
        // Process exited with code (-?\d+)
        return Some((3, digits(b, p + 25, true)));
    }
    None
}

/// The shell marker at line start `p`, if one: (?m)^Exit Code: (-?\d+)\s*$ (priority 4)
/// or (?m)^exit status (\d+)\s*$ (5).
fn shell_marker(b: &[u8], p: usize) -> Option<(usize, Found)> {
    let (k, lead, minus) = match b.get(p) {
        Some(b'E') => (4, &b"Exit Code: "[..], true),
        Some(b'e') => (5, &b"exit status "[..], false),
        _ => return None,
    };
    if !b[p..].starts_with(lead) {
        return None;
    }
    let r = digits(b, p + lead.len(), minus).and_then(|d| match d {
        Some((s, e)) => Ok(line_end_after_ws(b, e)?.then_some((s, e))),
        None => Ok(None),
    });
    Some((k, r))
}

/// `\s*$` in multi-line mode at `j`: the whitespace run reaches a '\n' or the end.
fn line_end_after_ws(b: &[u8], mut j: usize) -> Result<bool, Defer> {
    loop {
        match b.get(j) {
            None | Some(b'\n') => return Ok(true),
            Some(b' ' | b'\t' | 0x0b | 0x0c | b'\r') => j += 1,
            Some(0x80..) => return Err(Defer),
            Some(_) => return Ok(false),
        }
    }
}

/// `commands.ERROR_TEXT` (every branch is ASCII, without `\s` or `\d`).
pub fn error_text(o: &str) -> bool {
    const LITERALS: [&str; 4] = [
        "Traceback (most recent call last)",
        ": command not found",
        "<tool_use_error>",
        "[error] tool reported failure",
    ];
    // one pass for the four literals: stop at their first bytes ('T', ':', '<', '[')
    let b = o.as_bytes();
    let mut i = find_any(b, 0, [b'T', b':', b'<', b'[']);
    while i < b.len() {
        let c = b[i];
        if LITERALS
            .iter()
            .any(|l| l.as_bytes()[0] == c && b[i..].starts_with(l.as_bytes()))
        {
            return true;
        }
        i = find_any(b, i + 1, [b'T', b':', b'<', b'[']);
    }
    let mut ls = 0;
    loop {
        let le = find_any(b, ls, [b'\n'; 4]);
        if error_line(&o[ls..le]) {
            return true;
        }
        if le >= b.len() {
            return false;
        }
        ls = le + 1;
    }
}

/// The line-anchored branches (`(?m)^`: at the start or after '\n') at one line.
fn error_line(line: &str) -> bool {
    let l = line.as_bytes();
    // ^(?:bash|sh|zsh|/bin/sh|/bin/bash): .*(?:No such file or directory|Permission denied|syntax error)
    for p in ["bash: ", "sh: ", "zsh: ", "/bin/sh: ", "/bin/bash: "] {
        if let Some(rest) = line.strip_prefix(p) {
            if [
                "No such file or directory",
                "Permission denied",
                "syntax error",
            ]
            .iter()
            .any(|x| rest.contains(x))
            {
                return true;
            }
        }
    }
    // ^(?:Error|ERROR|error|fatal|FATAL|panic)(?:\[[^\]\n]*\])?:
    for w in ["Error", "ERROR", "error", "fatal", "FATAL", "panic"] {
        if line.starts_with(w) {
            let k = w.len();
            if l[k..].starts_with(b": ") {
                return true;
            }
            if l.get(k) == Some(&b'[') {
                if let Some(m) = l[k + 1..].iter().position(|&c| c == b']') {
                    if l[k + 2 + m..].starts_with(b": ") {
                        return true;
                    }
                }
            }
        }
    }
    // ^[A-Z][A-Za-z]*(?:Error|Exception):
    if l.first().is_some_and(|c| c.is_ascii_uppercase()) {
        let run = l.iter().take_while(|c| c.is_ascii_alphabetic()).count();
        if l[run..].starts_with(b": ") {
            let word = &l[..run];
            if (run >= 6 && word.ends_with(b"Error")) || (run >= 10 && word.ends_with(b"Exception"))
            {
                return true;
            }
        }
    }
    false
}

/// `frames.parse_timestamps` for the plain RFC 3339 forms: `YYYY-MM-DD[T ]HH:MM:SS`, an
/// optional fraction of 1-9 digits, then nothing (naive: UTC), `Z` or `±HH:MM`; years
/// 1970-2200. Microseconds since the epoch; anything else defers (Polars parses it).
pub fn timestamp_us(t: &str) -> Result<i64, Defer> {
    let b = t.as_bytes();
    if b.len() < 19 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b' ') {
        return Err(Defer);
    }
    if b[13] != b':' || b[16] != b':' {
        return Err(Defer);
    }
    let num = |s: usize, n: usize| -> Result<i64, Defer> {
        let mut v = 0i64;
        for &c in &b[s..s + n] {
            if !c.is_ascii_digit() {
                return Err(Defer);
            }
            v = v * 10 + (c - b'0') as i64;
        }
        Ok(v)
    };
    let (y, mo, d) = (num(0, 4)?, num(5, 2)?, num(8, 2)?);
    let (h, mi, s) = (num(11, 2)?, num(14, 2)?, num(17, 2)?);
    if !(1970..=2200).contains(&y) || !(1..=12).contains(&mo) || h > 23 || mi > 59 || s > 59 {
        return Err(Defer);
    }
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let dim = [
        31,
        if leap { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    if d < 1 || d > dim[mo as usize - 1] {
        return Err(Defer);
    }
    let mut j = 19;
    let mut nanos = 0i64;
    if b.get(j) == Some(&b'.') {
        let f0 = j + 1;
        j = f0;
        while b.get(j).is_some_and(|c| c.is_ascii_digit()) {
            j += 1;
        }
        let n = j - f0;
        if n == 0 || n > 9 {
            return Err(Defer);
        }
        nanos = num(f0, n)? * 10i64.pow(9 - n as u32);
    }
    let offset = match &b[j..] {
        [] | [b'Z'] => 0,
        [sign @ (b'+' | b'-'), _, _, b':', _, _] => {
            let (oh, om) = (num(j + 1, 2)?, num(j + 4, 2)?);
            if oh > 23 || om > 59 {
                return Err(Defer);
            }
            let v = oh * 3600 + om * 60;
            if *sign == b'-' {
                -v
            } else {
                v
            }
        }
        _ => return Err(Defer),
    };
    let days = days_from_civil(y, mo, d);
    let secs = days * 86_400 + h * 3600 + mi * 60 + s - offset;
    Ok(secs * 1_000_000 + nanos / 1000)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps() {
        assert_eq!(timestamp_us("1970-01-01T00:00:00").ok(), Some(0));
        assert_eq!(
            timestamp_us("2025-03-01 12:00:00.5+01:00").ok(),
            Some(1_740_826_800_500_000)
        );
        assert!(timestamp_us("2025-02-29T00:00:00Z").is_err());
        assert!(timestamp_us("2025-01-01T00:00:00z").is_err());
    }

    #[test]
    fn error_lines() {
        assert!(error_text("ok\nValueError: bad"));
        assert!(!error_text("Error\n: x"));
        assert!(error_text("error[E0425]: cannot find"));
        assert!(!error_text("XError:x"));
        assert!(error_text("sh: 1: foo: Permission denied"));
    }

    #[test]
    fn markers() {
        let code = |o: &str, sh: bool| marker_code(o, sh).ok().flatten();
        assert_eq!(code("x [exit_code] -3 y", false), Some(-3));
        assert_eq!(code("<exit_code> 2 </exit_code>", false), Some(2));
        assert_eq!(code("a\nExit Code: 4  \nb", true), Some(4));
        assert_eq!(code("a\nExit Code: 4 x", true), None);
        assert!(marker_code("[exit_code] \u{a0}1", false).is_err());
    }
}
