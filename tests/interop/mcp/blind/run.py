"""Runs protocheck twice against each blind server and records its verdict.

`[BLIND_FLAGS=...] python3 run.py 26|25 [NAME ...]` starts `blind26.py NAME 0` (or blind25.py),
runs `protocheck check URL --format json` (plus `--mcp-revision 2025-11-25`
for the 2025 servers) twice, and writes results-26.json / results-25.json:
per server, the rule its fault falls under, that rule's outcome and message
in each run, the grade, and every rule that did not pass.
"""

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
PROTOCHECK = os.environ.get("PROTOCHECK", "/work/bin/protocheck")
# Extra flags (e.g. `--allow-tool-calls`): the results go to a file named after them.
EXTRA = os.environ.get("BLIND_FLAGS", "").split()
SUFFIX = "".join(f.strip("-").replace("=", "_") for f in EXTRA)


def load(rev):
    sys.path.insert(0, HERE)
    mod = __import__("blind" + rev)
    return mod.VARIANTS


def one(rev, name, rule):
    proc = subprocess.Popen(
        [sys.executable, os.path.join(HERE, f"blind{rev}.py"), name, "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        port = int(line.split()[1])
        url = f"http://127.0.0.1:{port}/mcp"
        cmd = [PROTOCHECK, "check", url, "--format", "json"]
        if rev == "25":
            cmd += ["--mcp-revision", "2025-11-25"]
        cmd += EXTRA
        runs = []
        for _ in range(2):
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
            try:
                doc = json.loads(out.stdout)
            except ValueError:
                runs.append({"error": out.stderr[-500:]})
                continue
            findings = doc.get("findings") or []
            target = [f for f in findings if f["rule_id"] == rule]
            runs.append(
                {
                    "exit": out.returncode,
                    "grade": (doc.get("verdict") or {}).get("summary"),
                    "passed": (doc.get("verdict") or {}).get("passed"),
                    "target": [(f["outcome"], f.get("message", "")) for f in target],
                    "not_pass": sorted(
                        {f"{f['rule_id']}:{f['outcome']}" for f in findings if f["outcome"] not in ("pass", "skip")}
                    ),
                    "skipped": sorted({f["rule_id"] for f in findings if f["outcome"] == "skip"}),
                }
            )
        return name, {"rule": rule, "runs": runs}
    finally:
        proc.kill()
        proc.wait()


def main():
    rev = sys.argv[1]
    variants = load(rev)
    names = sys.argv[2:] or list(variants)
    path = os.path.join(HERE, f"results-{rev}{'-' + SUFFIX if SUFFIX else ''}.json")
    results = {}
    if os.path.exists(path):
        with open(path) as f:
            results = json.load(f)
    with ThreadPoolExecutor(2) as pool:
        jobs = [pool.submit(one, rev, n, getattr(variants[n], "RULE", None)) for n in names]
        for job in jobs:
            name, res = job.result()
            results[name] = res
            r = res["runs"]
            print(name, res["rule"], [x.get("grade") for x in r], [x.get("target") for x in r][:1], flush=True)
    with open(path, "w") as f:
        json.dump(results, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
