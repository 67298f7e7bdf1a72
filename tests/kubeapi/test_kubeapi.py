#!/usr/bin/python3
"""Tests of the test kube-apiserver: it must answer as the real
kube-apiserver did in testdata/observed-kube (same status codes, same Status
bodies and messages, same list and watch framing), accept every reference CRD
unchanged, and implement the semantics clients rely on."""

import base64
import copy
import json
import os
import re
import socket
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


def tearDownModule():
    if SERVER is not None:
        rc = SERVER.stop()
        if rc != 0:
            raise AssertionError('kubeapi exited with %s on SIGTERM: %s' % (rc, SERVER.stderr()))


def obs(name):
    for f in os.listdir(H.observed_dir()):
        if f.startswith(name + '-') or f == name + '.json':
            with open(os.path.join(H.observed_dir(), f)) as fh:
                return json.load(fh)
    raise KeyError(name)


def norm(o):
    """Replaces the values a second run cannot reproduce."""
    if isinstance(o, dict):
        return {k: ('<%s>' % k if k in DYNAMIC and isinstance(v, str) else norm(v)) for k, v in o.items()}
    if isinstance(o, list):
        return [norm(x) for x in o]
    return o


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
        hdrs = dict(rq.get('headers') or {})
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
        w = self.s.watch(AGENTS + '?watch=1&resourceVersion=%s&allowWatchBookmarks=true&timeoutSeconds=4' % rv)
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


if __name__ == '__main__':
    unittest.main(verbosity=2)
