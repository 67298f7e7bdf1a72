"""The asynchronous parts of a cluster that clients observe through the API:
the CRD naming/establishing and cleanup controllers, the namespace
controller, the garbage collector, the service-account and root-CA
publishers (and OpenShift's service-CA one, when asked), the node
controllers (TTL annotation, condition taints, lost heartbeats), a stand-in
for the kubelet finishing graceful pod deletion, and the CSR signer. They
run in one thread, triggered by every change."""

import base64
import copy
import threading
import time
import traceback

import kbuiltin
from kcommon import ApiError, now_time, parse_time

CRD_KEY = 'apiextensions.k8s.io/customresourcedefinitions'
NS_KEY = 'core/namespaces'
NODE_KEY = 'core/nodes'
LEASE_KEY = 'coordination.k8s.io/leases'
# the TTL controller's annotation (0 s for clusters of up to 100 nodes)
NODE_TTL_ANNOTATION = 'node.alpha.kubernetes.io/ttl'
# the node lifecycle controller's NoSchedule taints (TaintNodesByCondition)
CONDITION_TAINTS = {('Ready', 'False'): 'node.kubernetes.io/not-ready',
                    ('Ready', 'Unknown'): 'node.kubernetes.io/unreachable',
                    ('MemoryPressure', 'True'): 'node.kubernetes.io/memory-pressure',
                    ('DiskPressure', 'True'): 'node.kubernetes.io/disk-pressure',
                    ('NetworkUnavailable', 'True'): 'node.kubernetes.io/network-unavailable',
                    ('PIDPressure', 'True'): 'node.kubernetes.io/pid-pressure'}
UNSCHEDULABLE_TAINT = 'node.kubernetes.io/unschedulable'
CONDITION_TAINT_KEYS = set(CONDITION_TAINTS.values()) | {UNSCHEDULABLE_TAINT}
# the conditions the node lifecycle controller turns Unknown when the kubelet goes silent
MONITORED_CONDITIONS = ('Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure')
OPENSHIFT_SERVICE_CA = 'openshift-service-ca.crt'
# the namespace deleter's conditions, in its order, with their "ok" reason and message
NS_DELETION_CONDITIONS = (
    ('NamespaceDeletionDiscoveryFailure', 'ResourcesDiscovered', 'All resources successfully discovered'),
    ('NamespaceDeletionGroupVersionParsingFailure', 'ParsedGroupVersions', 'All legacy kube types successfully parsed'),
    ('NamespaceDeletionContentFailure', 'ContentDeleted',
     'All content successfully deleted, may be waiting on finalization'),
    ('NamespaceContentRemaining', 'ContentRemoved', 'All content successfully removed'),
    ('NamespaceFinalizersRemaining', 'ContentHasNoFinalizers', 'All content-preserving finalizers finished'))
CLEANUP_FINALIZER = 'customresourcecleanup.apiextensions.k8s.io'
KUBELET_SIGNERS = ('kubernetes.io/kube-apiserver-client', 'kubernetes.io/kube-apiserver-client-kubelet',
                   'kubernetes.io/kubelet-serving')


class Controllers:
    def __init__(self, registry, store, ca=None, log=None):
        self.registry = registry
        self.store = store
        self.ca = ca                    # kcerts.CA, for the CSR signer
        self.log = log or (lambda *a: None)
        self.cv = threading.Condition()
        self.kicks = 0
        self.done = 0
        self.busy = False
        self.stop = False
        self.next_due = None
        self.pod_deletion_delay = 0.0   # None: the "kubelet" never finishes pod deletion
        self.csr_signing = True
        self.crd_generation = {}        # crd name -> generation registered
        self.crd_naming_delay = 0.05    # seconds from a CRD's creation to its NamesAccepted
        self.crd_seen = {}              # uid -> when first seen, of CRDs not yet named
        self.root_ca_pem = ''
        self.openshift_service_ca = False   # publish openshift-service-ca.crt in every namespace
        # seconds without a kubelet heartbeat (the Ready condition's
        # lastHeartbeatTime or the node's Lease) before the node turns
        # Unknown (kube-controller-manager's --node-monitor-grace-period,
        # 40 s); 0: never. A node that never posted a Ready condition gets
        # max(60 s, that) (--node-startup-grace-period).
        self.node_monitor_grace = 0.0
        self.node_health = {}           # node uid -> (heartbeat, lease renewTime, monotonic when last changed)
        self.thread = threading.Thread(target=self.run, name='controllers', daemon=True)
        store.listeners.append(self.on_event)

    def start(self):
        self.thread.start()
        self.kick()

    def on_event(self, ev):
        self.kick()

    def kick(self):
        with self.cv:
            self.kicks += 1
            self.cv.notify_all()

    def shutdown(self):
        with self.cv:
            self.stop = True
            self.cv.notify_all()

    def settle(self, timeout=30.0):
        """Waits until every change so far has been processed."""
        deadline = time.monotonic() + timeout
        with self.cv:
            while self.busy or self.done < self.kicks or self.crds_pending():
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.cv.wait(left)
            return True

    def run(self):
        while True:
            with self.cv:
                while not self.stop and self.kicks == self.done:
                    wait = None
                    if self.next_due is not None:
                        wait = max(0.0, self.next_due - time.monotonic())
                        if wait == 0:
                            break
                    self.cv.wait(wait)
                if self.stop:
                    return
                target = self.kicks
                self.busy = True
            try:
                self.next_due = None
                self.pass_once()
            except Exception:
                self.log('controllers: %s' % traceback.format_exc())
            with self.cv:
                self.done = target
                self.busy = False
                self.cv.notify_all()

    def _due(self, when):
        if self.next_due is None or when < self.next_due:
            self.next_due = when

    # ------------------------------------------------------------ one pass

    def pass_once(self):
        self.crds()
        self.namespaces()
        self.nodes()
        self.gc()
        self.pods()
        self.csrs()

    # ------------------------------------------------------------ CRDs

    def crds(self):
        reg = self.registry
        store = self.store
        todo = []
        with store.lock:
            names = set()
            for (_, name), crd in store.objects[CRD_KEY].items():
                names.add(name)
                m = crd['metadata']
                if m.get('deletionTimestamp') or self.crd_generation.get(name) != m.get('generation') or \
                        not _cond_true(crd.get('status') or {}, 'Established'):
                    todo.append(copy.deepcopy(crd))
        for crd in todo:
            name = crd['metadata']['name']
            if crd['metadata'].get('deletionTimestamp'):
                reg.terminating_crds.add(name)
                self._crd_cleanup(crd)
                continue
            st = crd.get('status') or {}
            if not _cond_true(st, 'NamesAccepted'):
                # the naming controller runs moments after the create:
                # until then status.conditions is null
                uid = crd['metadata'].get('uid')
                seen = self.crd_seen.setdefault(uid, time.monotonic())
                if time.monotonic() < seen + self.crd_naming_delay:
                    self._due(seen + self.crd_naming_delay)
                    continue
                self._accept_names(crd)
                continue
            if not _cond_true(st, 'Established'):
                crd = self._establish(crd)
                if crd is None:
                    continue
            if self.crd_generation.get(name) != crd['metadata'].get('generation'):
                try:
                    types = kbuiltin.cr_types(crd)
                except (KeyError, TypeError):
                    types = []
                reg.set_crd_types(name, types)
                self.crd_generation[name] = crd['metadata'].get('generation')
        for name in list(self.crd_generation):
            if name not in names:
                reg.set_crd_types(name, None)
                del self.crd_generation[name]
                reg.terminating_crds.discard(name)
        with store.lock:
            uids = {c['metadata'].get('uid') for c in store.objects[CRD_KEY].values()
                    if not _cond_true(c.get('status') or {}, 'NamesAccepted')}
        for uid in list(self.crd_seen):
            if uid not in uids:
                del self.crd_seen[uid]

    def crds_pending(self):
        """CRDs whose names the naming controller has not accepted yet."""
        return bool(self.crd_seen)

    def _accept_names(self, crd):
        """The naming controller: NamesAccepted, and Established False
        (Installing) until the establishing controller's turn."""
        names = crd['spec']['names']

        def fn(o):
            st = o.setdefault('status', {})
            now = now_time()
            acc = {}
            for k in ('plural', 'singular', 'shortNames', 'kind', 'listKind', 'categories'):
                if names.get(k):
                    acc[k] = names[k]
            st['conditions'] = [
                {'type': 'NamesAccepted', 'status': 'True', 'lastTransitionTime': now, 'reason': 'NoConflicts',
                 'message': 'no conflicts found'},
                {'type': 'Established', 'status': 'False', 'lastTransitionTime': now,
                 'reason': 'Installing', 'message': 'the initial names have been accepted'}]
            o['status'] = {'conditions': st['conditions'], 'acceptedNames': acc,
                           'storedVersions': st.get('storedVersions') or []}
        return self.registry.internal_update(CRD_KEY, '', crd['metadata']['name'], fn, 'kube-apiserver', 'status')

    def _establish(self, crd):
        def fn(o):
            conds = [c for c in (o.get('status') or {}).get('conditions') or [] if c.get('type') != 'Established']
            conds.append({'type': 'Established', 'status': 'True', 'lastTransitionTime': now_time(),
                          'reason': 'InitialNamesAccepted', 'message': 'the initial names have been accepted'})
            o['status']['conditions'] = conds
        return self.registry.internal_update(CRD_KEY, '', crd['metadata']['name'], fn, 'kube-apiserver', 'status')

    def _crd_cleanup(self, crd):
        name = crd['metadata']['name']
        key = '%s/%s' % (crd['spec']['group'], crd['spec']['names']['plural'])
        remaining = self.store.items(key)
        for o in remaining:
            m = o['metadata']
            if not m.get('deletionTimestamp'):
                self.registry.internal_delete(key, m.get('namespace', ''), m['name'])
        if self.store.items(key):
            return

        def fn(o):
            fins = [f for f in o['metadata'].get('finalizers') or [] if f != CLEANUP_FINALIZER]
            if fins == (o['metadata'].get('finalizers') or []):
                return False
            if fins:
                o['metadata']['finalizers'] = fins
            else:
                o['metadata'].pop('finalizers', None)
        self.registry.internal_update(CRD_KEY, '', name, fn, 'kube-apiserver')

    # ------------------------------------------------------------ namespaces

    def namespaces(self):
        reg = self.registry
        with self.store.lock:
            nss = [copy.deepcopy(n) for n in self.store.objects[NS_KEY].values()]
        for ns in nss:
            name = ns['metadata']['name']
            if ns['metadata'].get('deletionTimestamp'):
                self._ns_cleanup(name)
                continue
            if (ns.get('status') or {}).get('phase') != 'Active':
                continue
            if self.store.peek('core/serviceaccounts', name, 'default') is None:
                rt = reg.lookup('', 'v1', 'serviceaccounts')
                try:
                    reg.internal_create(rt, name, {'metadata': {'name': 'default'}}, 'kube-controller-manager')
                except ApiError:
                    pass
            if self.root_ca_pem and self.store.peek('core/configmaps', name, 'kube-root-ca.crt') is None:
                rt = reg.lookup('', 'v1', 'configmaps')
                try:
                    reg.internal_create(rt, name, {'metadata': {'name': 'kube-root-ca.crt', 'annotations': {
                        'kubernetes.io/description': 'Contains a CA bundle that can be used to verify the '
                                                     'kube-apiserver when using internal endpoints such as the '
                                                     'internal service IP or kubernetes.default.svc. No other usage '
                                                     'is guaranteed across distributions of Kubernetes clusters.'}},
                                                        'data': {'ca.crt': self.root_ca_pem}},
                                        'kube-controller-manager')
                except ApiError:
                    pass
            if self.openshift_service_ca and self.store.peek('core/configmaps', name, OPENSHIFT_SERVICE_CA) is None:
                self._publish_service_ca(name)

    def _publish_service_ca(self, ns):
        """As an OpenShift cluster: its kube-controller-manager creates
        openshift-service-ca.crt for the service-CA operator, which fills in
        the bundle (two writers, two writes)."""
        rt = self.registry.lookup('', 'v1', 'configmaps')
        try:
            made = self.registry.internal_create(rt, ns, {'metadata': {
                'name': OPENSHIFT_SERVICE_CA, 'annotations': {'service.beta.openshift.io/inject-cabundle': 'true'}}},
                'kube-controller-manager')
        except ApiError:
            return
        if made is None:
            return

        def fill(o):
            o['data'] = {'service-ca.crt': self.root_ca_pem}
        self.registry.internal_update('core/configmaps', ns, OPENSHIFT_SERVICE_CA, fill, 'service-ca-operator')

    def _ns_cleanup(self, name):
        reg = self.registry
        left = 0
        with reg.lock:
            gr = {rt.store_key: (rt.group, rt.resource) for rt in reg.types.values() if rt.namespaced}
        for key in sorted(gr):
            for o in self.store.items(key, name):
                left += 1
                if not o['metadata'].get('deletionTimestamp'):
                    reg.internal_delete(key, name, o['metadata']['name'])
        if left:
            remaining, finalizers = {}, {}
            for key in gr:
                for o in self.store.items(key, name):
                    remaining[gr[key]] = remaining.get(gr[key], 0) + 1
                    for f in o['metadata'].get('finalizers') or []:
                        finalizers[f] = finalizers.get(f, 0) + 1
            if remaining:
                self._ns_conditions(name, remaining, finalizers)
                return

        def fn(o):
            spec = o.get('spec') or {}
            if not spec.get('finalizers'):
                return False
            fins = [f for f in spec['finalizers'] if f != 'kubernetes']
            o['spec'] = {'finalizers': fins} if fins else {}
        reg.internal_update(NS_KEY, '', name, fn, 'kube-controller-manager', 'finalize')

    def _ns_conditions(self, name, remaining, finalizers):
        """The namespace deleter's conditions (namespaceConditionUpdater):
        all five, the failing variant where content remains."""
        now = now_time()
        want = {}
        if remaining:
            want['NamespaceContentRemaining'] = ('True', 'SomeResourcesRemain', 'Some resources are remaining: %s' % (
                ', '.join(sorted('%s.%s has %d resource instances' % (r, g, n)
                                 for (g, r), n in remaining.items()))))
        if finalizers:
            want['NamespaceFinalizersRemaining'] = (
                'True', 'SomeFinalizersRemain', 'Some content in the namespace has finalizers remaining: %s' % (
                    ', '.join(sorted('%s in %d resource instances' % (f, n) for f, n in finalizers.items()))))

        def fn(o):
            st = o.setdefault('status', {})
            conds = st.setdefault('conditions', [])
            changed = False
            for t, ok_reason, ok_message in NS_DELETION_CONDITIONS:
                status, reason, message = want.get(t, ('False', ok_reason, ok_message))
                c = next((c for c in conds if c.get('type') == t), None)
                if c is None:
                    conds.append({'type': t, 'status': status, 'lastTransitionTime': now, 'reason': reason,
                                  'message': message})
                    changed = True
                elif (c.get('status'), c.get('reason'), c.get('message')) != (status, reason, message):
                    if c.get('status') != status:
                        c['lastTransitionTime'] = now
                    c.update(status=status, reason=reason, message=message)
                    changed = True
            return None if changed else False
        self.registry.internal_update(NS_KEY, '', name, fn, 'kube-controller-manager', 'status')

    # ------------------------------------------------------------ nodes

    def nodes(self):
        """What kube-controller-manager does to every Node moments after it
        appears or changes: the TTL controller's annotation, the node
        lifecycle controller's NoSchedule taints kept in step with the
        conditions and spec.unschedulable, and (node_monitor_grace > 0) the
        conditions turned Unknown when the kubelet stops posting. Not
        modelled: the NoExecute (eviction) taints, which the real controller
        adds only while some node of the zone is Ready, and takes every 5 s."""
        with self.store.lock:
            nodes = [copy.deepcopy(n) for n in self.store.objects[NODE_KEY].values()]
        uids = set()
        for n in nodes:
            m = n['metadata']
            uids.add(m.get('uid'))
            unknown = self._node_silent(n)
            if (m.get('annotations') or {}).get(NODE_TTL_ANNOTATION) != '0':
                self._node_update(m['name'], _set_ttl, 'kube-controller-manager')
            if unknown:
                self._node_update(m['name'], lambda o, u=unknown: _conditions_unknown(o, u),
                                  'kube-controller-manager', 'status')
            if _taints_to_swap(n):
                self._node_update(m['name'], _swap_condition_taints, 'kube-controller-manager')
        for uid in list(self.node_health):
            if uid not in uids:
                del self.node_health[uid]

    def _node_update(self, name, fn, manager, sub=None):
        try:
            self.registry.internal_update(NODE_KEY, '', name, fn, manager, sub)
        except ApiError:
            pass

    def _node_silent(self, node):
        """The conditions to turn Unknown because the kubelet went silent
        (empty when it has not, or monitoring is off)."""
        if not self.node_monitor_grace:
            return ()
        m = node['metadata']
        conds = (node.get('status') or {}).get('conditions') or []
        ready = next((c for c in conds if c.get('type') == 'Ready'), None)
        heartbeat = (ready or {}).get('lastHeartbeatTime')
        lease = self.store.peek(LEASE_KEY, 'kube-node-lease', m['name'])
        renew = ((lease or {}).get('spec') or {}).get('renewTime')
        now = time.monotonic()
        seen = self.node_health.get(m.get('uid'))
        if seen is None or seen[0] != heartbeat or seen[1] != renew:
            seen = (heartbeat, renew, now)
            self.node_health[m.get('uid')] = seen
        grace = self.node_monitor_grace if ready else max(60.0, self.node_monitor_grace)
        due = seen[2] + grace
        if now < due:
            self._due(due)
            return ()
        return tuple(t for t in MONITORED_CONDITIONS
                     if next((c.get('status') for c in conds if c.get('type') == t), None) != 'Unknown')

    # ------------------------------------------------------------ garbage collector

    def gc(self):
        reg = self.registry
        store = self.store
        objs = []           # objects with owner references
        owners = []         # objects being deleted with a propagation finalizer
        with store.lock:
            for key, items in store.objects.items():
                for o in items.values():
                    m = o['metadata']
                    if m.get('ownerReferences'):
                        objs.append((key, copy.deepcopy(o)))
                    if m.get('deletionTimestamp') and \
                            {'orphan', 'foregroundDeletion'} & set(m.get('finalizers') or []):
                        owners.append((key, copy.deepcopy(o)))
        dependents = {}
        for key, o in objs:
            for r in o['metadata'].get('ownerReferences') or []:
                dependents.setdefault(r.get('uid'), []).append((key, o, r))
        # owners being deleted with a propagation finalizer
        for key, o in owners:
            m = o['metadata']
            fins = m.get('finalizers') or []
            uid = m.get('uid')
            if 'orphan' in fins:
                for dkey, d, r in dependents.get(uid, []):
                    dm = d['metadata']

                    def drop(x, uid=uid):
                        refs = [rr for rr in x['metadata'].get('ownerReferences') or [] if rr.get('uid') != uid]
                        if refs:
                            x['metadata']['ownerReferences'] = refs
                        else:
                            x['metadata'].pop('ownerReferences', None)
                    reg.internal_update(dkey, dm.get('namespace', ''), dm['name'], drop, 'kube-controller-manager')
                self._remove_finalizer(key, o, 'orphan')
            elif 'foregroundDeletion' in fins:
                blocking = []
                for dkey, d, r in dependents.get(uid, []):
                    if r.get('blockOwnerDeletion'):
                        blocking.append((dkey, d))
                    if not d['metadata'].get('deletionTimestamp'):
                        dm = d['metadata']
                        reg.internal_delete(dkey, dm.get('namespace', ''), dm['name'], 'Foreground', dm.get('uid'))
                blocking = [(k, d) for k, d in blocking
                            if store.peek(k, d['metadata'].get('namespace', ''), d['metadata']['name']) is not None]
                if not blocking:
                    self._remove_finalizer(key, o, 'foregroundDeletion')
        # dependents whose owners are gone
        for key, o in objs:
            o = store.get(key, o['metadata'].get('namespace', ''), o['metadata']['name'])
            if o is None:
                continue
            m = o['metadata']
            refs = m.get('ownerReferences') or []
            if not refs:
                continue
            solid, dangling, waiting = [], [], []
            for r in refs:
                if reg.type_for_kind(r.get('apiVersion', ''), r.get('kind', '')) is None:
                    solid.append(r)         # an owner kind nobody serves: the GC cannot tell, keeps it
                    continue
                loc = store.by_uid(r.get('uid'))
                owner = store.get(*loc) if loc else None
                if owner is None or not self._scope_ok(o, owner):
                    dangling.append(r)
                    continue
                om = owner['metadata']
                if om.get('deletionTimestamp') and 'foregroundDeletion' in (om.get('finalizers') or []):
                    waiting.append(r)
                else:
                    solid.append(r)
            if solid:
                if not dangling and not waiting:
                    continue
                gone = {r.get('uid') for r in dangling + waiting}

                def prune(x, gone=gone):
                    refs2 = [rr for rr in x['metadata'].get('ownerReferences') or [] if rr.get('uid') not in gone]
                    x['metadata']['ownerReferences'] = refs2
                reg.internal_update(key, m.get('namespace', ''), m['name'], prune, 'kube-controller-manager')
                continue
            if m.get('deletionTimestamp'):
                continue
            fins = m.get('finalizers') or []
            policy = 'Background'
            if 'orphan' in fins:
                policy = 'Orphan'
            elif 'foregroundDeletion' in fins or waiting:
                policy = 'Foreground'
            reg.internal_delete(key, m.get('namespace', ''), m['name'], policy, m.get('uid'))

    def _scope_ok(self, dep, oobj):
        dns = dep['metadata'].get('namespace', '')
        ons = oobj['metadata'].get('namespace', '')
        if not ons:
            return True
        return dns == ons

    def _remove_finalizer(self, key, o, fin):
        m = o['metadata']

        def fn(x):
            fins = [f for f in x['metadata'].get('finalizers') or [] if f != fin]
            if fins == (x['metadata'].get('finalizers') or []):
                return False
            if fins:
                x['metadata']['finalizers'] = fins
            else:
                x['metadata'].pop('finalizers', None)
        self.registry.internal_update(key, m.get('namespace', ''), m['name'], fn, 'kube-controller-manager')

    # ------------------------------------------------------------ pods (the kubelet's part of deletion)

    def pods(self):
        if self.pod_deletion_delay is None:
            return
        now = time.time()
        with self.store.lock:
            pods = [copy.deepcopy(p) for p in self.store.objects['core/pods'].values()
                    if p['metadata'].get('deletionTimestamp')]
        for p in pods:
            m = p['metadata']
            if not m.get('deletionTimestamp') or not (m.get('deletionGracePeriodSeconds') or 0) > 0:
                continue
            marked = parse_time(m['deletionTimestamp']).timestamp() - m['deletionGracePeriodSeconds']
            due = marked + self.pod_deletion_delay
            if now >= due:
                rt = self.registry.lookup('', 'v1', 'pods')
                try:
                    self.registry.delete(rt, m['namespace'], m['name'],
                                         {'gracePeriodSeconds': 0, 'preconditions': {'uid': m.get('uid')}},
                                         {'manager': 'kubelet'})
                except ApiError:
                    pass
            else:
                self._due(time.monotonic() + (due - now))

    # ------------------------------------------------------------ CSR signer

    def csrs(self):
        if not self.csr_signing or self.ca is None:
            return
        with self.store.lock:
            csrs = [copy.deepcopy(c) for c in self.store.objects['certificates.k8s.io/certificatesigningrequests'].values()
                    if not (c.get('status') or {}).get('certificate') and (c.get('status') or {}).get('conditions')]
        for c in csrs:
            st = c.get('status') or {}
            spec = c.get('spec') or {}
            if st.get('certificate') or spec.get('signerName') not in KUBELET_SIGNERS:
                continue
            types = {x.get('type') for x in st.get('conditions') or [] if x.get('status') == 'True'}
            if 'Approved' not in types or 'Denied' in types or 'Failed' in types:
                continue
            try:
                pem = base64.b64decode(spec.get('request', ''))
                cert = self.ca.sign_csr(pem, spec.get('usages') or [], spec.get('expirationSeconds'))
            except Exception:       # a CSR the signer cannot sign: Failed condition
                cert = None

            def fn(o, cert=cert):
                s = o.setdefault('status', {})
                if cert:
                    s['certificate'] = base64.b64encode(cert).decode()
                else:
                    s.setdefault('conditions', []).append({
                        'type': 'Failed', 'status': 'True', 'reason': 'SignerValidationFailure',
                        'message': 'the signer could not sign the request', 'lastUpdateTime': now_time(),
                        'lastTransitionTime': now_time()})
            self.registry.internal_update('certificates.k8s.io/certificatesigningrequests', '',
                                          c['metadata']['name'], fn, 'kube-controller-manager', 'status')


def _set_ttl(o):
    o['metadata'].setdefault('annotations', {})[NODE_TTL_ANNOTATION] = '0'


def _conditions_unknown(o, types):
    """nodeLifecycleController.tryUpdateNodeHealth for a silent kubelet."""
    st = o.setdefault('status', {})
    conds = st.setdefault('conditions', [])
    now = now_time()
    changed = False
    for t in types:
        c = next((c for c in conds if c.get('type') == t), None)
        if c is None:
            conds.append({'type': t, 'status': 'Unknown', 'lastHeartbeatTime': o['metadata'].get('creationTimestamp'),
                          'lastTransitionTime': now, 'reason': 'NodeStatusNeverUpdated',
                          'message': 'Kubelet never posted node status.'})
            changed = True
        elif c.get('status') != 'Unknown':
            c.update(status='Unknown', reason='NodeStatusUnknown', message='Kubelet stopped posting node status.',
                     lastTransitionTime=now)
            changed = True
    return None if changed else False


def _wanted_condition_taints(node):
    out = []
    for c in (node.get('status') or {}).get('conditions') or []:
        key = CONDITION_TAINTS.get((c.get('type'), c.get('status')))
        if key:
            out.append(key)
    if (node.get('spec') or {}).get('unschedulable'):
        out.append(UNSCHEDULABLE_TAINT)
    return out


def _taints_to_swap(node):
    """(keys to add, keys to remove) of the controller's NoSchedule taints."""
    want = _wanted_condition_taints(node)
    have = [t.get('key') for t in (node.get('spec') or {}).get('taints') or []
            if isinstance(t, dict) and t.get('effect') == 'NoSchedule' and t.get('key') in CONDITION_TAINT_KEYS]
    add = [k for k in want if k not in have]
    remove = [k for k in have if k not in want]
    return (add, remove) if add or remove else None


def _swap_condition_taints(o):
    """controllerutil.SwapNodeControllerTaint: new taints at the end, with
    the time they were added; the stale ones removed."""
    swap = _taints_to_swap(o)
    if not swap:
        return False
    add, remove = swap
    now = now_time()
    taints = [t for t in (o.get('spec') or {}).get('taints') or []
              if not (isinstance(t, dict) and t.get('effect') == 'NoSchedule' and t.get('key') in remove)]
    taints += [{'key': k, 'effect': 'NoSchedule', 'timeAdded': now} for k in add]
    spec = o.setdefault('spec', {})
    if taints:
        spec['taints'] = taints
    else:
        spec.pop('taints', None)


def _cond_true(status, t):
    return any(c.get('type') == t and c.get('status') == 'True' for c in status.get('conditions') or [])
