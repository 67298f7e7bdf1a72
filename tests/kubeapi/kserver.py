"""The HTTPS front of the test kube-apiserver (authentication, routing,
discovery, verbs, watch streams, pod logs, fault injection) and its
plain-HTTP control API."""

import base64
import collections
import gzip
import http.server
import json
import os
import random
import re
import socket
import ssl
import threading
import time
import urllib.parse
import uuid

import kbuiltin
import kprotobuf
import kregistry
from kcommon import (MAX_REQUEST_BODY_BYTES, ApiError, deepcopy, dumps, err_bad_request, err_forbidden,
                     err_internal, err_not_acceptable, err_not_found, err_page_not_found,
                     err_request_entity_too_large, err_too_many_requests, err_unauthorized,
                     err_unsupported_media, go_quote, loads_tracking_duplicates, make_details,
                     now_time, status_body)
from kstore import Watcher

try:
    import yaml
except ImportError:         # the caller checks and exits 77
    yaml = None

VERSION_INFO = {'major': '1', 'minor': '26', 'gitVersion': 'v1.26.4', 'gitCommit': 'f89670c3aa4059d6999cb42e23ccb4f0b9d03979',
                'gitTreeState': 'clean', 'buildDate': '2023-04-12T12:05:35Z', 'goVersion': 'go1.19.8',
                'compiler': 'gc', 'platform': 'linux/amd64'}
IDLE_TIMEOUT = 120
TRUE_VALUES = ('1', 't', 'T', 'TRUE', 'true', 'True')
FALSE_VALUES = ('0', 'f', 'F', 'FALSE', 'false', 'False')


def _yaml_loader():
    class Loader(yaml.SafeLoader):
        pass
    # YAML timestamps stay strings, as sigs.k8s.io/yaml leaves them
    Loader.yaml_implicit_resolvers = {
        k: [(tag, rx) for tag, rx in v if tag != 'tag:yaml.org,2002:timestamp']
        for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()}
    return Loader


def load_yaml_documents(text):
    return [d for d in yaml.load_all(text, Loader=_yaml_loader()) if d is not None]


def _parse_bool(v, name):
    if v in TRUE_VALUES:
        return True
    if v in FALSE_VALUES or v == '':
        return False
    raise err_bad_request('strconv.ParseBool: parsing %s: invalid syntax' % go_quote(v))


class Request:
    """RequestInfo, as k8s.io/apiserver derives it from a URL."""

    def __init__(self, method, path, query):
        self.method = method
        self.path = path
        self.query = query
        self.resource_request = False
        self.prefix = ''
        self.group = ''
        self.version = ''
        self.namespace = ''
        self.resource = ''
        self.name = ''
        self.subresource = ''
        self.verb = method.lower()
        self.watch_prefix = False
        self.parse()

    def parse(self):
        parts = [urllib.parse.unquote(p) for p in self.path.split('/') if p]
        if not parts or parts[0] not in ('api', 'apis'):
            return
        if parts[0] == 'api':
            if len(parts) < 2:
                return
            self.prefix, self.group, self.version, rest = 'api', '', parts[1], parts[2:]
        else:
            if len(parts) < 3:
                return
            self.prefix, self.group, self.version, rest = 'apis', parts[1], parts[2], parts[3:]
        if not rest:
            return
        self.resource_request = True
        if rest[0] == 'watch':
            self.watch_prefix = True
            rest = rest[1:]
        if rest and rest[0] == 'namespaces':
            if len(rest) > 1:
                self.namespace = rest[1]
                if len(rest) > 2 and rest[2] not in ('status', 'finalize'):
                    rest = rest[2:]
        self.resource = rest[0] if rest else ''
        self.name = rest[1] if len(rest) > 1 else ''
        self.subresource = rest[2] if len(rest) > 2 else ''
        self.extra = rest[3:]
        if self.resource == 'namespaces':
            self.namespace = ''
        m = self.method
        watch = self.watch_prefix or self.query.get('watch', '') in TRUE_VALUES
        if m == 'GET' or m == 'HEAD':
            if watch:
                self.verb = 'watch'
            elif self.name:
                self.verb = 'get'
            else:
                self.verb = 'list'
        elif m == 'POST':
            self.verb = 'create'
        elif m == 'PUT':
            self.verb = 'update'
        elif m == 'PATCH':
            self.verb = 'patch'
        elif m == 'DELETE':
            self.verb = 'delete' if self.name else 'deletecollection'


class Fault:
    _ids = iter(range(1, 1 << 30))

    def __init__(self, spec):
        self.id = next(self._ids)
        self.spec = spec
        self.match = spec.get('match') or {}
        self.action = spec.get('action', 'error')
        self.count = int(spec.get('count', 1))
        self.hits = 0

    def matches(self, req, user):
        m = self.match
        if self.count > 0 and self.hits >= self.count:
            return False
        for field, val in (('method', req.method), ('verb', req.verb), ('group', req.group),
                           ('version', req.version), ('resource', req.resource), ('subresource', req.subresource),
                           ('namespace', req.namespace), ('name', req.name), ('user', (user or {}).get('name'))):
            if field in m:
                want = m[field]
                if isinstance(want, list):
                    if val not in want:
                        return False
                elif want != val:
                    return False
        if 'path' in m and not re.search(m['path'], req.path):
            return False
        if 'watch' in m and bool(m['watch']) != (req.verb == 'watch'):
            return False
        return True

    def describe(self):
        return dict(self.spec, id=self.id, hits=self.hits)


class KubeServer:
    """Everything the HTTPS handlers and the control API share."""

    def __init__(self, registry, store, controllers, ca, state_dir, log):
        self.registry = registry
        self.store = store
        self.controllers = controllers
        self.ca = ca
        self.state_dir = state_dir
        self.log = log
        self.lock = threading.Lock()
        self.tokens = {}                     # token -> user dict
        self.deny = []
        self.faults = []
        self.requests = collections.deque(maxlen=20000)
        self.req_seq = 0
        self.watches = set()
        self.logs = {}                       # (ns, pod, container) -> text
        self.logs_cv = threading.Condition()
        self.bookmark_interval = 60.0
        self.min_request_timeout = 1800
        self.port = 0
        self.host = '127.0.0.1'
        self.verbose = False

    # ------------------------------------------------------------ control operations

    def add_fault(self, spec):
        f = Fault(spec)
        with self.lock:
            self.faults.append(f)
        return f.id

    def take_fault(self, req, user):
        with self.lock:
            for f in self.faults:
                if f.matches(req, user):
                    f.hits += 1
                    return f
        return None

    def drop_watches(self, match, after=None, clean=False):
        n = 0
        with self.lock:
            ws = list(self.watches)
        for w in ws:
            info = w.info
            if any(info.get(k) != v for k, v in match.items()):
                continue
            n += 1
            if after:
                with w.cond:
                    w.drop_after = w.sent + int(after)
                    w.drop_clean = clean
            else:
                w.close(drop=not clean)
        return n

    def set_log(self, ns, pod, container, text, append=False):
        with self.logs_cv:
            k = (ns, pod, container or '')
            if append:
                self.logs[k] = self.logs.get(k, '') + text
            else:
                self.logs[k] = text
            self.logs_cv.notify_all()

    def record(self, entry):
        with self.lock:
            self.req_seq += 1
            entry['seq'] = self.req_seq
            self.requests.append(entry)


# ---------------------------------------------------------------- servers

class TLSHTTPServer(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, addr, handler, ctx, kube, family=socket.AF_INET):
        self.address_family = family
        self.ssl_ctx = ctx
        self.kube = kube
        self.conns = set()
        self.conns_lock = threading.Lock()
        super().__init__(addr, handler)

    def get_request(self):
        sock, addr = self.socket.accept()
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return self.ssl_ctx.wrap_socket(sock, server_side=True, do_handshake_on_connect=False), addr


class ControlServer(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def get_request(self):
        sock, addr = self.socket.accept()
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return sock, addr

    def __init__(self, addr, handler, kube, family=socket.AF_INET):
        self.address_family = family
        self.kube = kube
        super().__init__(addr, handler)


class _Quiet:
    def log_message(self, fmt, *args):
        kube = getattr(self.server, 'kube', None)
        if kube is not None and kube.verbose:
            kube.log('%s %s' % (self.address_string(), fmt % args))

    def version_string(self):
        return ''

    def send_response(self, code, message=None):
        self.log_request(code)
        self.send_response_only(code, message)
        self.send_header('Date', self.date_time_string())


class ApiHandler(_Quiet, http.server.BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'

    def setup(self):
        super().setup()
        try:
            self.request.settimeout(15)
            self.request.do_handshake()
            # an idle kept-alive connection is closed after a while, as Go's server does
            self.request.settimeout(IDLE_TIMEOUT)
            self.tls_ok = True
        except (ssl.SSLError, OSError):
            self.tls_ok = False
            self.close_connection = True

    def handle(self):
        if not self.tls_ok:
            return
        try:
            super().handle()
        except (ConnectionError, ssl.SSLError, OSError):
            pass

    def send_response(self, code, message=None):
        # the request log has the entry before the client can see the answer
        entry = getattr(self, 'entry', None)
        if entry is not None and 'code' not in entry:
            entry['code'] = code
            self.server.kube.record(entry)
        super().send_response(code, message)

    def do_GET(self):
        self.dispatch('GET')

    def do_HEAD(self):
        self.dispatch('HEAD')

    def do_POST(self):
        self.dispatch('POST')

    def do_PUT(self):
        self.dispatch('PUT')

    def do_PATCH(self):
        self.dispatch('PATCH')

    def do_DELETE(self):
        self.dispatch('DELETE')

    # ------------------------------------------------------------ plumbing

    def read_body(self):
        te = self.headers.get('Transfer-Encoding', '')
        if 'chunked' in te.lower():
            out = b''
            while True:
                line = self.rfile.readline()
                size = int(line.split(b';')[0].strip() or b'0', 16)
                if size == 0:
                    while self.rfile.readline() not in (b'\r\n', b'\n', b''):
                        pass
                    return out
                out += self.rfile.read(size)
                self.rfile.readline()
        n = int(self.headers.get('Content-Length') or 0)
        return self.rfile.read(n) if n else b''

    def send_bytes(self, code, body, ctype, extra=()):
        if isinstance(body, str):
            body = body.encode()
        enc = self.headers.get('Accept-Encoding', '')
        headers = list(extra)
        if len(body) > 128 * 1024 and 'gzip' in enc and code < 300:
            body = gzip.compress(body)
            headers.append(('Content-Encoding', 'gzip'))
            headers.append(('Vary', 'Accept-Encoding'))
        self.send_response(code)
        self.send_header('Audit-Id', str(uuid.uuid4()))
        self.send_header('Cache-Control', 'no-cache, private')
        self.send_header('Content-Type', ctype)
        for k, v in headers:
            self.send_header(k, v)
        if self.req_ok:
            self.send_header('X-Kubernetes-Pf-Flowschema-Uid', self.server.pf_uid)
            self.send_header('X-Kubernetes-Pf-Prioritylevel-Uid', self.server.pl_uid)
        self.send_header('Content-Length', str(len(body)))
        # headers and body in one write
        self._headers_buffer.append(b'\r\n')
        if self.command != 'HEAD':
            self._headers_buffer.append(body)
        self.flush_headers()
        self.resp_code = code

    def pretty(self):
        """kube-apiserver indents JSON for ?pretty=true and for curl and wget."""
        p = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query).get('pretty', [''])[0]
        if p:
            return p in TRUE_VALUES
        ua = self.headers.get('User-Agent', '')
        return ua.startswith('curl') or ua.startswith('Wget')

    def json_text(self, obj):
        if self.pretty():
            return dumps_pretty(obj)
        return dumps(obj) + '\n'

    def send_obj(self, code, obj, extra=()):
        fmt = getattr(self, 'out_format', 'json')
        if fmt == 'yaml':
            body = yaml.safe_dump(obj, default_flow_style=False, sort_keys=False, allow_unicode=True)
            self.send_bytes(code, body, 'application/yaml', extra)
        else:
            self.send_bytes(code, self.json_text(obj), 'application/json', extra)

    def send_error_obj(self, e):
        extra = list(e.headers)
        if e.content_type != 'application/json':
            self.send_bytes(e.code, e.body, e.content_type, extra)
        else:
            self.send_bytes(e.code, self.json_text(e.body), 'application/json', extra)

    def warnings_headers(self, ctx):
        out = []
        for w in ctx.get('warnings') or []:
            out.append(('Warning', '299 - "%s"' % w.replace('\\', '\\\\').replace('"', '\\"')))
        return out

    # ------------------------------------------------------------ request entry

    def dispatch(self, method):
        kube = self.server.kube
        self.req_ok = False
        self.resp_code = 0
        url = urllib.parse.urlsplit(self.path)
        q = {}
        for k, v in urllib.parse.parse_qsl(url.query, keep_blank_values=True):
            q.setdefault(k, v)
        req = Request(method, url.path, q)
        body = b''
        entry = {'method': method, 'path': url.path, 'query': q, 'verb': req.verb, 'group': req.group,
                 'version': req.version, 'resource': req.resource, 'subresource': req.subresource,
                 'namespace': req.namespace, 'name': req.name,
                 'contentType': self.headers.get('Content-Type', ''), 'accept': self.headers.get('Accept', ''),
                 'userAgent': self.headers.get('User-Agent', ''), 'time': now_time()}
        self.entry = entry
        user = None
        try:
            body = self.read_body()
            if body:
                try:
                    entry['body'] = json.loads(body)
                except ValueError:
                    entry['body'] = body.decode('utf-8', 'replace')[:65536]
            user = self.authenticate()
            entry['user'] = user['name'] if user else ''
            if user is None:
                raise err_unauthorized()
            self.user_name = user['name']
            self.req_ok = True
            fault = kube.take_fault(req, user)
            if fault is not None:
                entry['fault'] = fault.id
                if self.apply_fault(fault, req):
                    return
            self.authorize(req, user)
            self.out_format = self.negotiate()
            self.route(req, user, body)
        except ApiError as e:
            try:
                self.send_error_obj(e)
            except OSError:
                pass
        except (ConnectionError, ssl.SSLError, BrokenPipeError):
            self.close_connection = True
        except Exception as e:        # a bug in the test server: answer like kube does (500)
            import traceback
            kube.log('internal error: %s' % traceback.format_exc())
            try:
                self.send_error_obj(err_internal(str(e)))
            except OSError:
                pass
        finally:
            if 'code' not in entry:
                entry['code'] = self.resp_code
                kube.record(entry)
            self.entry = None

    def apply_fault(self, fault, req):
        """True when the fault answered the request."""
        spec = fault.spec
        act = fault.action
        if spec.get('delay'):
            time.sleep(float(spec['delay']))
        if act == 'delay':
            return False
        if act == 'reset':
            self.close_connection = True
            try:
                self.request.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return True
        if act == 'watch-drop':
            self.watch_drop = (int(spec.get('after', 0)), bool(spec.get('clean')))
            return False
        code = int(spec.get('code', 500))
        if 'body' in spec:
            raise ApiError(code, spec['body'], [('Retry-After', str(spec['retryAfter']))] if 'retryAfter' in spec
                           else [])
        msg = spec.get('message')
        if code == 429:
            raise err_too_many_requests(int(spec.get('retryAfter', 1)), msg or
                                        'Too many requests, please try again later.')
        if code == 500:
            raise err_internal(msg or 'injected failure')
        if code == 503:
            raise ApiError(503, status_body(503, 'ServiceUnavailable', msg or 'the server is currently unable to '
                                            'handle the request', make_details(retry=int(spec.get('retryAfter', 0)))),
                           [('Retry-After', str(spec['retryAfter']))] if 'retryAfter' in spec else [])
        if code == 504:
            raise ApiError(504, status_body(504, 'Timeout', msg or 'Timeout: request did not complete within '
                                            'requested timeout - context deadline exceeded', {}))
        reasons = {400: 'BadRequest', 401: 'Unauthorized', 403: 'Forbidden', 404: 'NotFound', 409: 'Conflict',
                   410: 'Gone', 422: 'Invalid'}
        raise ApiError(code, status_body(code, spec.get('reason', reasons.get(code, '')), msg or 'injected failure'),
                       [('Retry-After', str(spec['retryAfter']))] if 'retryAfter' in spec else [])

    def authenticate(self):
        kube = self.server.kube
        cert = None
        try:
            cert = self.request.getpeercert()
        except (ValueError, OSError):
            cert = None
        if cert:
            cn = ''
            orgs = []
            for rdn in cert.get('subject', ()):
                for k, v in rdn:
                    if k == 'commonName':
                        cn = v
                    elif k == 'organizationName':
                        orgs.append(v)
            if cn:
                return {'name': cn, 'groups': orgs + ['system:authenticated'], 'uid': ''}
        auth = self.headers.get('Authorization', '')
        if auth[:7].lower() == 'bearer ':
            tok = auth[7:].strip()
            with kube.lock:
                u = kube.tokens.get(tok)
            if u:
                return {'name': u['name'], 'groups': list(u.get('groups') or []) + ['system:authenticated'],
                        'uid': u.get('uid', '')}
        return None

    def authorize(self, req, user):
        kube = self.server.kube
        with kube.lock:
            rules = list(kube.deny)
        for r in rules:
            ok = True
            for field, val in (('user', user['name']), ('verb', req.verb), ('resource', req.resource),
                               ('subresource', req.subresource), ('namespace', req.namespace),
                               ('name', req.name), ('group', req.group)):
                if field in r and r[field] != val:
                    ok = False
            if 'groupOf' in r and r['groupOf'] not in user['groups']:
                ok = False
            if not ok:
                continue
            if not req.resource_request:
                raise err_forbidden('', '', '', 'User %s cannot %s path %s' % (go_quote(user['name']),
                                                                             req.verb, go_quote(req.path)))
            res = req.resource + ('/' + req.subresource if req.subresource else '')
            if req.namespace:
                msg = 'User %s cannot %s resource %s in API group %s in the namespace %s' % (
                    go_quote(user['name']), req.verb, go_quote(res), go_quote(req.group), go_quote(req.namespace))
            else:
                msg = 'User %s cannot %s resource %s in API group %s at the cluster scope' % (
                    go_quote(user['name']), req.verb, go_quote(res), go_quote(req.group))
            raise err_forbidden(req.group, req.resource, req.name, msg)

    def negotiate(self):
        accept = self.headers.get('Accept', '') or '*/*'
        self.partial = False
        for part in accept.split(','):
            mt, _, params = part.strip().partition(';')
            mt = mt.strip().lower()
            p = {}
            for kv in params.split(';'):
                k, _, v = kv.partition('=')
                if k.strip():
                    p[k.strip()] = v.strip()
            if p.get('as') == 'PartialObjectMetadata' or p.get('as') == 'PartialObjectMetadataList':
                if mt in ('application/json', '*/*', 'application/*'):
                    self.partial = True
                    return 'json'
                continue
            if p.get('as'):
                continue
            if mt in ('application/json', '*/*', 'application/*', ''):
                return 'json'
            if mt == 'application/yaml':
                return 'yaml'
        raise err_not_acceptable()

    def parse_body(self, body, ctype, rt=None):
        mt = (ctype or 'application/json').split(';')[0].strip().lower()
        builtin = rt is not None and rt.crd is None
        if mt == 'application/vnd.kubernetes.protobuf' and builtin:
            return self.parse_protobuf(body, rt)
        text = body.decode('utf-8', 'replace')
        if mt in ('application/json', ''):
            try:
                obj, dups = loads_tracking_duplicates(text)
            except ValueError as e:
                raise err_bad_request("couldn't get version/kind; json parse error: %s" % _go_json_error(e))
            return obj, dups, text
        if mt in ('application/yaml', 'application/apply-patch+yaml'):
            try:
                docs = load_yaml_documents(text)
            except yaml.YAMLError as e:
                raise err_bad_request('error converting YAML to JSON: %s' % str(e).replace('\n', ' '))
            if len(docs) != 1:
                raise err_bad_request('error converting YAML to JSON: expected exactly one document')
            return json.loads(json.dumps(docs[0], default=str)), [], text
        raise err_unsupported_media('the body of the request was in an unknown format - accepted media types '
                                    'include: application/json, application/yaml'
                                    + (', application/vnd.kubernetes.protobuf' if builtin else ''))

    def parse_protobuf(self, body, rt):
        """a built-in kind's body as client-go sends it (kprotobuf.py); the
        JSON text stands in for its raw form"""
        try:
            api_version, kind, obj = kprotobuf.decode(body)
        except KeyError as e:
            raise err_unsupported_media('kubeapi (test server): protobuf bodies of %s are not decoded here; '
                                        'send JSON' % e.args[0])
        except kprotobuf.DecodeError as e:
            # kube-apiserver 1.26: "... (must be of type Secret): unexpected EOF (6b387300ffff)"
            raise err_bad_request('the object provided is unrecognized (must be of type %s): %s (%s)'
                                  % (rt.kind, 'unexpected EOF' if e.truncated else e, body[:64].hex()))
        if (api_version, kind) != (rt.api_version, rt.kind):
            version = api_version.rpartition('/')[2]
            raise err_bad_request('%s in version "%s" cannot be handled as a %s: converting (%s.%s) to (%s.%s): '
                                  'unknown conversion' % (kind, version, rt.kind, version, kind,
                                                          (rt.group or 'core').split('.')[0], rt.kind))
        text = json.dumps(obj)
        return obj, [], text

    # ------------------------------------------------------------ routing

    def route(self, req, user, body):
        path = req.path.rstrip('/') or '/'
        reg = self.server.kube.registry
        if not req.resource_request:
            return self.non_resource(req, path)
        rt = reg.lookup(req.group, req.version, req.resource)
        if rt is None:
            raise err_page_not_found()
        if req.subresource and not rt.has_sub(req.subresource) or getattr(req, 'extra', None):
            raise err_page_not_found()
        if req.resource == 'namespaces' and req.subresource == 'finalize' and req.verb != 'update':
            raise err_page_not_found()
        if rt.namespaced and not req.namespace and req.verb not in ('list', 'watch'):
            raise err_page_not_found()
        if not rt.namespaced and req.namespace:
            raise err_page_not_found()
        if req.verb not in rt.verbs and not req.subresource:
            raise ApiError(405, status_body(405, 'MethodNotAllowed', '%s is not supported on resources of kind %s'
                                            % (req.verb, go_quote(kregistry_gr(rt))),
                                            make_details(group=rt.group, kind=rt.resource)))
        if req.verb in ('create', 'update', 'patch', 'delete', 'deletecollection') and \
                len(body) > MAX_REQUEST_BODY_BYTES:
            raise err_request_entity_too_large()
        ctx = self.make_ctx(req, user)
        q = req.query
        v = req.verb
        if v == 'watch':
            if req.name:
                q = dict(q)
                fs = q.get('fieldSelector')
                q['fieldSelector'] = 'metadata.name=%s' % req.name + (',' + fs if fs else '')
            return self.serve_watch(rt, req, q)
        if v == 'list':
            lm, items = reg.list(rt, req.namespace, q)
            return self.send_list(rt, lm, items)
        if req.subresource == 'scale':
            return self.serve_scale(rt, req, body, ctx)
        if v == 'get':
            if req.subresource == 'log':
                return self.serve_log(rt, req)
            obj = reg.get(rt, req.namespace, req.name, q.get('resourceVersion'))
            return self.send_item(200, rt, obj)
        if v == 'create':
            if req.name:
                raise ApiError(405, '405: Method Not Allowed\n', content_type='text/plain; charset=utf-8')
            obj, dups, raw = self.parse_body(body, self.headers.get('Content-Type'), rt)
            code, out = reg.create(rt, req.namespace, obj, ctx, dups, raw)
            return self.send_item(code, rt, out, self.warnings_headers(ctx))
        if v == 'update':
            obj, dups, raw = self.parse_body(body, self.headers.get('Content-Type'), rt)
            code, out = reg.update(rt, req.namespace, req.name, obj, ctx, req.subresource or None, dups, raw)
            return self.send_item(code, rt, out, self.warnings_headers(ctx))
        if v == 'patch':
            ctype = (self.headers.get('Content-Type') or '').split(';')[0].strip().lower()
            if ctype not in ('application/merge-patch+json', 'application/json-patch+json',
                             'application/strategic-merge-patch+json', 'application/apply-patch+yaml'):
                raise kregistry._unsupported_patch(rt)
            if ctype == 'application/apply-patch+yaml':
                pbody, _, raw = self.parse_body(body, ctype)
            else:
                try:
                    pbody = json.loads(body or b'null')
                except ValueError as e:
                    raise err_bad_request('error decoding patch: %s' % e)
                raw = body.decode('utf-8', 'replace')
            ctx['force'] = _parse_bool(q.get('force', ''), 'force')
            if ctx['force'] and ctype != 'application/apply-patch+yaml':
                raise kregistry.err_invalid('meta.k8s.io', 'PatchOptions', '', [kregistry.FieldError(
                    'FieldValueForbidden', 'force', kregistry.OMIT, 'may not be specified for non-apply patch')])
            code, out = reg.patch(rt, req.namespace, req.name, ctype, pbody, ctx, req.subresource or None, raw)
            return self.send_item(code, rt, out, self.warnings_headers(ctx))
        if v == 'delete':
            opts = self.delete_options(body, q)
            code, out, gone = reg.delete(rt, req.namespace, req.name, opts, ctx)
            if gone and not rt.strategy.return_deleted_object:
                m = out['metadata']
                st = {'kind': 'Status', 'apiVersion': 'v1', 'metadata': {}, 'status': 'Success',
                      'details': make_details(name=m['name'], group=rt.group, kind=rt.resource, uid=m.get('uid'))}
                return self.send_obj(200, st)
            return self.send_item(code, rt, out)
        if v == 'deletecollection':
            opts = self.delete_options(body, q)
            lm, items = reg.delete_collection(rt, req.namespace, opts, q, ctx)
            return self.send_list(rt, lm, items)
        raise err_page_not_found()

    def serve_scale(self, rt, req, body, ctx):
        """GET, PUT and PATCH (merge or JSON patch) of a custom resource's
        autoscaling/v1 Scale."""
        reg = self.server.kube.registry
        pbody = ptype = None
        if req.verb == 'update':
            pbody, _, _ = self.parse_body(body, self.headers.get('Content-Type'))
        elif req.verb == 'patch':
            ptype = (self.headers.get('Content-Type') or '').split(';')[0].strip().lower()
            if ptype not in ('application/merge-patch+json', 'application/json-patch+json',
                             'application/strategic-merge-patch+json'):
                raise kregistry._unsupported_patch(rt)
            try:
                pbody = json.loads(body or b'null')
            except ValueError as e:
                raise err_bad_request('error decoding patch: %s' % e)
        elif req.verb != 'get':
            raise err_page_not_found()
        code, out = reg.scale(rt, req.namespace, req.name, ctx, req.verb, pbody, ptype)
        return self.send_obj(code, out)

    def make_ctx(self, req, user):
        q = req.query
        fv = q.get('fieldValidation', '')
        if fv not in ('', 'Strict', 'Warn', 'Ignore'):
            raise err_bad_request('fieldValidation parameter unsupported: %s' % go_quote(fv))
        mgr = q.get('fieldManager', '')
        if len(mgr) > 128:
            raise kregistry.err_invalid('meta.k8s.io', 'CreateOptions', '', [kregistry.fe_too_long(
                'fieldManager', '', 128)])
        applying = req.verb == 'patch' and \
            (self.headers.get('Content-Type') or '').split(';')[0].strip() == 'application/apply-patch+yaml'
        if not mgr and not applying:
            # the prefix of the User-Agent, as kube-apiserver names a manager
            ua = self.headers.get('User-Agent', '')
            mgr = ua.split('/')[0] if ua else ''
        dry = q.get('dryRun', '')
        if dry and dry != 'All':
            raise kregistry.err_invalid('meta.k8s.io', 'CreateOptions', '', [kregistry.fe_not_supported(
                'dryRun', [dry], ['All'])])
        return {'user': user, 'manager': mgr, 'validation': fv or 'Warn', 'dry_run': dry == 'All', 'warnings': []}

    def delete_options(self, body, q):
        opts = {}
        if body:
            try:
                b = json.loads(body)
            except ValueError as e:
                raise err_bad_request("couldn't get version/kind; json parse error: %s" % _go_json_error(e))
            if isinstance(b, dict):
                opts.update({k: v for k, v in b.items() if k not in ('kind', 'apiVersion')})
        if 'propagationPolicy' in q:
            opts['propagationPolicy'] = q['propagationPolicy']
        if 'gracePeriodSeconds' in q:
            try:
                opts['gracePeriodSeconds'] = int(q['gracePeriodSeconds'])
            except ValueError:
                raise err_bad_request('strconv.ParseInt: parsing %s: invalid syntax' % go_quote(q['gracePeriodSeconds']))
        if 'orphanDependents' in q:
            opts['orphanDependents'] = _parse_bool(q['orphanDependents'], 'orphanDependents')
        if 'dryRun' in q:
            opts['dryRun'] = [q['dryRun']]
        kregistry.validate_delete_options(opts)
        return opts

    def send_item(self, code, rt, obj, extra=()):
        reg = self.server.kube.registry
        out = reg.encode(rt, obj)
        if self.partial:
            out = {'kind': 'PartialObjectMetadata', 'apiVersion': 'meta.k8s.io/v1', 'metadata': out['metadata']}
        self.send_obj(code, out, extra)

    def send_list(self, rt, lm, items):
        reg = self.server.kube.registry
        if self.partial:
            body = {'kind': 'PartialObjectMetadataList', 'apiVersion': 'meta.k8s.io/v1', 'metadata': lm,
                    'items': [{'kind': 'PartialObjectMetadata', 'apiVersion': 'meta.k8s.io/v1',
                               'metadata': reg.encode(rt, o)['metadata']} for o in items]}
            return self.send_obj(200, body)
        self.send_obj(200, reg.list_body(rt, lm, items))

    # ------------------------------------------------------------ discovery

    def non_resource(self, req, path):
        kube = self.server.kube
        reg = kube.registry
        if req.method not in ('GET', 'HEAD'):
            raise ApiError(405, '405: Method Not Allowed\n', content_type='text/plain; charset=utf-8')
        if path in ('/healthz', '/livez', '/readyz'):
            return self.send_bytes(200, 'ok', 'text/plain; charset=utf-8')
        if path == '/':
            # the root lists the paths served (Cluster API's cluster cache
            # GETs it to tell whether a workload cluster answers)
            paths = {'/api', '/api/v1', '/apis', '/apis/', '/healthz', '/livez', '/readyz', '/version'}
            for g in (g for g in reg.group_order if g):
                paths.add('/apis/' + g)
                paths.update('/apis/%s/%s' % (g, v) for v in reg.group_versions(g))
            return self.send_obj(200, {'paths': sorted(paths)})
        if path == '/version':
            return self.send_obj(200, VERSION_INFO)
        if path == '/api':
            return self.send_obj(200, {'kind': 'APIVersions', 'versions': ['v1'], 'serverAddressByClientCIDRs': [
                {'clientCIDR': '0.0.0.0/0', 'serverAddress': '%s:%d' % (kube.host, kube.port)}]})
        if path == '/api/v1':
            return self.send_obj(200, {'kind': 'APIResourceList', 'groupVersion': 'v1',
                                       'resources': self.resource_list('', 'v1')})
        if path == '/apis':
            groups = [self.group_doc(g) for g in reg.group_order]
            return self.send_obj(200, {'kind': 'APIGroupList', 'apiVersion': 'v1',
                                       'groups': [g for g in groups if g]})
        parts = [p for p in path.split('/') if p]
        if len(parts) == 2 and parts[0] == 'apis':
            g = self.group_doc(parts[1])
            if not g:
                raise err_page_not_found()
            return self.send_obj(200, dict({'kind': 'APIGroup', 'apiVersion': 'v1'}, **g))
        if len(parts) == 3 and parts[0] == 'apis':
            res = self.resource_list(parts[1], parts[2])
            if not res:
                raise err_page_not_found()
            return self.send_obj(200, {'kind': 'APIResourceList', 'apiVersion': 'v1',
                                       'groupVersion': '%s/%s' % (parts[1], parts[2]), 'resources': res})
        raise err_page_not_found()

    def group_doc(self, group):
        reg = self.server.kube.registry
        vs = reg.group_versions(group)
        if not vs:
            return None
        gvs = [{'groupVersion': '%s/%s' % (group, v), 'version': v} for v in vs]
        return {'name': group, 'versions': gvs, 'preferredVersion': gvs[0]}

    def resource_list(self, group, version):
        reg = self.server.kube.registry
        out = []
        for rt in reg.resources_of(group, version):
            r = {'name': rt.resource, 'singularName': rt.disco_singular, 'namespaced': rt.namespaced,
                 'kind': rt.kind, 'verbs': list(rt.verbs)}
            if rt.short_names:
                r['shortNames'] = rt.short_names
            if rt.categories:
                r['categories'] = rt.categories
            sv = rt.strategy.storage_version if rt.crd else rt.version
            sg = rt.group
            if rt.store_key == 'core/events':
                sg, sv = '', 'v1'
            r['storageVersionHash'] = kbuiltin.storage_version_hash(sg, sv, rt.kind)
            out.append(r)
            for sub in rt.subresources:
                verbs = list(kbuiltin.SUB_VERBS)
                if sub == 'log':
                    verbs = ['get']
                elif sub == 'finalize':
                    verbs = ['update']
                r = {'name': '%s/%s' % (rt.resource, sub), 'singularName': '', 'namespaced': rt.namespaced}
                if sub == 'scale':
                    r.update(group='autoscaling', version='v1', kind='Scale')
                else:
                    r['kind'] = rt.kind
                r['verbs'] = verbs
                out.append(r)
        return out

    # ------------------------------------------------------------ watch

    def serve_watch(self, rt, req, q):
        kube = self.server.kube
        reg = kube.registry
        lreqs, fterms = reg.parse_selectors(rt, q)
        ts = q.get('timeoutSeconds')
        timeout = 0
        if ts not in (None, ''):
            try:
                timeout = int(ts)
            except ValueError:
                raise err_bad_request('strconv.ParseInt: parsing %s: invalid syntax' % go_quote(ts))
        if timeout <= 0:
            timeout = kube.min_request_timeout * (1 + random.random())
        bookmarks = _parse_bool(q.get('allowWatchBookmarks', ''), 'allowWatchBookmarks')
        key_ns = req.namespace if rt.namespaced and req.namespace else None
        w = Watcher(rt.store_key, key_ns)
        w.info = {'resource': rt.resource, 'group': rt.group, 'namespace': req.namespace,
                  'user': getattr(self, 'user_name', '')}
        w.drop_clean = False
        drop = getattr(self, 'watch_drop', None)
        if drop is not None:
            w.drop_after = drop[0]
            w.drop_clean = drop[1]
        init, err = reg.watch_start(rt, req.namespace, q, w)
        self.send_response(200)
        self.send_header('Audit-Id', str(uuid.uuid4()))
        self.send_header('Cache-Control', 'no-cache, private')
        self.send_header('Content-Type', 'application/json')
        self.send_header('Transfer-Encoding', 'chunked')
        self.send_header('X-Kubernetes-Pf-Flowschema-Uid', self.server.pf_uid)
        self.send_header('X-Kubernetes-Pf-Prioritylevel-Uid', self.server.pl_uid)
        self.end_headers()
        self.resp_code = 200
        self.close_connection = True
        if err is not None:
            self.write_chunk(dumps({'type': 'ERROR', 'object': err}) + '\n')
            self.write_chunk('')
            return
        with kube.lock:
            kube.watches.add(w)
        deadline = time.monotonic() + timeout
        pre_bookmark_sent = False
        next_bm = time.monotonic() + kube.bookmark_interval
        abrupt = False
        try:
            for ev in init:
                if not self.send_event(rt, ev, lreqs, fterms, w):
                    abrupt = not w.drop_clean
                    return
            while True:
                now = time.monotonic()
                if now >= deadline:
                    break
                due = min(deadline, next_bm)
                if bookmarks and not pre_bookmark_sent and deadline - 2 > now:
                    due = min(due, deadline - 2)
                ev = w.wait(min(1.0, max(0.0, due - now)))
                if ev is None and self.client_gone():
                    abrupt = True
                    return
                if w.dropped:
                    abrupt = True
                    return
                if ev is not None:
                    if not self.send_event(rt, ev, lreqs, fterms, w):
                        abrupt = not w.drop_clean
                        return
                    continue
                if w.closed:
                    break
                now = time.monotonic()
                if bookmarks and (now >= next_bm or (not pre_bookmark_sent and now >= deadline - 2 and
                                                      deadline - 2 > 0)):
                    with kube.store.lock:
                        with w.cond:
                            pending = bool(w.events)
                        rv = kube.store.rv
                    if not pending:
                        obj = rt.strategy.bookmark(rt, str(rv))
                        self.write_chunk(dumps({'type': 'BOOKMARK', 'object': obj}) + '\n')
                    if now >= deadline - 2:
                        pre_bookmark_sent = True
                    next_bm = now + kube.bookmark_interval
                elif now >= next_bm:
                    next_bm = now + kube.bookmark_interval
        except (OSError, ssl.SSLError):
            abrupt = True
        finally:
            kube.store.remove_watcher(w)
            with kube.lock:
                kube.watches.discard(w)
            if abrupt:
                try:
                    self.request.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
            else:
                try:
                    self.write_chunk('')
                except OSError:
                    pass

    def send_event(self, rt, ev, lreqs, fterms, w):
        """Writes one event (if it passes the selectors). False when the
        watch is to be cut now."""
        reg = self.server.kube.registry
        t = ev.type
        cur = reg.matches(rt, ev.obj, lreqs, fterms) if t != 'DELETED' else False
        prev = reg.matches(rt, ev.prev, lreqs, fterms) if ev.prev is not None else False
        if t == 'ADDED':
            out = 'ADDED' if cur else None
        elif t == 'MODIFIED':
            if cur and prev:
                out = 'MODIFIED'
            elif cur:
                out = 'ADDED'
            elif prev:
                out = 'DELETED'
            else:
                out = None
        else:
            out = 'DELETED' if reg.matches(rt, ev.obj, lreqs, fterms) else None
        if out is None:
            return True
        obj = reg.encode(rt, ev.obj)
        if self.partial:
            obj = {'kind': 'PartialObjectMetadata', 'apiVersion': 'meta.k8s.io/v1', 'metadata': obj['metadata']}
        self.write_chunk(dumps({'type': out, 'object': obj}) + '\n')
        with w.cond:
            w.sent += 1
            if w.drop_after is not None and w.sent >= w.drop_after:
                return False
        return True

    def client_gone(self):
        """True when the client closed its end (it sends nothing while a
        stream is open, so anything readable means EOF or an error)."""
        import select
        try:
            r, _, _ = select.select([self.request], [], [], 0)
            if not r and not self.request.pending():
                return False
            self.request.settimeout(0.01)
            try:
                data = self.request.recv(1)
            finally:
                self.request.settimeout(IDLE_TIMEOUT)
            return data == b''
        except socket.timeout:
            return False
        except (OSError, ValueError):
            return True

    def write_chunk(self, s):
        b = s.encode() if isinstance(s, str) else s
        self.wfile.write(b'%x\r\n%s\r\n' % (len(b), b))

    # ------------------------------------------------------------ pod logs

    def serve_log(self, rt, req):
        kube = self.server.kube
        q = req.query
        pod = kube.registry.get(rt, req.namespace, req.name)
        spec = pod.get('spec') or {}
        names = [c.get('name') for c in spec.get('containers') or []]
        allnames = names + [c.get('name') for c in spec.get('initContainers') or []] + \
            [c.get('name') for c in spec.get('ephemeralContainers') or []]
        c = q.get('container', '')
        if not c:
            if len(names) == 1:
                c = names[0]
            else:
                raise err_bad_request('a container name must be specified for pod %s, choose one of: [%s]'
                                      % (req.name, ' '.join(names)))
        elif c not in allnames:
            raise err_bad_request('container %s is not valid for pod %s' % (c, req.name))
        if not spec.get('nodeName'):
            raise err_bad_request('pod %s does not have a host assigned' % req.name)
        follow = _parse_bool(q.get('follow', ''), 'follow')
        key = (req.namespace, req.name, c)
        with kube.logs_cv:
            text = kube.logs.get(key, '')
        text = _tail(text, q.get('tailLines'))
        limit = q.get('limitBytes')
        if not follow:
            if limit:
                text = text[:int(limit)]
            return self.send_bytes(200, text, 'text/plain')
        self.send_response(200)
        self.send_header('Audit-Id', str(uuid.uuid4()))
        self.send_header('Cache-Control', 'no-cache, private')
        self.send_header('Content-Type', 'text/plain')
        self.send_header('Transfer-Encoding', 'chunked')
        self.end_headers()
        self.resp_code = 200
        self.close_connection = True
        sent = len(kube.logs.get(key, ''))
        try:
            if text:
                self.write_chunk(text)
            while True:
                with kube.logs_cv:
                    kube.logs_cv.wait(0.5)
                    full = kube.logs.get(key, '')
                if len(full) > sent:
                    self.write_chunk(full[sent:])
                    sent = len(full)
                if kube.store.get(rt.store_key, req.namespace, req.name) is None:
                    break
                if self.client_gone():
                    return
            self.write_chunk('')
        except OSError:
            pass


def dumps_pretty(obj):
    import re as _re
    s = json.dumps(obj, ensure_ascii=False, indent=2, separators=(',', ': '), allow_nan=False)
    return _re.sub('[<>&\u2028\u2029]', lambda m: '\\u%04x' % ord(m.group(0)), s)


def kregistry_gr(rt):
    return rt.resource if not rt.group else '%s.%s' % (rt.resource, rt.group)


def _tail(text, n):
    if n in (None, ''):
        return text
    n = int(n)
    lines = text.splitlines(keepends=True)
    return ''.join(lines[-n:]) if n > 0 else ''


def _go_json_error(e):
    return str(e)


# ---------------------------------------------------------------- control API

class ControlHandler(_Quiet, http.server.BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'

    def reply(self, code, obj):
        body = (json.dumps(obj, indent=1) + '\n').encode()
        self.send_response(code)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def body(self):
        n = int(self.headers.get('Content-Length') or 0)
        if not n:
            return {}
        return json.loads(self.rfile.read(n))

    def do_GET(self):
        self.handle_ctl('GET')

    def do_POST(self):
        self.handle_ctl('POST')

    def do_DELETE(self):
        self.handle_ctl('DELETE')

    def handle_ctl(self, method):
        kube = self.server.kube
        try:
            path = urllib.parse.urlsplit(self.path).path.rstrip('/')
            q = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(self.path).query))
            b = self.body() if method == 'POST' else {}
            out = control(kube, method, path, q, b)
            if out is None:
                return self.reply(404, {'error': 'no such control endpoint: %s %s' % (method, path)})
            self.reply(200, out)
        except ApiError as e:
            self.reply(e.code, {'error': e.body if isinstance(e.body, str) else e.body})
        except (ValueError, KeyError, TypeError) as e:
            self.reply(400, {'error': '%s: %s' % (type(e).__name__, e)})


def control(kube, method, path, q, b):
    """The control API; returns a JSON-able answer or None (unknown)."""
    store = kube.store
    reg = kube.registry
    if method == 'GET' and path in ('', '/state'):
        with kube.lock:
            ws = [dict(w.info, sent=w.sent) for w in kube.watches]
        return {'port': kube.port, 'resourceVersion': store.current(), 'floor': store.floor,
                'window': store.window, 'watches': ws, 'faults': [f.describe() for f in kube.faults],
                'bookmarkInterval': kube.bookmark_interval}
    if path == '/faults':
        if method == 'POST':
            return {'id': kube.add_fault(b)}
        if method == 'GET':
            with kube.lock:
                return {'faults': [f.describe() for f in kube.faults]}
        if method == 'DELETE':
            with kube.lock:
                kube.faults.clear()
            return {}
    m = re.match(r'^/faults/(\d+)$', path)
    if m and method == 'DELETE':
        with kube.lock:
            kube.faults[:] = [f for f in kube.faults if f.id != int(m.group(1))]
        return {}
    if path == '/watches/drop' and method == 'POST':
        return {'dropped': kube.drop_watches(b.get('match') or {}, b.get('after'), bool(b.get('clean')))}
    if path == '/window' and method == 'POST':
        if 'size' in b:
            store.set_window(int(b['size']))
        if b.get('compact'):
            store.compact(b.get('rv'))
        return {'floor': store.floor, 'window': store.window, 'resourceVersion': store.current()}
    if path == '/compact' and method == 'POST':
        store.compact(b.get('rv'))
        return {'floor': store.floor, 'resourceVersion': store.current()}
    if path == '/bookmarks' and method == 'POST':
        kube.bookmark_interval = float(b['interval'])
        return {'bookmarkInterval': kube.bookmark_interval}
    if path == '/pods/log' and method == 'POST':
        kube.set_log(b['namespace'], b['name'], b.get('container', ''), b.get('text', ''), bool(b.get('append')))
        if not b.get('container'):
            rt = reg.lookup('', 'v1', 'pods')
            pod = store.get(rt.store_key, b['namespace'], b['name'])
            if pod and len((pod.get('spec') or {}).get('containers') or []) == 1:
                kube.set_log(b['namespace'], b['name'], pod['spec']['containers'][0].get('name', ''),
                             b.get('text', ''), bool(b.get('append')))
        return {}
    if path == '/nodes/conditions' and method == 'POST':
        return {'node': set_node_conditions(kube, b['name'], b.get('conditions') or [], b.get('create', True))}
    if path == '/tokens':
        if method == 'POST':
            with kube.lock:
                kube.tokens[b['token']] = {'name': b['user'], 'groups': b.get('groups') or [],
                                           'uid': b.get('uid', '')}
            return {}
        if method == 'DELETE':
            with kube.lock:
                kube.tokens.pop(q.get('token', ''), None)
            return {}
    if path == '/deny':
        if method == 'POST':
            with kube.lock:
                kube.deny.append(b)
            return {}
        if method == 'DELETE':
            with kube.lock:
                kube.deny.clear()
            return {}
    if path == '/requests':
        if method == 'GET':
            since = int(q.get('since', 0))
            with kube.lock:
                return {'requests': [r for r in kube.requests if r['seq'] > since]}
        if method == 'DELETE':
            with kube.lock:
                kube.requests.clear()
            return {}
    if path == '/settle' and method == 'POST':
        return {'settled': kube.controllers.settle(float(b.get('timeout', 30)))}
    if path == '/kubelet' and method == 'POST':
        kube.controllers.pod_deletion_delay = b.get('podDeletionDelay')
        kube.controllers.kick()
        return {'podDeletionDelay': kube.controllers.pod_deletion_delay}
    if path == '/csr-signing' and method == 'POST':
        kube.controllers.csr_signing = bool(b.get('enabled', True))
        kube.controllers.kick()
        return {'enabled': kube.controllers.csr_signing}
    if path == '/certs' and method == 'POST':
        return issue_client(kube, b['user'], b.get('groups') or [], b.get('name'))
    if path == '/apply' and method == 'POST':
        return {'results': apply_documents(kube, b.get('paths') or [], b.get('documents') or [])}
    if path == '/healthz':
        return {'ok': True}
    return None


def set_node_conditions(kube, name, conditions, create):
    reg = kube.registry
    rt = reg.lookup('', 'v1', 'nodes')
    now = now_time()
    if kube.store.get(rt.store_key, '', name) is None:
        if not create:
            raise err_not_found('', 'nodes', name)
        reg.internal_create(rt, '', {'metadata': {'name': name, 'labels': {'kubernetes.io/hostname': name}},
                                     'spec': {}, 'status': {}}, 'kubelet')

    def fn(o):
        st = o.setdefault('status', {})
        conds = st.setdefault('conditions', [])
        for c in conditions:
            c = dict(c)
            old = next((x for x in conds if x.get('type') == c.get('type')), None)
            c.setdefault('lastHeartbeatTime', now)
            if old is None or old.get('status') != c.get('status'):
                c.setdefault('lastTransitionTime', now)
            else:
                c.setdefault('lastTransitionTime', old.get('lastTransitionTime', now))
            c.setdefault('reason', '')
            c.setdefault('message', '')
            order = ['type', 'status', 'lastHeartbeatTime', 'lastTransitionTime', 'reason', 'message']
            c = {k: c[k] for k in order if k in c}
            if old is None:
                conds.append(c)
            else:
                conds[conds.index(old)] = c
    obj = reg.internal_update(rt.store_key, '', name, fn, 'kubelet', 'status')
    return reg.encode(rt, obj)


def issue_client(kube, user, groups, name=None):
    name = name or re.sub(r'[^A-Za-z0-9_.-]', '_', user)
    crt, key = kube.ca.issue(kube.state_dir, 'client-' + name, user, groups)
    kc = os.path.join(kube.state_dir, 'kubeconfig-' + name)
    write_kubeconfig(kc, kube.port, getattr(kube.ca, 'cert_path_public', kube.ca.cert_path), user=name, cert=crt,
                     key=key, host=kube.host)
    return {'cert': crt, 'key': key, 'kubeconfig': kc}


def write_kubeconfig(path, port, ca_path, user='admin', cert=None, key=None, token=None, embed=True,
                     host='127.0.0.1'):
    def data(p):
        with open(p, 'rb') as f:
            return base64.b64encode(f.read()).decode()
    lines = ['apiVersion: v1', 'kind: Config', 'clusters:', '- cluster:']
    if embed:
        lines.append('    certificate-authority-data: %s' % data(ca_path))
    else:
        lines.append('    certificate-authority: %s' % ca_path)
    lines += ['    server: https://%s:%d' % (host, port), '  name: kubeapi', 'contexts:', '- context:',
              '    cluster: kubeapi', '    namespace: default', '    user: %s' % user,
              '  name: %s@kubeapi' % user, 'current-context: %s@kubeapi' % user, 'preferences: {}', 'users:',
              '- name: %s' % user, '  user:']
    if token:
        lines.append('    token: %s' % token)
    elif embed:
        lines.append('    client-certificate-data: %s' % data(cert))
        lines.append('    client-key-data: %s' % data(key))
    else:
        lines.append('    client-certificate: %s' % cert)
        lines.append('    client-key: %s' % key)
    fd = os.open(path + '.tmp', os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, 'w') as f:
        f.write('\n'.join(lines) + '\n')
    os.rename(path + '.tmp', path)


def _resource_for(reg, obj):
    av = obj.get('apiVersion', '')
    kind = obj.get('kind', '')
    g, _, v = av.rpartition('/')
    with reg.lock:
        for rt in reg.types.values():
            if rt.group == g and rt.version == v and rt.kind == kind:
                return rt
    return None


def apply_documents(kube, paths, documents):
    """Creates (or replaces) the objects of YAML files as the admin would
    with create-or-update; CRDs are waited for until Established."""
    reg = kube.registry
    docs = list(documents)
    for p in paths:
        files = [p]
        if os.path.isdir(p):
            files = sorted(os.path.join(p, f) for f in os.listdir(p) if f.endswith(('.yaml', '.yml', '.json')))
        for f in files:
            with open(f) as fh:
                docs.extend(load_yaml_documents(fh.read()))
    results = []
    admin = {'name': 'kubernetes-admin', 'groups': ['system:masters', 'system:authenticated']}
    for d in docs:
        d = json.loads(json.dumps(d, default=str))
        if d.get('kind', '').endswith('List') and isinstance(d.get('items'), list):
            docs.extend(d['items'])
            continue
        rt = _resource_for(reg, d)
        if rt is None:
            # a custom resource whose CRD came earlier in the batch: served once Established
            kube.controllers.settle(30)
            rt = _resource_for(reg, d)
        name = (d.get('metadata') or {}).get('name', '')
        if rt is None:
            results.append({'name': name, 'kind': d.get('kind'), 'code': 404, 'error': 'no such resource type'})
            continue
        ns = (d.get('metadata') or {}).get('namespace') or ('default' if rt.namespaced else '')
        ctx = {'user': admin, 'manager': 'kubeapi-apply', 'validation': 'Warn', 'warnings': []}
        try:
            code, obj = reg.create(rt, ns, d, ctx)
        except ApiError as e:
            if e.code == 409:
                cur = reg.get(rt, ns, name)
                d2 = deepcopy(d)
                d2.setdefault('metadata', {})['resourceVersion'] = cur['metadata']['resourceVersion']
                try:
                    code, obj = reg.update(rt, ns, name, d2, dict(ctx, warnings=[]))
                except ApiError as e2:
                    results.append({'name': name, 'kind': rt.kind, 'code': e2.code, 'error': e2.body})
                    continue
            else:
                results.append({'name': name, 'kind': rt.kind, 'code': e.code, 'error': e.body})
                continue
        results.append({'name': name, 'kind': rt.kind, 'code': code})
    kube.controllers.settle(30)
    return results
