//! Views survive a restart: replayed from the log, and read back from a
//! checkpoint (format 07); DROP VIEW and OR REPLACE replay too.

use lockstep_engine::views::ViewMode;
use lockstep_engine::{CheckOption, Engine, EngineConfig, ViewDef};

fn view(name: &str, query: &str) -> ViewDef {
    ViewDef {
        database: "d".into(),
        name: name.into(),
        columns: Vec::new(),
        query: query.into(),
        algorithm: "UNDEFINED".into(),
        definer: ("root".into(), "%".into()),
        security_definer: true,
        check_option: CheckOption::None,
    }
}

fn names(engine: &Engine) -> Vec<(String, String)> {
    engine
        .catalog
        .views("d")
        .iter()
        .map(|v| (v.name.clone(), v.query.clone()))
        .collect()
}

#[tokio::test]
async fn views_survive_restart_and_checkpoint() {
    let dir = std::env::temp_dir().join(format!("lockstep-engine-views-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    {
        let engine = Engine::open(EngineConfig::new(&dir)).expect("open");
        engine.create_database("d", false).await.expect("db");
        for (n, q) in [("a", "select 1"), ("b", "select 2"), ("c", "select 3")] {
            engine
                .put_view(view(n, q), ViewMode::Create)
                .await
                .expect("view");
        }
        let again = engine
            .put_view(view("a", "select 9"), ViewMode::Create)
            .await;
        assert_eq!(again.map_err(|e| e.number()), Err(1050));
        engine
            .put_view(view("a", "select 4"), ViewMode::Replace)
            .await
            .expect("replace");
        assert!(engine.drop_view("d", "c").await.expect("drop"));
        engine.shutdown();
    }
    let expected = vec![
        ("a".to_string(), "select 4".to_string()),
        ("b".to_string(), "select 2".to_string()),
    ];
    {
        let engine = Engine::open(EngineConfig::new(&dir)).expect("reopen");
        assert_eq!(names(&engine), expected, "replayed from the log");
        engine.checkpoint().expect("checkpoint");
        engine.shutdown();
    }
    {
        let engine = Engine::open(EngineConfig::new(&dir)).expect("reopen");
        assert_eq!(names(&engine), expected, "read from the checkpoint");
        assert!(engine.drop_view("d", "b").await.expect("drop"));
        engine.drop_database("d", false).await.expect("drop db");
        engine.create_database("d", false).await.expect("db");
        assert!(names(&engine).is_empty(), "DROP DATABASE drops its views");
        engine.shutdown();
    }
    let _ = std::fs::remove_dir_all(&dir);
}
