"""CONTROL (correct): the panel's server with the L2 features panel.py serves
itself (`rerank`, `embed`, `graph`) and nothing else, declaring L2: the twin of
the blind2 servers that advertise one of them.
Expected: L2 under the spec profile.
"""
from blind_hooks import main
from panel import Config

main(Config(name="blind2-l2-small-control", conformance="L2", rerank=True, embed=True, graph=True))
