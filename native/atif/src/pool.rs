//! Worker threads kept between calls: a call on a small batch (tens of trials, ~1 ms of
//! work) otherwise pays a thread creation and teardown per worker (clone, stack mmap and
//! munmap: ~5% of such a call, and a slower start).
//!
//! `scoped(helpers, f)` runs `f` on `helpers` pool threads and on the calling thread and
//! returns when every run has finished, so `f` may borrow the caller's data. A process
//! forked after the pool started (Python multiprocessing) gets a pool of its own: the
//! parent's threads do not exist there.
//!
//! Waiting spins briefly before it sleeps. Waking a sleeping thread costs 30-80 us on a
//! virtual machine (futex wake, an inter-processor interrupt, the host scheduling the
//! idle vCPU), as much as parsing a few trials: a pool thread keeps looking for work for
//! `AFTER_JOB` after a job (and for as long as `warm` asks: the caller announces a batch
//! while it prepares it), and the calling thread, done with its share, watches the
//! others finish for up to `WAIT_SPIN` before sleeping.

use std::collections::VecDeque;
use std::hint::spin_loop;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::Instant;

type Job = Box<dyn FnOnce() + Send>;

/// How long a pool thread keeps looking for work after a job.
const AFTER_JOB: u64 = 200_000; // ns
/// How long the calling thread spins for the pool threads to finish before it sleeps.
const WAIT_SPIN: u64 = 1_000_000; // ns
/// Longest spin `warm` may ask for.
const MAX_WARM: u64 = 5_000_000; // ns

/// One round of spinning: a few CPU pause hints, then the CPU is yielded (a thread that
/// the scheduler queued on this CPU, perhaps the one waited for, runs first; on a busy
/// machine a spinning thread takes no time from others).
fn pause() {
    for _ in 0..32 {
        spin_loop();
    }
    std::thread::yield_now();
}

/// Nanoseconds since the first call (a monotonic clock; vDSO, no syscall).
fn now() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

struct Pool {
    pid: u32,
    queue: Mutex<(VecDeque<Job>, usize)>, // jobs, threads started
    ready: Condvar,
    /// Jobs in the queue (read without the lock while spinning).
    queued: AtomicUsize,
    /// `now()` until which idle pool threads spin instead of sleeping.
    spin_until: AtomicU64,
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
        queued: AtomicUsize::new(0),
        spin_until: AtomicU64::new(0),
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
        self.queued.fetch_add(jobs.len(), Ordering::Release);
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
        let job = self
            .queue
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .0
            .pop_front();
        if job.is_some() {
            self.queued.fetch_sub(1, Ordering::Relaxed);
        }
        job
    }

    fn spinning(&self) -> bool {
        now() < self.spin_until.load(Ordering::Relaxed)
    }

    /// Spin until a job may be queued or the spin time is over.
    fn spin(&self) {
        while self.queued.load(Ordering::Acquire) == 0 && self.spinning() {
            pause();
        }
    }

    fn work(&self) {
        loop {
            self.spin();
            let mut q = self.queue.lock().unwrap_or_else(|e| e.into_inner());
            loop {
                if let Some(job) = q.0.pop_front() {
                    self.queued.fetch_sub(1, Ordering::Relaxed);
                    drop(q);
                    job();
                    self.spin_until
                        .fetch_max(now() + AFTER_JOB, Ordering::Relaxed);
                    break;
                }
                if self.spinning() {
                    break; // woken by `warm`: spin (outer loop)
                }
                q = self.ready.wait(q).unwrap_or_else(|e| e.into_inner());
            }
        }
    }
}

/// Have `helpers` pool threads started and spinning for up to `ns` nanoseconds (at most
/// `MAX_WARM`): a batch submitted in that time starts without waking a sleeping thread.
pub fn warm(helpers: usize, ns: u64) {
    if helpers == 0 {
        return;
    }
    let p = pool();
    p.spin_until
        .fetch_max(now() + ns.min(MAX_WARM), Ordering::Relaxed);
    p.submit(Vec::new(), helpers);
}

/// Counts the runs still going; `wait` returns when none is. Shared (Arc) with the runs:
/// the waiter may return as soon as the count is 0, while the last run still holds it.
pub struct Latch {
    left: AtomicUsize,
    lock: Mutex<()>,
    done: Condvar,
}

impl Latch {
    fn finish(&self) {
        if self.left.fetch_sub(1, Ordering::AcqRel) == 1 {
            // the waiter checks `left` under the lock before it sleeps: no lost wake-up
            let _g = self.lock.lock().unwrap_or_else(|e| e.into_inner());
            self.done.notify_all();
        }
    }
    pub fn wait(&self) {
        let until = now() + WAIT_SPIN;
        while self.left.load(Ordering::Acquire) > 0 && now() < until {
            pause();
        }
        let mut g = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        while self.left.load(Ordering::Acquire) > 0 {
            g = self.done.wait(g).unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// Run `f` on `helpers` pool threads (not on this one) and return at once; the latch's
/// `wait` returns when every run has finished. Each run drops its clone of `f` before it
/// counts down, so after `wait` the caller holds the only one.
pub fn spawn(helpers: usize, f: Arc<dyn Fn() + Send + Sync>) -> Arc<Latch> {
    let latch = Arc::new(Latch {
        left: AtomicUsize::new(helpers),
        lock: Mutex::new(()),
        done: Condvar::new(),
    });
    if helpers == 0 {
        return latch;
    }
    let jobs: Vec<Job> = (0..helpers)
        .map(|_| -> Job {
            let (f, latch) = (Arc::clone(&f), Arc::clone(&latch));
            Box::new(move || {
                let _ = catch_unwind(AssertUnwindSafe(|| f()));
                drop(f);
                latch.finish();
            })
        })
        .collect();
    pool().submit(jobs, helpers);
    latch
}

/// Run `f` on `helpers` pool threads and on this thread; return when all runs are done.
/// A panic in `f` is caught (the run counts as done); callers detect missing work.
pub fn scoped<F: Fn() + Sync>(helpers: usize, f: &F) {
    if helpers == 0 {
        let _ = catch_unwind(AssertUnwindSafe(f));
        return;
    }
    let latch = Arc::new(Latch {
        left: AtomicUsize::new(helpers),
        lock: Mutex::new(()),
        done: Condvar::new(),
    });
    let f_dyn: &(dyn Fn() + Sync) = f;
    // SAFETY: the jobs use `f` only before `latch.finish()`, and this function does not
    // return before `latch.wait()` saw every job finish, so `f` outlives them.
    let f_static: &'static (dyn Fn() + Sync) = unsafe { std::mem::transmute(f_dyn) };
    let jobs: Vec<Job> = (0..helpers)
        .map(|_| -> Job {
            let latch = Arc::clone(&latch);
            Box::new(move || {
                let _ = catch_unwind(AssertUnwindSafe(f_static));
                latch.finish();
            })
        })
        .collect();
    pool().submit(jobs, helpers);
    let _ = catch_unwind(AssertUnwindSafe(f));
    latch.wait();
}

#[cfg(test)]
mod tests {
    use super::{scoped, warm};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    #[test]
    fn every_run_finishes_before_scoped_returns() {
        for round in 0..2000 {
            if round % 7 == 0 {
                warm(3, 1_000_000);
            }
            let runs = AtomicUsize::new(0);
            scoped(3, &|| {
                runs.fetch_add(1, Ordering::SeqCst);
            });
            assert_eq!(runs.load(Ordering::SeqCst), 4);
        }
    }

    #[test]
    fn a_slow_run_is_waited_for_past_the_spin() {
        // longer than WAIT_SPIN: the caller goes from spinning to sleeping
        let runs = AtomicUsize::new(0);
        scoped(1, &|| {
            if std::thread::current().name() == Some("evalkit-atif") {
                std::thread::sleep(Duration::from_millis(5)); // the pool thread
            }
            runs.fetch_add(1, Ordering::SeqCst);
        });
        assert_eq!(runs.load(Ordering::SeqCst), 2);
    }
}
