#!/usr/bin/python3
"""A scriptable HTTP(S) server for the HTTP client's tests; loopback only.

Paths:
  /echo                  200, JSON {method, path, headers, body}
  /status/CODE           that status, body "status CODE"
  /flaky/KEY/N           503 for the first N requests of KEY, then 200 "ok after N"
  /slow/MS               sleeps MS milliseconds, then 200 "slow"
  /big/BYTES             200 with BYTES bytes of 'x'
  /reset                 closes the connection without answering
  /garbage               200, Content-Type application/json, body "{not json"
  /redirect              302 to /echo
  /count/KEY             200, how many requests KEY has seen
A request whose target is an absolute URI (a proxy request) gets 200 with
JSON {"proxied": true, "url": ...}: that is how tests see the proxy was used.
"""
import argparse, json, os, socket, ssl, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

counts = {}
lock = threading.Lock()


def bump(key):
    with lock:
        counts[key] = counts.get(key, 0) + 1
        return counts[key]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        sys.stderr.write("httpd: " + (fmt % args) + "\n")

    def reply(self, code, body, ctype="text/plain"):
        data = body.encode() if isinstance(body, str) else body
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def handle_any(self):
        body = self.body()
        path = self.path
        if path.startswith("http://") or path.startswith("https://"):
            bump("proxy")
            return self.reply(200, json.dumps({"proxied": True, "url": path}), "application/json")
        parts = path.split("?")[0].strip("/").split("/")
        head = parts[0]
        if head == "echo":
            doc = {"method": self.command, "path": path, "peer_port": self.client_address[1],
                   "headers": {k.lower(): v for k, v in self.headers.items()},
                   "body": body.decode("utf-8", "replace")}
            return self.reply(200, json.dumps(doc), "application/json")
        if head == "status":
            return self.reply(int(parts[1]), "status " + parts[1])
        if head == "flaky":
            n = bump("flaky/" + parts[1])
            if n <= int(parts[2]):
                return self.reply(503, "try again")
            return self.reply(200, "ok after %d" % (n - 1))
        if head == "slow":
            time.sleep(int(parts[1]) / 1000.0)
            return self.reply(200, "slow")
        if head == "big":
            return self.reply(200, b"x" * int(parts[1]))
        if head == "reset":
            bump("reset")
            self.close_connection = True
            try:
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            except OSError:
                pass
            self.connection.close()
            return
        if head == "garbage":
            return self.reply(200, "{not json", "application/json")
        if head == "redirect":
            self.send_response(302)
            self.send_header("Location", "/echo")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if head == "count":
            with lock:
                return self.reply(200, str(counts.get(parts[1], 0)))
        return self.reply(404, "not found")

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = handle_any


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bind", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--tls-cert")
    ap.add_argument("--tls-key")
    ap.add_argument("--client-ca", help="require client certificates signed by this CA")
    a = ap.parse_args()
    if a.bind not in ("127.0.0.1", "::1", "localhost"):
        sys.exit("httpd.py: refusing to bind %s: tests stay on loopback" % a.bind)

    srv = ThreadingHTTPServer((a.bind, a.port), Handler)
    srv.daemon_threads = True
    if a.tls_cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(a.tls_cert, a.tls_key)
        if a.client_ca:
            ctx.verify_mode = ssl.CERT_REQUIRED
            ctx.load_verify_locations(a.client_ca)
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    tmp = a.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(tmp, a.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    main()
