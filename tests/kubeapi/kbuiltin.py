"""Resource types and their strategies: custom resources (from a CRD) and the
built-in kinds the installer and the hub use. A strategy carries what
kube-apiserver's registry strategy for that kind does: defaults, what create
and update may change, validation, field selectors, deletion behaviour and
the typed field order of its JSON."""

import base64
import copy
import hashlib
import ipaddress
import json
import re
import subprocess

from kcommon import (OMIT, FieldError, err_bad_request, err_forbidden, fe_forbidden, fe_invalid, fe_not_supported, fe_required,
                     fe_too_long, go_quote, is_dns1035_label, is_dns1123_label, is_dns1123_subdomain,
                     is_path_segment_name, is_qualified_name, normalize_microtime, normalize_time, now_time)
import kschema


def storage_version_hash(group, version, kind):
    return base64.b64encode(hashlib.sha256(('%s/%s/%s' % (group, version, kind)).encode()).digest()[:8]).decode()


STD_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch']
CR_VERBS = ['delete', 'deletecollection', 'get', 'list', 'patch', 'create', 'update', 'watch']
SUB_VERBS = ['get', 'patch', 'update']


class ResourceType:
    def __init__(self, group, version, resource, kind, namespaced, strategy, *, singular='', short_names=(),
                 categories=(), list_kind=None, store_key=None, subresources=(), verbs=None, crd=None,
                 disco_singular=''):
        self.group = group
        self.version = version
        self.resource = resource
        self.kind = kind
        self.namespaced = namespaced
        self.strategy = strategy
        self.singular = singular or kind.lower()
        self.disco_singular = disco_singular
        self.short_names = list(short_names)
        self.categories = list(categories)
        self.list_kind = list_kind or kind + 'List'
        self.store_key = store_key or ('%s/%s' % (group or 'core', resource))
        self.subresources = list(subresources)
        self.verbs = verbs or STD_VERBS
        self.crd = crd

    @property
    def api_version(self):
        return self.version if not self.group else '%s/%s' % (self.group, self.version)

    @property
    def typed(self):
        return self.strategy.typed

    def has_sub(self, name):
        return name in self.subresources

    def __repr__(self):
        return '<%s %s>' % (self.api_version, self.resource)


# ---------------------------------------------------------------- schema helpers

def S(t, **kw):
    d = {'type': t}
    d.update(kw)
    return d


STR = S('string')
INT = S('integer')
BOOL = S('boolean')
NUM = S('number')
TIME = S('string', **{'x-go': 'v1.Time'})
MICROTIME = S('string', **{'x-go': 'v1.MicroTime'})
MAP_STR = S('object', additionalProperties=STR, **{'x-go': 'map[string]string'})
ANY = {'x-kubernetes-preserve-unknown-fields': True}


def OBJ(props=None, preserve=False, **kw):
    d = {'type': 'object', 'properties': props or {}}
    if preserve:
        d['x-kubernetes-preserve-unknown-fields'] = True
    d.update(kw)
    return d


def ARR(items, **kw):
    d = {'type': 'array', 'items': items}
    d.update(kw)
    return d


def root_schema(props):
    p = {'apiVersion': STR, 'kind': STR, 'metadata': S('object')}
    p.update(props)
    return {'type': 'object', 'properties': p, '_root': True}


CONDITIONS = ARR(OBJ(preserve=True), **{'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type']})
OBJECT_REFERENCE = OBJ({'kind': STR, 'namespace': STR, 'name': STR, 'uid': STR, 'apiVersion': STR,
                        'resourceVersion': STR, 'fieldPath': STR}, **{'x-kubernetes-map-type': 'atomic',
                                                                       'x-go': 'v1.ObjectReference'})

META_ORDER = ['name', 'generateName', 'namespace', 'selfLink', 'uid', 'resourceVersion', 'generation',
              'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'labels', 'annotations',
              'ownerReferences', 'finalizers', 'managedFields']
MF_ORDER = ['manager', 'operation', 'apiVersion', 'time', 'fieldsType', 'fieldsV1', 'subresource']


OBJREF_ORDER = ['kind', 'namespace', 'name', 'uid', 'apiVersion', 'resourceVersion', 'fieldPath']
COND_ORDER = ['type', 'status', 'observedGeneration', 'lastHeartbeatTime', 'lastProbeTime', 'lastUpdateTime',
              'lastTransitionTime', 'reason', 'message']
CONTAINER_ORDER = ['name', 'image', 'command', 'args', 'workingDir', 'ports', 'envFrom', 'env', 'resources',
                   'resizePolicy', 'volumeMounts', 'volumeDevices', 'livenessProbe', 'readinessProbe', 'startupProbe',
                   'lifecycle', 'terminationMessagePath', 'terminationMessagePolicy', 'imagePullPolicy',
                   'securityContext', 'stdin', 'stdinOnce', 'tty']
POD_SPEC_ORDER = ['volumes', 'initContainers', 'containers', 'ephemeralContainers', 'restartPolicy',
                  'terminationGracePeriodSeconds', 'activeDeadlineSeconds', 'dnsPolicy', 'nodeSelector',
                  'serviceAccountName', 'serviceAccount', 'automountServiceAccountToken', 'nodeName', 'hostNetwork',
                  'hostPID', 'hostIPC', 'shareProcessNamespace', 'securityContext', 'imagePullSecrets', 'hostname',
                  'subdomain', 'affinity', 'schedulerName', 'tolerations', 'hostAliases', 'priorityClassName',
                  'priority', 'dnsConfig', 'readinessGates', 'runtimeClassName', 'enableServiceLinks',
                  'preemptionPolicy', 'overhead', 'topologySpreadConstraints', 'setHostnameAsFQDN', 'os', 'hostUsers',
                  'schedulingGates', 'resourceClaims']
POD_STATUS_ORDER = ['phase', 'conditions', 'message', 'reason', 'nominatedNodeName', 'hostIP', 'podIP', 'podIPs',
                    'startTime', 'initContainerStatuses', 'containerStatuses', 'qosClass',
                    'ephemeralContainerStatuses']
NODE_SPEC_ORDER = ['podCIDR', 'podCIDRs', 'providerID', 'unschedulable', 'taints', 'configSource', 'externalID']
NODE_STATUS_ORDER = ['capacity', 'allocatable', 'phase', 'conditions', 'addresses', 'daemonEndpoints', 'nodeInfo',
                     'images', 'volumesInUse', 'volumesAttached', 'config']
NODE_INFO_ORDER = ['machineID', 'systemUUID', 'bootID', 'kernelVersion', 'osImage', 'containerRuntimeVersion',
                   'kubeletVersion', 'kubeProxyVersion', 'operatingSystem', 'architecture']
SERVICE_SPEC_ORDER = ['ports', 'selector', 'clusterIP', 'clusterIPs', 'type', 'externalIPs', 'sessionAffinity',
                      'loadBalancerIP', 'loadBalancerSourceRanges', 'externalName', 'externalTrafficPolicy',
                      'healthCheckNodePort', 'publishNotReadyAddresses', 'sessionAffinityConfig', 'ipFamilies',
                      'ipFamilyPolicy', 'allocateLoadBalancerNodePorts', 'loadBalancerClass', 'internalTrafficPolicy']


def apply_orders(obj, orders, path=()):
    """Typed (Go struct) field order for nested values: orders maps a path
    ('*' = any list item) to the field order there."""
    if isinstance(obj, dict):
        order = orders.get(path)
        if order:
            obj = _ordered(obj, order)
        return {k: apply_orders(v, orders, path + (k,)) for k, v in obj.items()}
    if isinstance(obj, list):
        return [apply_orders(x, orders, path + ('*',)) for x in obj]
    return obj


def _ordered(d, order):
    out = {}
    for k in order:
        if k in d:
            out[k] = d[k]
    for k in d:
        if k not in out:
            out[k] = d[k]
    return out


# ---------------------------------------------------------------- strategies

class Strategy:
    kind = ''
    omitempty = ()
    typed = True
    order = ('kind', 'apiVersion', 'metadata', 'spec', 'status')
    zero = {}
    generation = False
    status_reset = False            # the main endpoint resets status
    allow_create_on_update = False
    allow_unconditional_update = True
    return_deleted_object = False
    field_label_style = 'core'      # 'core', 'meta' or 'cr'
    extra_field_labels = ()
    schema = None
    namespaced = True
    bookmark_zero = None

    def name_errors(self, name):
        return is_dns1123_subdomain(name)

    # conversion between the request's version and storage
    def decode(self, obj, rt):
        obj['apiVersion'] = rt.api_version
        obj['kind'] = rt.kind
        return obj

    def encode(self, obj, rt):
        o = copy.deepcopy(obj)
        o['apiVersion'] = rt.api_version
        o['kind'] = rt.kind
        return o

    def to_storage(self, obj):
        """What the storage codec does to an object on its way to etcd."""

    def zero_object(self):
        return copy.deepcopy(self.zero)

    def fill_zero(self, obj):
        for k, v in self.zero.items():
            if k not in obj:
                obj[k] = copy.deepcopy(v)
            elif isinstance(v, dict) and isinstance(obj[k], dict):
                for k2, v2 in v.items():
                    obj[k].setdefault(k2, copy.deepcopy(v2))

    def defaults(self, obj, old=None):
        pass

    def prepare_create(self, obj, ctx):
        if self.status_reset:
            obj.pop('status', None)
            if 'status' in self.zero:
                obj['status'] = copy.deepcopy(self.zero['status'])

    def prepare_update(self, new, old, ctx, sub):
        if sub == 'status':
            for k in list(new.keys()):
                if k not in ('apiVersion', 'kind', 'metadata', 'status'):
                    del new[k]
            for k, v in old.items():
                if k not in ('metadata', 'status'):
                    new[k] = copy.deepcopy(v)
            new['metadata']['ownerReferences'] = copy.deepcopy(old['metadata'].get('ownerReferences'))
            if new['metadata']['ownerReferences'] is None:
                del new['metadata']['ownerReferences']
        elif self.status_reset:
            if 'status' in old:
                new['status'] = copy.deepcopy(old['status'])
            else:
                new.pop('status', None)

    def admit(self, obj, rt):
        """Validating admission on create (after validation, as the
        apiserver runs it); raises an ApiError to refuse."""

    def validate(self, obj, ctx):
        return []

    def validate_update(self, new, old, ctx, sub):
        return self.validate(new, ctx)

    def should_delete(self, obj):
        """An update leaves a terminating object without finalizers: it goes."""
        m = obj['metadata']
        return bool(m.get('deletionTimestamp')) and not m.get('finalizers') and \
            not (m.get('deletionGracePeriodSeconds') or 0) > 0

    def field_values(self, obj):
        m = obj.get('metadata', {})
        d = {'metadata.name': m.get('name', '')}
        if self.namespaced:
            d['metadata.namespace'] = m.get('namespace', '')
        return d

    def supported_field_labels(self):
        s = {'metadata.name'}
        if self.namespaced or self.field_label_style != 'cr':
            s.add('metadata.namespace')
        return s | set(self.extra_field_labels)

    def field_label_error(self, label):
        if self.field_label_style == 'meta':
            return '%s is not a known field selector: only %s, %s' % (go_quote(label), go_quote('metadata.name'),
                                                                      go_quote('metadata.namespace'))
        return 'field label not supported: %s' % label

    def grace(self, obj, grace_param):
        """(graceful, seconds) for a delete."""
        return False, 0

    def output(self, obj):
        """JSON layout of a returned object."""
        if not self.typed:
            from kcommon import sort_keys_deep
            return sort_keys_deep(obj)
        o = _ordered(obj, self.order)
        m = o.get('metadata')
        if isinstance(m, dict):
            m = _ordered(m, META_ORDER)
            if 'creationTimestamp' not in m:
                m = _ordered(dict(m, creationTimestamp=None), META_ORDER)
            if isinstance(m.get('managedFields'), list):
                m['managedFields'] = [_ordered(e, MF_ORDER) for e in m['managedFields']]
            if isinstance(m.get('ownerReferences'), list):
                m['ownerReferences'] = [_ordered(r, ['apiVersion', 'kind', 'name', 'uid', 'controller',
                                                     'blockOwnerDeletion']) if isinstance(r, dict) else r
                                        for r in m['ownerReferences']]
            o['metadata'] = m
        if self.nested:
            o = apply_orders(o, self.nested)
        return o

    nested = {}

    def bookmark(self, rt, rv):
        if not self.typed:
            return {'apiVersion': rt.api_version, 'kind': rt.kind, 'metadata': {'resourceVersion': rv}}
        o = {'kind': rt.kind, 'apiVersion': rt.api_version,
             'metadata': {'resourceVersion': rv, 'creationTimestamp': None}}
        if self.bookmark_zero:
            o.update(copy.deepcopy(self.bookmark_zero))
        return o


# ---------------------------------------------------------------- custom resources

class CRStrategy(Strategy):
    typed = False
    generation = True
    field_label_style = 'cr'

    def __init__(self, crd, version):
        spec = crd['spec']
        self.kind = spec['names']['kind']
        self.group = spec['group']
        self.namespaced = spec.get('scope') == 'Namespaced'
        self.version = version['name']
        sub = version.get('subresources') or {}
        self.status_reset = 'status' in sub
        # specReplicasPath, statusReplicasPath, labelSelectorPath (dotted, '.spec.replicas')
        sc = sub.get('scale')
        self.scale = None if sc is None else (sc.get('specReplicasPath') or '', sc.get('statusReplicasPath') or '',
                                              sc.get('labelSelectorPath') or '')
        s = (version.get('schema') or {}).get('openAPIV3Schema') or {}
        if spec.get('preserveUnknownFields'):
            s = dict(s, **{'x-kubernetes-preserve-unknown-fields': True})
        self.schema = dict(s, _root=True)
        self.storage_version = next((v['name'] for v in spec['versions'] if v.get('storage')), self.version)
        self.multi_version = sum(1 for v in spec['versions'] if v.get('served')) > 1
        storage = next((v for v in spec['versions'] if v.get('storage')), version)
        ss = (storage.get('schema') or {}).get('openAPIV3Schema') or {}
        if spec.get('preserveUnknownFields'):
            ss = dict(ss, **{'x-kubernetes-preserve-unknown-fields': True})
        self.storage_schema = dict(ss, _root=True)
        self.has_cel = kschema.has_cel(s)

    def decode(self, obj, rt):
        obj['apiVersion'] = '%s/%s' % (self.group, self.storage_version)
        return obj

    def encode(self, obj, rt):
        o = Strategy.encode(self, obj, rt)
        if self.multi_version:
            # conversion None rewrites apiVersion alone; the object is then pruned with the schema of the
            # version asked for, on every read: a CAPI Cluster written as v1beta2 and read as v1beta1 loses
            # controlPlaneRef.apiGroup (kube-apiserver 1.26). A CRD with one version stores what that schema
            # already pruned.
            kschema.prune(o, self.schema, '', [], root=True)
        return o

    def to_storage(self, obj):
        # written through another version: converted (conversion None: apiVersion alone, done by decode)
        # and pruned with the storage version's schema (a CAPI Cluster written as v1beta1 is stored without
        # controlPlaneRef.apiVersion, which v1beta2 does not know: kube-apiserver 1.26)
        if self.version != self.storage_version:
            kschema.prune(obj, self.storage_schema, '', [], root=True)

    def defaults(self, obj, old=None):
        kschema.apply_defaults(obj, self.schema)

    def prepare_create(self, obj, ctx):
        if self.status_reset:
            obj.pop('status', None)
        obj['metadata']['generation'] = 1

    def prepare_update(self, new, old, ctx, sub):
        if sub == 'status':
            status = new.get('status', OMIT)
            mf = new['metadata'].get('managedFields')
            new.clear()
            new.update(copy.deepcopy(old))
            if mf is not None:
                new['metadata']['managedFields'] = mf
            if status is OMIT:
                new.pop('status', None)
            else:
                new['status'] = status
            return
        if self.status_reset:
            if 'status' in old:
                new['status'] = copy.deepcopy(old['status'])
            else:
                new.pop('status', None)
        a = {k: v for k, v in new.items() if k != 'metadata'}
        b = {k: v for k, v in old.items() if k != 'metadata'}
        if a != b:
            new['metadata']['generation'] = (old['metadata'].get('generation') or 0) + 1

    def _schema_errors(self, obj, old=OMIT):
        body = {k: v for k, v in obj.items() if k not in ('apiVersion', 'kind', 'metadata')}
        s = dict(self.schema)
        s.pop('_root', None)
        props = dict(s.get('properties') or {})
        for k in ('apiVersion', 'kind', 'metadata'):
            props.pop(k, None)
        s['properties'] = props
        req = [r for r in (s.get('required') or []) if r not in ('apiVersion', 'kind', 'metadata')]
        if req:
            s['required'] = req
        else:
            s.pop('required', None)
        errs = kschema.validate(body, s, '')
        kschema.validate_list_types(body, s, '', errs)
        if self.has_cel:
            oldbody = OMIT
            if old is not OMIT:
                oldbody = {k: v for k, v in old.items() if k not in ('apiVersion', 'kind', 'metadata')}
            kschema.validate_cel(body, s, '', errs, oldbody)
        return errs

    def validate(self, obj, ctx):
        return self._schema_errors(obj)

    def validate_update(self, new, old, ctx, sub):
        return self._schema_errors(new, old)


# ---------------------------------------------------------------- core/v1

class NamespaceStrategy(Strategy):
    kind = 'Namespace'
    namespaced = False
    zero = {'spec': {}, 'status': {}}
    extra_field_labels = ('status.phase',)
    bookmark_zero = {'spec': {}, 'status': {}}
    schema = root_schema({'spec': OBJ({'finalizers': ARR(STR)}),
                          'status': OBJ({'phase': STR, 'conditions': CONDITIONS})})

    def name_errors(self, name):
        return is_dns1123_label(name)

    def defaults(self, obj, old=None):
        name = obj['metadata'].get('name')
        if name:
            obj['metadata'].setdefault('labels', {})['kubernetes.io/metadata.name'] = name

    def prepare_create(self, obj, ctx):
        obj['status'] = {'phase': 'Active'}
        fins = obj.setdefault('spec', {}).get('finalizers') or []
        if 'kubernetes' not in fins:
            fins = fins + ['kubernetes']
        obj['spec']['finalizers'] = fins

    def prepare_update(self, new, old, ctx, sub):
        if sub == 'status':
            new['spec'] = copy.deepcopy(old.get('spec', {}))
        elif sub == 'finalize':
            fins = (new.get('spec') or {}).get('finalizers')
            st = copy.deepcopy(old.get('status', {}))
            meta = new['metadata']
            new.clear()
            new.update(copy.deepcopy(old))
            new['metadata']['managedFields'] = meta.get('managedFields', [])
            new['spec'] = {'finalizers': fins} if fins else {}
            new['status'] = st
        else:
            new.setdefault('spec', {})
            if (old.get('spec') or {}).get('finalizers') is not None:
                new['spec']['finalizers'] = copy.deepcopy(old['spec']['finalizers'])
            else:
                new['spec'].pop('finalizers', None)
            new['status'] = copy.deepcopy(old.get('status', {}))

    def field_values(self, obj):
        d = super().field_values(obj)
        d['status.phase'] = (obj.get('status') or {}).get('phase', '')
        return d

    def should_delete(self, obj):
        return super().should_delete(obj) and not (obj.get('spec') or {}).get('finalizers')

    def validate(self, obj, ctx):
        errs = []
        for i, f in enumerate((obj.get('spec') or {}).get('finalizers') or []):
            if '/' not in f and f not in ('kubernetes',):
                errs.append(fe_invalid('spec.finalizers', f, 'name is neither a standard finalizer name nor is it '
                                                             'fully qualified'))
        return errs


_CONFIG_KEY_RE = re.compile(r'^[-._a-zA-Z0-9]+$')


def config_key_errors(k):
    errs = []
    if len(k) > 253:
        errs.append('must be no more than 253 characters')
    if not _CONFIG_KEY_RE.match(k):
        errs.append("a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  "
                    "or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')")
    if k in ('.', '..'):
        errs.append("must not be '.'" if k == '.' else "must not be '..'")
    elif k.startswith('..'):
        errs.append("must not start with '..'")
    return errs


class SecretStrategy(Strategy):
    kind = 'Secret'
    order = ('kind', 'apiVersion', 'metadata', 'immutable', 'data', 'stringData', 'type')
    extra_field_labels = ('type',)
    schema = root_schema({'immutable': BOOL,
                          'data': S('object', additionalProperties=S('string', **{'x-go': '[]uint8'}),
                                    **{'x-go': 'map[string][]uint8'}),
                          'stringData': MAP_STR,
                          'type': S('string', **{'x-go': 'v1.SecretType'})})

    def decode(self, obj, rt):
        super().decode(obj, rt)
        data = obj.get('data')
        if isinstance(data, dict):
            for k, v in data.items():
                if v is None:
                    continue
                try:
                    base64.b64decode(v, validate=True)
                except (ValueError, TypeError):
                    raise err_bad_request('Secret in version "v1" cannot be handled as a Secret: illegal base64 data '
                                          'at input byte %d' % _b64_bad_index(v))
        sd = obj.pop('stringData', None)
        if sd:
            data = obj.setdefault('data', {}) or {}
            obj['data'] = data
            for k, v in sd.items():
                data[k] = base64.b64encode((v or '').encode()).decode()
        if obj.get('data') == {} or obj.get('data') is None:
            obj.pop('data', None)
        return obj

    def defaults(self, obj, old=None):
        if not obj.get('type'):
            obj['type'] = 'Opaque'

    def field_values(self, obj):
        d = super().field_values(obj)
        d['type'] = obj.get('type', '')
        return d

    def validate(self, obj, ctx):
        errs = []
        data = obj.get('data') or {}
        total = 0
        for k in sorted(data):
            for m in config_key_errors(k):
                errs.append(fe_invalid('data[%s]' % k, k, m))
            total += len(base64.b64decode(data[k] or ''))
        if total > 1024 * 1024:
            errs.append(fe_too_long('data', '', 1024 * 1024))
        t = obj.get('type', '')
        if t == 'kubernetes.io/dockerconfigjson':
            v = data.get('.dockerconfigjson')
            if v is None:
                errs.append(fe_required('data[.dockerconfigjson]'))
            else:
                try:
                    json.loads(base64.b64decode(v))
                except ValueError as e:
                    errs.append(fe_invalid('data[.dockerconfigjson]', '<secret contents redacted>', str(e)))
        elif t == 'kubernetes.io/dockercfg':
            if '.dockercfg' not in data:
                errs.append(fe_required('data[.dockercfg]'))
        elif t == 'kubernetes.io/tls':
            for k in ('tls.crt', 'tls.key'):
                if k not in data:
                    errs.append(fe_required('data[%s]' % k))
        elif t == 'kubernetes.io/basic-auth':
            if 'username' not in data and 'password' not in data:
                errs.append(fe_required('data[username]'))
        elif t == 'kubernetes.io/ssh-auth':
            if 'ssh-privatekey' not in data:
                errs.append(fe_required('data[ssh-privatekey]'))
        elif t == 'kubernetes.io/service-account-token':
            if not (obj['metadata'].get('annotations') or {}).get('kubernetes.io/service-account.name'):
                errs.append(fe_required('metadata.annotations[kubernetes.io/service-account.name]'))
        return errs

    def validate_update(self, new, old, ctx, sub):
        errs = self.validate(new, ctx)
        if new.get('type') != old.get('type'):
            errs.append(fe_invalid('type', new.get('type', ''), 'field is immutable'))
        if old.get('immutable') is True:
            if new.get('immutable') is not True:
                errs.append(fe_forbidden('immutable', 'field is immutable when `immutable` is set'))
            if new.get('data') != old.get('data'):
                errs.append(fe_forbidden('data', 'field is immutable when `immutable` is set'))
        return errs


def _b64_bad_index(v):
    for i, ch in enumerate(v):
        if not (ch.isalnum() and ch.isascii() or ch in '+/='):
            return i
    return len(v) - (len(v) % 4 or 4)


class ConfigMapStrategy(Strategy):
    omitempty = ('data', 'binaryData')
    kind = 'ConfigMap'
    order = ('kind', 'apiVersion', 'metadata', 'immutable', 'data', 'binaryData')
    schema = root_schema({'immutable': BOOL, 'data': MAP_STR,
                          'binaryData': S('object', additionalProperties=S('string', **{'x-go': '[]uint8'}))})
    field_label_style = 'meta'

    def validate(self, obj, ctx):
        errs = []
        total = 0
        data = obj.get('data') or {}
        bdata = obj.get('binaryData') or {}
        for k in sorted(data):
            for m in config_key_errors(k):
                errs.append(fe_invalid('data[%s]' % k, k, m))
            total += len(data[k] or '')
        for k in sorted(bdata):
            for m in config_key_errors(k):
                errs.append(fe_invalid('binaryData[%s]' % k, k, m))
            if k in data:
                errs.append(fe_invalid('data[%s]' % k, k, 'duplicate of key present in binaryData'))
            total += len(base64.b64decode(bdata[k] or ''))
        if total > 1024 * 1024:
            errs.append(fe_too_long('', '', 1024 * 1024))
        return errs

    def validate_update(self, new, old, ctx, sub):
        errs = self.validate(new, ctx)
        if old.get('immutable') is True:
            if new.get('immutable') is not True:
                errs.append(fe_forbidden('immutable', 'field is immutable when `immutable` is set'))
            if new.get('data') != old.get('data'):
                errs.append(fe_forbidden('data', 'field is immutable when `immutable` is set'))
            if new.get('binaryData') != old.get('binaryData'):
                errs.append(fe_forbidden('binaryData', 'field is immutable when `immutable` is set'))
        return errs

    def decode(self, obj, rt):
        super().decode(obj, rt)
        for k, v in (obj.get('binaryData') or {}).items():
            try:
                base64.b64decode(v or '', validate=True)
            except (ValueError, TypeError):
                raise err_bad_request('ConfigMap in version "v1" cannot be handled as a ConfigMap: illegal base64 '
                                      'data at input byte %d' % _b64_bad_index(v))
        return obj


EVENT_SOURCE = OBJ({'component': STR, 'host': STR})
EVENT_SERIES = OBJ({'count': INT, 'lastObservedTime': MICROTIME})


class EventStrategy(Strategy):
    kind = 'Event'
    order = ('kind', 'apiVersion', 'metadata', 'involvedObject', 'reason', 'message', 'source', 'firstTimestamp',
             'lastTimestamp', 'count', 'type', 'eventTime', 'series', 'action', 'related', 'reportingComponent',
             'reportingInstance')
    zero = {'involvedObject': {}, 'source': {}, 'firstTimestamp': None, 'lastTimestamp': None, 'eventTime': None,
            'reportingComponent': '', 'reportingInstance': ''}
    bookmark_zero = {'involvedObject': {}, 'source': {}, 'firstTimestamp': None, 'lastTimestamp': None,
                     'eventTime': None, 'reportingComponent': '', 'reportingInstance': ''}
    allow_create_on_update = True
    nested = {('involvedObject',): OBJREF_ORDER, ('related',): OBJREF_ORDER, ('source',): ['component', 'host'],
              ('series',): ['count', 'lastObservedTime']}
    extra_field_labels = ('involvedObject.kind', 'involvedObject.namespace', 'involvedObject.name',
                          'involvedObject.uid', 'involvedObject.apiVersion', 'involvedObject.resourceVersion',
                          'involvedObject.fieldPath', 'reason', 'reportingComponent', 'source', 'type')
    schema = root_schema({
        'involvedObject': OBJECT_REFERENCE, 'reason': STR, 'message': STR, 'source': EVENT_SOURCE,
        'firstTimestamp': TIME, 'lastTimestamp': TIME, 'count': S('integer', **{'x-go': 'int32'}), 'type': STR,
        'eventTime': MICROTIME, 'series': EVENT_SERIES, 'action': STR, 'related': OBJECT_REFERENCE,
        'reportingComponent': STR, 'reportingInstance': STR})

    def decode(self, obj, rt):
        super().decode(obj, rt)
        for f in ('firstTimestamp', 'lastTimestamp'):
            if obj.get(f) is not None:
                obj[f] = normalize_time(obj[f])
        if obj.get('eventTime') is not None:
            obj['eventTime'] = normalize_microtime(obj['eventTime'])
        if isinstance(obj.get('series'), dict) and obj['series'].get('lastObservedTime'):
            obj['series']['lastObservedTime'] = normalize_microtime(obj['series']['lastObservedTime'])
        self.fill_zero(obj)
        return obj

    def field_values(self, obj):
        d = super().field_values(obj)
        io = obj.get('involvedObject') or {}
        for k in ('kind', 'namespace', 'name', 'uid', 'apiVersion', 'resourceVersion', 'fieldPath'):
            d['involvedObject.' + k] = io.get(k, '')
        d['reason'] = obj.get('reason', '')
        d['reportingComponent'] = obj.get('reportingComponent', '')
        d['source'] = (obj.get('source') or {}).get('component', '')
        d['type'] = obj.get('type', '')
        return d

    def name_errors(self, name):
        # core/v1 keeps legacy event validation (ValidateEventCreate): the
        # name only has to be a path segment ("AssistedControllerIsReady"
        # is a valid core Event name); events.k8s.io/v1 is strict
        return is_path_segment_name(name)

    def validate(self, obj, ctx):
        errs = []
        ns = obj['metadata'].get('namespace', '')
        io = obj.get('involvedObject') or {}
        if obj.get('eventTime') is None:
            if not io.get('namespace'):
                if ns not in ('', 'default'):
                    errs.append(fe_invalid('involvedObject.namespace', io.get('namespace', ''),
                                           'does not match event.namespace'))
            elif ns != io.get('namespace'):
                errs.append(fe_invalid('involvedObject.namespace', io.get('namespace', ''),
                                       'does not match event.namespace'))
        else:
            errs.extend(_validate_new_event(obj, 'reportingComponent'))
        for m in is_dns1123_subdomain(ns):
            errs.append(fe_invalid('namespace', ns, m))
        return errs


def _validate_new_event(obj, rc_name, regarding='involvedObject'):
    errs = []
    io = obj.get(regarding) or {}
    ns = obj['metadata'].get('namespace', '')
    if io.get('namespace') and io.get('namespace') != ns:
        errs.append(fe_invalid(regarding + '.namespace', io.get('namespace', ''), 'does not match event.namespace'))
    rc = obj.get(rc_name, '')
    if not rc:
        errs.append(fe_required(rc_name, ''))
    else:
        for m in is_qualified_name(rc):
            errs.append(fe_invalid(rc_name, rc, m))
    for f, n in (('reportingInstance', 128), ('action', 128), ('reason', 128)):
        v = obj.get(f, '')
        if not v:
            errs.append(fe_required(f, ''))
        elif len(v) > n:
            errs.append(fe_too_long(f, '', n))
    t = obj.get('type', '')
    if t not in ('Normal', 'Warning'):
        errs.append(fe_invalid('type', t, 'has invalid value: %s' % t))
    return errs


class EventsV1Strategy(EventStrategy):
    """events.k8s.io/v1 Event: another view of the core Event storage."""

    def name_errors(self, name):
        return is_dns1123_subdomain(name)

    MAP = [('regarding', 'involvedObject'), ('note', 'message'), ('reportingController', 'reportingComponent'),
           ('deprecatedSource', 'source'), ('deprecatedFirstTimestamp', 'firstTimestamp'),
           ('deprecatedLastTimestamp', 'lastTimestamp'), ('deprecatedCount', 'count')]
    order = ('kind', 'apiVersion', 'metadata', 'eventTime', 'series', 'reportingController', 'reportingInstance',
             'action', 'reason', 'regarding', 'related', 'note', 'type', 'deprecatedSource',
             'deprecatedFirstTimestamp', 'deprecatedLastTimestamp', 'deprecatedCount')
    nested = {('regarding',): OBJREF_ORDER, ('related',): OBJREF_ORDER, ('deprecatedSource',): ['component', 'host'],
              ('series',): ['count', 'lastObservedTime']}
    bookmark_zero = {'eventTime': None, 'reportingController': '', 'reportingInstance': '', 'regarding': {},
                     'deprecatedSource': {}, 'deprecatedFirstTimestamp': None, 'deprecatedLastTimestamp': None}
    schema = root_schema({
        'eventTime': MICROTIME, 'series': OBJ({'count': INT, 'lastObservedTime': MICROTIME}),
        'reportingController': STR, 'reportingInstance': STR, 'action': STR, 'reason': STR,
        'regarding': OBJECT_REFERENCE, 'related': OBJECT_REFERENCE, 'note': STR, 'type': STR,
        'deprecatedSource': EVENT_SOURCE, 'deprecatedFirstTimestamp': TIME, 'deprecatedLastTimestamp': TIME,
        'deprecatedCount': INT})

    def decode(self, obj, rt):
        for ext, core in self.MAP:
            if ext in obj:
                obj[core] = obj.pop(ext)
        obj['apiVersion'] = 'v1'
        obj['kind'] = 'Event'
        for f in ('firstTimestamp', 'lastTimestamp'):
            if obj.get(f) is not None:
                obj[f] = normalize_time(obj[f])
        if obj.get('eventTime') is not None:
            obj['eventTime'] = normalize_microtime(obj['eventTime'])
        self.fill_zero(obj)
        return obj

    def encode(self, obj, rt):
        o = copy.deepcopy(obj)
        for ext, core in self.MAP:
            if core in o:
                o[ext] = o.pop(core)
        if o.get('deprecatedSource') == {}:
            del o['deprecatedSource']
        for f in ('deprecatedFirstTimestamp', 'deprecatedLastTimestamp'):
            if f in o and o[f] is None:
                del o[f]
        o['apiVersion'] = rt.api_version
        o['kind'] = rt.kind
        return o

    def validate(self, obj, ctx):
        if ctx.get('create'):
            ext = {k: v for k, v in obj.items()}
            for e, c in self.MAP:
                if c in ext:
                    ext[e] = ext.pop(c)
            errs = []
            if ext.get('eventTime') is None:
                errs.append(fe_required('eventTime', ''))
            errs.extend(_validate_new_event(ext, 'reportingController', 'regarding'))
            return errs
        return []


NODE_STATUS_ZERO = {'daemonEndpoints': {'kubeletEndpoint': {'Port': 0}},
                    'nodeInfo': {'machineID': '', 'systemUUID': '', 'bootID': '', 'kernelVersion': '', 'osImage': '',
                                 'containerRuntimeVersion': '', 'kubeletVersion': '', 'kubeProxyVersion': '',
                                 'operatingSystem': '', 'architecture': ''}}


class NodeStrategy(Strategy):
    kind = 'Node'
    namespaced = False
    zero = {'spec': {}, 'status': NODE_STATUS_ZERO}
    bookmark_zero = {'spec': {}, 'status': NODE_STATUS_ZERO}
    nested = {('spec',): NODE_SPEC_ORDER, ('status',): NODE_STATUS_ORDER, ('status', 'conditions', '*'): COND_ORDER,
              ('status', 'nodeInfo'): NODE_INFO_ORDER, ('status', 'addresses', '*'): ['type', 'address']}
    extra_field_labels = ('spec.unschedulable',)
    schema = root_schema({
        'spec': OBJ({'podCIDR': STR, 'podCIDRs': ARR(STR, **{'x-kubernetes-list-type': 'set'}),
                     'providerID': STR, 'unschedulable': BOOL, 'taints': ARR(OBJ(preserve=True))}, preserve=True),
        'status': OBJ({'conditions': CONDITIONS,
                       'addresses': ARR(OBJ(preserve=True), **{'x-kubernetes-list-type': 'map',
                                                                'x-kubernetes-list-map-keys': ['type']}),
                       'capacity': MAP_STR, 'allocatable': MAP_STR}, preserve=True)})

    def decode(self, obj, rt):
        super().decode(obj, rt)
        self.fill_zero(obj)
        return obj

    def prepare_create(self, obj, ctx):
        pass            # nodes may be created with status (kubelet registration)

    def prepare_update(self, new, old, ctx, sub):
        if sub == 'status':
            new['spec'] = copy.deepcopy(old.get('spec', {}))
        else:
            new['status'] = copy.deepcopy(old.get('status', {}))

    def field_values(self, obj):
        d = super().field_values(obj)
        d['spec.unschedulable'] = 'true' if (obj.get('spec') or {}).get('unschedulable') else 'false'
        return d

    def validate(self, obj, ctx):
        errs = []
        for i, c in enumerate((obj.get('status') or {}).get('conditions') or []):
            if not isinstance(c, dict) or not c.get('type'):
                errs.append(fe_required('status.conditions[%d].type' % i, ''))
        return errs


POD_SPEC_MUTABLE = '`spec.containers[*].image`, `spec.initContainers[*].image`, `spec.activeDeadlineSeconds`, ' \
                   '`spec.tolerations` (only additions to existing tolerations), ' \
                   '`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)'


class PodStrategy(Strategy):
    kind = 'Pod'
    zero = {'spec': {}, 'status': {}}
    bookmark_zero = {'spec': {'containers': None}, 'status': {}}
    nested = {('spec',): POD_SPEC_ORDER, ('status',): POD_STATUS_ORDER, ('status', 'conditions', '*'): COND_ORDER,
              ('spec', 'containers', '*'): CONTAINER_ORDER, ('spec', 'initContainers', '*'): CONTAINER_ORDER,
              ('spec', 'tolerations', '*'): ['key', 'operator', 'value', 'effect', 'tolerationSeconds']}
    return_deleted_object = True
    status_reset = True
    extra_field_labels = ('spec.nodeName', 'spec.restartPolicy', 'spec.schedulerName', 'spec.serviceAccountName',
                          'spec.hostNetwork', 'status.phase', 'status.podIP', 'status.podIPs',
                          'status.nominatedNodeName')
    container = OBJ({'name': STR, 'image': STR, 'env': ARR(OBJ(preserve=True), **{'x-kubernetes-list-type': 'map',
                                                                                  'x-kubernetes-list-map-keys': ['name']}),
                     'ports': ARR(OBJ(preserve=True))}, preserve=True)
    schema = root_schema({
        'spec': OBJ({'containers': ARR(container, **{'x-kubernetes-list-type': 'map',
                                                      'x-kubernetes-list-map-keys': ['name']}),
                     'initContainers': ARR(container, **{'x-kubernetes-list-type': 'map',
                                                          'x-kubernetes-list-map-keys': ['name']}),
                     'nodeName': STR, 'restartPolicy': STR, 'serviceAccountName': STR, 'hostNetwork': BOOL,
                     'terminationGracePeriodSeconds': INT}, preserve=True),
        'status': OBJ({'conditions': CONDITIONS, 'phase': STR,
                       'containerStatuses': ARR(OBJ(preserve=True), **{'x-kubernetes-list-type': 'map',
                                                                        'x-kubernetes-list-map-keys': ['name']})},
                      preserve=True)})

    def defaults(self, obj, old=None):
        spec = obj.setdefault('spec', {})
        if old is None:
            spec.setdefault('restartPolicy', 'Always')
            spec.setdefault('terminationGracePeriodSeconds', 30)
            spec.setdefault('dnsPolicy', 'ClusterFirst')
            spec.setdefault('securityContext', {})
            spec.setdefault('schedulerName', 'default-scheduler')
            spec.setdefault('enableServiceLinks', True)
            spec.setdefault('preemptionPolicy', 'PreemptLowerPriority')
            for lst in ('containers', 'initContainers'):
                for c in spec.get(lst) or []:
                    if not isinstance(c, dict):
                        continue
                    c.setdefault('resources', {})
                    c.setdefault('terminationMessagePath', '/dev/termination-log')
                    c.setdefault('terminationMessagePolicy', 'File')
                    img = c.get('image', '')
                    if 'imagePullPolicy' not in c:
                        tag = img.rsplit('/', 1)[-1]
                        c['imagePullPolicy'] = 'Always' if ('@' not in tag and (':' not in tag or
                                                                                 tag.endswith(':latest'))) \
                            else 'IfNotPresent'

    def prepare_create(self, obj, ctx):
        spec = obj['spec']
        spec.setdefault('serviceAccountName', 'default')
        spec.setdefault('serviceAccount', spec['serviceAccountName'])
        spec.setdefault('priority', 0)
        tols = spec.setdefault('tolerations', [])
        for key in ('node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable'):
            if not any(isinstance(t, dict) and t.get('key') == key for t in tols):
                tols.append({'key': key, 'operator': 'Exists', 'effect': 'NoExecute', 'tolerationSeconds': 300})
        qos = 'BestEffort'
        for c in spec.get('containers') or []:
            r = (c or {}).get('resources') or {}
            if r.get('requests') or r.get('limits'):
                qos = 'Burstable'
        obj['status'] = {'phase': 'Pending', 'qosClass': qos}

    def prepare_update(self, new, old, ctx, sub):
        if sub == 'status':
            new['spec'] = copy.deepcopy(old.get('spec', {}))
            if old['metadata'].get('ownerReferences') is not None:
                new['metadata']['ownerReferences'] = copy.deepcopy(old['metadata']['ownerReferences'])
            else:
                new['metadata'].pop('ownerReferences', None)
            if old['metadata'].get('deletionTimestamp'):
                new['metadata']['deletionTimestamp'] = old['metadata']['deletionTimestamp']
        else:
            new['status'] = copy.deepcopy(old.get('status', {}))

    def field_values(self, obj):
        d = super().field_values(obj)
        spec = obj.get('spec') or {}
        st = obj.get('status') or {}
        d['spec.nodeName'] = spec.get('nodeName', '')
        d['spec.restartPolicy'] = spec.get('restartPolicy', '')
        d['spec.schedulerName'] = spec.get('schedulerName', '')
        d['spec.serviceAccountName'] = spec.get('serviceAccountName', '')
        d['spec.hostNetwork'] = 'true' if spec.get('hostNetwork') else 'false'
        d['status.phase'] = st.get('phase', '')
        d['status.podIP'] = st.get('podIP', '')
        d['status.podIPs'] = ','.join(p.get('ip', '') for p in st.get('podIPs') or [] if isinstance(p, dict))
        d['status.nominatedNodeName'] = st.get('nominatedNodeName', '')
        return d

    def validate(self, obj, ctx):
        errs = []
        spec = obj.get('spec') or {}
        cs = spec.get('containers') or []
        if not cs:
            errs.append(fe_required('spec.containers', ''))
        names = set()
        for lst in ('initContainers', 'containers'):
            for i, c in enumerate(spec.get(lst) or []):
                p = 'spec.%s[%d]' % (lst, i)
                if not isinstance(c, dict):
                    continue
                n = c.get('name', '')
                if not n:
                    errs.append(fe_required(p + '.name', ''))
                else:
                    for m in is_dns1123_label(n):
                        errs.append(fe_invalid(p + '.name', n, m))
                    if n in names:
                        errs.append(FieldError('FieldValueDuplicate', p + '.name', n))
                    names.add(n)
                if not c.get('image'):
                    errs.append(fe_required(p + '.image', ''))
        rp = spec.get('restartPolicy')
        if rp not in ('Always', 'OnFailure', 'Never'):
            errs.append(fe_not_supported('spec.restartPolicy', rp or '', ['Always', 'OnFailure', 'Never']))
        return errs

    def validate_update(self, new, old, ctx, sub):
        if sub == 'status':
            return []
        errs = self.validate(new, ctx)
        a = copy.deepcopy(new.get('spec') or {})
        b = copy.deepcopy(old.get('spec') or {})
        for spec in (a, b):
            for lst in ('containers', 'initContainers'):
                for c in spec.get(lst) or []:
                    if isinstance(c, dict):
                        c.pop('image', None)
            spec.pop('activeDeadlineSeconds', None)
            spec.pop('tolerations', None)
            spec.pop('terminationGracePeriodSeconds', None)
        if a != b:
            errs.append(fe_forbidden('spec', 'pod updates may not change fields other than ' + POD_SPEC_MUTABLE))
        return errs

    def grace(self, obj, grace_param):
        spec = obj.get('spec') or {}
        st = obj.get('status') or {}
        if grace_param is not None:
            g = max(0, int(grace_param))
        else:
            g = spec.get('terminationGracePeriodSeconds', 30)
            if g is None:
                g = 30
        if not spec.get('nodeName') or st.get('phase') in ('Failed', 'Succeeded'):
            g = 0
        return True, g


class ServiceStrategy(Strategy):
    kind = 'Service'
    zero = {'spec': {}, 'status': {'loadBalancer': {}}}
    bookmark_zero = {'spec': {}, 'status': {'loadBalancer': {}}}
    nested = {('spec',): SERVICE_SPEC_ORDER,
              ('spec', 'ports', '*'): ['name', 'protocol', 'appProtocol', 'port', 'targetPort', 'nodePort']}
    return_deleted_object = True
    status_reset = True
    allow_create_on_update = True
    allow_unconditional_update = False
    schema = root_schema({'spec': OBJ({'ports': ARR(OBJ(preserve=True), **{'x-kubernetes-list-type': 'map',
                                                                            'x-kubernetes-list-map-keys': ['port', 'protocol']}),
                                       'selector': MAP_STR, 'clusterIP': STR, 'type': STR}, preserve=True),
                          'status': OBJ(preserve=True)})
    _next_ip = [2]

    def name_errors(self, name):
        return is_dns1035_label(name)

    def defaults(self, obj, old=None):
        spec = obj.setdefault('spec', {})
        spec.setdefault('type', 'ClusterIP')
        spec.setdefault('sessionAffinity', 'None')
        for p in spec.get('ports') or []:
            if isinstance(p, dict):
                p.setdefault('protocol', 'TCP')
                if 'targetPort' not in p and 'port' in p:
                    p['targetPort'] = p['port']

    def prepare_create(self, obj, ctx):
        spec = obj['spec']
        if spec.get('type') != 'ExternalName' and not spec.get('clusterIP'):
            n = self._next_ip[0]
            self._next_ip[0] += 1
            ip = str(ipaddress.IPv4Address('10.96.0.0') + n)
            spec['clusterIP'] = ip
            spec['clusterIPs'] = [ip]
        elif spec.get('clusterIP') and 'clusterIPs' not in spec:
            spec['clusterIPs'] = [spec['clusterIP']]
        if spec.get('type') != 'ExternalName':
            spec.setdefault('ipFamilies', ['IPv4'])
            spec.setdefault('ipFamilyPolicy', 'SingleStack')
            spec.setdefault('internalTrafficPolicy', 'Cluster')
        obj['status'] = {'loadBalancer': {}}

    def validate(self, obj, ctx):
        errs = []
        spec = obj.get('spec') or {}
        t = spec.get('type')
        if t not in ('ClusterIP', 'NodePort', 'LoadBalancer', 'ExternalName'):
            errs.append(fe_not_supported('spec.type', t or '', ['ClusterIP', 'ExternalName', 'LoadBalancer',
                                                                  'NodePort']))
        if t != 'ExternalName' and spec.get('clusterIP') != 'None' and not spec.get('ports'):
            errs.append(fe_required('spec.ports', ''))
        for i, p in enumerate(spec.get('ports') or []):
            port = (p or {}).get('port')
            if not isinstance(port, int) or not 1 <= port <= 65535:
                errs.append(fe_invalid('spec.ports[%d].port' % i, port, 'must be between 1 and 65535, inclusive'))
        return errs

    def validate_update(self, new, old, ctx, sub):
        errs = [] if sub == 'status' else self.validate(new, ctx)
        if sub != 'status' and old.get('spec', {}).get('clusterIP') and \
                new.get('spec', {}).get('clusterIP') != old['spec']['clusterIP']:
            errs.append(fe_invalid('spec.clusterIPs[0]', new.get('spec', {}).get('clusterIP', ''),
                                   'may not change once set'))
        return errs

    def prepare_update(self, new, old, ctx, sub):
        super().prepare_update(new, old, ctx, sub)
        if sub != 'status':
            spec = new.setdefault('spec', {})
            for k in ('clusterIP', 'clusterIPs', 'ipFamilies', 'ipFamilyPolicy', 'internalTrafficPolicy'):
                if k not in spec and k in (old.get('spec') or {}):
                    spec[k] = copy.deepcopy(old['spec'][k])


class ServiceAccountStrategy(Strategy):
    kind = 'ServiceAccount'
    order = ('kind', 'apiVersion', 'metadata', 'secrets', 'imagePullSecrets', 'automountServiceAccountToken')
    allow_create_on_update = True
    return_deleted_object = True
    field_label_style = 'meta'
    schema = root_schema({'secrets': ARR(OBJECT_REFERENCE), 'imagePullSecrets': ARR(OBJ({'name': STR})),
                          'automountServiceAccountToken': BOOL})


class LeaseStrategy(Strategy):
    kind = 'Lease'
    zero = {'spec': {}}
    bookmark_zero = {'spec': {}}
    nested = {('spec',): ['holderIdentity', 'leaseDurationSeconds', 'acquireTime', 'renewTime', 'leaseTransitions']}
    allow_create_on_update = True
    field_label_style = 'meta'
    schema = root_schema({'spec': OBJ({'holderIdentity': STR, 'leaseDurationSeconds': S('integer', **{'x-go': 'int32'}),
                                       'acquireTime': MICROTIME, 'renewTime': MICROTIME,
                                       'leaseTransitions': S('integer', **{'x-go': 'int32'})})})

    def decode(self, obj, rt):
        super().decode(obj, rt)
        spec = obj.get('spec')
        if isinstance(spec, dict):
            for f in ('acquireTime', 'renewTime'):
                if spec.get(f) is not None:
                    spec[f] = normalize_microtime(spec[f])
        self.fill_zero(obj)
        return obj

    def validate(self, obj, ctx):
        errs = []
        spec = obj.get('spec') or {}
        d = spec.get('leaseDurationSeconds')
        if d is not None and d <= 0:
            errs.append(fe_invalid('spec.leaseDurationSeconds', d, 'must be greater than 0'))
        t = spec.get('leaseTransitions')
        if t is not None and t < 0:
            errs.append(fe_invalid('spec.leaseTransitions', t, 'must be greater than or equal to 0'))
        return errs


class ClusterRoleBindingStrategy(Strategy):
    """Stored, never enforced: the fake authorizes every authenticated user
    (README.md, Authorization)."""
    kind = 'ClusterRoleBinding'
    namespaced = False
    order = ('kind', 'apiVersion', 'metadata', 'subjects', 'roleRef')
    allow_create_on_update = True
    field_label_style = 'meta'
    schema = root_schema({'subjects': ARR(OBJ({'kind': STR, 'apiGroup': STR, 'name': STR, 'namespace': STR})),
                          'roleRef': OBJ({'apiGroup': STR, 'kind': STR, 'name': STR})})

    def name_errors(self, name):
        return is_path_segment_name(name)

    def validate(self, obj, ctx):
        errs = []
        ref = obj.get('roleRef') or {}
        if ref.get('apiGroup') != 'rbac.authorization.k8s.io':
            errs.append(fe_not_supported('roleRef.apiGroup', ref.get('apiGroup', ''), ['rbac.authorization.k8s.io']))
        if ref.get('kind') not in ('ClusterRole',):
            errs.append(fe_not_supported('roleRef.kind', ref.get('kind', ''), ['ClusterRole']))
        if not ref.get('name'):
            errs.append(fe_required('roleRef.name', ''))
        for i, sub in enumerate(obj.get('subjects') or []):
            if not sub.get('name'):
                errs.append(fe_required('subjects[%d].name' % i, ''))
        return errs

    def validate_update(self, new, old, ctx, sub):
        errs = self.validate(new, ctx)
        if new.get('roleRef') != old.get('roleRef'):
            errs.append(fe_invalid('roleRef', new.get('roleRef'), 'cannot change roleRef'))
        return errs


CSR_APPROVAL_TYPES = ('Approved', 'Denied', 'Failed')


class CSRStrategy(Strategy):
    kind = 'CertificateSigningRequest'
    namespaced = False
    zero = {'spec': {}, 'status': {}}
    bookmark_zero = {'spec': {'request': None, 'signerName': ''}, 'status': {}}
    nested = {('spec',): ['request', 'signerName', 'expirationSeconds', 'usages', 'username', 'uid', 'groups', 'extra'],
              ('status',): ['conditions', 'certificate'],
              ('status', 'conditions', '*'): ['type', 'status', 'reason', 'message', 'lastUpdateTime',
                                              'lastTransitionTime']}
    status_reset = True
    extra_field_labels = ('spec.signerName',)
    field_label_style = 'meta'
    schema = root_schema({
        'spec': OBJ({'request': S('string', **{'x-go': '[]uint8'}), 'signerName': STR,
                     'expirationSeconds': S('integer', **{'x-go': 'int32'}),
                     'usages': ARR(STR, **{'x-kubernetes-list-type': 'atomic'}), 'username': STR, 'uid': STR,
                     'groups': ARR(STR, **{'x-kubernetes-list-type': 'atomic'}),
                     'extra': S('object', additionalProperties=ARR(STR))}),
        'status': OBJ({'conditions': CONDITIONS, 'certificate': S('string', **{'x-go': '[]uint8',
                                                                                'x-kubernetes-list-type': 'atomic'})})})

    def name_errors(self, name):
        return is_path_segment_name(name)

    def supported_field_labels(self):
        return {'metadata.name', 'spec.signerName'}

    def field_values(self, obj):
        return {'metadata.name': obj['metadata'].get('name', ''),
                'spec.signerName': (obj.get('spec') or {}).get('signerName', '')}

    def prepare_create(self, obj, ctx):
        spec = obj.setdefault('spec', {})
        user = ctx.get('user') or {}
        spec['username'] = user.get('name', '')
        spec['uid'] = user.get('uid', '')
        spec['groups'] = list(user.get('groups') or [])
        if user.get('extra'):
            spec['extra'] = user['extra']
        else:
            spec.pop('extra', None)
        if not spec.get('uid'):
            spec.pop('uid', None)
        obj['status'] = {}

    def prepare_update(self, new, old, ctx, sub):
        if sub in ('status', 'approval'):
            conds = (new.get('status') or {}).get('conditions')
            cert = (new.get('status') or {}).get('certificate')
            meta = new['metadata']
            new.clear()
            new.update(copy.deepcopy(old))
            new['metadata']['managedFields'] = meta.get('managedFields', [])
            st = new.setdefault('status', {})
            now = now_time()
            if sub == 'approval':
                if conds is not None:
                    st['conditions'] = conds
                else:
                    st.pop('conditions', None)
            else:
                if cert is not None:
                    st['certificate'] = cert
                else:
                    st.pop('certificate', None)
                if conds is not None:
                    st['conditions'] = conds
            oldc = {c.get('type'): c for c in (old.get('status') or {}).get('conditions') or []
                    if isinstance(c, dict)}
            for c in st.get('conditions') or []:
                if not isinstance(c, dict):
                    continue
                c.setdefault('status', 'True')
                if not c.get('lastUpdateTime'):
                    c['lastUpdateTime'] = now
                if not c.get('lastTransitionTime'):
                    o = oldc.get(c.get('type'))
                    c['lastTransitionTime'] = o.get('lastTransitionTime') if o and o.get('status') == c['status'] \
                        and o.get('lastTransitionTime') else now
        else:
            new['spec'] = copy.deepcopy(old.get('spec', {}))
            new['status'] = copy.deepcopy(old.get('status', {}))

    def validate(self, obj, ctx):
        errs = []
        spec = obj.get('spec') or {}
        req = spec.get('request')
        if not req:
            errs.append(fe_required('spec.request', ''))
        else:
            try:
                pem = base64.b64decode(req).decode('ascii', 'replace')
            except ValueError:
                pem = ''
            if '-----BEGIN CERTIFICATE REQUEST-----' not in pem and '-----BEGIN NEW CERTIFICATE REQUEST-----' not in pem:
                errs.append(fe_invalid('spec.request', OMIT,
                                       'PEM block type must be CERTIFICATE REQUEST'))
        sn = spec.get('signerName', '')
        if not sn:
            errs.append(fe_required('spec.signerName', ''))
        elif '/' not in sn:
            errs.append(fe_invalid('spec.signerName', sn, 'must be a fully qualified domain and path of the form '
                                                          "'example.com/signer-name'"))
        for i, u in enumerate(spec.get('usages') or []):
            if u not in KEY_USAGES:
                errs.append(fe_not_supported('spec.usages[%d]' % i, u, sorted(KEY_USAGES)))
        exp = spec.get('expirationSeconds')
        if exp is not None and exp < 600:
            errs.append(fe_invalid('spec.expirationSeconds', exp,
                                   'may not specify a duration less than 600 seconds (10 minutes)'))
        errs.extend(self._status_errors(obj))
        return errs

    def admit(self, obj, rt):
        """CertificateSubjectRestriction (on by default): no system:masters
        in a kube-apiserver-client CSR's organizations."""
        spec = obj.get('spec') or {}
        if spec.get('signerName') != 'kubernetes.io/kube-apiserver-client':
            return
        try:
            pem = base64.b64decode(spec.get('request') or '')
            p = subprocess.run(['openssl', 'req', '-noout', '-subject', '-nameopt', 'multiline,utf8'], input=pem,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        except (ValueError, OSError):
            p = None
        if p is None or p.returncode != 0:
            raise err_forbidden(rt.group, rt.resource, obj['metadata'].get('name', ''), 'failed to parse CSR')
        orgs = [ln.split('=', 1)[1].strip() for ln in p.stdout.decode(errors='replace').splitlines()
                if ln.strip().startswith('organizationName')]
        if 'system:masters' in orgs:
            raise err_forbidden(rt.group, rt.resource, obj['metadata'].get('name', ''),
                                'use of kubernetes.io/kube-apiserver-client signer with system:masters group is '
                                'not allowed')

    def _status_errors(self, obj):
        errs = []
        seen = set()
        for i, c in enumerate((obj.get('status') or {}).get('conditions') or []):
            if not isinstance(c, dict):
                continue
            t = c.get('type', '')
            p = 'status.conditions[%d]' % i
            if not t:
                errs.append(fe_required(p + '.type', ''))
            if t in seen and t in CSR_APPROVAL_TYPES:
                errs.append(FieldError('FieldValueDuplicate', p + '.type', t))
            seen.add(t)
            if c.get('status') not in ('True', 'False', 'Unknown'):
                errs.append(fe_not_supported(p + '.status', c.get('status', ''), ['False', 'True', 'Unknown']))
        if 'Approved' in seen and 'Denied' in seen:
            errs.append(fe_invalid('status.conditions', 'Denied', 'Approved and Denied conditions are mutually '
                                                                  'exclusive'))
        return errs

    def _certificate_errors(self, obj):
        cert = (obj.get('status') or {}).get('certificate')
        if not cert:
            return []
        msg = _certificate_problem(base64.b64decode(cert))
        if msg:
            return [fe_invalid('status.certificate', '<certificate data>', msg)]
        return []

    def validate_update(self, new, old, ctx, sub):
        errs = self.validate(new, ctx) + self._certificate_errors(new)
        oldc = {c.get('type') for c in (old.get('status') or {}).get('conditions') or [] if isinstance(c, dict)}
        newc = {c.get('type') for c in (new.get('status') or {}).get('conditions') or [] if isinstance(c, dict)}
        for t in ('Approved', 'Denied'):
            if t in oldc and t not in newc:
                errs.append(fe_forbidden('status.conditions', 'updates may not remove a condition of type %s' % go_quote(t)))
        if sub == 'status' and (old.get('status') or {}).get('certificate') and \
                (new.get('status') or {}).get('certificate') != old['status']['certificate']:
            errs.append(fe_forbidden('status.certificate', 'updates may not modify existing certificate content'))
        return errs


_PEM_RE = re.compile(rb'-----BEGIN ([A-Z0-9 ]+)-----\r?\n(.*?)-----END \1-----', re.S)


def _certificate_problem(data):
    """What kube-apiserver says of a status.certificate (None: fine)."""
    import subprocess
    blocks = 0
    for m in _PEM_RE.finditer(data):
        if m.group(1) != b'CERTIFICATE':
            return 'only CERTIFICATE PEM blocks are allowed, found %s' % go_quote(m.group(1).decode())
        if b':' in m.group(2).split(b'\n', 1)[0]:
            return 'no PEM block headers are permitted'
        blocks += 1
        p = subprocess.run(['openssl', 'x509', '-noout'], input=m.group(0), stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
        if p.returncode != 0:
            return 'x509: malformed certificate'
    if blocks == 0:
        return 'must contain at least one CERTIFICATE PEM block'
    return None


KEY_USAGES = {'signing', 'digital signature', 'content commitment', 'key encipherment', 'key agreement',
              'data encipherment', 'cert sign', 'crl sign', 'encipher only', 'decipher only', 'any', 'server auth',
              'client auth', 'code signing', 'email protection', 's/mime', 'ipsec end system', 'ipsec tunnel',
              'ipsec user', 'timestamping', 'ocsp signing', 'microsoft sgc', 'netscape sgc'}


# ---------------------------------------------------------------- CustomResourceDefinition

CRD_SCHEMA = root_schema({
    'spec': OBJ({'group': STR, 'names': OBJ(preserve=True), 'scope': STR,
                 'versions': ARR(OBJ(preserve=True)), 'conversion': OBJ(preserve=True),
                 'preserveUnknownFields': BOOL}),
    'status': OBJ({'conditions': CONDITIONS, 'acceptedNames': OBJ(preserve=True),
                   'storedVersions': ARR(STR)})})


class CRDStrategy(Strategy):
    kind = 'CustomResourceDefinition'
    namespaced = False
    generation = True
    status_reset = True
    field_label_style = 'meta'
    zero = {'spec': {'group': '', 'names': {'plural': '', 'kind': ''}, 'scope': '', 'versions': None},
            'status': {'acceptedNames': {'plural': '', 'kind': ''}, 'storedVersions': None}}
    bookmark_zero = {'spec': {'group': '', 'names': {'plural': '', 'kind': ''}, 'scope': '', 'versions': None},
                     'status': {'acceptedNames': {'plural': '', 'kind': ''}, 'storedVersions': None}}
    nested = {('status',): ['conditions', 'acceptedNames', 'storedVersions'],
              ('status', 'conditions', '*'): ['type', 'status', 'lastTransitionTime', 'reason', 'message']}
    schema = CRD_SCHEMA

    def defaults(self, obj, old=None):
        spec = obj.setdefault('spec', {})
        names = spec.setdefault('names', {})
        if names.get('kind'):
            names.setdefault('singular', names['kind'].lower())
            names.setdefault('listKind', names['kind'] + 'List')
        spec.setdefault('conversion', {'strategy': 'None'})
        if spec.get('preserveUnknownFields') is False:
            del spec['preserveUnknownFields']
        vers = []
        for v in spec.get('versions') or []:
            if isinstance(v, dict):
                if v.get('deprecated') is False:
                    del v['deprecated']
                cols = v.get('additionalPrinterColumns')
                if isinstance(cols, list):
                    v['additionalPrinterColumns'] = [
                        _ordered(c, ['name', 'type', 'format', 'description', 'priority', 'jsonPath'])
                        if isinstance(c, dict) else c for c in cols]
                v = _ordered(v, ['name', 'served', 'storage', 'deprecated', 'deprecationWarning', 'schema',
                                 'subresources', 'additionalPrinterColumns'])
            vers.append(v)
        if 'versions' in spec:
            spec['versions'] = vers
        spec['names'] = _ordered(names, ['plural', 'singular', 'shortNames', 'kind', 'listKind', 'categories'])
        obj['spec'] = _ordered(spec, ['group', 'names', 'scope', 'versions', 'conversion', 'preserveUnknownFields'])

    def prepare_create(self, obj, ctx):
        storage = [v.get('name') for v in obj['spec'].get('versions') or [] if isinstance(v, dict) and v.get('storage')]
        obj['status'] = {'conditions': [], 'acceptedNames': {'plural': '', 'kind': ''}, 'storedVersions': storage[:1]}
        obj['metadata']['generation'] = 1

    def output(self, obj):
        # status.conditions has no omitempty: null until the naming
        # controller writes the first conditions
        o = super().output(obj)
        st = o.get('status')
        if isinstance(st, dict) and st.get('conditions') == []:
            o['status'] = dict(st, conditions=None)
        return o

    def prepare_update(self, new, old, ctx, sub):
        if sub == 'status':
            new['spec'] = copy.deepcopy(old['spec'])
            return
        new['status'] = copy.deepcopy(old.get('status', {}))
        if new.get('spec') != old.get('spec'):
            new['metadata']['generation'] = (old['metadata'].get('generation') or 0) + 1
        st = new['status'].setdefault('storedVersions', [])
        for v in new['spec'].get('versions') or []:
            if isinstance(v, dict) and v.get('storage') and v.get('name') not in st:
                st.append(v['name'])

    def validate(self, obj, ctx):
        errs = []
        spec = obj.get('spec') or {}
        group = spec.get('group', '')
        names = spec.get('names') or {}
        plural = names.get('plural', '')
        name = obj['metadata'].get('name', '')
        if name != '%s.%s' % (plural, group):
            errs.append(fe_invalid('metadata.name', name, 'must be spec.names.plural+"."+spec.group'))
        if not group:
            errs.append(fe_required('spec.group', ''))
        elif '.' not in group:
            errs.append(fe_invalid('spec.group', group, 'should be a domain with at least one dot'))
        else:
            for m in is_dns1123_subdomain(group):
                errs.append(fe_invalid('spec.group', group, m))
        if spec.get('scope') not in ('Cluster', 'Namespaced'):
            errs.append(fe_not_supported('spec.scope', spec.get('scope', ''), ['Cluster', 'Namespaced']))
        if not plural:
            errs.append(fe_required('spec.names.plural', ''))
        else:
            for m in is_dns1123_label(plural):
                errs.append(fe_invalid('spec.names.plural', plural, m))
        if not names.get('kind'):
            errs.append(fe_required('spec.names.kind', ''))
        if not names.get('listKind'):
            errs.append(fe_required('spec.names.listKind', ''))
        vers = spec.get('versions') or []
        if not vers:
            errs.append(fe_invalid('spec.versions', vers, 'must have exactly one version marked as storage version'))
        storage = 0
        seen = set()
        for i, v in enumerate(vers):
            p = 'spec.versions[%d]' % i
            if not isinstance(v, dict):
                continue
            if v.get('storage'):
                storage += 1
            vn = v.get('name', '')
            if vn in seen:
                errs.append(FieldError('FieldValueDuplicate', p + '.name', vn))
            seen.add(vn)
            for m in is_dns1035_label(vn):
                errs.append(fe_invalid(p + '.name', vn, m))
            sch = (v.get('schema') or {}).get('openAPIV3Schema')
            if sch is None:
                errs.append(fe_required(p + '.schema.openAPIV3Schema', 'schemas are required'))
            elif not spec.get('preserveUnknownFields') and sch.get('type') != 'object':
                errs.append(fe_required(p + '.schema.openAPIV3Schema.type', 'must not be empty at the root'))
        if vers and storage != 1:
            errs.append(fe_invalid('spec.versions', vers, 'must have exactly one version marked as storage version'))
        if not any(isinstance(v, dict) and v.get('served') for v in vers) and vers:
            errs.append(fe_invalid('spec.versions', vers, 'must have at least one version marked as served'))
        return errs

    def validate_update(self, new, old, ctx, sub):
        errs = self.validate(new, ctx)
        if sub != 'status':
            if (new.get('spec') or {}).get('group') != (old.get('spec') or {}).get('group'):
                errs.append(fe_invalid('spec.group', new['spec'].get('group', ''), 'field is immutable'))
            if (new.get('spec') or {}).get('names', {}).get('plural') != (old.get('spec') or {}).get('names', {}).get('plural'):
                errs.append(fe_invalid('spec.names.plural', new['spec']['names'].get('plural', ''),
                                       'field is immutable'))
        return errs


# ---------------------------------------------------------------- the built-in table

def builtin_types():
    t = []
    core = [
        ('namespaces', 'Namespace', False, NamespaceStrategy(), ['ns'], [], ['status', 'finalize'],
         ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch']),
        ('configmaps', 'ConfigMap', True, ConfigMapStrategy(), ['cm'], [], [], None),
        ('events', 'Event', True, EventStrategy(), ['ev'], [], [], None),
        ('nodes', 'Node', False, NodeStrategy(), ['no'], [], ['status'], None),
        ('pods', 'Pod', True, PodStrategy(), ['po'], ['all'], ['status', 'log'], None),
        ('secrets', 'Secret', True, SecretStrategy(), [], [], [], None),
        ('serviceaccounts', 'ServiceAccount', True, ServiceAccountStrategy(), ['sa'], [], [], None),
        ('services', 'Service', True, ServiceStrategy(), ['svc'], ['all'], ['status'],
         ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch']),
    ]
    for res, kind, nsd, strat, short, cats, subs, verbs in core:
        strat.namespaced = nsd
        t.append(ResourceType('', 'v1', res, kind, nsd, strat, short_names=short, categories=cats,
                              subresources=subs, verbs=verbs))
    ev = EventsV1Strategy()
    t.append(ResourceType('events.k8s.io', 'v1', 'events', 'Event', True, ev, short_names=['ev'],
                          store_key='core/events'))
    ls = LeaseStrategy()
    t.append(ResourceType('coordination.k8s.io', 'v1', 'leases', 'Lease', True, ls))
    t.append(ResourceType('rbac.authorization.k8s.io', 'v1', 'clusterrolebindings', 'ClusterRoleBinding', False,
                          ClusterRoleBindingStrategy()))
    cs = CSRStrategy()
    t.append(ResourceType('certificates.k8s.io', 'v1', 'certificatesigningrequests', 'CertificateSigningRequest',
                          False, cs, short_names=['csr'], subresources=['approval', 'status']))
    crd = CRDStrategy()
    t.append(ResourceType('apiextensions.k8s.io', 'v1', 'customresourcedefinitions', 'CustomResourceDefinition',
                          False, crd, short_names=['crd', 'crds'], categories=['api-extensions'],
                          subresources=['status']))
    return t


def cr_types(crd):
    """ResourceTypes served for a CRD (one per served version)."""
    spec = crd['spec']
    names = crd.get('status', {}).get('acceptedNames') or spec['names']
    if not names.get('plural'):
        names = spec['names']
    out = []
    for v in spec.get('versions') or []:
        if not v.get('served'):
            continue
        strat = CRStrategy(crd, v)
        subs = []
        if 'status' in (v.get('subresources') or {}):
            subs.append('status')
        if 'scale' in (v.get('subresources') or {}):
            subs.append('scale')
        out.append(ResourceType(spec['group'], v['name'], names['plural'], names['kind'],
                                spec.get('scope') == 'Namespaced', strat, singular=names.get('singular', ''),
                                disco_singular=names.get('singular', ''),
                                short_names=names.get('shortNames') or [], categories=names.get('categories') or [],
                                list_kind=names.get('listKind'), store_key='%s/%s' % (spec['group'], names['plural']),
                                subresources=subs, verbs=CR_VERBS, crd=crd['metadata']['name']))
    return out
