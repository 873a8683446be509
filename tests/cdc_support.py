"""Shared by the CDC tests (test_binlog_types, test_cdc_go,
test_mariadb_replica, the Java ones): a module-scoped lockstep node,
the jars and classes of a Java CDC tool, and MariaDB's
character sets with MySQL 8's default collation.

MariaDB 10.11's tools know no collation id 255 (utf8mb4_0900_ai_ci,
MySQL 8's default, which lockstep reports in its binlog events), and stop
at the first event that names it, as they do with a real MySQL 8 source.
MariaDB can load a user-defined UCA collation from a character-sets
directory: this one adds id 255 under that name, for mariadb-binlog
--character-sets-dir and mariadbd --character-sets-dir."""

import os
import shutil
import subprocess

import pytest

from lockstep_server import TARGET, Server, free_port

# The Java CDC tools' tests: lockstep's stream, Maven and a JDK.
JAVA_TOOL = [
    pytest.mark.skipif(TARGET != "lockstep", reason="lockstep's stream"),
    pytest.mark.skipif(not (shutil.which("mvn") and shutil.which("javac")),
                       reason="no Maven or JDK"),
]

SYSTEM = "/usr/share/mysql/charsets"

# A UCA collation needs at least one rule; this one changes nothing.
COLLATION_255 = """<charset name="utf8mb4">
  <collation name="utf8mb4_0900_ai_ci" id="255">
    <rules>
      <reset>\\u0041</reset>
      <i>\\u0041</i>
    </rules>
  </collation>
</charset>

</charsets>"""


def charsets_dir(dest):
    """A copy of MariaDB's character-sets directory with id 255 added,
    at `dest`; None when MariaDB's own is not installed."""
    index = os.path.join(SYSTEM, "Index.xml")
    if not os.path.exists(index):
        return None
    shutil.copytree(SYSTEM, dest, dirs_exist_ok=True)
    with open(index) as f:
        text = f.read()
    end = text.rindex("</charsets>")
    with open(os.path.join(dest, "Index.xml"), "w") as f:
        f.write(text[:end] + COLLATION_255 + text[end + len("</charsets>"):])
    return dest


def node_fixture(name):
    """A module-scoped fixture: one lockstep server named `name`."""
    @pytest.fixture(scope="module")
    def node(tmp_path_factory):
        s = Server(tmp_path_factory.mktemp(name), name=name)
        s.port = free_port()
        s.start()
        yield s
        s.cleanup()
    return node


def maven_classpath(out, src, sources, what):
    """Fetches the jars `src`/pom.xml names into `out`/lib (Maven, at test
    time: nothing is vendored; the test is skipped when they cannot be
    fetched), compiles `sources` (paths under `src`) into `out`/classes,
    and returns the classpath of both."""
    lib, classes = out / "lib", out / "classes"
    r = subprocess.run(["mvn", "-q", "-B", "-f", os.path.join(src, "pom.xml"),
                        "dependency:copy-dependencies", f"-DoutputDirectory={lib}"],
                       capture_output=True, text=True, timeout=900)
    if r.returncode != 0:
        pytest.skip(f"{what}'s jars could not be fetched: {(r.stdout + r.stderr)[-500:]}")
    cp = f"{lib}/*"
    r = subprocess.run(["javac", "-cp", cp, "-d", str(classes),
                        *[os.path.join(src, f) for f in sources]],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    return f"{classes}:{cp}"
