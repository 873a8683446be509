//! Initial population (spec 4.3.3.1): one task per warehouse plus one for
//! the items, each on its own connection, writing multi-row INSERTs in
//! autocommit batches.

use super::rng::{fixed, last_name, NuRandC, TpccRng};
use super::schema;
use crate::connect_retry;
use lockstep_client::{Conn, Opts};
use lockstep_types::DateTime;
use std::fmt::Write as _;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub const ITEMS: i64 = 100_000;
pub const DISTRICTS: i64 = 10;
pub const CUSTOMERS: i64 = 3_000;
pub const ORDERS: i64 = 3_000;
/// Orders 2101..=3000 of each district are undelivered (new orders).
pub const FIRST_NEW_ORDER: i64 = 2_101;

#[derive(Clone, Copy)]
enum Part {
    Items,
    Warehouse(i64),
    Stock(i64),
    District(i64, i64),
}

pub struct LoadOptions {
    pub warehouses: i64,
    /// Loader tasks running at once (one per warehouse is queued).
    pub workers: usize,
    /// Rows per INSERT statement.
    pub batch: usize,
}

/// Multi-row INSERT under construction; sent when it holds `batch` rows.
struct Batch<'a> {
    head: &'a str,
    sql: String,
    rows: usize,
    limit: usize,
    progress: &'a AtomicU64,
}

impl<'a> Batch<'a> {
    fn new(head: &'a str, limit: usize, progress: &'a AtomicU64) -> Self {
        Batch {
            head,
            sql: String::with_capacity(64 * 1024),
            rows: 0,
            limit,
            progress,
        }
    }

    /// Starts a row: returns the buffer to write "(...)" into.
    fn row(&mut self) -> &mut String {
        if self.rows == 0 {
            self.sql.clear();
            self.sql.push_str("INSERT INTO ");
            self.sql.push_str(self.head);
            self.sql.push_str(" VALUES ");
        } else {
            self.sql.push(',');
        }
        self.rows += 1;
        &mut self.sql
    }

    async fn maybe_flush(&mut self, c: &mut Conn) -> Result<(), String> {
        if self.rows >= self.limit {
            self.flush(c).await?;
        }
        Ok(())
    }

    async fn flush(&mut self, c: &mut Conn) -> Result<(), String> {
        if self.rows == 0 {
            return Ok(());
        }
        c.query_drop(&self.sql).await.map_err(|e| {
            let head: String = self.sql.chars().take(300).collect();
            format!("{e}\n  in: {head}...")
        })?;
        self.progress.fetch_add(self.rows as u64, Ordering::Relaxed);
        self.rows = 0;
        Ok(())
    }
}

/// Quoted string literal (generated data is alphanumeric, but escape anyway).
fn q(out: &mut String, s: &str) {
    out.push('\'');
    for ch in s.chars() {
        match ch {
            '\'' => out.push_str("''"),
            '\\' => out.push_str("\\\\"),
            c => out.push(c),
        }
    }
    out.push('\'');
}

fn now_literal() -> String {
    format!("'{}'", DateTime::now().format(0))
}

/// Rows the load writes for `w` warehouses (order lines estimated at the
/// mean of 10 per order), for the progress line.
fn expected_rows(w: i64) -> u64 {
    let per_w =
        1 + ITEMS + DISTRICTS * (1 + CUSTOMERS * 2 + ORDERS * 11 + (ORDERS - FIRST_NEW_ORDER + 1));
    (ITEMS + w * per_w) as u64
}

pub async fn create_schema(opts: &Opts, db: &str) -> Result<(), String> {
    // The database may not exist yet: connect without one.
    let mut server = opts.clone();
    server.database = None;
    let mut c = connect_retry(&server, Duration::from_secs(30)).await?;
    let e = |e: lockstep_client::Error| e.to_string();
    c.query_drop(&format!("CREATE DATABASE IF NOT EXISTS {db}"))
        .await
        .map_err(e)?;
    c.query_drop(&format!("USE {db}")).await.map_err(e)?;
    for t in schema::TABLES.iter().rev() {
        c.query_drop(&format!("DROP TABLE IF EXISTS {t}"))
            .await
            .map_err(|err| format!("DROP TABLE {t}: {err}"))?;
    }
    for sql in schema::CREATE_TABLES
        .iter()
        .chain(schema::CREATE_INDEXES.iter())
    {
        c.query_drop(sql)
            .await
            .map_err(|err| format!("{err}\n  in: {sql}"))?;
    }
    Ok(())
}

pub async fn load(opts: &Opts, o: &LoadOptions) -> Result<(), String> {
    let start = Instant::now();
    create_schema(opts, opts.database.as_deref().unwrap_or("tpcc")).await?;
    let c_load = NuRandC::random(&mut rand::thread_rng());
    write_config(opts, o, &c_load).await?;

    let progress = Arc::new(AtomicU64::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let ticker = spawn_ticker(
        progress.clone(),
        done.clone(),
        expected_rows(o.warehouses),
        start,
    );
    let result = load_parts(opts, o, c_load, &progress).await;
    done.store(true, Ordering::Relaxed);
    let _ = ticker.await;
    eprintln!();
    result?;
    let n = progress.load(Ordering::Relaxed);
    eprintln!(
        "loaded {} warehouses: {n} rows in {:.1}s ({:.0} rows/s)",
        o.warehouses,
        start.elapsed().as_secs_f64(),
        n as f64 / start.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Records the load's parameters, which the run reads back (the C constants
/// of NURand must differ between load and run by the rules of 2.1.6.1).
async fn write_config(opts: &Opts, o: &LoadOptions, c_load: &NuRandC) -> Result<(), String> {
    let mut c = connect_retry(opts, Duration::from_secs(30)).await?;
    let sql = format!(
        "INSERT INTO bmsql_config (cfg_name, cfg_value) VALUES \
         ('warehouses', '{}'), ('nURandCLast', '{}'), ('nURandCC_ID', '{}'), ('nURandCI_ID', '{}')",
        o.warehouses, c_load.c_last, c_load.c_id, c_load.ol_i_id
    );
    c.query_drop(&sql).await.map_err(|e| e.to_string())?;
    Ok(())
}

/// Reports progress until `done` is set.
fn spawn_ticker(
    progress: Arc<AtomicU64>,
    done: Arc<AtomicBool>,
    total: u64,
    start: Instant,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut last = 0;
        // A bar redrawn in place on a terminal; a line every 5 s in a log.
        let tty = std::io::stderr().is_terminal();
        let every = if tty { 1 } else { 5 };
        while !done.load(Ordering::Relaxed) {
            tokio::time::sleep(Duration::from_secs(every)).await;
            let n = progress.load(Ordering::Relaxed);
            let pct = (n as f64 * 100.0 / total as f64).min(100.0);
            let bar = "#".repeat((pct / 4.0) as usize);
            eprint!(
                "{}loading [{bar:<25}] {pct:5.1}% {n} rows, {:.0} rows/s, {:.0}s   {}",
                if tty { "\r" } else { "" },
                (n - last) as f64 / every as f64,
                start.elapsed().as_secs_f64(),
                if tty { "" } else { "\n" },
            );
            last = n;
        }
    })
}

/// Work is split finer than one task per warehouse so that a small load
/// still keeps several connections busy: items; and per warehouse its
/// stock, its warehouse and district rows, and each district's customers
/// and orders.
fn plan_parts(warehouses: i64) -> Vec<Part> {
    let mut parts = vec![Part::Items];
    for w in 1..=warehouses {
        parts.push(Part::Warehouse(w));
        parts.push(Part::Stock(w));
        parts.extend((1..=DISTRICTS).map(|d| Part::District(w, d)));
    }
    parts
}

/// Loads every part on at most `o.workers` connections; the first error wins.
async fn load_parts(
    opts: &Opts,
    o: &LoadOptions,
    c_load: NuRandC,
    progress: &Arc<AtomicU64>,
) -> Result<(), String> {
    let sem = Arc::new(tokio::sync::Semaphore::new(o.workers.max(1)));
    let mut tasks = Vec::new();
    for part in plan_parts(o.warehouses) {
        let (opts, sem, progress) = (opts.clone(), sem.clone(), progress.clone());
        let batch = o.batch;
        tasks.push(tokio::spawn(async move {
            let _permit = sem.acquire_owned().await.map_err(|e| e.to_string())?;
            let mut c = connect_retry(&opts, Duration::from_secs(60)).await?;
            let r = load_part(&mut c, part, c_load, batch, &progress).await;
            let _ = c.close().await;
            r
        }));
    }
    let mut first_err = None;
    for t in tasks {
        let r = t.await.map_err(|e| e.to_string()).and_then(|r| r);
        if let Err(e) = r {
            first_err.get_or_insert(e);
        }
    }
    first_err.map_or(Ok(()), Err)
}

async fn load_part(
    c: &mut Conn,
    part: Part,
    c_load: NuRandC,
    batch: usize,
    progress: &AtomicU64,
) -> Result<(), String> {
    let mut rng = TpccRng::new(c_load);
    match part {
        Part::Items => load_items(c, &mut rng, batch, progress).await,
        Part::Warehouse(w) => load_warehouse(c, &mut rng, w, progress).await,
        Part::Stock(w) => load_stock(c, &mut rng, w, batch, progress).await,
        Part::District(w, d) => {
            let now = now_literal();
            let at = District {
                w,
                d,
                batch,
                progress,
                now: &now,
            };
            load_district(c, &mut rng, &at).await
        }
    }
}

async fn load_items(
    c: &mut Conn,
    r: &mut TpccRng,
    batch: usize,
    progress: &AtomicU64,
) -> Result<(), String> {
    let mut b = Batch::new(
        "bmsql_item (i_id, i_name, i_price, i_data, i_im_id)",
        batch,
        progress,
    );
    for i in 1..=ITEMS {
        let (name, price, data, im) = (
            r.astring(14, 24),
            r.amount(100, 10_000, 2),
            r.data_maybe_original(),
            r.uniform(1, 10_000),
        );
        let s = b.row();
        let _ = write!(s, "({i},");
        q(s, &name);
        let _ = write!(s, ",{price},");
        q(s, &data);
        let _ = write!(s, ",{im})");
        b.maybe_flush(c).await?;
    }
    b.flush(c).await
}

/// The warehouse row and its district rows.
async fn load_warehouse(
    c: &mut Conn,
    r: &mut TpccRng,
    w: i64,
    progress: &AtomicU64,
) -> Result<(), String> {
    // Warehouse (4.3.3.1): W_YTD = 300,000.00.
    {
        let mut b = Batch::new(
            "bmsql_warehouse (w_id, w_ytd, w_tax, w_name, w_street_1, w_street_2, w_city, w_state, w_zip)",
            1,
            progress,
        );
        let s = b.row();
        let _ = write!(s, "({w},300000.00,{},", r.amount(0, 2000, 4));
        address(s, r, 6, 10);
        s.push(')');
        b.flush(c).await?;
    }

    // Districts: D_YTD = 30,000.00, D_NEXT_O_ID = 3001.
    let mut b = Batch::new(
        "bmsql_district (d_w_id, d_id, d_ytd, d_tax, d_next_o_id, d_name, d_street_1, \
         d_street_2, d_city, d_state, d_zip)",
        DISTRICTS as usize,
        progress,
    );
    for d in 1..=DISTRICTS {
        let s = b.row();
        let _ = write!(
            s,
            "({w},{d},30000.00,{},{},",
            r.amount(0, 2000, 4),
            ORDERS + 1
        );
        address(s, r, 6, 10);
        s.push(')');
    }
    b.flush(c).await
}

async fn load_stock(
    c: &mut Conn,
    r: &mut TpccRng,
    w: i64,
    batch: usize,
    progress: &AtomicU64,
) -> Result<(), String> {
    // Stock: 100,000 per warehouse.
    let mut b = Batch::new(
        "bmsql_stock (s_w_id, s_i_id, s_quantity, s_ytd, s_order_cnt, s_remote_cnt, s_data, \
         s_dist_01, s_dist_02, s_dist_03, s_dist_04, s_dist_05, s_dist_06, s_dist_07, s_dist_08, \
         s_dist_09, s_dist_10)",
        batch,
        progress,
    );
    for i in 1..=ITEMS {
        let qty = r.uniform(10, 100);
        let data = r.data_maybe_original();
        let s = b.row();
        let _ = write!(s, "({w},{i},{qty},0,0,0,");
        q(s, &data);
        for _ in 0..10 {
            s.push(',');
            let d = r.astring(24, 24);
            q(s, &d);
        }
        s.push(')');
        b.maybe_flush(c).await?;
    }
    b.flush(c).await
}

/// Name and address columns shared by warehouse and district:
/// name, street_1, street_2, city, state, zip.
fn address(s: &mut String, r: &mut TpccRng, name_lo: usize, name_hi: usize) {
    let parts = [
        r.astring(name_lo, name_hi),
        r.astring(10, 20),
        r.astring(10, 20),
        r.astring(10, 20),
        r.state(),
        r.zip(),
    ];
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        q(s, p);
    }
}

/// Where a district's rows go, and how they are sent.
#[derive(Clone, Copy)]
struct District<'a> {
    w: i64,
    d: i64,
    batch: usize,
    progress: &'a AtomicU64,
    now: &'a str,
}

impl<'a> District<'a> {
    /// A multi-row INSERT into `head` for this district's load.
    fn batch(&self, head: &'a str) -> Batch<'a> {
        Batch::new(head, self.batch, self.progress)
    }
}

async fn load_district(c: &mut Conn, r: &mut TpccRng, at: &District<'_>) -> Result<(), String> {
    load_customers(c, r, at).await?;
    load_orders(c, r, at).await
}

/// A district's customers and one history row each.
async fn load_customers(c: &mut Conn, r: &mut TpccRng, at: &District<'_>) -> Result<(), String> {
    let District { w, d, now, .. } = *at;
    let mut cust = at.batch(
        "bmsql_customer (c_w_id, c_d_id, c_id, c_discount, c_credit, c_last, c_first, \
         c_credit_lim, c_balance, c_ytd_payment, c_payment_cnt, c_delivery_cnt, c_street_1, \
         c_street_2, c_city, c_state, c_zip, c_phone, c_since, c_middle, c_data)",
    );
    let mut hist = at.batch(
        "bmsql_history (hist_id, h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)",
    );
    for id in 1..=CUSTOMERS {
        // The first 1000 customers cover every last name once; the rest
        // follow NURand(255, 0, 999) with the load's C.
        let last = if id <= 1000 {
            last_name(id - 1)
        } else {
            last_name(r.nurand(255, 0, 999))
        };
        let credit = if r.uniform(1, 10) == 1 { "BC" } else { "GC" };
        let discount = r.amount(0, 5000, 4);
        let first = r.astring(8, 16);
        let strs = [r.astring(10, 20), r.astring(10, 20), r.astring(10, 20)];
        let (state, zip, phone) = (r.state(), r.zip(), r.nstring(16, 16));
        let data = r.astring(300, 500);
        let s = cust.row();
        let _ = write!(s, "({w},{d},{id},{discount},'{credit}',");
        q(s, &last);
        s.push(',');
        q(s, &first);
        s.push_str(",50000.00,-10.00,10.00,1,0,");
        for p in strs.iter().chain([&state, &zip, &phone]) {
            q(s, p);
            s.push(',');
        }
        let _ = write!(s, "{now},'OE',");
        q(s, &data);
        s.push(')');
        cust.maybe_flush(c).await?;

        let hid = ((w - 1) * DISTRICTS + (d - 1)) * CUSTOMERS + id;
        let hdata = r.astring(12, 24);
        let s = hist.row();
        let _ = write!(s, "({hid},{id},{d},{w},{d},{w},{now},10.00,");
        q(s, &hdata);
        s.push(')');
        hist.maybe_flush(c).await?;
    }
    cust.flush(c).await?;
    hist.flush(c).await
}

/// A district's orders, their lines, and the undelivered ones' NEW-ORDER rows.
async fn load_orders(c: &mut Conn, r: &mut TpccRng, at: &District<'_>) -> Result<(), String> {
    let District { w, d, now, .. } = *at;
    // Orders: customer ids are a random permutation of 1..=3000.
    let mut perm: Vec<i64> = (1..=CUSTOMERS).collect();
    {
        use rand::seq::SliceRandom;
        perm.shuffle(&mut r.rng);
    }
    let mut orders = at.batch(
        "bmsql_oorder (o_w_id, o_d_id, o_id, o_c_id, o_carrier_id, o_ol_cnt, o_all_local, o_entry_d)",
    );
    let mut lines = at.batch(
        "bmsql_order_line (ol_w_id, ol_d_id, ol_o_id, ol_number, ol_i_id, ol_delivery_d, \
         ol_amount, ol_supply_w_id, ol_quantity, ol_dist_info)",
    );
    let mut new_orders = at.batch("bmsql_new_order (no_w_id, no_d_id, no_o_id)");
    for o in 1..=ORDERS {
        let delivered = o < FIRST_NEW_ORDER;
        let ol_cnt = r.uniform(5, 15);
        let carrier = if delivered {
            r.uniform(1, 10).to_string()
        } else {
            "NULL".into()
        };
        let s = orders.row();
        let _ = write!(
            s,
            "({w},{d},{o},{},{carrier},{ol_cnt},1,{now})",
            perm[o as usize - 1]
        );
        orders.maybe_flush(c).await?;
        for n in 1..=ol_cnt {
            let item = r.uniform(1, ITEMS);
            let (delivery, amount) = if delivered {
                (now, "0.00".to_string())
            } else {
                ("NULL", fixed(r.uniform(1, 999_999), 2))
            };
            let dist = r.astring(24, 24);
            let s = lines.row();
            let _ = write!(s, "({w},{d},{o},{n},{item},{delivery},{amount},{w},5,");
            q(s, &dist);
            s.push(')');
            lines.maybe_flush(c).await?;
        }
        if !delivered {
            let s = new_orders.row();
            let _ = write!(s, "({w},{d},{o})");
            new_orders.maybe_flush(c).await?;
        }
    }
    orders.flush(c).await?;
    lines.flush(c).await?;
    new_orders.flush(c).await
}
