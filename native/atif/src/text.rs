//! Values as text, the way the Python path writes them: `_json_text`, `content_text`,
//! joined observation parts, and Python's repr of a string.

use crate::extract::Fallback;
use crate::json::V;
use crate::ser::to_string;
use std::borrow::Cow;

/// `_json_text`: None, the string itself, or orjson text.
pub fn json_text(v: Option<&V>) -> Result<Option<String>, Fallback> {
    Ok(match v {
        None | Some(V::Null) => None,
        Some(V::Str(s)) => Some(s.to_string()),
        Some(x) => Some(to_string(x)?),
    })
}

/// `content_text` for a non-string, non-null content.
pub fn content_text(c: &V) -> Result<String, Fallback> {
    let V::Arr(parts) = c else {
        return Ok(to_string(c)?);
    };
    let mut out: Vec<String> = Vec::with_capacity(parts.len());
    for p in parts {
        match p {
            V::Str(s) => out.push(s.to_string()),
            V::Obj(_) => {
                let t = p.get("type");
                let t_none = matches!(t, None | Some(V::Null));
                let is_text = matches!(t, Some(V::Str(s)) if s == "text")
                    || (t_none && matches!(p.get("text"), Some(V::Str(_))));
                if is_text {
                    out.push(
                        p.get("text")
                            .and_then(|x| x.as_str())
                            .unwrap_or("")
                            .to_string(),
                    );
                    continue;
                }
                let tname = match t {
                    None | Some(V::Null) => "None",
                    Some(V::Str(s)) => s.as_ref(),
                    _ => return Err(Fallback),
                };
                let src = p.get("source").filter(|s| s.is_obj());
                let mut path = src
                    .and_then(|s| s.get("path"))
                    .filter(|x| !matches!(x, V::Null));
                if path.is_none() {
                    if let Some(s) = src {
                        path = match s.get("url") {
                            Some(u) if u.truthy() => Some(u),
                            _ => s.get("media_type").filter(|x| !matches!(x, V::Null)),
                        };
                    }
                }
                match path {
                    None => out.push(format!("[{tname}]")),
                    Some(V::Str(ps)) => out.push(format!("[{tname}: {ps}]")),
                    Some(_) => return Err(Fallback),
                }
            }
            _ => {}
        }
    }
    Ok(out.join("\n"))
}

/// `c if type(c) is str or c is None else content_text(c)`.
pub fn text_of<'b>(v: Option<&'b V>) -> Result<Option<Cow<'b, str>>, Fallback> {
    match v {
        None | Some(V::Null) => Ok(None),
        Some(V::Str(s)) => Ok(Some(Cow::Borrowed(s.as_ref()))),
        Some(x) => content_text(x).map(|t| Some(Cow::Owned(t))),
    }
}

pub fn joined<'b>(mut parts: Vec<Cow<'b, str>>) -> Cow<'b, str> {
    if parts.len() == 1 {
        parts.pop().unwrap_or_default()
    } else {
        Cow::Owned(parts.join("\n"))
    }
}

/// Python's repr of a str, for printable ASCII (with \n \r \t); else Bail.
pub fn py_repr(s: &str) -> Option<String> {
    let q = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut o = String::with_capacity(s.len() + 2);
    o.push(q);
    for c in s.chars() {
        match c {
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            '\r' => o.push_str("\\r"),
            '\t' => o.push_str("\\t"),
            c if c == q => {
                o.push('\\');
                o.push(c);
            }
            ' '..='~' => o.push(c),
            _ => return None,
        }
    }
    o.push(q);
    Some(o)
}
