"""Prints the BLIND.md table from results-*.json and the servers' docstrings.

`python3 table.py` writes the markdown table rows and the tally to stdout.
"Expected" is the level of the broken requirement as the specification words
it (MUST: fail; SHOULD/MAY: warn); "Caught?" compares it with what protocheck
reported for the rule in both runs:
  yes        - the rule was reported at the expected level (or stronger), both runs;
  weaker     - a MUST broken, reported only as a warning or info (the grade still passes);
  other rule - the rule passed or was skipped, but another rule failed on this fault
               ("other rule (warn)": only warned, so the grade still passes);
  NO         - the rule passed or was skipped and nothing else flagged it: certified;
  unstable   - the two runs differ.
"""

import inspect
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

# The level of each broken requirement, read from the specification sentence.
SHOULD = {
    "MCP-STL-005", "MCP-STL-006", "MCP-STL-007", "MCP-RES-006", "MCP-RES-007", "MCP-ERR-008",
    "MCP-SCH-007", "MCP-SEC-003", "MCP-SEC-006", "MCP-DEP-004", "MCP-DEP-005", "MCP-DEP-007", "MCP-DSC-005",
    "MCP25-TOL-005", "MCP25-TOL-006", "MCP25-TOL-007", "MCP25-TOL-008", "MCP25-TOL-013",
    "MCP25-RES-007", "MCP25-PRM-006", "MCP25-PRM-007", "MCP25-CPL-004", "MCP25-LOG-003",
    "MCP25-LIF-004", "MCP25-HTP-004", "MCP25-HTP-013", "MCP25-HTP-014",
}
# Requirements (or single servers) whose level a careful reader may take
# either way (the note says why).
EITHER = {
    "MCP-DEP-003": "removed method: MUST (ERR-002) or MAY",
    "MCP25-CPL-002": "the sentence gives -32601 as the example",
    "MCP25-PRM-005": "the schema makes mimeType optional",
    "MCP25-TOL-011": "SHOULD in the error-handling prose",
    "MCP25-HTP-016": "the sentence names terminated sessions; never-issued ids by analogy",
    "MCP25-RES-005": "the schema's union does not forbid extra members",
    "err002-completion": "the server does implement the method; the capability gate is the schema's",
}
LEVEL = {"fail": 3, "warn": 2, "info": 1, "pass": 0, "skip": 0}


def quote(cls):
    doc = inspect.getdoc(cls) or ""
    parts = doc.split("\n\n")
    head = " ".join(parts[0].split())
    spec = " ".join(" ".join(parts[1:]).split()) if len(parts) > 1 else ""
    return head.replace("|", "\\|"), spec.replace("|", "\\|")


def judge(name, rule, runs):
    outs = [r["target"][0][0] if r.get("target") else "none" for r in runs]
    others = [[x for x in r.get("not_pass", []) if not x.startswith(rule + ":")] for r in runs]
    if outs[0] != outs[1] or others[0] != others[1]:
        return "unstable", outs, others
    out = outs[0]
    want = "warn" if rule in SHOULD or rule in EITHER or name in EITHER else "fail"
    if LEVEL.get(out, 0) >= LEVEL[want]:
        return "yes", outs, others
    if out in ("warn", "info"):
        return "weaker", outs, others
    if [x for x in others[0] if x.endswith(":fail")]:
        return "other rule", outs, others
    if [x for x in others[0] if x.endswith(":warn")]:
        return "other rule (warn)", outs, others
    return "NO", outs, others


def rows(rev, results, tool_calls):
    mod = __import__("blind" + rev)
    out = []
    for name, cls in mod.VARIANTS.items():
        rule = getattr(cls, "RULE", None)
        if rule is None or name not in results:
            continue
        runs = results[name]["runs"]
        verdict, outs, others = judge(name, rule, runs)
        head, spec = quote(cls)
        expected = "warn" if rule in SHOULD else "fail"
        note = EITHER.get(name) or EITHER.get(rule)
        if note:
            expected = f"fail or warn ({note})"
        grade = runs[0]["grade"] if runs[0]["grade"] == runs[1]["grade"] else f"{runs[0]['grade']} / {runs[1]['grade']}"
        today = f"{'/'.join(outs)}; {grade}"
        extra = sorted(set(others[0]) | set(others[1]))
        if extra:
            today += "; also " + ", ".join(extra)
        if name in tool_calls:
            t = tool_calls[name]["runs"]
            today += f"; with --allow-tool-calls: {'/'.join(r['target'][0][0] if r['target'] else 'none' for r in t)}"
        out.append((name, rule, head, spec, expected, today, verdict))
    return out


def main():
    tally = {}
    certified = {}
    for rev in ("26", "25"):
        with open(os.path.join(HERE, f"results-{rev}.json")) as f:
            results = json.load(f)
        tool_calls = {}
        path = os.path.join(HERE, f"results-{rev}-allow-tool-calls.json")
        if os.path.exists(path):
            with open(path) as f:
                tool_calls = json.load(f)
        print(f"\n### {'2026-07-28' if rev == '26' else '2025-11-25'}\n")
        print("| Server | Rule | Breaks (spec sentence) | Expected | protocheck today | Caught? |")
        print("|---|---|---|---|---|---|")
        for name, rule, head, spec, expected, today, verdict in rows(rev, results, tool_calls):
            print(f"| `{name}` | {rule} | {head} {spec} | {expected} | {today} | {verdict} |")
            tally[verdict] = tally.get(verdict, 0) + 1
            if verdict in ("NO", "weaker"):
                certified.setdefault(rule, []).append(f"{name} ({verdict})")
    print("\n### Tally\n")
    total = sum(tally.values())
    print(f"{total} servers: " + ", ".join(f"{k} {v}" for k, v in sorted(tally.items(), key=lambda kv: -kv[1])))
    print("\n### Rules where a broken server was certified\n")
    for rule in sorted(certified):
        print(f"- {rule}: " + ", ".join(certified[rule]))


if __name__ == "__main__":
    main()
