"""BLIND: `retrieve` accepts `k: 0` (it serves its default of 10 hits) instead
of rejecting it. Negative, non-integer and string `k` are still -32602.

Breaks §12 (Choosing between overlapping codes): "`-32602` `InvalidParams` —
the request is malformed *independently of capabilities*: a missing required
field, a wrong JSON type, a value out of range"; the schema's RetrieveParams
has `k: {"type": "integer", "minimum": 1}`; §14.1 rule 5: "validate params and
return `-32602` on malformed input". Expected: L0 not granted.
"""
from blind_hooks import main, wrap_validate_params
from panel import Config


def allow_zero(original, method, params):
    if method == "retrieve" and isinstance(params, dict) and params.get("k") == 0 \
            and not isinstance(params.get("k"), bool):
        params = {key: v for key, v in params.items() if key != "k"}
    return original(method, params)


wrap_validate_params(allow_zero)
main(Config(name="blind-k-zero", conformance="L1"))
