//! Row locks: a sharded lock table, waits that do not block a thread, deadlock detection, FIFO and CATS grant order
