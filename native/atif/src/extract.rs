//! One parsed ATIF document -> rows of the docs / steps / calls tables: a port of
//! `add_document` and `_calls_and_observations` in `evalkit/load/steps/atif.py`, value for
//! value. Anything the port does not cover exactly (a non-ATIF document, embedded subagent
//! trajectories, a content part whose type or path is not text) returns `Fallback`: the
//! Python path then handles that document, so the rows are always the reference rows.

use crate::cols::Table;
use crate::json::Node::{self, All, Items, Keys};
use crate::json::V;
use std::borrow::Cow;

/// The parts of an ATIF document the extractor reads (everything else is only validated).
pub static DOC: Node = Keys(&[
    ("schema_version", All),
    ("agent", Keys(&[("model_name", All)])),
    ("steps", Items(&STEP)),
    ("final_metrics", All),
    ("continued_trajectory_ref", All),
    ("subagent_trajectories", Items(&Keys(&[]))),
]);
static STEP: Node = Keys(&[
    ("step_id", All),
    ("source", All),
    ("model_name", All),
    ("message", All),
    ("reasoning_content", All),
    ("timestamp", All),
    (
        "metrics",
        Keys(&[
            ("prompt_tokens", All),
            ("completion_tokens", All),
            ("cached_tokens", All),
            ("cost_usd", All),
        ]),
    ),
    ("is_copied_context", All),
    ("llm_call_count", All),
    ("extra", All),
    (
        "tool_calls",
        Items(&Keys(&[
            ("tool_call_id", All),
            ("function_name", All),
            ("arguments", All),
            ("extra", All),
        ])),
    ),
    (
        "observation",
        Keys(&[(
            "results",
            Items(&Keys(&[
                ("source_call_id", All),
                ("content", All),
                ("extra", All),
                ("subagent_trajectory_ref", All),
            ])),
        )]),
    ),
]);
use crate::ser::{dumps, TooDeep};

use crate::finish;
use crate::shell::{shell_command, structured_signals};
use crate::sniff::{is_atif, version};
use crate::text::{joined, json_text, text_of};

pub struct Fallback;

/// steps: trial, step_index, trajectory, is_main, step_id, source, model_name, message,
/// reasoning_content, ts, prompt, completion, cached, cost, n_tool_calls, observation,
/// is_copied_context, llm_call_count, extra, ts_us (timestamp in µs; null with ts set:
/// Python parses it).
pub const STEP_KINDS: &str = "iisbisssssiiifisbisi";
/// calls: trial, step_index, call_index, trajectory, is_main, tool_call_id, function_name,
/// arguments, command, observation, observation_source, s_err, s_exit, ts, then finished
/// (finish.rs): exit_code, is_error, is_error_source, retried, ts_us, fin (false: Python
/// computes exit_code / is_error / is_error_source).
pub const CALL_KINDS: &str = "iiisbssssssbisibsbib";
/// trials: status (0 parsed here, 1 the Python path must parse the trial), n_steps,
/// n_tool_calls, final_totals (prompt, completion, cached, cost).
/// (status 2 = no ATIF trajectory; then `agent` holds the names in agent/, '\0'-joined),
/// has_data (status 0), n_turns (= n_steps: the index columns of steps/batch.py),
/// differ (false as parsed; `ek_compare` sets it where a final_metrics total disagrees
/// with the trial's result.json total: `parse::totals_differ`).
pub const TRIAL_KINDS: &str = "iiiffffsbib";
/// errors: trial, path, kind, message (LoadError rows, level 'trajectory').
pub const ERROR_KINDS: &str = "isss";

pub struct Out {
    pub steps: Table,
    pub calls: Table,
    pub trials: Table,
    pub errors: Table,
    /// Retry signatures seen in the current trial (cleared per trial).
    pub seen: Seen,
}

impl Out {
    pub fn new() -> Out {
        Out {
            steps: Table::new(STEP_KINDS),
            calls: Table::new(CALL_KINDS),
            trials: Table::new(TRIAL_KINDS),
            errors: Table::new(ERROR_KINDS),
            seen: Seen::default(),
        }
    }
}

/// `frames.finish_calls`' retried: a call whose (trajectory, function_name + '\0' +
/// arguments) occurred earlier in the trial (rows in final order; a trial's rows are
/// either all kept or all handed to Python, so the set never holds dropped rows).
#[derive(Default)]
pub struct Seen {
    set: std::collections::HashSet<Vec<u8>, std::hash::BuildHasherDefault<KeyHasher>>,
    key: Vec<u8>,
}

/// A fast hasher for the retry keys (words folded with a multiply-rotate, as FxHash
/// does; SipHash's resistance to chosen collisions is not needed for one trial's calls).
#[derive(Default)]
pub struct KeyHasher(u64);

impl std::hash::Hasher for KeyHasher {
    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0x51_7c_c1_b7_27_22_0a_95;
        let mut h = self.0;
        let mut it = bytes.chunks_exact(8);
        for w in &mut it {
            h = (h.rotate_left(5) ^ u64::from_le_bytes(w.try_into().unwrap())).wrapping_mul(K);
        }
        for &b in it.remainder() {
            h = (h.rotate_left(5) ^ b as u64).wrapping_mul(K);
        }
        self.0 = h;
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

impl Seen {
    pub fn clear(&mut self) {
        self.set.clear();
    }
    /// True when seen before (then the call is a retry); records it.
    pub fn repeat(&mut self, label: &str, fname: &str, args: &str) -> bool {
        let k = &mut self.key;
        k.clear();
        k.extend_from_slice(&(label.len() as u64).to_le_bytes());
        k.extend_from_slice(label.as_bytes());
        k.extend_from_slice(fname.as_bytes());
        k.push(0);
        k.extend_from_slice(args.as_bytes());
        if self.set.contains(k.as_slice()) {
            return true;
        }
        self.set.insert(k.clone());
        false
    }
}

/// Where a document's rows go: trial, first step_index, trajectory label, is_main.
pub struct Place<'l> {
    pub trial: i64,
    pub start: i64,
    pub label: &'l str,
    pub is_main: bool,
}

/// A subagent_trajectory_ref item: trajectory_path / trajectory_id when they are strings.
pub struct RefItem {
    pub path: Option<String>,
    pub id: Option<String>,
}

/// What one document contributed (atif.DocResult).
pub struct DocInfo {
    pub n_rows: i64,
    pub n_bad: i64,
    pub n_agent: i64,
    pub n_agent_calls: i64,
    pub continued_ref: Option<String>,
    pub refs: Vec<RefItem>,
    pub has_fm: bool,
    pub totals: [Option<f64>; 4],
}

#[inline]
fn fit(v: Option<i128>) -> Option<i64> {
    v.and_then(|x| i64::try_from(x).ok())
}

/// `x if type(x) is int else as_int(x)` before the frame's int64 cast.
#[inline]
fn int_val(v: Option<&V>) -> Option<i128> {
    match v {
        Some(V::Int(i)) => Some(*i as i128),
        Some(V::UInt(u)) => Some(*u as i128),
        Some(V::Float(f)) => {
            if f.fract() == 0.0 && f.abs() < 9.223_372_036_854_776e18 {
                Some(*f as i128)
            } else {
                None
            }
        }
        _ => None,
    }
}

/// `finite_float` (cost): ints and finite floats, not bools.
#[inline]
fn float_val(v: Option<&V>) -> Option<f64> {
    match v {
        Some(V::Float(f)) => Some(*f),
        Some(V::Int(i)) => Some(*i as f64),
        Some(V::UInt(u)) => Some(*u as f64),
        _ => None,
    }
}

impl From<TooDeep> for Fallback {
    fn from(_: TooDeep) -> Fallback {
        Fallback
    }
}

/// Extract one document into `out` (rows + one docs row); on `Fallback` nothing is added.
pub fn document(doc: &V, at: &Place, out: &mut Out) -> Result<DocInfo, Fallback> {
    if !is_atif(doc) {
        return Err(Fallback); // the caller reports it (sniff) or hands it to Python
    }
    let sv = doc.get("schema_version");
    if let Some(V::Arr(emb)) = doc.get("subagent_trajectories") {
        if emb.iter().any(|e| e.is_obj()) {
            return Err(Fallback);
        }
    }
    let ver = version(sv)?;
    let old_prompt = matches!(ver, Some(v) if v < (1, 2));
    let agent_model = doc
        .get("agent")
        .and_then(|a| a.get("model_name"))
        .and_then(|m| m.as_str());
    let steps: &[V] = match doc.get("steps") {
        Some(V::Arr(a)) => a,
        _ => &[],
    };
    let st: Vec<&V> = steps.iter().filter(|s| s.is_obj()).collect();
    let n_bad = (steps.len() - st.len()) as i64;
    let (sm, cm) = (out.steps.mark(), out.calls.mark());
    let mut refs: Vec<RefItem> = Vec::new();
    let mut n_agent = 0i64;
    let mut n_agent_calls = 0i64;
    let res = (|| -> Result<(), Fallback> {
        for (i, s) in st.iter().enumerate() {
            let s: &V = s;
            let src = s.get("source").and_then(|x| x.as_str());
            let copied = match s.get("is_copied_context") {
                Some(V::Bool(b)) => Some(*b),
                _ => None,
            };
            let ts = s.get("timestamp").and_then(|x| x.as_str());
            let m = s.get("metrics").filter(|m| m.is_obj());
            let g = |k: &str| m.and_then(|m| m.get(k));
            let mut pt = int_val(g("prompt_tokens"));
            let ct = int_val(g("completion_tokens"));
            let ca = int_val(g("cached_tokens"));
            let cost = float_val(g("cost_usd"));
            if old_prompt {
                if let (Some(p), Some(c)) = (pt, ca) {
                    if c != 0 {
                        pt = Some(p + c);
                    }
                }
            }
            let message = text_of(s.get("message"))?;
            // parsed once for the step and its calls (finish.rs)
            let ts_us = ts.and_then(|t| finish::timestamp_us(t).ok());
            let (n_calls, obs_step) =
                calls(s, at, at.start + i as i64, (ts, ts_us), out, &mut refs)?;
            if src == Some("agent") && copied != Some(true) {
                n_agent += 1;
                n_agent_calls += n_calls;
            }
            let model = match s.get("model_name") {
                Some(V::Str(x)) => Some(x.as_ref()),
                _ if src == Some("agent") => agent_model,
                _ => None,
            };
            let c = &mut out.steps.cols;
            c[0].i(Some(at.trial));
            c[1].i(Some(at.start + i as i64));
            c[2].s(Some(at.label));
            c[3].b(Some(at.is_main));
            c[4].i(fit(int_val(s.get("step_id"))));
            c[5].s(src);
            c[6].s(model);
            c[7].s(message.as_deref());
            c[8].s(json_text(s.get("reasoning_content"))?.as_deref());
            c[9].s(ts);
            c[10].i(fit(pt));
            c[11].i(fit(ct));
            c[12].i(fit(ca));
            c[13].f(cost);
            c[14].i(Some(n_calls));
            c[15].s(obs_step.as_deref());
            c[16].b(copied);
            c[17].i(fit(int_val(s.get("llm_call_count"))));
            let extra = s.get("extra").filter(|x| x.truthy());
            c[18].s(json_text(extra)?.as_deref());
            c[19].i(ts_us);
            out.steps.rows += 1;
        }
        Ok(())
    })();
    if res.is_err() {
        out.steps.rollback(sm);
        out.calls.rollback(cm);
        return Err(Fallback);
    }
    let cref = doc
        .get("continued_trajectory_ref")
        .and_then(|x| x.as_str())
        .filter(|x| !x.is_empty());
    let fmv = doc.get("final_metrics").filter(|x| x.is_obj());
    // frames.final_totals over this one document (_num: ints and finite floats, not bools)
    let tot = |k: &str| float_val(fmv.and_then(|f| f.get(k))).map(|x| 0.0 + x); // (None or 0) + v
    let (mut p, c) = (tot("total_prompt_tokens"), tot("total_cached_tokens"));
    if old_prompt {
        p = p.map(|x| x + c.unwrap_or(0.0));
    }
    Ok(DocInfo {
        n_rows: st.len() as i64,
        n_bad,
        n_agent,
        n_agent_calls,
        continued_ref: cref.map(str::to_string),
        refs,
        has_fm: fmv.is_some(),
        totals: [p, tot("total_completion_tokens"), c, tot("total_cost_usd")],
    })
}

fn results<'a, 'b>(s: &'b V<'a>) -> &'b [V<'a>] {
    match s
        .get("observation")
        .filter(|o| o.is_obj())
        .and_then(|o| o.get("results"))
    {
        Some(V::Arr(r)) => r,
        _ => &[],
    }
}

fn call_list<'a, 'b>(s: &'b V<'a>) -> Vec<&'b V<'a>> {
    match s.get("tool_calls") {
        Some(V::Arr(a)) => a.iter().filter(|c| c.is_obj()).collect(),
        _ => Vec::new(),
    }
}

/// Tool-call rows of one step (observations joined by source_call_id); returns the count.
fn calls<'b>(
    s: &'b V,
    at: &Place,
    step_index: i64,
    (ts, ts_us): (Option<&str>, Option<i64>),
    out: &mut Out,
    refs: &mut Vec<RefItem>,
) -> Result<(i64, Option<Cow<'b, str>>), Fallback> {
    let calls = call_list(s);
    let res = results(s);
    let ids: Vec<&str> = calls
        .iter()
        .filter_map(|c| c.get("tool_call_id").and_then(|x| x.as_str()))
        .collect();
    let mut by_call: Vec<(&str, Vec<Cow<str>>)> = Vec::new();
    let mut res_extra: Vec<(&str, Vec<&V>)> = Vec::new();
    let mut step_level: Vec<Cow<str>> = Vec::new();
    for r in res.iter().filter(|r| r.is_obj()) {
        if let Some(rf) = r.get("subagent_trajectory_ref").filter(|x| x.truthy()) {
            let item = |x: &V| RefItem {
                path: x
                    .get("trajectory_path")
                    .and_then(|p| p.as_str())
                    .map(str::to_string),
                id: x
                    .get("trajectory_id")
                    .and_then(|p| p.as_str())
                    .map(str::to_string),
            };
            match rf {
                V::Arr(a) => refs.extend(a.iter().filter(|x| x.is_obj()).map(item)),
                V::Obj(_) => refs.push(item(rf)),
                _ => {}
            }
        }
        let text = text_of(r.get("content"))?;
        match r.get("source_call_id") {
            Some(V::Str(sid)) if ids.contains(&sid.as_ref()) => {
                let sid: &str = sid.as_ref();
                if let Some(t) = text {
                    match by_call.iter_mut().find(|(k, _)| *k == sid) {
                        Some((_, v)) => v.push(t),
                        None => by_call.push((sid, vec![t])),
                    }
                }
                if let Some(rx) = r.get("extra").filter(|x| x.truthy()) {
                    match res_extra.iter_mut().find(|(k, _)| *k == sid) {
                        Some((_, v)) => v.push(rx),
                        None => res_extra.push((sid, vec![rx])),
                    }
                }
            }
            _ => {
                if let Some(t) = text {
                    step_level.push(t);
                }
            }
        }
    }
    let step_obs = if step_level.is_empty() {
        None
    } else {
        Some(joined(step_level))
    };
    let n = calls.len();
    let mut buf = String::new();
    for (ci, c) in calls.iter().enumerate() {
        let cid = c.get("tool_call_id").and_then(|x| x.as_str());
        let fname = c.get("function_name").and_then(|x| x.as_str());
        let args = c.get("arguments");
        let texts = cid
            .and_then(|id| by_call.iter().find(|(k, _)| *k == id))
            .map(|(_, v)| v);
        let (obs, osrc): (Option<Cow<str>>, Option<&str>) = match texts {
            Some(t) => (Some(joined(t.clone())), Some("call_id")),
            None if n == 1 && step_obs.is_some() => (step_obs.clone(), Some("step")),
            None => (None, None),
        };
        let cx = c.get("extra");
        let rx = cid
            .and_then(|id| res_extra.iter().find(|(k, _)| *k == id))
            .map(|(_, v)| v);
        let (s_err, s_exit) = if cx.is_some_and(|x| x.truthy()) || rx.is_some_and(|v| !v.is_empty())
        {
            let mut ex: Vec<&V> = Vec::new();
            if let Some(x) = cx {
                ex.push(x);
            }
            if let Some(v) = rx {
                ex.extend(v.iter().copied());
            }
            structured_signals(&ex)
        } else {
            (None, None)
        };
        let col = &mut out.calls.cols;
        col[0].i(Some(at.trial));
        col[1].i(Some(step_index));
        col[2].i(Some(ci as i64));
        col[3].s(Some(at.label));
        col[4].b(Some(at.is_main));
        col[5].s(cid);
        col[6].s(fname);
        match args {
            None | Some(V::Null) => col[7].s(None),
            Some(V::Str(a)) => col[7].s(Some(a)),
            Some(a) => {
                buf.clear();
                dumps(a, &mut buf)?;
                col[7].s(Some(&buf));
            }
        }
        let cmd = shell_command(fname, args);
        col[8].s(cmd.as_deref());
        col[9].s(obs.as_deref());
        col[10].s(osrc);
        col[11].b(s_err);
        col[12].i(s_exit);
        col[13].s(ts);
        // finished here (finish.rs): exit_code, is_error, is_error_source, retried,
        // timestamp; `fin` false = Python computes the first three with Polars
        let sg = finish::signals(obs.as_deref(), cmd.is_some(), s_err, s_exit);
        if let [code, err, src, _, _, fin] = &mut col[14..20] {
            finish::write(sg, code, err, src, fin);
        }
        let args_text = match args {
            None | Some(V::Null) => None,
            Some(V::Str(a)) => Some(a.as_ref()),
            Some(_) => Some(buf.as_str()),
        };
        col[17].b(match (fname, args_text) {
            (Some(f), Some(a)) => Some(out.seen.repeat(at.label, f, a)),
            _ => None,
        });
        col[18].i(ts_us);
        out.calls.rows += 1;
    }
    Ok((n as i64, step_obs))
}

#[cfg(test)]
mod tests {
    #[test]
    fn layout_string_matches_the_tables() {
        let want = format!(
            "{}|{}|{}|{}|{}|5\0",
            super::STEP_KINDS,
            super::CALL_KINDS,
            super::TRIAL_KINDS,
            super::ERROR_KINDS,
            crate::probe::PROBE_KINDS
        );
        let got =
            unsafe { std::ffi::CStr::from_ptr(crate::ek_layout() as *const std::ffi::c_char) };
        assert_eq!(format!("{}\0", got.to_str().unwrap()), want);
    }
}
