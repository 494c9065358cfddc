#!/usr/bin/env python3
"""What the NATS tests need from a server without a client library: the
NATS text protocol over a socket.

  nats-tool.py HOST:PORT reset            delete bakery's streams and bucket
  nats-tool.py HOST:PORT leader STREAM    print the stream's leader's name
  nats-tool.py HOST:PORT scan STREAM      the store by sequence, a JSON line
                                          each: the stream's state, each
                                          consumer's, then every sequence
                                          from first to last with its
                                          Bakery-Id or why it is not there
  nats-tool.py HOST:PORT pub SUBJECT BODY [KEY=VALUE...]
                                          publish with headers to JetStream,
                                          exit 1 unless the stream acked it
  nats-tool.py HOST:PORT pubfile SUBJECT FILE [KEY=VALUE...]
                                          pub with FILE's bytes as the
                                          body (a changeset); exit 1 with
                                          "no responders" when no stream
                                          takes the subject
  nats-tool.py HOST:PORT info STREAM      the stream's information, JSON
  nats-tool.py HOST:PORT fill N SUBJECT BODY [KEY=VALUE...]
                                          publish N messages as pub does,
                                          {i} in the subject, the body and
                                          the values made 0 to N-1, a
                                          hundred at a time; exit 1 unless
                                          the stream acked every one
  nats-tool.py HOST:PORT proxy PORT PREFIX N
                                          listen on 127.0.0.1:PORT and pass
                                          each connection on to HOST:PORT,
                                          but swallow the answers to the
                                          first N requests whose subject
                                          starts with PREFIX: the server
                                          did the work, the client never
                                          hears (a leader that died)
"""
import base64
import json
import socket
import sys
import threading


class Conn:
    def __init__(self, hostport):
        host, port = hostport.rsplit(":", 1)
        self.s = socket.create_connection((host, int(port)), timeout=10)
        self.f = self.s.makefile("rb")
        self.f.readline()  # INFO
        self.s.sendall(b'CONNECT {"verbose":false,"headers":true,'
                       b'"no_responders":true}\r\n'
                       b"SUB _INBOX.tool 1\r\n")

    def request(self, subject, body=b"", headers=None):
        self.send(subject, body, headers)
        return self.reply()

    def send(self, subject, body=b"", headers=None):
        if headers:
            h = b"NATS/1.0\r\n" + b"".join(
                b"%s: %s\r\n" % (k.encode(), v.encode()) for k, v in headers) + b"\r\n"
            self.s.sendall(b"HPUB %s _INBOX.tool %d %d\r\n%s%s\r\n" % (
                subject.encode(), len(h), len(h) + len(body), h, body))
        else:
            self.s.sendall(b"PUB %s _INBOX.tool %d\r\n%s\r\n" % (
                subject.encode(), len(body), body))

    def reply(self):
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
                    if data.startswith(b"NATS/1.0 503"):
                        sys.exit("nats-tool: no responders")
                    data = data[int(line.split()[-2]):]
                return data


class Proxy:
    """The NATS text protocol passed on a message at a time, each way."""

    def __init__(self, upstream, prefix, count):
        self.upstream = upstream
        self.prefix = prefix.encode()
        self.left = count
        self.swallow = set()  # reply subjects whose answer goes nowhere
        self.lock = threading.Lock()

    @staticmethod
    def message(f, line):
        """The whole protocol message that line starts: with its payload
        for (H)PUB and (H)MSG, whose last field is the payload's size."""
        words = line.split() or [b""]
        if words[0].upper() in (b"PUB", b"HPUB", b"MSG", b"HMSG"):
            return line + f.read(int(line.split()[-1]) + 2)
        return line

    def to_server(self, f, out):
        while True:
            line = f.readline()
            if not line:
                break
            words = line.split() or [b""]
            if words[0].upper() in (b"PUB", b"HPUB") and \
                    words[1].startswith(self.prefix) and \
                    len(words) == (5 if words[0].upper() == b"HPUB" else 4):
                with self.lock:
                    if self.left > 0:
                        self.left -= 1
                        self.swallow.add(words[2])
            out.sendall(self.message(f, line))

    def to_client(self, f, out):
        while True:
            line = f.readline()
            if not line:
                break
            msg = self.message(f, line)
            words = line.split() or [b""]
            if words[0].upper() in (b"MSG", b"HMSG"):
                with self.lock:
                    if words[1] in self.swallow:
                        self.swallow.discard(words[1])
                        continue
            out.sendall(msg)

    def serve(self, client):
        host, port = self.upstream.rsplit(":", 1)
        server = socket.create_connection((host, int(port)))
        for pump, src, dst in ((self.to_server, client, server),
                               (self.to_client, server, client)):
            threading.Thread(target=self.pump, daemon=True,
                             args=(pump, src, dst)).start()

    @staticmethod
    def pump(fn, src, dst):
        try:
            fn(src.makefile("rb"), dst)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def run(self, port):
        ls = socket.socket()
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        ls.bind(("127.0.0.1", port))
        ls.listen(16)
        while True:
            client, _ = ls.accept()
            self.serve(client)


def header(hdrs, key):
    for line in base64.b64decode(hdrs).decode(errors="replace").split("\r\n")[1:]:
        k, _, v = line.partition(":")
        if k.strip().lower() == key.lower():
            return v.strip()
    return None


def scan(c, stream):
    info = json.loads(c.request("$JS.API.STREAM.INFO." + stream))
    state = info.get("state", {})
    print(json.dumps({"stream": stream, "state": state}))
    names = json.loads(c.request("$JS.API.CONSUMER.NAMES." + stream))
    for name in names.get("consumers") or []:
        ci = json.loads(c.request("$JS.API.CONSUMER.INFO.%s.%s" % (stream, name)))
        print(json.dumps({"consumer": name, **{k: ci.get(k) for k in (
            "delivered", "ack_floor", "num_ack_pending", "num_redelivered",
            "num_pending")}}))
    for seq in range(state.get("first_seq", 1), state.get("last_seq", 0) + 1):
        r = json.loads(c.request("$JS.API.STREAM.MSG.GET." + stream,
                                 json.dumps({"seq": seq}).encode()))
        m = r.get("message")
        if m:
            print(json.dumps({"seq": seq, "id": header(m.get("hdrs", ""), "Bakery-Id"),
                              "subject": m.get("subject"), "time": m.get("time")}))
        else:
            print(json.dumps({"seq": seq, "missing": r.get("error", {}).get("description")}))


def fill(c, n, subject, body, pairs):
    for start in range(0, n, 100):
        count = min(100, n - start)
        for i in range(start, start + count):
            def made(t):
                return t.replace("{i}", str(i))
            c.send(made(subject), made(body).encode(),
                   [(k, made(v)) for k, v in (a.split("=", 1) for a in pairs)])
        for _ in range(count):
            ack = json.loads(c.reply())
            if "error" in ack:
                sys.exit("nats-tool: %s" % ack["error"])


def main():
    if len(sys.argv) == 6 and sys.argv[2] == "proxy":
        Proxy(sys.argv[1], sys.argv[4], int(sys.argv[5])).run(int(sys.argv[3]))
    c = Conn(sys.argv[1])
    cmd = sys.argv[2]
    if cmd == "reset":
        for name in ("BAKERY_EVENTS", "BAKERY_EVENTS_DLQ", "KV_BAKERY_FENCES"):
            c.request("$JS.API.STREAM.DELETE." + name)
    elif cmd == "leader":
        info = json.loads(c.request("$JS.API.STREAM.INFO." + sys.argv[3]))
        print(info.get("cluster", {}).get("leader", ""))
    elif cmd == "scan":
        scan(c, sys.argv[3])
    elif cmd == "pub":
        headers = [a.split("=", 1) for a in sys.argv[5:]]
        ack = json.loads(c.request(sys.argv[3], sys.argv[4].encode(), headers))
        if "error" in ack:
            sys.exit("nats-tool: %s" % ack["error"])
        print(json.dumps(ack))
    elif cmd == "pubfile":
        headers = [a.split("=", 1) for a in sys.argv[5:]]
        with open(sys.argv[4], "rb") as f:
            body = f.read()
        ack = json.loads(c.request(sys.argv[3], body, headers))
        if "error" in ack:
            sys.exit("nats-tool: %s" % ack["error"])
        print(json.dumps(ack))
    elif cmd == "info":
        print(c.request("$JS.API.STREAM.INFO." + sys.argv[3]).decode())
    elif cmd == "fill":
        fill(c, int(sys.argv[3]), sys.argv[4], sys.argv[5], sys.argv[6:])
    else:
        sys.exit(__doc__)


main()
