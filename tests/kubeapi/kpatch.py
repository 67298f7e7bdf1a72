"""JSON merge patch (RFC 7386), JSON patch (RFC 6902) and a strategic merge
patch for the built-in kinds (merge keys of the fields the hub and installer
touch)."""

import copy


class PatchError(Exception):
    pass


class PatchDecodeError(Exception):
    pass


# ---------------------------------------------------------------- merge patch

def merge_patch(target, patch):
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    if not isinstance(target, dict):
        target = {}
    else:
        target = dict(target)
    for k, v in patch.items():
        if v is None:
            target.pop(k, None)
        else:
            target[k] = merge_patch(target.get(k), v)
    return target


# ---------------------------------------------------------------- JSON patch

def _pointer(path):
    if path == '':
        return []
    if not path.startswith('/'):
        raise PatchError('JSON pointer must start with "/": %s' % path)
    return [p.replace('~1', '/').replace('~0', '~') for p in path[1:].split('/')]


def _jeq(a, b):
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_jeq(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_jeq(x, y) for x, y in zip(a, b))
    return a == b


def _parent(doc, parts):
    cur = doc
    for p in parts[:-1]:
        if isinstance(cur, dict):
            if p not in cur:
                raise PatchError('doc is missing path: %s' % p)
            cur = cur[p]
        elif isinstance(cur, list):
            try:
                i = int(p)
            except ValueError:
                raise PatchError('invalid array index: %s' % p)
            if i < 0 or i >= len(cur):
                raise PatchError('array index out of bounds: %s' % p)
            cur = cur[i]
        else:
            raise PatchError('doc is missing path')
    return cur


def _get(doc, parts):
    if not parts:
        return doc
    par = _parent(doc, parts)
    k = parts[-1]
    if isinstance(par, dict):
        if k not in par:
            raise PatchError('Unable to get nonexistent key: %s' % k)
        return par[k]
    if isinstance(par, list):
        try:
            i = int(k)
        except ValueError:
            raise PatchError('invalid index')
        if i < 0 or i >= len(par):
            raise PatchError('Unable to access invalid index: %d' % i)
        return par[i]
    raise PatchError('invalid path')


def _add(doc, parts, value):
    if not parts:
        return value
    par = _parent(doc, parts)
    k = parts[-1]
    if isinstance(par, dict):
        par[k] = value
    elif isinstance(par, list):
        if k == '-':
            par.append(value)
        else:
            try:
                i = int(k)
            except ValueError:
                raise PatchError('invalid index')
            if i < 0 or i > len(par):
                raise PatchError('Unable to access invalid index: %d' % i)
            par.insert(i, value)
    else:
        raise PatchError('add operation does not apply: doc is missing path')
    return doc


def _remove(doc, parts):
    if not parts:
        raise PatchError('cannot remove the root')
    par = _parent(doc, parts)
    k = parts[-1]
    if isinstance(par, dict):
        if k not in par:
            raise PatchError('Unable to remove nonexistent key: %s: missing value' % k)
        return par.pop(k)
    if isinstance(par, list):
        try:
            i = int(k)
        except ValueError:
            raise PatchError('invalid index')
        if i < 0 or i >= len(par):
            raise PatchError('Unable to remove invalid index: %d' % i)
        return par.pop(i)
    raise PatchError('remove operation does not apply: doc is missing path')


def json_patch(doc, ops):
    if not isinstance(ops, list):
        raise PatchDecodeError('json: cannot unmarshal object into Go value of type jsonpatch.Patch')
    doc = copy.deepcopy(doc)
    for op in ops:
        if not isinstance(op, dict):
            raise PatchDecodeError('json: cannot unmarshal into Go value of type jsonpatch.Operation')
        kind = op.get('op')
        if 'path' not in op:
            raise PatchError("operation missing path")
        parts = _pointer(op['path'])
        if kind == 'add':
            if 'value' not in op:
                raise PatchError('add operation missing value')
            doc = _add(doc, parts, copy.deepcopy(op['value']))
        elif kind == 'remove':
            _remove(doc, parts)
        elif kind == 'replace':
            if 'value' not in op:
                raise PatchError('replace operation missing value')
            if not parts:
                doc = copy.deepcopy(op['value'])
                continue
            _get(doc, parts)
            par = _parent(doc, parts)
            if isinstance(par, dict):
                par[parts[-1]] = copy.deepcopy(op['value'])
            else:
                par[int(parts[-1])] = copy.deepcopy(op['value'])
        elif kind == 'move':
            frm = _pointer(op.get('from', ''))
            v = _remove(doc, frm)
            doc = _add(doc, parts, v)
        elif kind == 'copy':
            frm = _pointer(op.get('from', ''))
            v = copy.deepcopy(_get(doc, frm))
            doc = _add(doc, parts, v)
        elif kind == 'test':
            try:
                cur = _get(doc, parts)
            except PatchError:
                cur = None
                if op.get('value') is not None:
                    raise PatchError('testing value %s failed: test failed' % op['path'])
            if not _jeq(cur, op.get('value')):
                raise PatchError('testing value %s failed: test failed' % op['path'])
        else:
            raise PatchError('Unexpected kind: %s' % kind)
    return doc


# ---------------------------------------------------------------- strategic merge patch

# (path pattern, merge key) of the lists that merge instead of being replaced;
# '*' matches any single element. A merge key of None = a list of scalars
# merged as a set.
SMP_LISTS = {
    ('metadata', 'ownerReferences'): 'uid',
    ('metadata', 'finalizers'): None,
    ('status', 'conditions'): 'type',
    ('status', 'addresses'): 'type',
    ('status', 'containerStatuses'): 'name',
    ('status', 'initContainerStatuses'): 'name',
    ('status', 'images'): None,
    ('spec', 'containers'): 'name',
    ('spec', 'initContainers'): 'name',
    ('spec', 'ephemeralContainers'): 'name',
    ('spec', 'volumes'): 'name',
    ('spec', 'imagePullSecrets'): 'name',
    ('spec', 'containers', '*', 'env'): 'name',
    ('spec', 'containers', '*', 'ports'): 'containerPort',
    ('spec', 'containers', '*', 'volumeMounts'): 'mountPath',
    ('spec', 'initContainers', '*', 'env'): 'name',
    ('spec', 'ports'): 'port',
    ('spec', 'podCIDRs'): None,
    ('secrets',): 'name',
    ('imagePullSecrets',): 'name',
}


def _smp_key(path):
    for pat, key in SMP_LISTS.items():
        if len(pat) == len(path) and all(p == '*' or p == q for p, q in zip(pat, path)):
            return True, key
    return False, None


def strategic_merge_patch(target, patch, path=()):
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    if patch.get('$patch') == 'replace':
        p = dict(patch)
        del p['$patch']
        return copy.deepcopy(p)
    if patch.get('$patch') == 'delete':
        return None
    target = dict(target) if isinstance(target, dict) else {}
    retain = patch.get('$retainKeys')
    for k, v in patch.items():
        if k in ('$patch', '$retainKeys') or k.startswith('$setElementOrder/'):
            continue
        if k.startswith('$deleteFromPrimitiveList/'):
            field = k.split('/', 1)[1]
            if isinstance(target.get(field), list):
                target[field] = [x for x in target[field] if x not in (v or [])]
            continue
        if v is None:
            target.pop(k, None)
            continue
        sub = path + (k,)
        merge, key = _smp_key(sub)
        if isinstance(v, list) and merge:
            target[k] = _smp_list(target.get(k), v, key, sub)
        elif isinstance(v, dict):
            r = strategic_merge_patch(target.get(k), v, sub)
            if r is None:
                target.pop(k, None)
            else:
                target[k] = r
        else:
            target[k] = copy.deepcopy(v)
    if isinstance(retain, list):
        for k in list(target.keys()):
            if k not in retain:
                del target[k]
    return target


def _smp_list(cur, patch, key, path):
    cur = list(cur) if isinstance(cur, list) else []
    if key is None:
        out = list(cur)
        for x in patch:
            if isinstance(x, dict) and x.get('$patch') == 'replace':
                return [y for y in patch if not isinstance(y, dict)]
            if x not in out:
                out.append(x)
        return out
    if any(isinstance(x, dict) and x.get('$patch') == 'replace' for x in patch):
        return [copy.deepcopy(x) for x in patch if not (isinstance(x, dict) and x.get('$patch'))]
    out = [copy.deepcopy(x) for x in cur]
    for x in patch:
        if not isinstance(x, dict) or key not in x:
            out.append(copy.deepcopy(x))
            continue
        pos = next((i for i, y in enumerate(out) if isinstance(y, dict) and y.get(key) == x[key]), None)
        if x.get('$patch') == 'delete':
            if pos is not None:
                out.pop(pos)
            continue
        if pos is None:
            out.append({k: copy.deepcopy(v) for k, v in x.items() if not k.startswith('$')})
        else:
            out[pos] = strategic_merge_patch(out[pos], x, path + ('*',))
    return out
