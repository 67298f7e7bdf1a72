"""The generic registry: what k8s.io/apiserver's generic store and handlers
do for every verb, on top of kstore.Store and the per-kind strategies."""

import base64
import copy
import datetime
import json
import random

import kbuiltin
import kmanaged
import kschema
import kselect
from kcommon import (OMIT, OPTIMISTIC_LOCK_MSG, ApiError, FieldError, check_etcd_size, err_already_exists,
                     err_bad_request,
                     err_conflict, err_expired, err_forbidden, err_internal, err_invalid, err_method_not_supported,
                     err_not_found, err_timeout, fe_invalid, fe_not_supported, fe_required, fmt_time, go_quote,
                     make_details, new_uid, now_time, status_body, utcnow)

def version_priority(v):
    """kube-aware version ordering (v1 > v1beta2 > v1beta1 > v1alpha1 > foo)."""
    import re
    m = re.match(r'^v(\d+)(?:(alpha|beta)(\d+))?$', v)
    if not m:
        return (0, 0, 0, v)
    major = int(m.group(1))
    stab = {'alpha': 1, 'beta': 2, None: 3}[m.group(2)]
    minor = int(m.group(3) or 0)
    return (1, stab, major, minor)


class Registry:
    def __init__(self, store):
        self.store = store
        self.lock = store.lock
        self.types = {}                 # (group, version, resource) -> ResourceType
        self.group_order = []           # groups in discovery order
        self.crd_types = {}             # crd name -> [ResourceType]
        self.terminating_crds = set()
        for rt in kbuiltin.builtin_types():
            self.add_type(rt)
            store.register_key(rt.store_key)

    # ------------------------------------------------------------ types

    def add_type(self, rt):
        with self.lock:
            self.types[(rt.group, rt.version, rt.resource)] = rt
            if rt.group and rt.group not in self.group_order:
                self.group_order.append(rt.group)

    def set_crd_types(self, name, types):
        with self.lock:
            for rt in self.crd_types.pop(name, []):
                self.types.pop((rt.group, rt.version, rt.resource), None)
            if types:
                self.crd_types[name] = types
                for rt in types:
                    self.add_type(rt)
                    self.store.register_key(rt.store_key)
            groups = {g for (g, v, r) in self.types}
            self.group_order = [g for g in self.group_order if g in groups]

    def lookup(self, group, version, resource):
        with self.lock:
            return self.types.get((group, version, resource))

    def group_versions(self, group):
        with self.lock:
            vs = sorted({v for (g, v, r) in self.types if g == group}, key=version_priority, reverse=True)
            return vs

    def resources_of(self, group, version):
        with self.lock:
            return [rt for (g, v, r), rt in self.types.items() if g == group and v == version]

    def type_for_key(self, key):
        """The ResourceType that owns a storage key (the storage version of a
        CRD; the core group for events)."""
        with self.lock:
            cands = [rt for rt in self.types.values() if rt.store_key == key]
        for rt in cands:
            if rt.crd and rt.version == rt.strategy.storage_version:
                return rt
            if not rt.crd and rt.store_key == '%s/%s' % (rt.group or 'core', rt.resource):
                return rt
        return cands[0] if cands else None

    def type_for_kind(self, api_version, kind):
        g, _, v = api_version.rpartition('/')
        with self.lock:
            for rt in self.types.values():
                if rt.group == g and rt.version == v and rt.kind == kind:
                    return rt
            for rt in self.types.values():
                if rt.group == g and rt.kind == kind:
                    return rt
        return None

    # ------------------------------------------------------------ decoding

    def decode_body(self, rt, body, dups, raw, ctx, patch=False):
        """What the decoder and schema-coercion of kube-apiserver do with a
        request body for rt: returns the internal object."""
        st = rt.strategy
        if not isinstance(body, dict):
            raise err_bad_request('%s in version %s cannot be handled as a %s: json: cannot unmarshal %s into Go '
                                  'value of type %s' % (rt.kind, go_quote(rt.version), rt.kind,
                                                        _json_kind(body),
                                                        'map[string]interface {}' if not rt.typed else
                                                        '%s.%s' % (rt.version, rt.kind)))
        obj = copy.deepcopy(body)
        kind = obj.get('kind')
        av = obj.get('apiVersion')
        if not rt.typed:
            if not kind:
                raise err_bad_request("Object 'Kind' is missing in '%s'" % raw)
            if not av:
                raise err_bad_request("Object 'apiVersion' is missing in '%s'" % raw)
        if av and av != rt.api_version:
            g = av.rpartition('/')[0]
            if g != rt.group or not self.lookup(rt.group, av.rpartition('/')[2], rt.resource):
                raise err_bad_request('the API version in the data (%s) does not match the expected API version (%s)'
                                      % (av, rt.api_version))
        if kind and kind != rt.kind:
            raise err_bad_request('%s in version %s cannot be handled as a %s: the kind in the data (%s) does not '
                                  'match the kind of the request (%s)' % (kind, go_quote(rt.version), rt.kind, kind,
                                                                          rt.kind))
        if not isinstance(obj.get('metadata', {}), dict):
            raise err_bad_request('%s in version %s cannot be handled as a %s: json: cannot unmarshal %s into Go '
                                  'struct field %s.metadata of type v1.ObjectMeta'
                                  % (rt.kind, go_quote(rt.version), rt.kind, _json_kind(obj['metadata']), rt.kind))
        obj.setdefault('metadata', {})
        bad = kschema.check_meta_types(obj['metadata'])
        if bad:
            raise err_bad_request('%s in version %s cannot be handled as a %s: json: cannot unmarshal into Go struct '
                                  'field ObjectMeta.%s' % (rt.kind, go_quote(rt.version), rt.kind, bad[0]))
        unknown = []
        kschema.prune(obj, st.schema, '', unknown, root=True)
        problems = ['duplicate field %s' % go_quote(d) for d in dups] + \
                   ['unknown field %s' % go_quote(u) for u in unknown]
        mode = ctx.get('validation', 'Warn')
        if problems:
            if mode == 'Strict':
                raise err_bad_request('%s in version %s cannot be handled as a %s: strict decoding error: %s'
                                      % (rt.kind, go_quote(rt.version), rt.kind, ', '.join(problems)))
            if mode == 'Warn':
                ctx.setdefault('warnings', []).extend(problems)
        if rt.typed:
            _drop_nulls(obj)
            errs = [e for e in kschema.validate(_typed_part(obj), _typed_schema(st.schema), '')
                    if e.type == 'FieldValueTypeInvalid']
            if errs:
                e = errs[0]
                sub = _sub_schema(st.schema, e.field)
                gotype = (sub or {}).get('x-go') or _go_type(sub)
                raise err_bad_request('%s in version %s cannot be handled as a %s: json: cannot unmarshal %s into '
                                      'Go struct field %s.%s of type %s'
                                      % (rt.kind, go_quote(rt.version), rt.kind, _json_kind_name(e.value), rt.kind,
                                         e.field, gotype))
        meta = obj['metadata']
        for k in list(meta):
            if meta[k] in (None, '', [], {}) and k != 'creationTimestamp':
                del meta[k]
        for k in st.omitempty:
            if k in obj and obj[k] in (None, '', [], {}):
                del obj[k]
        obj = st.decode(obj, rt)
        return obj

    # ------------------------------------------------------------ helpers

    def _ns_check(self, rt, ns, name=''):
        """NamespaceLifecycle admission for creates."""
        if not rt.namespaced:
            return
        nsobj = self.store.peek('core/namespaces', '', ns)
        if nsobj is None:
            raise err_not_found('', 'namespaces', ns)
        if nsobj['metadata'].get('deletionTimestamp') or (nsobj.get('status') or {}).get('phase') == 'Terminating':
            raise err_forbidden(rt.group, rt.resource, name, 'unable to create new content in namespace %s because it '
                                'is being terminated' % ns,
                                causes=[{'reason': 'NamespaceTerminating',
                                         'message': 'namespace %s is being terminated' % ns,
                                         'field': 'metadata.namespace'}])

    def _crd_check(self, rt, verb):
        if rt.crd and rt.crd in self.terminating_crds and verb == 'create':
            raise err_method_not_supported(rt.group, rt.resource, 'create')

    def _manager(self, ctx):
        return ctx.get('manager') or 'unknown'

    def _invalid(self, rt, name, errs):
        return err_invalid(rt.group, rt.kind, name, errs)

    def _meta_errors(self, rt, obj, create):
        st = rt.strategy
        return kschema.validate_object_meta(obj['metadata'], rt.namespaced, st.name_errors, create)

    def _finish(self, rt, obj):
        """Typed objects keep their always-present fields."""
        if rt.typed and rt.strategy.zero:
            rt.strategy.fill_zero(obj)
        return obj

    def encode(self, rt, obj):
        return rt.strategy.output(rt.strategy.encode(obj, rt))

    # ------------------------------------------------------------ create

    def create(self, rt, ns, body, ctx, dups=(), raw=''):
        self._crd_check(rt, 'create')
        obj = self.decode_body(rt, body, dups, raw, ctx)
        return self._create(rt, ns, obj, ctx)

    def _create(self, rt, ns, obj, ctx, code=201):
        st = rt.strategy
        meta = obj['metadata']
        if rt.namespaced:
            if meta.get('namespace') and meta['namespace'] != ns:
                raise err_bad_request('the namespace of the provided object does not match the namespace sent on '
                                      'the request')
            meta['namespace'] = ns
        else:
            meta.pop('namespace', None)
        st.defaults(obj, None)
        self._finish(rt, obj)
        now = now_time()
        # field manager (before the strategy fills in server-side state)
        if ctx.get('apply'):
            pass
        elif 'managedFields' not in meta or not meta.get('managedFields'):
            zero = copy.deepcopy(st.zero) if rt.typed else {}
            meta['managedFields'] = kmanaged.update_managed(
                zero, obj, st.schema, self._manager(ctx), rt.api_version, None,
                'main-status' if st.status_reset else 'main', now)
            if not meta['managedFields']:
                del meta['managedFields']
        # rest.BeforeCreate
        meta.pop('deletionTimestamp', None)
        meta.pop('deletionGracePeriodSeconds', None)
        ctx['create'] = True
        st.prepare_create(obj, ctx)
        meta['uid'] = new_uid()
        meta['creationTimestamp'] = now
        meta.pop('selfLink', None)
        if meta.get('generateName') and not meta.get('name'):
            meta['name'] = meta['generateName'] + ''.join(random.choice('bcdfghjklmnpqrstvwxz2456789')
                                                          for _ in range(5))
        name = meta.get('name', '')
        errs = self._meta_errors(rt, obj, True) + st.validate(obj, ctx)
        if errs:
            raise self._invalid(rt, name, errs)
        st.admit(obj, rt)
        with self.lock:
            self._ns_check(rt, ns, name)
            if meta.get('resourceVersion'):
                raise ApiError(500, status_body(500, '', 'resourceVersion should not be set on objects to be '
                                                'created'))
            if self.store.peek(rt.store_key, ns if rt.namespaced else '', name) is not None:
                raise err_already_exists(rt.group, rt.resource, name)
            if ctx.get('dry_run'):
                return code, obj
            rt.strategy.to_storage(obj)
            self._check_size(rt, ns if rt.namespaced else '', name, obj)
            stored = self.store.commit(rt.store_key, ns if rt.namespaced else '', name, obj, 'ADDED')
        return code, stored

    # ------------------------------------------------------------ update

    def update(self, rt, ns, name, body, ctx, sub=None, dups=(), raw=''):
        obj = self.decode_body(rt, body, dups, raw, ctx)
        meta = obj['metadata']
        if meta.get('name', '') != name:
            raise err_bad_request('the name of the object (%s) does not match the name on the URL (%s)'
                                  % (meta.get('name', ''), name))
        if rt.namespaced:
            if meta.get('namespace') and meta['namespace'] != ns:
                raise err_bad_request('the namespace of the object (%s) does not match the namespace on the URL (%s)'
                                      % (meta['namespace'], ns))
            meta['namespace'] = ns
        with self.lock:
            old = self.store.get(rt.store_key, ns if rt.namespaced else '', name)
            if old is None:
                if rt.strategy.allow_create_on_update and not sub:
                    if meta.get('resourceVersion'):
                        raise err_not_found(rt.group, rt.resource, name)
                    self._crd_check(rt, 'create')
                    return self._create(rt, ns, obj, ctx)
                raise err_not_found(rt.group, rt.resource, name)
            return self._update_core(rt, ns, name, obj, old, ctx, sub)

    def _update_core(self, rt, ns, name, obj, old, ctx, sub, patched=False):
        st = rt.strategy
        meta = obj['metadata']
        ometa = old['metadata']
        nrv = meta.get('resourceVersion', '')
        if not nrv:
            if not st.allow_unconditional_update and not patched:
                raise err_invalid(rt.group, rt.resource, name,
                                  [fe_invalid('metadata.resourceVersion', 0, 'must be specified for an update')])
            meta['resourceVersion'] = ometa['resourceVersion']
        elif nrv != ometa['resourceVersion']:
            raise err_conflict(rt.group, rt.resource, name, OPTIMISTIC_LOCK_MSG)
        if rt.namespaced:
            meta['namespace'] = ns
        st.defaults(obj, old)
        self._finish(rt, obj)
        now = now_time()
        # field manager
        base = old
        if 'managedFields' in meta and meta['managedFields'] != ometa.get('managedFields'):
            base = copy.deepcopy(old)
            if meta['managedFields']:
                base['metadata']['managedFields'] = meta['managedFields']
            else:
                base['metadata'].pop('managedFields', None)
        if ctx.get('scale'):
            pass  # the scale subresource set meta['managedFields'] itself
        elif not ctx.get('apply'):
            mode = 'status' if sub in ('status', 'approval') else ('main-status' if st.status_reset else 'main')
            mf = kmanaged.update_managed(base, obj, st.schema, self._manager(ctx), rt.api_version,
                                         sub if sub in ('status', 'approval', 'finalize') else None, mode, now)
            if mf:
                meta['managedFields'] = mf
            else:
                meta.pop('managedFields', None)
        # rest.BeforeUpdate
        if 'generation' in ometa:
            meta['generation'] = ometa['generation']
        else:
            meta.pop('generation', None)
        st.prepare_update(obj, old, ctx, sub)
        meta = obj['metadata']
        if not meta.get('uid'):
            meta['uid'] = ometa.get('uid')
        meta['creationTimestamp'] = ometa.get('creationTimestamp')
        errs = []
        if ometa.get('deletionTimestamp'):
            meta['deletionTimestamp'] = ometa['deletionTimestamp']
            if 'deletionGracePeriodSeconds' in ometa:
                meta['deletionGracePeriodSeconds'] = ometa['deletionGracePeriodSeconds']
        else:
            if meta.get('deletionTimestamp'):
                errs.append(fe_invalid('metadata.deletionTimestamp', meta['deletionTimestamp'], 'field is immutable'))
            meta.pop('deletionTimestamp', None)
            meta.pop('deletionGracePeriodSeconds', None)
        errs += kschema.validate_object_meta_update(meta, ometa)
        errs += self._meta_errors(rt, obj, False)
        ctx['create'] = False
        errs += st.validate_update(obj, old, ctx, sub)
        if errs:
            raise self._invalid(rt, name, errs)
        meta['resourceVersion'] = ometa['resourceVersion']
        key_ns = ns if rt.namespaced else ''
        if _same(obj, old):
            return 200, old
        if ctx.get('dry_run'):
            return 200, obj
        if st.should_delete(obj):
            self.store.commit(rt.store_key, key_ns, name, None, 'DELETED')
            return 200, obj
        st.to_storage(obj)
        self._check_size(rt, key_ns, name, obj)
        stored = self.store.commit(rt.store_key, key_ns, name, obj, 'MODIFIED')
        return 200, stored

    def _check_size(self, rt, ns, name, obj):
        """etcd's limits on what one write stores (kcommon.check_etcd_size).
        The key is the apiserver's: /registry/RESOURCE/... for the built-in
        kinds, /registry/GROUP/RESOURCE/... for custom resources and CRDs."""
        prefix = rt.store_key if rt.crd or rt.group == 'apiextensions.k8s.io' else rt.resource
        key = '/registry/%s/%s%s' % (prefix, ns + '/' if ns else '', name)
        check_etcd_size(key, len(json.dumps(obj, separators=(',', ':'), ensure_ascii=False).encode()))

    # ------------------------------------------------------------ patch

    def patch(self, rt, ns, name, ptype, pbody, ctx, sub=None, raw=''):
        import kpatch
        if ptype == 'application/strategic-merge-patch+json' and not rt.typed:
            raise _unsupported_patch(rt)
        if ptype == 'application/apply-patch+yaml':
            return self.apply(rt, ns, name, pbody, ctx, sub, raw)
        with self.lock:
            old = self.store.get(rt.store_key, ns if rt.namespaced else '', name)
            if old is None:
                raise err_not_found(rt.group, rt.resource, name)
            cur = rt.strategy.encode(old, rt)
            try:
                if ptype == 'application/merge-patch+json':
                    if not isinstance(pbody, dict):
                        raise err_bad_request('json: cannot unmarshal %s into Go value of type map[string]interface {}'
                                              % _json_kind(pbody))
                    res = kpatch.merge_patch(cur, pbody)
                elif ptype == 'application/json-patch+json':
                    res = kpatch.json_patch(cur, pbody)
                elif ptype == 'application/strategic-merge-patch+json':
                    if not rt.typed:
                        raise _unsupported_patch(rt)
                    if not isinstance(pbody, dict):
                        raise err_bad_request('json: cannot unmarshal %s into Go value of type map[string]interface {}'
                                              % _json_kind(pbody))
                    res = kpatch.strategic_merge_patch(cur, pbody)
                else:
                    raise _unsupported_patch(rt)
            except kpatch.PatchDecodeError as e:
                raise err_bad_request(str(e))
            except kpatch.PatchError:
                raise ApiError(422, status_body(422, 'Invalid', 'the server rejected our request due to an error in '
                                                'our request', {}))
            if not isinstance(res, dict):
                raise err_bad_request('the patched object is not a JSON object')
            res.setdefault('metadata', {})
            if res['metadata'].get('name', '') != name:
                raise err_bad_request('the name of the object (%s) does not match the name on the URL (%s)'
                                      % (res['metadata'].get('name', ''), name))
            if 'kind' not in res:
                res['kind'] = rt.kind
            if 'apiVersion' not in res:
                res['apiVersion'] = rt.api_version
            obj = self.decode_body(rt, res, [], '', ctx, patch=True)
            return self._update_core(rt, ns, name, obj, old, ctx, sub, patched=True)

    # ------------------------------------------------------------ scale

    def scale(self, rt, ns, name, ctx, verb, body=None, ptype=None):
        """The scale subresource of a custom resource, as
        apiextensions-apiserver serves it: an autoscaling/v1 Scale whose
        spec.replicas is the object's specReplicasPath (a 500 when the object
        lacks it, as observed on kube-apiserver 1.26), status.replicas its
        statusReplicasPath (0 when absent) and status.selector its
        labelSelectorPath. PUT and PATCH change only the replicas, through an
        update of the object (generation + 1), conditional on the Scale's
        resourceVersion when it has one; afterwards no managedFields entry
        owns the replicas (the scale handler's, observed on 1.26)."""
        import kpatch
        spec_path, status_path, selector_path = rt.strategy.scale
        with self.lock:
            old = self.store.get(rt.store_key, ns if rt.namespaced else '', name)
            if old is None:
                raise err_not_found(rt.group, rt.resource, name)
            cur = scale_of(old, spec_path, status_path, selector_path)
            if verb == 'get':
                return 200, cur
            try:
                if ptype is None:
                    new = body
                elif ptype == 'application/json-patch+json':
                    # a replace of /spec/replicas works on a Scale whose replicas are 0 (omitted in the
                    # answer): observed on 1.26
                    new = kpatch.json_patch(dict(cur, spec=dict(cur['spec'], replicas=cur['spec'].get('replicas', 0))),
                                            body)
                else:
                    if not isinstance(body, dict):
                        raise err_bad_request('json: cannot unmarshal %s into Go value of type map[string]interface {}'
                                              % _json_kind(body))
                    new = kpatch.merge_patch(cur, body)
            except kpatch.PatchDecodeError as e:
                raise err_bad_request(str(e))
            except kpatch.PatchError:
                raise ApiError(422, status_body(422, 'Invalid', 'the server rejected our request due to an error in '
                                                'our request', {}))
            if not isinstance(new, dict) or not isinstance(new.get('spec') or {}, dict):
                raise err_bad_request('the Scale is not a JSON object')
            replicas = (new.get('spec') or {}).get('replicas', 0)
            if not isinstance(replicas, int) or isinstance(replicas, bool):
                raise err_bad_request('json: cannot unmarshal %s into Go struct field ScaleSpec.spec.replicas of '
                                      'type int32' % _json_kind(replicas))
            obj = copy.deepcopy(old)
            _set_path(obj, spec_path, replicas)
            meta = obj['metadata']
            rv = (new.get('metadata') or {}).get('resourceVersion') or ''
            meta['resourceVersion'] = rv
            mf = _disown(meta.get('managedFields') or [], spec_path)
            if mf:
                meta['managedFields'] = mf
            else:
                meta.pop('managedFields', None)
            code, out = self._update_core(rt, ns, name, obj, old, dict(ctx, scale=True), None, patched=True)
            return code, scale_of(out, spec_path, status_path, selector_path)

    def apply(self, rt, ns, name, pbody, ctx, sub=None, raw=''):
        if not ctx.get('manager'):
            raise err_invalid('meta.k8s.io', 'PatchOptions', '',
                              [fe_required('fieldManager', 'is required for apply patch')])
        if not isinstance(pbody, dict):
            raise err_bad_request('error decoding YAML: json: cannot unmarshal %s into Go value of type '
                                  'map[string]interface {}' % _json_kind(pbody))
        applied = self.decode_body(rt, pbody, [], raw, ctx)
        am = applied['metadata']
        if am.get('name') and am['name'] != name:
            raise err_bad_request('the name of the object (%s) does not match the name on the URL (%s)'
                                  % (am['name'], name))
        am['name'] = name
        if rt.namespaced:
            if am.get('namespace') and am['namespace'] != ns:
                raise err_bad_request('the namespace of the provided object does not match the namespace sent on '
                                      'the request')
            am['namespace'] = ns
        ctx['apply'] = True
        st = rt.strategy
        with self.lock:
            old = self.store.get(rt.store_key, ns if rt.namespaced else '', name)
            now = now_time()
            try:
                merged = kmanaged.apply(old, applied, st.schema, ctx['manager'], rt.api_version, sub,
                                        ctx.get('force'), now)
            except kmanaged.ApplyConflict as e:
                msg, causes = kmanaged.conflict_message(e.conflicts)
                raise ApiError(409, status_body(409, 'Conflict', msg, make_details(causes=causes)))
            merged['apiVersion'] = applied['apiVersion']
            merged['kind'] = applied['kind']
            if old is None:
                if sub:
                    raise err_not_found(rt.group, rt.resource, name)
                self._crd_check(rt, 'create')
                merged['metadata'].pop('resourceVersion', None)
                return self._create(rt, ns, merged, ctx)
            rv = am.get('resourceVersion')
            merged['metadata']['resourceVersion'] = rv or old['metadata']['resourceVersion']
            for k in ('uid', 'creationTimestamp', 'generation'):
                if k in old['metadata']:
                    merged['metadata'][k] = old['metadata'][k]
            return self._update_core(rt, ns, name, merged, old, ctx, sub, patched=True)

    # ------------------------------------------------------------ get / list

    def get(self, rt, ns, name, rv=None):
        self._wait_rv(rv)
        obj = self.store.get(rt.store_key, ns if rt.namespaced else '', name)
        if obj is None:
            raise err_not_found(rt.group, rt.resource, name)
        return obj

    def _wait_rv(self, rv):
        if rv in (None, '', '0'):
            return
        try:
            n = int(rv)
        except ValueError:
            raise err_bad_request('invalid resource version: %s' % rv)
        if not self.store.wait_for_rv(n, 3.0):
            raise err_timeout('Too large resource version: %d, current: %d' % (n, self.store.current()), 1)

    def parse_selectors(self, rt, q):
        try:
            lreqs = kselect.parse_label_selector(q.get('labelSelector'))
        except kselect.SelectorError as e:
            raise err_bad_request(str(e))
        try:
            fterms = kselect.parse_field_selector(q.get('fieldSelector'))
        except kselect.SelectorError as e:
            raise err_bad_request(str(e))
        sup = rt.strategy.supported_field_labels()
        for f, _, _ in fterms:
            if f not in sup:
                raise err_bad_request(rt.strategy.field_label_error(f))
        return lreqs, fterms

    def matches(self, rt, obj, lreqs, fterms):
        if lreqs and not kselect.labels_match(lreqs, obj['metadata'].get('labels')):
            return False
        if fterms and not kselect.fields_match(fterms, rt.strategy.field_values(obj)):
            return False
        return True

    def list(self, rt, ns, q):
        lreqs, fterms = self.parse_selectors(rt, q)
        limit = q.get('limit')
        try:
            limit = int(limit) if limit not in (None, '') else 0
        except ValueError:
            raise err_bad_request('invalid limit %s' % limit)
        cont = q.get('continue') or ''
        rv = q.get('resourceVersion') or ''
        match = q.get('resourceVersionMatch') or ''
        key_ns = ns if rt.namespaced and ns else None
        start = ''
        if match and match not in ('Exact', 'NotOlderThan'):
            raise err_invalid('meta.k8s.io', 'ListOptions', '', [fe_not_supported('resourceVersionMatch', match,
                                                                                   ['Exact', 'NotOlderThan'])])
        if match and not rv:
            raise err_invalid('meta.k8s.io', 'ListOptions', '',
                              [FieldError('FieldValueForbidden', 'resourceVersionMatch', OMIT,
                                          'resourceVersionMatch is forbidden unless resourceVersion is provided')])
        if cont:
            if rv or match:
                raise err_invalid('meta.k8s.io', 'ListOptions', '',
                                  [FieldError('FieldValueForbidden', 'resourceVersionMatch' if match else
                                              'resourceVersion', OMIT,
                                              'resourceVersion%s is forbidden when continue is provided'
                                              % ('Match' if match else ''))])
            try:
                tok = json.loads(base64.b64decode(cont + '=' * (-len(cont) % 4)))
                list_rv = int(tok['rv'])
                start = tok['start']
                if tok.get('v') != 'meta.k8s.io/v1':
                    raise ValueError('version')
            except (ValueError, KeyError, TypeError):
                raise err_bad_request('continue key is not valid: incorrect encoded start resourceVersion '
                                      '(version meta.k8s.io/v1)')
            with self.lock:
                floor = self.store.floor
                if list_rv == -1:
                    list_rv = self.store.rv
                    items = self.store.items(rt.store_key, key_ns)
                elif list_rv < floor:
                    newtok = _continue_token(-1, start)
                    raise err_expired(
                        'The provided continue parameter is too old to display a consistent list result. You can '
                        'start a new list without the continue parameter, or use the continue token in this response '
                        'to retrieve the remainder of the results. Continuing with the provided token results in an '
                        'inconsistent list - objects that were created, modified, or deleted between the time the '
                        'first chunk was returned and now may show up in the list.', {'continue': newtok})
                else:
                    items = self.store.state_at(rt.store_key, list_rv, key_ns)
        else:
            if rv not in ('', '0'):
                try:
                    n = int(rv)
                except ValueError:
                    raise err_bad_request('invalid resource version: %s' % rv)
            if rv not in ('', '0') and (match == 'Exact' or (not match and limit)):
                # an exact list; also what a limit with a resourceVersion means without a match (etcd)
                self._wait_rv(rv)
                with self.lock:
                    if n < self.store.floor:
                        raise err_expired('The resourceVersion for the provided list is too old.')
                    items = self.store.state_at(rt.store_key, n, key_ns)
                    list_rv = n
            else:
                self._wait_rv(rv)
                with self.lock:
                    list_rv = self.store.rv
                    items = self.store.items(rt.store_key, key_ns)
            if rv == '0':
                limit = 0        # served from the watch cache: no paging
        out = []
        more = False
        last = None
        remaining = 0
        for o in items:
            k = _item_key(o, key_ns is not None or not rt.namespaced)
            if start and k < start:
                continue
            if not self.matches(rt, o, lreqs, fterms):
                continue
            if limit and len(out) >= limit:
                more = True
                remaining += 1
                continue
            out.append(o)
            last = k
        lm = {'resourceVersion': str(list_rv)}
        if more:
            lm['continue'] = _continue_token(list_rv, last + '\x00')
            if not lreqs and not fterms:
                lm['remainingItemCount'] = remaining
        elif not rt.typed:
            lm['continue'] = ''
        return lm, out

    def list_body(self, rt, lm, items):
        enc = [self.encode(rt, o) for o in items]
        if rt.typed:
            for o in enc:
                o.pop('kind', None)
                o.pop('apiVersion', None)
            return {'kind': rt.list_kind, 'apiVersion': rt.api_version, 'metadata': lm, 'items': enc}
        from kcommon import sort_keys_deep
        return sort_keys_deep({'apiVersion': rt.api_version, 'items': enc, 'kind': rt.list_kind, 'metadata': lm})

    # ------------------------------------------------------------ watch

    def watch_start(self, rt, ns, q, watcher):
        """Registers watcher; returns (initial events, error Status or None)."""
        rv = q.get('resourceVersion') or ''
        key_ns = ns if rt.namespaced and ns else None
        with self.lock:
            if rv in ('', '0'):
                init = [_Synthetic('ADDED', o) for o in self.store.items(rt.store_key, key_ns)]
            else:
                try:
                    n = int(rv)
                except ValueError:
                    raise err_bad_request('invalid resource version: %s' % rv)
                floor = self.store.key_window_floor(rt.store_key)
                if n < floor:
                    return [], status_body(410, 'Expired', 'too old resource version: %d (%d)' % (n, floor))
                init = self.store.events_since(rt.store_key, n, key_ns)
            self.store.add_watcher(watcher)
        return init, None

    # ------------------------------------------------------------ delete

    def delete(self, rt, ns, name, opts, ctx):
        st = rt.strategy
        key_ns = ns if rt.namespaced else ''
        policy = _policy(opts)
        with self.lock:
            old = self.store.get(rt.store_key, key_ns, name)
            if old is None:
                raise err_not_found(rt.group, rt.resource, name)
            om = old['metadata']
            pre = opts.get('preconditions') or {}
            if pre.get('uid') is not None and pre['uid'] != om.get('uid'):
                raise err_conflict(rt.group, rt.kind, name,
                                   'the UID in the precondition (%s) does not match the UID in record (%s). The object '
                                   'might have been deleted and then recreated' % (pre['uid'], om.get('uid')))
            if pre.get('resourceVersion') is not None and pre['resourceVersion'] != om.get('resourceVersion'):
                raise err_conflict(rt.group, rt.kind, name,
                                   'the ResourceVersion in the precondition (%s) does not match the ResourceVersion in '
                                   'record (%s). The object might have been modified'
                                   % (pre['resourceVersion'], om.get('resourceVersion')))
            if rt.store_key == 'core/namespaces':
                return self._delete_namespace(rt, name, old, opts, ctx)
            if rt.store_key == 'apiextensions.k8s.io/customresourcedefinitions':
                return self._delete_crd(rt, name, old, ctx)
            graceful, grace = st.grace(old, opts.get('gracePeriodSeconds'))
            new = copy.deepcopy(old)
            nm = new['metadata']
            fins = list(nm.get('finalizers') or [])
            if policy == 'Orphan':
                fins = [f for f in fins if f != 'foregroundDeletion']
                if 'orphan' not in fins:
                    fins.append('orphan')
            elif policy == 'Foreground':
                fins = [f for f in fins if f != 'orphan']
                if 'foregroundDeletion' not in fins:
                    fins.append('foregroundDeletion')
            elif policy == 'Background':
                fins = [f for f in fins if f not in ('orphan', 'foregroundDeletion')]
            pending_grace = graceful and grace > 0
            if not fins and not pending_grace:
                return self._delete_now(rt, key_ns, name, old, ctx)
            # graceful deletion / waiting for finalizers
            now = utcnow()
            if not om.get('deletionTimestamp'):
                nm['deletionTimestamp'] = fmt_time(now + datetime.timedelta(seconds=grace if graceful else 0))
                nm['deletionGracePeriodSeconds'] = grace if graceful else 0
                if (nm.get('generation') or 0) > 0:
                    nm['generation'] = nm['generation'] + 1
            elif graceful and grace < (om.get('deletionGracePeriodSeconds') or 0):
                nm['deletionTimestamp'] = fmt_time(now + datetime.timedelta(seconds=grace))
                nm['deletionGracePeriodSeconds'] = grace
            if fins:
                nm['finalizers'] = fins
            else:
                nm.pop('finalizers', None)
            if graceful and (nm.get('deletionGracePeriodSeconds') or 0) == 0 and not fins:
                return self._delete_now(rt, key_ns, name, old, ctx)
            code = 202 if opts.get('orphanDependents') is False else 200
            if _same(new, old):
                return code, old, False
            if ctx.get('dry_run'):
                return code, new, False
            stored = self.store.commit(rt.store_key, key_ns, name, new, 'MODIFIED')
            return code, stored, False

    def _delete_now(self, rt, key_ns, name, old, ctx):
        if not ctx.get('dry_run'):
            self.store.commit(rt.store_key, key_ns, name, None, 'DELETED')
        return 200, old, True

    def _delete_namespace(self, rt, name, old, opts, ctx):
        if name in ('default', 'kube-system', 'kube-public'):
            raise err_forbidden('', 'namespaces', name, 'this namespace may not be deleted')
        new = copy.deepcopy(old)
        nm = new['metadata']
        if not nm.get('deletionTimestamp'):
            nm['deletionTimestamp'] = now_time()
            nm['deletionGracePeriodSeconds'] = 0
        new.setdefault('status', {})['phase'] = 'Terminating'
        policy = _policy(opts)
        fins = list(nm.get('finalizers') or [])
        if policy == 'Orphan' and 'orphan' not in fins:
            fins.append('orphan')
        elif policy == 'Foreground' and 'foregroundDeletion' not in fins:
            fins.append('foregroundDeletion')
        if fins:
            nm['finalizers'] = fins
        if not (new.get('spec') or {}).get('finalizers') and not fins:
            return self._delete_now(rt, '', name, old, ctx)
        if _same(new, old):
            return 200, old, False
        if ctx.get('dry_run'):
            return 200, new, False
        return 200, self.store.commit(rt.store_key, '', name, new, 'MODIFIED'), False

    def _delete_crd(self, rt, name, old, ctx):
        new = copy.deepcopy(old)
        nm = new['metadata']
        if not nm.get('deletionTimestamp'):
            nm['deletionTimestamp'] = now_time()
            nm['deletionGracePeriodSeconds'] = 0
            nm['generation'] = (nm.get('generation') or 0) + 1
        fins = list(nm.get('finalizers') or [])
        if 'customresourcecleanup.apiextensions.k8s.io' not in fins:
            fins.append('customresourcecleanup.apiextensions.k8s.io')
        nm['finalizers'] = fins
        conds = [c for c in new.setdefault('status', {}).get('conditions') or [] if c.get('type') != 'Terminating']
        conds.append({'type': 'Terminating', 'status': 'True', 'lastTransitionTime': now_time(),
                      'reason': 'InstanceDeletionPending',
                      'message': 'CustomResourceDefinition marked for deletion; CustomResource deletion will begin '
                                 'soon'})
        new['status']['conditions'] = conds
        if _same(new, old):
            return 200, old, False
        if ctx.get('dry_run'):
            return 200, new, False
        return 200, self.store.commit(rt.store_key, '', name, new, 'MODIFIED'), False

    def delete_collection(self, rt, ns, opts, q, ctx):
        lm, items = self.list(rt, ns, {k: v for k, v in q.items() if k in ('labelSelector', 'fieldSelector')})
        out = []
        for o in items:
            m = o['metadata']
            try:
                code, obj, _ = self.delete(rt, m.get('namespace', ''), m['name'], opts, ctx)
                out.append(obj)
            except ApiError as e:
                if e.code != 404:
                    raise
        return lm, out

    # ------------------------------------------------------------ internal use (controllers)

    def internal_update(self, key, ns, name, fn, manager, sub=None):
        """Applies fn(obj) to the stored object, as an Update by `manager`.
        Returns the new object, or None when it is gone."""
        rt = self.type_for_key(key)
        with self.lock:
            old = self.store.get(key, ns, name)
            if old is None:
                return None
            new = copy.deepcopy(old)
            if fn(new) is False:
                return old
            ctx = {'manager': manager, 'validation': 'Ignore', 'user': {'name': 'system:' + manager}}
            try:
                code, obj = self._update_core(rt, ns, name, new, old, ctx, sub, patched=True)
            except ApiError as e:
                if e.code != 500:
                    raise
                return old      # refused for its size, as etcd refuses a controller's write too
            return obj

    def internal_delete(self, key, ns, name, policy=None, uid=None):
        rt = self.type_for_key(key)
        opts = {}
        if policy:
            opts['propagationPolicy'] = policy
        if uid:
            opts['preconditions'] = {'uid': uid}
        try:
            return self.delete(rt, ns, name, opts, {'manager': 'kube-controller-manager'})
        except ApiError:
            return None

    def internal_create(self, rt, ns, obj, manager):
        ctx = {'manager': manager, 'validation': 'Ignore', 'user': {'name': 'system:' + manager}}
        obj = copy.deepcopy(obj)
        obj.setdefault('metadata', {})
        obj = rt.strategy.decode(obj, rt)
        try:
            return self._create(rt, ns, obj, ctx)[1]
        except ApiError as e:
            if e.code == 409:
                return None
            raise


class _Synthetic:
    """A synthetic ADDED event of a watch that starts from the current state."""

    def __init__(self, type_, obj):
        self.type = type_
        self.obj = obj
        self.prev = None
        self.rv = int(obj['metadata']['resourceVersion'])


def _policy(opts):
    p = opts.get('propagationPolicy')
    if p:
        return p
    if opts.get('orphanDependents') is True:
        return 'Orphan'
    if opts.get('orphanDependents') is False:
        return 'Background'
    return None


def validate_delete_options(opts):
    errs = []
    p = opts.get('propagationPolicy')
    if p is not None and p not in ('Foreground', 'Background', 'Orphan'):
        errs.append(fe_not_supported('propagationPolicy', p, ['Foreground', 'Background', 'Orphan', 'nil']))
    if p is not None and opts.get('orphanDependents') is not None:
        errs.append(fe_invalid('propagationPolicy', p, 'orphanDependents and deletionPropagation cannot be both set'))
    g = opts.get('gracePeriodSeconds')
    if g is not None and not isinstance(g, int):
        errs.append(fe_invalid('gracePeriodSeconds', g, 'must be an integer'))
    dr = opts.get('dryRun') or []
    for d in dr:
        if d != 'All':
            errs.append(fe_not_supported('dryRun', dr, ['All']))
    if errs:
        raise err_invalid('meta.k8s.io', 'DeleteOptions', '', errs)


def _drop_nulls(o):
    """A null in a typed object decodes to the zero value (encoding/json
    leaves the field alone; metav1.Time and MicroTime take null as zero)."""
    if isinstance(o, dict):
        for k in list(o):
            if o[k] is None:
                del o[k]
            else:
                _drop_nulls(o[k])
    elif isinstance(o, list):
        for x in o:
            _drop_nulls(x)


def _same(a, b):
    return a == b


def _item_key(o, relative):
    m = o['metadata']
    if relative or not m.get('namespace'):
        return m['name']
    return m['namespace'] + '/' + m['name']


def _continue_token(rv, start):
    tok = json.dumps({'v': 'meta.k8s.io/v1', 'rv': rv, 'start': start}, separators=(',', ':'))
    return base64.b64encode(tok.encode()).decode()


def _json_kind(v):
    if isinstance(v, list):
        return 'array'
    if isinstance(v, dict):
        return 'object'
    if isinstance(v, str):
        return 'string'
    if isinstance(v, bool):
        return 'bool'
    if v is None:
        return 'null'
    return 'number'


def _json_kind_name(t):
    return {'integer': 'number', 'number': 'number', 'boolean': 'bool', 'string': 'string', 'array': 'array',
            'object': 'object', 'null': 'null'}.get(t, t)


def _go_type(s):
    if not s:
        return 'interface {}'
    t = s.get('type')
    if t == 'string':
        return 'string'
    if t == 'integer':
        return 'int64'
    if t == 'boolean':
        return 'bool'
    if t == 'number':
        return 'float64'
    if t == 'array':
        return '[]' + _go_type(s.get('items'))
    if t == 'object':
        if isinstance(s.get('additionalProperties'), dict):
            return 'map[string]' + _go_type(s['additionalProperties'])
        return 'struct'
    return 'interface {}'


def _typed_part(obj):
    return {k: v for k, v in obj.items() if k not in ('apiVersion', 'kind', 'metadata')}


def _typed_schema(s):
    s = dict(s)
    s.pop('_root', None)
    p = dict(s.get('properties') or {})
    for k in ('apiVersion', 'kind', 'metadata'):
        p.pop(k, None)
    s['properties'] = p
    return s


def _sub_schema(s, path):
    import re
    cur = s
    for part in re.findall(r'[^.\[\]]+|\[\d+\]', path):
        if cur is None:
            return None
        if part.startswith('['):
            cur = cur.get('items') if isinstance(cur.get('items'), dict) else None
        else:
            cur = kschema.child_schema(cur, part)
    return cur


def _unsupported_patch(rt):
    from kcommon import err_unsupported_media
    types = 'application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml'
    if rt.typed:
        types = 'application/json-patch+json, application/merge-patch+json, ' \
                'application/strategic-merge-patch+json, application/apply-patch+yaml'
    return err_unsupported_media('the body of the request was in an unknown format - accepted media types include: '
                                 + types)


def _path_get(obj, path):
    cur = obj
    for k in path.strip('.').split('.'):
        if not isinstance(cur, dict) or k not in cur:
            return None, False
        cur = cur[k]
    return cur, True


def _set_path(obj, path, value):
    keys = path.strip('.').split('.')
    cur = obj
    for k in keys[:-1]:
        cur = cur.setdefault(k, {})
    cur[keys[-1]] = value


def scale_of(obj, spec_path, status_path, selector_path):
    """autoscaling/v1 Scale of a custom resource (scaleFromCustomResource)."""
    spec, found = _path_get(obj, spec_path)
    if not found:
        raise err_internal('the spec replicas field "%s" does not exist' % spec_path)
    status, _ = _path_get(obj, status_path)
    m = obj['metadata']
    meta = {'name': m['name']}
    if m.get('namespace'):
        meta['namespace'] = m['namespace']
    meta.update(uid=m.get('uid'), resourceVersion=m.get('resourceVersion'), creationTimestamp=m.get('creationTimestamp'))
    sc = {'kind': 'Scale', 'apiVersion': 'autoscaling/v1', 'metadata': meta,
          'spec': {'replicas': spec} if spec else {}, 'status': {'replicas': status or 0}}
    if selector_path:
        sel, _ = _path_get(obj, selector_path)
        if sel:
            sc['status']['selector'] = sel
    return sc


def _disown(managed, path):
    """managedFields without any entry's ownership of path; entries left
    owning nothing are dropped."""
    keys = ['f:' + k for k in path.strip('.').split('.')]
    out = []
    for e in copy.deepcopy(managed):
        fields = e.get('fieldsV1') or {}
        _prune(fields, keys)
        if fields:
            out.append(e)
    return out


def _prune(fields, keys):
    if not isinstance(fields, dict) or keys[0] not in fields:
        return
    if len(keys) == 1:
        del fields[keys[0]]
    else:
        _prune(fields[keys[0]], keys[1:])
        if not fields[keys[0]]:
            del fields[keys[0]]
