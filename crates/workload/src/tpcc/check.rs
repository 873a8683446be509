//! TPC-C consistency conditions 1-4 (spec 3.3.2.1-3.3.2.4), checked per
//! warehouse and district with aggregate queries.

use lockstep_client::{Conn, QueryResult};
use lockstep_types::{Decimal, Value};
use std::collections::BTreeMap;

type Key = (i64, i64);

fn int(v: &Value) -> i64 {
    v.to_i64().unwrap_or(i64::MIN)
}

fn dec(v: &Value) -> Option<Decimal> {
    v.to_decimal()
}

async fn q(c: &mut Conn, sql: &str) -> Result<QueryResult, String> {
    c.query(sql).await.map_err(|e| format!("{e}\n  in: {sql}"))
}

/// Runs the four checks; returns the failures (empty = consistent).
/// Failed conditions, the first 50 kept.
#[derive(Default)]
struct Failures(Vec<String>);

impl Failures {
    fn fail(&mut self, cond: u32, msg: String) {
        if self.0.len() < 50 {
            self.0.push(format!("condition {cond}: {msg}"));
        }
    }
}

pub async fn check(c: &mut Conn) -> Result<Vec<String>, String> {
    let _ = c
        .query_drop("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        .await;
    let _ = c.query_drop("START TRANSACTION").await;
    let mut f = Failures::default();
    let warehouses = check_warehouse_ytd(c, &mut f).await?;
    check_order_ids(c, &mut f).await?;
    check_order_lines(c, &warehouses, &mut f).await?;
    let _ = c.query_drop("COMMIT").await;
    Ok(f.0)
}

/// Condition 1; returns the warehouse ids.
async fn check_warehouse_ytd(c: &mut Conn, f: &mut Failures) -> Result<Vec<i64>, String> {
    // 1: W_YTD = sum(D_YTD) for each warehouse.
    let w = q(c, "SELECT w_id, w_ytd FROM bmsql_warehouse ORDER BY w_id").await?;
    let d = q(
        c,
        "SELECT d_w_id, SUM(d_ytd) FROM bmsql_district GROUP BY d_w_id ORDER BY d_w_id",
    )
    .await?;
    let d_sum: BTreeMap<i64, Option<Decimal>> =
        d.rows.iter().map(|r| (int(&r[0]), dec(&r[1]))).collect();
    if w.rows.is_empty() {
        f.fail(1, "bmsql_warehouse is empty".into());
    }
    for r in &w.rows {
        let (id, ytd) = (int(&r[0]), dec(&r[1]));
        let sum = d_sum.get(&id).copied().flatten();
        if ytd.is_none() || ytd != sum {
            f.fail(
                1,
                format!("warehouse {id}: W_YTD {ytd:?} != sum(D_YTD) {sum:?}"),
            );
        }
    }
    Ok(w.rows.iter().map(|r| int(&r[0])).collect())
}

/// Conditions 2 and 3.
async fn check_order_ids(c: &mut Conn, f: &mut Failures) -> Result<(), String> {
    // 2: D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID) per district.
    // 3: max(NO_O_ID) - min(NO_O_ID) + 1 = count of NEW-ORDER rows.
    let dist = q(
        c,
        "SELECT d_w_id, d_id, d_next_o_id FROM bmsql_district ORDER BY d_w_id, d_id",
    )
    .await?;
    let omax = q(
        c,
        "SELECT o_w_id, o_d_id, MAX(o_id) FROM bmsql_oorder GROUP BY o_w_id, o_d_id",
    )
    .await?;
    let omax: BTreeMap<Key, i64> = omax
        .rows
        .iter()
        .map(|r| ((int(&r[0]), int(&r[1])), int(&r[2])))
        .collect();
    let no = q(
        c,
        "SELECT no_w_id, no_d_id, MAX(no_o_id), MIN(no_o_id), COUNT(*) \
         FROM bmsql_new_order GROUP BY no_w_id, no_d_id",
    )
    .await?;
    let no: BTreeMap<Key, (i64, i64, i64)> = no
        .rows
        .iter()
        .map(|r| {
            (
                (int(&r[0]), int(&r[1])),
                (int(&r[2]), int(&r[3]), int(&r[4])),
            )
        })
        .collect();
    if dist.rows.is_empty() {
        f.fail(2, "bmsql_district is empty".into());
    }
    for r in &dist.rows {
        let key = (int(&r[0]), int(&r[1]));
        let next = int(&r[2]);
        let max_o = omax.get(&key).copied();
        if max_o != Some(next - 1) {
            f.fail(
                2,
                format!(
                    "district {key:?}: D_NEXT_O_ID - 1 = {} but max(O_ID) = {max_o:?}",
                    next - 1
                ),
            );
        }
        // A district whose new orders were all delivered has no max(NO_O_ID).
        if let Some(&(max_no, min_no, count)) = no.get(&key) {
            if max_no != next - 1 {
                f.fail(
                    2,
                    format!(
                        "district {key:?}: D_NEXT_O_ID - 1 = {} but max(NO_O_ID) = {max_no}",
                        next - 1
                    ),
                );
            }
            if max_no - min_no + 1 != count {
                f.fail(
                    3,
                    format!(
                        "district {key:?}: max(NO_O_ID) - min(NO_O_ID) + 1 = {} but {count} NEW-ORDER rows",
                        max_no - min_no + 1
                    ),
                );
            }
        }
    }
    Ok(())
}

/// Condition 4.
async fn check_order_lines(
    c: &mut Conn,
    warehouses: &[i64],
    f: &mut Failures,
) -> Result<(), String> {
    // 4: sum(O_OL_CNT) = number of ORDER-LINE rows per district.
    let ol_cnt = q(
        c,
        "SELECT o_w_id, o_d_id, SUM(o_ol_cnt) FROM bmsql_oorder GROUP BY o_w_id, o_d_id",
    )
    .await?;
    // ORDER-LINE is the largest table (30 rows per order, growing with
    // every run): counted one warehouse at a time, so no single statement
    // has to group millions of rows.
    let mut lines: BTreeMap<Key, i64> = BTreeMap::new();
    for &w_id in warehouses {
        let per_district = q(
            c,
            &format!(
                "SELECT ol_d_id, COUNT(*) FROM bmsql_order_line \
                 WHERE ol_w_id = {w_id} GROUP BY ol_d_id"
            ),
        )
        .await?;
        lines.extend(
            per_district
                .rows
                .iter()
                .map(|r| ((w_id, int(&r[0])), int(&r[1]))),
        );
    }
    for r in &ol_cnt.rows {
        let key = (int(&r[0]), int(&r[1]));
        let sum = int(&r[2]);
        let n = lines.get(&key).copied().unwrap_or(0);
        if sum != n {
            f.fail(
                4,
                format!("district {key:?}: sum(O_OL_CNT) = {sum} but {n} ORDER-LINE rows"),
            );
        }
    }
    Ok(())
}
