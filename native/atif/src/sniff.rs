//! atif.sniff and the schema version: is a document ATIF, and if not, how the Python path
//! describes it in its not_atif error.

use crate::extract::Fallback;
use crate::json::V;
use crate::text::py_repr;
use std::borrow::Cow;

pub fn version(sv: Option<&V>) -> Result<Option<(i64, i64)>, Fallback> {
    let Some(V::Str(s)) = sv else { return Ok(None) };
    if !s.is_ascii() {
        return Err(Fallback); // Python's \d also matches non-ASCII digits
    }
    let Some(rest) = s.strip_prefix("ATIF-v") else {
        return Ok(None);
    };
    let num = |t: &str| -> (Option<i64>, usize) {
        let n = t.bytes().take_while(|c| c.is_ascii_digit()).count();
        if n == 0 {
            return (None, 0);
        }
        let v = t[..n].bytes().fold(0i64, |a, c| {
            a.saturating_mul(10).saturating_add((c - b'0') as i64)
        });
        (Some(v), n)
    };
    let (maj, n) = num(rest);
    let Some(maj) = maj else { return Ok(None) };
    let Some(rest) = rest[n..].strip_prefix('.') else {
        return Ok(None);
    };
    match num(rest).0 {
        Some(min) => Ok(Some((maj, min))),
        None => Ok(None),
    }
}

/// atif.sniff's test: a dict whose schema_version starts with 'ATIF-', or without a
/// schema_version but with a steps list and an agent dict.
pub fn is_atif(doc: &V) -> bool {
    if !doc.is_obj() {
        return false;
    }
    match doc.get("schema_version") {
        Some(V::Str(s)) => s.starts_with("ATIF-"),
        None | Some(V::Null) => {
            matches!(doc.get("steps"), Some(V::Arr(_)))
                && matches!(doc.get("agent"), Some(V::Obj(_)))
        }
        _ => false,
    }
}

fn sorted_keys(o: &[(Cow<str>, V)]) -> Vec<String> {
    let mut k: Vec<String> = o.iter().map(|(k, _)| k.to_string()).collect();
    k.sort();
    k
}

/// atif.sniff's description of a non-ATIF document (fully parsed), or None when this port
/// cannot reproduce it (a schema_version whose Python repr it does not write).
pub fn sniff(doc: &V) -> Option<String> {
    match doc {
        V::Obj(o) => {
            let sv = match doc.get("schema_version") {
                None | Some(V::Null) => "None".to_string(),
                Some(V::Str(s)) => py_repr(s)?,
                Some(V::Int(i)) => i.to_string(),
                Some(V::UInt(u)) => u.to_string(),
                Some(V::Bool(b)) => (if *b { "True" } else { "False" }).to_string(),
                _ => return None,
            };
            let keys = sorted_keys(o);
            let head = keys.iter().take(8).cloned().collect::<Vec<_>>().join(", ");
            let head = if head.is_empty() {
                "(none)".to_string()
            } else {
                head
            };
            Some(format!(
                "a JSON object with keys {head} (schema_version {sv})"
            ))
        }
        V::Arr(a) => match a
            .iter()
            .find_map(|x| if let V::Obj(o) = x { Some(o) } else { None })
        {
            Some(first) => {
                let keys = sorted_keys(first);
                let has = |set: &[&str]| set.iter().all(|k| keys.iter().any(|x| x == k));
                let hint = if has(&["episode", "prompt", "response"]) {
                    " (an episode log, e.g. terminus-2-skills)"
                } else if has(&["command", "output", "return_code"]) {
                    " (a command log, e.g. Harbor's oracle)"
                } else {
                    ""
                };
                let head = keys.iter().take(8).cloned().collect::<Vec<_>>().join(", ");
                Some(format!(
                    "a JSON list of {} items with keys {head}{hint}",
                    a.len()
                ))
            }
            None => Some(format!("a JSON list of {} items", a.len())),
        },
        V::Str(_) => Some("a JSON str".into()),
        V::Int(_) | V::UInt(_) => Some("a JSON int".into()),
        V::Float(_) => Some("a JSON float".into()),
        V::Bool(_) => Some("a JSON bool".into()),
        V::Null => Some("a JSON NoneType".into()),
    }
}
