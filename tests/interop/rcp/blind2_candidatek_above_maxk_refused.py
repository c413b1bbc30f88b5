"""BLIND: `retrieve.maxK` is 50; a `candidateK` above it (`candidateK: 500`) is
refused with -32602 instead of clamped; a `k` above it is clamped correctly.

Breaks §7.7: "A server **MUST** clamp each value to `retrieve.maxK` /
`rerank.maxCandidates`"; §12 "A value that is well-formed but larger than an
advertised limit (`k > maxK`) is not an error at all: the server **MUST** clamp
it". Expected: L1 not granted (or L0, a wrong -32602).
"""
from blind_hooks import main, wrap_validate_params
from panel import Config


def refuse(original, method, params):
    c = params.get("candidateK") if isinstance(params, dict) else None
    if method == "retrieve" and isinstance(c, int) and not isinstance(c, bool) and c > 50:
        return (-32602, "'candidateK' exceeds retrieve.maxK", {"field": "candidateK"})
    return original(method, params)


wrap_validate_params(refuse)
main(Config(name="blind2-candidatek-above-maxk-refused", conformance="L1"))
