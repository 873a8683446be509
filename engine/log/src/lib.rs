//! The transaction log (redo + binlog in one): concurrent reservation, parallel copy, writer, flusher, per-committer wake-ups, recovery reader
