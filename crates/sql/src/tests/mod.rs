//! Tests of the SQL layer as a whole, without a socket: statements run
//! through a `Session` on a scratch engine (`db::Db`), one file per topic.

pub(crate) mod db;
mod explain_analyze;
mod generated;
mod histogram;
mod hostile;
mod index_dive;
mod json;
mod lateral;
mod layers;
mod multi_dml;
mod numeric;
mod online_alter;
mod order;
mod planner;
mod scripts;
mod semijoin_nest;
mod sort_cost;
mod spill;
mod stream;
mod temporary;
mod transaction;
mod views;
mod window;
