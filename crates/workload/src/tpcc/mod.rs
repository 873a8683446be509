//! TPC-C on BenchmarkSQL's schema: load, run, check.

pub mod check;
pub mod load;
pub mod rng;
pub mod run;
pub mod schema;
pub mod txn;
