"""BLIND: a `retrieve` `query` that is a list of Content blocks mixing a text
block with an `image` block drops the image and is served on the text; a lone
image block (or a lone image in a list) still gets -32005. The server advertises
`retrieve.modalities: ["text"]`.

Breaks §4.8: "Servers **MUST** reject a block whose `type`/`mimeType` is outside
the modalities they advertised with `-32005` (`OptionUnsupported`)"; §14.1(4).
Expected: L0 not granted.
"""
from blind_hooks import main, wrap_retrieve
from panel import Config


def drop_images(original, params, cfg):
    q = params.get("query")
    if isinstance(q, list):
        texts = [b for b in q if not (isinstance(b, dict) and b.get("type") not in (None, "text"))]
        if texts:
            params = dict(params, query=texts)
    return original(params, cfg)


wrap_retrieve(drop_images)
main(Config(name="blind2-option-image-in-list", conformance="L1"))
