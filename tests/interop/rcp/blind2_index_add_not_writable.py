"""BLIND: advertises `index: {"writable": false}` (deletes only) yet serves
`index/add` and writes the documents.

Breaks §7 method roster: "`index/add` | optional | `index` (`writable`)" and §7.10
"`index/add` — gated by `index` (`writable:true`)", with "calling an un-advertised
one yields `-32003`"; §14.1(4). Expected: L0 not granted.
"""
from blind_hooks import add_features, main
from panel import Config
import panel

add_features(index=True)
base = panel.build_server


def build(cfg, session):
    s = base(cfg, session)
    s.advertise("index", {"writable": False})
    return s


panel.build_server = build
main(Config(name="blind2-index-add-not-writable", conformance="L1"))
