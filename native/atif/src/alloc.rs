//! The library's allocator: small blocks (up to 512 bytes, the JSON tree's vectors and
//! strings) are kept per thread in size classes and reused; everything else is the
//! system allocator's. Parsing allocates and frees a block per JSON object, array and
//! escaped string; glibc's malloc/free was ~20% of the extractor's time on trajectory
//! files, this cache makes most of them a push or a pop.
//!
//! Only this library's Rust allocations come here (Polars and Python have their own).
//! A thread keeps at most `KEEP` blocks per class (at most ~1 MB); a thread's cache is
//! not returned when the thread ends (the library's worker threads live as long as the
//! process).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::UnsafeCell;

const STEP: usize = 16;
const CLASSES: usize = 32; // 16, 32, ..., 512 bytes
const MAX: usize = STEP * CLASSES;
const KEEP: usize = 128;

struct Cache {
    n: [usize; CLASSES],
    blocks: [[*mut u8; KEEP]; CLASSES],
}

thread_local! {
    // const-initialised, no destructor: using it never allocates or fails mid-teardown
    static CACHE: UnsafeCell<Cache> = const {
        UnsafeCell::new(Cache {
            n: [0; CLASSES],
            blocks: [[std::ptr::null_mut(); KEEP]; CLASSES],
        })
    };
}

pub struct Cached;

/// The class of a small block (None: the system allocator's).
#[inline]
fn class(l: Layout) -> Option<usize> {
    (l.size() <= MAX && l.align() <= STEP).then(|| l.size().max(1).div_ceil(STEP) - 1)
}

#[inline]
fn class_layout(c: usize) -> Layout {
    // SAFETY: a non-zero multiple of 16, aligned to 16
    unsafe { Layout::from_size_align_unchecked((c + 1) * STEP, STEP) }
}

unsafe impl GlobalAlloc for Cached {
    #[inline]
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let Some(c) = class(l) else {
            return System.alloc(l);
        };
        let hit = CACHE
            .try_with(|cache| {
                let cache = &mut *cache.get();
                if cache.n[c] == 0 {
                    return std::ptr::null_mut();
                }
                cache.n[c] -= 1;
                cache.blocks[c][cache.n[c]]
            })
            .unwrap_or(std::ptr::null_mut());
        if hit.is_null() {
            System.alloc(class_layout(c))
        } else {
            hit
        }
    }

    #[inline]
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        let Some(c) = class(l) else {
            return System.dealloc(p, l);
        };
        let kept = CACHE
            .try_with(|cache| {
                let cache = &mut *cache.get();
                if cache.n[c] == KEEP {
                    return false;
                }
                cache.blocks[c][cache.n[c]] = p;
                cache.n[c] += 1;
                true
            })
            .unwrap_or(false);
        if !kept {
            System.dealloc(p, class_layout(c));
        }
    }

    unsafe fn realloc(&self, p: *mut u8, l: Layout, new_size: usize) -> *mut u8 {
        let new = Layout::from_size_align_unchecked(new_size, l.align());
        match (class(l), class(new)) {
            (None, None) => System.realloc(p, l, new_size),
            (Some(a), Some(b)) if a == b => p, // the block already has room
            _ => {
                let q = self.alloc(new);
                if !q.is_null() {
                    std::ptr::copy_nonoverlapping(p, q, l.size().min(new_size));
                    self.dealloc(p, l);
                }
                q
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn blocks_are_reused_and_keep_their_contents_across_growth() {
        let mut v: Vec<Vec<u8>> = Vec::new();
        for round in 0..3 {
            for n in [0usize, 1, 15, 16, 17, 300, 512, 513, 4096] {
                let mut x: Vec<u8> = (0..n).map(|i| (i + round) as u8).collect();
                x.extend_from_slice(&[7; 40]); // grows across classes and past 512
                assert_eq!(
                    x[..n],
                    (0..n).map(|i| (i + round) as u8).collect::<Vec<_>>()[..]
                );
                assert_eq!(&x[n..], &[7; 40]);
                v.push(x);
            }
            v.truncate(2); // frees most: they go to the cache and come back next round
        }
        let s: String = "é".repeat(200); // 400 bytes, then shrink
        let mut t = s.clone();
        t.truncate(10);
        t.shrink_to_fit();
        assert_eq!(t, "é".repeat(5));
    }
}
