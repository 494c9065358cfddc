#!/usr/bin/env python3
# otlp-sink.py PORTFILE OUT — a collector that takes every OTLP/HTTP POST
# and answers 200, for B7 with tracing on: the spans are sent, and cost
# the sender what a collector costs it, and nothing else. It listens on
# 127.0.0.1 (a port the kernel picks, written to PORTFILE) and appends
# the bytes of each request's body, one number a line, to OUT.
import http.server
import sys

port_file, out = sys.argv[1], sys.argv[2]


class Sink(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(n)
        with open(out, "a") as f:
            f.write(f"{n}\n")
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args):
        pass


server = http.server.HTTPServer(("127.0.0.1", 0), Sink)
with open(port_file, "w") as f:
    f.write(str(server.server_address[1]))
server.serve_forever()
