"""metadata.managedFields, kept the way kube-apiserver's field manager keeps
them (FieldsV1 sets per manager/operation/subresource), plus the merge and
conflict rules of server-side apply.

Paths are tuples of FieldsV1 keys: 'f:name', 'k:{"type":"Ready"}', 'v:"x"'.
A map node that became present is itself in the set ('.' in FieldsV1)."""

import copy
import json

from kschema import OBJECT_META_SCHEMA, child_schema, item_schema

ABSENT = object()
META_VISIBLE = ('generateName', 'labels', 'annotations', 'ownerReferences', 'finalizers')


def _gokey(v):
    return json.dumps(v, separators=(',', ':'), sort_keys=True)


def _list_type(s):
    return (s or {}).get('x-kubernetes-list-type') or 'atomic'


def _is_atomic_map(s):
    return (s or {}).get('x-kubernetes-map-type') == 'atomic'


def _item_key(item, keys):
    if not isinstance(item, dict):
        return None
    return 'k:' + _gokey({k: item[k] for k in keys if k in item})


def _schema_for(schema, key):
    if key == 'metadata' and schema is not None and schema.get('_root'):
        return OBJECT_META_SCHEMA
    return child_schema(schema, key)


def visible(obj, mode):
    """The part of an object the field manager tracks. mode: 'main',
    'main-status' (status is reset on the main endpoint), 'status'."""
    o = {k: v for k, v in obj.items() if k not in ('apiVersion', 'kind', 'metadata')}
    meta = obj.get('metadata') or {}
    m = {k: meta[k] for k in META_VISIBLE if k in meta}
    if m:
        o['metadata'] = m
    if mode == 'status':
        return {'status': o['status']} if 'status' in o else {}
    if mode == 'main-status':
        o.pop('status', None)
    return o


def diff_paths(old, new, schema, path=(), out=None):
    """Paths added or changed from old to new (new present)."""
    if out is None:
        out = set()
    if isinstance(new, dict) and not _is_atomic_map(schema):
        if not isinstance(old, dict):
            if path and not (len(path) == 1 and path[0] == 'f:metadata'):
                out.add(path)
            old = {}
        for k, v in new.items():
            diff_paths(old.get(k, ABSENT), v, _schema_for(schema, k), path + ('f:' + k,), out)
        return out
    lt = _list_type(schema)
    if isinstance(new, list) and lt in ('map', 'set'):
        if not isinstance(old, list) and path:
            out.add(path)
        olds = old if isinstance(old, list) else []
        its = item_schema(schema)
        if lt == 'set':
            for x in new:
                if x not in olds:
                    out.add(path + ('v:' + _gokey(x),))
            return out
        keys = schema.get('x-kubernetes-list-map-keys') or []
        oldmap = {}
        for x in olds:
            ik = _item_key(x, keys)
            if ik:
                oldmap[ik] = x
        for x in new:
            ik = _item_key(x, keys)
            if ik is None:
                continue
            diff_paths(oldmap.get(ik, ABSENT), x, its, path + (ik,), out)
        return out
    if old is ABSENT or old != new:
        out.add(path)
    return out


def _all_root(obj, schema, out):
    for k, v in obj.items():
        diff_paths(ABSENT, v, _schema_for(schema, k), ('f:' + k,), out)
    return out


def present_paths(obj, schema):
    """Every path that exists in obj (for dropping ownership of removed
    fields): map nodes and leaves."""
    return _all_root(obj, schema, set())


def to_fields_v1(paths):
    root = {}
    for p in sorted(paths):
        node = root
        for el in p:
            node = node.setdefault(el, {})
    # a node that is itself in the set and has children gets '.'
    for p in paths:
        node = root
        for el in p:
            node = node[el]
        if node and '.' not in node:
            node['.'] = {}
    return _sorted(root)


def _sorted(d):
    return {k: _sorted(d[k]) for k in sorted(d)}


def from_fields_v1(d, path=(), out=None):
    if out is None:
        out = set()
    if not isinstance(d, dict):
        return out
    for k, v in d.items():
        if k == '.':
            out.add(path)
            continue
        p = path + (k,)
        if not v:
            out.add(p)
        else:
            from_fields_v1(v, p, out)
    return out


def _entry(manager, operation, api_version, time, paths, subresource):
    e = {'manager': manager, 'operation': operation, 'apiVersion': api_version, 'time': time,
         'fieldsType': 'FieldsV1', 'fieldsV1': to_fields_v1(paths)}
    if subresource:
        e['subresource'] = subresource
    return e


def sort_entries(entries):
    def k(e):
        return (e.get('operation', ''), e.get('time') or '', e.get('manager', ''), e.get('apiVersion', ''),
                e.get('subresource', ''))
    return sorted(entries, key=k)


def _prefix_closed(paths, present):
    return {p for p in paths if p in present}


def update_managed(old_obj, new_obj, schema, manager, api_version, subresource, mode, now):
    """Field manager for an Update operation. Returns the new managedFields
    list (old_obj is None on create: the typed zero object is passed in as
    old_obj by the caller when there is one)."""
    old_entries = (old_obj or {}).get('metadata', {}).get('managedFields') or []
    old_vis = visible(old_obj or {}, mode)
    new_vis = visible(new_obj, mode)
    changed = set()
    for k, v in new_vis.items():
        diff_paths(old_vis.get(k, ABSENT), v, _schema_for(schema, k), ('f:' + k,), changed)
    full_new = visible(new_obj, 'main')
    present = present_paths(full_new, schema)
    entries = []
    found = False
    for e in old_entries:
        paths = from_fields_v1(e.get('fieldsV1') or {})
        mine = (e.get('manager') == manager and e.get('operation') == 'Update' and
                e.get('subresource', '') == (subresource or '') and e.get('apiVersion') == api_version)
        if mine:
            found = True
            newp = _prefix_closed(paths | changed, present)
        else:
            newp = _prefix_closed(paths - changed, present)
        if not newp:
            continue
        ne = copy.deepcopy(e)
        if newp != paths:
            ne['fieldsV1'] = to_fields_v1(newp)
            if mine:
                ne['time'] = now
        entries.append(ne)
    if not found:
        newp = _prefix_closed(changed, present)
        if newp:
            entries.append(_entry(manager, 'Update', api_version, now, newp, subresource))
    return sort_entries(entries)


# ---------------------------------------------------------------- server-side apply

def path_string(p):
    out = ''
    for el in p:
        kind, _, rest = el.partition(':')
        if kind == 'f':
            out += '.' + rest
        elif kind == 'k':
            d = json.loads(rest)
            out += '[' + ','.join('%s=%s' % (k, json.dumps(v)) for k, v in sorted(d.items())) + ']'
        elif kind == 'v':
            out += '[=' + rest + ']'
        else:
            out += '[' + rest + ']'
    return out


def value_at(obj, p, schema):
    cur = obj
    s = schema
    for el in p:
        kind, _, rest = el.partition(':')
        if kind == 'f':
            if not isinstance(cur, dict) or rest not in cur:
                return ABSENT
            s = _schema_for(s, rest)
            cur = cur[rest]
        elif kind == 'k':
            keys = json.loads(rest)
            if not isinstance(cur, list):
                return ABSENT
            cur = next((x for x in cur if isinstance(x, dict) and all(x.get(k) == v for k, v in keys.items())),
                       ABSENT)
            s = item_schema(s)
            if cur is ABSENT:
                return ABSENT
        elif kind == 'v':
            v = json.loads(rest)
            if not isinstance(cur, list) or v not in cur:
                return ABSENT
            return v
    return cur


def apply_merge(live, applied, schema, path=()):
    """Merges an applied configuration into the live object: maps merge,
    associative lists merge by key, the rest is replaced."""
    if isinstance(applied, dict) and not _is_atomic_map(schema):
        out = dict(live) if isinstance(live, dict) else {}
        for k, v in applied.items():
            out[k] = apply_merge(out.get(k, ABSENT), v, _schema_for(schema, k), path + (k,))
        return out
    lt = _list_type(schema)
    if isinstance(applied, list) and lt == 'set':
        out = list(live) if isinstance(live, list) else []
        for x in applied:
            if x not in out:
                out.append(copy.deepcopy(x))
        return out
    if isinstance(applied, list) and lt == 'map':
        keys = schema.get('x-kubernetes-list-map-keys') or []
        out = [copy.deepcopy(x) for x in live] if isinstance(live, list) else []
        for x in applied:
            ik = _item_key(x, keys)
            pos = next((i for i, y in enumerate(out) if _item_key(y, keys) == ik), None)
            if pos is None:
                out.append(copy.deepcopy(x))
            else:
                out[pos] = apply_merge(out[pos], x, item_schema(schema), path)
        return out
    return copy.deepcopy(applied)


def remove_path(obj, p, schema):
    """Removes the field at p (a leaf or a list item) from obj."""
    if not p:
        return
    cur = obj
    s = schema
    for el in p[:-1]:
        kind, _, rest = el.partition(':')
        if kind == 'f':
            if not isinstance(cur, dict) or rest not in cur:
                return
            s = _schema_for(s, rest)
            cur = cur[rest]
        elif kind == 'k':
            keys = json.loads(rest)
            if not isinstance(cur, list):
                return
            cur = next((x for x in cur if isinstance(x, dict) and all(x.get(k) == v for k, v in keys.items())), None)
            s = item_schema(s)
            if cur is None:
                return
    kind, _, rest = p[-1].partition(':')
    if kind == 'f' and isinstance(cur, dict):
        cur.pop(rest, None)
    elif kind == 'k' and isinstance(cur, list):
        keys = json.loads(rest)
        cur[:] = [x for x in cur if not (isinstance(x, dict) and all(x.get(k) == v for k, v in keys.items()))]
    elif kind == 'v' and isinstance(cur, list):
        v = json.loads(rest)
        cur[:] = [x for x in cur if x != v]


def leaves(paths):
    """Paths of the set that have no child in the set."""
    ps = set(paths)
    parents = set()
    for p in ps:
        for i in range(1, len(p)):
            parents.add(p[:i])
    return {p for p in ps if p not in parents}


class ApplyConflict(Exception):
    def __init__(self, conflicts):
        super().__init__('apply conflict')
        self.conflicts = conflicts      # [(manager_entry, path)]


def apply(live, applied, schema, manager, api_version, subresource, force, now):
    """Server-side apply of `applied` over `live` (None when creating).
    Returns the new object (without metadata system fields handling)."""
    mode = 'status' if subresource == 'status' else 'main'
    app_vis = visible(applied, mode)
    app_paths = set()
    for k, v in app_vis.items():
        diff_paths(ABSENT, v, _schema_for(schema, k), ('f:' + k,), app_paths)
    entries = copy.deepcopy((live or {}).get('metadata', {}).get('managedFields') or [])
    live_obj = copy.deepcopy(live) if live else {}
    conflicts = []
    if live:
        for e in entries:
            if e.get('manager') == manager and e.get('operation') == 'Apply':
                continue
            owned = from_fields_v1(e.get('fieldsV1') or {})
            for p in sorted(leaves(app_paths) & owned):
                lv = value_at(live_obj, p, schema)
                av = value_at(applied, p, schema)
                if lv is not ABSENT and av is not ABSENT and lv != av:
                    conflicts.append((e, p))
        if conflicts and not force:
            raise ApplyConflict(conflicts)
    # fields this manager applied before and leaves out now are removed
    prev = set()
    for e in entries:
        if e.get('manager') == manager and e.get('operation') == 'Apply' and \
                e.get('subresource', '') == (subresource or ''):
            prev = from_fields_v1(e.get('fieldsV1') or {})
    others = set()
    for e in entries:
        if not (e.get('manager') == manager and e.get('operation') == 'Apply'):
            others |= from_fields_v1(e.get('fieldsV1') or {})
    for p in sorted(prev - app_paths, key=len, reverse=True):
        if p in others:
            continue
        v = value_at(live_obj, p, schema)
        if v is ABSENT or (isinstance(v, dict) and v):
            continue
        remove_path(live_obj, p, schema)
    merged = apply_merge(live_obj, {k: v for k, v in applied.items() if k != 'metadata'}, schema)
    meta = merged.setdefault('metadata', {})
    for k in META_VISIBLE:
        if k in (applied.get('metadata') or {}):
            meta[k] = apply_merge(meta.get(k, ABSENT), applied['metadata'][k], OBJECT_META_SCHEMA['properties'].get(k))
    for k in ('name', 'namespace'):
        if k in (applied.get('metadata') or {}) and k not in meta:
            meta[k] = applied['metadata'][k]
    # ownership
    conflict_paths = {p for _, p in conflicts}
    new_entries = []
    for e in entries:
        if e.get('manager') == manager and e.get('operation') == 'Apply' and \
                e.get('subresource', '') == (subresource or ''):
            continue
        owned = from_fields_v1(e.get('fieldsV1') or {})
        if force:
            owned -= conflict_paths
        if owned:
            ne = dict(e)
            ne['fieldsV1'] = to_fields_v1(owned)
            new_entries.append(ne)
    if app_paths:
        new_entries.append(_entry(manager, 'Apply', api_version, now, app_paths, subresource))
    meta['managedFields'] = sort_entries(new_entries)
    return merged


def conflict_message(conflicts):
    def who(e):
        if e.get('operation') == 'Apply':
            return '"%s"' % e.get('manager')
        return '"%s" using %s' % (e.get('manager'), e.get('apiVersion'))
    causes = [{'reason': 'FieldManagerConflict', 'message': 'conflict with %s' % who(e), 'field': path_string(p)}
              for e, p in conflicts]
    if len(conflicts) == 1:
        e, p = conflicts[0]
        msg = 'Apply failed with 1 conflict: conflict with %s: %s' % (who(e), path_string(p))
    else:
        by = {}
        for e, p in conflicts:
            by.setdefault(who(e), []).append(path_string(p))
        parts = []
        for m in sorted(by):
            parts.append('conflicts with %s:\n%s' % (m, '\n'.join('- ' + x for x in by[m])))
        msg = 'Apply failed with %d conflicts: %s' % (len(conflicts), '\n'.join(parts))
    return msg, causes
