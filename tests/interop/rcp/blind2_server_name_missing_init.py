"""BLIND: the `initialize` result's `server` object has only `version`, no
`name`; `info` (before and after) carries the name.

Breaks §7.1 `initialize` Result `"server": { "name": "my-engine", "version": … }`,
with the schema's PeerInfo `"required": ["name"]` (InitializeResult requires
`server`). Expected: L0 not granted.
"""
from blind_hooks import after_session, is_request, main
from panel import Config


def drop(session, msg, reply):
    if is_request(msg) and msg.get("method") == "initialize" and isinstance(reply, dict) \
            and "result" in reply:
        reply["result"]["server"].pop("name", None)
    return reply


after_session(drop)
main(Config(name="blind2-server-name-missing-init", conformance="L1"))
