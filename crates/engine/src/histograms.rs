//! ANALYZE TABLE ... UPDATE / DROP HISTOGRAM: a table's histograms are
//! logged as one event holding all of them (so replay and replicas end
//! with the same set), kept on the `Table`, written in checkpoints from
//! format 12, and carried across an ALTER rebuild for the columns that
//! keep their name and type (`catalog::replace_table`).

use crate::engine::Engine;
use lockstep_binlog::Event;
use lockstep_tables::histogram::ColumnHistogram;
use lockstep_tables::Table;
use lockstep_types::Error as SqlError;

impl Engine {
    /// Replaces `table`'s histograms with `all` once the change is
    /// durable. Plans bound before it are bound again (`ddl_version`), so
    /// they see the new estimates.
    pub async fn set_histograms(
        &self,
        table: &Table,
        all: Vec<ColumnHistogram>,
    ) -> Result<(), SqlError> {
        let event = Event::SetHistograms {
            table: table.id,
            histograms: all.clone(),
        };
        let _in_flight = self.log_ddl(event).await?;
        table.set_histograms(all);
        Ok(())
    }
}
