#!/usr/bin/python3
"""bench/kube [BENCH-KUBE] [N]: the informer against the test kube-apiserver.

Starts tests/kubeapi/kubeapi.py with the reference Agent CRD, creates N
Agents (default 10000) whose status.inventory is the real Go agent
inventory of tests/reference/observed/ (converted to the CRD's field names,
as assisted-service does), then runs the C program bench-kube, which lists
and watches them through lib/kube/kube-informer and reports the time to a synced
cache, peak RSS and the store's size. Then, while the informer's watch is
held off by a fault rule (500 on every watch of agents), every Agent's status
is modified once; the rule goes, the informer's re-watch from its list's
resourceVersion receives the N MODIFIED events in one stream, and bench-kube
reports how fast it processed them. Not a test: figures, no verdict. Use a
build without -Dsanitize: ASan multiplies the RSS and the time.
"""
import http.client
import json
import os
import re
import ssl
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, 'tests', 'kubeapi'))
import kubeapi_harness as H  # noqa: E402

REF = os.path.join(ROOT, 'tests', 'reference')
CRD = os.path.join(REF, 'assisted-service', 'config', 'crd', 'bases', 'agent-install.openshift.io_agents.yaml')
INVENTORY = os.path.join(REF, 'observed', 'go-agent-inventory-this-machine.json')
NS = 'bench'
WORKERS = 8


def schema_of_inventory():
    import yaml
    with open(CRD) as f:
        crd = yaml.safe_load(f)
    v = crd['spec']['versions'][0]
    return v['schema']['openAPIV3Schema']['properties']['status']['properties']['inventory']


def convert(value, schema):
    """The Go agent's snake_case inventory into the CRD's camelCase one:
    each key becomes the schema property equal to it without underscores,
    case-insensitively; fields the CRD does not know are left out."""
    if isinstance(value, dict) and 'properties' in schema:
        props = schema['properties']
        index = {k.lower(): k for k in props}
        out = {}
        for k, v in value.items():
            name = index.get(k.replace('_', '').lower())
            if name is not None and v is not None:
                out[name] = convert(v, props[name])
        # a Go nil slice the CRD requires is sent as [] by assisted-service
        zero = {'array': [], 'string': '', 'object': {}, 'integer': 0, 'boolean': False}
        for k in schema.get('required', []):
            if k not in out and props.get(k, {}).get('type') in zero:
                out[k] = zero[props[k]['type']]
        return out
    if isinstance(value, list) and 'items' in schema:
        return [convert(v, schema['items']) for v in value]
    if schema.get('type') == 'string' and not isinstance(value, str):
        return str(value)
    return value


class Conn:
    """One kept-alive HTTPS connection per worker."""

    def __init__(self, s):
        self.s = s
        self.c = s.conn()

    def req(self, method, path, body, ctype='application/json'):
        for attempt in range(3):
            try:
                self.c.request(method, path, body=json.dumps(body), headers={'Content-Type': ctype})
                r = self.c.getresponse()
                raw = r.read()
                if r.status >= 300:
                    raise RuntimeError('%s %s: %s %s' % (method, path, r.status, raw[:300]))
                return raw
            except (http.client.HTTPException, OSError):
                self.c.close()
                self.c = self.s.conn()
        raise RuntimeError('%s %s: connection keeps failing' % (method, path))


def parallel(s, n, fn):
    errors = []

    def work(k):
        c = Conn(s)
        try:
            for i in range(k, n, WORKERS):
                fn(c, i)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)
    threads = [threading.Thread(target=work, args=(k,)) for k in range(WORKERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        sys.exit('bench-kube: %s' % errors[0])


def main():
    bench = sys.argv[1] if len(sys.argv) > 1 else 'build/bench/kube/bench-kube'
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 10000
    with open(INVENTORY) as f:
        inventory = convert(json.load(f), schema_of_inventory())
    base = '/apis/agent-install.openshift.io/v1beta1/namespaces/%s/agents' % NS

    s = H.Server(['--apply', CRD, '--window', str(4 * n + 1000)]).start()
    try:
        s.post('/api/v1/namespaces', {'metadata': {'name': NS}})
        t0 = time.monotonic()

        def create(c, i):
            name = '%08x-0000-4000-8000-%012x' % (i, i)
            c.req('POST', base, {'apiVersion': 'agent-install.openshift.io/v1beta1', 'kind': 'Agent',
                                 'metadata': {'name': name, 'namespace': NS,
                                              'labels': {'infraenvs.agent-install.openshift.io': 'env'}},
                                 'spec': {'approved': False, 'role': 'worker', 'hostname': 'host-%d' % i,
                                          'clusterDeploymentName': {'name': 'cluster-%d' % (i % 100),
                                                                    'namespace': NS}}})
            inv = dict(inventory, hostname='host-%d' % i)
            c.req('PATCH', base + '/' + name + '/status', {'status': {'inventory': inv}},
                  'application/merge-patch+json')
        parallel(s, n, create)
        setup = time.monotonic() - t0
        t0 = time.monotonic()
        r = s.get(base + '?limit=500')
        first_page = time.monotonic() - t0
        t0 = time.monotonic()
        r = s.get(base)
        full = time.monotonic() - t0
        items = r.json['items']
        served = sum(len(json.dumps(i, separators=(',', ':'))) for i in items)
        print('setup: %d Agents created with status in %.1f s; served JSON %.1f MB (%d B per Agent, '
              'managedFields included)' % (len(items), setup, served / 1e6, served // max(len(items), 1)))
        print('server alone: one unpaged list %.2f s, a first page of 500 %.2f s (Python client)'
              % (full, first_page))

        # hold the informer's watch off until the modifications are made
        s.ctl('POST', '/faults', {'match': {'resource': 'agents', 'watch': True}, 'code': 500, 'count': 0})
        p = subprocess.Popen([bench, s.path('kubeconfig'), NS, str(n), str(n)], stdout=subprocess.PIPE,
                             text=True)
        line = p.stdout.readline()
        if not line.startswith('synced'):
            p.wait()
            sys.exit('bench-kube did not sync: %r' % line)
        print(line.rstrip())

        def modify(c, i):
            name = '%08x-0000-4000-8000-%012x' % (i, i)
            c.req('PATCH', base + '/' + name + '/status',
                  {'status': {'debugInfo': {'state': 'known', 'stateInfo': 'modified %d' % i}}},
                  'application/merge-patch+json')
        t0 = time.monotonic()
        parallel(s, n, modify)
        print('modified %d Agents in %.1f s (while the watch was held off)' % (n, time.monotonic() - t0))
        s.ctl('DELETE', '/faults')
        for line in p.stdout:
            print(line.rstrip())
        rc = p.wait()
        if rc != 0:
            sys.exit('bench-kube exited with %d' % rc)
    finally:
        s.stop()


main()
