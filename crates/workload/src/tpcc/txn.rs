//! The five TPC-C transactions (spec 2.4-2.8) as BenchmarkSQL runs them:
//! prepared statements, autocommit off, one COMMIT per business
//! transaction; Delivery runs in the terminal (not queued).

use super::load::{CUSTOMERS, DISTRICTS, ITEMS};
use super::rng::TpccRng;
use super::schema::*;
use lockstep_client::{Conn, Error, QueryResult};
use lockstep_types::{DateTime, Decimal, Value};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxnType {
    NewOrder,
    Payment,
    OrderStatus,
    Delivery,
    StockLevel,
}

impl TxnType {
    pub const ALL: [TxnType; 5] = [
        TxnType::NewOrder,
        TxnType::Payment,
        TxnType::OrderStatus,
        TxnType::Delivery,
        TxnType::StockLevel,
    ];

    pub fn name(self) -> &'static str {
        match self {
            TxnType::NewOrder => "new_order",
            TxnType::Payment => "payment",
            TxnType::OrderStatus => "order_status",
            TxnType::Delivery => "delivery",
            TxnType::StockLevel => "stock_level",
        }
    }

    /// The 45/43/4/4/4 mix (spec 5.2.3 minimums, BenchmarkSQL defaults).
    pub fn pick(r: &mut TpccRng) -> TxnType {
        match r.uniform(1, 100) {
            1..=45 => TxnType::NewOrder,
            46..=88 => TxnType::Payment,
            89..=92 => TxnType::OrderStatus,
            93..=96 => TxnType::Delivery,
            _ => TxnType::StockLevel,
        }
    }
}

/// Why a transaction failed.
#[derive(Debug)]
pub enum TxnError {
    /// The server or the connection failed.
    Client(Error),
    /// A row the transaction needs was not there (the database is broken or
    /// the server returned a wrong answer).
    Missing(String),
}

impl From<Error> for TxnError {
    fn from(e: Error) -> Self {
        TxnError::Client(e)
    }
}

impl std::fmt::Display for TxnError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TxnError::Client(e) => write!(f, "{e}"),
            TxnError::Missing(what) => write!(f, "{what}"),
        }
    }
}

type Result<T> = std::result::Result<T, TxnError>;

/// How a business transaction ended without error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Committed,
    /// New-Order with an unused item id, rolled back as spec 2.4.2.3 says.
    RolledBack,
}

/// What a terminal is: its home warehouse and district, and the database's size.
#[derive(Clone, Copy, Debug)]
pub struct Terminal {
    pub w_id: i64,
    pub d_id: i64,
    pub warehouses: i64,
}

pub struct Ctx<'a> {
    pub conn: &'a mut Conn,
    pub rng: &'a mut TpccRng,
    pub term: Terminal,
    /// Next history id for this terminal (Payment inserts one row).
    pub next_hist_id: &'a mut i64,
    pub hist_stride: i64,
}

fn int(v: i64) -> Value {
    Value::Int(v)
}

fn dec(s: &str) -> Value {
    Value::Decimal(s.parse().unwrap_or_default())
}

fn now() -> Value {
    Value::DateTime(DateTime::now().truncate(0))
}

fn get_i64(r: &QueryResult, row: usize, col: usize) -> Result<i64> {
    r.rows
        .get(row)
        .and_then(|x| x.get(col))
        .and_then(Value::to_i64)
        .ok_or_else(|| TxnError::Missing(format!("no integer at row {row} column {col}")))
}

fn get_dec(r: &QueryResult, row: usize, col: usize) -> Decimal {
    r.rows
        .get(row)
        .and_then(|x| x.get(col))
        .and_then(Value::to_decimal)
        .unwrap_or_default()
}

fn get_bytes(r: &QueryResult, row: usize, col: usize) -> Vec<u8> {
    r.rows
        .get(row)
        .and_then(|x| x.get(col))
        .and_then(Value::to_text)
        .unwrap_or_default()
}

/// A row the transaction needs was not there: the database is broken.
fn missing(what: &str) -> TxnError {
    TxnError::Missing(format!("{what} not found"))
}

/// Another warehouse than `home`, uniformly (needs at least two).
fn remote_warehouse(r: &mut TpccRng, home: i64, warehouses: i64) -> i64 {
    let w = r.uniform(1, warehouses - 1);
    if w >= home {
        w + 1
    } else {
        w
    }
}

impl Ctx<'_> {
    async fn q(&mut self, sql: &str, params: &[Value]) -> Result<QueryResult> {
        Ok(self.conn.execute(sql, params).await?)
    }

    pub async fn run(&mut self, t: TxnType) -> Result<Outcome> {
        match t {
            TxnType::NewOrder => self.new_order().await,
            TxnType::Payment => self.payment().await,
            TxnType::OrderStatus => self.order_status().await,
            TxnType::Delivery => self.delivery().await,
            TxnType::StockLevel => self.stock_level().await,
        }
    }

    async fn commit(&mut self) -> Result<Outcome> {
        self.conn.query_drop("COMMIT").await?;
        Ok(Outcome::Committed)
    }

    /// Customer chosen by last name (60%) or id (spec 2.5.1.2, 2.6.1.2); by
    /// name, the row at position ceil(n / 2) ordered by C_FIRST.
    async fn pick_customer(&mut self, w: i64, d: i64) -> Result<i64> {
        if self.rng.uniform(1, 100) <= 60 {
            let last = self.rng.run_last_name();
            let r = self
                .q(CUSTOMER_BY_NAME, &[int(w), int(d), Value::str(&last)])
                .await?;
            if r.rows.is_empty() {
                return Err(missing("customer by last name"));
            }
            get_i64(&r, (r.rows.len() - 1) / 2, 0)
        } else {
            Ok(self.rng.nurand(1023, 1, CUSTOMERS))
        }
    }

    async fn new_order(&mut self) -> Result<Outcome> {
        let Terminal {
            w_id, warehouses, ..
        } = self.term;
        let r = &mut *self.rng;
        let d_id = r.uniform(1, DISTRICTS);
        let c_id = r.nurand(1023, 1, CUSTOMERS);
        let ol_cnt = r.uniform(5, 15);
        let rollback = r.uniform(1, 100) == 1;
        let mut lines = order_lines(r, w_id, warehouses, ol_cnt, rollback);
        let all_local = lines.iter().all(|l| l.0 == w_id) as i64;
        // Stock rows are locked in (warehouse, item) order, as BenchmarkSQL
        // does, so concurrent New-Orders do not deadlock on each other; the
        // unused item sorts last.
        lines.sort_by_key(|l| (l.1 > ITEMS, l.0, l.1));

        let cw = self
            .q(NO_CUSTOMER_WAREHOUSE, &[int(w_id), int(d_id), int(c_id)])
            .await?;
        if cw.rows.is_empty() {
            return Err(missing("customer/warehouse"));
        }
        let (c_discount, w_tax) = (get_dec(&cw, 0, 0), get_dec(&cw, 0, 3));
        let dist = self
            .q(NO_DISTRICT_FOR_UPDATE, &[int(w_id), int(d_id)])
            .await?;
        if dist.rows.is_empty() {
            return Err(missing("district"));
        }
        let d_tax = get_dec(&dist, 0, 0);
        let o_id = get_i64(&dist, 0, 1)?;
        self.q(NO_DISTRICT_UPDATE, &[int(w_id), int(d_id)]).await?;
        self.q(
            NO_INSERT_ORDER,
            &[
                int(o_id),
                int(d_id),
                int(w_id),
                int(c_id),
                now(),
                int(ol_cnt),
                int(all_local),
            ],
        )
        .await?;
        self.q(NO_INSERT_NEW_ORDER, &[int(o_id), int(d_id), int(w_id)])
            .await?;
        let mut total = Decimal::ZERO;
        for (n, &line) in lines.iter().enumerate() {
            let Some(amount) = self.order_line(n, line, (o_id, d_id, w_id)).await? else {
                // Spec 2.4.2.3: an unused item rolls the whole order back.
                self.conn.query_drop("ROLLBACK").await?;
                return Ok(Outcome::RolledBack);
            };
            total = total.checked_add(amount).unwrap_or(total);
        }
        // The total the terminal would display (2.4.2.2); not stored.
        let _ = (|| {
            let tax = Decimal::ONE.checked_add(w_tax)?.checked_add(d_tax)?;
            total
                .checked_mul(Decimal::ONE.checked_sub(c_discount)?)?
                .checked_mul(tax)
        })();
        self.commit().await
    }

    /// One order line of New-Order: the item, its stock row updated, the
    /// line inserted; its amount, or None for the unused item.
    async fn order_line(
        &mut self,
        n: usize,
        (supply, item, qty): (i64, i64, i64),
        (o_id, d_id, w_id): (i64, i64, i64),
    ) -> Result<Option<Decimal>> {
        let it = self.q(NO_ITEM, &[int(item)]).await?;
        if it.rows.is_empty() {
            return Ok(None);
        }
        let price = get_dec(&it, 0, 0);
        let st = self
            .q(NO_STOCK_FOR_UPDATE, &[int(supply), int(item)])
            .await?;
        if st.rows.is_empty() {
            return Err(missing("stock"));
        }
        let s_qty = get_i64(&st, 0, 0)?;
        let new_qty = if s_qty >= qty + 10 {
            s_qty - qty
        } else {
            s_qty - qty + 91
        };
        let dist_info = get_bytes(&st, 0, 1 + d_id as usize);
        self.q(
            NO_STOCK_UPDATE,
            &[
                int(new_qty),
                int(qty),
                int((supply != w_id) as i64),
                int(supply),
                int(item),
            ],
        )
        .await?;
        let amount = price
            .checked_mul(Decimal::from(qty))
            .ok_or_else(|| missing("a representable order-line amount"))?
            .round_dp(2);
        self.q(
            NO_INSERT_ORDER_LINE,
            &[
                int(o_id),
                int(d_id),
                int(w_id),
                int(n as i64 + 1),
                int(item),
                int(supply),
                int(qty),
                Value::Decimal(amount),
                Value::Bytes(dist_info),
            ],
        )
        .await?;
        Ok(Some(amount))
    }

    async fn payment(&mut self) -> Result<Outcome> {
        let Terminal {
            w_id, warehouses, ..
        } = self.term;
        let d_id = self.rng.uniform(1, DISTRICTS);
        // 85% of payments are for a customer of the home warehouse (2.5.1.2).
        let (c_w_id, c_d_id) = if warehouses > 1 && self.rng.uniform(1, 100) > 85 {
            (
                remote_warehouse(self.rng, w_id, warehouses),
                self.rng.uniform(1, DISTRICTS),
            )
        } else {
            (w_id, d_id)
        };
        let amount = self.rng.amount(100, 500_000, 2);
        let h_amount = dec(&amount);

        self.q(PAY_WAREHOUSE_UPDATE, &[h_amount.clone(), int(w_id)])
            .await?;
        let wh = self.q(PAY_WAREHOUSE, &[int(w_id)]).await?;
        if wh.rows.is_empty() {
            return Err(missing("warehouse"));
        }
        self.q(
            PAY_DISTRICT_UPDATE,
            &[h_amount.clone(), int(w_id), int(d_id)],
        )
        .await?;
        let di = self.q(PAY_DISTRICT, &[int(w_id), int(d_id)]).await?;
        if di.rows.is_empty() {
            return Err(missing("district"));
        }
        let c_id = self.pick_customer(c_w_id, c_d_id).await?;
        let cu = self
            .q(
                PAY_CUSTOMER_FOR_UPDATE,
                &[int(c_w_id), int(c_d_id), int(c_id)],
            )
            .await?;
        if cu.rows.is_empty() {
            return Err(missing("customer"));
        }
        let customer = [int(c_w_id), int(c_d_id), int(c_id)];
        let credit = get_bytes(&cu, 0, 10);
        let history = format!("{c_id} {c_d_id} {c_w_id} {d_id} {w_id} {amount} | ");
        self.pay_customer(&credit, &h_amount, &customer, history)
            .await?;
        let mut h_data = get_bytes(&wh, 0, 0);
        h_data.extend_from_slice(b"    ");
        h_data.extend_from_slice(&get_bytes(&di, 0, 0));
        h_data.truncate(24);
        let hist_id = *self.next_hist_id;
        *self.next_hist_id += self.hist_stride;
        self.q(
            PAY_INSERT_HISTORY,
            &[
                int(hist_id),
                int(c_id),
                int(c_d_id),
                int(c_w_id),
                int(d_id),
                int(w_id),
                now(),
                h_amount,
                Value::Bytes(h_data),
            ],
        )
        .await?;
        self.commit().await
    }

    /// Credits the customer; one with bad credit also gets the payment
    /// prepended to C_DATA, kept to 500 characters (2.5.2.2).
    async fn pay_customer(
        &mut self,
        credit: &[u8],
        h_amount: &Value,
        customer: &[Value; 3],
        history: String,
    ) -> Result<()> {
        let mut args = vec![h_amount.clone(), h_amount.clone()];
        let sql = if credit == b"BC" {
            let old = self.q(PAY_CUSTOMER_DATA, customer).await?;
            let mut data = history.into_bytes();
            data.extend_from_slice(&get_bytes(&old, 0, 0));
            data.truncate(500);
            args.push(Value::Bytes(data));
            PAY_CUSTOMER_UPDATE_BC
        } else {
            PAY_CUSTOMER_UPDATE_GC
        };
        args.extend_from_slice(customer);
        self.q(sql, &args).await?;
        Ok(())
    }

    async fn order_status(&mut self) -> Result<Outcome> {
        let w_id = self.term.w_id;
        let d_id = self.rng.uniform(1, DISTRICTS);
        let c_id = self.pick_customer(w_id, d_id).await?;
        let cu = self
            .q(OS_CUSTOMER, &[int(w_id), int(d_id), int(c_id)])
            .await?;
        if cu.rows.is_empty() {
            return Err(missing("customer"));
        }
        let o = self
            .q(OS_LAST_ORDER, &[int(w_id), int(d_id), int(c_id)])
            .await?;
        // Every customer has an order after the load (a permutation), so
        // an empty answer means the database lost rows.
        if o.rows.is_empty() {
            return Err(missing("last order of customer"));
        }
        let o_id = get_i64(&o, 0, 0)?;
        self.q(OS_ORDER_LINES, &[int(w_id), int(d_id), int(o_id)])
            .await?;
        self.commit().await
    }

    async fn delivery(&mut self) -> Result<Outcome> {
        let w_id = self.term.w_id;
        let carrier = self.rng.uniform(1, 10);
        let delivered_at = now();
        for d_id in 1..=DISTRICTS {
            // Oldest undelivered order; if a concurrent Delivery took it
            // first, the DELETE finds nothing and we look again.
            let mut o_id = None;
            for _ in 0..100 {
                let r = self.q(DL_OLDEST_NEW_ORDER, &[int(w_id), int(d_id)]).await?;
                let Some(id) = r.scalar().and_then(Value::to_i64) else {
                    break; // no undelivered order in this district (2.7.4.2)
                };
                let n = self
                    .conn
                    .execute_drop(DL_DELETE_NEW_ORDER, &[int(w_id), int(d_id), int(id)])
                    .await?;
                if n == 1 {
                    o_id = Some(id);
                    break;
                }
            }
            let Some(o_id) = o_id else { continue };
            let o = self.q(DL_ORDER, &[int(w_id), int(d_id), int(o_id)]).await?;
            if o.rows.is_empty() {
                return Err(missing("order of new order"));
            }
            let c_id = get_i64(&o, 0, 0)?;
            self.q(
                DL_ORDER_UPDATE,
                &[int(carrier), int(w_id), int(d_id), int(o_id)],
            )
            .await?;
            self.q(
                DL_ORDER_LINE_UPDATE,
                &[delivered_at.clone(), int(w_id), int(d_id), int(o_id)],
            )
            .await?;
            let s = self
                .q(DL_ORDER_LINE_SUM, &[int(w_id), int(d_id), int(o_id)])
                .await?;
            let sum = get_dec(&s, 0, 0);
            self.q(
                DL_CUSTOMER_UPDATE,
                &[Value::Decimal(sum), int(w_id), int(d_id), int(c_id)],
            )
            .await?;
        }
        self.commit().await
    }

    async fn stock_level(&mut self) -> Result<Outcome> {
        let Terminal { w_id, d_id, .. } = self.term;
        let threshold = self.rng.uniform(10, 20);
        let d = self.q(SL_DISTRICT, &[int(w_id), int(d_id)]).await?;
        if d.rows.is_empty() {
            return Err(missing("district"));
        }
        let next = get_i64(&d, 0, 0)?;
        // The last 20 orders of the district (2.8.2.2).
        self.q(
            SL_LOW_STOCK,
            &[
                int(w_id),
                int(d_id),
                int(next - 20),
                int(next),
                int(w_id),
                int(threshold),
            ],
        )
        .await?;
        self.commit().await
    }
}

/// New-Order's lines as (supply warehouse, item, quantity).
fn order_lines(
    r: &mut TpccRng,
    w_id: i64,
    warehouses: i64,
    ol_cnt: i64,
    rollback: bool,
) -> Vec<(i64, i64, i64)> {
    // (supply warehouse, item, quantity); 1% of lines from a remote
    // warehouse (2.4.1.5); in 1% of orders the last item is unused.
    (0..ol_cnt)
        .map(|n| {
            let item = if rollback && n == ol_cnt - 1 {
                ITEMS + 1
            } else {
                r.nurand(8191, 1, ITEMS)
            };
            let supply = if warehouses > 1 && r.uniform(1, 100) == 1 {
                remote_warehouse(r, w_id, warehouses)
            } else {
                w_id
            };
            (supply, item, r.uniform(1, 10))
        })
        .collect()
}
