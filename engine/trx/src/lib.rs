//! Transaction system: ids, sharded registry of active transactions, hybrid ReadView, transaction throttling
