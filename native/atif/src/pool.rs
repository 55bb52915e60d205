//! Worker threads kept between calls: a call on a small batch (tens of trials, ~1 ms of
//! work) otherwise pays a thread creation and teardown per worker (clone, stack mmap and
//! munmap: ~5% of such a call, and a slower start).
//!
//! `scoped(helpers, f)` runs `f` on `helpers` pool threads and on the calling thread and
//! returns when every run has finished, so `f` may borrow the caller's data. A process
//! forked after the pool started (Python multiprocessing) gets a pool of its own: the
//! parent's threads do not exist there.

use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::{Condvar, Mutex};

type Job = Box<dyn FnOnce() + Send>;

struct Pool {
    pid: u32,
    queue: Mutex<(VecDeque<Job>, usize)>, // jobs, threads started
    ready: Condvar,
}

static POOL: AtomicPtr<Pool> = AtomicPtr::new(std::ptr::null_mut());

/// This process's pool (made on first use; pools are never freed: their threads live as
/// long as the process).
fn pool() -> &'static Pool {
    let pid = std::process::id();
    let cur = POOL.load(Ordering::Acquire);
    if !cur.is_null() {
        // SAFETY: pools are leaked, never freed
        let p = unsafe { &*cur };
        if p.pid == pid {
            return p;
        }
    }
    let fresh = Box::into_raw(Box::new(Pool {
        pid,
        queue: Mutex::new((VecDeque::new(), 0)),
        ready: Condvar::new(),
    }));
    match POOL.compare_exchange(cur, fresh, Ordering::AcqRel, Ordering::Acquire) {
        Ok(_) => unsafe { &*fresh },
        Err(other) => {
            // another thread made one first: use it (ours was never shared)
            drop(unsafe { Box::from_raw(fresh) });
            unsafe { &*other }
        }
    }
}

impl Pool {
    /// Queue `jobs`, starting threads until there are at least `want`.
    fn submit(&'static self, jobs: Vec<Job>, want: usize) {
        let mut q = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        let start = want.saturating_sub(q.1);
        q.1 += start;
        q.0.extend(jobs);
        drop(q);
        for _ in 0..start {
            let spawned = std::thread::Builder::new()
                .name("evalkit-atif".into())
                .stack_size(8 << 20)
                .spawn(move || self.work());
            if spawned.is_err() {
                // no thread: run what is queued here, later calls retry
                self.queue.lock().unwrap_or_else(|e| e.into_inner()).1 -= 1;
                while let Some(job) = self.take() {
                    job();
                }
            }
        }
        self.ready.notify_all();
    }

    fn take(&self) -> Option<Job> {
        self.queue
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .0
            .pop_front()
    }

    fn work(&self) {
        loop {
            let mut q = self.queue.lock().unwrap_or_else(|e| e.into_inner());
            while q.0.is_empty() {
                q = self.ready.wait(q).unwrap_or_else(|e| e.into_inner());
            }
            let job = q.0.pop_front();
            drop(q);
            if let Some(job) = job {
                job();
            }
        }
    }
}

/// Counts the runs still going; `wait` returns when none is.
struct Latch {
    left: Mutex<usize>,
    done: Condvar,
}

impl Latch {
    fn finish(&self) {
        let mut n = self.left.lock().unwrap_or_else(|e| e.into_inner());
        *n -= 1;
        if *n == 0 {
            self.done.notify_all();
        }
    }
    fn wait(&self) {
        let mut n = self.left.lock().unwrap_or_else(|e| e.into_inner());
        while *n > 0 {
            n = self.done.wait(n).unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// Run `f` on `helpers` pool threads and on this thread; return when all runs are done.
/// A panic in `f` is caught (the run counts as done); callers detect missing work.
pub fn scoped<F: Fn() + Sync>(helpers: usize, f: &F) {
    if helpers == 0 {
        let _ = catch_unwind(AssertUnwindSafe(f));
        return;
    }
    let latch = Latch {
        left: Mutex::new(helpers),
        done: Condvar::new(),
    };
    let f_dyn: &(dyn Fn() + Sync) = f;
    // SAFETY: the jobs use `f` and `latch` only before `latch.finish()`, and this function
    // does not return before `latch.wait()` saw every job finish, so both outlive them.
    let f_static: &'static (dyn Fn() + Sync) = unsafe { std::mem::transmute(f_dyn) };
    let latch_static: &'static Latch = unsafe { std::mem::transmute(&latch) };
    let jobs: Vec<Job> = (0..helpers)
        .map(|_| -> Job {
            Box::new(move || {
                let _ = catch_unwind(AssertUnwindSafe(f_static));
                latch_static.finish();
            })
        })
        .collect();
    pool().submit(jobs, helpers);
    let _ = catch_unwind(AssertUnwindSafe(f));
    latch.wait();
}
