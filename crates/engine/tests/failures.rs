//! Failure handling at the engine level: a commit the log cannot take (no
//! space for the next segment) is refused with 1026 and rolled back, the
//! node resumes when space returns; a damaged newest checkpoint falls back
//! to the previous one; a log whose needed start is gone refuses to open.

use lockstep_engine::{Engine, EngineConfig};
use lockstep_types::error::Code;
use lockstep_types::Error as SqlError;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

mod common;
use common::{id_v_table as def, insert_row, rows};

fn temp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lockstep-engine-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Inserts (id, v) and commits; the commit's error if it fails.
async fn insert(engine: &Arc<Engine>, id: i64, v: i64) -> Result<(), SqlError> {
    engine.commit(&mut insert_row(engine, id, v)).await
}

async fn create(engine: &Arc<Engine>) {
    engine.create_database("d", false).await.expect("create db");
    engine.create_table(def()).await.expect("create table");
}

#[tokio::test]
async fn commit_without_log_space_is_refused_rolled_back_and_resumes() {
    let dir = temp_dir("nospace");
    let mut cfg = EngineConfig::new(&dir);
    cfg.log_segment_size = 8192;
    let mut acked = Vec::new();
    {
        let engine = Engine::open(cfg.clone()).expect("open");
        create(&engine).await;
        engine.log.inject_prepare_failure(true);
        let t = Instant::now();
        let refused = loop {
            let id = acked.len() as i64;
            let commit = insert(&engine, id, id * 10);
            tokio::pin!(commit);
            match tokio::time::timeout(Duration::from_secs(3), &mut commit).await {
                Ok(Ok(())) => acked.push((id, id * 10)),
                Ok(Err(e)) => break e,
                // Reserved before the preparer failed, and past the end of
                // the current segment: the writer waits for space instead
                // of acknowledging early. Give space back and it completes.
                Err(_) => {
                    engine.log.inject_prepare_failure(false);
                    commit
                        .await
                        .expect("a waiting commit completes once space returns");
                    acked.push((id, id * 10));
                    engine.log.inject_prepare_failure(true);
                }
            }
            assert!(t.elapsed() < Duration::from_secs(10), "never refused");
            tokio::time::sleep(Duration::from_millis(1)).await;
        };
        assert_eq!(refused.code, Code::ErrorOnWrite, "{refused}");
        assert_eq!(refused.sqlstate(), "HY000");
        assert!(
            refused
                .message
                .contains("errno: 28 - No space left on device"),
            "{}",
            refused.message
        );
        // Rolled back: not visible, and its key (lock) is free again.
        assert_eq!(rows(&engine), acked);
        let gtids = engine.gtid_executed();
        engine.log.inject_prepare_failure(false);
        let t = Instant::now();
        while engine.log.out_of_space() {
            assert!(
                t.elapsed() < Duration::from_secs(10),
                "space never returned"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        // The refused commit took no GTID: the next one follows the last.
        let id = acked.len() as i64;
        insert(&engine, id, -1).await.expect("writes resume");
        acked.push((id, -1));
        let n: u64 = gtids
            .rsplit('-')
            .next()
            .and_then(|x| x.parse().ok())
            .expect("gtid set");
        assert!(
            engine.gtid_executed().ends_with(&format!("-{}", n + 1)),
            "{gtids} then {}",
            engine.gtid_executed()
        );
        for i in 0..200 {
            let id = 1000 + i;
            insert(&engine, id, i).await.expect("more segments");
            acked.push((id, i));
        }
        engine.shutdown();
    }
    let engine = Engine::open(cfg).expect("reopen");
    assert_eq!(rows(&engine), acked, "exactly the acknowledged rows");
    engine.shutdown();
    let _ = std::fs::remove_dir_all(&dir);
}

fn checkpoint_files(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("datadir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "snap"))
        .collect();
    v.sort();
    v
}

fn flip_byte(path: &std::path::Path, at_fraction: f64) {
    let mut b = std::fs::read(path).expect("read");
    let i = ((b.len() as f64) * at_fraction) as usize;
    b[i] ^= 0x5a;
    std::fs::write(path, b).expect("write");
}

#[tokio::test]
async fn damaged_newest_checkpoint_falls_back_to_the_previous_one() {
    let dir = temp_dir("ckfallback");
    let cfg = EngineConfig::new(&dir);
    {
        let engine = Engine::open(cfg.clone()).expect("open");
        create(&engine).await;
        for i in 0..20 {
            insert(&engine, i, i).await.expect("commit");
        }
        engine.checkpoint().expect("first checkpoint");
        for i in 20..40 {
            insert(&engine, i, i).await.expect("commit");
        }
        engine.checkpoint().expect("second checkpoint");
        for i in 40..50 {
            insert(&engine, i, i).await.expect("commit");
        }
        engine.shutdown();
    }
    let files = checkpoint_files(&dir);
    assert_eq!(files.len(), 2, "{files:?}");
    flip_byte(files.last().expect("newest"), 0.5);
    let engine = Engine::open(cfg.clone()).expect("falls back");
    let want: Vec<(i64, i64)> = (0..50).map(|i| (i, i)).collect();
    assert_eq!(rows(&engine), want);
    engine.shutdown();
    drop(engine);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn unreadable_checkpoints_with_the_log_start_deleted_refuse_to_open() {
    let dir = temp_dir("ckmissing");
    let mut cfg = EngineConfig::new(&dir);
    cfg.log_segment_size = 4096;
    {
        let engine = Engine::open(cfg.clone()).expect("open");
        create(&engine).await;
        for round in 0..3 {
            for i in 0..100 {
                insert(&engine, round * 100 + i, i).await.expect("commit");
            }
            engine.checkpoint().expect("checkpoint");
        }
        engine.shutdown();
    }
    for f in checkpoint_files(&dir) {
        flip_byte(&f, 0.5);
    }
    let err = match Engine::open(cfg) {
        Err(e) => e,
        Ok(_) => panic!("opened without checkpoints and without the log start"),
    };
    assert!(err.contains("missing"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn failed_log_write_makes_the_node_read_only_until_restart() {
    let dir = temp_dir("eio");
    let cfg = EngineConfig::new(&dir);
    {
        let engine = Engine::open(cfg.clone()).expect("open");
        create(&engine).await;
        insert(&engine, 1, 1).await.expect("commit");
        engine.log.inject_io_failure();
        // The commit whose write failed: in doubt, rolled back in memory.
        let e = insert(&engine, 2, 2).await.expect_err("write fails");
        assert_eq!(e.code, Code::ErrorOnWrite, "{e}");
        assert!(e.message.contains("decided by recovery at restart"), "{e}");
        // Later writes: refused, the server is read-only; reads still work.
        let e = insert(&engine, 3, 3).await.expect_err("read-only");
        assert_eq!(e.code, Code::OptionPrevents, "{e}");
        assert_eq!(rows(&engine), vec![(1, 1)]);
        engine.shutdown();
    }
    let engine = Engine::open(cfg).expect("reopen");
    let r = rows(&engine);
    assert!(r == vec![(1, 1)] || r == vec![(1, 1), (2, 2)], "{r:?}");
    insert(&engine, 4, 4)
        .await
        .expect("writes work after the restart");
    engine.shutdown();
    let _ = std::fs::remove_dir_all(&dir);
}
