//! Items of a batch spread over threads: small chunks handed out one at a time (a thread
//! that got a large trajectory does not hold up the others), each thread writing its rows
//! into its own tables; the rows are then put back in item order into one set of tables.

use crate::cols::Table;
use crate::pool;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// What a thread writes into: its tables (and whatever else it keeps between items).
pub trait State {
    fn tables(&self) -> Vec<&Table>;
    fn into_tables(self) -> Vec<Table>;
}

/// A chunk a thread did: (chunk number, the thread's state index, row range per table).
type Done = (usize, usize, Vec<(usize, usize)>);

/// Run `work(state, item)` over items `0..n` on at most `threads` threads (one state per
/// thread, made by `init`), and return one set of tables with every item's rows in item
/// order. None when a chunk panicked (the caller falls back).
pub fn run<S, I, W>(n: usize, threads: u32, init: I, work: W) -> Option<Vec<Table>>
where
    S: State + Send,
    I: Fn() -> S + Sync,
    W: Fn(&mut S, usize) + Sync,
{
    let t = (threads.max(1) as usize).min(n.max(1));
    if t <= 1 {
        let mut s = init();
        let ok = catch_unwind(AssertUnwindSafe(|| (0..n).for_each(|i| work(&mut s, i))));
        return ok.ok().map(|_| s.into_tables());
    }
    // ~16 chunks per thread: small enough to balance, few enough to cost nothing to join
    let per = n.div_ceil(16 * t).clamp(1, 64);
    let n_chunks = n.div_ceil(per);
    let next = AtomicUsize::new(0);
    let states: Mutex<Vec<S>> = Mutex::new(Vec::new());
    let done: Mutex<Vec<Done>> = Mutex::new(Vec::with_capacity(n_chunks));
    let failed = AtomicUsize::new(0);
    let worker = || {
        let mut s = init();
        let mut mine = Vec::new();
        loop {
            let k = next.fetch_add(1, Ordering::Relaxed);
            if k >= n_chunks {
                break;
            }
            let before: Vec<usize> = s.tables().iter().map(|x| x.rows).collect();
            let r = catch_unwind(AssertUnwindSafe(|| {
                ((k * per)..((k + 1) * per).min(n)).for_each(|i| work(&mut s, i))
            }));
            if r.is_err() {
                failed.fetch_add(1, Ordering::Relaxed);
                break; // the state may be half-written: nothing of it is used
            }
            let after: Vec<usize> = s.tables().iter().map(|x| x.rows).collect();
            mine.push((k, before.into_iter().zip(after).collect::<Vec<_>>()));
        }
        let mut all = states.lock().unwrap_or_else(|e| e.into_inner());
        let id = all.len();
        all.push(s);
        drop(all);
        let mut d = done.lock().unwrap_or_else(|e| e.into_inner());
        d.extend(mine.into_iter().map(|(k, r)| (k, id, r)));
    };
    // t - 1 pool threads, and the calling thread works too (ctypes released the GIL)
    pool::scoped(t - 1, &worker);
    let mut done = done.into_inner().unwrap_or_else(|e| e.into_inner());
    if failed.load(Ordering::Relaxed) > 0 || done.len() != n_chunks {
        return None;
    }
    done.sort_unstable_by_key(|d| d.0);
    let states = states.into_inner().unwrap_or_else(|e| e.into_inner());
    join(states, &done, t)
}

/// A table being joined: its parts (taken by the thread that joins it), then the result.
type Slot = Mutex<(Option<Vec<Table>>, Option<Table>)>;

/// The rows of `states`' tables, chunk by chunk in `done`'s order, into new tables; one
/// table per thread at a time on `threads` threads (the steps table alone is most of the
/// bytes: ~70 us of copying for the ATIF fixture tree on one thread). None if a copy
/// panicked (out of memory).
fn join<S: State>(states: Vec<S>, done: &[Done], threads: usize) -> Option<Vec<Table>> {
    let per_state: Vec<Vec<Table>> = states.into_iter().map(|s| s.into_tables()).collect();
    let n_tables = per_state.first()?.len();
    // per table, its part in each state (moved: each is freed by the thread that copied it)
    let mut by_table: Vec<Vec<Table>> = (0..n_tables).map(|_| Vec::new()).collect();
    for tables in per_state {
        for (t, tb) in tables.into_iter().enumerate() {
            by_table[t].push(tb);
        }
    }
    let one = |t: usize, parts: Vec<Table>| -> Table {
        let mut out = parts[0].empty_like();
        let rows = parts.iter().map(|p| p.rows).sum();
        out.reserve_like(&parts.iter().collect::<Vec<_>>(), rows);
        for (_, id, ranges) in done {
            let (a, b) = ranges[t];
            out.append_rows(&parts[*id], a, b);
        }
        out
    };
    let slots: Vec<Slot> = by_table
        .into_iter()
        .map(|parts| Mutex::new((Some(parts), None)))
        .collect();
    let next = AtomicUsize::new(0);
    let task = || loop {
        let t = next.fetch_add(1, Ordering::Relaxed);
        let Some(slot) = slots.get(t) else { break };
        let parts = slot.lock().unwrap_or_else(|e| e.into_inner()).0.take();
        if let Some(parts) = parts {
            let joined = one(t, parts);
            slot.lock().unwrap_or_else(|e| e.into_inner()).1 = Some(joined);
        }
    };
    pool::scoped(threads.min(n_tables).saturating_sub(1), &task);
    slots
        .into_iter()
        .map(|m| m.into_inner().unwrap_or_else(|e| e.into_inner()).1)
        .collect()
}
