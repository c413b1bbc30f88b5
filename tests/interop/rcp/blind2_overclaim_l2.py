"""BLIND: the control server (no L2 feature advertised) declaring
`_meta.conformance: "L2"`.

Breaks §14.3: "An **L2** server is L1 and additionally **SHOULD** advertise and
implement a selection of: `rerank` … `graph`, `streaming`, `pagination`, `log`,
and reproducibility"; §14.5 certifying a server: a declared level above what it
meets is an overclaim. Expected: L1, OVERCLAIMED (certification fails).
"""
from blind_hooks import main
from panel import Config

main(Config(name="blind2-overclaim-l2", conformance="L2"))
