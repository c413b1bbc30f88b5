"""Measures the RCP/1 interop panel: runs `protocheck check` on every server of
the "## RCP" table of tests/interop/EXPECTED.md and prints a Markdown table of
each server's verdict (spec and reference profiles) and the median wall time of
one `check` run. For the book (docs/src/suites/rcp-interop.md); the test itself
asserts no timing.

    python3 tests/interop/rcp/measure.py PROTOCHECK_BINARY PYTHON_WITH_SDK [RUNS] [--details]
"""
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
os.environ["PYTHONDONTWRITEBYTECODE"] = "1"  # no __pycache__ in the source tree
EXPECTED = os.path.join(HERE, "..", "EXPECTED.md")


def rows():
    section = False
    out = []
    for line in open(EXPECTED, encoding="utf-8"):
        if line.startswith("## "):
            section = line.strip() == "## RCP"
            continue
        t = line.strip()
        if section and t.startswith("| ") and not t.startswith("| server") and not t.startswith("|---"):
            cells = [c.strip() for c in t.strip("|").split("|")]
            out.append((cells[0], cells[1]))
    return out


def start(python, server):
    p = subprocess.Popen([python, os.path.join(HERE, server + ".py"), "--http"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = p.stdout.readline().split()
    return p, line[1]


def check(binary, target, profile):
    t0 = time.monotonic()
    out = subprocess.run([binary, "check", *target, "--suite", "rcp", "--format", "json",
                          "--profile", profile], capture_output=True, text=True)
    elapsed = time.monotonic() - t0
    report = json.loads(out.stdout)
    return report, elapsed


def main():
    binary, python = sys.argv[1], sys.argv[2]
    runs = int(sys.argv[3]) if len(sys.argv) > 3 and sys.argv[3].isdigit() else 5
    details = "--details" in sys.argv
    print("| server | transport | spec verdict | reference verdict | median wall time (spec) |")
    print("|---|---|---|---|---|")
    for server, transport in rows():
        # Second runs are measured with their first run; the service's second
        # run needs the service's history and is judged by its own tests.
        if transport in ("http, second run", "service, second run"):
            continue
        for profile_pass in range(1):
            times, verdicts = [], {}
            second = None
            for _ in range(runs):
                for profile in ("spec", "reference"):
                    proc = None
                    if transport == "stdio":
                        target = ["--stdio", f"{python} {os.path.join(HERE, server + '.py')} --stdio"]
                    else:
                        proc, url = start(python, server)
                        target = [url]
                    try:
                        report, elapsed = check(binary, target, profile)
                        if profile == "spec":
                            times.append(elapsed)
                        verdicts[profile] = report
                        if proc is not None and server == "process_session" and profile == "spec":
                            second = check(binary, target, profile)[0]
                    finally:
                        if proc is not None:
                            proc.kill()
                            proc.wait()
            summary = {p: (r.get("verdict") or {}).get("summary", r.get("error")) for p, r in verdicts.items()}
            print(f"| {server} | {transport} | {summary['spec']} | {summary['reference']} | "
                  f"{statistics.median(times) * 1000:.0f} ms |")
            if second is not None:
                s2 = (second.get("verdict") or {}).get("summary", second.get("error"))
                print(f"| {server} | http, second run | {s2} | — | — |")
            if details:
                for p, r in verdicts.items():
                    for f in r.get("findings", []):
                        if f["outcome"] in ("fail", "warn"):
                            print(f"    {p} {f['rule_id']} {f['outcome']}: {f['message'][:400]}",
                                  file=sys.stderr)
                if second is not None:
                    for f in second.get("findings", []):
                        if f["outcome"] in ("fail", "warn", "info"):
                            print(f"    2nd {f['rule_id']} {f['outcome']}: {f['message'][:300]}",
                                  file=sys.stderr)


if __name__ == "__main__":
    main()
