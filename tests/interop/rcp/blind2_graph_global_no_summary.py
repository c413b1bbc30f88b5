"""BLIND: `graph` with `op: "global"` returns `communities` but no `summary`;
`local` is correct.

Breaks §7.9: "`global` → `{ "summary": "…", "communities": [ { "id", "summary",
"score" } ] }`"; §14.3. Expected: L2 not granted.
"""
import panel
from blind_hooks import main
from panel import Config

original = panel.graph_handler


def drop(params, cfg):
    result = original(params, cfg)
    if params.get("op") == "global":
        result.pop("summary", None)
    return result


panel.graph_handler = drop
main(Config(name="blind2-graph-global-no-summary", conformance="L2", graph=True))
