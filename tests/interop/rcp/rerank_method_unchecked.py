"""BROKEN: advertises `rerank.methods: ["cross-encoder"]` and built-in rerank, but
`retrieve` serves `rerank: {method: "colbert"}` (or "llm") with results. §12:
-32005 when "a requested option value (a `mode`, `rerank.method`, `filter`
operator) … is not in the advertised set"; §14.1(4)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from panel import Config, main  # noqa: E402

main(Config(name="panel-rerank-method-unchecked", rerank=True, lenient_rerank_method=True))
