"""BROKEN: advertises `retrieve.modalities: ["text"]` (and rerank), yet `retrieve`
serves a non-text Content block as its `query` (an `image` or `audio` block is
read as an empty query and answered with hits); `embed`-style checks elsewhere
are unchanged. §4.8: "Servers **MUST** reject a block whose `type`/`mimeType`
is outside the modalities they advertised with `-32005` (`OptionUnsupported`)";
§14.1(4) "unsupported advertised-method options with `-32005`".
Expected: L0 not granted (RCP-L0-019).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import panel  # noqa: E402
from panel import Config, main  # noqa: E402

original = panel.retrieve


def well_formed_media(b) -> bool:
    """A schema-valid image or audio block: `mimeType`, and `data` or `uri` (not both)."""
    return isinstance(b, dict) and b.get("type") in ("image", "audio") \
        and isinstance(b.get("mimeType"), str) and (("data" in b) != ("uri" in b))


def lenient_query(params, cfg):
    q = params.get("query")
    blocks = q if isinstance(q, list) else [q]
    if blocks and all(well_formed_media(b) for b in blocks):
        params = dict(params, query="")  # BROKEN: §4.8 -32005 for a block outside the modalities
    return original(params, cfg)


panel.retrieve = lenient_query
main(Config(name="panel-query-block-served", rerank=True))
