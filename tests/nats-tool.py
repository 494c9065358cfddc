#!/usr/bin/env python3
"""What the NATS tests need from a server without a client library: the
NATS text protocol over a socket.

  nats-tool.py HOST:PORT reset            delete bakery's streams and bucket
  nats-tool.py HOST:PORT leader STREAM    print the stream's leader's name
  nats-tool.py HOST:PORT pub SUBJECT BODY [KEY=VALUE...]
                                          publish with headers to JetStream,
                                          exit 1 unless the stream acked it
"""
import json
import socket
import sys


class Conn:
    def __init__(self, hostport):
        host, port = hostport.rsplit(":", 1)
        self.s = socket.create_connection((host, int(port)), timeout=10)
        self.f = self.s.makefile("rb")
        self.f.readline()  # INFO
        self.s.sendall(b'CONNECT {"verbose":false,"headers":true}\r\n'
                       b"SUB _INBOX.tool 1\r\n")

    def request(self, subject, body=b"", headers=None):
        if headers:
            h = b"NATS/1.0\r\n" + b"".join(
                b"%s: %s\r\n" % (k.encode(), v.encode()) for k, v in headers) + b"\r\n"
            self.s.sendall(b"HPUB %s _INBOX.tool %d %d\r\n%s%s\r\n" % (
                subject.encode(), len(h), len(h) + len(body), h, body))
        else:
            self.s.sendall(b"PUB %s _INBOX.tool %d\r\n%s\r\n" % (
                subject.encode(), len(body), body))
        while True:
            line = self.f.readline()
            if not line:
                sys.exit("nats-tool: connection closed")
            if line.startswith(b"PING"):
                self.s.sendall(b"PONG\r\n")
            elif line.startswith(b"-ERR"):
                sys.exit("nats-tool: " + line.decode().strip())
            elif line.startswith(b"MSG") or line.startswith(b"HMSG"):
                data = self.f.read(int(line.split()[-1]) + 2)[:-2]
                if line.startswith(b"HMSG"):
                    data = data[int(line.split()[-2]):]
                return data


def main():
    c = Conn(sys.argv[1])
    cmd = sys.argv[2]
    if cmd == "reset":
        for name in ("BAKERY_EVENTS", "BAKERY_EVENTS_DLQ", "KV_BAKERY_FENCES"):
            c.request("$JS.API.STREAM.DELETE." + name)
    elif cmd == "leader":
        info = json.loads(c.request("$JS.API.STREAM.INFO." + sys.argv[3]))
        print(info.get("cluster", {}).get("leader", ""))
    elif cmd == "pub":
        headers = [a.split("=", 1) for a in sys.argv[5:]]
        ack = json.loads(c.request(sys.argv[3], sys.argv[4].encode(), headers))
        if "error" in ack:
            sys.exit("nats-tool: %s" % ack["error"])
        print(json.dumps(ack))
    else:
        sys.exit(__doc__)


main()
