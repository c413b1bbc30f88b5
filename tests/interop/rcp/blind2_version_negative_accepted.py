"""BLIND: `initialize` with `protocolVersion: 0` gets -32002, but a negative one
(`-1`) is "clamped" up to 1 and succeeds.

Breaks §7.1: "The server **MUST** return `-32002` (`VersionMismatch`) only if it
cannot satisfy the floor (it supports no version `≥ 1`)" with each peer
supporting "the contiguous range `[1 .. protocolVersion]`": a client at -1
supports none, so there is no common version. Expected: L0 not granted.
"""
from blind_hooks import before_session, is_request, main
from panel import Config


def clamp(session, msg):
    if is_request(msg) and msg.get("method") == "initialize" and isinstance(msg.get("params"), dict):
        v = msg["params"].get("protocolVersion")
        if isinstance(v, int) and not isinstance(v, bool) and v < 0:
            msg["params"]["protocolVersion"] = 1
    return None


before_session(clamp)
main(Config(name="blind2-version-negative-accepted", conformance="L1"))
