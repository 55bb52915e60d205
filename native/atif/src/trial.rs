//! One Harbor trial folder -> its rows: a port of the orchestration in
//! `evalkit/load/steps/extract.py` (parse_trial / parse_main / _chain / _subagents /
//! _resolve), same order, labels and error rows. The trial goes back to the Python path
//! (status 1, its rows dropped) whenever that path could differ: no agent/trajectory.json
//! (goose logs), a steps/ folder (multi-step tasks), a file that cannot be read or is not
//! strict ATIF JSON, embedded subagent trajectories, names or references with characters
//! whose Python repr this port does not reproduce.

use crate::dir::{self, Dir, Listing};
use crate::extract::{document, DocInfo, Out, Place, RefItem};
use crate::json::{parse_sel, Node};
use crate::paths::{basename, cont_number, dirname, join, normpath, prefix_of, resolve, sub_label};
use crate::sniff::{is_atif, sniff};
use crate::text::py_repr;
use std::collections::HashSet;
use std::ffi::OsStr;
use std::fs;
use std::io::ErrorKind;
use std::os::unix::ffi::OsStrExt;

const MAX_FILES: usize = 500; // extract._MAX_FILES
const MAX_DEPTH: usize = 4; // extract._MAX_DEPTH

pub struct Bail;

fn text(p: &[u8]) -> Result<&str, Bail> {
    std::str::from_utf8(p).map_err(|_| Bail)
}

struct Pending {
    r: RefItem,
    base_dir: Vec<u8>,
    prefix: String,
}

struct Ctx<'o> {
    out: &'o mut Out,
    buf: &'o mut Vec<u8>, // the read buffer, reused from file to file
    n_docs: usize,
    main_not_atif: bool,
    trial: i64,
    cap: u64,
    n_rows: i64,
    n_steps: i64,
    n_calls: i64,
    seen: HashSet<Vec<u8>>,
    labels: HashSet<String>,
    /// The trial's agent/ folder, open: its files are opened relative to it.
    agent: Option<Dir>,
}

impl Ctx<'_> {
    fn err(&mut self, path: &[u8], kind: &str, msg: &str) -> Result<(), Bail> {
        let c = &mut self.out.errors.cols;
        c[0].i(Some(self.trial));
        c[1].s(Some(text(path)?));
        c[2].s(Some(kind));
        c[3].s(Some(msg));
        self.out.errors.rows += 1;
        Ok(())
    }

    fn unique_label(&mut self, label: &str) -> String {
        let mut out = label.to_string();
        let mut n = 1;
        while self.labels.contains(&out) {
            n += 1;
            out = format!("{label}#{n}");
        }
        self.labels.insert(out.clone());
        out
    }

    /// `read_into`, a file of the open agent/ folder opened relative to it.
    fn read(&mut self, path: &[u8]) -> bool {
        if let Some(d) = &self.agent {
            let n = d.path.len();
            if path.len() > n + 1 && path.starts_with(&d.path) && path[n] == b'/' {
                let name = &path[n + 1..];
                if !name.contains(&b'/') && name != b"." && name != b".." {
                    return d
                        .open(name)
                        .is_some_and(|f| crate::read_file(f, self.cap, self.buf));
                }
            }
        }
        crate::read_into(path, self.cap, self.buf)
    }

    /// Read, parse and add one document (Bail on anything the Python path reports).
    fn add(&mut self, path: &[u8], label: &str, is_main: bool) -> Result<DocInfo, Bail> {
        if !self.read(path) {
            return Err(Bail);
        }
        let doc = parse_sel(self.buf, &crate::extract::DOC).map_err(|_| Bail)?;
        if !is_atif(&doc) {
            self.main_not_atif = self.n_docs == 0;
            return Err(Bail);
        }
        self.n_docs += 1;
        let at = Place {
            trial: self.trial,
            start: self.n_rows,
            label,
            is_main,
        };
        let info = document(&doc, &at, self.out).map_err(|_| Bail)?;
        self.n_rows += info.n_rows;
        Ok(info)
    }

    /// extract._chain: a document and its continuations; subagent refs queued on `pending`.
    /// Returns the totals of the last document with final_metrics.
    fn chain(
        &mut self,
        mut path: Vec<u8>,
        label: &str,
        is_main: bool,
        pending: &mut Vec<Pending>,
    ) -> Result<Option<[Option<f64>; 4]>, Bail> {
        let base_dir = dirname(&path).to_vec();
        let prefix = text(prefix_of(&path))?.to_string();
        let mut last = None;
        loop {
            self.seen.insert(normpath(&path));
            let info = self.add(&path, label, is_main)?;
            if info.n_bad > 0 {
                let msg = format!("{} step(s) are not JSON objects (skipped)", info.n_bad);
                self.err(&path, "bad_step", &msg)?;
            }
            if is_main {
                self.n_steps += info.n_agent;
                self.n_calls += info.n_agent_calls;
            }
            for r in info.refs {
                pending.push(Pending {
                    r,
                    base_dir: base_dir.clone(),
                    prefix: prefix.clone(),
                });
            }
            if info.has_fm {
                last = Some(info.totals);
            }
            let Some(cref) = info.continued_ref else {
                return Ok(last);
            };
            match resolve(&base_dir, &prefix, &cref) {
                None => {
                    let msg = format!(
                        "continued_trajectory_ref {} not found",
                        py_repr(&cref).ok_or(Bail)?
                    );
                    self.err(&path, "missing_continuation", &msg)?;
                    return Ok(last);
                }
                Some(nxt) => {
                    if self.seen.contains(&normpath(&nxt)) || self.seen.len() >= MAX_FILES {
                        let msg = "continuation already read (cycle) or too many files";
                        self.err(&nxt, "continuation_cycle", msg)?;
                        return Ok(last);
                    }
                    path = nxt;
                }
            }
        }
    }

    /// extract._subagents for path references (embedded trajectories bail earlier).
    fn subagents(&mut self, pending: Vec<Pending>, depth: usize) -> Result<(), Bail> {
        let mut nxt: Vec<Pending> = Vec::new();
        for p in pending {
            if self.seen.len() >= MAX_FILES {
                break;
            }
            let Some(tpath) = p.r.path.as_deref() else {
                if p.r.id.is_none() {
                    let msg = "subagent_trajectory_ref without trajectory_path or trajectory_id";
                    self.err(&p.base_dir, "bad_subagent_ref", msg)?;
                }
                continue;
            };
            let Some(found) = resolve(&p.base_dir, &p.prefix, tpath) else {
                let msg = format!(
                    "subagent trajectory {} not found",
                    py_repr(tpath).ok_or(Bail)?
                );
                self.err(
                    &join(&p.base_dir, tpath.as_bytes()),
                    "missing_subagent",
                    &msg,
                )?;
                continue;
            };
            if self.seen.contains(&normpath(&found)) {
                continue;
            }
            let label = match p.r.id.as_deref() {
                Some(id) if !id.is_empty() => id.to_string(),
                _ => sub_label(text(&found)?, &p.prefix),
            };
            let label = self.unique_label(&label);
            self.chain(found, &label, false, &mut nxt)?;
        }
        if !nxt.is_empty() && depth < MAX_DEPTH {
            self.subagents(nxt, depth + 1)?;
        }
        Ok(())
    }
}

/// What `run` made of a trial.
enum Outcome {
    /// ATIF parsed: n_steps, n_tool_calls, final_totals.
    Parsed(i64, i64, [Option<f64>; 4]),
    /// No ATIF trajectory (none, or a main file that is not ATIF: its not_atif error row
    /// is written): the names in agent/ ('\0'-joined) for the goose-log check.
    NoTrajectory(Vec<u8>),
}

/// extract.parse_trial for one trial folder; rows / errors / a trials row go to `out`.
/// trials status: 0 parsed, 2 no ATIF trajectory (Python checks for a goose log), 1 bail.
/// goose.GOOSE_LOG_NAMES: a trial without an ATIF trajectory but with one of these is
/// handed to the Python path (goose turn counting).
const GOOSE_LOG_NAMES: [&[u8]; 4] = [
    b"goose.txt",
    b"goose.jsonl",
    b"goose-stream.jsonl",
    b"goose.stream-json.jsonl",
];

pub fn trial(dir: &[u8], idx: i64, cap: u64, out: &mut Out, buf: &mut Vec<u8>) {
    let marks = (out.steps.mark(), out.calls.mark(), out.errors.mark());
    let res = run(dir, idx, cap, out, buf);
    if res.is_err() {
        out.steps.rollback(marks.0);
        out.calls.rollback(marks.1);
        out.errors.rollback(marks.2);
    }
    let t = &mut out.trials.cols;
    let (mut status, n, tot, names) = match res {
        Ok(Outcome::Parsed(s, c, tot)) => (0, Some((s, c)), tot, None),
        Ok(Outcome::NoTrajectory(names)) => (2, None, [None; 4], Some(names)),
        Err(Bail) => (1, None, [None; 4], None),
    };
    let names = match names.as_deref().map(std::str::from_utf8) {
        Some(Ok(s)) => Some(s),
        Some(Err(_)) => {
            // non-UTF-8 names: let the Python path decide (status 1, nothing kept)
            status = 1;
            out.steps.rollback(marks.0);
            out.calls.rollback(marks.1);
            out.errors.rollback(marks.2);
            None
        }
        None => None,
    };
    t[0].i(Some(status));
    t[1].i(n.map(|x| x.0));
    t[2].i(n.map(|x| x.1));
    for (k, v) in tot.iter().enumerate() {
        t[3 + k].f(*v);
    }
    t[7].s(names);
    t[8].b(Some(status == 0)); // has_data
    t[9].i(n.map(|x| x.0)); // n_turns: the steps of an ATIF trajectory
    t[10].b(Some(false)); // differ: ek_compare fills it
    out.trials.rows += 1;
}

fn run(dir: &[u8], idx: i64, cap: u64, out: &mut Out, buf: &mut Vec<u8>) -> Result<Outcome, Bail> {
    match fs::metadata(OsStr::from_bytes(&join(dir, b"steps"))) {
        Err(e) if e.kind() == ErrorKind::NotFound => {}
        _ => return Err(Bail), // multi-step task, or cannot tell
    }
    let adir = join(dir, b"agent");
    let (mut names, agent) = match dir::list(&adir) {
        Listing::Names(names, d) => (names, Some(d)),
        Listing::Missing => (Vec::new(), None),
        Listing::Error => return Err(Bail),
    };
    names.sort();
    if !names.iter().any(|n| n == b"trajectory.json") {
        if names
            .iter()
            .any(|n| GOOSE_LOG_NAMES.contains(&n.as_slice()))
        {
            return Err(Bail); // a goose log: extract.find_goose_log counts its turns
        }
        return Ok(Outcome::NoTrajectory(names.join(&0u8)));
    }
    let main = join(&adir, b"trajectory.json");
    let mut cx = Ctx {
        out,
        buf,
        n_docs: 0,
        main_not_atif: false,
        trial: idx,
        cap,
        n_rows: 0,
        n_steps: 0,
        n_calls: 0,
        seen: HashSet::new(),
        labels: HashSet::new(),
        agent,
    };
    let mut pending = Vec::new();
    let label = cx.unique_label("main");
    let mut last = match cx.chain(main.clone(), &label, true, &mut pending) {
        Ok(l) => l,
        Err(Bail) if cx.main_not_atif => {
            // parse_main: the main file is not ATIF -> one not_atif error, no trajectory
            if !cx.read(&main) {
                return Err(Bail);
            }
            static ALL: Node = Node::All;
            let doc = parse_sel(cx.buf, &ALL).map_err(|_| Bail)?;
            let what = sniff(&doc).ok_or(Bail)?;
            cx.err(
                &main,
                "not_atif",
                &format!("not an ATIF trajectory: {what}"),
            )?;
            if names
                .iter()
                .any(|n| GOOSE_LOG_NAMES.contains(&n.as_slice()))
            {
                return Err(Bail);
            }
            return Ok(Outcome::NoTrajectory(names.join(&0u8)));
        }
        Err(b) => return Err(b),
    };
    let base_dir = dirname(&main).to_vec();
    let mut conts: Vec<(u128, Vec<u8>)> = Vec::new();
    let mut summ: Vec<Vec<u8>> = Vec::new();
    for n in &names {
        if !n.starts_with(b"trajectory.") {
            continue;
        }
        let ns = text(n)?;
        if !ns.is_ascii() {
            return Err(Bail); // Python's \d matches non-ASCII digits
        }
        let full = join(&base_dir, n);
        if cx.seen.contains(&normpath(&full)) {
            continue;
        }
        if ns.starts_with("trajectory.cont-") && ns.len() > 50 {
            return Err(Bail); // a huge cont number: leave the exact int sort to Python
        }
        if let Some(k) = cont_number(ns) {
            conts.push((k, full));
        } else if ns.starts_with("trajectory.summarization-") && ns.ends_with(".json") {
            summ.push(full);
        }
    }
    conts.sort();
    for (_, full) in conts {
        if cx.seen.contains(&normpath(&full)) {
            continue;
        }
        let msg = "continuation file not referenced by continued_trajectory_ref; appended to main in cont-N order";
        cx.err(&full, "unlinked_continuation", msg)?;
        if let Some(t) = cx.chain(full, "main", true, &mut pending)? {
            last = Some(t);
        }
    }
    for full in summ {
        let r = RefItem {
            path: Some(text(basename(&full))?.to_string()),
            id: None,
        };
        pending.push(Pending {
            r,
            base_dir: base_dir.clone(),
            prefix: String::new(),
        });
    }
    cx.subagents(pending, 0)?;
    let (n_steps, n_calls) = (cx.n_steps, cx.n_calls);
    Ok(Outcome::Parsed(n_steps, n_calls, last.unwrap_or([None; 4])))
}
