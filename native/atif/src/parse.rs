//! The parse of a batch of trial folders: `ek_start` / `ek_finish` (the pool threads begin
//! at once, the calling thread joins them at the end), `ek_compare` (final_metrics against
//! the result.json totals) and `ek_warm`.

use crate::extract::Out;
use crate::{cols, pool, sched, trial, Batch};
use std::panic::{catch_unwind, AssertUnwindSafe};

fn one_trial(dir: &[u8], idx: i64, cap: u64, out: &mut Out, buf: &mut Vec<u8>) {
    let marks = (
        out.steps.mark(),
        out.calls.mark(),
        out.errors.mark(),
        out.trials.mark(),
    );
    out.seen.clear();
    let ok = catch_unwind(AssertUnwindSafe(|| trial::trial(dir, idx, cap, out, buf)));
    if ok.is_err() {
        out.steps.rollback(marks.0);
        out.calls.rollback(marks.1);
        out.errors.rollback(marks.2);
        out.trials.rollback(marks.3);
        let t = &mut out.trials.cols;
        t[0].i(Some(1));
        t[1].i(None);
        t[2].i(None);
        for k in 0..4 {
            t[3 + k].f(None);
        }
        t[7].s(None);
        t[8].b(Some(false));
        t[9].i(None);
        t[10].b(Some(false));
        out.trials.rows += 1;
    }
}

/// What a thread parsing trials keeps: its tables and its read buffer.
type TrialState = (Out, Vec<u8>);
type TrialInit = Box<dyn Fn() -> TrialState + Send + Sync>;
type TrialWork = Box<dyn Fn(&mut TrialState, usize) + Send + Sync>;

/// A parse started by `ek_start`, to be finished by `ek_finish`.
pub struct Pending(sched::Started<TrialState, TrialInit, TrialWork>);

/// Start parsing the trajectories of `n` trial folders (paths concatenated in `dirs`,
/// boundaries in `offs[0..=n]`; copied, the caller may free them) on `threads` threads:
/// the pool threads begin now, and `ek_finish` has the calling thread join them and
/// returns the result (tables per part: steps, calls, trials, errors).
///
/// # Safety
/// `dirs` must hold `offs[n]` bytes and `offs` n + 1 offsets.
#[no_mangle]
pub unsafe extern "C" fn ek_start(
    dirs: *const u8,
    offs: *const u64,
    n: u64,
    cap: u64,
    threads: u32,
) -> *mut Pending {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| std::panic::set_hook(Box::new(|_| {})));
    let n = n as usize;
    let offs = std::slice::from_raw_parts(offs, n + 1).to_vec();
    let all = std::slice::from_raw_parts(dirs, offs[n] as usize).to_vec();
    let init: TrialInit = Box::new(|| (Out::new(), Vec::new()));
    let work: TrialWork = Box::new(move |(o, buf), i| {
        let dir = &all[offs[i] as usize..offs[i + 1] as usize];
        one_trial(dir, i as i64, cap, o, buf)
    });
    Box::into_raw(Box::new(Pending(sched::start(n, threads, init, work))))
}

/// Finish a parse `ek_start` began (this thread works too) and return its result.
///
/// # Safety
/// `p` must come from `ek_start` and not be finished yet (it is freed here).
#[no_mangle]
pub unsafe extern "C" fn ek_finish(p: *mut Pending) -> *mut Batch {
    let pending = Box::from_raw(p);
    let parts = vec![pending.0.finish().unwrap_or_default()];
    Box::into_raw(Box::new(Batch {
        parts,
        text: Vec::new(),
    }))
}

/// Compare the final_metrics totals of the parsed trials (status 0) of an `ek_finish`
/// result with the trials' result.json totals (`totals`: 4 * n values, input, output,
/// cache tokens, cost, each total's n values in a row; NaN = unknown) into the TRIALS
/// table's `differ` column (`totals_differ`); returns how many differ, or -1 when
/// the TRIALS table does not have `n` rows.
///
/// # Safety
/// `b` must come from `ek_finish`, its TRIALS table not taken; `totals` must
/// hold 4 * n values.
#[no_mangle]
pub unsafe extern "C" fn ek_compare(b: *mut Batch, totals: *const f64, n: u64) -> i64 {
    let n = n as usize;
    let batch = &mut *b;
    let Some(tb) = batch.parts.get_mut(0).and_then(|p| p.get_mut(2)) else {
        return -1;
    };
    if tb.rows != n {
        return -1;
    }
    let t = std::slice::from_raw_parts(totals, 4 * n);
    let mut differ = vec![false; n];
    for (i, d) in differ.iter_mut().enumerate() {
        if tb.cols[0].int_at(i) != Some(0) {
            continue; // not parsed here: nothing to compare
        }
        let fm = [3, 4, 5, 6].map(|c| tb.cols[c].float_at(i));
        *d = totals_differ(&fm, &[t[i], t[n + i], t[2 * n + i], t[3 * n + i]]);
    }
    let count = differ.iter().filter(|&&d| d).count();
    tb.cols[10] = cols::Col::bools(&differ);
    count as i64
}

/// Whether a final_metrics total (`fm`: prompt, completion, cached tokens, cost) differs
/// from the result.json total (`res`, NaN = unknown): `frames.metrics_differ_expr`'s rule.
/// Only totals known on both sides count; tokens must be equal, cost within 1e-6 relative
/// (1e-9 absolute).
pub fn totals_differ(fm: &[Option<f64>; 4], res: &[f64; 4]) -> bool {
    (0..4).any(|k| {
        let (Some(a), r) = (fm[k], res[k]) else {
            return false;
        };
        if a.is_nan() || r.is_nan() {
            return false;
        }
        if k < 3 {
            a != r
        } else {
            (a - r).abs() > f64::max(1e-9, 1e-6 * a.abs().max(r.abs()))
        }
    })
}

/// Start the pool threads a batch of `helpers` + 1 threads uses and have them spin for up
/// to `ns` nanoseconds (at most 5 ms): Python calls this before it prepares a batch, so
/// `ek_start` finds them awake (waking a sleeping thread costs 30-80 us on a VM).
#[no_mangle]
pub extern "C" fn ek_warm(helpers: u32, ns: u64) {
    pool::warm(helpers as usize, ns);
}

impl sched::State for (Out, Vec<u8>) {
    fn tables(&self) -> Vec<&cols::Table> {
        let o = &self.0;
        vec![&o.steps, &o.calls, &o.trials, &o.errors]
    }
    fn into_tables(self) -> Vec<cols::Table> {
        let o = self.0;
        vec![o.steps, o.calls, o.trials, o.errors]
    }
}

#[cfg(test)]
mod tests {
    use super::totals_differ;

    #[test]
    fn totals_compared_only_where_both_known() {
        let nan = f64::NAN;
        let fm = [Some(100.0), Some(20.0), None, Some(0.5)];
        assert!(!totals_differ(&fm, &[100.0, 20.0, 7.0, 0.5]));
        assert!(totals_differ(&fm, &[101.0, 20.0, 7.0, 0.5]));
        assert!(!totals_differ(&fm, &[nan, nan, nan, nan]));
        assert!(!totals_differ(&[None; 4], &[1.0, 2.0, 3.0, 4.0]));
        // cost: 1e-6 relative, 1e-9 absolute
        assert!(!totals_differ(&fm, &[100.0, 20.0, nan, 0.5 + 4e-7]));
        assert!(totals_differ(&fm, &[100.0, 20.0, nan, 0.5 + 6e-7]));
        let zero = [None, None, None, Some(0.0)];
        assert!(!totals_differ(&zero, &[nan, nan, nan, 5e-10]));
        assert!(totals_differ(&zero, &[nan, nan, nan, 2e-9]));
    }
}
