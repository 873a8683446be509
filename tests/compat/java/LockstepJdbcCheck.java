// lockstep's own check program for MySQL Connector/J (ours, not the driver's:
// Connector/J's test suite is not published to Maven Central). Prints one
// line per test:  COMPAT pass|fail|skip <variant>/<name> <message>
// Usage: java -cp mysql-connector-j.jar LockstepJdbcCheck.java HOST PORT
import java.io.ByteArrayInputStream;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.sql.*;
import java.util.*;
import java.util.concurrent.*;

public class LockstepJdbcCheck {
    interface Check { void run(Connection c) throws Exception; }

    static final Map<String, Check> CHECKS = new LinkedHashMap<>();
    static String url;

    static void eq(Object want, Object got) {
        if (!Objects.equals(want, got)) throw new AssertionError("want <" + want + "> got <" + got + ">");
    }

    static void ok(boolean cond, String what) {
        if (!cond) throw new AssertionError(what);
    }

    static void table(Connection c, String name, String cols) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS " + name);
            s.execute("CREATE TABLE " + name + " (" + cols + ")");
        }
    }

    static Object one(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            ok(rs.next(), "no row for " + sql);
            return rs.getObject(1);
        }
    }

    static void define() {
        CHECKS.put("connect_valid", c -> ok(c.isValid(5), "isValid"));
        CHECKS.put("dbmeta_product", c -> {
            DatabaseMetaData md = c.getMetaData();
            ok(md.getDatabaseProductVersion().matches("^\\d+\\.\\d+\\.\\d+.*"), md.getDatabaseProductVersion());
            ok(md.getDatabaseMajorVersion() >= 5, "major version");
        });
        CHECKS.put("dbmeta_tables_columns", c -> {
            table(c, "jm", "id INT PRIMARY KEY AUTO_INCREMENT, name VARCHAR(20) NOT NULL, amt DECIMAL(10,2)");
            DatabaseMetaData md = c.getMetaData();
            try (ResultSet rs = md.getTables("compat", null, "jm", new String[] {"TABLE"})) {
                ok(rs.next(), "getTables found no jm");
                eq("jm", rs.getString("TABLE_NAME"));
            }
            List<String> cols = new ArrayList<>();
            try (ResultSet rs = md.getColumns("compat", null, "jm", "%")) {
                while (rs.next()) cols.add(rs.getString("COLUMN_NAME") + ":" + rs.getString("TYPE_NAME"));
            }
            eq(List.of("id:INT", "name:VARCHAR", "amt:DECIMAL"), cols);
        });
        CHECKS.put("dbmeta_primary_keys_indexes", c -> {
            table(c, "jk", "a INT, b INT, c INT, PRIMARY KEY (a, b), KEY kc (c)");
            List<String> pk = new ArrayList<>();
            try (ResultSet rs = c.getMetaData().getPrimaryKeys("compat", null, "jk")) {
                while (rs.next()) pk.add(rs.getString("COLUMN_NAME") + rs.getShort("KEY_SEQ"));
            }
            eq(List.of("a1", "b2"), pk);
            Set<String> idx = new TreeSet<>();
            try (ResultSet rs = c.getMetaData().getIndexInfo("compat", null, "jk", false, false)) {
                while (rs.next()) idx.add(rs.getString("INDEX_NAME"));
            }
            eq(new TreeSet<>(List.of("PRIMARY", "kc")), idx);
        });
        CHECKS.put("resultset_metadata", c -> {
            table(c, "jr", "id BIGINT UNSIGNED PRIMARY KEY AUTO_INCREMENT, d DECIMAL(12,3) NOT NULL, s VARCHAR(7), t DATETIME(3)");
            try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT id, d AS dd, s, t FROM jr")) {
                ResultSetMetaData md = rs.getMetaData();
                eq(4, md.getColumnCount());
                eq("dd", md.getColumnLabel(2));
                eq("d", md.getColumnName(2));
                eq("jr", md.getTableName(1));
                eq(Types.BIGINT, md.getColumnType(1));
                eq(true, md.isAutoIncrement(1));
                eq(false, md.isSigned(1));
                eq(Types.DECIMAL, md.getColumnType(2));
                eq(12, md.getPrecision(2));
                eq(3, md.getScale(2));
                eq(ResultSetMetaData.columnNoNulls, md.isNullable(2));
                eq(Types.VARCHAR, md.getColumnType(3));
                eq(Types.TIMESTAMP, md.getColumnType(4));
            }
        });
        CHECKS.put("types_roundtrip", c -> {
            table(c, "jt", "i INT, b BIGINT, f DOUBLE, d DECIMAL(30,10), dt DATE, ts DATETIME(6), tm TIME, "
                + "s VARCHAR(20), bl BLOB, bo TINYINT(1), y YEAR, j JSON");
            try (PreparedStatement p = c.prepareStatement("INSERT INTO jt VALUES (?,?,?,?,?,?,?,?,?,?,?,?)")) {
                p.setInt(1, -7); p.setLong(2, Long.MIN_VALUE); p.setDouble(3, 0.125);
                p.setBigDecimal(4, new BigDecimal("12345678901234567890.0123456789"));
                p.setDate(5, java.sql.Date.valueOf("2024-02-29"));
                p.setTimestamp(6, Timestamp.valueOf("2024-02-29 23:59:59.123456"));
                p.setTime(7, Time.valueOf("12:34:56")); p.setString(8, "żółw 🐢");
                p.setBytes(9, new byte[] {0, 1, (byte) 255}); p.setBoolean(10, true); p.setInt(11, 2024);
                p.setString(12, "{\"k\": [1, 2]}");
                eq(1, p.executeUpdate());
            }
            try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT * FROM jt")) {
                ok(rs.next(), "row");
                eq(-7, rs.getInt(1)); eq(Long.MIN_VALUE, rs.getLong(2)); eq(0.125, rs.getDouble(3));
                eq(new BigDecimal("12345678901234567890.0123456789"), rs.getBigDecimal(4));
                eq(java.sql.Date.valueOf("2024-02-29"), rs.getDate(5));
                eq(Timestamp.valueOf("2024-02-29 23:59:59.123456"), rs.getTimestamp(6));
                eq(Time.valueOf("12:34:56"), rs.getTime(7)); eq("żółw 🐢", rs.getString(8));
                ok(Arrays.equals(new byte[] {0, 1, (byte) 255}, rs.getBytes(9)), "blob");
                eq(true, rs.getBoolean(10)); eq(2024, rs.getInt(11));
                ok(rs.getString(12).replace(" ", "").equals("{\"k\":[1,2]}"), "json " + rs.getString(12));
            }
        });
        CHECKS.put("nulls", c -> {
            try (PreparedStatement p = c.prepareStatement("SELECT ?, ?, ?")) {
                p.setNull(1, Types.INTEGER); p.setNull(2, Types.VARCHAR); p.setObject(3, null);
                try (ResultSet rs = p.executeQuery()) {
                    ok(rs.next(), "row");
                    rs.getInt(1); ok(rs.wasNull(), "null int");
                    eq(null, rs.getString(2)); eq(null, rs.getObject(3));
                }
            }
        });
        CHECKS.put("parameter_metadata", c -> {
            try (PreparedStatement p = c.prepareStatement("SELECT ? + ?")) {
                eq(2, p.getParameterMetaData().getParameterCount());
            }
        });
        CHECKS.put("prepared_reuse", c -> {
            table(c, "jp", "id INT PRIMARY KEY, v VARCHAR(10)");
            try (PreparedStatement p = c.prepareStatement("INSERT INTO jp VALUES (?, ?)")) {
                for (int i = 0; i < 50; i++) { p.setInt(1, i); p.setString(2, "v" + i); p.executeUpdate(); }
            }
            try (PreparedStatement p = c.prepareStatement("SELECT v FROM jp WHERE id = ?")) {
                for (int i = 0; i < 50; i += 7) {
                    p.setInt(1, i);
                    try (ResultSet rs = p.executeQuery()) { ok(rs.next(), "row"); eq("v" + i, rs.getString(1)); }
                }
            }
        });
        CHECKS.put("batch_and_counts", c -> {
            table(c, "jb", "id INT PRIMARY KEY AUTO_INCREMENT, v INT");
            try (PreparedStatement p = c.prepareStatement("INSERT INTO jb (v) VALUES (?)")) {
                for (int i = 0; i < 100; i++) { p.setInt(1, i); p.addBatch(); }
                int[] counts = p.executeBatch();
                eq(100, counts.length);
                for (int n : counts) ok(n == 1 || n == Statement.SUCCESS_NO_INFO, "count " + n);
            }
            eq(100L, ((Number) one(c, "SELECT COUNT(*) FROM jb")).longValue());
        });
        CHECKS.put("statement_batch", c -> {
            table(c, "jsb", "v INT");
            try (Statement s = c.createStatement()) {
                s.addBatch("INSERT INTO jsb VALUES (1)"); s.addBatch("INSERT INTO jsb VALUES (2),(3)");
                s.addBatch("UPDATE jsb SET v = v + 1");
                eq("[1, 2, 3]", Arrays.toString(s.executeBatch()));
            }
        });
        CHECKS.put("generated_keys", c -> {
            table(c, "jg", "id INT PRIMARY KEY AUTO_INCREMENT, v INT");
            try (PreparedStatement p = c.prepareStatement("INSERT INTO jg (v) VALUES (?),(?)", Statement.RETURN_GENERATED_KEYS)) {
                p.setInt(1, 1); p.setInt(2, 2); p.executeUpdate();
                List<Long> keys = new ArrayList<>();
                try (ResultSet rs = p.getGeneratedKeys()) { while (rs.next()) keys.add(rs.getLong(1)); }
                eq(List.of(1L, 2L), keys);
            }
        });
        CHECKS.put("multi_queries", c -> {
            try (Statement s = c.createStatement()) {
                ok(s.execute("SELECT 1; SELECT 2; DO 0; SELECT 3"), "first is a result set");
                List<Object> got = new ArrayList<>();
                do {
                    ResultSet rs = s.getResultSet();
                    if (rs != null) { rs.next(); got.add(rs.getInt(1)); } else got.add("count:" + s.getUpdateCount());
                } while (s.getMoreResults() || s.getUpdateCount() != -1);
                eq(List.of(1, 2, "count:0", 3), got);
            }
        });
        CHECKS.put("transactions_savepoint", c -> {
            table(c, "jx", "id INT PRIMARY KEY");
            c.setAutoCommit(false);
            try (Statement s = c.createStatement()) {
                s.execute("INSERT INTO jx VALUES (1)");
                Savepoint sp = c.setSavepoint("sp1");
                s.execute("INSERT INTO jx VALUES (2)");
                c.rollback(sp);
                c.commit();
                s.execute("INSERT INTO jx VALUES (3)");
                c.rollback();
            } finally { c.setAutoCommit(true); }
            eq(1L, ((Number) one(c, "SELECT COUNT(*) FROM jx")).longValue());
        });
        CHECKS.put("isolation_and_readonly", c -> {
            c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
            eq(Connection.TRANSACTION_READ_COMMITTED, c.getTransactionIsolation());
            c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
            c.setReadOnly(true); c.setReadOnly(false);
            c.setCatalog("compat"); eq("compat", c.getCatalog());
        });
        CHECKS.put("cursor_fetch_size", c -> {
            table(c, "jc", "id INT PRIMARY KEY, pad VARCHAR(50)");
            try (Statement s = c.createStatement()) {
                StringBuilder sb = new StringBuilder("INSERT INTO jc VALUES ");
                for (int i = 0; i < 1000; i++) sb.append(i == 0 ? "" : ",").append("(").append(i).append(",'pad')");
                s.execute(sb.toString());
            }
            try (PreparedStatement p = c.prepareStatement("SELECT id FROM jc WHERE id >= ? ORDER BY id")) {
                p.setFetchSize(50); p.setInt(1, 0);
                int n = 0;
                try (ResultSet rs = p.executeQuery()) { while (rs.next()) { eq(n, rs.getInt(1)); n++; } }
                eq(1000, n);
            }
        });
        CHECKS.put("streaming_result", c -> {
            try (Statement s = c.createStatement(ResultSet.TYPE_FORWARD_ONLY, ResultSet.CONCUR_READ_ONLY)) {
                s.setFetchSize(Integer.MIN_VALUE);
                int n = 0;
                try (ResultSet rs = s.executeQuery("SELECT id FROM jc ORDER BY id")) { while (rs.next()) n++; }
                eq(1000, n);
            }
        });
        CHECKS.put("errors_sqlstate", c -> {
            table(c, "je", "id INT PRIMARY KEY");
            try (Statement s = c.createStatement()) {
                s.execute("INSERT INTO je VALUES (1)");
                try { s.execute("INSERT INTO je VALUES (1)"); throw new AssertionError("no error"); }
                catch (SQLIntegrityConstraintViolationException e) { eq(1062, e.getErrorCode()); eq("23000", e.getSQLState()); }
                try { s.execute("SELEC 1"); throw new AssertionError("no error"); }
                catch (SQLSyntaxErrorException e) { eq(1064, e.getErrorCode()); eq("42000", e.getSQLState()); }
            }
        });
        CHECKS.put("warnings", c -> {
            try (Statement s = c.createStatement()) {
                s.executeQuery("SELECT 1/0").close();
                SQLWarning w = s.getWarnings();
                ok(w != null, "no warning");
                eq(1365, w.getErrorCode());
            }
        });
        CHECKS.put("query_timeout", c -> {
            try (Statement s = c.createStatement()) {
                s.setQueryTimeout(1);
                long t0 = System.nanoTime();
                try { s.executeQuery("SELECT SLEEP(10)").close(); }
                catch (SQLTimeoutException e) { /* expected with MySQL 8 */ }
                ok(System.nanoTime() - t0 < 8_000_000_000L, "query not cut off");
            }
            eq(1L, ((Number) one(c, "SELECT 1")).longValue());
        });
        CHECKS.put("large_blob", c -> {
            table(c, "jl", "b LONGBLOB");
            byte[] big = new byte[17 * 1024 * 1024];
            Arrays.fill(big, (byte) 7);
            try (PreparedStatement p = c.prepareStatement("INSERT INTO jl VALUES (?)")) { p.setBytes(1, big); p.executeUpdate(); }
            try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT b FROM jl")) {
                ok(rs.next(), "row"); ok(Arrays.equals(big, rs.getBytes(1)), "blob differs");
            }
        });
        CHECKS.put("load_data_local", c -> {
            table(c, "jld", "id INT, s VARCHAR(5)");
            try (Statement s = c.createStatement()) {
                s.unwrap(com.mysql.cj.jdbc.JdbcStatement.class).setLocalInfileInputStream(
                    new ByteArrayInputStream("1,a\n2,b\n".getBytes(StandardCharsets.UTF_8)));
                eq(2, s.executeUpdate("LOAD DATA LOCAL INFILE 'x.csv' INTO TABLE jld FIELDS TERMINATED BY ','"));
            }
        });
        CHECKS.put("callable_statement", c -> {
            try (Statement s = c.createStatement()) {
                s.execute("DROP PROCEDURE IF EXISTS jproc");
                s.execute("CREATE PROCEDURE jproc(IN a INT, OUT b INT) BEGIN SET b = a * 2; END");
            }
            try (CallableStatement cs = c.prepareCall("{call jproc(?, ?)}")) {
                cs.setInt(1, 21); cs.registerOutParameter(2, Types.INTEGER); cs.execute();
                eq(42, cs.getInt(2));
            }
        });
        CHECKS.put("updatable_resultset", c -> {
            table(c, "ju", "id INT PRIMARY KEY, v INT");
            try (Statement s = c.createStatement(ResultSet.TYPE_SCROLL_INSENSITIVE, ResultSet.CONCUR_UPDATABLE)) {
                s.execute("INSERT INTO ju VALUES (1, 1)");
                try (ResultSet rs = s.executeQuery("SELECT id, v FROM ju")) { rs.next(); rs.updateInt(2, 5); rs.updateRow(); }
            }
            eq(5, ((Number) one(c, "SELECT v FROM ju")).intValue());
        });
    }

    // URL variants: client-side prepares (the driver default), server-side
    // prepares with cursor fetch, and the compressed protocol.
    static final Map<String, String> VARIANTS = new LinkedHashMap<>();
    static {
        VARIANTS.put("clientprep", "");
        VARIANTS.put("serverprep", "&useServerPrepStmts=true&useCursorFetch=true&cachePrepStmts=true");
        VARIANTS.put("compress", "&useCompression=true&rewriteBatchedStatements=true");
    }

    public static void main(String[] args) throws Exception {
        define();
        int limit = Integer.parseInt(System.getenv().getOrDefault("LOCKSTEP_COMPAT_TEST_TIMEOUT", "60"));
        String base = "jdbc:mysql://" + args[0] + ":" + args[1] + "/compat?user=root&password=&sslMode=DISABLED"
            + "&allowPublicKeyRetrieval=true&allowMultiQueries=true&allowLoadLocalInfile=true"
            + "&connectTimeout=10000&socketTimeout=" + (limit * 1000);
        ExecutorService pool = Executors.newCachedThreadPool(r -> { Thread t = new Thread(r); t.setDaemon(true); return t; });
        for (Map.Entry<String, String> v : VARIANTS.entrySet()) {
            for (Map.Entry<String, Check> e : CHECKS.entrySet()) {
                String name = v.getKey() + "/" + e.getKey();
                Future<?> f = pool.submit(() -> {
                    try (Connection c = DriverManager.getConnection(base + v.getValue())) { e.getValue().run(c); }
                    return null;
                });
                try {
                    f.get(limit, TimeUnit.SECONDS);
                    System.out.println("COMPAT pass " + name);
                } catch (TimeoutException te) {
                    f.cancel(true);
                    System.out.println("COMPAT fail " + name + " hang: test ran longer than " + limit + "s");
                } catch (ExecutionException ee) {
                    Throwable t = ee.getCause();
                    String code = t instanceof SQLException ? " [" + ((SQLException) t).getErrorCode() + "]" : "";
                    String msg = (t.getClass().getSimpleName() + code + ": " + t.getMessage()).replaceAll("\\s+", " ");
                    System.out.println("COMPAT fail " + name + " " + msg.substring(0, Math.min(400, msg.length())));
                }
            }
        }
        System.exit(0);
    }
}
