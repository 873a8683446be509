"""MySQL Connector/J: our own JDBC check program (tests/compat/java/), since
Connector/J's test suite is not on Maven Central. Jar from Maven Central."""

import glob
import os

import common

NAME = "connector-j"
VERSION = "9.5.0"
QUICK = False
ARTIFACT = f"com.mysql:mysql-connector-j:{VERSION}"
SOURCE = os.path.join(common.HERE, "java", "LockstepJdbcCheck.java")


def _jar(cache):
    return os.path.join(cache, "jars", f"mysql-connector-j-{VERSION}.jar")


def prepare(cache):
    if os.path.exists(_jar(cache)):
        return
    common.must(["mvn", "-q", "-B", f"-Dmaven.repo.local={os.path.join(cache, 'm2')}",
                 "dependency:copy", f"-Dartifact={ARTIFACT}",
                 f"-DoutputDirectory={os.path.join(cache, 'jars')}"], cwd=cache)
    if not glob.glob(_jar(cache)):
        raise RuntimeError(f"{_jar(cache)} missing after mvn dependency:copy")


def run(target, cache, outdir):
    # Single-file source launch: no build step, no class files in the repo.
    cmd = ["java", "-cp", _jar(cache), SOURCE, target.host, str(target.port)]
    code, text = common.run(cmd, common.SUITE_TIMEOUT, out=os.path.join(outdir, "output.txt"))
    results = common.parse_marked_lines(text)
    results.update(common.hung_result(text, code))
    if not results:
        results["(run)"] = ("fail", f"no test ran (exit {code}): {text[-400:]!r}")
    return results, "java -cp mysql-connector-j.jar tests/compat/java/LockstepJdbcCheck.java HOST PORT"
