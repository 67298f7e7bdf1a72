#!/usr/bin/python3
"""A small HTTP(S) server for the step tests (Tang advertisements, worker
Ignition configs, boot artifacts), loopback or a test namespace only.

  steps-httpd.py --routes ROUTES.json --port-file F [--bind ADDR]
                 [--tls-cert C --tls-key K] [--record REQUESTS.jsonl]

ROUTES.json maps a path to {"status": 200, "body": "text" | "body_file": PATH,
"content_type": "...", "require_headers": {"Name": "value"}}; a route whose
required headers are missing answers 403. Unknown paths answer 404. Every
request is appended to --record as {"method", "path", "headers"}.
"""
import argparse
import json
import os
import ssl
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

lock = threading.Lock()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--routes", required=True)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--bind", default="127.0.0.1")
    ap.add_argument("--tls-cert")
    ap.add_argument("--tls-key")
    ap.add_argument("--record")
    a = ap.parse_args()
    if a.bind in ("0.0.0.0", "::", ""):
        sys.exit("refusing to listen on all addresses")
    routes = json.load(open(a.routes))

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *args):
            sys.stderr.write("steps-httpd: " + (fmt % args) + "\n")

        def do_GET(self):
            if a.record:
                with lock, open(a.record, "a") as f:
                    f.write(json.dumps({"method": self.command, "path": self.path,
                                        "headers": {k: v for k, v in self.headers.items()}}) + "\n")
            r = routes.get(self.path.split("?")[0])
            status, body, ctype = 404, b"not found", "text/plain"
            if r is not None:
                missing = [k for k, v in (r.get("require_headers") or {}).items() if self.headers.get(k) != v]
                if missing:
                    status, body = 403, ("missing or wrong headers: %s" % missing).encode()
                else:
                    status = r.get("status", 200)
                    if "body_file" in r:
                        body = open(r["body_file"], "rb").read()
                    else:
                        body = r.get("body", "").encode()
                    ctype = r.get("content_type", "application/json")
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    family_v6 = ":" in a.bind
    ThreadingHTTPServer.address_family = __import__("socket").AF_INET6 if family_v6 else \
        __import__("socket").AF_INET
    srv = ThreadingHTTPServer((a.bind, 0), Handler)
    if a.tls_cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(a.tls_cert, a.tls_key)
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    tmp = a.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(tmp, a.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    main()
