"""BLIND: `initialize` answers with the client's `protocolVersion` verbatim
(a client at 3 is told 3), though the server speaks only version 1.

Breaks §7.1: "The negotiated version is `min(client.protocolVersion,
server.protocolVersion)` and is what the server returns"; §14.1(1). Expected: L0
not granted.
"""
from blind_hooks import after_session, is_request, main
from panel import Config


def echo(session, msg, reply):
    if is_request(msg) and msg.get("method") == "initialize" and isinstance(reply, dict) \
            and "result" in reply and isinstance(msg.get("params"), dict):
        v = msg["params"].get("protocolVersion")
        if isinstance(v, int) and not isinstance(v, bool) and v > 1:
            reply["result"]["protocolVersion"] = v
    return reply


after_session(echo)
main(Config(name="blind2-version-echo-client", conformance="L1"))
