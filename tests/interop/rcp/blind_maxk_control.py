"""CONTROL (correct): advertises `retrieve.maxK: 5` and clamps a larger `k` to
exactly 5 hits. It is the correct twin of blind_maxk_one_short.py.

Holds §7.7: "A server **MUST** clamp each value to `retrieve.maxK`"; §12: "A
value that is well-formed but larger than an advertised limit (`k > maxK`) is
not an error at all: the server **MUST** clamp it". Expected: L2, like the
panel's default server.
"""
import panel
from blind_hooks import main, wrap_retrieve
from panel import Config

MAX_K = 5
capabilities = panel.capabilities


def small_max_k(cfg):
    caps = capabilities(cfg)
    caps["retrieve"]["maxK"] = MAX_K
    return caps


def clamp(original, params, cfg):
    k = params.get("k")
    if isinstance(k, int) and not isinstance(k, bool) and k > MAX_K:
        params = dict(params, k=MAX_K)
    return original(params, cfg)


panel.capabilities = small_max_k
wrap_retrieve(clamp)
main(Config(name="blind-maxk-control", conformance="L1"))
