//! Column histograms survive a restart: replayed from the log (the
//! SetHistograms event, across an ALTER rebuild that keeps them), and
//! read back from a checkpoint (format 12).

use lockstep_binlog::ColumnSource;
use lockstep_engine::{Engine, EngineConfig};
use lockstep_tables::histogram::{ColumnHistogram, Histogram, Sample};
use lockstep_types::Value;

mod common;
use common::id_v_table;

fn histogram_of(engine: &Engine, name: &str) -> Vec<ColumnHistogram> {
    let t = engine.catalog.table("d", name).expect("table");
    t.histograms().map(|h| h.to_vec()).unwrap_or_default()
}

fn on_v() -> Vec<ColumnHistogram> {
    let sample = Sample {
        values: (0..50).map(|i| Value::Int(i % 7)).collect(),
        nulls: 0,
        sampling_rate: 1.0,
    };
    let histogram = Histogram::build(sample, 4, "2026-11-27 08:00:00.000000".into());
    vec![ColumnHistogram {
        column: "v".into(),
        histogram,
    }]
}

#[tokio::test]
async fn histograms_survive_restart_rebuild_and_checkpoint() {
    let dir = std::env::temp_dir().join(format!("lockstep-engine-hist-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let built = on_v();
    {
        let engine = Engine::open(EngineConfig::new(&dir)).expect("open");
        engine.create_database("d", false).await.expect("db");
        let t = engine.create_table(id_v_table()).await.expect("create");
        engine.set_histograms(&t, built.clone()).await.expect("set");
        engine.shutdown();
    }
    {
        let engine = Engine::open(EngineConfig::new(&dir)).expect("reopen");
        assert_eq!(histogram_of(&engine, "t"), built, "replayed from the log");
        let t = engine.catalog.table("d", "t").expect("table");
        let def = (*t.def()).clone();
        let keep = vec![ColumnSource::Column(0), ColumnSource::Column(1)];
        let rebuilt = engine.alter_table(&t, def, keep).await.expect("rebuild");
        assert_ne!(rebuilt.id, t.id);
        assert_eq!(histogram_of(&engine, "t"), built, "moved along");
        engine.shutdown();
    }
    {
        let engine = Engine::open(EngineConfig::new(&dir)).expect("reopen");
        assert_eq!(histogram_of(&engine, "t"), built, "replayed in order");
        engine.checkpoint().expect("checkpoint");
        engine.shutdown();
    }
    {
        let engine = Engine::open(EngineConfig::new(&dir)).expect("reopen");
        assert_eq!(histogram_of(&engine, "t"), built, "from the checkpoint");
        let t = engine.catalog.table("d", "t").expect("table");
        engine.set_histograms(&t, Vec::new()).await.expect("drop");
        engine.shutdown();
    }
    {
        let engine = Engine::open(EngineConfig::new(&dir)).expect("reopen");
        assert!(histogram_of(&engine, "t").is_empty(), "dropped");
        engine.shutdown();
    }
    let _ = std::fs::remove_dir_all(&dir);
}
