//! Pinning the shared pool's workers one to a core.
//!
//! Why: on these machines the kernel kept the pool's two workers on one
//! core for long stretches while the other idled (one core 15-25% idle,
//! the other 2-4%, alternating, TPC-C at 64 terminals). A worker fixed to
//! each core removes that: TPC-C 64 terminals +8.6% (medians of 3 runs),
//! sysbench read_write 64 +12%, write_only 64 +18%, read_write 1024
//! +13.7% (bench/ab.sh, 3 runs each).
//! Only the pool is pinned: its workers are few and always busy under
//! load; a dedicated connection thread is one of many that come and go.

use std::io;

/// The CPUs this process may run on, in ascending order.
pub fn allowed_cpus() -> io::Result<Vec<usize>> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; the kernel fills it.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: the size passed is the size of `set`.
    let r = unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    let max = 8 * std::mem::size_of::<libc::cpu_set_t>();
    // SAFETY: `set` is initialised and `cpu` is below its capacity.
    Ok((0..max)
        .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
        .collect())
}

/// Restricts the calling thread to `cpu`.
pub fn pin_current_thread(cpu: usize) -> io::Result<()> {
    // SAFETY: as above; CPU_SET only writes inside `set`, and `cpu` comes
    // from `allowed_cpus`, below the set's capacity.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    unsafe { libc::CPU_SET(cpu, &mut set) };
    // SAFETY: pid 0 is the calling thread; the size is that of `set`.
    let r = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
