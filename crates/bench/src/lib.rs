//! TPC-C driver.
