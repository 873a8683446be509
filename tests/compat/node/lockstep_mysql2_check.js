// lockstep's own check program for the node mysql2 driver (ours, not the
// driver's: mysql2's npm tarball ships no tests). One line per test:
//   COMPAT pass|fail|skip <name> <message>
// Usage: node lockstep_mysql2_check.js HOST PORT [compress]
'use strict';
const assert = require('node:assert/strict');
const mysql = require('mysql2/promise');

const [host, port, mode] = [process.argv[2], Number(process.argv[3]), process.argv[4]];
const LIMIT_MS = Number(process.env.LOCKSTEP_COMPAT_TEST_TIMEOUT || 60) * 1000;
const base = { host, port, user: 'root', password: '', database: 'compat',
  compress: mode === 'compress', connectTimeout: 10000 };
const tests = [];
const test = (name, fn) => tests.push([name, fn]);
const connect = (extra = {}) => mysql.createConnection({ ...base, ...extra });

async function withConn(extra, fn) {
  const c = await connect(extra);
  try { return await fn(c); } finally { await c.end().catch(() => c.destroy()); }
}

async function table(c, name, cols) {
  await c.query(`DROP TABLE IF EXISTS ${name}`);
  await c.query(`CREATE TABLE ${name} (${cols})`);
}

test('connect_ping', () => withConn({}, async (c) => { await c.ping(); }));

test('server_version', () => withConn({}, async (c) => {
  const [rows] = await c.query('SELECT VERSION() AS v');
  assert.match(rows[0].v, /^\d+\.\d+\.\d+/);
}));

test('select_literals', () => withConn({}, async (c) => {
  const [rows] = await c.query("SELECT 1 AS a, 'x' AS b, NULL AS c, 1.5 AS d");
  assert.deepEqual(rows[0], { a: 1, b: 'x', c: null, d: '1.5' });
}));

test('field_metadata', () => withConn({}, async (c) => {
  await table(c, 'm1', 'id INT PRIMARY KEY AUTO_INCREMENT, name VARCHAR(20) NOT NULL, amt DECIMAL(10,2)');
  const [, fields] = await c.query('SELECT id, name AS n, amt FROM m1');
  assert.deepEqual(fields.map((f) => f.name), ['id', 'n', 'amt']);
  assert.equal(fields[1].orgName, 'name');
  assert.equal(fields[0].table, 'm1');
  assert.equal(fields[0].schema, 'compat');
  assert.equal(fields[0].columnType, 3); // LONG
  assert.equal(fields[2].columnType, 246); // NEWDECIMAL
  assert.equal(fields[2].decimals, 2);
  assert.ok(fields[0].flags & 2, 'PRI_KEY flag'); // PRI_KEY_FLAG
  assert.ok(fields[1].flags & 1, 'NOT_NULL flag');
}));

test('insert_result_ids', () => withConn({}, async (c) => {
  await table(c, 'ids', 'id INT PRIMARY KEY AUTO_INCREMENT, v INT');
  const [r] = await c.query('INSERT INTO ids (v) VALUES (1),(2),(3)');
  assert.equal(r.affectedRows, 3);
  assert.equal(r.insertId, 1);
  const [u] = await c.query('UPDATE ids SET v = 9 WHERE id > 1');
  assert.equal(u.affectedRows, 2);
  assert.equal(u.changedRows, 2);
}));

test('client_side_placeholders', () => withConn({}, async (c) => {
  const [rows] = await c.query('SELECT ? AS a, ? AS b, ? AS c', [42, "it's", null]);
  assert.deepEqual(rows[0], { a: 42, b: "it's", c: null });
}));

test('server_prepared_execute', () => withConn({}, async (c) => {
  await table(c, 'ps', 'id INT PRIMARY KEY, s VARCHAR(10), d DOUBLE');
  for (let i = 0; i < 5; i++) await c.execute('INSERT INTO ps VALUES (?, ?, ?)', [i, `s${i}`, i / 2]);
  const [rows] = await c.execute('SELECT id, s, d FROM ps WHERE id >= ? ORDER BY id', [3]);
  assert.deepEqual(rows, [{ id: 3, s: 's3', d: 1.5 }, { id: 4, s: 's4', d: 2 }]);
}));

test('server_prepare_metadata', () => withConn({}, async (c) => {
  const st = await c.prepare('SELECT ? + 1 AS x, ? AS y');
  const info = st.statement; // the promise wrapper's underlying PreparedStatementInfo
  assert.equal(info.parameters.length, 2);
  assert.equal(info.columns.length, 2);
  const [rows] = await st.execute([1, 'z']);
  assert.equal(Number(rows[0].x), 2);
  assert.equal(rows[0].y, 'z');
  await st.close();
}));

test('prepared_null_and_types', () => withConn({}, async (c) => {
  await table(c, 'pt', 'a BIGINT, b DATETIME(3), c BLOB, d DECIMAL(20,4)');
  await c.execute('INSERT INTO pt VALUES (?, ?, ?, ?)',
    [9007199254740991, new Date(Date.UTC(2024, 0, 2, 3, 4, 5, 678)), Buffer.from([0, 1, 255]), '12.3456']);
  await c.execute('INSERT INTO pt VALUES (?, ?, ?, ?)', [null, null, null, null]);
  const [rows] = await c.execute('SELECT * FROM pt ORDER BY a IS NULL');
  assert.equal(rows[0].a, 9007199254740991);
  assert.deepEqual(rows[0].c, Buffer.from([0, 1, 255]));
  assert.equal(rows[0].d, '12.3456');
  assert.equal(rows[1].a, null);
}));

test('text_protocol_types', () => withConn({ dateStrings: true, supportBigNumbers: true, bigNumberStrings: true }, async (c) => {
  await table(c, 'tt', `i TINYINT, u INT UNSIGNED, b BIGINT, f FLOAT, d DOUBLE, dc DECIMAL(30,10),
    dt DATE, ts DATETIME(6), tm TIME, y YEAR, ch CHAR(3), vb VARBINARY(4), e ENUM('x','y'), st SET('p','q'),
    j JSON, bt BIT(8)`);
  await c.query(`INSERT INTO tt VALUES (-128, 4294967295, -9223372036854775808, 1.5, 2.25,
    '12345678901234567890.0123456789', '2024-02-29', '2024-02-29 23:59:59.123456', '-838:59:59', 2155,
    'abc', x'00ff', 'y', 'p,q', '{"k": [1, 2]}', b'10100101')`);
  const [[r]] = await c.query('SELECT * FROM tt');
  assert.equal(r.i, -128);
  assert.equal(r.u, 4294967295);
  assert.equal(r.b, '-9223372036854775808');
  assert.equal(r.f, 1.5);
  assert.equal(r.dc, '12345678901234567890.0123456789');
  assert.equal(r.dt, '2024-02-29');
  assert.equal(r.ts, '2024-02-29 23:59:59.123456');
  assert.equal(r.tm, '-838:59:59');
  assert.equal(r.y, 2155);
  assert.deepEqual(r.vb, Buffer.from([0, 255]));
  assert.equal(r.e, 'y');
  assert.equal(r.st, 'p,q');
  assert.deepEqual(r.j, { k: [1, 2] });
  assert.deepEqual(r.bt, Buffer.from([0xa5]));
}));

test('binary_protocol_types', () => withConn({ dateStrings: true, supportBigNumbers: true, bigNumberStrings: true }, async (c) => {
  const [[r]] = await c.execute(`SELECT CAST(-5 AS SIGNED) AS i, CAST(18446744073709551615 AS UNSIGNED) AS u,
    CAST('2024-01-02 03:04:05.5' AS DATETIME(1)) AS dt, CAST('12:34:56' AS TIME) AS tm,
    CAST(1.25 AS DECIMAL(5,2)) AS dc, 'str' AS s, X'0102' AS bin`);
  assert.equal(String(r.i), '-5');
  assert.equal(String(r.u), '18446744073709551615');
  assert.equal(r.dt, '2024-01-02 03:04:05.5');
  assert.equal(r.tm, '12:34:56');
  assert.equal(r.dc, '1.25');
  assert.equal(r.s, 'str');
  assert.deepEqual(r.bin, Buffer.from([1, 2]));
}));

test('unicode_utf8mb4', () => withConn({ charset: 'utf8mb4' }, async (c) => {
  await table(c, 'uni', 's VARCHAR(20)');
  await c.execute('INSERT INTO uni VALUES (?)', ['żółw 🐢 中']);
  const [[r]] = await c.query('SELECT s, CHAR_LENGTH(s) AS n FROM uni');
  assert.equal(r.s, 'żółw 🐢 中');
  assert.equal(r.n, 8);
}));

test('streaming_cursor', () => withConn({}, async (c) => {
  await table(c, 'big', 'id INT PRIMARY KEY, pad VARCHAR(100)');
  const values = Array.from({ length: 2000 }, (_, i) => [i, 'x'.repeat(100)]);
  await c.query('INSERT INTO big VALUES ?', [values]);
  let n = 0;
  const stream = c.connection.query('SELECT * FROM big ORDER BY id').stream();
  for await (const row of stream) { assert.equal(row.id, n); n++; }
  assert.equal(n, 2000);
}));

test('bulk_values_batch', () => withConn({}, async (c) => {
  await table(c, 'bulk', 'a INT, b VARCHAR(5)');
  const [r] = await c.query('INSERT INTO bulk (a, b) VALUES ?', [[[1, 'a'], [2, 'b'], [3, null]]]);
  assert.equal(r.affectedRows, 3);
  const [[cnt]] = await c.query('SELECT COUNT(*) AS n, COUNT(b) AS nb FROM bulk');
  assert.deepEqual([cnt.n, cnt.nb], [3, 2]);
}));

test('multi_statements', () => withConn({ multipleStatements: true }, async (c) => {
  const [results] = await c.query('SELECT 1 AS a; SELECT 2 AS b; DO 0; SELECT 3 AS c');
  assert.equal(results.length, 4);
  assert.deepEqual(results[0], [{ a: 1 }]);
  assert.deepEqual(results[1], [{ b: 2 }]);
  assert.deepEqual(results[3], [{ c: 3 }]);
}));

test('multi_statement_error_midway', () => withConn({ multipleStatements: true }, async (c) => {
  await assert.rejects(c.query('SELECT 1; SELECT * FROM no_such_table; SELECT 3'), (e) => e.errno === 1146);
  const [[r]] = await c.query('SELECT 5 AS x');
  assert.equal(r.x, 5);
}));

test('transaction_commit_rollback', () => withConn({}, async (c) => {
  await table(c, 'tx', 'id INT PRIMARY KEY');
  await c.beginTransaction();
  await c.query('INSERT INTO tx VALUES (1)');
  await c.rollback();
  await c.beginTransaction();
  await c.query('INSERT INTO tx VALUES (2)');
  await c.commit();
  const [rows] = await c.query('SELECT id FROM tx');
  assert.deepEqual(rows, [{ id: 2 }]);
}));

test('transaction_isolation_visibility', () => withConn({}, async (a) => withConn({}, async (b) => {
  await table(a, 'iso', 'id INT PRIMARY KEY, v INT');
  await a.query('INSERT INTO iso VALUES (1, 1)');
  await b.query('SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ');
  await b.beginTransaction();
  const [[r1]] = await b.query('SELECT v FROM iso WHERE id = 1');
  await a.query('UPDATE iso SET v = 2 WHERE id = 1');
  const [[r2]] = await b.query('SELECT v FROM iso WHERE id = 1');
  await b.commit();
  assert.equal(r1.v, 1);
  assert.equal(r2.v, 1);
})));

test('error_codes_sqlstate', () => withConn({}, async (c) => {
  await table(c, 'dup', 'id INT PRIMARY KEY');
  await c.query('INSERT INTO dup VALUES (1)');
  await assert.rejects(c.query('INSERT INTO dup VALUES (1)'),
    (e) => e.errno === 1062 && e.sqlState === '23000' && e.code === 'ER_DUP_ENTRY');
  await assert.rejects(c.query('SELEC 1'), (e) => e.errno === 1064 && e.sqlState === '42000');
}));

test('warnings_count', () => withConn({}, async (c) => {
  const [r] = await c.query('SELECT 1/0 AS x');
  assert.equal(r[0].x, null);
  const [w] = await c.query('SHOW WARNINGS');
  assert.ok(w.length >= 1 && Number(w[0].Code) === 1365, JSON.stringify(w));
}));

test('change_user', () => withConn({}, async (c) => {
  await c.query('SET @v = 7');
  await c.changeUser({ user: 'root', password: '', database: 'compat' });
  const [[r]] = await c.query('SELECT @v AS v, DATABASE() AS d');
  assert.equal(r.v, null);
  assert.equal(r.d, 'compat');
}));

test('use_database_and_init_db', () => withConn({ database: undefined }, async (c) => {
  await c.query('USE compat');
  const [[r]] = await c.query('SELECT DATABASE() AS d');
  assert.equal(r.d, 'compat');
}));

test('large_packet_16mb', () => withConn({}, async (c) => {
  await table(c, 'lp', 'b LONGBLOB');
  const big = Buffer.alloc(17 * 1024 * 1024, 7);
  await c.execute('INSERT INTO lp VALUES (?)', [big]);
  const [[r]] = await c.query('SELECT LENGTH(b) AS n, b FROM lp');
  assert.equal(r.n, big.length);
  assert.ok(r.b.equals(big));
}));

test('load_data_local_infile', () => withConn({
  infileStreamFactory: () => require('node:stream').Readable.from([Buffer.from('1,a\n2,b\n')]),
}, async (c) => {
  await table(c, 'ld', 'id INT, s VARCHAR(5)');
  const [r] = await c.query("LOAD DATA LOCAL INFILE 'x.csv' INTO TABLE ld FIELDS TERMINATED BY ','");
  assert.equal(r.affectedRows, 2);
}));

test('pool_parallel_queries', async () => {
  const pool = mysql.createPool({ ...base, connectionLimit: 4 });
  try {
    const out = await Promise.all(Array.from({ length: 20 }, (_, i) => pool.query('SELECT ? AS i', [i])));
    assert.deepEqual(out.map(([rows]) => rows[0].i), Array.from({ length: 20 }, (_, i) => i));
  } finally { await pool.end(); }
});

test('named_placeholders', () => withConn({ namedPlaceholders: true }, async (c) => {
  const [rows] = await c.execute('SELECT :a AS a, :b AS b, :a AS c', { a: 1, b: 'two' });
  assert.deepEqual(rows[0], { a: 1, b: 'two', c: 1 });
}));

test('rows_as_array', () => withConn({ rowsAsArray: true }, async (c) => {
  const [rows] = await c.query('SELECT 1 AS a, 2 AS a');
  assert.deepEqual(rows, [[1, 2]]);
}));

test('stored_procedure_results', () => withConn({}, async (c) => {
  await c.query('DROP PROCEDURE IF EXISTS p1');
  await c.query('CREATE PROCEDURE p1(IN x INT) BEGIN SELECT x AS v; SELECT x * 2 AS w; END');
  const [res] = await c.query('CALL p1(4)');
  assert.deepEqual(res[0], [{ v: 4 }]);
  assert.deepEqual(res[1], [{ w: 8 }]);
}));

test('session_track_and_status_flags', () => withConn({}, async (c) => {
  await c.query('SET autocommit = 0');
  const [[r]] = await c.query('SELECT @@autocommit AS a');
  assert.equal(Number(r.a), 0);
  await c.query('SET autocommit = 1');
}));

test('kill_query_other_connection', () => withConn({}, async (a) => withConn({}, async (b) => {
  const id = a.threadId;
  const slow = a.query('SELECT SLEEP(20)');
  await new Promise((res) => setTimeout(res, 300));
  await b.query(`KILL QUERY ${id}`);
  const [[r]] = await slow.catch((e) => [[{ err: e.errno }]]);
  assert.ok(r.err === 1317 || Number(Object.values(r)[0]) === 1, JSON.stringify(r));
})));

test('compress_roundtrip', async () => {
  if (mode !== 'compress') return 'skip: compression run only';
  await withConn({}, async (c) => {
    const [[r]] = await c.query("SELECT REPEAT('abc', 100000) AS s");
    assert.equal(r.s.length, 300000);
  });
});

function timeout(ms) {
  return new Promise((_, rej) => setTimeout(() => rej(new Error(`hang: test ran longer than ${ms / 1000}s`)), ms).unref());
}

// A driver error thrown outside the test's promise fails that test, not the run.
let failCurrent = () => {};
process.on('uncaughtException', (e) => failCurrent(e));
const uncaught = () => new Promise((_, rej) => { failCurrent = rej; });

(async () => {
  for (const [name, fn] of tests) {
    try {
      const r = await Promise.race([fn(), timeout(LIMIT_MS), uncaught()]);
      if (typeof r === 'string' && r.startsWith('skip')) console.log(`COMPAT skip ${name} ${r}`);
      else console.log(`COMPAT pass ${name}`);
    } catch (e) {
      const msg = `${e.code || ''} ${e.errno || ''} ${e.message}`.replace(/\s+/g, ' ').slice(0, 400);
      console.log(`COMPAT fail ${name} ${msg}`);
    }
  }
  process.exit(0);
})();
