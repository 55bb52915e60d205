//! Ports of `evalkit/load/steps/commands.py`: `shell_command` and `structured_signals`
//! (same rules, same precedence; the parity tests compare both paths on every fixture and
//! on generated documents). Keep the two in step.

use crate::json::V;

const SHELL_TOOL_NAMES: &[&str] = &[
    "bash",
    "sh",
    "zsh",
    "shell",
    "terminal",
    "cmd",
    "powershell",
    "executecommand",
    "runshellcommand",
    "runcommand",
    "execcommand",
    "executebash",
    "bashcommand",
    "localshell",
    "shellcommand",
    "runterminalcmd",
    "runterminalcommand",
    "terminalcommand",
    "tmuxsendkeys",
    "sendkeys",
    "runbash",
    "bashtool",
    "exec",
    "execute",
    "runshell",
    "containerexec",
    "terminalinput",
    "executeshell",
    "shellexec",
    "runinterminal",
    "sandboxexec",
    "run",
];
const COMMAND_ARG_KEYS: &[&str] = &[
    "command",
    "cmd",
    "keystrokes",
    "script",
    "commands",
    "input",
];
const SHELLS: &[&str] = &[
    "bash",
    "sh",
    "zsh",
    "/bin/bash",
    "/bin/sh",
    "/usr/bin/bash",
    "/bin/zsh",
];
const SHELL_C_FLAGS: &[&str] = &["-c", "-lc", "-ic", "-lic", "-cl"];
const ERR_TRUE_STATUS: &[&str] = &["error", "failed", "failure", "errored"];
const ERR_FALSE_STATUS: &[&str] = &["success", "succeeded", "ok"];
const EXIT_KEYS: &[&str] = &[
    "exit_code",
    "exitCode",
    "return_code",
    "returncode",
    "exit_status",
    "exitStatus",
];
const NESTED: &[&str] = &[
    "tool_result_metadata",
    "metadata",
    "raw_tool_result",
    "tool_use_result",
    "result",
];
const SIGNAL_KEYS: &[&str] = &[
    "is_error",
    "isError",
    "success",
    "error",
    "status",
    "exit_code",
    "exitCode",
    "return_code",
    "returncode",
    "exit_status",
    "exitStatus",
];

/// Python's `str.isspace` for one character.
#[inline]
fn py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

fn rstrip(s: &str) -> &str {
    s.trim_end_matches(py_space)
}

fn strip(s: &str) -> &str {
    s.trim_matches(py_space)
}

pub fn normalise_tool_name(name: &str) -> String {
    let b = name.as_bytes();
    let (mut i, mut last) = (0, 0);
    while i < b.len() {
        if b[i] == b'_' && b.get(i + 1) == Some(&b'_') {
            i += 2;
            last = i;
        } else if matches!(b[i], b'.' | b'/' | b':') {
            i += 1;
            last = i;
        } else {
            i += 1;
        }
    }
    name[last..]
        .to_lowercase()
        .chars()
        .filter(|c| !matches!(c, '_' | '-' | ' '))
        .collect()
}

pub fn is_shell_tool(name: Option<&str>) -> bool {
    match name {
        Some(n) if !n.is_empty() => SHELL_TOOL_NAMES.contains(&normalise_tool_name(n).as_str()),
        _ => false,
    }
}

fn shlex_quote(s: &str, out: &mut String) {
    if s.is_empty() {
        out.push_str("''");
        return;
    }
    let safe = s.bytes().all(|c| {
        c.is_ascii_alphanumeric()
            || matches!(
                c,
                b'_' | b'@' | b'%' | b'+' | b'=' | b':' | b',' | b'.' | b'/' | b'-'
            )
    });
    if safe {
        out.push_str(s);
    } else {
        out.push('\'');
        out.push_str(&s.replace('\'', "'\"'\"'"));
        out.push('\'');
    }
}

fn command_text(v: &V) -> Option<String> {
    match v {
        V::Str(s) => {
            let t = rstrip(s).trim_start_matches('\n');
            if t.is_empty() {
                None
            } else {
                Some(t.to_string())
            }
        }
        V::Arr(a) if !a.is_empty() => {
            if a.iter().all(|x| matches!(x, V::Str(_))) {
                let s = |i: usize| a[i].as_str().unwrap_or("");
                if a.len() >= 3 && SHELLS.contains(&s(0)) && SHELL_C_FLAGS.contains(&s(1)) {
                    return command_text(&a[2]);
                }
                let mut out = String::new();
                for (i, x) in a.iter().enumerate() {
                    if i > 0 {
                        out.push(' ');
                    }
                    shlex_quote(x.as_str().unwrap_or(""), &mut out);
                }
                return if out.is_empty() { None } else { Some(out) };
            }
            let mut parts: Vec<&str> = Vec::new();
            for x in a {
                if x.is_obj() {
                    if let Some(V::Str(p)) = x.get("keystrokes") {
                        if !strip(p).is_empty() {
                            parts.push(rstrip(p));
                        }
                    }
                }
            }
            let j = parts.join("\n");
            if j.is_empty() {
                None
            } else {
                Some(j)
            }
        }
        _ => None,
    }
}

/// The shell command a tool call ran (see commands.shell_command).
pub fn shell_command(fname: Option<&str>, args: Option<&V>) -> Option<String> {
    match args {
        Some(a @ V::Obj(_)) => {
            if is_shell_tool(fname) {
                for k in COMMAND_ARG_KEYS {
                    if let Some(v) = a.get(k) {
                        return command_text(v);
                    }
                }
                return None;
            }
            match a.get("keystrokes") {
                Some(V::Null) | None => None,
                Some(ks) => command_text(ks),
            }
        }
        Some(s @ V::Str(_)) if is_shell_tool(fname) => command_text(s),
        _ => None,
    }
}

#[derive(Default)]
struct Sig {
    flag: Option<bool>,
    code: Option<i64>,
    err_field: Option<bool>,
    status: Option<bool>,
}

fn has_any(d: &V, keys: &[&str]) -> bool {
    match d {
        V::Obj(o) => o.iter().any(|(k, _)| keys.contains(&k.as_ref())),
        _ => false,
    }
}

fn scan(d: &V, out: &mut Sig) {
    if !has_any(d, SIGNAL_KEYS) {
        return;
    }
    if out.flag.is_none() {
        let mut found = false;
        for k in ["is_error", "isError"] {
            if let Some(V::Bool(b)) = d.get(k) {
                out.flag = Some(*b);
                found = true;
                break;
            }
        }
        if !found {
            if let Some(V::Bool(b)) = d.get("success") {
                out.flag = Some(!*b);
            }
        }
    }
    if out.code.is_none() {
        for k in EXIT_KEYS {
            if let Some(V::Int(i)) = d.get(k) {
                out.code = Some(*i);
                break;
            }
        }
    }
    if out.err_field.is_none() {
        if let Some(e @ (V::Str(_) | V::Obj(_) | V::Arr(_))) = d.get("error") {
            if e.truthy() {
                out.err_field = Some(true);
            }
        }
        if let Some(V::Str(st)) = d.get("status") {
            if out.status.is_none() {
                let s = st.to_lowercase();
                out.status = if ERR_TRUE_STATUS.contains(&s.as_str()) {
                    Some(true)
                } else if ERR_FALSE_STATUS.contains(&s.as_str()) {
                    Some(false)
                } else {
                    None
                };
            }
        }
    }
}

/// (is_error, exit_code) from extra dicts (see commands.structured_signals).
pub fn structured_signals(extras: &[&V]) -> (Option<bool>, Option<i64>) {
    let mut out = Sig::default();
    let look = |d: &V| has_any(d, SIGNAL_KEYS) || has_any(d, NESTED);
    for d in extras {
        if !d.is_obj() || !look(d) {
            continue;
        }
        scan(d, &mut out);
        for k in NESTED {
            if let Some(sub @ V::Obj(_)) = d.get(k) {
                scan(sub, &mut out);
                for k2 in NESTED {
                    if let Some(sub2 @ V::Obj(_)) = sub.get(k2) {
                        scan(sub2, &mut out);
                    }
                }
            }
        }
    }
    let mut flag = out.flag;
    if flag.is_none() {
        if out.err_field == Some(true) {
            flag = Some(true);
        } else if let Some(c) = out.code {
            flag = Some(c != 0);
        } else if out.status.is_some() {
            flag = out.status;
        }
    }
    (flag, out.code)
}
