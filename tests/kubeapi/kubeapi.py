#!/usr/bin/python3
"""A test Kubernetes API server that answers like kube-apiserver v1.26.

Usage: kubeapi.py [--port 0] [--port-file F] [--state-dir DIR] ...
See README.md next to this file for the interface."""

import argparse
import os
import secrets
import signal
import socket
import ssl
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

try:
    import yaml     # kserver needs it; checked here to fail early
    del yaml
except ImportError:
    sys.stderr.write('kubeapi: python3-yaml is missing (apt-get install python3-yaml)\n')
    sys.exit(77)

import kcerts  # noqa: E402
import kcontrollers  # noqa: E402
import kregistry  # noqa: E402
import kserver  # noqa: E402
from kstore import Store  # noqa: E402


def log(msg):
    sys.stderr.write('kubeapi: %s\n' % msg)
    sys.stderr.flush()


def write_atomic(path, text, mode=0o644):
    tmp = path + '.tmp'
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, 'w') as f:
        f.write(text)
    os.rename(tmp, path)


def parse_args(argv):
    p = argparse.ArgumentParser(description='test kube-apiserver')
    p.add_argument('--host', default='127.0.0.1', choices=['127.0.0.1', '::1'],
                   help='loopback address to listen on')
    p.add_argument('--port', type=int, default=0, help='HTTPS port (0: any free port)')
    p.add_argument('--port-file', help='write the HTTPS port here once ready')
    p.add_argument('--control-port', type=int, default=0, help='plain-HTTP control port (0: any free port)')
    p.add_argument('--control-port-file', help='write the control port here once ready')
    p.add_argument('--state-dir', help='certificates, kubeconfigs (default: a new temporary directory)')
    p.add_argument('--ca-cert', help='CA certificate to use (with --ca-key) instead of generating one')
    p.add_argument('--ca-key', help='private key of --ca-cert')
    p.add_argument('--token', action='append', default=[], metavar='TOKEN=USER[:GROUP,...]',
                   help='an extra bearer token')
    p.add_argument('--apply', action='append', default=[], metavar='PATH',
                   help='create these objects (YAML file or directory) at start')
    p.add_argument('--window', type=int, default=10000, help='events kept for watch resume / continue')
    p.add_argument('--bookmark-interval', type=float, default=60.0, help='seconds between watch bookmarks')
    p.add_argument('--min-request-timeout', type=int, default=1800,
                   help='watches without timeoutSeconds end after this to twice this many seconds')
    p.add_argument('--pod-deletion-delay', default='0',
                   help="seconds before the stand-in kubelet completes a pod's graceful deletion, or 'never'")
    p.add_argument('--no-csr-signing', action='store_true', help='do not sign approved kubelet CSRs')
    p.add_argument('--openshift-service-ca', action='store_true',
                   help='publish openshift-service-ca.crt in every namespace, as an OpenShift cluster does')
    p.add_argument('--node-monitor-grace-period', type=float, default=0.0,
                   help='seconds without a kubelet heartbeat before a Node turns Unknown (kube: 40; 0: never)')
    p.add_argument('--crd-naming-delay', type=float, default=0.05,
                   help="seconds from a CRD's creation to its NamesAccepted (status.conditions is null until then)")
    p.add_argument('--verbose', action='store_true', help='log every request (method, path, code, user)')
    return p.parse_args(argv)


def bootstrap(registry, controllers, store):
    """What a fresh cluster holds before any client: the system namespaces and
    the kubernetes service."""
    ns_rt = registry.lookup('', 'v1', 'namespaces')
    for ns in ('default', 'kube-system', 'kube-public', 'kube-node-lease'):
        registry.internal_create(ns_rt, '', {'metadata': {'name': ns}}, 'kube-apiserver')
    svc = registry.lookup('', 'v1', 'services')
    registry.internal_create(svc, 'default', {
        'metadata': {'name': 'kubernetes', 'labels': {'component': 'apiserver', 'provider': 'kubernetes'}},
        'spec': {'clusterIP': '10.96.0.1', 'ports': [{'name': 'https', 'port': 443, 'protocol': 'TCP',
                                                       'targetPort': 6443}], 'sessionAffinity': 'None',
                 'type': 'ClusterIP'}}, 'kube-apiserver')
    controllers.settle(30)
    # the history of a fresh server starts here: older resourceVersions are gone
    store.compact()


def main(argv=None):
    args = parse_args(argv if argv is not None else sys.argv[1:])
    state = args.state_dir or tempfile.mkdtemp(prefix='kubeapi-')
    os.makedirs(state, mode=0o700, exist_ok=True)
    fam = socket.AF_INET6 if ':' in args.host else socket.AF_INET
    # certificates
    if args.ca_cert:
        if not args.ca_key:
            log('--ca-cert needs --ca-key')
            return 2
        ca = kcerts.CA(args.ca_cert, args.ca_key)
        if os.path.abspath(args.ca_cert) != os.path.abspath(os.path.join(state, 'ca.crt')):
            write_atomic(os.path.join(state, 'ca.crt'), ca.cert_pem.decode())
        ca.cert_path_public = os.path.join(state, 'ca.crt')
    else:
        ca = kcerts.CA.generate(state)
        ca.cert_path_public = ca.cert_path
    srv_crt, srv_key = ca.issue(state, 'server', 'kube-apiserver', server=True,
                                sans=['IP:127.0.0.1', 'IP:::1', 'DNS:localhost', 'DNS:kubernetes',
                                      'DNS:kubernetes.default', 'DNS:kubernetes.default.svc'])
    adm_crt, adm_key = ca.issue(state, 'admin', 'kubernetes-admin', ['system:masters'])
    store = Store(window=args.window)
    registry = kregistry.Registry(store)
    controllers = kcontrollers.Controllers(registry, store, ca, log)
    controllers.root_ca_pem = ca.cert_pem.decode()
    if args.pod_deletion_delay == 'never':
        controllers.pod_deletion_delay = None
    else:
        controllers.pod_deletion_delay = float(args.pod_deletion_delay)
    controllers.csr_signing = not args.no_csr_signing
    controllers.openshift_service_ca = args.openshift_service_ca
    controllers.node_monitor_grace = max(0.0, args.node_monitor_grace_period)
    controllers.crd_naming_delay = max(0.0, args.crd_naming_delay)
    kube = kserver.KubeServer(registry, store, controllers, ca, state, log)
    kube.bookmark_interval = args.bookmark_interval
    kube.min_request_timeout = args.min_request_timeout
    kube.verbose = args.verbose
    admin_token = secrets.token_urlsafe(32)
    kube.tokens[admin_token] = {'name': 'kubernetes-admin', 'groups': ['system:masters']}
    for t in args.token:
        tok, _, rest = t.partition('=')
        user, _, groups = rest.partition(':')
        if not tok or not user:
            log('bad --token %s (TOKEN=USER[:GROUP,...])' % t.split('=')[0][:4])
            return 2
        kube.tokens[tok] = {'name': user, 'groups': [g for g in groups.split(',') if g]}
    controllers.start()
    bootstrap(registry, controllers, store)
    # TLS
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.load_cert_chain(srv_crt, srv_key)
    ctx.load_verify_locations(ca.cert_path_public)
    ctx.verify_mode = ssl.CERT_OPTIONAL
    ctx.set_alpn_protocols(['http/1.1'])
    httpd = kserver.TLSHTTPServer((args.host, args.port), kserver.ApiHandler, ctx, kube, fam)
    import uuid
    httpd.pf_uid = str(uuid.uuid4())
    httpd.pl_uid = str(uuid.uuid4())
    ctl = kserver.ControlServer((args.host, args.control_port), kserver.ControlHandler, kube, fam)
    kube.port = httpd.server_address[1]
    kube.host = args.host if fam == socket.AF_INET else '[::1]'
    cport = ctl.server_address[1]
    # kubeconfigs
    capub = ca.cert_path_public
    kserver.write_kubeconfig(os.path.join(state, 'kubeconfig'), kube.port, capub, user='admin',
                             cert=adm_crt, key=adm_key, host=kube.host)
    kserver.write_kubeconfig(os.path.join(state, 'kubeconfig-files'), kube.port, capub, user='admin',
                             cert=adm_crt, key=adm_key, embed=False, host=kube.host)
    kserver.write_kubeconfig(os.path.join(state, 'kubeconfig-token'), kube.port, capub, user='admin-token',
                             token=admin_token, host=kube.host)
    write_atomic(os.path.join(state, 'admin-token'), admin_token + '\n', 0o600)
    threads = [threading.Thread(target=httpd.serve_forever, name='https', daemon=True),
               threading.Thread(target=ctl.serve_forever, name='control', daemon=True)]
    for t in threads:
        t.start()
    if args.apply:
        res = kserver.apply_documents(kube, args.apply, [])
        bad = [r for r in res if r['code'] >= 300]
        for r in bad:
            log('--apply: %s %s: %s' % (r.get('kind'), r.get('name'), r.get('error')))
        if bad:
            return 1
    write_atomic(os.path.join(state, 'port'), '%d\n' % kube.port)
    write_atomic(os.path.join(state, 'control-port'), '%d\n' % cport)
    if args.control_port_file:
        write_atomic(args.control_port_file, '%d\n' % cport)
    if args.port_file:
        write_atomic(args.port_file, '%d\n' % kube.port)
    sys.stdout.write('kubeapi: https://%s:%d control http://%s:%d state %s\n'
                     % (kube.host, kube.port, kube.host, cport, state))
    sys.stdout.flush()
    stop = threading.Event()

    def on_signal(signum, frame):
        stop.set()
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    while not stop.is_set():
        stop.wait(1.0)
    # clean shutdown: no new connections, watches end, controllers stop
    httpd.shutdown()
    ctl.shutdown()
    with kube.lock:
        ws = list(kube.watches)
    for w in ws:
        w.close()
    controllers.shutdown()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        with kube.lock:
            if not kube.watches:
                break
        time.sleep(0.05)
    httpd.server_close()
    ctl.server_close()
    return 0


if __name__ == '__main__':
    sys.exit(main())
