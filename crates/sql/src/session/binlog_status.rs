//! SHOW MASTER STATUS / SHOW BINARY LOGS for the MySQL binlog stream: the
//! virtual file `binlog.000001` and its size, found by translating the
//! durable log as a dump would (positions are that stream's offsets).

use lockstep_binlog::mysql::stream::Translator;
use lockstep_binlog::{GtidSet, TxnRecord};
use lockstep_engine::Engine;
use lockstep_types::error::Code;
use lockstep_types::Error;

pub use lockstep_binlog::mysql::stream::FILE_NAME;

const BATCH: usize = 1 << 20;

fn fatal(msg: String) -> Error {
    Error::new(Code::SourceFatalReadingBinlog, msg)
}

/// Calls `f` with each durable record of the log, oldest first.
fn each_record(
    engine: &Engine,
    mut f: impl FnMut(&[u8]) -> Result<(), Error>,
) -> Result<(), Error> {
    let Some(mut pos) = engine
        .log
        .first_record_lsn()
        .map_err(|e| fatal(e.to_string()))?
    else {
        return Ok(());
    };
    let end = engine.log.durable_lsn();
    while pos < end {
        let batch = engine
            .log
            .read_durable(pos, BATCH)
            .map_err(|e| fatal(e.to_string()))?;
        if batch.records.is_empty() {
            break;
        }
        for (_, bytes) in &batch.records {
            f(bytes)?;
        }
        pos = batch.next;
    }
    Ok(())
}

/// Where the stream's next event would start, and the GTIDs it holds.
pub fn stream_end(engine: &Engine) -> Result<u64, Error> {
    let executed = engine.executed_set();
    let mut tr = Translator::new(&engine.catalog.all_tables(), 1);
    tr.file_start(&GtidSet::default());
    let mut in_log = GtidSet::default();
    each_record(engine, |bytes| {
        let r = TxnRecord::decode(bytes).map_err(fatal)?;
        in_log.insert(r.gtid());
        tr.txn(&r).map(|_| ()).map_err(fatal)
    })?;
    Ok(Translator::end_with_previous(
        tr.pos,
        &executed.minus(&in_log),
    ))
}

/// @@gtid_purged: the executed GTIDs no longer in the log (before its
/// first record), which no dump can send. Reads the whole log, as SHOW
/// MASTER STATUS does.
pub fn gtid_purged(engine: &Engine) -> Result<String, Error> {
    let executed = engine.executed_set();
    let mut in_log = GtidSet::default();
    each_record(engine, |bytes| {
        if let Some(g) = TxnRecord::peek_gtid(bytes) {
            in_log.insert(g);
        }
        Ok(())
    })?;
    Ok(executed.minus(&in_log).to_string())
}
