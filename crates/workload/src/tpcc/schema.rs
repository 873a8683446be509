//! BenchmarkSQL's schema (tables, primary keys and secondary indexes) and
//! the statement texts of the five transactions, written from the TPC-C
//! transaction profiles (spec 2.4-2.8). Only SQL that MySQL 8, MariaDB and
//! lockstep all accept: no AUTO_INCREMENT (history ids come from the
//! driver), DATETIME rather than TIMESTAMP (MariaDB's implicit TIMESTAMP
//! defaults would add ON UPDATE to the first one).

pub const TABLES: [&str; 10] = [
    "bmsql_config",
    "bmsql_warehouse",
    "bmsql_district",
    "bmsql_customer",
    "bmsql_history",
    "bmsql_new_order",
    "bmsql_oorder",
    "bmsql_order_line",
    "bmsql_item",
    "bmsql_stock",
];

pub const CREATE_TABLES: [&str; 10] = [
    "CREATE TABLE bmsql_config (
        cfg_name VARCHAR(30) NOT NULL,
        cfg_value VARCHAR(50),
        PRIMARY KEY (cfg_name))",
    "CREATE TABLE bmsql_warehouse (
        w_id INT NOT NULL,
        w_ytd DECIMAL(12,2),
        w_tax DECIMAL(4,4),
        w_name VARCHAR(10),
        w_street_1 VARCHAR(20),
        w_street_2 VARCHAR(20),
        w_city VARCHAR(20),
        w_state CHAR(2),
        w_zip CHAR(9),
        PRIMARY KEY (w_id))",
    "CREATE TABLE bmsql_district (
        d_w_id INT NOT NULL,
        d_id INT NOT NULL,
        d_ytd DECIMAL(12,2),
        d_tax DECIMAL(4,4),
        d_next_o_id INT,
        d_name VARCHAR(10),
        d_street_1 VARCHAR(20),
        d_street_2 VARCHAR(20),
        d_city VARCHAR(20),
        d_state CHAR(2),
        d_zip CHAR(9),
        PRIMARY KEY (d_w_id, d_id))",
    "CREATE TABLE bmsql_customer (
        c_w_id INT NOT NULL,
        c_d_id INT NOT NULL,
        c_id INT NOT NULL,
        c_discount DECIMAL(4,4),
        c_credit CHAR(2),
        c_last VARCHAR(16),
        c_first VARCHAR(16),
        c_credit_lim DECIMAL(12,2),
        c_balance DECIMAL(12,2),
        c_ytd_payment DECIMAL(12,2),
        c_payment_cnt INT,
        c_delivery_cnt INT,
        c_street_1 VARCHAR(20),
        c_street_2 VARCHAR(20),
        c_city VARCHAR(20),
        c_state CHAR(2),
        c_zip CHAR(9),
        c_phone CHAR(16),
        c_since DATETIME,
        c_middle CHAR(2),
        c_data VARCHAR(500),
        PRIMARY KEY (c_w_id, c_d_id, c_id))",
    "CREATE TABLE bmsql_history (
        hist_id BIGINT NOT NULL,
        h_c_id INT,
        h_c_d_id INT,
        h_c_w_id INT,
        h_d_id INT,
        h_w_id INT,
        h_date DATETIME,
        h_amount DECIMAL(6,2),
        h_data VARCHAR(24),
        PRIMARY KEY (hist_id))",
    "CREATE TABLE bmsql_new_order (
        no_w_id INT NOT NULL,
        no_d_id INT NOT NULL,
        no_o_id INT NOT NULL,
        PRIMARY KEY (no_w_id, no_d_id, no_o_id))",
    "CREATE TABLE bmsql_oorder (
        o_w_id INT NOT NULL,
        o_d_id INT NOT NULL,
        o_id INT NOT NULL,
        o_c_id INT,
        o_carrier_id INT,
        o_ol_cnt INT,
        o_all_local INT,
        o_entry_d DATETIME,
        PRIMARY KEY (o_w_id, o_d_id, o_id))",
    "CREATE TABLE bmsql_order_line (
        ol_w_id INT NOT NULL,
        ol_d_id INT NOT NULL,
        ol_o_id INT NOT NULL,
        ol_number INT NOT NULL,
        ol_i_id INT NOT NULL,
        ol_delivery_d DATETIME,
        ol_amount DECIMAL(6,2),
        ol_supply_w_id INT,
        ol_quantity INT,
        ol_dist_info CHAR(24),
        PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number))",
    "CREATE TABLE bmsql_item (
        i_id INT NOT NULL,
        i_name VARCHAR(24),
        i_price DECIMAL(5,2),
        i_data VARCHAR(50),
        i_im_id INT,
        PRIMARY KEY (i_id))",
    "CREATE TABLE bmsql_stock (
        s_w_id INT NOT NULL,
        s_i_id INT NOT NULL,
        s_quantity INT,
        s_ytd INT,
        s_order_cnt INT,
        s_remote_cnt INT,
        s_data VARCHAR(50),
        s_dist_01 CHAR(24),
        s_dist_02 CHAR(24),
        s_dist_03 CHAR(24),
        s_dist_04 CHAR(24),
        s_dist_05 CHAR(24),
        s_dist_06 CHAR(24),
        s_dist_07 CHAR(24),
        s_dist_08 CHAR(24),
        s_dist_09 CHAR(24),
        s_dist_10 CHAR(24),
        PRIMARY KEY (s_w_id, s_i_id))",
];

/// BenchmarkSQL's two secondary indexes, plus the one on the customer of an
/// order that the book adds (4.10.6) for Order-Status.
pub const CREATE_INDEXES: [&str; 3] = [
    "CREATE INDEX bmsql_customer_idx1 ON bmsql_customer (c_w_id, c_d_id, c_last, c_first)",
    "CREATE INDEX bmsql_oorder_idx1 ON bmsql_oorder (o_w_id, o_d_id, o_carrier_id, o_id)",
    "CREATE INDEX bmsql_oorder_idx2 ON bmsql_oorder (o_w_id, o_d_id, o_c_id)",
];

// ---- New-Order (spec 2.4.2) ----
pub const NO_CUSTOMER_WAREHOUSE: &str = "SELECT c_discount, c_last, c_credit, w_tax \
     FROM bmsql_customer JOIN bmsql_warehouse ON (w_id = c_w_id) \
     WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?";
pub const NO_DISTRICT_FOR_UPDATE: &str = "SELECT d_tax, d_next_o_id FROM bmsql_district \
     WHERE d_w_id = ? AND d_id = ? FOR UPDATE";
pub const NO_DISTRICT_UPDATE: &str = "UPDATE bmsql_district SET d_next_o_id = d_next_o_id + 1 \
     WHERE d_w_id = ? AND d_id = ?";
pub const NO_INSERT_ORDER: &str = "INSERT INTO bmsql_oorder \
     (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_ol_cnt, o_all_local) \
     VALUES (?, ?, ?, ?, ?, ?, ?)";
pub const NO_INSERT_NEW_ORDER: &str =
    "INSERT INTO bmsql_new_order (no_o_id, no_d_id, no_w_id) VALUES (?, ?, ?)";
pub const NO_ITEM: &str = "SELECT i_price, i_name, i_data FROM bmsql_item WHERE i_id = ?";
pub const NO_STOCK_FOR_UPDATE: &str = "SELECT s_quantity, s_data, \
     s_dist_01, s_dist_02, s_dist_03, s_dist_04, s_dist_05, \
     s_dist_06, s_dist_07, s_dist_08, s_dist_09, s_dist_10 \
     FROM bmsql_stock WHERE s_w_id = ? AND s_i_id = ? FOR UPDATE";
pub const NO_STOCK_UPDATE: &str = "UPDATE bmsql_stock SET s_quantity = ?, s_ytd = s_ytd + ?, \
     s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + ? \
     WHERE s_w_id = ? AND s_i_id = ?";
pub const NO_INSERT_ORDER_LINE: &str = "INSERT INTO bmsql_order_line \
     (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_quantity, \
     ol_amount, ol_dist_info) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)";

// ---- Payment (spec 2.5.2) ----
pub const PAY_WAREHOUSE_UPDATE: &str =
    "UPDATE bmsql_warehouse SET w_ytd = w_ytd + ? WHERE w_id = ?";
pub const PAY_WAREHOUSE: &str = "SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip \
     FROM bmsql_warehouse WHERE w_id = ?";
pub const PAY_DISTRICT_UPDATE: &str =
    "UPDATE bmsql_district SET d_ytd = d_ytd + ? WHERE d_w_id = ? AND d_id = ?";
pub const PAY_DISTRICT: &str = "SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip \
     FROM bmsql_district WHERE d_w_id = ? AND d_id = ?";
/// Shared by Payment and Order-Status: customers with a last name, by first
/// name; the transaction takes the row at position ceil(n / 2).
pub const CUSTOMER_BY_NAME: &str = "SELECT c_id FROM bmsql_customer \
     WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first";
pub const PAY_CUSTOMER_FOR_UPDATE: &str = "SELECT c_first, c_middle, c_last, \
     c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_since, \
     c_credit, c_credit_lim, c_discount, c_balance \
     FROM bmsql_customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ? FOR UPDATE";
pub const PAY_CUSTOMER_DATA: &str =
    "SELECT c_data FROM bmsql_customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?";
pub const PAY_CUSTOMER_UPDATE_BC: &str = "UPDATE bmsql_customer \
     SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, \
     c_payment_cnt = c_payment_cnt + 1, c_data = ? \
     WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?";
pub const PAY_CUSTOMER_UPDATE_GC: &str = "UPDATE bmsql_customer \
     SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, \
     c_payment_cnt = c_payment_cnt + 1 \
     WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?";
pub const PAY_INSERT_HISTORY: &str = "INSERT INTO bmsql_history \
     (hist_id, h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data) \
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)";

// ---- Order-Status (spec 2.6.2) ----
pub const OS_CUSTOMER: &str = "SELECT c_first, c_middle, c_last, c_balance \
     FROM bmsql_customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?";
pub const OS_LAST_ORDER: &str = "SELECT o_id, o_entry_d, o_carrier_id FROM bmsql_oorder \
     WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ? ORDER BY o_id DESC LIMIT 1";
pub const OS_ORDER_LINES: &str = "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, \
     ol_delivery_d FROM bmsql_order_line \
     WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ? ORDER BY ol_number";

// ---- Delivery (spec 2.7.4) ----
pub const DL_OLDEST_NEW_ORDER: &str =
    "SELECT MIN(no_o_id) FROM bmsql_new_order WHERE no_w_id = ? AND no_d_id = ?";
pub const DL_DELETE_NEW_ORDER: &str =
    "DELETE FROM bmsql_new_order WHERE no_w_id = ? AND no_d_id = ? AND no_o_id = ?";
pub const DL_ORDER: &str =
    "SELECT o_c_id FROM bmsql_oorder WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?";
pub const DL_ORDER_UPDATE: &str = "UPDATE bmsql_oorder SET o_carrier_id = ? \
     WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?";
pub const DL_ORDER_LINE_UPDATE: &str = "UPDATE bmsql_order_line SET ol_delivery_d = ? \
     WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?";
pub const DL_ORDER_LINE_SUM: &str = "SELECT SUM(ol_amount) FROM bmsql_order_line \
     WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?";
pub const DL_CUSTOMER_UPDATE: &str = "UPDATE bmsql_customer \
     SET c_balance = c_balance + ?, c_delivery_cnt = c_delivery_cnt + 1 \
     WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?";

// ---- Stock-Level (spec 2.8.2) ----
pub const SL_DISTRICT: &str =
    "SELECT d_next_o_id FROM bmsql_district WHERE d_w_id = ? AND d_id = ?";
pub const SL_LOW_STOCK: &str = "SELECT COUNT(DISTINCT s_i_id) \
     FROM bmsql_order_line JOIN bmsql_stock ON (s_i_id = ol_i_id) \
     WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id >= ? AND ol_o_id < ? \
     AND s_w_id = ? AND s_quantity < ?";
