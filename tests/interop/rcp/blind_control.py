"""CONTROL (correct): the panel's default server, unchanged, under the name
the blind-audit servers share. Most blind_*.py servers are this one with one
fault; its verdict is the baseline each of them is compared with.
Expected: L1 and L2 as the panel's defaults allow.
"""
from blind_hooks import main
from panel import Config

main(Config(name="blind-control", conformance="L1"))
