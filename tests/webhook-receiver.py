#!/usr/bin/env python3
"""A webhook receiver for tests: checks Standard Webhooks 1.0 signatures the
way a receiver built on the spec would, independently of bakery's code.

    webhook-receiver.py PORTFILE LOGFILE

Listens on 127.0.0.1 on a free port (bound to port 0), writes the port to
PORTFILE once it is listening. RECEIVER_SECRET is the whsec_ secret it
verifies with. Each POST appends one JSON line to LOGFILE:
{"path", "id", "valid", "body_id", "traceparent", "tracestate"} (the
last two: those headers, null when absent): valid when webhook-signature holds a
v1 signature of "ID.TIMESTAMP.BODY" under the secret, the timestamp is
within 5 minutes and webhook-id equals the body's id.

The path says how to answer (after the signature check: a bad signature is
401 everywhere):
    /ok        204
    /slow      sleeps 5 s, then 204
    /fail      503
    /refuse    400
    /redirect  302 to /ok (a follower would reach /ok and log it there)
    /huge      200 with 20 MiB of body
    /bare      the status line "HTTP/1.1 200 OK" alone, then the connection
               closed: no headers' end, not a complete HTTP response
"""
import base64
import hashlib
import hmac
import json
import os
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SECRET = os.environ["RECEIVER_SECRET"]
KEY = base64.b64decode(SECRET[len("whsec_"):])
LOG = sys.argv[2]


def valid(headers, body):
    wid = headers.get("webhook-id", "")
    ts = headers.get("webhook-timestamp", "")
    sigs = headers.get("webhook-signature", "")
    try:
        if abs(time.time() - int(ts)) > 300:
            return False
        signed = wid.encode() + b"." + ts.encode() + b"." + body
        want = base64.b64encode(hmac.new(KEY, signed, hashlib.sha256).digest())
        body_id = json.loads(body).get("id")
    except (ValueError, AttributeError):
        return False
    if body_id != wid:
        return False
    for s in sigs.split(" "):
        version, _, sig = s.partition(",")
        if version == "v1" and hmac.compare_digest(sig.encode(), want):
            return True
    return False


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, body=b"", headers=()):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if body:
            self.wfile.write(body)

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n)
        good = valid(self.headers, body)
        try:
            body_id = json.loads(body).get("id")
        except ValueError:
            body_id = None
        with open(LOG, "a") as f:
            f.write(json.dumps({"path": self.path,
                                "id": self.headers.get("webhook-id"),
                                "valid": good, "body_id": body_id,
                                "traceparent": self.headers.get("traceparent"),
                                "tracestate": self.headers.get("tracestate")})
                    + "\n")
        if not good:
            return self.answer(401, b"bad signature\n")
        if self.path == "/ok":
            return self.answer(204)
        if self.path == "/slow":
            time.sleep(5)
            return self.answer(204)
        if self.path == "/fail":
            return self.answer(503, b"down for maintenance\n")
        if self.path == "/refuse":
            return self.answer(400, b"no such customer\n")
        if self.path == "/redirect":
            return self.answer(302, b"", [("Location", "/ok")])
        if self.path == "/huge":
            return self.answer(200, b"x" * (20 << 20))
        if self.path == "/bare":
            self.wfile.write(b"HTTP/1.1 200 OK\r\n")
            self.wfile.flush()
            self.close_connection = True
            return None
        return self.answer(404, b"no such path\n")


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    tmp = sys.argv[1] + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(tmp, sys.argv[1])
    server.serve_forever()


if __name__ == "__main__":
    main()
