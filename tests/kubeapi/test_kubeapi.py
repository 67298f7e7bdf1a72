#!/usr/bin/python3
"""Tests of the test kube-apiserver: it must answer as the real
kube-apiserver did in tests/reference/observed/kube (same status codes, same Status
bodies and messages, same list and watch framing), accept every reference CRD
unchanged, and implement the semantics clients rely on."""

import base64
import calendar
import copy
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

try:
    import yaml  # noqa: F401
except ImportError:
    print('SKIP: python3-yaml is not installed (apt-get install python3-yaml)')
    sys.exit(77)

import kubeapi_harness as H  # noqa: E402

AGENTS = '/apis/agent-install.openshift.io/v1beta1/namespaces/demo/agents'
DYNAMIC = ('uid', 'resourceVersion', 'creationTimestamp', 'deletionTimestamp', 'time', 'lastTransitionTime')

SERVER = None


def setUpModule():
    global SERVER
    SERVER = H.Server().start()
    SERVER.apply_crds()


def stop_clean(server):
    """Stops a server, which must exit 0 without an internal error logged."""
    rc = server.stop()
    if rc != 0:
        raise AssertionError('kubeapi exited with %s on SIGTERM: %s' % (rc, server.stderr()))
    if 'Traceback' in server.stderr():
        raise AssertionError('kubeapi logged an internal error: %s' % server.stderr())


def tearDownModule():
    if SERVER is not None:
        stop_clean(SERVER)


def obs(name):
    for f in os.listdir(H.observed_dir()):
        if f.startswith(name + '-') or f == name + '.json':
            with open(os.path.join(H.observed_dir(), f)) as fh:
                return json.load(fh)
    raise KeyError(name)


def norm(o):
    """Replaces the values a second run cannot reproduce. managedFields are
    ordered by time (to the second), so entries are compared by manager."""
    if isinstance(o, dict):
        out = {}
        for k, v in o.items():
            if k in DYNAMIC and isinstance(v, str):
                out[k] = '<%s>' % k
            elif k == 'managedFields' and isinstance(v, list):
                out[k] = sorted((norm(x) for x in v), key=lambda e: (e.get('operation'), e.get('manager'),
                                                                      e.get('subresource', '')))
            else:
                out[k] = norm(v)
        return out
    if isinstance(o, list):
        return [norm(x) for x in o]
    return o


def load_yaml(path):
    with open(path) as f:
        return yaml.safe_load(f)


def keys_deep(o):
    """The key structure (order included) of a JSON value."""
    if isinstance(o, dict):
        return [(k, keys_deep(v)) for k, v in o.items()]
    if isinstance(o, list):
        return [keys_deep(x) for x in o]
    return type(o).__name__


class ObservedExchanges(unittest.TestCase):
    """The exchanges of observed/kube replayed in their recorded order."""
    maxDiff = None
    s = None

    @classmethod
    def setUpClass(cls):
        cls.s = SERVER

    def assert_same(self, mine, theirs, msg=''):
        self.assertEqual(json.dumps(norm(mine), indent=1), json.dumps(norm(theirs), indent=1), msg)

    def replay(self, name, **kw):
        o = obs(name)
        rq = o['request']
        body = rq.get('body')
        path = rq['path']
        ct = rq.get('content_type') or 'application/json'
        r = self.s.request(rq['method'], path, body, ctype=ct, **kw)
        self.assertEqual(r.status, o['response']['status'], r.raw[:2000])
        return o, r

    def test_01_discovery_api(self):
        o = obs('01')
        r = self.s.get('/api')
        self.assertEqual(r.status, 200)
        exp = copy.deepcopy(o['response']['body'])
        exp['serverAddressByClientCIDRs'][0]['serverAddress'] = '127.0.0.1:%d' % self.s.port
        self.assertEqual(r.json, exp)
        self.assertEqual(r.raw, (json.dumps(exp, separators=(',', ':')) + '\n').encode())
        self.assertEqual(r.header('Content-Type'), 'application/json')

    def test_02_discovery_apis(self):
        o = obs('02')
        r = self.s.get('/apis')
        self.assertEqual(r.status, 200)
        self.assertEqual(r.json['kind'], 'APIGroupList')
        self.assertEqual(r.json['apiVersion'], 'v1')
        real = {g['name']: g for g in o['response']['body']['groups']}
        mine = {g['name']: g for g in r.json['groups']}
        for g in ('events.k8s.io', 'coordination.k8s.io', 'certificates.k8s.io', 'apiextensions.k8s.io'):
            self.assertEqual(mine[g], real[g])
            self.assertEqual(list(mine[g]), list(real[g]))
        # the CRD groups follow, as on the real server
        for g in ('agent-install.openshift.io', 'extensions.hive.openshift.io', 'hive.openshift.io', 'metal3.io',
                  'config.openshift.io'):
            self.assertIn(g, mine)
            self.assertEqual(keys_deep(mine[g]), keys_deep(real['batch']))

    def test_03_crds_applied(self):
        o = obs('03')
        mine = {}
        for f in H.crd_files():
            for d in H.yaml_docs(f):
                mine.setdefault(d['metadata']['name'], d)
        for name, code in o['results']:
            self.assertEqual(code, 201)
            self.assertIn(name, mine)
        crds = self.s.get('/apis/apiextensions.k8s.io/v1/customresourcedefinitions').json
        self.assertEqual(crds['kind'], 'CustomResourceDefinitionList')
        names = {c['metadata']['name'] for c in crds['items']}
        self.assertEqual(names, set(mine))
        for c in crds['items']:
            conds = {x['type']: x['status'] for x in c['status']['conditions']}
            self.assertEqual(conds, {'NamesAccepted': 'True', 'Established': 'True'}, c['metadata']['name'])

    def test_04_crd_established(self):
        o = obs('04')
        r = self.s.get('/apis/apiextensions.k8s.io/v1/customresourcedefinitions/agents.agent-install.openshift.io')
        self.assertEqual(r.status, 200)
        mine = r.json
        for v in mine['spec']['versions']:
            v['schema'] = '<openAPIV3Schema elided>'
        self.assert_same(mine, o['response']['body'])

    def test_05_discovery_group(self):
        o = obs('05')
        r = self.s.get(o['request']['path'])
        self.assertEqual(r.status, 200)
        exp = o['response']['body']
        self.assertEqual([k for k in r.json if k != 'resources'], [k for k in exp if k != 'resources'])
        key = lambda x: x['name']
        self.assertEqual(sorted(r.json['resources'], key=key), sorted(exp['resources'], key=key))
        for res in r.json['resources']:
            ref = next(x for x in exp['resources'] if x['name'] == res['name'])
            self.assertEqual(list(res), list(ref))

    def test_06_namespace_create(self):
        o, r = self.replay('06')
        self.assert_same(r.json, o['response']['body'])
        self.assertEqual(keys_deep(r.json), keys_deep(o['response']['body']))

    def test_07_create_agent(self):
        o, r = self.replay('07')
        self.assert_same(r.json, o['response']['body'])
        self.assertEqual(keys_deep(r.json), keys_deep(o['response']['body']))
        type(self).agent_rv = int(r.json['metadata']['resourceVersion'])

    def test_07a_create_with_resourceversion(self):
        o, r = self.replay('07a')
        self.assertEqual(r.json, o['response']['body'])

    def test_08_get_missing(self):
        o, r = self.replay('08')
        self.assertEqual(r.json, o['response']['body'])
        self.assertEqual(r.raw, (json.dumps(o['response']['body'], separators=(',', ':')) + '\n').encode())

    def test_09_create_duplicate(self):
        o, r = self.replay('09')
        self.assertEqual(r.json, o['response']['body'])

    def _current(self):
        return self.s.get(AGENTS + '/0479107b-3436-45d3-83a8-cb9a1dc4fb9e').json

    def test_10_update_ok(self):
        o = obs('10')
        body = copy.deepcopy(o['request']['body'])
        cur = self._current()
        body['metadata']['resourceVersion'] = cur['metadata']['resourceVersion']
        body['metadata']['uid'] = cur['metadata']['uid']
        body['metadata']['managedFields'] = cur['metadata']['managedFields']
        r = self.s.put(o['request']['path'], body)
        self.assertEqual(r.status, 200, r.raw)
        self.assert_same(r.json, o['response']['body'])
        self.assertEqual(r.json['metadata']['generation'], 2)
        self.assertGreater(int(r.json['metadata']['resourceVersion']), int(cur['metadata']['resourceVersion']))
        type(self).rv10 = r.json['metadata']['resourceVersion']

    def test_11_update_stale(self):
        o = obs('11')
        body = copy.deepcopy(o['request']['body'])
        body['metadata']['resourceVersion'] = str(self.agent_rv)
        r = self.s.put(o['request']['path'], body)
        self.assertEqual(r.status, 409)
        self.assertEqual(r.json, o['response']['body'])

    def test_12_create_invalid(self):
        o, r = self.replay('12')
        self.assertEqual(r.json, o['response']['body'])

    def test_13_create_unknown_field(self):
        o, r = self.replay('13')
        self.assert_same(r.json, o['response']['body'])
        self.assertEqual(r.headers_all('Warning'), [o['response']['headers']['Warning']])

    def test_13b_create_unknown_field_strict(self):
        o, r = self.replay('13b')
        self.assertEqual(r.json, o['response']['body'])
        self.assertIsNone(self.s.get(AGENTS + '/strict-agent').json.get('spec'))

    def test_14_update_main_ignores_status(self):
        o = obs('14')
        body = copy.deepcopy(o['request']['body'])
        cur = self._current()
        body['metadata']['resourceVersion'] = cur['metadata']['resourceVersion']
        body['metadata']['uid'] = cur['metadata']['uid']
        body['metadata']['managedFields'] = cur['metadata']['managedFields']
        r = self.s.put(o['request']['path'], body)
        self.assertEqual(r.status, 200, r.raw)
        self.assert_same(r.json, o['response']['body'])
        # nothing changed: no new resourceVersion
        self.assertEqual(r.json['metadata']['resourceVersion'], self.rv10)

    def test_15_update_status(self):
        o = obs('15')
        body = copy.deepcopy(o['request']['body'])
        cur = self._current()
        body['metadata']['resourceVersion'] = cur['metadata']['resourceVersion']
        body['metadata']['uid'] = cur['metadata']['uid']
        body['metadata']['managedFields'] = cur['metadata']['managedFields']
        r = self.s.put(o['request']['path'], body)
        self.assertEqual(r.status, 200, r.raw)
        self.assert_same(r.json, o['response']['body'])
        self.assertEqual(r.json['spec']['hostname'], 'h1')
        self.assertEqual(r.json['metadata']['generation'], 2)

    def test_16_merge_patch_status(self):
        o, r = self.replay('16')
        self.assert_same(r.json, o['response']['body'])

    def test_17_json_patch(self):
        o, r = self.replay('17')
        self.assert_same(r.json, o['response']['body'])

    def test_17b_json_patch_test_fails(self):
        o, r = self.replay('17b')
        self.assertEqual(r.json, o['response']['body'])

    def _page_agents(self):
        base = copy.deepcopy(obs('09')['request']['body'])
        for i in range(3):
            b = copy.deepcopy(base)
            b['metadata']['name'] = 'page-%d' % i
            b['metadata']['labels'] = {'page': 'yes', 'idx': str(i)}
            r = self.s.post(AGENTS, b)
            self.assertEqual(r.status, 201, r.raw)

    def test_18_list_selector_pages(self):
        self._page_agents()
        o18, o19 = obs('18'), obs('19')
        r = self.s.get(o18['request']['path'])
        self.assertEqual(r.status, 200)
        exp = o18['response']['body']
        self.assertEqual(list(r.json), list(exp))
        self.assertEqual(list(r.json['metadata']), list(exp['metadata']))
        self.assertEqual([i['metadata']['name'] for i in r.json['items']], ['page-0', 'page-1'])
        self.assert_same(r.json['items'], exp['items'])
        tok = json.loads(base64.b64decode(r.json['metadata']['continue']))
        self.assertEqual(tok, {'v': 'meta.k8s.io/v1', 'rv': int(r.json['metadata']['resourceVersion']),
                               'start': 'page-1\x00'})
        self.assertEqual(base64.b64decode(r.json['metadata']['continue']).decode().split('"start":')[1],
                         base64.b64decode(exp['metadata']['continue']).decode().split('"start":')[1])
        list_rv = r.json['metadata']['resourceVersion']
        r2 = self.s.get(AGENTS + '?labelSelector=page%3Dyes&limit=2&continue=' + r.json['metadata']['continue'])
        self.assertEqual(r2.status, 200)
        self.assertEqual([i['metadata']['name'] for i in r2.json['items']], ['page-2'])
        self.assertEqual(r2.json['metadata'], {'continue': '', 'resourceVersion': list_rv})
        self.assertEqual(keys_deep(r2.json), keys_deep(o19['response']['body']))

    def test_20_list_field_selector(self):
        o = obs('20')
        r = self.s.get(o['request']['path'])
        self.assertEqual(r.status, 200)
        self.assertEqual([i['metadata']['name'] for i in r.json['items']], ['page-1'])
        self.assertEqual(keys_deep(r.json), keys_deep(o['response']['body']))

    def test_20b_list_set_selector(self):
        o = obs('20b')
        r = self.s.get(o['request']['path'])
        self.assertEqual(r.status, 200)
        self.assertEqual([i['metadata']['name'] for i in r.json['items']], ['page-0', 'page-2'])
        self.assertEqual(keys_deep(r.json), keys_deep(o['response']['body']))

    def test_21_watch_stream(self):
        o = obs('21')
        rv = self.s.get(AGENTS + '?limit=1').json['metadata']['resourceVersion']
        w = self.s.watch(AGENTS + '?watch=1&resourceVersion=%s&allowWatchBookmarks=true&timeoutSeconds=6' % rv)
        self.assertEqual(w.status, 200)
        hd = dict(w.headers)
        self.assertEqual(hd['Content-Type'], 'application/json')
        self.assertEqual(hd['Transfer-Encoding'], 'chunked')
        base = copy.deepcopy(obs('09')['request']['body'])
        base['metadata']['name'] = 'watched'
        self.assertEqual(self.s.post(AGENTS, base).status, 201)
        self.assertEqual(self.s.patch(AGENTS + '/watched', {'metadata': {'labels': {'w': '1'}}}).status, 200)
        self.assertEqual(self.s.delete(AGENTS + '/watched').status, 200)
        events = w.rest()
        w.close()
        exp = [e for e in o['stream'][1:]]
        self.assertEqual([e['type'] for e in events], [e['type'] for e in exp])
        for mine, theirs in zip(events, exp):
            self.assertEqual(list(mine), list(theirs))
            self.assert_same(mine['object'], theirs['object'])
        rvs = [int(e['object']['metadata']['resourceVersion']) for e in events]
        self.assertEqual(rvs, sorted(rvs))
        self.assertEqual(rvs[-1], rvs[-2])       # the bookmark carries the last resourceVersion

    def test_22_watch_too_old(self):
        o = obs('22')
        w = self.s.watch(AGENTS + '?watch=1&resourceVersion=1')
        self.assertEqual(w.status, o['stream'][0]['status'])
        events = w.rest()
        w.close()
        self.assertEqual(len(events), 1)
        exp = o['stream'][1]
        self.assertEqual(events[0]['type'], 'ERROR')
        got = events[0]['object']
        self.assertRegex(got['message'], r'^too old resource version: 1 \(\d+\)$')
        got = dict(got, message=exp['object']['message'])
        self.assertEqual(events[0]['type'], exp['type'])
        self.assertEqual(got, exp['object'])
        self.assertEqual(list(got), list(exp['object']))

    def test_23_to_26_finalizers(self):
        base = copy.deepcopy(obs('09')['request']['body'])
        base['metadata']['name'] = 'finalized'
        base['metadata']['finalizers'] = ['agent.agent-install.openshift.io/ai-deprovision']
        self.assertEqual(self.s.post(AGENTS, base).status, 201)
        o23 = obs('23')
        r = self.s.delete(o23['request']['path'])
        self.assertEqual(r.status, 200)
        self.assert_same(r.json, o23['response']['body'])
        self.assertEqual(r.json['metadata']['generation'], 2)
        o24 = obs('24')
        r24 = self.s.get(o24['request']['path'])
        self.assertEqual(r24.status, 200)
        self.assert_same(r24.json, o24['response']['body'])
        self.assertEqual(r24.json['metadata']['resourceVersion'], r.json['metadata']['resourceVersion'])
        o25, r25 = self.replay('25')
        self.assert_same(r25.json, o25['response']['body'])
        self.assertEqual(r25.json['metadata']['resourceVersion'], r.json['metadata']['resourceVersion'])
        o26, r26 = self.replay('26')
        self.assertEqual(r26.json, o26['response']['body'])

    def test_27_delete_plain(self):
        o = obs('27')
        uid = self.s.get(o['request']['path']).json['metadata']['uid']
        r = self.s.delete(o['request']['path'])
        self.assertEqual(r.status, 200)
        exp = dict(o['response']['body'])
        exp['details'] = dict(exp['details'], uid=uid)
        self.assertEqual(r.json, exp)
        self.assertEqual(list(r.json), list(exp))

    def test_28_event_create(self):
        o, r = self.replay('28')
        self.assert_same(r.json, o['response']['body'])
        self.assertEqual(keys_deep(r.json), keys_deep(o['response']['body']))

    def test_29_lease_create(self):
        o, r = self.replay('29')
        self.assert_same(r.json, o['response']['body'])
        self.assertEqual(keys_deep(r.json), keys_deep(o['response']['body']))

    def test_30_cluster_scoped_create(self):
        o, r = self.replay('30')
        self.assert_same(r.json, o['response']['body'])
        self.assertEqual(keys_deep(r.json), keys_deep(o['response']['body']))

    def test_31_secret_create(self):
        o, r = self.replay('31')
        self.assert_same(r.json, o['response']['body'])
        self.assertEqual(keys_deep(r.json), keys_deep(o['response']['body']))

    def test_32_wrong_namespace_in_body(self):
        o, r = self.replay('32')
        self.assertEqual(r.json, o['response']['body'])

    def test_33_unknown_resource(self):
        o, r = self.replay('33')
        self.assertEqual(r.text, o['response']['body'])
        self.assertEqual(r.header('Content-Type'), o['response']['headers']['Content-Type'])

    def test_34_unauthenticated(self):
        o = obs('34')
        r = self.s.request('GET', o['request']['path'], cert=False)
        self.assertEqual(r.status, 401)
        self.assertEqual(r.json, o['response']['body'])

    def test_35_bad_token(self):
        o = obs('35')
        r = self.s.request('GET', o['request']['path'], token='not-a-token')
        self.assertEqual(r.status, 401)
        self.assertEqual(r.json, o['response']['body'])


# ---------------------------------------------------------------- helpers for the behaviour tests

def ns_create(s, name):
    r = s.post('/api/v1/namespaces', {'apiVersion': 'v1', 'kind': 'Namespace', 'metadata': {'name': name}})
    assert r.status in (201, 409), r
    return r


def agent_body(name, labels=None, **spec):
    b = {'apiVersion': 'agent-install.openshift.io/v1beta1', 'kind': 'Agent',
         'metadata': {'name': name}, 'spec': {'approved': False, 'role': 'worker'}}
    if labels:
        b['metadata']['labels'] = labels
    b['spec'].update(spec)
    return b


def agents(ns):
    return '/apis/agent-install.openshift.io/v1beta1/namespaces/%s/agents' % ns


def cm_body(name, data=None, **meta):
    b = {'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': dict({'name': name}, **meta)}
    if data is not None:
        b['data'] = data
    return b


def wait_for(fn, timeout=30, what=''):
    """Polls fn until it returns a true value (the server's controllers are
    asynchronous, like the real ones). Not a timing assertion: the limit
    only stops a broken server from hanging the test."""
    deadline = time.monotonic() + timeout
    while True:
        v = fn()
        if v:
            return v
        if time.monotonic() > deadline:
            raise AssertionError('timed out waiting for %s' % what)
        time.sleep(0.05)


class Base(unittest.TestCase):
    maxDiff = None
    ns = None

    @classmethod
    def setUpClass(cls):
        cls.s = SERVER
        if cls.ns:
            ns_create(cls.s, cls.ns)

    def ok(self, r, code=200):
        self.assertEqual(r.status, code, r.raw[:3000])
        return r.json


# ---------------------------------------------------------------- CRDs and schemas

TEST_CRD = {
    'apiVersion': 'apiextensions.k8s.io/v1', 'kind': 'CustomResourceDefinition',
    'metadata': {'name': 'widgets.test.cradle.io'},
    'spec': {'group': 'test.cradle.io', 'scope': 'Namespaced',
             'names': {'plural': 'widgets', 'singular': 'widget', 'kind': 'Widget', 'shortNames': ['wd']},
             'versions': [{'name': 'v1', 'served': True, 'storage': True, 'subresources': {'status': {}},
                           'schema': {'openAPIV3Schema': {
                               'type': 'object',
                               'properties': {
                                   'spec': {'type': 'object', 'required': ['size'], 'properties': {
                                       'size': {'type': 'integer', 'minimum': 1, 'maximum': 10},
                                       'color': {'type': 'string', 'enum': ['red', 'blue'], 'default': 'red'},
                                       'mac': {'type': 'string', 'pattern': '^([0-9a-f]{2}:){5}[0-9a-f]{2}$'},
                                       'when': {'type': 'string', 'format': 'date-time'},
                                       'tags': {'type': 'array', 'maxItems': 2, 'items': {'type': 'string'},
                                                'x-kubernetes-list-type': 'set'},
                                       'port': {'x-kubernetes-int-or-string': True,
                                                'anyOf': [{'type': 'integer'}, {'type': 'string'}]},
                                       'note': {'type': 'string', 'nullable': True},
                                       'free': {'type': 'object', 'x-kubernetes-preserve-unknown-fields': True},
                                       'name': {'type': 'string', 'maxLength': 5},
                                       'frozen': {'type': 'string',
                                                  'x-kubernetes-validations': [
                                                      {'rule': 'self == oldSelf', 'message': 'frozen is immutable'}]},
                                       'items': {'type': 'array', 'x-kubernetes-list-type': 'map',
                                                 'x-kubernetes-list-map-keys': ['key'],
                                                 'items': {'type': 'object', 'required': ['key'], 'properties': {
                                                     'key': {'type': 'string'}, 'value': {'type': 'string'}}}},
                                       'nested': {'type': 'object', 'properties': {
                                           'level': {'type': 'string', 'default': 'one'}}},
                                   }},
                                   'status': {'type': 'object', 'properties': {
                                       'phase': {'type': 'string'}}},
                               }}}}]}}


class Schemas(Base):
    ns = 'schemas'

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        r = cls.s.post('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', TEST_CRD)
        assert r.status in (201, 409), r
        cls.s.settle()

    def url(self, name=''):
        return '/apis/test.cradle.io/v1/namespaces/schemas/widgets' + ('/' + name if name else '')

    def widget(self, wname, **spec):
        return {'apiVersion': 'test.cradle.io/v1', 'kind': 'Widget', 'metadata': {'name': wname}, 'spec': spec}

    def invalid(self, body, causes, message):
        r = self.s.post(self.url(), body)
        self.assertEqual(r.status, 422, r.raw)
        self.assertEqual(r.json['reason'], 'Invalid')
        self.assertEqual([(c['reason'], c['field'], c['message']) for c in r.json['details']['causes']], causes)
        self.assertEqual(r.json['message'], message)
        return r.json

    def test_defaults_and_established_discovery(self):
        r = self.ok(self.s.post(self.url(), self.widget('w-defaults', size=2, nested={})), 201)
        self.assertEqual(r['spec']['color'], 'red')
        self.assertEqual(r['spec']['nested'], {'level': 'one'})
        d = self.ok(self.s.get('/apis/test.cradle.io/v1'))
        self.assertEqual([x['name'] for x in d['resources']], ['widgets', 'widgets/status'])
        self.assertEqual(d['resources'][0]['shortNames'], ['wd'])

    def test_required(self):
        self.invalid(self.widget('w-req'), [('FieldValueRequired', 'spec.size', 'Required value')],
                     'Widget.test.cradle.io "w-req" is invalid: spec.size: Required value')

    def test_types_min_max_enum_pattern(self):
        self.invalid(self.widget('w-bad', size='x'), [
            ('FieldValueTypeInvalid', 'spec.size', 'Invalid value: "string": spec.size in body must be of type '
                                                   'integer: "string"')],
            'Widget.test.cradle.io "w-bad" is invalid: spec.size: Invalid value: "string": spec.size in body must '
            'be of type integer: "string"')
        self.invalid(self.widget('w-bad', size=11, color='green', mac='zz'), [
            ('FieldValueNotSupported', 'spec.color', 'Unsupported value: "green": supported values: "red", "blue"'),
            ('FieldValueInvalid', 'spec.mac', "Invalid value: \"zz\": spec.mac in body should match "
                                              "'^([0-9a-f]{2}:){5}[0-9a-f]{2}$'"),
            ('FieldValueInvalid', 'spec.size', 'Invalid value: 11: spec.size in body should be less than or equal '
                                               'to 10')],
            'Widget.test.cradle.io "w-bad" is invalid: [spec.color: Unsupported value: "green": supported values: '
            '"red", "blue", spec.mac: Invalid value: "zz": spec.mac in body should match '
            '\'^([0-9a-f]{2}:){5}[0-9a-f]{2}$\', spec.size: Invalid value: 11: spec.size in body should be less than '
            'or equal to 10]')
        self.invalid(self.widget('w-bad', size=0), [
            ('FieldValueInvalid', 'spec.size', 'Invalid value: 0: spec.size in body should be greater than or equal '
                                               'to 1')],
            'Widget.test.cradle.io "w-bad" is invalid: spec.size: Invalid value: 0: spec.size in body should be '
            'greater than or equal to 1')

    def test_format_maxitems_maxlength_listtypes(self):
        self.invalid(self.widget('w-f', size=1, when='yesterday'), [
            ('FieldValueTypeInvalid', 'spec.when', 'Invalid value: "yesterday": spec.when in body must be of type '
                                                   'date-time: "yesterday"')],
            'Widget.test.cradle.io "w-f" is invalid: spec.when: Invalid value: "yesterday": spec.when in body must '
            'be of type date-time: "yesterday"')
        self.ok(self.s.post(self.url(), self.widget('w-f-ok', size=1, when='2026-01-02T03:04:05Z')), 201)
        self.invalid(self.widget('w-f', size=1, tags=['a', 'b', 'c']), [
            ('FieldValueTooMany', 'spec.tags', 'Too many: 3: must have at most 2 items')],
            'Widget.test.cradle.io "w-f" is invalid: spec.tags: Too many: 3: must have at most 2 items')
        self.invalid(self.widget('w-f', size=1, tags=['a', 'a']), [
            ('FieldValueDuplicate', 'spec.tags[1]', 'Duplicate value: "a"')],
            'Widget.test.cradle.io "w-f" is invalid: spec.tags[1]: Duplicate value: "a"')
        self.invalid(self.widget('w-f', size=1, name='toolong'), [
            ('FieldValueTooLong', 'spec.name', 'Too long: may not be longer than 5')],
            'Widget.test.cradle.io "w-f" is invalid: spec.name: Too long: may not be longer than 5')
        self.invalid(self.widget('w-f', size=1, items=[{'key': 'a'}, {'key': 'a', 'value': 'x'}]), [
            ('FieldValueDuplicate', 'spec.items[1]', 'Duplicate value: map[string]interface {}{"key":"a"}')],
            'Widget.test.cradle.io "w-f" is invalid: spec.items[1]: Duplicate value: map[string]interface '
            '{}{"key":"a"}')

    def test_int_or_string_nullable_preserve_prune(self):
        r = self.s.post(self.url(), self.widget('w-ios', size=1, port=8080, note=None, free={'any': {'x': [1]}},
                                                 junk=1, nested={'level': 'two', 'extra': True}))
        self.assertEqual(r.status, 201, r.raw)
        self.assertEqual(r.json['spec']['port'], 8080)
        self.assertIsNone(r.json['spec']['note'])
        self.assertEqual(r.json['spec']['free'], {'any': {'x': [1]}})
        self.assertNotIn('junk', r.json['spec'])
        self.assertEqual(r.json['spec']['nested'], {'level': 'two'})
        self.assertEqual(sorted(r.headers_all('Warning')), ['299 - "unknown field \\"spec.junk\\""',
                                                            '299 - "unknown field \\"spec.nested.extra\\""'])
        r = self.s.post(self.url(), self.widget('w-ios2', size=1, port='http'))
        self.assertEqual(r.status, 201, r.raw)
        r = self.s.post(self.url(), self.widget('w-ios3', size=1, port=True))
        self.assertEqual(r.status, 422, r.raw)
        # a non-nullable null without a default is dropped
        r = self.ok(self.s.post(self.url(), self.widget('w-null', size=1, name=None, color=None)), 201)
        self.assertNotIn('name', r['spec'])
        self.assertEqual(r['spec']['color'], 'red')

    def test_field_validation_modes(self):
        r = self.s.post(self.url() + '?fieldValidation=Ignore', self.widget('w-ign', size=1, junk=1))
        self.assertEqual(r.status, 201)
        self.assertEqual(r.headers_all('Warning'), [])
        r = self.s.post(self.url() + '?fieldValidation=Strict',
                        '{"apiVersion":"test.cradle.io/v1","kind":"Widget","metadata":{"name":"w-dup"},'
                        '"spec":{"size":1,"size":2}}')
        self.assertEqual(r.status, 400)
        self.assertEqual(r.json['message'], 'Widget in version "v1" cannot be handled as a Widget: strict decoding '
                                            'error: duplicate field "spec.size"')
        r = self.s.post(self.url() + '?fieldValidation=Strict', self.widget('w-meta', size=1))
        self.assertEqual(r.status, 201)
        b = self.widget('w-meta2', size=1)
        b['metadata']['bogus'] = 1
        r = self.s.post(self.url() + '?fieldValidation=Strict', b)
        self.assertEqual(r.status, 400)
        self.assertIn('unknown field "metadata.bogus"', r.json['message'])

    def test_cel_transition_rule(self):
        self.ok(self.s.post(self.url(), self.widget('w-cel', size=1, frozen='a')), 201)
        r = self.s.patch(self.url('w-cel'), {'spec': {'frozen': 'b'}})
        self.assertEqual(r.status, 422, r.raw)
        self.assertEqual(r.json['details']['causes'], [{'reason': 'FieldValueInvalid', 'field': 'spec.frozen',
                                                        'message': 'Invalid value: "string": frozen is immutable'}])
        self.ok(self.s.patch(self.url('w-cel'), {'spec': {'size': 3}}))

    def test_generation_and_status_subresource(self):
        o = self.ok(self.s.post(self.url(), dict(self.widget('w-gen', size=1), status={'phase': 'x'})), 201)
        self.assertNotIn('status', o)
        self.assertEqual(o['metadata']['generation'], 1)
        o = self.ok(self.s.patch(self.url('w-gen'), {'metadata': {'labels': {'a': 'b'}}}))
        self.assertEqual(o['metadata']['generation'], 1)
        o = self.ok(self.s.patch(self.url('w-gen') + '/status', {'status': {'phase': 'Ready'}, 'spec': {'size': 9}}))
        self.assertEqual(o['metadata']['generation'], 1)
        self.assertEqual(o['spec']['size'], 1)
        self.assertEqual(o['status'], {'phase': 'Ready'})
        o = self.ok(self.s.patch(self.url('w-gen'), {'spec': {'size': 2}, 'status': {'phase': 'ignored'}}))
        self.assertEqual(o['metadata']['generation'], 2)
        self.assertEqual(o['status'], {'phase': 'Ready'})

    def test_metadata_validation(self):
        r = self.s.post(self.url(), self.widget('Bad_Name', size=1))
        self.assertEqual(r.status, 422)
        self.assertEqual(r.json['details']['causes'][0]['field'], 'metadata.name')
        self.assertIn("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters",
                      r.json['message'])
        b = self.widget('', size=1)
        del b['metadata']['name']
        r = self.s.post(self.url(), b)
        self.assertEqual(r.status, 422)
        self.assertEqual(r.json['message'], 'Widget.test.cradle.io "" is invalid: metadata.name: Required value: '
                                            'name or generateName is required')
        b['metadata']['generateName'] = 'gen-'
        r = self.ok(self.s.post(self.url(), b), 201)
        self.assertRegex(r['metadata']['name'], r'^gen-[a-z0-9]{5}$')
        b = self.widget('w-labels', size=1)
        b['metadata']['labels'] = {'bad key!': 'x'}
        self.assertEqual(self.s.post(self.url(), b).status, 422)
        b = self.widget('w-kind', size=1)
        del b['kind']
        r = self.s.post(self.url(), b)
        self.assertEqual(r.status, 400)
        self.assertTrue(r.json['message'].startswith("Object 'Kind' is missing in '"))

    def test_crd_versions_update_and_deletion(self):
        crd = copy.deepcopy(TEST_CRD)
        crd['metadata']['name'] = 'gadgets.test.cradle.io'
        crd['spec']['names'] = {'plural': 'gadgets', 'kind': 'Gadget'}
        v1 = crd['spec']['versions'][0]
        v0 = copy.deepcopy(v1)
        v0.update(name='v1alpha1', storage=False)
        crd['spec']['versions'] = [v0, v1]
        base = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/'
        o = self.ok(self.s.post('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd), 201)
        self.assertEqual(o['spec']['names'], {'plural': 'gadgets', 'singular': 'gadget', 'kind': 'Gadget',
                                              'listKind': 'GadgetList'})
        # conditions: null (no omitempty) until the naming controller's turn
        self.assertEqual(json.dumps(o['status']), json.dumps({'conditions': None, 'acceptedNames': {
            'plural': '', 'kind': ''}, 'storedVersions': ['v1']}))
        wait_for(lambda: self.s.get('/apis/test.cradle.io/v1alpha1/namespaces/schemas/gadgets').status == 200,
                 what='gadgets served')
        g = self.ok(self.s.get('/apis/test.cradle.io'))
        self.assertEqual([v['version'] for v in g['versions']], ['v1', 'v1alpha1'])
        self.assertEqual(g['preferredVersion']['version'], 'v1')
        b = self.widget('g1', size=1)
        b['kind'] = 'Gadget'
        b['apiVersion'] = 'test.cradle.io/v1alpha1'
        b['metadata']['finalizers'] = ['test.cradle.io/hold']
        self.ok(self.s.post('/apis/test.cradle.io/v1alpha1/namespaces/schemas/gadgets', b), 201)
        got = self.ok(self.s.get('/apis/test.cradle.io/v1/namespaces/schemas/gadgets/g1'))
        self.assertEqual(got['apiVersion'], 'test.cradle.io/v1')
        # stop serving v1alpha1
        cur = self.ok(self.s.get(base + 'gadgets.test.cradle.io'))
        cur['spec']['versions'][0]['served'] = False
        upd = self.ok(self.s.put(base + 'gadgets.test.cradle.io', cur))
        self.assertEqual(upd['metadata']['generation'], 2)
        wait_for(lambda: self.s.get('/apis/test.cradle.io/v1alpha1/namespaces/schemas/gadgets').status == 404,
                 what='v1alpha1 gone')
        # deleting the CRD deletes its objects first, waiting for their finalizers
        d = self.ok(self.s.delete(base + 'gadgets.test.cradle.io'))
        self.assertEqual(d['metadata']['finalizers'], ['customresourcecleanup.apiextensions.k8s.io'])
        self.assertIn('Terminating', [c['type'] for c in d['status']['conditions']])
        wait_for(lambda: self.s.get('/apis/test.cradle.io/v1/namespaces/schemas/gadgets/g1').json['metadata'].get(
            'deletionTimestamp'), what='gadget marked')
        r = self.s.post('/apis/test.cradle.io/v1/namespaces/schemas/gadgets', dict(b, apiVersion='test.cradle.io/v1',
                                                                                   metadata={'name': 'g2'}))
        self.assertEqual(r.status, 405)
        self.assertEqual(r.json['message'], 'create is not supported on resources of kind '
                                            '"gadgets.test.cradle.io"')
        self.s.settle()
        self.assertEqual(self.s.get(base + 'gadgets.test.cradle.io').status, 200)
        self.ok(self.s.patch('/apis/test.cradle.io/v1/namespaces/schemas/gadgets/g1',
                             {'metadata': {'finalizers': None}}))
        wait_for(lambda: self.s.get(base + 'gadgets.test.cradle.io').status == 404, what='CRD gone')
        wait_for(lambda: self.s.get('/apis/test.cradle.io/v1/namespaces/schemas/gadgets').status == 404,
                 what='gadgets no longer served')
        self.assertEqual([x['name'] for x in self.ok(self.s.get('/apis/test.cradle.io/v1'))['resources']],
                         ['widgets', 'widgets/status'])

    def test_reference_crd_schemas(self):
        ns_create(self.s, 'refs')
        base = '/apis/agent-install.openshift.io/v1beta1/namespaces/refs/'
        r = self.ok(self.s.post(base + 'infraenvs', {'apiVersion': 'agent-install.openshift.io/v1beta1',
                                                       'kind': 'InfraEnv', 'metadata': {'name': 'ie'},
                                                       'spec': {'pullSecretRef': {'name': 'ps'}}}), 201)
        self.assertEqual(r['spec']['cpuArchitecture'], 'x86_64')
        self.assertEqual(r['spec']['ipxeScriptType'], 'DiscoveryImageAlways')
        r = self.s.post(base + 'nmstateconfigs', {'apiVersion': 'agent-install.openshift.io/v1beta1',
                                                  'kind': 'NMStateConfig', 'metadata': {'name': 'n'},
                                                  'spec': {'interfaces': [{'name': 'eth0', 'macAddress': 'nope'}],
                                                           'config': {'any': ['thing']}}})
        self.assertEqual(r.status, 422)
        self.assertEqual(r.json['details']['causes'][0]['field'], 'spec.interfaces[0].macAddress')
        aci = '/apis/extensions.hive.openshift.io/v1beta1/namespaces/refs/agentclusterinstalls'
        body = {'apiVersion': 'extensions.hive.openshift.io/v1beta1', 'kind': 'AgentClusterInstall',
                'metadata': {'name': 'aci'},
                'spec': {'clusterDeploymentRef': {'name': 'cd'}, 'imageSetRef': {'name': 'x'},
                         'provisionRequirements': {'controlPlaneAgents': 3}, 'networking': {},
                         'apiVIPs': ['1.1.1.1', '1.1.1.2', '1.1.1.3'], 'external': {}}}
        r = self.s.post(aci, body)
        self.assertEqual(r.status, 422, r.raw)
        self.assertEqual(r.json['details']['causes'], [{'reason': 'FieldValueTooMany', 'field': 'spec.apiVIPs',
                                                        'message': 'Too many: 3: must have at most 2 items'}])
        body['spec']['apiVIPs'] = ['1.1.1.1']
        r = self.ok(self.s.post(aci, body), 201)
        self.assertEqual(r['spec']['external'], {'cloudControllerManager': '', 'platformName': 'Unknown'})
        self.ok(self.s.patch(aci + '/aci', {'spec': {'external': {'platformName': 'oci'}}}))
        r = self.s.patch(aci + '/aci', {'spec': {'external': {'platformName': 'other'}}})
        self.assertEqual(r.status, 422, r.raw)
        self.assertEqual(r.json['details']['causes'][0]['message'],
                         'Invalid value: "string": platform name cannot be changed once set')

    def test_example_resources_of_the_docs(self):
        """Every example resource of docs/hive-integration/crds is accepted
        (the Agent example carries a resourceVersion: 500 as observed)."""
        import glob
        files = sorted(glob.glob(os.path.join(H.reference_dir(), 'assisted-service', 'docs', 'hive-integration',
                                              'crds', '*.yaml')))
        self.assertTrue(files)
        ns_create(self.s, 'spoke-cluster')
        seen = set()
        for f in files:
            for d in H.yaml_docs(f):
                if d['metadata'].get('namespace'):
                    ns_create(self.s, d['metadata']['namespace'])
                g, _, v = d['apiVersion'].rpartition('/')
                plural = {'Namespace': 'namespaces', 'Secret': 'secrets', 'ConfigMap': 'configmaps'}.get(d['kind'])
                if plural is None:
                    disco = self.ok(self.s.get('/apis/%s/%s' % (g, v)))
                    plural = next(x['name'] for x in disco['resources'] if x['kind'] == d['kind'] and
                                  '/' not in x['name'])
                    nsd = next(x['namespaced'] for x in disco['resources'] if x['name'] == plural)
                else:
                    nsd = plural != 'namespaces'
                prefix = '/api/v1' if not g else '/apis/%s/%s' % (g, v)
                url = prefix + ('/namespaces/%s' % d['metadata'].get('namespace', 'default') if nsd else '') + \
                    '/' + plural
                if not nsd and d['kind'] != 'Namespace':
                    self.s.delete(url + '/' + d['metadata']['name'])        # left by another test
                    self.s.settle()
                r = self.s.post(url, d)
                key = (d['kind'], d['metadata'].get('namespace'), d['metadata']['name'])
                if d['kind'] == 'Secret' and d.get('type') == 'kubernetes.io/dockerconfigjson' and \
                        '.dockerconfigjson' not in (d.get('stringData') or {}):
                    # this example is not valid: kube-apiserver refuses it too
                    self.assertEqual(r.status, 422, (f, r.raw))
                    self.assertEqual(r.json['details']['causes'], [{'reason': 'FieldValueRequired',
                                                                    'message': 'Required value',
                                                                    'field': 'data[.dockerconfigjson]'}])
                elif d['metadata'].get('resourceVersion'):
                    self.assertEqual(r.status, 500, (f, r.raw))
                    self.assertEqual(r.json['message'], 'resourceVersion should not be set on objects to be created')
                elif key in seen or d['kind'] == 'Namespace':
                    self.assertIn(r.status, (201, 409), (f, r.raw))
                else:
                    self.assertEqual(r.status, 201, (f, r.raw))
                seen.add(key)



# ---------------------------------------------------------------- lists, selectors, paging

class Lists(Base):
    ns = 'lists'

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        for i in range(7):
            labels = {'idx': str(i), 'tier': 'a' if i < 4 else 'b'}
            if i % 2:
                labels['odd'] = 'yes'
            r = cls.s.post('/api/v1/namespaces/lists/configmaps', cm_body('cm-%d' % i, {'i': str(i)}, labels=labels))
            assert r.status == 201, r

    def names(self, query):
        r = self.ok(self.s.get('/api/v1/namespaces/lists/configmaps?' + query))
        return [i['metadata']['name'] for i in r['items']]

    def test_label_selectors(self):
        self.assertEqual(self.names('labelSelector=tier%3Da'), ['cm-0', 'cm-1', 'cm-2', 'cm-3'])
        self.assertEqual(self.names('labelSelector=tier%3D%3Db,odd'), ['cm-5'])
        self.assertEqual(self.names('labelSelector=tier!%3Da'), ['cm-4', 'cm-5', 'cm-6', 'kube-root-ca.crt'])
        self.assertEqual(self.names('labelSelector=idx%20in%20(1,3,5),tier%20notin%20(b)'), ['cm-1', 'cm-3'])
        self.assertEqual(self.names('labelSelector=!odd,tier%3Db'), ['cm-4', 'cm-6'])
        self.assertEqual(self.names('labelSelector=idx%3E4'), ['cm-5', 'cm-6'])
        # != matches objects without the label, as in kube
        self.assertEqual(self.names('labelSelector=odd!%3Dyes,idx'), ['cm-0', 'cm-2', 'cm-4', 'cm-6'])
        r = self.s.get('/api/v1/namespaces/lists/configmaps?labelSelector=a%20in%20b')
        self.assertEqual(r.status, 400)
        self.assertEqual(r.json['reason'], 'BadRequest')

    def test_field_selectors(self):
        self.assertEqual(self.names('fieldSelector=metadata.name%3Dcm-3'), ['cm-3'])
        self.assertEqual(self.names('fieldSelector=metadata.name!%3Dcm-3,metadata.namespace%3Dlists'),
                         ['cm-0', 'cm-1', 'cm-2', 'cm-4', 'cm-5', 'cm-6', 'kube-root-ca.crt'])
        r = self.s.get('/api/v1/namespaces/lists/configmaps?fieldSelector=data.i%3D1')
        self.assertEqual(r.status, 400)
        self.assertEqual(r.json['message'], '"data.i" is not a known field selector: only "metadata.name", '
                                            '"metadata.namespace"')
        r = self.s.get('/api/v1/namespaces/lists/secrets?fieldSelector=spec.x%3D1')
        self.assertEqual(r.json['message'], 'field label not supported: spec.x')
        r = self.s.get(AGENTS.replace('demo', 'lists') + '?fieldSelector=spec.role%3Dworker')
        self.assertEqual((r.status, r.json['message']), (400, 'field label not supported: spec.role'))
        r = self.s.get('/apis/hive.openshift.io/v1/clusterimagesets?fieldSelector=metadata.namespace%3Dx')
        self.assertEqual((r.status, r.json['message']), (400, 'field label not supported: metadata.namespace'))

    def test_paging(self):
        r = self.ok(self.s.get('/api/v1/namespaces/lists/configmaps?limit=3'))
        self.assertEqual(list(r), ['kind', 'apiVersion', 'metadata', 'items'])
        self.assertEqual(r['kind'], 'ConfigMapList')
        self.assertEqual([i['metadata']['name'] for i in r['items']], ['cm-0', 'cm-1', 'cm-2'])
        self.assertNotIn('kind', r['items'][0])          # typed list items carry no kind
        self.assertEqual(r['metadata']['remainingItemCount'], 5)      # cm-3..6 and kube-root-ca.crt
        rv = r['metadata']['resourceVersion']
        # a change between pages does not show: pages are a snapshot
        self.ok(self.s.post('/api/v1/namespaces/lists/configmaps', cm_body('cm-9', {})), 201)
        names = [i['metadata']['name'] for i in r['items']]
        while r['metadata'].get('continue'):
            r = self.ok(self.s.get('/api/v1/namespaces/lists/configmaps?limit=3&continue=' + r['metadata']['continue']))
            self.assertEqual(r['metadata']['resourceVersion'], rv)
            names += [i['metadata']['name'] for i in r['items']]
        self.assertEqual(names, ['cm-%d' % i for i in range(7)] + ['kube-root-ca.crt'])
        self.assertNotIn('continue', r['metadata'])       # omitted when empty on typed lists
        self.ok(self.s.delete('/api/v1/namespaces/lists/configmaps/cm-9'))
        # resourceVersion=0 is served from the cache: no paging
        r = self.ok(self.s.get('/api/v1/namespaces/lists/configmaps?limit=2&resourceVersion=0'))
        self.assertGreaterEqual(len(r['items']), 7)
        self.assertNotIn('continue', r['metadata'])

    def test_all_namespaces_and_exact(self):
        r = self.ok(self.s.get('/api/v1/configmaps?labelSelector=tier&limit=5'))
        tok = json.loads(base64.b64decode(r['metadata']['continue']))
        self.assertEqual(tok['start'], 'lists/cm-4\x00')
        rv = int(r['metadata']['resourceVersion'])
        self.ok(self.s.patch('/api/v1/namespaces/lists/configmaps/cm-0', {'data': {'changed': 'yes'}}))
        old = self.ok(self.s.get('/api/v1/namespaces/lists/configmaps?resourceVersion=%d&resourceVersionMatch=Exact'
                                 '&fieldSelector=metadata.name%%3Dcm-0' % rv))
        self.assertEqual(old['items'][0]['data'], {'i': '0'})
        self.assertEqual(old['metadata']['resourceVersion'], str(rv))
        r = self.s.get('/api/v1/namespaces/lists/configmaps?resourceVersionMatch=Exact')
        self.assertEqual(r.status, 422)

    def test_too_large_resource_version(self):
        rv = int(self.ok(self.s.get('/api/v1/namespaces/lists/configmaps'))['metadata']['resourceVersion'])
        r = self.s.get('/api/v1/namespaces/lists/configmaps?resourceVersion=%d' % (rv + 1000))
        self.assertEqual(r.status, 504)
        self.assertEqual(r.json['reason'], 'Timeout')
        self.assertTrue(r.json['message'].startswith('Too large resource version: %d, current: ' % (rv + 1000)))
        self.assertEqual(r.header('Retry-After'), '1')

    def test_delete_collection(self):
        ns_create(self.s, 'dc')
        for i in range(3):
            self.ok(self.s.post('/api/v1/namespaces/dc/configmaps', cm_body('x-%d' % i, labels={'g': str(i % 2)})),
                    201)
        r = self.ok(self.s.delete('/api/v1/namespaces/dc/configmaps?labelSelector=g%3D0'))
        self.assertEqual(r['kind'], 'ConfigMapList')
        self.assertEqual(sorted(i['metadata']['name'] for i in r['items']), ['x-0', 'x-2'])
        left = self.ok(self.s.get('/api/v1/namespaces/dc/configmaps?labelSelector=g'))
        self.assertEqual([i['metadata']['name'] for i in left['items']], ['x-1'])


# ---------------------------------------------------------------- object semantics

class Semantics(Base):
    ns = 'sem'

    def test_update_rules(self):
        url = agents('sem')
        o = self.ok(self.s.post(url, agent_body('a1')), 201)
        self.assertRegex(o['metadata']['creationTimestamp'], r'^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$')
        self.assertRegex(o['metadata']['uid'], r'^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$')
        # an update without resourceVersion is unconditional for custom resources
        b = copy.deepcopy(o)
        del b['metadata']['resourceVersion']
        b['spec']['hostname'] = 'x'
        o2 = self.ok(self.s.put(url + '/a1', b))
        self.assertEqual(o2['metadata']['generation'], 2)
        # uid and name cannot change; the name must match the URL
        b = copy.deepcopy(o2)
        b['metadata']['uid'] = 'other'
        r = self.s.put(url + '/a1', b)
        self.assertEqual(r.status, 422)
        self.assertEqual(r.json['details']['causes'][0], {'reason': 'FieldValueInvalid', 'field': 'metadata.uid',
                                                          'message': 'Invalid value: "other": field is immutable'})
        b = copy.deepcopy(o2)
        b['metadata']['name'] = 'a2'
        r = self.s.put(url + '/a1', b)
        self.assertEqual((r.status, r.json['message']),
                         (400, 'the name of the object (a2) does not match the name on the URL (a1)'))
        # PUT of a missing custom resource does not create it
        r = self.s.put(url + '/missing', agent_body('missing'))
        self.assertEqual(r.status, 404)
        # services need a resourceVersion on update
        svc = {'apiVersion': 'v1', 'kind': 'Service', 'metadata': {'name': 'svc'},
               'spec': {'ports': [{'port': 80}]}}
        s = self.ok(self.s.post('/api/v1/namespaces/sem/services', svc), 201)
        self.assertEqual(s['spec']['clusterIP'], s['spec']['clusterIPs'][0])
        del s['metadata']['resourceVersion']
        r = self.s.put('/api/v1/namespaces/sem/services/svc', s)
        self.assertEqual(r.status, 422)
        self.assertEqual(r.json['message'], 'services "svc" is invalid: metadata.resourceVersion: Invalid value: 0: '
                                            'must be specified for an update')

    def test_delete_preconditions(self):
        url = '/api/v1/namespaces/sem/configmaps'
        o = self.ok(self.s.post(url, cm_body('pre')), 201)
        body = {'kind': 'DeleteOptions', 'apiVersion': 'v1', 'preconditions': {'uid': 'nope'}}
        r = self.s.delete(url + '/pre', body)
        self.assertEqual(r.status, 409)
        self.assertEqual(r.json['message'], 'Operation cannot be fulfilled on ConfigMap "pre": the UID in the '
                                            'precondition (nope) does not match the UID in record (%s). The object '
                                            'might have been deleted and then recreated' % o['metadata']['uid'])
        body = {'preconditions': {'resourceVersion': '1'}}
        r = self.s.delete(url + '/pre', body)
        self.assertEqual(r.status, 409)
        self.assertIn('the ResourceVersion in the precondition (1) does not match the ResourceVersion in record',
                      r.json['message'])
        body = {'preconditions': {'uid': o['metadata']['uid'], 'resourceVersion': o['metadata']['resourceVersion']}}
        r = self.ok(self.s.delete(url + '/pre', body))
        self.assertEqual(r['status'], 'Success')
        self.assertEqual(self.s.delete(url + '/pre').status, 404)
        # the options are checked before the object is looked up
        r = self.s.delete(url + '/pre?propagationPolicy=Sideways')
        self.assertEqual(r.status, 422)
        self.assertEqual(r.json['message'], 'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported '
                                            'value: "Sideways": supported values: "Foreground", "Background", '
                                            '"Orphan", "nil"')

    def test_finalizer_rules(self):
        url = agents('sem')
        b = agent_body('fin')
        b['metadata']['finalizers'] = ['example.com/a', 'example.com/b']
        self.ok(self.s.post(url, b), 201)
        o = self.ok(self.s.delete(url + '/fin'))
        self.assertTrue(o['metadata']['deletionTimestamp'])
        self.assertEqual(o['metadata']['deletionGracePeriodSeconds'], 0)
        # no new finalizer on a terminating object
        r = self.s.patch(url + '/fin', [{'op': 'add', 'path': '/metadata/finalizers/-', 'value': 'example.com/c'}],
                         ptype='application/json-patch+json')
        self.assertEqual(r.status, 422)
        self.assertEqual(r.json['message'], 'Agent.agent-install.openshift.io "fin" is invalid: metadata.finalizers: '
                                            'Forbidden: no new finalizers can be added if the object is being deleted, '
                                            'found new finalizers []string{"example.com/c"}')
        # other changes are still allowed, the deletion timestamp stays
        o2 = self.ok(self.s.patch(url + '/fin', {'metadata': {'labels': {'x': 'y'}}}))
        self.assertEqual(o2['metadata']['deletionTimestamp'], o['metadata']['deletionTimestamp'])
        # a second delete changes nothing
        o3 = self.ok(self.s.delete(url + '/fin'))
        self.assertEqual(o3['metadata']['resourceVersion'], o2['metadata']['resourceVersion'])
        self.ok(self.s.patch(url + '/fin', {'metadata': {'finalizers': ['example.com/b']}}))
        self.ok(self.s.get(url + '/fin'))
        cur = self.ok(self.s.get(url + '/fin'))
        cur['metadata']['finalizers'] = []
        self.ok(self.s.put(url + '/fin', cur))
        self.assertEqual(self.s.get(url + '/fin').status, 404)

    def test_protobuf_bodies_of_builtin_kinds(self):
        """client-go and controller-runtime write built-in kinds as
        application/vnd.kubernetes.protobuf (CAPOA's data Secret met a 415
        here); kube-apiserver takes them, custom resources stay JSON"""
        import kprotobuf
        pb = 'application/vnd.kubernetes.protobuf'
        url = '/api/v1/namespaces/sem/secrets'
        sec = {'apiVersion': 'v1', 'kind': 'Secret', 'type': 'cluster.x-k8s.io/secret',
               'metadata': {'name': 'pb', 'labels': {'cluster.x-k8s.io/cluster-name': 'c'},
                            'ownerReferences': [{'apiVersion': 'bootstrap.cluster.x-k8s.io/v1alpha1',
                                                 'kind': 'OpenshiftAssistedConfig', 'name': 'm', 'uid': 'u-1',
                                                 'controller': True, 'blockOwnerDeletion': True}]},
               'data': {'value': base64.b64encode(b'{"ignition":{}}').decode(), 'format': 'aWduaXRpb24='}}
        r = self.ok(self.s.post(url, kprotobuf.encode(sec), ctype=pb), 201)
        self.assertEqual(r['data'], sec['data'])
        self.assertEqual(r['type'], 'cluster.x-k8s.io/secret')
        self.assertEqual(r['metadata']['labels'], sec['metadata']['labels'])
        self.assertEqual(r['metadata']['ownerReferences'], sec['metadata']['ownerReferences'])
        r['data']['format'] = base64.b64encode(b'other').decode()
        r = self.ok(self.s.put(url + '/pb', kprotobuf.encode(r), ctype=pb))
        self.assertEqual(base64.b64decode(r['data']['format']), b'other')
        lease = {'apiVersion': 'coordination.k8s.io/v1', 'kind': 'Lease', 'metadata': {'name': 'l'},
                 'spec': {'holderIdentity': 'me', 'leaseDurationSeconds': 15,
                          'renewTime': '2026-11-28T20:00:00.123456Z'}}
        r = self.ok(self.s.post('/apis/coordination.k8s.io/v1/namespaces/sem/leases', kprotobuf.encode(lease),
                                ctype=pb), 201)
        self.assertEqual(r['spec'], lease['spec'])
        # the body's kind must be the resource's
        # (the messages as kube-apiserver 1.26.4 gave them)
        r = self.s.post('/api/v1/namespaces/sem/configmaps', kprotobuf.encode(sec), ctype=pb)
        self.assertEqual(r.status, 400)
        self.assertEqual(r.json['message'], 'Secret in version "v1" cannot be handled as a ConfigMap: converting '
                                            '(v1.Secret) to (core.ConfigMap): unknown conversion')
        r = self.s.post(url, b'k8s\x00\xff\xff', ctype=pb)
        self.assertEqual(r.status, 400)
        self.assertEqual(r.json['message'], 'the object provided is unrecognized (must be of type Secret): '
                                            'unexpected EOF (6b387300ffff)')
        r = self.s.post('/api/v1/namespaces/sem/configmaps', 'x', ctype='text/plain')
        self.assertEqual(r.json['message'], 'the body of the request was in an unknown format - accepted media '
                                            'types include: application/json, application/yaml, '
                                            'application/vnd.kubernetes.protobuf')
        # a kind this server does not decode (kube-apiserver decodes every built-in kind): refused, saying which
        r = self.s.post('/api/v1/namespaces/sem/pods', kprotobuf.MAGIC + kprotobuf.encode_message(
            'Unknown', {'typeMeta': {'apiVersion': 'v1', 'kind': 'Pod'}, 'raw': b''}), ctype=pb)
        self.assertEqual(r.status, 415)
        self.assertIn('v1 Pod', r.json['message'])
        # a custom resource has no protobuf form: 415 here, as for any media type a resource does not take
        # (kube-apiserver 1.26.4 drops the connection instead: a panic its handler recovers)
        r = self.s.post(agents('sem'), kprotobuf.encode(sec), ctype=pb)
        self.assertEqual(r.status, 415)
        self.assertEqual(r.json['message'], 'the body of the request was in an unknown format - accepted media '
                                            'types include: application/json, application/yaml')

    def test_protobuf_decoder_refuses_mangled_bodies(self):
        """a mangled protobuf body is refused (400 or 415), never a crash of
        the server (a 500): seeded mutations of two good bodies"""
        import random
        import kprotobuf
        rnd = random.Random(1)
        good = [kprotobuf.encode({'apiVersion': 'v1', 'kind': 'Secret', 'type': 't', 'data': {'k': 'dg=='},
                                  'metadata': {'name': 'x', 'labels': {'a': 'b'},
                                               'creationTimestamp': '2026-01-01T00:00:00Z',
                                               'ownerReferences': [{'kind': 'K', 'name': 'n', 'uid': 'u',
                                                                    'apiVersion': 'v', 'controller': True}]}}),
                kprotobuf.encode({'apiVersion': 'coordination.k8s.io/v1', 'kind': 'Lease', 'metadata': {'name': 'l'},
                                  'spec': {'renewTime': '2026-11-28T20:00:00.123456Z', 'leaseDurationSeconds': 3}})]
        for _ in range(20000):
            b = bytearray(rnd.choice(good))
            for _ in range(rnd.randint(1, 6)):
                p, op = rnd.randrange(len(b)), rnd.random()
                if op < 0.5:
                    b[p] = rnd.randrange(256)
                elif op < 0.75:
                    del b[p]
                else:
                    b.insert(p, rnd.randrange(256))
            try:
                kprotobuf.decode(bytes(b))
            except (kprotobuf.DecodeError, KeyError):
                pass

    def test_dry_run_yaml_and_partial(self):
        url = '/api/v1/namespaces/sem/configmaps'
        r = self.ok(self.s.post(url + '?dryRun=All', cm_body('dry', {'a': 'b'})), 201)
        self.assertNotIn('resourceVersion', r['metadata'])
        self.assertEqual(self.s.get(url + '/dry').status, 404)
        y = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-yaml\ndata:\n  when: 2026-01-01\n  n: "1"\n'
        r = self.ok(self.s.post(url, y, ctype='application/yaml'), 201)
        self.assertEqual(r['data'], {'when': '2026-01-01', 'n': '1'})
        r = self.s.get(url + '/from-yaml', headers={'Accept': 'application/yaml'})
        self.assertEqual(r.header('Content-Type'), 'application/yaml')
        self.assertIn('name: from-yaml', r.text)
        r = self.ok(self.s.get(url + '/from-yaml', headers={
            'Accept': 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json'}))
        self.assertEqual(r['kind'], 'PartialObjectMetadata')
        self.assertNotIn('data', r)
        r = self.s.get(url + '/from-yaml', headers={'Accept': 'application/vnd.kubernetes.protobuf'})
        self.assertEqual(r.status, 406)
        r = self.s.post(url, cm_body('x'), ctype='text/plain')
        self.assertEqual(r.status, 415)
        # indented for ?pretty and for curl, as kube-apiserver does
        r = self.s.get(url + '/from-yaml?pretty=true')
        self.assertTrue(r.text.startswith('{\n  "kind": "ConfigMap",\n  "apiVersion": "v1",\n'))
        self.assertEqual(self.s.get(url + '/from-yaml', headers={'User-Agent': 'curl/7.88.1'}).raw,
                         r.raw)
        self.assertTrue(self.s.get(url + '/from-yaml').text.startswith('{"kind":"ConfigMap",'))

    def test_namespace_lifecycle(self):
        ns_create(self.s, 'doomed')
        self.ok(self.s.post('/api/v1/namespaces/doomed/configmaps', cm_body('c1')), 201)
        b = agent_body('held')
        b['metadata']['finalizers'] = ['example.com/hold']
        self.ok(self.s.post(agents('doomed'), b), 201)
        o = self.ok(self.s.delete('/api/v1/namespaces/doomed'))
        self.assertEqual(o['status']['phase'], 'Terminating')
        self.assertEqual(o['spec']['finalizers'], ['kubernetes'])
        r = self.s.post('/api/v1/namespaces/doomed/configmaps', cm_body('late'))
        self.assertEqual(r.status, 403)
        self.assertEqual(r.json['message'], 'configmaps "late" is forbidden: unable to create new content in '
                                            'namespace doomed because it is being terminated')
        self.assertEqual(r.json['details']['causes'], [{'reason': 'NamespaceTerminating', 'message':
                                                        'namespace doomed is being terminated',
                                                        'field': 'metadata.namespace'}])
        wait_for(lambda: self.s.get('/api/v1/namespaces/doomed/configmaps/c1').status == 404, what='content gone')
        # the agent with a finalizer keeps the namespace; its conditions say what is left
        self.s.settle()
        ns = self.ok(self.s.get('/api/v1/namespaces/doomed'))
        self.assertEqual([(c['type'], c['status'], c['reason'], c['message']) for c in ns['status']['conditions']], [
            ('NamespaceDeletionDiscoveryFailure', 'False', 'ResourcesDiscovered',
             'All resources successfully discovered'),
            ('NamespaceDeletionGroupVersionParsingFailure', 'False', 'ParsedGroupVersions',
             'All legacy kube types successfully parsed'),
            ('NamespaceDeletionContentFailure', 'False', 'ContentDeleted',
             'All content successfully deleted, may be waiting on finalization'),
            ('NamespaceContentRemaining', 'True', 'SomeResourcesRemain',
             'Some resources are remaining: agents.agent-install.openshift.io has 1 resource instances'),
            ('NamespaceFinalizersRemaining', 'True', 'SomeFinalizersRemain',
             'Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances')])
        self.ok(self.s.patch(agents('doomed') + '/held', {'metadata': {'finalizers': None}}))
        wait_for(lambda: self.s.get('/api/v1/namespaces/doomed').status == 404, what='namespace gone')
        r = self.s.post('/api/v1/namespaces/nowhere/configmaps', cm_body('x'))
        self.assertEqual(r.status, 404)
        self.assertEqual(r.json['message'], 'namespaces "nowhere" not found')
        r = self.s.delete('/api/v1/namespaces/default')
        self.assertEqual(r.status, 403)


# ---------------------------------------------------------------- garbage collection

class GarbageCollection(Base):
    ns = 'gc'

    def owner(self, name):
        return self.ok(self.s.post('/api/v1/namespaces/gc/configmaps', cm_body(name)), 201)

    def dependent(self, name, owner, block=False):
        ref = {'apiVersion': 'v1', 'kind': 'ConfigMap', 'name': owner['metadata']['name'],
               'uid': owner['metadata']['uid']}
        if block:
            ref['blockOwnerDeletion'] = True
        return self.ok(self.s.post('/api/v1/namespaces/gc/configmaps', cm_body(name, ownerReferences=[ref])), 201)

    def exists(self, name):
        return self.s.get('/api/v1/namespaces/gc/configmaps/' + name).status == 200

    def test_background(self):
        o = self.owner('bg-owner')
        self.dependent('bg-dep', o)
        self.ok(self.s.delete('/api/v1/namespaces/gc/configmaps/bg-owner'))
        self.assertFalse(self.exists('bg-owner'))
        wait_for(lambda: not self.exists('bg-dep'), what='dependent collected')

    def test_dangling_reference(self):
        o = self.owner('dangling-owner')
        self.ok(self.s.delete('/api/v1/namespaces/gc/configmaps/dangling-owner'))
        self.dependent('dangling-dep', o)
        wait_for(lambda: not self.exists('dangling-dep'), what='dependent of a missing owner collected')

    def test_two_owners(self):
        a, b = self.owner('two-a'), self.owner('two-b')
        refs = [{'apiVersion': 'v1', 'kind': 'ConfigMap', 'name': x['metadata']['name'], 'uid': x['metadata']['uid']}
                for x in (a, b)]
        self.ok(self.s.post('/api/v1/namespaces/gc/configmaps', cm_body('two-dep', ownerReferences=refs)), 201)
        self.ok(self.s.delete('/api/v1/namespaces/gc/configmaps/two-a'))
        wait_for(lambda: len(self.ok(self.s.get('/api/v1/namespaces/gc/configmaps/two-dep'))['metadata']
                             ['ownerReferences']) == 1, what='dangling reference removed')
        self.assertTrue(self.exists('two-dep'))

    def test_foreground(self):
        o = self.owner('fg-owner')
        d = self.dependent('fg-dep', o, block=True)
        b = cm_body('fg-dep2', ownerReferences=[{'apiVersion': 'v1', 'kind': 'ConfigMap', 'name': 'fg-dep',
                                                  'uid': d['metadata']['uid'], 'blockOwnerDeletion': True}],
                    finalizers=['example.com/slow'])
        self.ok(self.s.post('/api/v1/namespaces/gc/configmaps', b), 201)
        r = self.ok(self.s.delete('/api/v1/namespaces/gc/configmaps/fg-owner?propagationPolicy=Foreground'))
        self.assertIn('foregroundDeletion', r['metadata']['finalizers'])
        self.assertTrue(r['metadata']['deletionTimestamp'])
        wait_for(lambda: self.s.get('/api/v1/namespaces/gc/configmaps/fg-dep2').json['metadata'].get(
            'deletionTimestamp'), what='grandchild marked')
        self.s.settle()
        self.assertTrue(self.exists('fg-owner'))
        self.assertTrue(self.exists('fg-dep'))
        self.ok(self.s.patch('/api/v1/namespaces/gc/configmaps/fg-dep2', {'metadata': {'finalizers': None}}))
        wait_for(lambda: not self.exists('fg-owner'), what='owner gone after its dependents')
        self.assertFalse(self.exists('fg-dep'))

    def test_orphan(self):
        o = self.owner('or-owner')
        self.dependent('or-dep', o)
        r = self.ok(self.s.delete('/api/v1/namespaces/gc/configmaps/or-owner',
                                  {'kind': 'DeleteOptions', 'apiVersion': 'v1', 'propagationPolicy': 'Orphan'}))
        self.assertIn('orphan', r['metadata']['finalizers'])
        wait_for(lambda: not self.exists('or-owner'), what='owner gone')
        d = self.ok(self.s.get('/api/v1/namespaces/gc/configmaps/or-dep'))
        self.assertNotIn('ownerReferences', d['metadata'])

    def test_custom_resources_owned_by_a_cluster_scoped_owner(self):
        cis = self.ok(self.s.post('/apis/hive.openshift.io/v1/clusterimagesets', {
            'apiVersion': 'hive.openshift.io/v1', 'kind': 'ClusterImageSet', 'metadata': {'name': 'gc-owner'},
            'spec': {'releaseImage': 'x'}}), 201)
        b = agent_body('owned')
        b['metadata']['ownerReferences'] = [{'apiVersion': 'hive.openshift.io/v1', 'kind': 'ClusterImageSet',
                                             'name': 'gc-owner', 'uid': cis['metadata']['uid']}]
        self.ok(self.s.post(agents('gc'), b), 201)
        self.ok(self.s.delete('/apis/hive.openshift.io/v1/clusterimagesets/gc-owner'))
        wait_for(lambda: self.s.get(agents('gc') + '/owned').status == 404, what='agent collected')



# ---------------------------------------------------------------- watches

class Watches(Base):
    ns = 'wat'
    url = '/api/v1/namespaces/wat/configmaps'

    def test_resume_from_resource_version(self):
        self.ok(self.s.post(self.url, cm_body('r1')), 201)
        rv = self.ok(self.s.get(self.url))['metadata']['resourceVersion']
        self.ok(self.s.post(self.url, cm_body('r2')), 201)
        self.ok(self.s.patch(self.url + '/r1', {'data': {'x': '1'}}), 200)
        self.ok(self.s.delete(self.url + '/r2'))
        w = self.s.watch(self.url + '?watch=true&resourceVersion=%s&timeoutSeconds=2' % rv)
        ev = w.rest()
        w.close()
        self.assertEqual([(e['type'], e['object']['metadata']['name']) for e in ev],
                         [('ADDED', 'r2'), ('MODIFIED', 'r1'), ('DELETED', 'r2')])
        self.assertEqual(list(ev[0]['object']), ['kind', 'apiVersion', 'metadata'])
        rvs = [int(e['object']['metadata']['resourceVersion']) for e in ev]
        self.assertTrue(rvs[0] > int(rv) and rvs == sorted(rvs))

    def test_initial_state_and_selector_transitions(self):
        self.ok(self.s.post(self.url, cm_body('s1', labels={'sel': 'yes'})), 201)
        self.ok(self.s.post(self.url, cm_body('s2')), 201)
        w = self.s.watch(self.url + '?watch=1&labelSelector=sel%3Dyes&timeoutSeconds=300')
        first = w.next()
        self.assertEqual((first['type'], first['object']['metadata']['name']), ('ADDED', 's1'))
        self.ok(self.s.patch(self.url + '/s2', {'metadata': {'labels': {'sel': 'yes'}}}))
        self.ok(self.s.patch(self.url + '/s1', {'metadata': {'labels': {'sel': 'no'}}}))
        ev = [w.next(), w.next()]
        w.close()
        self.assertEqual([(e['type'], e['object']['metadata']['name']) for e in ev],
                         [('ADDED', 's2'), ('DELETED', 's1')])
        self.assertEqual(ev[1]['object']['metadata']['labels'], {'sel': 'no'})

    def test_bookmarks(self):
        self.s.ctl('POST', '/bookmarks', {'interval': 0.3})
        try:
            rv = self.ok(self.s.get(self.url))['metadata']['resourceVersion']
            w = self.s.watch(self.url + '?watch=1&allowWatchBookmarks=true&resourceVersion=%s&timeoutSeconds=3' % rv)
            ev = w.next()
            w.close()
        finally:
            self.s.ctl('POST', '/bookmarks', {'interval': 60})
        self.assertEqual(ev['type'], 'BOOKMARK')
        self.assertEqual(ev['object'], {'kind': 'ConfigMap', 'apiVersion': 'v1',
                                        'metadata': {'resourceVersion': ev['object']['metadata']['resourceVersion'],
                                                     'creationTimestamp': None}})
        self.assertGreaterEqual(int(ev['object']['metadata']['resourceVersion']), int(rv))

    def test_watch_of_one_object_and_legacy_path(self):
        self.ok(self.s.post(self.url, cm_body('one')), 201)
        w = self.s.watch(self.url + '/one?watch=true&timeoutSeconds=1')
        ev = w.rest()
        w.close()
        self.assertEqual([e['object']['metadata']['name'] for e in ev], ['one'])
        w = self.s.watch('/api/v1/watch/namespaces/wat/configmaps?fieldSelector=metadata.name%3Done&timeoutSeconds=1')
        ev = w.rest()
        w.close()
        self.assertEqual([e['type'] for e in ev], ['ADDED'])

    def test_custom_resource_watch_and_crd_watch(self):
        w = self.s.watch('/apis/apiextensions.k8s.io/v1/customresourcedefinitions?watch=1&timeoutSeconds=1'
                         '&fieldSelector=metadata.name%3Dagents.agent-install.openshift.io')
        ev = w.rest()
        w.close()
        self.assertEqual(len(ev), 1)
        self.assertEqual(ev[0]['object']['kind'], 'CustomResourceDefinition')
        self.assertEqual(list(ev[0]['object']), ['kind', 'apiVersion', 'metadata', 'spec', 'status'])


# ---------------------------------------------------------------- built-in kinds

class BuiltIns(Base):
    ns = 'core'

    def test_secret(self):
        url = '/api/v1/namespaces/core/secrets'
        o = self.ok(self.s.post(url, {'apiVersion': 'v1', 'kind': 'Secret', 'metadata': {'name': 's1'},
                                      'data': {'a': base64.b64encode(b'x').decode()}, 'stringData': {'b': 'y'}}), 201)
        self.assertEqual(o['data'], {'a': 'eA==', 'b': 'eQ=='})
        self.assertEqual(o['type'], 'Opaque')
        self.assertNotIn('stringData', o)
        r = self.s.post(url, {'apiVersion': 'v1', 'kind': 'Secret', 'metadata': {'name': 's2'}, 'data': {'a': '!!'}})
        self.assertEqual(r.status, 400)
        self.assertTrue(r.json['message'].startswith('Secret in version "v1" cannot be handled as a Secret: illegal '
                                                     'base64 data at input byte'))
        r = self.s.post(url, {'apiVersion': 'v1', 'kind': 'Secret', 'metadata': {'name': 's3'}, 'data': {'a': 5}})
        self.assertEqual(r.status, 400)
        r = self.s.post(url, {'apiVersion': 'v1', 'kind': 'Secret', 'metadata': {'name': 's4'},
                              'type': 'kubernetes.io/dockerconfigjson', 'stringData': {'.dockerconfigjson': '{'}})
        self.assertEqual(r.status, 422)
        self.assertEqual(r.json['details']['causes'][0]['field'], 'data[.dockerconfigjson]')
        self.assertNotIn('{', r.json['message'].split('Invalid value: ')[1][:30])      # contents stay secret
        o['type'] = 'kubernetes.io/tls'
        r = self.s.put(url + '/s1', o)
        self.assertEqual(r.status, 422)
        # immutable
        o = self.ok(self.s.post(url, {'apiVersion': 'v1', 'kind': 'Secret', 'metadata': {'name': 'imm'},
                                      'immutable': True, 'stringData': {'a': 'b'}}), 201)
        r = self.s.patch(url + '/imm', {'stringData': {'a': 'c'}})
        self.assertEqual(r.status, 422)
        self.assertEqual(r.json['details']['causes'][0]['message'], 'Forbidden: field is immutable when `immutable` '
                                                                    'is set')

    def test_events_both_groups(self):
        e = {'apiVersion': 'v1', 'kind': 'Event', 'metadata': {'name': 'ev1'},
             'involvedObject': {'kind': 'Pod', 'name': 'p', 'namespace': 'core', 'uid': 'u1'},
             'reason': 'Started', 'message': 'hello', 'type': 'Normal', 'source': {'component': 'c'},
             'firstTimestamp': '2026-01-01T01:00:00+01:00'}
        o = self.ok(self.s.post('/api/v1/namespaces/core/events', e), 201)
        self.assertEqual(o['firstTimestamp'], '2026-01-01T00:00:00Z')
        v = self.ok(self.s.get('/apis/events.k8s.io/v1/namespaces/core/events/ev1'))
        self.assertEqual(v['apiVersion'], 'events.k8s.io/v1')
        self.assertEqual(v['regarding']['name'], 'p')
        self.assertEqual(v['note'], 'hello')
        self.assertEqual(v['deprecatedFirstTimestamp'], '2026-01-01T00:00:00Z')
        r = self.ok(self.s.get('/api/v1/namespaces/core/events?fieldSelector=involvedObject.name%3Dp,'
                               'involvedObject.kind%3DPod,reason%3DStarted'))
        self.assertEqual([i['metadata']['name'] for i in r['items']], ['ev1'])
        ne = {'apiVersion': 'events.k8s.io/v1', 'kind': 'Event', 'metadata': {'name': 'ev2'},
              'eventTime': '2026-01-01T00:00:00Z', 'reportingController': 'example.com/ctl',
              'reportingInstance': 'i', 'action': 'Act', 'reason': 'Why', 'type': 'Warning',
              'regarding': {'kind': 'Node', 'name': 'n'}, 'note': 'n'}
        o = self.ok(self.s.post('/apis/events.k8s.io/v1/namespaces/core/events', ne), 201)
        self.assertEqual(o['eventTime'], '2026-01-01T00:00:00.000000Z')
        c = self.ok(self.s.get('/api/v1/namespaces/core/events/ev2'))
        self.assertEqual(c['message'], 'n')
        self.assertEqual(c['reportingComponent'], 'example.com/ctl')
        r = self.s.post('/apis/events.k8s.io/v1/namespaces/core/events', dict(ne, metadata={'name': 'ev3'},
                                                                               reportingController=''))
        self.assertEqual(r.status, 422)

    def test_event_names(self):
        """core/v1 keeps kube's legacy event validation: any path segment is
        a name (the assisted-installer-controller creates "AssistedControllerIsReady");
        events.k8s.io/v1 wants a DNS subdomain."""
        e = {'apiVersion': 'v1', 'kind': 'Event', 'metadata': {'name': 'AssistedControllerIsReady'},
             'involvedObject': {'namespace': 'core', 'name': 'assisted-installer-controller'},
             'reason': 'AssistedControllerIsReady', 'message': 'ready', 'type': 'Normal', 'count': 1}
        self.ok(self.s.post('/api/v1/namespaces/core/events', e), 201)
        self.ok(self.s.get('/api/v1/namespaces/core/events/AssistedControllerIsReady'))
        r = self.s.post('/api/v1/namespaces/core/events', dict(e, metadata={'name': 'a%b'}))
        self.assertEqual(r.status, 422)
        self.assertIn('may not contain "%"', r.json['message'])
        ne = {'apiVersion': 'events.k8s.io/v1', 'kind': 'Event', 'metadata': {'name': 'UpperCase'},
              'eventTime': '2026-01-01T00:00:00Z', 'reportingController': 'example.com/ctl',
              'reportingInstance': 'i', 'action': 'Act', 'reason': 'Why', 'type': 'Normal',
              'regarding': {'kind': 'Node', 'name': 'n'}, 'note': 'n'}
        r = self.s.post('/apis/events.k8s.io/v1/namespaces/core/events', ne)
        self.assertEqual(r.status, 422)
        self.assertIn('a lowercase RFC 1123 subdomain', r.json['message'])

    def test_event_nulls_are_zero_values(self):
        """A core/v1 Event as client-go writes it: "eventTime": null and
        "firstTimestamp": null (metav1 times take null as zero) in a create,
        a PUT of what was read back, and a merge patch."""
        url = '/api/v1/namespaces/core/events'
        e = {'apiVersion': 'v1', 'kind': 'Event', 'metadata': {'name': 'evnull'},
             'involvedObject': {'kind': 'Pod', 'name': 'p', 'namespace': 'core'}, 'reason': 'R', 'message': 'm',
             'eventTime': None, 'firstTimestamp': None, 'series': None, 'count': None}
        o = self.ok(self.s.post(url, e), 201)
        self.assertIsNone(o['eventTime'])
        self.assertIsNone(o['firstTimestamp'])
        self.assertNotIn('series', o)
        o['message'] = 'put'
        o['eventTime'] = None
        o = self.ok(self.s.put(url + '/evnull', o))
        self.assertEqual(o['message'], 'put')
        self.assertIsNone(o['eventTime'])
        o = self.ok(self.s.patch(url + '/evnull', {'message': 'patched', 'lastTimestamp': None}))
        self.assertEqual(o['message'], 'patched')
        self.assertIsNone(o['lastTimestamp'])

    def test_lease(self):
        url = '/apis/coordination.k8s.io/v1/namespaces/core/leases'
        spec = {'holderIdentity': 'a', 'leaseDurationSeconds': 15, 'renewTime': '2026-01-01T00:00:00Z'}
        o = self.ok(self.s.put(url + '/l1', {'apiVersion': 'coordination.k8s.io/v1', 'kind': 'Lease',
                                             'metadata': {'name': 'l1'}, 'spec': spec}), 201)
        self.assertEqual(o['spec']['renewTime'], '2026-01-01T00:00:00.000000Z')
        stale = copy.deepcopy(o)
        o['spec']['holderIdentity'] = 'b'
        self.ok(self.s.put(url + '/l1', o))
        stale['spec']['holderIdentity'] = 'c'
        r = self.s.put(url + '/l1', stale)
        self.assertEqual(r.status, 409)
        self.assertEqual(r.json['message'], 'Operation cannot be fulfilled on leases.coordination.k8s.io "l1": the '
                                            'object has been modified; please apply your changes to the latest '
                                            'version and try again')
        r = self.s.post(url, {'apiVersion': 'coordination.k8s.io/v1', 'kind': 'Lease', 'metadata': {'name': 'l2'},
                              'spec': {'leaseDurationSeconds': 0}})
        self.assertEqual(r.status, 422)

    def test_nodes_and_conditions(self):
        n = self.s.ctl('POST', '/nodes/conditions', {'name': 'node-a', 'conditions': [
            {'type': 'Ready', 'status': 'True', 'reason': 'KubeletReady', 'message': 'kubelet is posting ready status'}]})
        self.assertEqual(n['node']['status']['conditions'][0]['type'], 'Ready')
        self.s.settle()     # the node controllers' writes first (TTL annotation)
        o = self.ok(self.s.get('/api/v1/nodes/node-a'))
        self.assertEqual([c['status'] for c in o['status']['conditions']], ['True'])
        self.assertEqual(o['status']['nodeInfo']['kubeletVersion'], '')
        # the main endpoint ignores status; /status ignores spec
        o['status']['conditions'][0]['status'] = 'False'
        o['spec']['unschedulable'] = True
        o = self.ok(self.s.put('/api/v1/nodes/node-a', o))
        self.assertEqual(o['status']['conditions'][0]['status'], 'True')
        self.assertTrue(o['spec']['unschedulable'])
        r = self.ok(self.s.get('/api/v1/nodes?fieldSelector=spec.unschedulable%3Dtrue'))
        self.assertEqual([i['metadata']['name'] for i in r['items']], ['node-a'])
        p = self.ok(self.s.patch('/api/v1/nodes/node-a/status', {'status': {'conditions': [
            {'type': 'Ready', 'status': 'False'}]}, 'spec': {'unschedulable': False}},
            ptype='application/strategic-merge-patch+json'))
        self.assertEqual(p['status']['conditions'][0]['status'], 'False')
        self.assertEqual(p['status']['conditions'][0]['reason'], 'KubeletReady')
        self.assertTrue(p['spec']['unschedulable'])

    def test_pods_status_and_logs(self):
        url = '/api/v1/namespaces/core/pods'
        pod = {'apiVersion': 'v1', 'kind': 'Pod', 'metadata': {'name': 'p1'},
               'spec': {'nodeName': 'node-a', 'containers': [{'name': 'c', 'image': 'busybox'}]}}
        o = self.ok(self.s.post(url, pod), 201)
        self.assertEqual(o['status']['phase'], 'Pending')
        self.assertEqual(o['spec']['containers'][0]['imagePullPolicy'], 'Always')
        self.assertEqual(list(o)[:3], ['kind', 'apiVersion', 'metadata'])
        r = self.s.post(url, {'apiVersion': 'v1', 'kind': 'Pod', 'metadata': {'name': 'p2'}, 'spec': {}})
        self.assertEqual(r.status, 422)
        self.assertEqual(r.json['details']['causes'][0]['field'], 'spec.containers')
        o = self.ok(self.s.patch(url + '/p1/status', {'status': {'phase': 'Running'}}))
        self.assertEqual(o['status']['phase'], 'Running')
        r = self.ok(self.s.get(url + '?fieldSelector=spec.nodeName%3Dnode-a,status.phase%3DRunning'))
        self.assertEqual([i['metadata']['name'] for i in r['items']], ['p1'])
        r = self.s.patch(url + '/p1', {'spec': {'nodeName': 'node-b'}})
        self.assertEqual(r.status, 422)
        self.s.ctl('POST', '/pods/log', {'namespace': 'core', 'name': 'p1', 'container': 'c',
                                         'text': 'line 1\nline 2\nline 3\n'})
        r = self.s.get(url + '/p1/log')
        self.assertEqual((r.status, r.text), (200, 'line 1\nline 2\nline 3\n'))
        self.assertEqual(self.s.get(url + '/p1/log?tailLines=1').text, 'line 3\n')
        r = self.s.get(url + '/p1/log?container=nope')
        self.assertEqual((r.status, r.json['message']), (400, 'container nope is not valid for pod p1'))
        self.assertEqual(self.s.get(url + '/nope/log').status, 404)
        # follow: streams what is appended until the pod goes
        w = self.s.watch(url + '/p1/log?follow=true')
        self.assertEqual(w.resp.readline(), b'line 1\n')
        self.s.ctl('POST', '/pods/log', {'namespace': 'core', 'name': 'p1', 'container': 'c', 'text': 'more\n',
                                         'append': True})
        self.assertEqual(w.resp.readline(), b'line 2\n')
        self.assertEqual(w.resp.readline(), b'line 3\n')
        self.assertEqual(w.resp.readline(), b'more\n')
        # deletion: graceful; the stand-in kubelet finishes it
        d = self.ok(self.s.delete(url + '/p1'))
        self.assertEqual(d['kind'], 'Pod')
        self.assertEqual(d['metadata']['deletionGracePeriodSeconds'], 30)
        self.assertEqual(w.resp.read(), b'')
        w.close()
        wait_for(lambda: self.s.get(url + '/p1').status == 404, what='pod gone')

    def test_csr_approval_and_signing(self):
        import kcerts
        csr_pem, _ = kcerts.make_csr('system:node:node-a', ['system:nodes'])
        url = '/apis/certificates.k8s.io/v1/certificatesigningrequests'
        body = {'apiVersion': 'certificates.k8s.io/v1', 'kind': 'CertificateSigningRequest',
                'metadata': {'name': 'csr-1'},
                'spec': {'request': base64.b64encode(csr_pem).decode(), 'usages': ['digital signature', 'client auth'],
                         'signerName': 'kubernetes.io/kube-apiserver-client-kubelet', 'username': 'spoofed'}}
        o = self.ok(self.s.post(url, body), 201)
        self.assertEqual(o['spec']['username'], 'kubernetes-admin')
        self.assertEqual(o['spec']['groups'], ['system:masters', 'system:authenticated'])
        self.assertEqual(o['status'], {})
        r = self.ok(self.s.get(url + '?fieldSelector=spec.signerName%3Dkubernetes.io/kube-apiserver-client-kubelet'))
        self.assertEqual([i['metadata']['name'] for i in r['items']], ['csr-1'])
        o['status'] = {'conditions': [{'type': 'Approved', 'status': 'True', 'reason': 'TestApproved',
                                       'message': 'approved by the test'}]}
        a = self.ok(self.s.put(url + '/csr-1/approval', o))
        self.assertEqual(a['status']['conditions'][0]['type'], 'Approved')
        self.assertTrue(a['status']['conditions'][0]['lastUpdateTime'])
        signed = wait_for(lambda: self.ok(self.s.get(url + '/csr-1')).get('status', {}).get('certificate'),
                          what='certificate issued')
        self.assertIn(b'-----BEGIN CERTIFICATE-----', base64.b64decode(signed))
        a = self.ok(self.s.get(url + '/csr-1'))
        r = self.s.put(url + '/csr-1/approval', dict(a, status={'conditions': [
            {'type': 'Approved', 'status': 'True'}, {'type': 'Denied', 'status': 'True'}]}))
        self.assertEqual(r.status, 422)
        r = self.s.post(url, dict(body, metadata={'name': 'csr-2'}, spec=dict(body['spec'], request='bm8=')))
        self.assertEqual(r.status, 422, r.raw)
        # a signer's certificate must be one
        self.s.ctl('POST', '/csr-signing', {'enabled': False})
        try:
            c3 = self.ok(self.s.post(url, dict(body, metadata={'name': 'csr-3'})), 201)
            r = self.s.patch(url + '/csr-3/status', {'status': {'certificate': base64.b64encode(b'junk').decode()}})
            self.assertEqual(r.status, 422)
            self.assertEqual(r.json['details']['causes'], [{'reason': 'FieldValueInvalid', 'field': 'status.certificate',
                                                            'message': 'Invalid value: "<certificate data>": must '
                                                                       'contain at least one CERTIFICATE PEM block'}])
            self.ok(self.s.patch(url + '/csr-3/status', {'status': {'certificate': signed}}))
            self.assertEqual(c3['status'], {})
        finally:
            self.s.ctl('POST', '/csr-signing', {'enabled': True})

    def test_csr_client_certificate_window(self):
        """kube-controller-manager's signer as seen on the real 1.26 (kcerts.signing_window):
        expirationSeconds 600 gives notBefore now-5m and notAfter now+10m, 86400 notBefore
        now-5m and notAfter notBefore+24h; under 600 is invalid; system:masters may not ask
        the kube-apiserver-client signer (CertificateSubjectRestriction admission)."""
        import kcerts
        url = '/apis/certificates.k8s.io/v1/certificatesigningrequests'

        def body(name, pem, seconds):
            return {'apiVersion': 'certificates.k8s.io/v1', 'kind': 'CertificateSigningRequest',
                    'metadata': {'name': name},
                    'spec': {'request': base64.b64encode(pem).decode(), 'usages': ['client auth'],
                             'signerName': 'kubernetes.io/kube-apiserver-client', 'expirationSeconds': seconds}}

        def dates(pem):
            out = subprocess.run(['openssl', 'x509', '-noout', '-startdate', '-enddate', '-subject', '-nameopt',
                                  'RFC2253', '-dateopt', 'iso_8601'], input=pem, stdout=subprocess.PIPE,
                                 check=True).stdout.decode().splitlines()
            d = dict(ln.split('=', 1) for ln in out)
            t = lambda s: calendar.timegm(time.strptime(s, '%Y-%m-%d %H:%M:%SZ'))  # noqa: E731
            return t(d['notBefore']), t(d['notAfter']), d['subject']

        pem, _ = kcerts.make_csr('cradle-test:client')
        for name, seconds, want_after in (('client-600', 600, lambda nb, now: now + 600),
                                          ('client-1d', 86400, lambda nb, now: nb + 86400)):
            self.ok(self.s.post(url, body(name, pem, seconds)), 201)
            o = self.ok(self.s.get(url + '/' + name))
            o['status'] = {'conditions': [{'type': 'Approved', 'status': 'True', 'reason': 'TestApproved',
                                           'message': 'approved by the test'}]}
            now = time.time()
            self.ok(self.s.put(url + '/%s/approval' % name, o))
            signed = wait_for(lambda: self.ok(self.s.get(url + '/' + name)).get('status', {}).get('certificate'),
                              what='certificate issued')
            nb, na, subject = dates(base64.b64decode(signed))
            self.assertEqual(subject, 'CN=cradle-test:client')
            self.assertAlmostEqual(nb, now - 300, delta=5)
            self.assertAlmostEqual(na, want_after(nb, now), delta=5)
        r = self.s.post(url, body('client-short', pem, 599))
        self.assertEqual(r.status, 422, r.raw)
        self.assertEqual(r.json['details']['causes'][0]['message'],
                         'Invalid value: 599: may not specify a duration less than 600 seconds (10 minutes)')
        masters, _ = kcerts.make_csr('cradle-test:admin', ['system:masters'])
        r = self.s.post(url, body('client-masters', masters, 600))
        self.assertEqual(r.status, 403, r.raw)
        self.assertEqual(r.json['message'], 'certificatesigningrequests.certificates.k8s.io "client-masters" is '
                         'forbidden: use of kubernetes.io/kube-apiserver-client signer with system:masters group '
                         'is not allowed')

    def test_discovery_core(self):
        r = self.ok(self.s.get('/api/v1'))
        self.assertEqual(list(r), ['kind', 'groupVersion', 'resources'])
        names = [x['name'] for x in r['resources']]
        for n in ('namespaces', 'namespaces/status', 'namespaces/finalize', 'secrets', 'configmaps', 'events',
                  'nodes', 'nodes/status', 'pods', 'pods/log', 'pods/status', 'services', 'serviceaccounts'):
            self.assertIn(n, names)
        pods = next(x for x in r['resources'] if x['name'] == 'pods')
        self.assertEqual(pods['shortNames'], ['po'])
        self.assertEqual(pods['storageVersionHash'], base64.b64encode(
            __import__('hashlib').sha256(b'/v1/Pod').digest()[:8]).decode())
        v = self.ok(self.s.get('/version'))
        self.assertEqual((v['major'], v['minor']), ('1', '26'))
        root = self.ok(self.s.get('/'))
        self.assertEqual(list(root), ['paths'])
        self.assertEqual(root['paths'], sorted(root['paths']))
        for p in ('/api', '/api/v1', '/apis', '/apis/rbac.authorization.k8s.io', '/apis/rbac.authorization.k8s.io/v1',
                  '/healthz', '/version'):
            self.assertIn(p, root['paths'])
        self.assertEqual(self.s.get('/apis/nope.example.com').status, 404)
        for ns in ('default', 'kube-system', 'kube-public', 'kube-node-lease'):
            self.ok(self.s.get('/api/v1/namespaces/' + ns))
        self.ok(self.s.get('/api/v1/namespaces/default/services/kubernetes'))
        cm = wait_for(lambda: self.s.get('/api/v1/namespaces/core/configmaps/kube-root-ca.crt').json.get('data'),
                      what='root CA published')
        with open(self.s.path('ca.crt')) as f:
            self.assertEqual(cm['ca.crt'], f.read())


# ---------------------------------------------------------------- patches and server-side apply

class Patches(Base):
    ns = 'pat'

    def test_strategic_merge_patch(self):
        url = '/api/v1/namespaces/pat/pods'
        pod = {'apiVersion': 'v1', 'kind': 'Pod', 'metadata': {'name': 'p', 'finalizers': ['a.io/x']},
               'spec': {'containers': [{'name': 'a', 'image': 'i:1'}, {'name': 'b', 'image': 'j:1'}]}}
        self.ok(self.s.post(url, pod), 201)
        o = self.ok(self.s.patch(url + '/p', {'metadata': {'finalizers': ['a.io/y']},
                                              'spec': {'containers': [{'name': 'b', 'image': 'j:2'}]}},
                                 ptype='application/strategic-merge-patch+json'))
        self.assertEqual([(c['name'], c['image']) for c in o['spec']['containers']], [('a', 'i:1'), ('b', 'j:2')])
        self.assertEqual(o['metadata']['finalizers'], ['a.io/x', 'a.io/y'])
        o = self.ok(self.s.patch(url + '/p', {'metadata': {'$deleteFromPrimitiveList/finalizers': ['a.io/x',
                                                                                                     'a.io/y']}},
                                 ptype='application/strategic-merge-patch+json'))
        self.assertNotIn('finalizers', o['metadata'])
        r = self.s.patch(agents('pat') + '/x', {}, ptype='application/strategic-merge-patch+json')
        self.assertEqual(r.status, 415)
        self.assertEqual(r.json['message'], 'the body of the request was in an unknown format - accepted media types '
                                            'include: application/json-patch+json, application/merge-patch+json, '
                                            'application/apply-patch+yaml')

    def test_json_patch_and_merge_patch(self):
        url = '/api/v1/namespaces/pat/configmaps'
        self.ok(self.s.post(url, cm_body('jp', {'a': '1', 'b': '2'})), 201)
        o = self.ok(self.s.patch(url + '/jp', [{'op': 'test', 'path': '/data/a', 'value': '1'},
                                               {'op': 'remove', 'path': '/data/b'},
                                               {'op': 'add', 'path': '/data/c', 'value': '3'},
                                               {'op': 'add', 'path': '/metadata/labels', 'value': {}},
                                               {'op': 'add', 'path': '/metadata/labels/x.io~1y', 'value': 'z'},
                                               {'op': 'move', 'from': '/data/a', 'path': '/data/e'}],
                                 ptype='application/json-patch+json'))
        self.assertEqual(o['data'], {'c': '3', 'e': '1'})
        self.assertEqual(o['metadata']['labels'], {'x.io/y': 'z'})
        r = self.s.patch(url + '/jp', [{'op': 'remove', 'path': '/data/zzz'}], ptype='application/json-patch+json')
        self.assertEqual(r.status, 422)
        r = self.s.patch(url + '/jp', {'op': 'x'}, ptype='application/json-patch+json')
        self.assertEqual(r.status, 400)
        o = self.ok(self.s.patch(url + '/jp', {'data': {'e': None, 'f': '4'}}))
        self.assertEqual(o['data'], {'c': '3', 'f': '4'})
        rv = o['metadata']['resourceVersion']
        r = self.s.patch(url + '/jp', {'metadata': {'resourceVersion': '1'}, 'data': {'g': '5'}})
        self.assertEqual(r.status, 409)
        self.ok(self.s.patch(url + '/jp', {'metadata': {'resourceVersion': rv}, 'data': {'g': '5'}}))
        self.assertEqual(self.s.patch(url + '/missing', {'data': {}}).status, 404)
        r = self.s.patch(url + '/jp', {'metadata': {'name': 'other'}})
        self.assertEqual(r.status, 400)

    def test_server_side_apply(self):
        url = agents('pat')
        cfg = ('apiVersion: agent-install.openshift.io/v1beta1\nkind: Agent\nmetadata:\n  name: ssa\n'
               '  labels:\n    a: "1"\nspec:\n  approved: false\n  role: worker\n')
        r = self.s.patch(url + '/ssa', cfg, ptype='application/apply-patch+yaml')
        self.assertEqual(r.status, 422)
        self.assertIn('fieldManager: Required value', r.json['message'])
        o = self.ok(self.s.patch(url + '/ssa?fieldManager=mgr-a', cfg, ptype='application/apply-patch+yaml'), 201)
        self.assertEqual(o['metadata']['managedFields'][0]['operation'], 'Apply')
        # another manager changes a field owned by mgr-a: an Update takes it over silently
        self.ok(self.s.patch(url + '/ssa?fieldManager=mgr-b', {'spec': {'role': 'master'}}))
        # mgr-a re-applies the old value: conflict
        r = self.s.patch(url + '/ssa?fieldManager=mgr-a', cfg, ptype='application/apply-patch+yaml')
        self.assertEqual(r.status, 409, r.raw)
        self.assertEqual(r.json['message'], 'Apply failed with 1 conflict: conflict with "mgr-b" using '
                                            'agent-install.openshift.io/v1beta1: .spec.role')
        self.assertEqual(r.json['details']['causes'], [{'reason': 'FieldManagerConflict', 'message':
                                                        'conflict with "mgr-b" using agent-install.openshift.io/v1beta1',
                                                        'field': '.spec.role'}])
        o = self.ok(self.s.patch(url + '/ssa?fieldManager=mgr-a&force=true', cfg,
                                 ptype='application/apply-patch+yaml'))
        self.assertEqual(o['spec']['role'], 'worker')
        # a field left out of the next apply is removed
        cfg2 = cfg.replace('  labels:\n    a: "1"\n', '')
        o = self.ok(self.s.patch(url + '/ssa?fieldManager=mgr-a', cfg2, ptype='application/apply-patch+yaml'))
        self.assertNotIn('labels', o['metadata'])


# ---------------------------------------------------------------- authentication and authorization

class Auth(Base):
    def test_kubeconfigs(self):
        kc = load_yaml(self.s.path('kubeconfig'))
        self.assertEqual(kc['clusters'][0]['cluster']['server'], 'https://127.0.0.1:%d' % self.s.port)
        with open(self.s.path('ca.crt'), 'rb') as f:
            self.assertEqual(base64.b64decode(kc['clusters'][0]['cluster']['certificate-authority-data']), f.read())
        user = kc['users'][0]['user']
        self.assertIn('client-certificate-data', user)
        self.assertIn('client-key-data', user)
        kt = load_yaml(self.s.path('kubeconfig-token'))
        tok = kt['users'][0]['user']['token']
        with open(self.s.path('admin-token')) as f:
            self.assertEqual(tok, f.read().strip())
        self.ok(self.s.get('/api/v1/namespaces', token=tok))
        kf = load_yaml(self.s.path('kubeconfig-files'))
        self.assertEqual(kf['clusters'][0]['cluster']['certificate-authority'], self.s.path('ca.crt'))
        self.assertEqual(kf['users'][0]['user']['client-certificate'], self.s.path('admin.crt'))
        self.assertEqual(oct(os.stat(self.s.path('kubeconfig')).st_mode & 0o777), '0o600')

    def test_other_users_tokens_and_forbidden(self):
        c = self.s.ctl('POST', '/certs', {'user': 'system:node:n1', 'groups': ['system:nodes']})
        self.assertTrue(os.path.exists(c['kubeconfig']))
        self.s.ctl('POST', '/tokens', {'token': 'tok-sa', 'user': 'system:serviceaccount:hub:ctl',
                                       'groups': ['system:serviceaccounts']})
        self.ok(self.s.get('/api/v1/namespaces/default/configmaps', token='tok-sa'))
        self.s.ctl('POST', '/deny', {'user': 'system:serviceaccount:hub:ctl', 'resource': 'secrets'})
        try:
            r = self.s.get('/api/v1/namespaces/default/secrets', token='tok-sa')
            self.assertEqual(r.status, 403)
            self.assertEqual(r.json['message'], 'secrets is forbidden: User "system:serviceaccount:hub:ctl" cannot '
                                                'list resource "secrets" in API group "" in the namespace "default"')
            self.assertEqual(r.json['details'], {'kind': 'secrets'})
            r = self.s.get('/api/v1/namespaces/default/secrets/x', token='tok-sa')
            self.assertEqual(r.json['message'], 'secrets "x" is forbidden: User "system:serviceaccount:hub:ctl" '
                                                'cannot get resource "secrets" in API group "" in the namespace '
                                                '"default"')
            # the certificate user is not denied
            r = self.s.get('/api/v1/namespaces/default/secrets', user_cert=(c['cert'], c['key']))
            self.assertEqual(r.status, 200)
        finally:
            self.s.ctl('DELETE', '/deny')
        # CN and O of a client certificate become the user of a CSR
        import kcerts
        csr_pem, _ = kcerts.make_csr('system:node:n1')
        o = self.ok(self.s.post('/apis/certificates.k8s.io/v1/certificatesigningrequests', {
            'apiVersion': 'certificates.k8s.io/v1', 'kind': 'CertificateSigningRequest', 'metadata': {'name': 'n1'},
            'spec': {'request': base64.b64encode(csr_pem).decode(), 'signerName': 'kubernetes.io/kubelet-serving',
                     'usages': ['server auth']}}, user_cert=(c['cert'], c['key'])), 201)
        self.assertEqual(o['spec']['username'], 'system:node:n1')
        self.assertEqual(o['spec']['groups'], ['system:nodes', 'system:authenticated'])
        self.s.ctl('DELETE', '/tokens?token=tok-sa')
        self.assertEqual(self.s.get('/api/v1/namespaces', token='tok-sa').status, 401)

    def test_request_log(self):
        n = self.s.ctl('GET', '/requests')['requests'][-1]['seq']
        self.s.get('/api/v1/namespaces/default/configmaps?limit=1', headers={'User-Agent': 'cradle/0.1'})
        reqs = self.s.ctl('GET', '/requests?since=%d' % n)['requests']
        self.assertEqual(len(reqs), 1)
        self.assertEqual((reqs[0]['verb'], reqs[0]['resource'], reqs[0]['query'], reqs[0]['userAgent'],
                          reqs[0]['user'], reqs[0]['code']),
                         ('list', 'configmaps', {'limit': '1'}, 'cradle/0.1', 'kubernetes-admin', 200))



# ---------------------------------------------------------------- what other writers and etcd do

class CrdNaming(Base):
    def test_conditions_null_then_names_accepted_then_established(self):
        crd = copy.deepcopy(TEST_CRD)
        crd['metadata']['name'] = 'sprockets.test.cradle.io'
        crd['spec']['names'] = {'plural': 'sprockets', 'kind': 'Sprocket'}
        o = self.ok(self.s.post('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd), 201)
        self.assertIn('conditions', o['status'])
        self.assertIsNone(o['status']['conditions'])
        w = self.s.watch('/apis/apiextensions.k8s.io/v1/customresourcedefinitions?watch=1&resourceVersion=%s'
                         '&fieldSelector=metadata.name%%3Dsprockets.test.cradle.io' % o['metadata']['resourceVersion'])
        seen = []
        try:
            while not seen or seen[-1][-1] != ('Established', 'True', 'InitialNamesAccepted'):
                ev = w.next()
                self.assertIsNotNone(ev)
                seen.append([(c['type'], c['status'], c['reason'])
                             for c in ev['object']['status'].get('conditions') or []])
        finally:
            w.close()
        # the naming controller, then the establishing controller: two writes
        self.assertEqual(seen, [[('NamesAccepted', 'True', 'NoConflicts'), ('Established', 'False', 'Installing')],
                                [('NamesAccepted', 'True', 'NoConflicts'),
                                 ('Established', 'True', 'InitialNamesAccepted')]])
        self.ok(self.s.delete('/apis/apiextensions.k8s.io/v1/customresourcedefinitions/sprockets.test.cradle.io'))


def node_body(name, **spec):
    return {'apiVersion': 'v1', 'kind': 'Node', 'metadata': {'name': name}, 'spec': spec}


def ready(status, heartbeat=None):
    return {'type': 'Ready', 'status': status, 'reason': 'KubeletReady' if status == 'True' else 'KubeletNotReady',
            'message': 'test', 'lastHeartbeatTime': heartbeat or time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}


def set_conditions(s, name, *conds):
    r = s.patch('/api/v1/nodes/%s/status' % name, {'status': {'conditions': list(conds)}},
                ptype='application/strategic-merge-patch+json')
    assert r.status == 200, r
    s.settle()
    return s.get('/api/v1/nodes/' + name).json


def taints(node):
    return [(t['key'], t['effect']) for t in node['spec'].get('taints') or []]


class NodeControllers(Base):
    """kube-controller-manager writes to every Node right after it appears."""

    def test_ttl_annotation_right_after_creation(self):
        o = self.ok(self.s.post('/api/v1/nodes', node_body('ttl-a')), 201)
        self.assertNotIn('annotations', o['metadata'])
        self.s.settle()
        n = self.ok(self.s.get('/api/v1/nodes/ttl-a'))
        self.assertEqual(n['metadata']['annotations'], {'node.alpha.kubernetes.io/ttl': '0'})
        self.assertIn('kube-controller-manager', [e['manager'] for e in n['metadata']['managedFields']])
        # a client that read the Node at its creation and writes it back now conflicts
        o['metadata']['labels'] = {'a': 'b'}
        r = self.s.put('/api/v1/nodes/ttl-a', o)
        self.assertEqual(r.status, 409, r)
        self.assertEqual(r.json['reason'], 'Conflict')
        self.ok(self.s.delete('/api/v1/nodes/ttl-a'))

    def test_taints_follow_the_conditions(self):
        keep = {'key': 'node-role.kubernetes.io/master', 'effect': 'NoSchedule'}
        self.ok(self.s.post('/api/v1/nodes', node_body('taint-a', taints=[keep])), 201)
        self.s.settle()
        # no conditions yet: no condition taint
        self.assertEqual(taints(self.s.get('/api/v1/nodes/taint-a').json), [('node-role.kubernetes.io/master',
                                                                              'NoSchedule')])
        n = set_conditions(self.s, 'taint-a', ready('False'))
        self.assertEqual(taints(n), [('node-role.kubernetes.io/master', 'NoSchedule'),
                                     ('node.kubernetes.io/not-ready', 'NoSchedule')])
        self.assertEqual(n['spec']['taints'][0], keep)
        self.assertEqual(list(n['spec']['taints'][1]), ['key', 'effect', 'timeAdded'])
        n = set_conditions(self.s, 'taint-a', ready('Unknown'))
        self.assertEqual(taints(n), [('node-role.kubernetes.io/master', 'NoSchedule'),
                                     ('node.kubernetes.io/unreachable', 'NoSchedule')])
        n = set_conditions(self.s, 'taint-a', ready('True'), {'type': 'MemoryPressure', 'status': 'True'})
        self.assertEqual(taints(n), [('node-role.kubernetes.io/master', 'NoSchedule'),
                                     ('node.kubernetes.io/memory-pressure', 'NoSchedule')])
        n = set_conditions(self.s, 'taint-a', {'type': 'MemoryPressure', 'status': 'False'})
        self.assertEqual(n['spec']['taints'], [keep])
        self.ok(self.s.patch('/api/v1/nodes/taint-a', {'spec': {'unschedulable': True}}))
        self.s.settle()
        self.assertEqual(taints(self.s.get('/api/v1/nodes/taint-a').json),
                         [('node-role.kubernetes.io/master', 'NoSchedule'),
                          ('node.kubernetes.io/unschedulable', 'NoSchedule')])
        self.ok(self.s.delete('/api/v1/nodes/taint-a'))


class SizeLimits(Base):
    """What etcd and the apiserver refuse for its size."""
    ns = 'sizes'
    ETCD = {'kind': 'Status', 'apiVersion': 'v1', 'metadata': {}, 'status': 'Failure',
            'message': 'etcdserver: request is too large', 'code': 500}
    TOO_LARGE = {'kind': 'Status', 'apiVersion': 'v1', 'metadata': {}, 'status': 'Failure',
                 'message': 'Request entity too large: limit is 3145728', 'reason': 'RequestEntityTooLarge',
                 'code': 413}
    GRPC = re.compile(r'^rpc error: code = ResourceExhausted desc = trying to send message larger than max '
                      r'\((\d+) vs\. 2097152\)$')

    def agent(self, name, size):
        return agent_body(name, hostname='h' * size)

    def assert_etcd_refused(self, r):
        self.assertEqual(r.status, 500, r)
        self.assertEqual(json.dumps(r.json), json.dumps(self.ETCD))

    def assert_grpc_refused(self, r, size):
        self.assertEqual(r.status, 500, r)
        self.assertEqual(list(r.json), ['kind', 'apiVersion', 'metadata', 'status', 'message', 'code'])
        m = self.GRPC.match(r.json['message'])
        self.assertTrue(m, r.json['message'])
        # the message etcd's client would send: the object, its key, framing
        self.assertTrue(size < int(m.group(1)) < size + 4096, (size, m.group(1)))

    def test_create(self):
        r = self.s.post(agents('sizes'), self.agent('big-1', 1600 * 1024))
        self.assert_etcd_refused(r)
        self.assertEqual(self.s.get(agents('sizes') + '/big-1').status, 404)
        r = self.s.post(agents('sizes'), self.agent('big-2', 2200 * 1024))
        self.assert_grpc_refused(r, 2200 * 1024)
        r = self.s.post(agents('sizes'), self.agent('big-3', 3 * 1024 * 1024))
        self.assertEqual(r.status, 413, r)
        self.assertEqual(json.dumps(r.json), json.dumps(self.TOO_LARGE))
        # under the limits, and a dry run (which etcd never sees), pass
        self.ok(self.s.post(agents('sizes'), self.agent('big-4', 1400 * 1024)), 201)
        self.ok(self.s.post(agents('sizes') + '?dryRun=All', self.agent('big-5', 1600 * 1024)), 201)

    def test_update_patch_and_status(self):
        o = self.ok(self.s.post(agents('sizes'), self.agent('grow', 10)), 201)
        o['spec']['hostname'] = 'h' * (1600 * 1024)
        self.assert_etcd_refused(self.s.put(agents('sizes') + '/grow', o))
        self.assert_etcd_refused(self.s.patch(agents('sizes') + '/grow', {'spec': {'hostname': 'x' * (1600 * 1024)}}))
        r = self.s.patch(agents('sizes') + '/grow', [{'op': 'replace', 'path': '/spec/hostname',
                                                     'value': 'x' * (2200 * 1024)}],
                         ptype='application/json-patch+json')
        self.assert_grpc_refused(r, 2200 * 1024)
        # the status subresource: a condition message as long as a service's error text
        cond = {'type': 'SpecSynced', 'status': 'False', 'reason': 'InputError', 'message': 'e' * (2600 * 1024),
                'lastTransitionTime': '2026-01-01T00:00:00Z'}
        r = self.s.patch(agents('sizes') + '/grow/status', {'status': {'conditions': [cond]}})
        self.assert_grpc_refused(r, 2600 * 1024)
        cond['message'] = 'e' * (3200 * 1024)
        r = self.s.patch(agents('sizes') + '/grow/status', {'status': {'conditions': [cond]}})
        self.assertEqual(r.status, 413, r)
        # nothing of it was stored
        cur = self.ok(self.s.get(agents('sizes') + '/grow'))
        self.assertEqual(cur['spec']['hostname'], 'h' * 10)
        self.assertEqual(cur['metadata']['resourceVersion'], o['metadata']['resourceVersion'])


# ---------------------------------------------------------------- CRD scale subresource (CAPI)

class CapiCrds(unittest.TestCase):
    """Cluster API's CRDs (tests/capi), on a server of the class's own (the
    module's lists the reference CRDs alone) or unchanged on the cluster of
    CRADLE_TEST_KUBECONFIG (the CRDs it lacks are created and left), in a
    namespace of the class's own."""
    maxDiff = None

    @classmethod
    def setUpClass(cls):
        sys.path.insert(0, os.path.join(os.path.dirname(HERE), 'capi'))
        import capicore
        cls.server = None
        real = os.environ.get('CRADLE_TEST_KUBECONFIG')
        if not real:
            cls.server = H.Server().start()
        cls.kube = capicore.Kube(real or os.path.join(cls.server.state, 'kubeconfig'))
        capicore.ensure_crds(cls.kube)
        cls.ns = 'scale-' + base64.b32encode(os.urandom(5)).decode().lower()
        cls.raw('POST', '/api/v1/namespaces', {'apiVersion': 'v1', 'kind': 'Namespace', 'metadata': {'name': cls.ns}})
        cls.base = '/apis/cluster.x-k8s.io/v1beta2/namespaces/%s/machinesets' % cls.ns

    @classmethod
    def tearDownClass(cls):
        cls.raw('DELETE', '/api/v1/namespaces/' + cls.ns)
        cls.kube.close()
        if cls.server:
            stop_clean(cls.server)

    @classmethod
    def raw(cls, method, path, body=None, ctype='application/json'):
        return cls.kube.exchange(method, path, body, ctype, headers={'User-Agent': 'scale-test/1'})



class ScaleSubresource(CapiCrds):
    """The scale subresource of a CRD (CAPI's MachineSet), as
    apiextensions-apiserver serves it: discovery, GET, PUT, merge and JSON
    patches, the 500 of an object without spec.replicas, conflicts, and
    managedFields."""

    def machine_set(self, name, replicas=None):
        spec = {'clusterName': 'c1', 'selector': {'matchLabels': {'a': 'b'}},
                'template': {'metadata': {'labels': {'a': 'b'}},
                             'spec': {'clusterName': 'c1', 'bootstrap': {'dataSecretName': 'x'},
                                      'infrastructureRef': {'apiGroup': 'infrastructure.cluster.x-k8s.io',
                                                            'kind': 'Metal3Machine', 'name': 'm'}}}}
        if replicas is not None:
            spec['replicas'] = replicas
        code, o = self.raw('POST', self.base, {'apiVersion': 'cluster.x-k8s.io/v1beta2', 'kind': 'MachineSet',
                                               'metadata': {'name': name}, 'spec': spec})
        self.assertEqual(code, 201, o)
        return o

    def expected(self, o, spec, status):
        m = o['metadata']
        return {'kind': 'Scale', 'apiVersion': 'autoscaling/v1',
                'metadata': {'name': m['name'], 'namespace': self.ns, 'uid': m['uid'],
                             'resourceVersion': m['resourceVersion'], 'creationTimestamp': m['creationTimestamp']},
                'spec': spec, 'status': status}

    def test_discovery(self):
        code, o = self.raw('GET', '/apis/cluster.x-k8s.io/v1beta2')
        self.assertEqual(code, 200)
        subs = [r for r in o['resources'] if r['name'].endswith('/scale')]
        self.assertEqual(sorted(subs, key=lambda r: r['name']), [
            {'name': '%s/scale' % r, 'singularName': '', 'namespaced': True, 'group': 'autoscaling',
             'version': 'v1', 'kind': 'Scale', 'verbs': ['get', 'patch', 'update']}
            for r in ('machinedeployments', 'machinesets')])
        self.assertEqual([list(r) for r in subs][0], ['name', 'singularName', 'namespaced', 'group', 'version',
                                                      'kind', 'verbs'])

    def test_without_spec_replicas(self):
        self.machine_set('none')
        code, o = self.raw('GET', self.base + '/none/scale')
        self.assertEqual((code, o), (500, {
            'kind': 'Status', 'apiVersion': 'v1', 'metadata': {}, 'status': 'Failure',
            'message': 'Internal error occurred: the spec replicas field ".spec.replicas" does not exist',
            'reason': 'InternalError',
            'details': {'causes': [{'message': 'the spec replicas field ".spec.replicas" does not exist'}]},
            'code': 500}))

    def test_get_update_patch(self):
        self.machine_set('ms', 2)
        code, o = self.raw('PATCH', self.base + '/ms/status', {'status': {'replicas': 1, 'selector': 'a=b'}},
                           'application/merge-patch+json')
        self.assertEqual(code, 200, o)
        code, sc = self.raw('GET', self.base + '/ms/scale')
        self.assertEqual(code, 200, sc)
        self.assertEqual(sc, self.expected(o, {'replicas': 2}, {'replicas': 1, 'selector': 'a=b'}))
        self.assertEqual(list(sc), ['kind', 'apiVersion', 'metadata', 'spec', 'status'])
        # a merge patch to 0: spec.replicas omitted from the Scale, 0 in the object, generation + 1
        code, sc = self.raw('PATCH', self.base + '/ms/scale', {'spec': {'replicas': 0}},
                            'application/merge-patch+json')
        self.assertEqual(code, 200, sc)
        o2 = self.raw('GET', self.base + '/ms')[1]
        self.assertEqual(sc, self.expected(o2, {}, {'replicas': 1, 'selector': 'a=b'}))
        self.assertEqual(o2['spec']['replicas'], 0)
        self.assertEqual(o2['metadata']['generation'], o['metadata']['generation'] + 1)
        self.assertEqual(o2['status'], o['status'])
        # no managedFields entry owns the replicas afterwards (the creator's entry lost them)
        for e in o2['metadata']['managedFields']:
            self.assertNotIn('f:replicas', e['fieldsV1'].get('f:spec', {}), e)
        # a JSON patch
        code, sc = self.raw('PATCH', self.base + '/ms/scale', [{'op': 'replace', 'path': '/spec/replicas',
                                                                'value': 4}], 'application/json-patch+json')
        self.assertEqual((code, sc['spec']), (200, {'replicas': 4}))
        # PUT: a stale resourceVersion conflicts, the current one replaces
        stale = dict(sc, metadata=dict(sc['metadata'], resourceVersion=o['metadata']['resourceVersion']),
                     spec={'replicas': 5})
        code, err = self.raw('PUT', self.base + '/ms/scale', stale)
        self.assertEqual((code, err['reason'], err['message']), (409, 'Conflict', (
            'Operation cannot be fulfilled on machinesets.cluster.x-k8s.io "ms": the object has been modified; '
            'please apply your changes to the latest version and try again')))
        code, sc = self.raw('PUT', self.base + '/ms/scale', dict(sc, spec={'replicas': 5}))
        self.assertEqual((code, sc['spec']), (200, {'replicas': 5}))
        self.assertEqual(self.raw('GET', self.base + '/ms')[1]['spec']['replicas'], 5)


class ConversionNone(CapiCrds):
    """A CRD serving several versions with conversion None (CAPI's, as the
    reference bases are applied): only apiVersion is rewritten, and every
    read prunes the object with the schema of the version asked for."""

    def test_read_through_the_other_version(self):
        v1b2 = '/apis/cluster.x-k8s.io/v1beta2/namespaces/%s/clusters' % self.ns
        v1b1 = '/apis/cluster.x-k8s.io/v1beta1/namespaces/%s/clusters' % self.ns
        code, o = self.raw('POST', v1b2, {'apiVersion': 'cluster.x-k8s.io/v1beta2', 'kind': 'Cluster',
                                          'metadata': {'name': 'new'},
                                          'spec': {'paused': True, 'controlPlaneRef': {
                                              'apiGroup': 'controlplane.cluster.x-k8s.io', 'kind': 'X',
                                              'name': 'c'}}})
        self.assertEqual(code, 201, o)
        code, old = self.raw('GET', v1b1 + '/new')
        self.assertEqual(code, 200, old)
        self.assertEqual(old['apiVersion'], 'cluster.x-k8s.io/v1beta1')
        # v1beta1's ObjectReference has no apiGroup
        self.assertEqual(old['spec'], {'controlPlaneRef': {'kind': 'X', 'name': 'c'}, 'paused': True})
        self.assertEqual([m['apiVersion'] for m in old['metadata']['managedFields']], ['cluster.x-k8s.io/v1beta2'])
        self.assertEqual(old['metadata']['resourceVersion'], o['metadata']['resourceVersion'])
        # and the other way: written with v1beta1's apiVersion, which v1beta2 does not know
        code, o = self.raw('POST', v1b1, {'apiVersion': 'cluster.x-k8s.io/v1beta1', 'kind': 'Cluster',
                                          'metadata': {'name': 'old'},
                                          'spec': {'paused': True, 'controlPlaneRef': {
                                              'apiVersion': 'controlplane.cluster.x-k8s.io/v1', 'kind': 'X',
                                              'name': 'c'}}})
        self.assertEqual(code, 201, o)
        # stored pruned with the storage version's schema: the answer (read back as v1beta1) lacks it too
        self.assertEqual(o['spec']['controlPlaneRef'], {'kind': 'X', 'name': 'c'})
        code, new = self.raw('GET', v1b2 + '/old')
        self.assertEqual((code, new['apiVersion']), (200, 'cluster.x-k8s.io/v1beta2'))
        self.assertEqual(new['spec'], {'controlPlaneRef': {'kind': 'X', 'name': 'c'}, 'paused': True})
        code, lst = self.raw('GET', v1b2)
        self.assertEqual(sorted(i['spec']['controlPlaneRef'].get('apiVersion', '-') for i in lst['items']), ['-', '-'])


class OpenShiftCluster(unittest.TestCase):
    """A server of its own, as an OpenShift hub: openshift-service-ca.crt in
    every namespace, and a kubelet-silence grace period short enough to see."""

    @classmethod
    def setUpClass(cls):
        cls.s = H.Server(['--openshift-service-ca', '--node-monitor-grace-period', '2']).start()

    @classmethod
    def tearDownClass(cls):
        stop_clean(cls.s)

    def test_service_ca_published_in_every_namespace(self):
        ns_create(self.s, 'osh')
        self.s.settle()
        cms = self.s.get('/api/v1/namespaces/osh/configmaps').json['items']
        self.assertEqual([c['metadata']['name'] for c in cms], ['kube-root-ca.crt', 'openshift-service-ca.crt'])
        cm = cms[1]
        self.assertEqual(cm['metadata']['annotations'], {'service.beta.openshift.io/inject-cabundle': 'true'})
        self.assertIn('BEGIN CERTIFICATE', cm['data']['service-ca.crt'])
        self.assertEqual(sorted(e['manager'] for e in cm['metadata']['managedFields']),
                         ['kube-controller-manager', 'service-ca-operator'])
        cms = self.s.get('/api/v1/namespaces/default/configmaps').json['items']
        self.assertIn('openshift-service-ca.crt', [c['metadata']['name'] for c in cms])

    def test_silent_kubelet_turns_unknown(self):
        stop = threading.Event()
        self.s.post('/api/v1/namespaces', {'apiVersion': 'v1', 'kind': 'Namespace',
                                           'metadata': {'name': 'kube-node-lease'}})

        def renew():
            # the kubelet's node lease, renewed far more often than the grace period
            path = '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases'
            self.s.post(path, {'apiVersion': 'coordination.k8s.io/v1', 'kind': 'Lease',
                               'metadata': {'name': 'alive'}, 'spec': {'holderIdentity': 'alive'}})
            while not stop.wait(0.2):
                now = time.strftime('%Y-%m-%dT%H:%M:%S.000000Z', time.gmtime())
                self.s.patch(path + '/alive', {'spec': {'renewTime': now}})
        for name in ('silent', 'alive'):
            self.assertEqual(self.s.post('/api/v1/nodes', node_body(name)).status, 201)
            set_conditions(self.s, name, ready('True'))
        t = threading.Thread(target=renew)
        t.start()
        try:
            n = wait_for(lambda: (lambda o: o if o['status']['conditions'][0]['status'] == 'Unknown' else None)(
                self.s.get('/api/v1/nodes/silent').json), what='the silent node Unknown')
            alive = self.s.get('/api/v1/nodes/alive').json
        finally:
            stop.set()
            t.join()
        c = n['status']['conditions'][0]
        self.assertEqual((c['type'], c['reason'], c['message']),
                         ('Ready', 'NodeStatusUnknown', 'Kubelet stopped posting node status.'))
        self.assertEqual([(x['type'], x['status'], x['reason']) for x in n['status']['conditions'][1:]],
                         [(t, 'Unknown', 'NodeStatusNeverUpdated') for t in ('MemoryPressure', 'DiskPressure',
                                                                             'PIDPressure')])
        self.s.settle()
        self.assertEqual(taints(self.s.get('/api/v1/nodes/silent').json),
                         [('node.kubernetes.io/unreachable', 'NoSchedule')])
        self.assertEqual([x['status'] for x in alive['status']['conditions']], ['True'])
        # the kubelet posting again makes it Ready again, and the taint goes
        n = set_conditions(self.s, 'silent', ready('True'))
        self.assertEqual(n['status']['conditions'][0]['status'], 'True')
        self.assertEqual(taints(n), [])


# ---------------------------------------------------------------- faults, retention window, concurrency, shutdown

class Faults(unittest.TestCase):
    """On a server of its own: faults and the retention window are global."""
    maxDiff = None

    @classmethod
    def setUpClass(cls):
        cls.s = H.Server().start()
        ns_create(cls.s, 'f')

    @classmethod
    def tearDownClass(cls):
        stop_clean(cls.s)

    def tearDown(self):
        self.s.ctl('DELETE', '/faults')

    def test_throttling_and_errors(self):
        fid = self.s.ctl('POST', '/faults', {'match': {'verb': 'list', 'resource': 'configmaps'}, 'code': 429,
                                             'retryAfter': 2, 'count': 2})['id']
        for _ in range(2):
            r = self.s.get('/api/v1/namespaces/f/configmaps')
            self.assertEqual(r.status, 429)
            self.assertEqual(r.header('Retry-After'), '2')
            self.assertEqual(r.json, {'kind': 'Status', 'apiVersion': 'v1', 'metadata': {}, 'status': 'Failure',
                                      'message': 'Too many requests, please try again later.',
                                      'reason': 'TooManyRequests', 'details': {'retryAfterSeconds': 2},
                                      'code': 429})
        self.assertEqual(self.s.get('/api/v1/namespaces/f/configmaps').status, 200)
        f = next(x for x in self.s.ctl('GET', '/faults')['faults'] if x['id'] == fid)
        self.assertEqual(f['hits'], 2)
        self.s.ctl('POST', '/faults', {'match': {'method': 'POST', 'path': '/configmaps$'}, 'code': 500,
                                       'message': 'etcdserver: request timed out'})
        r = self.s.post('/api/v1/namespaces/f/configmaps', cm_body('e1'))
        self.assertEqual(r.status, 500)
        self.assertEqual(r.json, {'kind': 'Status', 'apiVersion': 'v1', 'metadata': {}, 'status': 'Failure',
                                  'message': 'Internal error occurred: etcdserver: request timed out',
                                  'reason': 'InternalError',
                                  'details': {'causes': [{'message': 'etcdserver: request timed out'}]},
                                  'code': 500})
        self.assertEqual(self.s.post('/api/v1/namespaces/f/configmaps', cm_body('e1')).status, 201)
        self.s.ctl('POST', '/faults', {'match': {'verb': 'get', 'name': 'e1'}, 'action': 'delay', 'delay': 0.2})
        self.assertEqual(self.s.get('/api/v1/namespaces/f/configmaps/e1').status, 200)
        self.s.ctl('POST', '/faults', {'match': {'verb': 'get', 'name': 'e1'}, 'action': 'reset'})
        with self.assertRaises((ConnectionError, OSError)):
            self.s.get('/api/v1/namespaces/f/configmaps/e1')
        self.assertEqual(self.s.get('/api/v1/namespaces/f/configmaps/e1').status, 200)
        self.s.ctl('POST', '/faults', {'match': {'user': 'kubernetes-admin', 'resource': 'secrets'}, 'code': 503,
                                       'count': 0})
        for _ in range(3):
            self.assertEqual(self.s.get('/api/v1/namespaces/f/secrets').status, 503)

    def test_watch_drops(self):
        self.s.ctl('POST', '/faults', {'match': {'verb': 'watch', 'resource': 'configmaps'}, 'action': 'watch-drop',
                                       'after': 2})
        for i in range(3):
            self.s.post('/api/v1/namespaces/f/configmaps', cm_body('wd-%d' % i, labels={'wd': 'x'}))
        w = self.s.watch('/api/v1/namespaces/f/configmaps?watch=1&labelSelector=wd')
        got = [w.next()['object']['metadata']['name'], w.next()['object']['metadata']['name']]
        self.assertEqual(got, ['wd-0', 'wd-1'])
        with self.assertRaises(Exception):      # cut without the end of the chunked stream
            ev = w.next()
            if ev is None:
                raise AssertionError('ended cleanly')
        w.close()
        # drop the watches in progress, cleanly and abruptly
        w1 = self.s.watch('/api/v1/namespaces/f/configmaps?watch=1&labelSelector=none')
        w2 = self.s.watch('/api/v1/namespaces/f/configmaps?watch=1&labelSelector=none2')
        wait_for(lambda: len(self.s.ctl('GET', '/state')['watches']) == 2, what='two watches')
        self.assertEqual(self.s.ctl('POST', '/watches/drop', {'match': {'resource': 'configmaps'}, 'clean': True}),
                         {'dropped': 2})
        self.assertIsNone(w1.next())
        self.assertIsNone(w2.next())
        w1.close()
        w2.close()

    def test_retention_window(self):
        url = '/api/v1/namespaces/f/configmaps'
        for i in range(4):
            self.s.post(url, cm_body('win-%d' % i, labels={'win': 'y'}))
        page = self.s.get(url + '?labelSelector=win&limit=2').json
        rv = page['metadata']['resourceVersion']
        self.s.post(url, cm_body('win-late', labels={'win': 'y'}))
        w = self.s.watch(url + '?watch=1&timeoutSeconds=1&resourceVersion=%s' % rv)
        self.assertEqual([e['type'] for e in w.rest()], ['ADDED'])
        w.close()
        st = self.s.ctl('POST', '/window', {'size': 0})
        self.assertEqual(st['floor'], st['resourceVersion'])
        w = self.s.watch(url + '?watch=1&resourceVersion=%s' % rv)
        ev = w.rest()
        w.close()
        self.assertEqual(ev, [{'type': 'ERROR', 'object': {
            'kind': 'Status', 'apiVersion': 'v1', 'metadata': {}, 'status': 'Failure',
            'message': 'too old resource version: %s (%d)' % (rv, st['floor']), 'reason': 'Expired', 'code': 410}}])
        r = self.s.get(url + '?labelSelector=win&limit=2&continue=' + page['metadata']['continue'])
        self.assertEqual(r.status, 410)
        self.assertEqual(r.json['reason'], 'Expired')
        self.assertTrue(r.json['message'].startswith('The provided continue parameter is too old to display a '
                                                     'consistent list result.'))
        tok = r.json['metadata']['continue']
        self.assertEqual(json.loads(base64.b64decode(tok))['rv'], -1)
        rest = self.s.get(url + '?labelSelector=win&limit=10&continue=' + tok).json
        self.assertEqual([i['metadata']['name'] for i in rest['items']], ['win-2', 'win-3', 'win-late'])
        r = self.s.get(url + '?resourceVersion=%s&resourceVersionMatch=Exact' % rv)
        self.assertEqual((r.status, r.json['message']), (410, 'The resourceVersion for the provided list is too '
                                                               'old.'))
        # a watch from the current resourceVersion still works, and the window can grow again
        self.s.ctl('POST', '/window', {'size': 1000})
        cur = self.s.get(url).json['metadata']['resourceVersion']
        w = self.s.watch(url + '?watch=1&timeoutSeconds=300&resourceVersion=%s' % cur)
        self.s.post(url, cm_body('win-after'))
        self.assertEqual(w.next()['object']['metadata']['name'], 'win-after')
        w.close()

    def test_many_watches(self):
        url = '/api/v1/namespaces/f/configmaps'
        ws = [self.s.watch(url + '?watch=1&timeoutSeconds=300&fieldSelector=metadata.name%3Dcrowd')
              for _ in range(40)]
        wait_for(lambda: len(self.s.ctl('GET', '/state')['watches']) >= 40, what='40 watches')
        self.assertEqual(self.s.post(url, cm_body('crowd')).status, 201)
        for w in ws:
            ev = w.next()
            self.assertEqual((ev['type'], ev['object']['metadata']['name']), ('ADDED', 'crowd'))
        results = []

        def reader(w):
            results.append([w.next()])
        th = [threading.Thread(target=reader, args=(w,)) for w in ws]
        for x in th:
            x.start()
        self.assertEqual(self.s.delete(url + '/crowd').status, 200)
        for x in th:
            x.join(60)
        for w in ws:
            w.close()
        self.assertEqual(len(results), 40)
        self.assertTrue(all([e['type'] for e in r] == ['DELETED'] for r in results))

    def test_watch_of_a_client_that_left_ends(self):
        w = self.s.watch('/api/v1/namespaces/f/configmaps?watch=1&labelSelector=nobody')
        wait_for(lambda: len(self.s.ctl('GET', '/state')['watches']) == 1, what='the watch')
        w.close()
        wait_for(lambda: not self.s.ctl('GET', '/state')['watches'], what='the watch noticing its client left')


class Lifecycle(unittest.TestCase):
    def test_sigterm_ends_watches_and_exits_0(self):
        s = H.Server(['--token', 'tok1=alice:devs,ops', '--apply',
                      os.path.join(H.reference_dir(), 'assisted-service', 'hack', 'crds', 'hive')]).start()
        try:
            r = s.get('/apis/hive.openshift.io/v1/clusterimagesets', token='tok1')
            self.assertEqual(r.status, 200)
            w = s.watch('/api/v1/namespaces/default/configmaps?watch=1')
            ev = w.next()
            self.assertEqual(ev['object']['metadata']['name'], 'kube-root-ca.crt')
        finally:
            rc = s.stop()
        self.assertEqual(rc, 0, s.stderr())
        self.assertIsNone(w.next())         # a clean end of the stream
        w.close()
        with self.assertRaises(OSError):
            socket.create_connection(('127.0.0.1', s.port), timeout=5).close()

    def test_ipv6_loopback(self):
        s = H.Server(['--host', '::1']).start()
        try:
            self.assertEqual(s.get('/api').json['serverAddressByClientCIDRs'][0]['serverAddress'],
                             '[::1]:%d' % s.port)
            kc = load_yaml(s.path('kubeconfig'))
            self.assertEqual(kc['clusters'][0]['cluster']['server'], 'https://[::1]:%d' % s.port)
            self.assertEqual(s.ctl('GET', '/state')['port'], s.port)
        finally:
            self.assertEqual(s.stop(), 0)

    def test_given_ca_and_ports(self):
        first = H.Server().start()
        try:
            port = H.free_port()
            s = H.Server(['--ca-cert', first.path('ca.crt'), '--ca-key', first.path('ca.key'), '--port', str(port)])
            s.start()
            try:
                self.assertEqual(s.port, port)
                with open(first.path('ca.crt')) as a, open(s.path('ca.crt')) as b:
                    self.assertEqual(a.read(), b.read())
                self.assertFalse(os.path.exists(s.path('ca.key')))
                # the admin certificate of the second server is signed by the given CA
                r = s.request('GET', '/api', user_cert=(first.path('admin.crt'), first.path('admin.key')))
                self.assertEqual(r.status, 200)
            finally:
                self.assertEqual(s.stop(), 0)
        finally:
            self.assertEqual(first.stop(), 0)


if __name__ == '__main__':
    unittest.main(verbosity=2)
