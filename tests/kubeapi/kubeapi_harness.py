"""Starting the test kube-apiserver and talking to it from Python tests
(standard library only: http.client + ssl). Other test scripts may import
this module: Server(...).start(), .request(), .watch(), .ctl(), .apply()."""

import glob
import http.client
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON = '/usr/bin/python3'


def reference_dir():
    """The reference material: $KUBEAPI_REFERENCE, else the tree's copy in tests/reference/."""
    return os.environ.get('KUBEAPI_REFERENCE') or os.path.join(os.path.dirname(HERE), 'reference')


def observed_dir():
    return os.path.join(reference_dir(), 'observed', 'kube')


def crd_files():
    base = os.path.join(reference_dir(), 'assisted-service')
    out = []
    for pat in ('config/crd/bases/*.yaml', 'hack/crds/*/*.yaml', 'hack/converged_flow_crds/*.yaml'):
        out.extend(sorted(glob.glob(os.path.join(base, pat))))
    return out


def openshift_crd_files():
    """The CRDs of an OpenShift cluster that cradle's controller reads
    (notes/controller.md §11): proxies, ClusterVersion and ClusterOperators
    (openshift/api), BareMetalHosts, Provisioning, Machines,
    MachineConfigPools, and OLM's Subscriptions, CSVs and InstallPlans."""
    ref = reference_dir()
    config = os.path.join(ref, 'openshift-api', 'config', 'v1', 'zz_generated.crd-manifests')
    return [os.path.join(config, f) for f in (
        '0000_03_config-operator_01_proxies.crd.yaml',
        '0000_00_cluster-version-operator_01_clusterversions-Default.crd.yaml',
        '0000_00_cluster-version-operator_01_clusteroperators.crd.yaml')] + [os.path.join(ref, f) for f in (
            'assisted-service/hack/crds/metal3/metal3.io_baremetalhosts.yaml',
            'assisted-service/hack/converged_flow_crds/metal3.io_provisioning.yaml',
            'openshift-api/machine/v1beta1/zz_generated.crd-manifests/0000_10_machine-api_01_machines-Default.crd.yaml',
            'openshift-api/machineconfiguration/v1/zz_generated.crd-manifests/'
            '0000_80_machine-config_01_machineconfigpools.crd.yaml',
            'operator-framework/crds/operators.coreos.com_subscriptions.yaml',
            'operator-framework/crds/operators.coreos.com_clusterserviceversions.yaml',
            'operator-framework/crds/operators.coreos.com_installplans.yaml')]


def yaml_docs(path):
    import yaml
    with open(path) as f:
        return [d for d in yaml.load_all(f, Loader=_loader()) if d is not None]


def _loader():
    import yaml

    class L(yaml.SafeLoader):
        pass
    L.yaml_implicit_resolvers = {k: [(t, r) for t, r in v if t != 'tag:yaml.org,2002:timestamp']
                                 for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()}
    return L


def args_from_env():
    """More options for the test server, from $CRADLE_TEST_KUBEAPI_ARGS (as
    the C harness takes them), e.g. --openshift-service-ca."""
    import shlex
    return shlex.split(os.environ.get('CRADLE_TEST_KUBEAPI_ARGS', ''))


class Response:
    def __init__(self, status, headers, raw):
        self.status = status
        self.headers = headers          # list of (name, value)
        self.raw = raw
        try:
            self.json = json.loads(raw) if raw else None
        except ValueError:
            self.json = None

    def header(self, name):
        for k, v in self.headers:
            if k.lower() == name.lower():
                return v
        return None

    def headers_all(self, name):
        return [v for k, v in self.headers if k.lower() == name.lower()]

    @property
    def text(self):
        return self.raw.decode('utf-8', 'replace')

    def __repr__(self):
        return '<Response %d %s>' % (self.status, self.raw[:300])


class Watch:
    """A streaming watch: .next() returns the next decoded event, or None
    when the server ended the stream."""

    def __init__(self, conn, resp):
        self.conn = conn
        self.resp = resp
        self.status = resp.status
        self.headers = resp.getheaders()

    def next(self, timeout=30):
        self.conn.sock.settimeout(timeout)
        line = self.resp.readline()
        if not line:
            return None
        return json.loads(line)

    def rest(self, timeout=30):
        out = []
        while True:
            ev = self.next(timeout)
            if ev is None:
                return out
            out.append(ev)

    def close(self):
        try:
            self.conn.close()
        except OSError:
            pass


class Server:
    def __init__(self, args=(), state_dir=None):
        self.args = list(args)
        self.tmp = tempfile.mkdtemp(prefix='kubeapi-test-')
        self.state = state_dir or os.path.join(self.tmp, 'state')
        self.proc = None
        self.port = None
        self.cport = None
        self.host = '::1' if '::1' in self.args else '127.0.0.1'

    def start(self, timeout=60):
        pf = os.path.join(self.tmp, 'port')
        cpf = os.path.join(self.tmp, 'cport')
        self.out = open(os.path.join(self.tmp, 'stdout'), 'w')
        self.err = open(os.path.join(self.tmp, 'stderr'), 'w')
        self.proc = subprocess.Popen([PYTHON, os.path.join(HERE, 'kubeapi.py'), '--state-dir', self.state,
                                      '--port-file', pf, '--control-port-file', cpf] + self.args,
                                     stdout=self.out, stderr=self.err)
        deadline = time.monotonic() + timeout
        while not os.path.exists(pf):
            if self.proc.poll() is not None:
                raise RuntimeError('kubeapi exited with %s: %s' % (self.proc.returncode, self.stderr()))
            if time.monotonic() > deadline:
                raise RuntimeError('kubeapi did not start: %s' % self.stderr())
            time.sleep(0.05)
        with open(pf) as f:
            self.port = int(f.read())
        with open(cpf) as f:
            self.cport = int(f.read())
        return self

    def stderr(self):
        if getattr(self, 'last_stderr', None) is not None:
            return self.last_stderr
        try:
            with open(os.path.join(self.tmp, 'stderr')) as f:
                return f.read()
        except OSError:
            return ''

    def stop(self, timeout=20):
        """SIGTERM; returns the exit code (None if it had to be killed). The
        temporary directory goes too, unless $KUBEAPI_KEEP_STATE is set."""
        if self.proc is None:
            return None
        rc = self.proc.poll()
        if rc is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                rc = self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                rc = None
        self.out.close()
        self.err.close()
        self.last_stderr = None
        self.last_stderr = self.stderr()
        if not os.environ.get('KUBEAPI_KEEP_STATE'):
            shutil.rmtree(self.tmp, ignore_errors=True)
        return rc

    def path(self, name):
        return os.path.join(self.state, name)

    def context(self, cert=True, user_cert=None):
        ctx = ssl.create_default_context(cafile=self.path('ca.crt'))
        if user_cert:
            ctx.load_cert_chain(*user_cert)
        elif cert:
            ctx.load_cert_chain(self.path('admin.crt'), self.path('admin.key'))
        return ctx

    def conn(self, cert=True, user_cert=None, timeout=60):
        return http.client.HTTPSConnection(self.host, self.port, context=self.context(cert, user_cert),
                                           timeout=timeout)

    def request(self, method, path, body=None, ctype='application/json', headers=None, cert=True, token=None,
                user_cert=None, timeout=60):
        h = dict(headers or {})
        if token:
            h['Authorization'] = 'Bearer ' + token
        if body is not None and not isinstance(body, (bytes, str)):
            body = json.dumps(body)
        if body is not None:
            h.setdefault('Content-Type', ctype)
        c = self.conn(cert and not token, user_cert, timeout)
        try:
            c.request(method, path, body=body, headers=h)
            r = c.getresponse()
            raw = r.read()
            return Response(r.status, r.getheaders(), raw)
        finally:
            c.close()

    def get(self, path, **kw):
        return self.request('GET', path, **kw)

    def post(self, path, body, **kw):
        return self.request('POST', path, body, **kw)

    def put(self, path, body, **kw):
        return self.request('PUT', path, body, **kw)

    def patch(self, path, body, ptype='application/merge-patch+json', **kw):
        return self.request('PATCH', path, body, ctype=ptype, **kw)

    def delete(self, path, body=None, **kw):
        return self.request('DELETE', path, body, **kw)

    def watch(self, path, timeout=60, cert=True, token=None):
        h = {}
        if token:
            h['Authorization'] = 'Bearer ' + token
        c = self.conn(cert and not token, None, timeout)
        c.request('GET', path, headers=h)
        r = c.getresponse()
        return Watch(c, r)

    def ctl(self, method, path, body=None):
        c = http.client.HTTPConnection(self.host, self.cport, timeout=120)
        try:
            data = json.dumps(body) if body is not None else None
            c.request(method, path, body=data, headers={'Content-Type': 'application/json'} if data else {})
            r = c.getresponse()
            out = json.loads(r.read() or b'null')
            if r.status != 200:
                raise RuntimeError('control %s %s: %s %s' % (method, path, r.status, out))
            return out
        finally:
            c.close()

    def settle(self):
        return self.ctl('POST', '/settle', {'timeout': 30})

    def apply_crds(self, files=None):
        """POSTs every CRD (YAML converted to JSON here); one already present
        is replaced with a PUT. Returns [(name, status)]."""
        out = []
        for f in files or crd_files():
            for d in yaml_docs(f):
                r = self.post('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', d)
                if r.status == 409:
                    name = d['metadata']['name']
                    cur = self.get('/apis/apiextensions.k8s.io/v1/customresourcedefinitions/' + name).json
                    d = dict(d)
                    d['metadata'] = dict(d['metadata'], resourceVersion=cur['metadata']['resourceVersion'])
                    r = self.put('/apis/apiextensions.k8s.io/v1/customresourcedefinitions/' + name, d)
                out.append((d['metadata']['name'], r.status))
        self.settle()
        return out


def free_port():
    s = socket.socket()
    s.bind(('127.0.0.1', 0))
    p = s.getsockname()[1]
    s.close()
    return p
