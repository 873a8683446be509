"""node mysql2: our own check program (tests/compat/node/), since mysql2's npm
tarball carries no tests. Run twice: plain and with compression."""

import os

import common

NAME = "node-mysql2"
VERSION = "3.24.6"
QUICK = False
SCRIPT = os.path.join(common.HERE, "node", "lockstep_mysql2_check.js")


def _dir(cache):
    return os.path.join(cache, f"node-mysql2-{VERSION}")


def prepare(cache):
    d = _dir(cache)
    if os.path.isdir(os.path.join(d, "node_modules", "mysql2")):
        return
    os.makedirs(d, exist_ok=True)
    common.must(["npm", "install", "--no-audit", "--no-fund", "--prefix", d,
                 f"mysql2@{VERSION}"], cwd=d)


def run(target, cache, outdir):
    env = common.env_with(NODE_PATH=os.path.join(_dir(cache), "node_modules"))
    results = {}
    for mode in ("plain", "compress"):
        cmd = ["node", SCRIPT, target.host, str(target.port), mode]
        code, text = common.run(cmd, 600, env=env, out=os.path.join(outdir, f"{mode}.txt"))
        for name, r in common.parse_marked_lines(text).items():
            results[f"{mode}/{name}"] = r
        for name, r in common.hung_result(text, code).items():
            results[f"{mode}/{name}"] = r
    return results, f"node tests/compat/node/lockstep_mysql2_check.js HOST PORT plain|compress"
