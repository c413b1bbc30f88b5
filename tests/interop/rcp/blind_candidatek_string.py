"""BLIND: `retrieve` accepts a string `candidateK` ("100") and ignores it; `k`
is still checked.

Breaks §4.6 (Data types): "**Integers** … are JSON numbers with no fractional
part … Implementations **MUST NOT** emit them as strings"; §12 "`-32602` … a
wrong JSON type"; schema RetrieveParams `candidateK: integer, minimum 1`.
Expected: L0 not granted (§14.1 rule 5).
"""
from blind_hooks import main, wrap_validate_params
from panel import Config


def skip(original, method, params):
    if method == "retrieve" and isinstance(params, dict) and isinstance(params.get("candidateK"), str):
        params = {key: v for key, v in params.items() if key != "candidateK"}
    return original(method, params)


wrap_validate_params(skip)
main(Config(name="blind-candidatek-string", conformance="L1"))
