//! Seeded simulations of the state machines: a source log, a lossy and
//! reordering "network", reconnects, and workers finishing in random order.

use lockstep_binlog::{GtidSet, TxnRecord};

use crate::receiver::{Action, Receiver};
use crate::scheduler::{Meta, Scheduler};
use crate::sender::{check_purged, Sender};
use crate::wire::Event;

const SRC: [u8; 16] = [0x5a; 16];

/// A small deterministic generator (no dependency, same on every run).
struct Rng(u64);
impl Rng {
    fn next(&mut self, m: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % m.max(1)
    }
}

fn record(gno: u64, last_committed: u64) -> Vec<u8> {
    TxnRecord {
        version: lockstep_binlog::FORMAT_VERSION,
        server_uuid: SRC,
        gno,
        last_committed,
        sequence_number: gno,
        timestamp_us: gno,
        events: Vec::new(),
    }
    .encode()
}

/// The source's log: (lsn, record) with gno = seq = index + 1.
fn source_log(n: u64) -> Vec<(u64, Vec<u8>)> {
    (1..=n).map(|g| (g * 100, record(g, g - 1))).collect()
}

#[test]
fn reconnects_resume_and_wire_faults_are_harmless() {
    for seed in 1..40 {
        let mut rng = Rng(seed);
        let log = source_log(60);
        let mut relay: Vec<u64> = Vec::new();
        let mut rx = Receiver::new(GtidSet::default(), 8);
        let mut now = 0;
        while relay.len() < log.len() {
            // A connection: the sender starts from what the replica has.
            rx.connected();
            let mut tx = Sender::new(rx.have().clone(), now, 1000);
            let cut = 1 + rng.next(log.len() as u64 + 10) as usize;
            let mut wire: Vec<Event> = Vec::new();
            for chunk in log.chunks(7) {
                wire.extend(tx.on_records(chunk.to_vec(), now));
            }
            wire.truncate(cut); // the connection drops here
                                // Duplicates and swaps of neighbours.
            for i in 0..wire.len() {
                match rng.next(5) {
                    0 => wire.insert(i, wire[i].clone()),
                    1 if i + 1 < wire.len() => wire.swap(i, i + 1),
                    _ => {}
                }
            }
            for ev in wire {
                for a in rx.on_event(ev) {
                    match a {
                        Action::Append(r) => relay.push(TxnRecord::peek_gtid(&r).unwrap().gno),
                        Action::Reconnect(why) => panic!("seed {seed}: {why}"),
                    }
                }
            }
            now += 10;
        }
        let want: Vec<u64> = (1..=60).collect();
        assert_eq!(relay, want, "seed {seed}: every record once, in order");
    }
}

#[test]
fn sender_skips_what_the_replica_has_and_beats_when_idle() {
    let mut have = GtidSet::default();
    have.insert_range(SRC, 1, 10);
    have.insert_range(SRC, 15, 15);
    let mut tx = Sender::new(have.clone(), 0, 1000);
    let sent: Vec<u64> = tx
        .on_records(source_log(20), 5)
        .into_iter()
        .map(|e| match e {
            Event::Txn { record, .. } => TxnRecord::peek_gtid(&record).unwrap().gno,
            Event::Heartbeat { .. } => panic!("no heartbeat while sending"),
        })
        .collect();
    assert_eq!(sent, vec![11, 12, 13, 14, 16, 17, 18, 19, 20]);
    assert_eq!(tx.on_tick(500), None);
    assert!(matches!(tx.on_tick(1005), Some(Event::Heartbeat { .. })));
    assert_eq!(tx.on_tick(1500), None, "one per period");
    // Purged records the replica lacks are refused (1236's condition).
    let mut purged = GtidSet::default();
    purged.insert_range(SRC, 1, 12);
    assert!(check_purged(&purged, &have).unwrap_err().contains(":11-12"));
    purged = GtidSet::default();
    purged.insert_range(SRC, 1, 9);
    assert!(check_purged(&purged, &have).is_ok());
}

/// Random dependencies; workers finish in random order. Checks that no
/// transaction starts before those it depends on committed, that commits
/// follow relay order, and that the pipeline never stalls.
#[test]
fn scheduling_respects_last_committed_and_commits_in_order() {
    for seed in 1..60 {
        let mut rng = Rng(seed);
        let n = 200u64;
        let metas: Vec<Meta> = (1..=n)
            .map(|seq| Meta {
                sequence_number: seq,
                last_committed: seq - 1 - rng.next(seq.min(6)),
                ddl: rng.next(40) == 0,
            })
            .collect();
        let mut s = Scheduler::new(16, 4);
        let (mut next, mut committed) = (0usize, Vec::new());
        let mut running: Vec<u64> = Vec::new();
        let mut ready: Vec<u64> = Vec::new();
        let mut steps = 0;
        while committed.len() < n as usize {
            steps += 1;
            assert!(steps < 100_000, "seed {seed}: stalled");
            while next < n as usize && s.has_room() {
                let t = s.submit(metas[next]);
                assert_eq!(t, next as u64);
                next += 1;
            }
            for t in s.startable() {
                let m = metas[t as usize];
                let deps_done = (0..t as usize)
                    .filter(|&i| {
                        metas[i].sequence_number <= m.last_committed || m.ddl || metas[i].ddl
                    })
                    .all(|i| committed.contains(&(i as u64)));
                assert!(
                    deps_done,
                    "seed {seed}: {t} started before its dependencies"
                );
                running.push(t);
            }
            // A random worker finishes its row work.
            if !running.is_empty() {
                let t = running.swap_remove(rng.next(running.len() as u64) as usize);
                s.ready(t);
                ready.push(t);
            }
            while let Some(t) = s.next_turn() {
                ready.retain(|&r| r != t);
                committed.push(t);
                s.done(t);
            }
        }
        let want: Vec<u64> = (0..n).collect();
        assert_eq!(committed, want, "seed {seed}: commit order is relay order");
        assert!(s.is_idle());
    }
}

#[test]
fn out_of_sequence_records_and_skips_are_serial_and_safe() {
    let mut s = Scheduler::new(8, 8);
    // A restarted source: sequence numbers start over.
    let a = s.submit(Meta {
        sequence_number: 10,
        last_committed: 9,
        ddl: false,
    });
    let b = s.submit(Meta {
        sequence_number: 3,
        last_committed: 0,
        ddl: false,
    });
    assert_eq!(s.startable(), vec![a], "b waits for everything before it");
    s.done(a); // skipped: already executed
    assert_eq!(s.startable(), vec![b]);
    s.ready(b);
    assert_eq!(s.next_turn(), Some(b));
    s.done(b);
    assert!(s.is_idle());
}

/// One transaction stalls (its row work never finishes, say a lock held
/// by a client on the replica): the one that depends on it waits, the
/// independent ones after it still start.
#[test]
fn a_stalled_dependency_does_not_stop_independent_transactions() {
    let mut s = Scheduler::new(16, 8);
    let meta = |seq, lc| Meta {
        sequence_number: seq,
        last_committed: lc,
        ddl: false,
    };
    let stalled = s.submit(meta(1, 0));
    let dependent = s.submit(meta(2, 1));
    let free: Vec<_> = (3..=6).map(|seq| s.submit(meta(seq, 0))).collect();
    let started = s.startable();
    assert!(started.contains(&stalled));
    assert!(!started.contains(&dependent), "it waits for seq 1");
    for t in &free {
        assert!(started.contains(t), "independent {t} runs meanwhile");
    }
    // Their row work is done; the commit order holds them behind seq 1.
    for &t in &free {
        s.ready(t);
    }
    assert_eq!(s.next_turn(), None);
    // The stall ends: seq 1 commits, then seq 2 may start.
    s.ready(stalled);
    assert_eq!(s.next_turn(), Some(stalled));
    s.done(stalled);
    assert_eq!(s.startable(), vec![dependent]);
}

/// Semisync over a lossy link: the source's commits wait for the
/// replica's acknowledgement of their record's end. A commit released
/// by an acknowledgement is always in the replica's relay log, and every
/// commit is released once the link stops failing.
#[test]
fn semisync_acks_release_only_relayed_commits() {
    for seed in 1..40 {
        let mut rng = Rng(seed);
        let log = source_log(40);
        let ends: Vec<u64> = log
            .iter()
            .map(|(lsn, r)| lockstep_log::record_end(*lsn, r.len()))
            .collect();
        let (mut relay, mut released) = (Vec::<u64>::new(), 0usize);
        let release = |at: u64, released: &mut usize, relay: &[u64]| {
            while *released < ends.len() && ends[*released] <= at {
                let gno = *released as u64 + 1;
                assert!(
                    relay.contains(&gno),
                    "seed {seed}: {gno} released unrelayed"
                );
                *released += 1;
            }
        };
        let mut rx = Receiver::new(GtidSet::default(), 8);
        let mut rounds = 0;
        while released < log.len() {
            rounds += 1;
            assert!(rounds < 1000, "seed {seed}: commits never released");
            rx.connected();
            let mut tx = Sender::new(rx.have().clone(), 0, 1000);
            let mut wire: Vec<Event> = tx.on_records(log.clone(), 0);
            // What the replica had at connect counts as acknowledged.
            release(tx.acked(), &mut released, &relay);
            if rounds < 5 {
                wire.truncate(rng.next(wire.len() as u64 + 1) as usize);
            }
            for chunk in wire.chunks(1 + rng.next(5) as usize) {
                for ev in chunk.iter().cloned() {
                    for a in rx.on_event(ev) {
                        if let Action::Append(r) = a {
                            relay.push(TxnRecord::peek_gtid(&r).unwrap().gno);
                        }
                    }
                }
                // The appends are durable: the reply, which may be lost.
                let Some(ack) = rx.ack_due() else { continue };
                if rng.next(4) == 0 {
                    continue;
                }
                if let Some(at) = tx.on_ack(ack.lsn).expect("never beyond what was sent") {
                    release(at, &mut released, &relay);
                }
            }
        }
    }
    let mut tx = Sender::new(GtidSet::default(), 0, 1000);
    tx.on_records(source_log(2), 0);
    assert!(tx.on_ack(10_000).is_err(), "an ack beyond what was sent");
}
