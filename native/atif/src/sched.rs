//! Items of a batch spread over threads: small chunks handed out one at a time (a thread
//! that got a large trajectory does not hold up the others), each thread writing its rows
//! into its own tables; the rows are then put back in item order into one set of tables.

use crate::cols::Table;
use crate::pool;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// What a thread writes into: its tables (and whatever else it keeps between items).
pub trait State {
    fn tables(&self) -> Vec<&Table>;
    fn into_tables(self) -> Vec<Table>;
}

/// A chunk a thread did: (chunk number, the thread's state index, row range per table).
type Done = (usize, usize, Vec<(usize, usize)>);

/// How many threads `n` items get when `threads` are asked for.
fn threads_for(n: usize, threads: u32) -> usize {
    (threads.max(1) as usize).min(n.max(1))
}

/// A batch being worked on: chunks handed out by `next`, each thread's state and the chunks
/// it did collected at the end of its run.
pub struct Shared<S, I, W> {
    n: usize,
    per: usize,
    n_chunks: usize,
    next: AtomicUsize,
    states: Mutex<Vec<S>>,
    done: Mutex<Vec<Done>>,
    failed: AtomicUsize,
    init: I,
    work: W,
}

impl<S, I, W> Shared<S, I, W>
where
    S: State + Send,
    I: Fn() -> S + Sync,
    W: Fn(&mut S, usize) + Sync,
{
    fn new(n: usize, t: usize, init: I, work: W) -> Self {
        // ~16 chunks per thread: small enough to balance, few enough to cost nothing to join
        let per = n.div_ceil(16 * t).clamp(1, 64);
        let n_chunks = n.div_ceil(per);
        Shared {
            n,
            per,
            n_chunks,
            next: AtomicUsize::new(0),
            states: Mutex::new(Vec::new()),
            done: Mutex::new(Vec::with_capacity(n_chunks)),
            failed: AtomicUsize::new(0),
            init,
            work,
        }
    }

    /// One thread's run: chunks until none is left, then its state is handed in.
    fn worker(&self) {
        let (n, per) = (self.n, self.per);
        let mut s = (self.init)();
        let mut mine = Vec::new();
        loop {
            let k = self.next.fetch_add(1, Ordering::Relaxed);
            if k >= self.n_chunks {
                break;
            }
            let before: Vec<usize> = s.tables().iter().map(|x| x.rows).collect();
            let r = catch_unwind(AssertUnwindSafe(|| {
                ((k * per)..((k + 1) * per).min(n)).for_each(|i| (self.work)(&mut s, i))
            }));
            if r.is_err() {
                self.failed.fetch_add(1, Ordering::Relaxed);
                break; // the state may be half-written: nothing of it is used
            }
            let after: Vec<usize> = s.tables().iter().map(|x| x.rows).collect();
            mine.push((k, before.into_iter().zip(after).collect::<Vec<_>>()));
        }
        if mine.is_empty() {
            return; // nothing to join (a thread that started after the last chunk)
        }
        let mut all = self.states.lock().unwrap_or_else(|e| e.into_inner());
        let id = all.len();
        all.push(s);
        drop(all);
        let mut d = self.done.lock().unwrap_or_else(|e| e.into_inner());
        d.extend(mine.into_iter().map(|(k, r)| (k, id, r)));
    }

    /// After every run: the rows in item order (None when a chunk panicked).
    fn finish(&self, t: usize) -> Option<Vec<Table>> {
        let mut done = std::mem::take(&mut *self.done.lock().unwrap_or_else(|e| e.into_inner()));
        if self.failed.load(Ordering::Relaxed) > 0 || done.len() != self.n_chunks {
            return None;
        }
        done.sort_unstable_by_key(|d| d.0);
        let states = std::mem::take(&mut *self.states.lock().unwrap_or_else(|e| e.into_inner()));
        if states.is_empty() {
            return Some((self.init)().into_tables()); // no items: empty tables
        }
        join(states, &done, t)
    }

    /// Every item on this thread, into one state (no chunks, no join).
    fn serial(&self) -> Option<Vec<Table>> {
        let mut s = (self.init)();
        let ok = catch_unwind(AssertUnwindSafe(|| {
            (0..self.n).for_each(|i| (self.work)(&mut s, i))
        }));
        ok.ok().map(|_| s.into_tables())
    }
}

/// Run `work(state, item)` over items `0..n` on at most `threads` threads (one state per
/// thread, made by `init`), and return one set of tables with every item's rows in item
/// order. None when a chunk panicked (the caller falls back).
pub fn run<S, I, W>(n: usize, threads: u32, init: I, work: W) -> Option<Vec<Table>>
where
    S: State + Send,
    I: Fn() -> S + Sync,
    W: Fn(&mut S, usize) + Sync,
{
    let t = threads_for(n, threads);
    let sh = Shared::new(n, t, init, work);
    if t <= 1 {
        return sh.serial();
    }
    // t - 1 pool threads, and the calling thread works too (ctypes released the GIL)
    pool::scoped(t - 1, &|| sh.worker());
    sh.finish(t)
}

/// `run` in two halves: `start` sets the pool threads to work and returns; `Started::finish`
/// has the calling thread work too, waits for the others and joins. What the caller does
/// in between (Python preparing the rest of the load) overlaps with the parsing.
pub struct Started<S, I, W> {
    shared: Arc<Shared<S, I, W>>,
    latch: Option<Arc<pool::Latch>>,
    t: usize,
}

pub fn start<S, I, W>(n: usize, threads: u32, init: I, work: W) -> Started<S, I, W>
where
    S: State + Send + 'static,
    I: Fn() -> S + Send + Sync + 'static,
    W: Fn(&mut S, usize) + Send + Sync + 'static,
{
    let t = threads_for(n, threads);
    let shared = Arc::new(Shared::new(n, t, init, work));
    let latch = (t > 1).then(|| {
        let sh = Arc::clone(&shared);
        pool::spawn(t - 1, Arc::new(move || sh.worker()))
    });
    Started { shared, latch, t }
}

impl<S, I, W> Started<S, I, W>
where
    S: State + Send,
    I: Fn() -> S + Sync,
    W: Fn(&mut S, usize) + Sync,
{
    pub fn finish(self) -> Option<Vec<Table>> {
        let Some(latch) = self.latch else {
            return self.shared.serial();
        };
        self.shared.worker();
        latch.wait();
        self.shared.finish(self.t)
    }
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
