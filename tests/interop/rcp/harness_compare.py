"""Compares the public RCP harness with protocheck's `reference` profile on
every server of this panel, over HTTP and stdio. Not run by CI: it needs a
checkout of the RCP repository (github.com/1ay1/rcp), whose
`conformance/check.py` imports the SDK from that checkout.

    python3 harness_compare.py RCP_CHECKOUT PANEL_PYTHON PROTOCHECK [SERVER ...]

RCP_CHECKOUT: the repository's working tree; PANEL_PYTHON: a Python with
`rcp-protocol==1.0.1` (the panel's, e.g. /work/ci-tools/interop-rcp-venv/bin/python);
PROTOCHECK: the `protocheck` binary. Prints one line per server and
transport, `OK` when the harness's headline (`CERTIFIED LEVEL` and the
OVERCLAIMED line) equals the `reference` profile's verdict summary.
"""
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
NOT_SERVERS = {"panel.py", "measure.py", "harness_compare.py"}


def http_server(python, name):
    proc = subprocess.Popen([python, os.path.join(HERE, f"{name}.py"), "--http"],
                            stdout=subprocess.PIPE, text=True)
    url = proc.stdout.readline().split()[-1]
    return proc, url


def harness(checkout, python, name, transport):
    env = dict(os.environ, PYTHONPATH=os.path.join(checkout, "sdk", "python"))
    script = os.path.join("conformance", "check.py")
    if transport == "http":
        proc, url = http_server(python, name)
        try:
            out = subprocess.run(["python3", script, "--http", url], cwd=checkout, env=env,
                                 capture_output=True, text=True, timeout=300).stdout
        finally:
            proc.kill()
    else:
        out = subprocess.run(["python3", script, "--", python,
                              os.path.join(HERE, f"{name}.py"), "--stdio"],
                             cwd=checkout, env=env, capture_output=True, text=True,
                             timeout=300).stdout
    level = re.search(r"CERTIFIED LEVEL: (.*)", out)
    if not level:
        return "(the harness raised)"
    headline = level.group(1)
    declared = re.search(r"declared _meta.conformance='(.*)' — (\w+)", out)
    if declared and declared.group(2) == "OVERCLAIMED":
        headline += f" · OVERCLAIMED (declared {declared.group(1)})"
    return headline


def reference(protocheck, python, name, transport):
    args = ["--suite", "rcp", "--profile", "reference", "--format", "json"]
    if transport == "http":
        proc, url = http_server(python, name)
        try:
            out = subprocess.run([protocheck, "check", url, *args], capture_output=True,
                                 text=True, timeout=600).stdout
        finally:
            proc.kill()
    else:
        line = f"{python} {os.path.join(HERE, name + '.py')} --stdio"
        out = subprocess.run([protocheck, "check", "--stdio", line, *args],
                             capture_output=True, text=True, timeout=600).stdout
    try:
        return json.loads(out)["verdict"]["summary"]
    except (ValueError, KeyError, TypeError):
        return "(no verdict)"


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    checkout, python, protocheck = sys.argv[1:4]
    names = sys.argv[4:] or sorted(f[:-3] for f in os.listdir(HERE)
                                   if f.endswith(".py") and f not in NOT_SERVERS)
    differ = 0
    for name in names:
        for transport in ("http", "stdio"):
            h = harness(checkout, python, name, transport)
            p = reference(protocheck, python, name, transport)
            same = h == p
            differ += not same
            print(f"{'OK  ' if same else 'DIFF'} {name} {transport} | harness: {h} | "
                  f"protocheck: {p}", flush=True)
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
