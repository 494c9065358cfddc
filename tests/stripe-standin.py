#!/usr/bin/env python3
"""A stand-in for Stripe's API, for tests: the one mock in bakery's suite,
since Stripe itself cannot run here. It speaks Stripe's wire format for the
one call bakery makes and keeps Stripe's idempotency rules.

    stripe-standin.py PORTFILE

Listens on 127.0.0.1 on a free port (bound to port 0) and writes the port
to PORTFILE once it is listening. Environment:

    STANDIN_KEY             the secret key it accepts (Authorization: Bearer)
    STANDIN_WEBHOOK_SECRET  signs the events served at /_events

POST /v1/payment_intents  form-encoded amount, currency, confirm=true,
    payment_method (pm_card_visa succeeds; pm_card_chargeDeclined and
    pm_card_chargeDeclinedInsufficientFunds answer 402 card_error), and
    metadata[...]. Idempotency-Key: the first answer for a key is stored and
    replayed (Idempotent-Replayed: true); the same key with other
    parameters is 400 idempotency_error; a key whose first request is still
    running is 409 idempotency_key_in_use. Errors are
    {"error": {"type", "code", "message", ...}}.
POST /_mode  form fields, each for the next N payment requests:
    fail=N   answer 503 before doing anything
    drop=N   record the charge, then close the connection unanswered
    slow=S   take S seconds (float) over every request from now on
GET /_count[?order=ID]  {"charges": N, "requests": N}
GET /_log     one JSON line per payment request: key, params, status,
    replayed (no Authorization header: the key is never logged)
GET /_events  one JSON line per charge: {"body", "signature"}, Stripe's
    payment_intent.succeeded event signed as Stripe-Signature t=…,v1=…
"""
import hashlib
import hmac
import json
import os
import socket
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

KNOWN = {
    "pm_card_visa": None,
    "pm_card_chargeDeclined": "generic_decline",
    "pm_card_chargeDeclinedInsufficientFunds": "insufficient_funds",
}

lock = threading.Lock()
keys = {}      # idempotency key -> {"params", "status", "body"} or "running"
charges = []   # payment intents that succeeded
log = []
mode = {"fail": 0, "drop": 0, "slow": 0.0}


def error(status, type_, message, code=None, **extra):
    e = {"type": type_, "message": message}
    if code:
        e["code"] = code
    e.update(extra)
    return status, {"error": e}


def create_intent(params):
    """Stripe's answer to a new request: (status, body)."""
    try:
        amount = int(params.get("amount", ""))
    except ValueError:
        return error(400, "invalid_request_error", "Invalid integer: amount",
                     "parameter_invalid_integer", param="amount")
    for p in ("currency", "payment_method"):
        if not params.get(p):
            return error(400, "invalid_request_error",
                         "Missing required param: %s." % p,
                         "parameter_missing", param=p)
    pm = params["payment_method"]
    if pm not in KNOWN:
        return error(400, "invalid_request_error",
                     "No such PaymentMethod: '%s'" % pm, "resource_missing",
                     param="payment_method")
    meta = {k[9:-1]: v for k, v in params.items()
            if k.startswith("metadata[") and k.endswith("]")}
    n = len(log) + 1
    intent = {
        "id": "pi_standin%08d" % n, "object": "payment_intent",
        "amount": amount, "currency": params["currency"],
        "payment_method": pm, "metadata": meta, "livemode": False,
        "created": int(time.time()),
        "status": "succeeded" if params.get("confirm") == "true"
        else "requires_confirmation",
    }
    decline = KNOWN[pm]
    if decline:
        intent["status"] = "requires_payment_method"
        return error(402, "card_error", "Your card was declined.",
                     "card_declined", decline_code=decline,
                     payment_intent=intent)
    charges.append(intent)
    return 200, intent


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def answer(self, status, body, replayed=False, ctype="application/json"):
        data = body if isinstance(body, bytes) else \
            (json.dumps(body) + "\n").encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Request-Id", "req_standin")
        if replayed:
            self.send_header("Idempotent-Replayed", "true")
        self.end_headers()
        self.wfile.write(data)

    def form(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n).decode()
        return dict(urllib.parse.parse_qsl(raw, keep_blank_values=True))

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        q = dict(urllib.parse.parse_qsl(url.query))
        with lock:
            if url.path == "/_count":
                got = [c for c in charges if "order" not in q
                       or c["metadata"].get("order_id") == q["order"]]
                return self.answer(200, {"charges": len(got),
                                         "requests": len(log)})
            if url.path == "/_log":
                lines = "".join(json.dumps(e) + "\n" for e in log)
                return self.answer(200, lines.encode(), ctype="text/plain")
            if url.path == "/_events":
                return self.answer(200, events().encode(), ctype="text/plain")
        self.answer(*error(404, "invalid_request_error",
                           "Unrecognized request URL (GET: %s)" % url.path))

    def do_POST(self):
        params = self.form()
        if self.path == "/_mode":
            with lock:
                for k, v in params.items():
                    mode[k] = float(v) if k == "slow" else int(v)
            return self.answer(200, mode)
        if self.path != "/v1/payment_intents":
            return self.answer(*error(404, "invalid_request_error",
                                      "Unrecognized request URL"))
        auth = self.headers.get("Authorization", "")
        if auth != "Bearer " + os.environ.get("STANDIN_KEY", "\0"):
            return self.answer(*error(
                401, "invalid_request_error",
                "Invalid API Key provided: sk_test_****" + auth[-4:]))
        key = self.headers.get("Idempotency-Key")
        entry = {"key": key, "params": params}
        with lock:
            log.append(entry)
            slow = mode["slow"]
            if mode["fail"] > 0:
                mode["fail"] -= 1
                entry["status"] = 503
                return self.answer(*error(503, "api_error",
                                          "Stripe is briefly unavailable"))
            seen = keys.get(key) if key else None
            if seen == "running":
                entry["status"] = 409
                return self.answer(*error(
                    409, "invalid_request_error",
                    "There is currently another in-progress request using "
                    "this Idempotent Key (that probably means you submitted "
                    "twice, and the other request is still going through): "
                    + key + ". Please try again later.",
                    "idempotency_key_in_use"))
            if seen:
                if seen["params"] != params:
                    entry["status"] = 400
                    return self.answer(*error(
                        400, "idempotency_error",
                        "Keys for idempotent requests can only be used with "
                        "the same parameters they were first used with. Try "
                        "using a key other than '%s' if you meant to execute "
                        "a different request." % key))
                entry["status"] = seen["status"]
                entry["replayed"] = True
                return self.answer(seen["status"], seen["body"], True)
            if key:
                keys[key] = "running"
        time.sleep(slow)
        with lock:
            status, body = create_intent(params)
            entry["status"] = status
            if key:
                keys[key] = {"params": params, "status": status, "body": body}
            drop = mode["drop"] > 0
            if drop:
                mode["drop"] -= 1
                entry["dropped"] = True
        if drop:
            # Recorded, and the answer is lost on the way back.
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        self.answer(status, body)


def events():
    secret = os.environ.get("STANDIN_WEBHOOK_SECRET", "")
    out = []
    for pi in charges:
        ev = {"id": "evt_" + pi["id"][3:], "object": "event",
              "api_version": "2024-06-20", "created": int(time.time()),
              "livemode": False, "type": "payment_intent.succeeded",
              "data": {"object": pi}}
        body = json.dumps(ev)
        t = int(time.time())
        v1 = hmac.new(secret.encode(), ("%d.%s" % (t, body)).encode(),
                      hashlib.sha256).hexdigest()
        out.append(json.dumps({"body": body,
                               "signature": "t=%d,v1=%s" % (t, v1)}) + "\n")
    return "".join(out)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: stripe-standin.py PORTFILE")
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    tmp = sys.argv[1] + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % server.server_address[1])
    os.rename(tmp, sys.argv[1])
    server.serve_forever()


if __name__ == "__main__":
    main()
