//! The process's allocator: mimalloc (glibc's arena locking and chunk
//! consolidation were a quarter of the CPU of sysbench oltp_read_only;
//! the allocator choice of book 10.3.4 / 11.3), with table data in a heap
//! of its own (`lockstep_tables::placement`): rows, keys and index entries
//! in pages no temporary shares, so a range scan walks memory in key order.

use mimalloc::MiMalloc;
use std::alloc::{GlobalAlloc, Layout};
use std::ffi::{c_int, c_long, c_void};
use std::mem::size_of;
use std::ptr;
use std::sync::atomic::{AtomicPtr, Ordering};

// mimalloc's first-class heaps (v3: any thread may allocate from one, and
// `mi_free` frees a block of any heap). Linked in by the mimalloc crate.
extern "C" {
    fn mi_malloc(size: usize) -> *mut c_void;
    fn mi_zalloc(size: usize) -> *mut c_void;
    fn mi_realloc(p: *mut c_void, new_size: usize) -> *mut c_void;
    fn mi_heap_malloc(heap: *mut c_void, size: usize) -> *mut c_void;
    fn mi_heap_zalloc(heap: *mut c_void, size: usize) -> *mut c_void;
    fn mi_heap_new() -> *mut c_void;
    fn mi_heap_delete(heap: *mut c_void);
    fn mi_heap_malloc_aligned(heap: *mut c_void, size: usize, align: usize) -> *mut c_void;
    fn mi_heap_zalloc_aligned(heap: *mut c_void, size: usize, align: usize) -> *mut c_void;
    fn mi_option_set(option: c_int, value: c_long);
    fn mi_option_get(option: c_int) -> c_long;
}

/// `mi_option_purge_delay` in mimalloc.h's `mi_option_e` (the same index in
/// its v2 and v3): milliseconds before freed pages go back to the OS; -1
/// never.
const MI_OPTION_PURGE_DELAY: c_int = 15;

/// Freed memory stays with the process for reuse instead of going back to
/// the OS after mimalloc's default delay (1 s in v3). Returned pages
/// come back as page faults the kernel zeroes: under TPC-C at 64 terminals
/// 0.08 faults per transaction and `clear_page_erms` ~2% of the server's
/// CPU, 0.01 faults without the purge. A database keeps what its peak
/// needed, as InnoDB keeps its buffer pool. Call before the first threads.
pub fn keep_freed_memory() {
    // SAFETY: setting and reading a mimalloc option; any time is allowed.
    unsafe {
        mi_option_set(MI_OPTION_PURGE_DELAY, -1);
        debug_assert_eq!(mi_option_get(MI_OPTION_PURGE_DELAY), -1);
    }
}

pub struct Placed;

/// The table-data heap, made on first use.
static DATA_HEAP: AtomicPtr<c_void> = AtomicPtr::new(ptr::null_mut());

fn data_heap() -> *mut c_void {
    let heap = DATA_HEAP.load(Ordering::Acquire);
    if !heap.is_null() {
        return heap;
    }
    // SAFETY: plain mimalloc calls; a heap that lost the race is empty.
    unsafe {
        let fresh = mi_heap_new();
        if fresh.is_null() {
            return fresh;
        }
        match DATA_HEAP.compare_exchange(
            ptr::null_mut(),
            fresh,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(_) => fresh,
            Err(won) => {
                mi_heap_delete(fresh);
                won
            }
        }
    }
}

/// Every mimalloc block is word aligned (blocks are whole words from a
/// page start aligned to at least 16 bytes), so layouts that ask for no
/// more take the plain entry points. The aligned ones (which the mimalloc
/// crate uses for every layout) fall back, whenever the page's free list
/// is empty, to over-allocating `size + align - 1` unless the size class is
/// a power of two: a 200-byte row then took a block of the next class, and
/// that class fresh pages (`mi_theap_malloc_zero_aligned_at_overalloc`,
/// `mi_page_fresh_alloc` ~3% of the server under sysbench write_only).
#[inline]
fn word_aligned(layout: Layout) -> bool {
    layout.align() <= size_of::<usize>()
}

/// Table data from its heap, the rest from the thread's default heap.
#[inline]
unsafe fn place(layout: Layout, zero: bool) -> *mut u8 {
    let heap = if lockstep_tables::placement::is_table_data() {
        data_heap()
    } else {
        ptr::null_mut()
    };
    let size = layout.size();
    let block = match (heap.is_null(), word_aligned(layout), zero) {
        (true, true, false) => mi_malloc(size),
        (true, true, true) => mi_zalloc(size),
        (true, false, false) => return MiMalloc.alloc(layout),
        (true, false, true) => return MiMalloc.alloc_zeroed(layout),
        (false, true, false) => mi_heap_malloc(heap, size),
        (false, true, true) => mi_heap_zalloc(heap, size),
        (false, false, false) => mi_heap_malloc_aligned(heap, size, layout.align()),
        (false, false, true) => mi_heap_zalloc_aligned(heap, size, layout.align()),
    };
    let block = block.cast::<u8>();
    debug_assert!(block.is_null() || block.align_offset(layout.align()) == 0);
    block
}

/// Bytes a thread allocated (or freed, negative) since it last told
/// `lockstep_types::memory`: one shared counter touched per 64 KiB of
/// change instead of per block. What a thread holds back when it exits is
/// under the threshold, and such remainders of different threads have
/// different signs.
const FLUSH_AT: isize = 64 << 10;

thread_local! {
    static PENDING: std::cell::Cell<isize> = const { std::cell::Cell::new(0) };
}

#[inline]
fn count(delta: isize) {
    // A thread being torn down has no slot any more: count directly.
    let flushed = PENDING.try_with(|p| {
        let now = p.get() + delta;
        if now.abs() >= FLUSH_AT {
            p.set(0);
            lockstep_types::memory::note(now);
        } else {
            p.set(now);
        }
    });
    if flushed.is_err() {
        lockstep_types::memory::note(delta);
    }
}

// SAFETY: every block comes from mimalloc and goes back to it; `mi_free`
// (under MiMalloc's dealloc and realloc) accepts blocks of any heap, and
// `mi_realloc` keeps a word-aligned block word aligned.
unsafe impl GlobalAlloc for Placed {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = place(layout, false);
        if !p.is_null() {
            count(layout.size() as isize);
        }
        p
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = place(layout, true);
        if !p.is_null() {
            count(layout.size() as isize);
        }
        p
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        count(-(layout.size() as isize));
        MiMalloc.dealloc(ptr, layout)
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = if word_aligned(layout) {
            mi_realloc(ptr.cast(), new_size).cast()
        } else {
            MiMalloc.realloc(ptr, layout, new_size)
        };
        if !p.is_null() {
            count(new_size as isize - layout.size() as isize);
        }
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lockstep_tables::placement::table_data;

    extern "C" {
        fn mi_heap_contains(heap: *const c_void, p: *const c_void) -> bool;
        fn mi_usable_size(p: *const c_void) -> usize;
        fn mi_good_size(size: usize) -> usize;
    }

    fn in_data_heap<T>(b: &T) -> bool {
        // SAFETY: a query on a live heap and a live block.
        unsafe { mi_heap_contains(data_heap(), (b as *const T).cast()) }
    }

    #[test]
    fn the_purge_delay_option_is_the_one_set() {
        // mimalloc v3's default purge delay is 1000 ms (options.c), which
        // no neighbouring option has: the index names the right option.
        // SAFETY: reading a mimalloc option.
        assert_eq!(unsafe { mi_option_get(MI_OPTION_PURGE_DELAY) }, 1000);
    }

    #[test]
    fn table_data_goes_to_its_own_heap_and_frees_anywhere() {
        // This test binary allocates through `Placed` (main.rs).
        let rows: Vec<Box<[u8; 200]>> =
            table_data(|| (0..64).map(|_| Box::new([7; 200])).collect());
        let temp = Box::new([1u8; 200]);
        assert!(rows.iter().all(|r| in_data_heap(&**r)));
        assert!(!in_data_heap(&*temp));
        // Blocks allocated one after another in the data heap lie one
        // after another (one size class's stride apart): nothing else
        // takes their pages.
        let strides: Vec<usize> = rows
            .windows(2)
            .map(|w| {
                (&*w[1] as *const [u8; 200] as usize)
                    .wrapping_sub(&*w[0] as *const [u8; 200] as usize)
            })
            .collect();
        let adjacent = strides
            .iter()
            .filter(|&&d| (200..=256).contains(&d))
            .count();
        assert!(adjacent >= 56, "strides {strides:?}");
        // Freed from another thread, through the ordinary path.
        std::thread::spawn(move || drop(rows)).join().unwrap();
        let zeroed: Box<[u64; 32]> = table_data(|| Box::new([0; 32]));
        assert!(in_data_heap(&*zeroed) && zeroed.iter().all(|&x| x == 0));
    }

    #[test]
    fn blocks_keep_their_size_class_when_free_lists_run_dry() {
        // A block that fills a size class that is not a power of two
        // (224 bytes, 8-byte aligned): the aligned entry points asked for
        // `size + 7` bytes, a block of the next class, whenever a page's
        // free list was empty. Rounds of allocating and freeing (here and
        // from another thread) empty free lists again and again.
        // SAFETY: a pure function of mimalloc's size classes.
        let class = unsafe { mi_good_size(200) };
        assert!(class >= 200 && !class.is_power_of_two() && class.is_multiple_of(8));
        let words = class / 8;
        let block = |fill: u64| vec![fill; words].into_boxed_slice();
        for round in 0..50u64 {
            let data: Vec<Box<[u64]>> = table_data(|| (0..1000).map(|_| block(round)).collect());
            let temp: Vec<Box<[u64]>> = (0..1000).map(|_| block(1)).collect();
            for b in data.iter().chain(&temp) {
                // SAFETY: a live block of mimalloc's.
                let usable = unsafe { mi_usable_size(b.as_ptr().cast()) };
                assert_eq!(usable, class, "round {round}");
            }
            if round % 2 == 0 {
                std::thread::spawn(move || drop(data)).join().unwrap();
            }
        }
        // Alignments above a word still hold, in both heaps.
        #[repr(align(64))]
        struct Line([u8; 64]);
        let lines: Vec<Box<Line>> = (0..100).map(|_| Box::new(Line([0; 64]))).collect();
        let placed: Vec<Box<Line>> =
            table_data(|| (0..100).map(|_| Box::new(Line([0; 64]))).collect());
        assert!(lines
            .iter()
            .chain(&placed)
            .all(|l| (&**l as *const Line as usize).is_multiple_of(64) && l.0[63] == 0));
    }
}
