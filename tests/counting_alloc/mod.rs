//! A counting allocator for the hostile-input tests: it wraps the system allocator and counts
//! the bytes held by the thread that is measuring (tests run on several threads at once).
//! Each test binary installs it with
//! `#[global_allocator] static ALLOCATOR: counting_alloc::Counting = counting_alloc::Counting;`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::Mutex;
use std::sync::atomic::{AtomicIsize, Ordering};

pub struct Counting;
static CURRENT: AtomicIsize = AtomicIsize::new(0);
static PEAK: AtomicIsize = AtomicIsize::new(0);
/// One measurement at a time, since CURRENT and PEAK are shared.
static MEASURING: Mutex<()> = Mutex::new(());

thread_local! {
    // Const-initialised and without Drop: reading it never allocates.
    static TRACKED: Cell<bool> = const { Cell::new(false) };
}

fn tracked() -> bool {
    TRACKED.try_with(Cell::get).unwrap_or(false)
}

fn grow(bytes: usize) {
    let now = CURRENT.fetch_add(bytes as isize, Ordering::Relaxed) + bytes as isize;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

fn shrink(bytes: usize) {
    CURRENT.fetch_sub(bytes as isize, Ordering::Relaxed);
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() && tracked() {
            grow(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() && tracked() {
            grow(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        if tracked() {
            shrink(layout.size());
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() && tracked() {
            if new_size >= layout.size() {
                grow(new_size - layout.size());
            } else {
                shrink(layout.size() - new_size);
            }
        }
        p
    }
}

/// Runs `f` and returns its result with the most heap it held at once (above where it started).
pub fn peak_of<R>(f: impl FnOnce() -> R) -> (R, usize) {
    let _one = MEASURING.lock().unwrap_or_else(|e| e.into_inner());
    CURRENT.store(0, Ordering::Relaxed);
    PEAK.store(0, Ordering::Relaxed);
    TRACKED.with(|t| t.set(true));
    let r = f();
    TRACKED.with(|t| t.set(false));
    (r, PEAK.load(Ordering::Relaxed).max(0) as usize)
}

/// Loading `n` hostile bytes may use at most this much heap.
pub fn budget(n: usize) -> usize {
    64 * n + (1 << 20)
}
