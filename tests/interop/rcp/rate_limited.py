"""full_l2.py behind a rate limiter: every fourth HTTP request the process
gets is refused with 429 and `Retry-After: 1` before the server sees it.

Spec §5.2, HTTP status codes: "`429`: transport rate limit, SHOULD carry
`Retry-After` (mirrors `-32011`)". RFC 9110 §10.2.3: a server sends
Retry-After "to indicate how long the user agent ought to wait before making
a follow-up request". The refusal is the transport's, not the server's answer
to the request: a client that waits and sends it again gets that answer, so
the server must be judged as full_l2 is."""
import os
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import panel  # noqa: E402
from panel import Config, main  # noqa: E402

EVERY = 4


def behind_a_limiter(make_handler):
    """`panel.make_handler`, with a limiter in front of every POST."""

    def make(cfg, sessions):
        served = make_handler(cfg, sessions)
        lock = threading.Lock()
        seen = [0]

        class Limited(served):
            def do_POST(self):
                with lock:
                    seen[0] += 1
                    refuse = seen[0] % EVERY == 0
                if not refuse:
                    return super().do_POST()
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(min(length, 1 << 20))
                body = b'{"error":"rate_limited","message":"Too many requests; retry in 1 s"}'
                self.send_response(429)
                self.send_header("Content-Type", "application/json")
                self.send_header("Retry-After", "1")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        return Limited

    return make


panel.make_handler = behind_a_limiter(panel.make_handler)
main(Config(name="panel-rate-limited", rerank=True, embed=True, graph=True, streaming=True,
            pagination=True, log=True, deterministic=True, snapshots=True))
