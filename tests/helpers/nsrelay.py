#!/usr/bin/python3
"""nsrelay: a test's way out of a network namespace it made, to one
service and nothing else.

As a module (tests/hub/hublab.py): netns_context, and Relay, a TCP relay
that listens inside a namespace and connects out of the caller's.

As a program (tests/helpers/in-netns.sh): nsrelay.py NAMESPACE
[--kubeconfig FILE] [--ready FILE] URL... makes each URL's address answer inside the namespace /run/netns/NAMESPACE
as it does outside: a real kube-apiserver (CRADLE_TEST_KUBECONFIG's server)
and a real assisted-service (CRADLE_TEST_SERVICE_URL) reach a test that
runs whole inside the namespace by the very URLs it was given. Only an
address can be relayed (a name would need the namespace's own resolver);
one that is not the namespace's own is added to its loopback. Writes the
--ready file once every relay listens, runs until SIGTERM or SIGINT."""

import ctypes
import ipaddress
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import urllib.parse

CLONE_NEWNET = 0x40000000


def setns(path):
    """The calling thread into the network namespace at path."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        if libc.setns(fd, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), "cannot enter the network namespace %s: %s"
                          % (path, os.strerror(ctypes.get_errno())))
    finally:
        os.close(fd)


class netns_context(object):
    """with netns_context(path): the calling thread in the network
    namespace at path (a /run/netns/ file or an open descriptor's
    /proc/self/fd/N), back in its own afterwards."""

    def __init__(self, path):
        self.path = path
        self.back = None

    def __enter__(self):
        self.back = os.open("/proc/thread-self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
        try:
            setns(self.path)
        except BaseException:
            os.close(self.back)
            raise
        return self

    def __exit__(self, *exc):
        try:
            setns("/proc/self/fd/%d" % self.back)
        finally:
            os.close(self.back)


class Relay(object):
    """A TCP relay from a network namespace to one service: it listens
    inside the namespace at ns_path, on address and the service's port
    (so that URLs the service hands out work inside when address is the
    service's own), and connects each connection it accepts out of the
    namespace this process runs in to the address of one URL, and to
    nothing else. Bytes pass unchanged (TLS included).

    Bounded: at most MAX_CONNECTIONS at once (more are closed at once), a
    connect timeout, a send timeout; stop() closes the listener and every
    connection."""

    MAX_CONNECTIONS = 64
    CONNECT_TIMEOUT = 10
    SEND_TIMEOUT = 60
    CHUNK = 1 << 16

    def __init__(self, ns_path, address, url):
        u = urllib.parse.urlsplit(url)
        if u.scheme not in ("http", "https") or not u.hostname:
            raise ValueError("cannot relay %r: not an http(s) URL" % url)
        default = 443 if u.scheme == "https" else 80
        self.target = (u.hostname, u.port or default)
        self.ns_path, self.address = ns_path, address
        # the same port as the service's: URLs the service hands out
        # (SERVICE_BASE_URL) work from the hosts when its host is the
        # switch's address, as the real service's in tests/service/README.md is
        self.port = u.port or default
        host = "[%s]" % address if ":" in address else address
        self.url = urllib.parse.urlunsplit((u.scheme, "%s:%d" % (host, self.port), u.path.rstrip("/"), "", ""))
        self.home = None
        self.listener = None
        self.stopped = threading.Event()
        self.lock = threading.Lock()
        self.active = set()
        self.live = 0
        self.threads = []
        self.accepted = self.refused = 0
        self.errors = []

    def start(self):
        self.home = os.open("/proc/thread-self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
        family = socket.AF_INET6 if ":" in self.address else socket.AF_INET
        with netns_context(self.ns_path):
            self.listener = socket.socket(family, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind((self.address, self.port))
        self.listener.listen(self.MAX_CONNECTIONS)
        self.listener.settimeout(0.5)
        t = threading.Thread(target=self._accept, daemon=True, name="relay-accept")
        t.start()
        self.threads.append(t)
        return self

    def _accept(self):
        # the outgoing side in this process's own namespace, whichever
        # thread started the relay
        setns("/proc/self/fd/%d" % self.home)
        while not self.stopped.is_set():
            try:
                down, _ = self.listener.accept()
            except socket.timeout:
                continue
            except OSError:
                break
            with self.lock:
                full = self.live >= self.MAX_CONNECTIONS
                if not full:
                    self.live += 1
                    self.active.add(down)
            if full:
                self.refused += 1
                down.close()
                continue
            self.accepted += 1
            t = threading.Thread(target=self._serve, args=(down,), daemon=True, name="relay-conn")
            t.start()
            self.threads = [x for x in self.threads if x.is_alive()] + [t]

    def _serve(self, down):
        up = None
        try:
            try:
                up = socket.create_connection(self.target, timeout=self.CONNECT_TIMEOUT)
            except OSError as e:
                self.errors.append("cannot connect to %s:%d: %s" % (self.target + (e,)))
                return
            with self.lock:
                self.active.add(up)
            for s in (down, up):
                s.settimeout(self.SEND_TIMEOUT)
            other = {down: up, up: down}
            reading = [down, up]
            while reading and not self.stopped.is_set():
                ready, _, _ = select.select(reading, [], [], 1.0)
                for s in ready:
                    data = s.recv(self.CHUNK)
                    if data:
                        other[s].sendall(data)
                    else:
                        # a half-close passes on: the other side sees the end too
                        reading.remove(s)
                        other[s].shutdown(socket.SHUT_WR)
        except OSError:
            pass    # a reset or a timeout ends this connection only
        finally:
            with self.lock:
                self.live -= 1
                for s in (down, up):
                    if s is not None:
                        self.active.discard(s)
                        s.close()

    def stop(self):
        self.stopped.set()
        if self.listener is not None:
            self.listener.close()
        with self.lock:
            for s in list(self.active):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
        for t in list(self.threads):
            t.join(5)
        if self.home is not None:
            os.close(self.home)
            self.home = None


def kubeconfig_server(path):
    """The server URL of the kubeconfig's current context (its first
    cluster when it names none)."""
    import yaml
    with open(path) as f:
        kc = yaml.safe_load(f) or {}
    clusters = {c.get("name"): c.get("cluster") or {} for c in kc.get("clusters") or []}
    contexts = {c.get("name"): c.get("context") or {} for c in kc.get("contexts") or []}
    ctx = contexts.get(kc.get("current-context")) or {}
    cluster = clusters.get(ctx.get("cluster")) or next(iter(clusters.values()), {})
    return cluster.get("server")


def own_address(ns, address):
    """address answers inside the namespace: its loopback has it, or it is
    added there (/32, /128); the namespace goes with its addresses."""
    ip = ipaddress.ip_address(address)
    if ip.is_loopback:
        return
    with netns_context("/run/netns/" + ns):
        try:
            with socket.socket(socket.AF_INET6 if ip.version == 6 else socket.AF_INET) as s:
                s.bind((address, 0))
                return
        except OSError:
            pass
    subprocess.run(["ip", "-n", ns, "addr", "add", "%s/%d" % (address, 32 if ip.version == 4 else 128),
                    "dev", "lo"], check=True)


def main(argv):
    import argparse
    p = argparse.ArgumentParser(prog="nsrelay.py", description="a test's way out of its network namespace")
    p.add_argument("namespace")
    p.add_argument("urls", nargs="*", metavar="URL")
    p.add_argument("--kubeconfig", action="append", default=[], help="relay this kubeconfig's server too")
    p.add_argument("--ready", help="a file written once every relay listens")
    a = p.parse_args(argv)
    urls = a.urls + [kubeconfig_server(k) or "" for k in a.kubeconfig]
    relays = []
    for url in urls:
        host = urllib.parse.urlsplit(url).hostname or ""
        try:
            ipaddress.ip_address(host)
        except ValueError:
            print("nsrelay: %r is not relayed into %s: only an address can be (a name needs the namespace's "
                  "own resolver)" % (url, a.namespace), file=sys.stderr)
            continue
        own_address(a.namespace, host)
        relays.append(Relay("/run/netns/" + a.namespace, host, url).start())
    done = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: done.set())
    if a.ready:
        with open(a.ready, "w") as f:
            f.write("".join("%s:%d\n" % (r.address, r.port) for r in relays))
    while not done.wait(1):
        pass
    for r in relays:
        r.stop()
        for e in r.errors:
            print("nsrelay: %s" % e, file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
