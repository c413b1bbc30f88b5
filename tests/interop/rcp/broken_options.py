"""BROKEN: answers unadvertised option values with results (graph op drift,
fusion weighted, embed encoding f32-base64, unit document, modality image)
instead of -32005 (spec §12, §14.1(4))."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from panel import Config, main  # noqa: E402

main(Config(name="panel-broken-options", fusion=["rrf"], graph=True, embed=True,
            pagination=True, lenient_options=True))
