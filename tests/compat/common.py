"""Shared pieces of the driver compatibility harness.

A suite module exposes NAME, VERSION, QUICK (bool), prepare(cache) and
run(server, cache, outdir) -> (results, command). `results` maps a test name
to (status, message), status one of pass/fail/skip.
"""

import os
import shutil
import subprocess
import sys
import tarfile
import time
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests"))

import lockstep_server  # noqa: E402  (needs the sys.path line above)

CACHE = os.environ.get("LOCKSTEP_COMPAT_CACHE",
                       os.path.join(os.path.expanduser("~"), ".cache", "lockstep-compat"))
# One test may take this long before it counts as hung (a failure).
TEST_TIMEOUT = int(os.environ.get("LOCKSTEP_COMPAT_TEST_TIMEOUT", "60"))
# A whole suite against one server.
SUITE_TIMEOUT = int(os.environ.get("LOCKSTEP_COMPAT_SUITE_TIMEOUT", "1200"))
# Databases the suites expect to exist.
DATABASES = ("gotest", "test", "test1", "test2", "myconnpy", "compat")


def log(msg):
    print(f"[compat {time.strftime('%H:%M:%S')}] {msg}", flush=True)


def run(cmd, timeout, cwd=None, env=None, out=None, stderr_to=None):
    """Run cmd with a hard timeout; kill its whole process group on expiry.

    Returns (returncode or None on timeout, output text). stderr is merged
    into it unless stderr_to names a file (keeps machine-read output clean)."""
    log("$ " + " ".join(cmd))
    err = open(stderr_to, "wb") if stderr_to else subprocess.STDOUT
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=err,
                            start_new_session=True)
    if stderr_to:
        err.close()
    try:
        data, _ = proc.communicate(timeout=timeout)
        code = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        data, _ = proc.communicate(timeout=30)
        code = None
    text = data.decode(errors="replace")
    if out:
        with open(out, "w") as f:
            f.write(text)
    return code, text


def must(cmd, timeout=600, **kw):
    """Run a preparation step; raise with its output if it fails."""
    code, text = run(cmd, timeout, **kw)
    if code != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({code}):\n{text[-3000:]}")
    return text


def extract(archive, dest):
    """Unpack a .tar.gz/.tgz/.zip into dest (once; dest marks completion)."""
    if os.path.isdir(dest):
        return dest
    tmp = dest + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    if archive.endswith(".zip"):
        with zipfile.ZipFile(archive) as z:
            z.extractall(tmp)
    else:
        with tarfile.open(archive) as t:
            t.extractall(tmp, filter="data")
    os.rename(tmp, dest)
    return dest


def only_child(path):
    """The single directory an sdist unpacks into."""
    (name,) = os.listdir(path)
    return os.path.join(path, name)


class Target:
    """A started server (lockstep or mariadb) with the suites' databases."""

    def __init__(self, kind, workdir):
        shutil.rmtree(workdir, ignore_errors=True)
        self.kind = kind
        # MariaDB's 16 MiB default would fail the suites' 17 MiB packet tests.
        args = ["--max-allowed-packet", str(64 << 20)] if kind == "mariadb" else []
        self.server = lockstep_server.Server(workdir, target=kind, name=kind, args=args)
        self.server.start()
        self.port = self.server.port
        self.host = lockstep_server.HOST
        conn = self.server.connect()
        with conn.cursor() as cur:
            for db in DATABASES:
                cur.execute(f"CREATE DATABASE IF NOT EXISTS {db}")
            # The drivers' own CI runs MySQL with --local-infile (MySQL 8's
            # default is OFF; MariaDB's is ON): their LOAD DATA LOCAL tests
            # expect it.
            cur.execute("SET GLOBAL local_infile = 1")
        conn.close()

    def alive(self):
        return self.server.running()

    def exit_code(self):
        return None if self.server.proc is None else self.server.proc.poll()

    def log_tail(self):
        return self.server.log_tail(6000)

    def stop(self):
        self.server.cleanup()


def env_with(**extra):
    env = dict(os.environ)
    env.update({k: str(v) for k, v in extra.items()})
    return env


def parse_marked_lines(text, marker="COMPAT"):
    """Results from our own check programs: lines `COMPAT <status> <name> <message>`."""
    results = {}
    for line in text.splitlines():
        parts = line.split(" ", 3)
        if len(parts) >= 3 and parts[0] == marker and parts[1] in ("pass", "fail", "skip"):
            results[parts[2]] = (parts[1], parts[3] if len(parts) > 3 else "")
    return results


def hung_result(text, code):
    """A pseudo-test recording that a whole run was cut off or crashed."""
    if code is None:
        return {"(run)": ("fail", "suite timed out (hang) after "
                          f"{SUITE_TIMEOUT}s; output tail: {text[-300:]!r}")}
    return {}
