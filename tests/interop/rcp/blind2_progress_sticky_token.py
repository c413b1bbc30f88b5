"""BLIND: after a `retrieve` that carried `_meta.progressToken`, every later
`retrieve` of the session without a token also gets progress frames, under the
last token seen. A full L2 server.

Breaks §9: the server "**MUST NOT** emit progress for a request that carried
none"; §7.1 "it **MUST NOT** emit a notification a client did not opt into via
the corresponding capability or per-request handle (`_meta.progressToken` …)".
Expected: a finding on RCP-OUT-006 / L2 not granted.
"""
import panel
from blind_hooks import main, wrap_retrieve
from panel import Config


def sticky(original, params, cfg):
    session = panel.current()
    meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
    if meta.get("progressToken") is not None:
        session.last_token = meta["progressToken"]
    elif getattr(session, "last_token", None) is not None:
        params = dict(params, _meta=dict(meta, progressToken=session.last_token))
    return original(params, cfg)


wrap_retrieve(sticky)
main(Config(name="blind2-progress-sticky-token", conformance="L2", rerank=True, embed=True,
            graph=True, streaming=True, pagination=True, log=True, deterministic=True, snapshots=True))
