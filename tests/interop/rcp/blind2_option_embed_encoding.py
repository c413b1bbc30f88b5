"""BLIND: `embed` advertises `encodings: ["json"]` but serves `f32-base64` when
asked (a correct base64 payload); other options are checked.

Breaks §7.3.1: "Requesting an unadvertised encoding is `-32005`
(`OptionUnsupported`) under the usual `strict` rule (§7.7)."; §14.1(4).
Expected: L0 not granted.
"""
import dataclasses

import panel
from blind_hooks import main
from panel import Config

original = panel.embed_handler


def lenient_encoding(params, cfg):
    if params.get("encoding") == "f32-base64":
        return original(params, dataclasses.replace(cfg, lenient_options=True))
    return original(params, cfg)


panel.embed_handler = lenient_encoding
main(Config(name="blind2-option-embed-encoding", conformance="L2", embed=True))
