//! Status counters that drivers and monitoring read (SHOW STATUS,
//! performance_schema.*_status): counted per session, summed on read.
//!
//! Each session's counters live in its ProcessInfo and are written only by
//! that session, with a plain load and store (no locked instruction, no
//! cache line shared with other sessions); SHOW GLOBAL STATUS adds up the
//! live sessions and what ended sessions left in `ServerCounters`.

use super::{ProcessInfo, Server};
use crate::parser::Statement;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// The per-session counters, in the order `NAMES` lists them.
#[derive(Default)]
pub struct Counters {
    values: [AtomicU64; N],
}

const N: usize = 10;
const NAMES: [&str; N] = [
    "Questions",
    "Queries",
    "Com_select",
    "Com_insert",
    "Com_update",
    "Com_delete",
    "Com_commit",
    "Com_rollback",
    "Bytes_received",
    "Bytes_sent",
];
const QUESTIONS: usize = 0;
const QUERIES: usize = 1;
const RECEIVED: usize = 8;
const SENT: usize = 9;

impl Counters {
    /// Only the owning session writes: a load and a store suffice.
    fn add(&self, i: usize, n: u64) {
        let c = &self.values[i];
        c.store(c.load(Relaxed).wrapping_add(n), Relaxed);
    }

    fn get(&self, i: usize) -> u64 {
        self.values[i].load(Relaxed)
    }

    /// A statement the client sent (COM_QUERY's each, COM_STMT_EXECUTE).
    pub fn question(&self) {
        self.add(QUESTIONS, 1);
        self.add(QUERIES, 1);
    }

    /// A statement run, by kind (Com_*): the client's and those of
    /// stored programs alike, as MySQL counts them.
    pub fn statement(&self, stmt: &Statement) {
        let i = match stmt {
            Statement::Select(_) | Statement::SelectInto { .. } => 2,
            Statement::Insert(_) => 3,
            Statement::Update(_) => 4,
            Statement::Delete(_) => 5,
            Statement::Commit => 6,
            Statement::Rollback => 7,
            _ => return,
        };
        self.add(i, 1);
    }

    /// Bytes of one command and of its reply.
    pub fn traffic(&self, received: u64, sent: u64) {
        self.add(RECEIVED, received);
        self.add(SENT, sent);
    }
}

/// Server-wide counts: connection attempts, failed logins, and the
/// counters of sessions that have ended.
#[derive(Default)]
pub struct ServerCounters {
    retired: [AtomicU64; N],
    connections: AtomicU64,
    aborted_connects: AtomicU64,
    aborted_clients: AtomicU64,
}

impl ServerCounters {
    /// A client tried to log in (Connections).
    pub fn connection(&self) {
        self.connections.fetch_add(1, Relaxed);
    }

    /// A login failed (Aborted_connects).
    pub fn aborted_connect(&self) {
        self.aborted_connects.fetch_add(1, Relaxed);
    }

    /// A logged-in client went away without COM_QUIT (Aborted_clients).
    pub fn aborted_client(&self) {
        self.aborted_clients.fetch_add(1, Relaxed);
    }

    /// A session ends: its counts stay in the global totals.
    pub fn retire(&self, c: &Counters) {
        for (total, v) in self.retired.iter().zip(&c.values) {
            total.fetch_add(v.swap(0, Relaxed), Relaxed);
        }
    }
}

/// Questions over the whole server (COM_STATISTICS, Questions).
pub fn questions(server: &Server) -> u64 {
    totals(server)[QUESTIONS]
}

fn totals(server: &Server) -> [u64; N] {
    let mut sum: [u64; N] = std::array::from_fn(|i| server.counters.retired[i].load(Relaxed));
    for p in server.processes.lock().values() {
        for (s, i) in sum.iter_mut().zip(0..N) {
            *s = s.wrapping_add(p.counters.get(i));
        }
    }
    sum
}

/// The counters' rows: this session's (`own`) or, with `global`, the
/// server's; connection counts are server-wide in both, as in MySQL.
pub fn values(server: &Server, own: &ProcessInfo, global: bool) -> Vec<(&'static str, String)> {
    let counts: [u64; N] = match global {
        true => totals(server),
        false => std::array::from_fn(|i| own.counters.get(i)),
    };
    let (connected, running) = {
        let procs = server.processes.lock();
        let running = procs
            .values()
            .filter(|p| *p.command.lock() != "Sleep")
            .count();
        (procs.len(), running)
    };
    let c = &server.counters;
    let mut v: Vec<(&'static str, String)> = NAMES
        .iter()
        .zip(counts)
        .map(|(n, x)| (*n, x.to_string()))
        .collect();
    v.extend([
        ("Uptime", server.started.elapsed().as_secs().to_string()),
        ("Threads_connected", connected.to_string()),
        ("Threads_running", running.to_string()),
        ("Connections", c.connections.load(Relaxed).to_string()),
        (
            "Aborted_connects",
            c.aborted_connects.load(Relaxed).to_string(),
        ),
        (
            "Aborted_clients",
            c.aborted_clients.load(Relaxed).to_string(),
        ),
    ]);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_add_and_retire() {
        let c = Counters::default();
        c.question();
        c.question();
        c.traffic(10, 200);
        c.statement(&Statement::Commit);
        let s = ServerCounters::default();
        s.retire(&c);
        assert_eq!(c.get(QUESTIONS), 0);
        assert_eq!(s.retired[QUESTIONS].load(Relaxed), 2);
        assert_eq!(s.retired[SENT].load(Relaxed), 200);
        assert_eq!(s.retired[6].load(Relaxed), 1);
    }
}
