"""Start, stop, kill and talk to the server under test.

The same tests run against two targets, chosen by LOCKSTEP_TARGET:

* ``lockstep`` (default): ``target/release/lockstep serve --port P --datadir D``
  (override the binary with LOCKSTEP_BIN). Nothing is built here.
* ``mariadb``: a private ``mariadbd`` in a temporary datadir, on its own port
  and socket, root with an empty password over TCP. Used to validate the
  suite against a reference server.

Every interaction is bounded: process waits, socket timeouts and subprocess
calls all carry a timeout. All traffic goes to 127.0.0.1.
"""

import os
import shutil
import signal
import socket
import subprocess
import time

import pymysql

HOST = "127.0.0.1"
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.environ.get("LOCKSTEP_TARGET", "lockstep")
# lockstep's benchmark driver (crates/workload), built by scripts/test.sh.
BENCH = os.environ.get("LOCKSTEP_WORKLOAD_BIN",
                       os.path.join(REPO, "target", "release", "lockstep-workload"))
# QUICK (default, used by CI) or FULL.
SUITE = os.environ.get("LOCKSTEP_SUITE", "quick").lower()
QUICK = SUITE != "full"

START_TIMEOUT = float(os.environ.get("LOCKSTEP_START_TIMEOUT", "120"))
STOP_TIMEOUT = float(os.environ.get("LOCKSTEP_STOP_TIMEOUT", "60"))


def code_of(fn):
    """Run fn; return None if it succeeded, else the MySQL error code."""
    try:
        fn()
        return None
    except pymysql.err.MySQLError as e:
        return e.args[0]


def free_port():
    """A TCP port on 127.0.0.1 that nothing listens on right now; from
    LOCKSTEP_PORT_RANGE (or LOCKSTEP_PORTS), "LOW-HIGH", when set, so that runs sharing a machine
    stay inside their own ports."""
    span = os.environ.get("LOCKSTEP_PORT_RANGE") or os.environ.get("LOCKSTEP_PORTS")
    candidates = [0]
    if span:
        low, high = (int(x) for x in span.split("-"))
        candidates = list(range(low, high + 1))
    for port in candidates:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind((HOST, port))
            except OSError:
                continue
            return s.getsockname()[1]
    raise OSError(f"no free port in LOCKSTEP_PORT_RANGE={span}")


def lockstep_binary():
    return os.environ.get("LOCKSTEP_BIN", os.path.join(REPO, "target", "release", "lockstep"))


class ServerError(RuntimeError):
    pass


class Server:
    """One server process on a fixed port and datadir, restartable in place."""

    def __init__(self, workdir, target=TARGET, name="node", args=(), extra_args=(),
                 connect_kw=None):
        self.target = target
        # Extra server flags, lockstep spelling (`--max-connections 20`);
        # for MariaDB each `--flag value` pair becomes `--flag=value`.
        self.args = list(args)
        # More `lockstep serve` flags (lockstep only; a test may set them
        # before a restart), and PyMySQL options for the root connections
        # (e.g. ssl when plain text is refused).
        self.extra_args = list(extra_args)
        self.connect_kw = dict(connect_kw or {})
        self.workdir = os.path.abspath(workdir)
        self.name = name
        self.datadir = os.path.join(self.workdir, "data")
        self.port = free_port()
        self.proc = None
        self.log_path = os.path.join(self.workdir, "server.log")
        self._log = None
        self.starts = 0
        if target not in ("lockstep", "mariadb"):
            raise ServerError(f"LOCKSTEP_TARGET must be lockstep or mariadb, not {target!r}")
        os.makedirs(self.workdir, exist_ok=True)

    # ---- process control -------------------------------------------------

    def _command(self):
        if self.target == "lockstep":
            binary = lockstep_binary()
            if not os.access(binary, os.X_OK):
                raise ServerError(
                    f"{binary} not found or not executable: build it with "
                    "`cargo build --release -p lockstep-server` (or set LOCKSTEP_BIN, "
                    "or LOCKSTEP_TARGET=mariadb to test against MariaDB)")
            return [binary, "serve", "--port", str(self.port), "--datadir",
                    self.datadir] + self.args + self.extra_args
        return self._mariadb_command() + [
            f"{a}={b}" for a, b in zip(self.args[::2], self.args[1::2])]

    def _mariadb_command(self):
        return [
            "mariadbd", "--no-defaults",
            f"--datadir={self.datadir}",
            f"--port={self.port}",
            "--bind-address=127.0.0.1",
            f"--socket={os.path.join(self.workdir, 'mysqld.sock')}",
            f"--pid-file={os.path.join(self.workdir, 'mysqld.pid')}",
            "--user=root",
            "--skip-name-resolve",
            "--innodb-flush-log-at-trx-commit=1",
            "--innodb-buffer-pool-size=256M",
            "--max-connections=1100",
            "--character-set-server=utf8mb4",
            "--collation-server=utf8mb4_general_ci",
            "--performance-schema=OFF",
            "--skip-log-bin",
            "--log-error=",  # stderr, captured in server.log
        ]

    def _init_mariadb_datadir(self):
        if os.path.isdir(os.path.join(self.datadir, "mysql")):
            return
        os.makedirs(self.datadir, exist_ok=True)
        with open(os.path.join(self.workdir, "install-db.log"), "wb") as log:
            r = subprocess.run(
                ["mariadb-install-db", "--no-defaults", f"--datadir={self.datadir}",
                 "--user=root", "--auth-root-authentication-method=normal",
                 "--skip-test-db", "--skip-name-resolve"],
                stdout=log, stderr=subprocess.STDOUT, timeout=120)
        if r.returncode != 0:
            raise ServerError(f"mariadb-install-db failed, see {log.name}")

    def start(self, timeout=START_TIMEOUT):
        """Start the server and wait until it answers a MySQL handshake."""
        if self.running():
            raise ServerError("server already running")
        if self.target == "mariadb":
            self._init_mariadb_datadir()
        cmd = self._command()
        self._log = open(self.log_path, "ab")
        self._log.write(f"\n==== start #{self.starts + 1}: {' '.join(cmd)}\n".encode())
        self._log.flush()
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=self._log,
                                     stderr=subprocess.STDOUT, cwd=self.workdir,
                                     start_new_session=True)
        self.starts += 1
        self.wait_ready(timeout)

    def wait_ready(self, timeout=START_TIMEOUT):
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise ServerError(
                    f"server exited with {self.proc.returncode} during start-up\n{self.log_tail()}")
            try:
                conn = self.connect(connect_timeout=2, read_timeout=5)
                conn.ping(reconnect=False)
                conn.close()
                return
            except pymysql.err.MySQLError as e:
                last = e
            time.sleep(0.1)
        self.kill()
        raise ServerError(f"server not ready after {timeout}s (last error: {last})\n{self.log_tail()}")

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self, timeout=STOP_TIMEOUT):
        """SIGTERM and wait for exit; returns the exit code (None if not running)."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(30)
                self._close_log()
                raise ServerError(f"server did not exit within {timeout}s of SIGTERM")
        self._close_log()
        return self.proc.returncode

    def kill(self):
        """SIGKILL (a crash, as kill -9) and reap the process."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(30)
        self._close_log()

    def restart(self, crash=False):
        if crash:
            self.kill()
        else:
            self.stop()
        self.start()

    def cleanup(self):
        """Stop for good (SIGTERM, then SIGKILL if needed). Never raises."""
        try:
            self.stop(timeout=30)
        except Exception:
            self.kill()

    def _close_log(self):
        if self._log is not None:
            self._log.close()
            self._log = None

    def log_since_start(self):
        """The server log written since the latest start (or start attempt)."""
        try:
            with open(self.log_path, "rb") as f:
                text = f.read().decode(errors="replace")
        except OSError:
            return ""
        return text[text.rfind("\n==== start #"):]

    def log_tail(self, nbytes=4000):
        try:
            with open(self.log_path, "rb") as f:
                f.seek(0, os.SEEK_END)
                f.seek(max(0, f.tell() - nbytes))
                return "---- server log tail ----\n" + f.read().decode(errors="replace")
        except OSError:
            return "(no server log)"

    # ---- clients ---------------------------------------------------------

    def connect(self, db=None, autocommit=True, connect_timeout=10, read_timeout=60,
                write_timeout=60, **kw):
        """A PyMySQL connection, as root with an empty password unless
        `user`/`password` are given."""
        kw = {**self.connect_kw, **kw}
        kw.setdefault("user", "root")
        kw.setdefault("password", "")
        return pymysql.connect(host=HOST, port=self.port,
                               database=db, autocommit=autocommit,
                               connect_timeout=connect_timeout, read_timeout=read_timeout,
                               write_timeout=write_timeout, charset="utf8mb4", **kw)

    def cli_args(self):
        """argv prefix for the `mariadb` client connected to this server."""
        return ["mariadb", "--no-defaults", f"-h{HOST}", f"-P{self.port}", "-uroot",
                "--protocol=TCP", "--connect-timeout=10"]

    def cli(self, sql, db=None, args=(), timeout=60):
        """Run the `mariadb` command-line client with `sql` on stdin.

        Returns the CompletedProcess (text stdout/stderr, returncode)."""
        cmd = self.cli_args() + list(args)
        if db:
            cmd.append(db)
        return subprocess.run(cmd, input=sql, capture_output=True, text=True, timeout=timeout)

    def sql(self, statement, db=None, **kw):
        """Run one statement on a fresh connection (connect's options, e.g.
        user and password); return all rows."""
        conn = self.connect(db=db, **kw)
        try:
            with conn.cursor() as cur:
                cur.execute(statement)
                return cur.fetchall()
        finally:
            conn.close()


def rmtree(path):
    shutil.rmtree(path, ignore_errors=True)


def thread_files(pid, name):
    """(thread name, contents of /proc/PID/task/TID/NAME) for each thread of
    the process; threads that end meanwhile are skipped."""
    out = []
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                comm = f.read().strip()
            with open(f"/proc/{pid}/task/{tid}/{name}") as f:
                out.append((comm, f.read()))
        except FileNotFoundError:
            continue
    return out


def require_bench():
    """Fails the test (not the run) when the driver has not been built."""
    import pytest
    if not os.access(BENCH, os.X_OK):
        pytest.fail(f"{BENCH} not found: build it with `cargo build --release -p lockstep-workload` "
                    "(or set LOCKSTEP_WORKLOAD_BIN)", pytrace=False)
