"""Structural schemas as kube-apiserver applies them to custom resources
(and, with hand-written schemas, to the built-in kinds): pruning of unknown
fields, dropping of non-nullable nulls, defaulting, OpenAPI v3 validation with
the error wording of k8s.io/kube-openapi + apiextensions-apiserver (v1.26),
x-kubernetes-list-type checks and a subset of CEL validation rules.
"""

import copy
import datetime
import ipaddress
import re
import uuid

from kcommon import (OMIT, FieldError, fe_duplicate, fe_invalid, fe_not_supported, fe_required, fe_too_long,
                     fe_too_many, fe_type_invalid, go_float, go_quote, go_v, is_dns1123_subdomain, is_label_value,
                     is_qualified_name, parse_time)

OBJECT_META_FIELDS = {
    'name': 'string', 'generateName': 'string', 'namespace': 'string', 'selfLink': 'string', 'uid': 'string',
    'resourceVersion': 'string', 'generation': 'integer', 'creationTimestamp': 'time',
    'deletionTimestamp': 'time', 'deletionGracePeriodSeconds': 'integer', 'labels': 'map',
    'annotations': 'map', 'ownerReferences': 'array', 'finalizers': 'array', 'managedFields': 'array',
    'clusterName': 'string', 'zz_deprecatedClusterName': 'string',
}


def schema_type_of(v):
    if v is None:
        return 'null'
    if isinstance(v, bool):
        return 'boolean'
    if isinstance(v, int):
        return 'integer'
    if isinstance(v, float):
        return 'number'
    if isinstance(v, str):
        return 'string'
    if isinstance(v, list):
        return 'array'
    if isinstance(v, dict):
        return 'object'
    return 'unknown'


def join(path, key):
    return key if not path else path + '.' + key


def idx(path, i):
    return '%s[%d]' % (path, i)


# ---------------------------------------------------------------- pruning

def prune(value, schema, path, unknown, root=False):
    """Drops the fields the schema does not know (unless preserved) and
    records their paths in `unknown`. Mutates value."""
    if schema is None:
        return
    preserve = schema.get('x-kubernetes-preserve-unknown-fields') is True
    embedded = schema.get('x-kubernetes-embedded-resource') is True
    if isinstance(value, dict):
        props = schema.get('properties')
        addl = schema.get('additionalProperties')
        for k in list(value.keys()):
            p = join(path, k)
            if (root or embedded) and k in ('apiVersion', 'kind'):
                continue
            if (root or embedded) and k == 'metadata':
                if isinstance(value[k], dict) and not (props and 'metadata' in props and
                                                       props['metadata'].get('properties')):
                    prune_object_meta(value[k], p, unknown)
                continue
            if props is not None and k in props:
                prune(value[k], props[k], p, unknown)
            elif isinstance(addl, dict):
                prune(value[k], addl, p, unknown)
            elif addl is True or preserve:
                continue
            else:
                del value[k]
                unknown.append(p)
    elif isinstance(value, list):
        items = schema.get('items')
        if isinstance(items, dict):
            for i, v in enumerate(value):
                prune(v, items, idx(path, i), unknown)


def prune_object_meta(meta, path, unknown):
    for k in list(meta.keys()):
        if k not in OBJECT_META_FIELDS:
            del meta[k]
            unknown.append(join(path, k))


# ---------------------------------------------------------------- nulls + defaults

def apply_defaults(value, schema):
    """structuraldefaulting.PruneNonNullableNullsWithoutDefaults + Default."""
    if schema is None:
        return
    if isinstance(value, dict):
        props = schema.get('properties') or {}
        for k, ps in props.items():
            if k in value and value[k] is None and not ps.get('nullable'):
                if 'default' in ps:
                    value[k] = copy.deepcopy(ps['default'])
                else:
                    del value[k]
            elif k not in value and 'default' in ps:
                value[k] = copy.deepcopy(ps['default'])
        addl = schema.get('additionalProperties')
        if isinstance(addl, dict):
            for k in list(value.keys()):
                if k not in props and value[k] is None and not addl.get('nullable'):
                    if 'default' in addl:
                        value[k] = copy.deepcopy(addl['default'])
                    else:
                        del value[k]
        for k, v in value.items():
            if k in props:
                apply_defaults(v, props[k])
            elif isinstance(addl, dict):
                apply_defaults(v, addl)
    elif isinstance(value, list):
        items = schema.get('items')
        if isinstance(items, dict):
            for v in value:
                apply_defaults(v, items)


# ---------------------------------------------------------------- formats

_DATE_TIME_RE = re.compile(r'^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:?\d{2})?$')
_MAC_RE = re.compile(r'^([0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}$|^([0-9A-Fa-f]{2}[:-]){7}[0-9A-Fa-f]{2}$')
_HOSTNAME_RE = re.compile(r'^[a-zA-Z0-9]([-a-zA-Z0-9]{0,62})?(\.[a-zA-Z0-9]([-a-zA-Z0-9]{0,62})?)*\.?$')
_EMAIL_RE = re.compile(r'^[^@\s]+@[^@\s]+$')
_DURATION_RE = re.compile(r'^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h|d|w))+$')
_BYTE_RE = re.compile(r'^[A-Za-z0-9+/]*={0,2}$')


def _check_format(fmt, s):
    try:
        if fmt in ('date-time', 'datetime'):
            if not _DATE_TIME_RE.match(s):
                return False
            datetime.datetime.strptime(s[:10], '%Y-%m-%d')
            return True
        if fmt == 'date':
            datetime.datetime.strptime(s, '%Y-%m-%d')
            return True
        if fmt in ('uuid', 'uuid3', 'uuid4', 'uuid5'):
            u = uuid.UUID(s)
            return fmt == 'uuid' or u.version == int(fmt[-1])
        if fmt == 'ipv4':
            ipaddress.IPv4Address(s)
            return True
        if fmt == 'ipv6':
            ipaddress.IPv6Address(s)
            return True
        if fmt == 'cidr':
            ipaddress.ip_network(s, strict=False)
            return '/' in s
        if fmt == 'mac':
            return bool(_MAC_RE.match(s))
        if fmt == 'hostname':
            return bool(_HOSTNAME_RE.match(s)) and len(s) <= 255
        if fmt == 'email':
            return bool(_EMAIL_RE.match(s))
        if fmt == 'duration':
            return bool(_DURATION_RE.match(s))
        if fmt == 'byte':
            return len(s) % 4 == 0 and bool(_BYTE_RE.match(s))
    except ValueError:
        return False
    return True     # formats kube does not know are not checked


KNOWN_STRING_FORMATS = {'date-time', 'datetime', 'date', 'uuid', 'uuid3', 'uuid4', 'uuid5', 'ipv4', 'ipv6',
                        'cidr', 'mac', 'hostname', 'email', 'duration', 'byte'}


# ---------------------------------------------------------------- validation

def _num_str(v):
    return go_float(float(v))


def validate(value, schema, path=''):
    """Returns a list of FieldError, as apiextensions-apiserver reports
    kube-openapi validation results."""
    errs = []
    _validate(value, schema, path, errs)
    return errs


def _validate(value, s, path, errs):
    if s is None:
        return
    t = s.get('type')
    name = path
    # type
    if value is None:
        if t and not s.get('nullable'):
            errs.append(fe_type_invalid(name or '<nil>', 'null', '%s in body must be of type %s: "null"' % (name, t)))
        return
    vt = schema_type_of(value)
    if t and not s.get('x-kubernetes-int-or-string'):
        ok = vt == t or (t == 'number' and vt == 'integer') or \
            (t == 'integer' and vt == 'number' and float(value).is_integer())
        if not ok:
            errs.append(fe_type_invalid(name, vt, '%s in body must be of type %s: %s' % (name, t, go_quote(vt))))
            return
    # allOf / anyOf / oneOf / not
    if s.get('allOf'):
        sub_errs = []
        validated = 0
        for sub in s['allOf']:
            e = []
            _validate(value, sub, path, e)
            if not e:
                validated += 1
            sub_errs.extend(e)
        errs.extend(sub_errs)
        if validated != len(s['allOf']):
            errs.append(fe_invalid('<nil>', '', '%s in body must validate all the schemas (allOf)' % name))
    if s.get('anyOf'):
        best = None
        ok = False
        for sub in s['anyOf']:
            e = []
            _validate(value, sub, path, e)
            if not e:
                ok = True
                best = None
                break
            if best is None or len(e) < len(best):
                best = e
        if not ok:
            errs.append(fe_invalid('<nil>', '', '%s in body must validate at least one schema (anyOf)' % name))
            errs.extend(best or [])
    if s.get('oneOf'):
        n = 0
        for sub in s['oneOf']:
            e = []
            _validate(value, sub, path, e)
            if not e:
                n += 1
        if n != 1:
            errs.append(fe_invalid('<nil>', '', '%s in body must validate one and only one schema (oneOf)' % name))
    if isinstance(s.get('not'), dict):
        e = []
        _validate(value, s['not'], path, e)
        if not e:
            errs.append(fe_invalid('<nil>', '', '%s in body should not validate the schema (not)' % name))
    # strings
    if vt == 'string':
        n = len(value)
        if 'maxLength' in s and n > s['maxLength']:
            errs.append(fe_too_long(name, value, s['maxLength']))
        if 'minLength' in s and n < s['minLength']:
            errs.append(fe_invalid(name, value, '%s in body should be at least %d chars long' % (name, s['minLength'])))
        if 'pattern' in s:
            try:
                rx = re.compile(s['pattern'])
            except re.error:
                rx = None
            if rx is not None and not rx.search(value):
                errs.append(fe_invalid(name, value, "%s in body should match '%s'" % (name, s['pattern'])))
        fmt = s.get('format')
        if fmt in KNOWN_STRING_FORMATS and t in (None, 'string') and not _check_format(fmt, value):
            errs.append(fe_type_invalid(name, value, '%s in body must be of type %s: %s' % (name, fmt, go_quote(value))))
    # numbers
    if vt in ('integer', 'number'):
        if 'multipleOf' in s and s['multipleOf']:
            q = value / s['multipleOf']
            if not float(q).is_integer():
                errs.append(fe_invalid(name, value, '%s in body should be a multiple of %s' % (name, _num_str(s['multipleOf']))))
        if 'maximum' in s:
            if s.get('exclusiveMaximum'):
                if value >= s['maximum']:
                    errs.append(fe_invalid(name, value, '%s in body should be less than %s' % (name, _num_str(s['maximum']))))
            elif value > s['maximum']:
                errs.append(fe_invalid(name, value, '%s in body should be less than or equal to %s' % (name, _num_str(s['maximum']))))
        if 'minimum' in s:
            if s.get('exclusiveMinimum'):
                if value <= s['minimum']:
                    errs.append(fe_invalid(name, value, '%s in body should be greater than %s' % (name, _num_str(s['minimum']))))
            elif value < s['minimum']:
                errs.append(fe_invalid(name, value, '%s in body should be greater than or equal to %s' % (name, _num_str(s['minimum']))))
    # arrays
    if vt == 'array':
        items = s.get('items')
        if isinstance(items, dict):
            for i, v in enumerate(value):
                _validate(v, items, idx(path, i), errs)
        if 'minItems' in s and len(value) < s['minItems']:
            errs.append(fe_invalid(name, len(value), '%s in body should have at least %d items' % (name, s['minItems'])))
        if 'maxItems' in s and len(value) > s['maxItems']:
            errs.append(fe_too_many(name, len(value), s['maxItems']))
        if s.get('uniqueItems'):
            seen = []
            for v in value:
                if v in seen:
                    errs.append(fe_invalid(name, value, "%s in body shouldn't contain duplicates" % name))
                    break
                seen.append(v)
    # enum
    if 'enum' in s:
        if not any(_jeq(e, value) for e in s['enum']):
            vals = []
            for e in s['enum']:
                vals.append(e if isinstance(e, str) else _json_compact(e))
            errs.append(fe_not_supported(name, value, vals))
    # objects
    if vt == 'object':
        props = s.get('properties') or {}
        for k in s.get('required') or []:
            if k not in value:
                errs.append(fe_required(join(path, k)))
        if 'maxProperties' in s and len(value) > s['maxProperties']:
            errs.append(FieldError('FieldValueTooMany', name, len(value),
                                   'must have at most %d items' % s['maxProperties']))
        if 'minProperties' in s and len(value) < s['minProperties']:
            errs.append(fe_invalid(name, len(value), '%s in body should have at least %d properties' %
                                   (name, s['minProperties'])))
        addl = s.get('additionalProperties')
        for k in sorted(value):
            if k in props:
                _validate(value[k], props[k], join(path, k), errs)
            elif isinstance(addl, dict):
                _validate(value[k], addl, join(path, k), errs)


def _jeq(a, b):
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_jeq(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_jeq(x, y) for x, y in zip(a, b))
    return a == b


def _json_compact(v):
    import json
    return json.dumps(v, separators=(',', ':'))


# ---------------------------------------------------------------- list types

def validate_list_types(value, s, path, errs):
    if s is None or value is None:
        return
    if isinstance(value, dict):
        props = s.get('properties') or {}
        addl = s.get('additionalProperties')
        for k in sorted(value):
            if k in props:
                validate_list_types(value[k], props[k], join(path, k), errs)
            elif isinstance(addl, dict):
                validate_list_types(value[k], addl, join(path, k), errs)
    elif isinstance(value, list):
        lt = s.get('x-kubernetes-list-type')
        if lt == 'set':
            seen = []
            for i, v in enumerate(value):
                if v in seen:
                    errs.append(fe_duplicate(idx(path, i), v))
                else:
                    seen.append(v)
        elif lt == 'map':
            keys = s.get('x-kubernetes-list-map-keys') or []
            seen = []
            for i, v in enumerate(value):
                if not isinstance(v, dict):
                    continue
                kv = {k: v.get(k) for k in keys if k in v}
                if kv in seen:
                    errs.append(fe_duplicate(idx(path, i), kv))
                else:
                    seen.append(kv)
        items = s.get('items')
        if isinstance(items, dict):
            for i, v in enumerate(value):
                validate_list_types(v, items, idx(path, i), errs)


def list_map_keys(s):
    if s and s.get('x-kubernetes-list-type') == 'map':
        return s.get('x-kubernetes-list-map-keys') or []
    return None


# ---------------------------------------------------------------- CEL subset

class CELError(Exception):
    pass


class CELUnsupported(Exception):
    pass


_CEL_TOKEN = re.compile(r'''
    (?P<ws>\s+)
  | (?P<num>\d+\.\d+([eE][+-]?\d+)?|\d+[eE][+-]?\d+|0x[0-9a-fA-F]+u?|\d+u?)
  | (?P<str>[rR]?("""(?:[^\\]|\\.)*?"""|\'\'\'(?:[^\\]|\\.)*?\'\'\'|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'))
  | (?P<op>\|\||&&|==|!=|<=|>=|[-+*/%!<>?:.,()\[\]{}])
  | (?P<id>[A-Za-z_][A-Za-z0-9_]*)
''', re.X)


def _cel_tokens(src):
    pos = 0
    out = []
    while pos < len(src):
        m = _CEL_TOKEN.match(src, pos)
        if not m:
            raise CELUnsupported('bad token at %d' % pos)
        pos = m.end()
        if m.lastgroup == 'ws':
            continue
        out.append((m.lastgroup, m.group(m.lastgroup)))
    out.append(('eof', ''))
    return out


def _cel_unquote(tok):
    raw = tok[0] in 'rR'
    if raw:
        tok = tok[1:]
    if tok[:3] in ('"""', "'''"):
        body = tok[3:-3]
    else:
        body = tok[1:-1]
    if raw:
        return body
    return body.encode('latin-1', 'backslashreplace').decode('unicode_escape')


class _CELParser:
    def __init__(self, src):
        self.toks = _cel_tokens(src)
        self.i = 0

    def peek(self):
        return self.toks[self.i]

    def next(self):
        t = self.toks[self.i]
        self.i += 1
        return t

    def accept(self, v):
        if self.peek()[1] == v and self.peek()[0] in ('op', 'id'):
            self.i += 1
            return True
        return False

    def expect(self, v):
        if not self.accept(v):
            raise CELUnsupported('expected %s' % v)

    def parse(self):
        e = self.expr()
        if self.peek()[0] != 'eof':
            raise CELUnsupported('trailing input')
        return e

    def expr(self):
        c = self.or_()
        if self.accept('?'):
            a = self.expr()
            self.expect(':')
            b = self.expr()
            return ('cond', c, a, b)
        return c

    def or_(self):
        e = self.and_()
        while self.accept('||'):
            e = ('or', e, self.and_())
        return e

    def and_(self):
        e = self.rel()
        while self.accept('&&'):
            e = ('and', e, self.rel())
        return e

    def rel(self):
        e = self.add()
        while True:
            t = self.peek()
            if t[1] in ('==', '!=', '<', '<=', '>', '>=') and t[0] == 'op' or t == ('id', 'in'):
                self.next()
                e = ('bin', t[1], e, self.add())
            else:
                return e

    def add(self):
        e = self.mul()
        while self.peek()[0] == 'op' and self.peek()[1] in ('+', '-'):
            op = self.next()[1]
            e = ('bin', op, e, self.mul())
        return e

    def mul(self):
        e = self.unary()
        while self.peek()[0] == 'op' and self.peek()[1] in ('*', '/', '%'):
            op = self.next()[1]
            e = ('bin', op, e, self.unary())
        return e

    def unary(self):
        if self.accept('!'):
            return ('not', self.unary())
        if self.accept('-'):
            return ('neg', self.unary())
        return self.member()

    def member(self):
        e = self.primary()
        while True:
            if self.accept('.'):
                t = self.next()
                if t[0] != 'id':
                    raise CELUnsupported('field name expected')
                if self.accept('('):
                    args = self.args(')')
                    e = ('call', t[1], e, args)
                else:
                    e = ('sel', e, t[1])
            elif self.accept('['):
                i = self.expr()
                self.expect(']')
                e = ('index', e, i)
            else:
                return e

    def args(self, close):
        out = []
        if self.accept(close):
            return out
        while True:
            out.append(self.expr())
            if self.accept(close):
                return out
            self.expect(',')

    def primary(self):
        t = self.next()
        if t[0] == 'num':
            v = t[1]
            if v.endswith('u'):
                v = v[:-1]
            if v.startswith('0x'):
                return ('lit', int(v, 16))
            if '.' in v or 'e' in v or 'E' in v:
                return ('lit', float(v))
            return ('lit', int(v))
        if t[0] == 'str':
            return ('lit', _cel_unquote(t[1]))
        if t[0] == 'id':
            if t[1] == 'true':
                return ('lit', True)
            if t[1] == 'false':
                return ('lit', False)
            if t[1] == 'null':
                return ('lit', None)
            if self.accept('('):
                return ('call', t[1], None, self.args(')'))
            return ('var', t[1])
        if t == ('op', '('):
            e = self.expr()
            self.expect(')')
            return e
        if t == ('op', '['):
            return ('list', self.args(']'))
        if t == ('op', '{'):
            items = []
            if not self.accept('}'):
                while True:
                    k = self.expr()
                    self.expect(':')
                    items.append((k, self.expr()))
                    if self.accept('}'):
                        break
                    self.expect(',')
            return ('map', items)
        raise CELUnsupported('unexpected %r' % (t,))


_MISSING = object()


def _cel_eq(a, b):
    if isinstance(a, bool) != isinstance(b, bool):
        return False
    return a == b


def _cel_eval(e, env):
    op = e[0]
    if op == 'lit':
        return e[1]
    if op == 'var':
        if e[1] not in env:
            raise CELError('undeclared reference to %s' % go_quote(e[1]))
        return env[e[1]]
    if op == 'or':
        try:
            a = _cel_eval(e[1], env)
        except CELError:
            a = _MISSING
        if a is True:
            return True
        b = _cel_eval(e[2], env)
        if b is True:
            return True
        if a is _MISSING:
            raise CELError('no such key')
        return False
    if op == 'and':
        try:
            a = _cel_eval(e[1], env)
        except CELError:
            a = _MISSING
        if a is False:
            return False
        b = _cel_eval(e[2], env)
        if b is False:
            return False
        if a is _MISSING:
            raise CELError('no such key')
        return True
    if op == 'not':
        return not _cel_eval(e[1], env)
    if op == 'neg':
        return -_cel_eval(e[1], env)
    if op == 'cond':
        return _cel_eval(e[2], env) if _cel_eval(e[1], env) else _cel_eval(e[3], env)
    if op == 'list':
        return [_cel_eval(x, env) for x in e[1]]
    if op == 'map':
        return {_cel_eval(k, env): _cel_eval(v, env) for k, v in e[1]}
    if op == 'sel':
        obj = _cel_eval(e[1], env)
        if not isinstance(obj, dict) or e[2] not in obj:
            raise CELError('no such key: %s' % e[2])
        return obj[e[2]]
    if op == 'index':
        obj = _cel_eval(e[1], env)
        i = _cel_eval(e[2], env)
        try:
            return obj[i]
        except (KeyError, IndexError, TypeError):
            raise CELError('no such key: %s' % go_v(i))
    if op == 'bin':
        o = e[1]
        a = _cel_eval(e[2], env)
        b = _cel_eval(e[3], env)
        if o == '==':
            return _cel_eq(a, b)
        if o == '!=':
            return not _cel_eq(a, b)
        if o == 'in':
            return a in b
        try:
            if o == '<':
                return a < b
            if o == '<=':
                return a <= b
            if o == '>':
                return a > b
            if o == '>=':
                return a >= b
            if o == '+':
                return a + b
            if o == '-':
                return a - b
            if o == '*':
                return a * b
            if o == '/':
                return a // b if isinstance(a, int) and isinstance(b, int) else a / b
            if o == '%':
                return a % b
        except (TypeError, ZeroDivisionError) as ex:
            raise CELError(str(ex))
    if op == 'call':
        fn, target, args = e[1], e[2], e[3]
        if fn == 'has' and target is None:
            if len(args) != 1 or args[0][0] != 'sel':
                raise CELUnsupported('has')
            obj = _cel_eval(args[0][1], env)
            return isinstance(obj, dict) and args[0][2] in obj
        if fn in ('all', 'exists', 'exists_one', 'map', 'filter') and target is not None:
            coll = _cel_eval(target, env)
            if len(args) != 2 or args[0][0] != 'var':
                raise CELUnsupported(fn)
            var = args[0][1]
            elems = list(coll.keys()) if isinstance(coll, dict) else list(coll)
            res = []
            for x in elems:
                env2 = dict(env)
                env2[var] = x
                res.append(_cel_eval(args[1], env2))
            if fn == 'all':
                return all(r is True for r in res)
            if fn == 'exists':
                return any(r is True for r in res)
            if fn == 'exists_one':
                return sum(1 for r in res if r is True) == 1
            if fn == 'map':
                return res
            return [x for x, r in zip(elems, res) if r is True]
        vals = [_cel_eval(a, env) for a in args]
        if target is not None:
            vals = [_cel_eval(target, env)] + vals
        if fn == 'size' and len(vals) == 1:
            return len(vals[0])
        if fn == 'startsWith':
            return vals[0].startswith(vals[1])
        if fn == 'endsWith':
            return vals[0].endswith(vals[1])
        if fn == 'contains':
            return vals[1] in vals[0]
        if fn == 'matches':
            return re.search(vals[1], vals[0]) is not None
        if fn == 'int':
            return int(vals[0])
        if fn == 'string':
            return go_v(vals[0])
        if fn == 'lowerAscii':
            return vals[0].lower()
        if fn == 'upperAscii':
            return vals[0].upper()
        raise CELUnsupported('function %s' % fn)
    raise CELUnsupported(op)


_cel_cache = {}


def cel_compile(rule):
    if rule not in _cel_cache:
        try:
            _cel_cache[rule] = _CELParser(rule).parse()
        except CELUnsupported:
            _cel_cache[rule] = None
    return _cel_cache[rule]


def _uses_old_self(ast):
    if isinstance(ast, tuple):
        if ast == ('var', 'oldSelf'):
            return True
        return any(_uses_old_self(x) for x in ast)
    if isinstance(ast, list):
        return any(_uses_old_self(x) for x in ast)
    return False


def validate_cel(value, s, path, errs, old=OMIT):
    """x-kubernetes-validations on value (and its children). Transition rules
    (using oldSelf) run only when a correlated old value exists. Rules this
    subset cannot parse are not enforced."""
    if s is None or value is None:
        return
    for rule in s.get('x-kubernetes-validations') or []:
        ast = cel_compile(rule.get('rule', ''))
        if ast is None:
            continue
        transition = _uses_old_self(ast)
        if transition and old is OMIT:
            continue
        env = {'self': value}
        if transition:
            env['oldSelf'] = old
        try:
            ok = _cel_eval(ast, env)
        except (CELError, CELUnsupported):
            ok = False
        if ok is not True:
            msg = rule.get('message') or 'failed rule: %s' % rule.get('rule', '')
            errs.append(fe_invalid(path or '<nil>', s.get('type') or 'object', msg))
    if isinstance(value, dict):
        props = s.get('properties') or {}
        addl = s.get('additionalProperties')
        for k in sorted(value):
            sub = props.get(k) if k in props else (addl if isinstance(addl, dict) else None)
            if sub is None:
                continue
            o = old.get(k, OMIT) if isinstance(old, dict) else OMIT
            validate_cel(value[k], sub, join(path, k), errs, o)
    elif isinstance(value, list) and isinstance(s.get('items'), dict):
        keys = list_map_keys(s)
        for i, v in enumerate(value):
            o = OMIT
            if keys and isinstance(old, list) and isinstance(v, dict):
                kv = {k: v.get(k) for k in keys}
                for ov in old:
                    if isinstance(ov, dict) and {k: ov.get(k) for k in keys} == kv:
                        o = ov
                        break
            validate_cel(v, s['items'], idx(path, i), errs, o)


def has_cel(s):
    if not isinstance(s, dict):
        return False
    if s.get('x-kubernetes-validations'):
        return True
    for v in (s.get('properties') or {}).values():
        if has_cel(v):
            return True
    return has_cel(s.get('items')) or has_cel(s.get('additionalProperties'))


# ---------------------------------------------------------------- ObjectMeta

TOTAL_ANNOTATION_SIZE = 256 * 1024


def validate_object_meta(meta, namespaced, name_fn, is_create, path='metadata'):
    """apimachinery ValidateObjectMeta (the parts clients meet)."""
    errs = []
    name = meta.get('name', '')
    gen = meta.get('generateName', '')
    if not name and not gen:
        errs.append(fe_required(path + '.name', 'name or generateName is required'))
    if name:
        for m in name_fn(name):
            errs.append(fe_invalid(path + '.name', name, m))
    if gen and not name:
        for m in name_fn(gen + 'x' if not gen.endswith('-') else gen + 'x'):
            errs.append(fe_invalid(path + '.generateName', gen, m))
    ns = meta.get('namespace', '')
    if namespaced:
        if not ns:
            errs.append(fe_required(path + '.namespace', ''))
    elif ns:
        errs.append(FieldError('FieldValueForbidden', path + '.namespace', OMIT, 'not allowed on this type'))
    gen_n = meta.get('generation', 0)
    if isinstance(gen_n, int) and gen_n < 0:
        errs.append(fe_invalid(path + '.generation', gen_n, 'must be greater than or equal to 0'))
    labels = meta.get('labels') or {}
    if isinstance(labels, dict):
        for k in sorted(labels):
            for m in is_qualified_name(k):
                errs.append(fe_invalid(path + '.labels', k, m))
            v = labels[k]
            if not isinstance(v, str):
                errs.append(fe_type_invalid(path + '.labels', v, 'must be a string'))
                continue
            for m in is_label_value(v):
                errs.append(fe_invalid(path + '.labels', v, m))
    ann = meta.get('annotations') or {}
    if isinstance(ann, dict):
        total = 0
        for k in sorted(ann):
            for m in is_qualified_name(k.lower()):
                errs.append(fe_invalid(path + '.annotations', k, m))
            total += len(k) + len(ann[k] if isinstance(ann[k], str) else '')
        if total > TOTAL_ANNOTATION_SIZE:
            errs.append(fe_too_long(path + '.annotations', '', TOTAL_ANNOTATION_SIZE))
    fins = meta.get('finalizers') or []
    if isinstance(fins, list):
        for f in fins:
            for m in is_qualified_name(f if isinstance(f, str) else ''):
                errs.append(fe_invalid(path + '.finalizers', f, m))
        if 'orphan' in fins and 'foregroundDeletion' in fins:
            errs.append(fe_invalid(path + '.finalizers', fins,
                                   'finalizer %s and %s cannot be both set' % ('orphan', 'foregroundDeletion')))
    refs = meta.get('ownerReferences') or []
    if isinstance(refs, list):
        controllers = []
        for i, r in enumerate(refs):
            p = path + '.ownerReferences'
            if not isinstance(r, dict):
                errs.append(fe_invalid(p, r, 'must be an object'))
                continue
            gv = r.get('apiVersion', '')
            if not gv:
                errs.append(fe_invalid(p + '.apiVersion', gv, 'version must not be empty'))
            if not r.get('kind'):
                errs.append(fe_invalid(p + '.kind', r.get('kind', ''), 'kind must not be empty'))
            if not r.get('name'):
                errs.append(fe_invalid(p + '.name', r.get('name', ''), 'name must not be empty'))
            if not r.get('uid'):
                errs.append(fe_invalid(p + '.uid', r.get('uid', ''), 'uid must not be empty'))
            if r.get('controller') is True:
                controllers.append(r.get('name', ''))
        if len(controllers) > 1:
            errs.append(fe_invalid(path + '.ownerReferences', refs,
                                   'Only one reference can have Controller set to true. Found "true" in references for %s'
                                   % ' and '.join(controllers)))
    return errs


def validate_object_meta_update(new, old, path='metadata'):
    errs = []
    for f in ('name', 'namespace', 'uid', 'creationTimestamp'):
        if new.get(f) != old.get(f) and not (f == 'uid' and not new.get(f)):
            errs.append(fe_invalid(path + '.' + f, new.get(f, ''), 'field is immutable'))
    if old.get('deletionTimestamp'):
        extra = sorted(set(new.get('finalizers') or []) - set(old.get('finalizers') or []))
        if extra:
            errs.append(FieldError('FieldValueForbidden', path + '.finalizers', OMIT,
                                   'no new finalizers can be added if the object is being deleted, found new '
                                   'finalizers []string{%s}' % ', '.join(go_quote(x) for x in extra)))
    og = old.get('generation', 0) or 0
    ng = new.get('generation', 0) or 0
    if ng < og:
        errs.append(fe_invalid(path + '.generation', ng, 'must not be decremented'))
    return errs


def check_meta_types(meta, path='metadata'):
    """Malformed ObjectMeta fields: the decoder's errors."""
    errs = []
    for k, v in meta.items():
        t = OBJECT_META_FIELDS.get(k)
        if v is None:
            continue
        bad = False
        if t == 'string' and not isinstance(v, str):
            bad = True
        elif t == 'integer' and (not isinstance(v, int) or isinstance(v, bool)):
            bad = True
        elif t == 'time':
            try:
                parse_time(v)
            except ValueError:
                bad = True
        elif t == 'map' and (not isinstance(v, dict) or not all(isinstance(x, str) for x in v.values())):
            bad = True
        elif t == 'array' and not isinstance(v, list):
            bad = True
        if bad:
            errs.append('%s.%s' % (path, k))
    return errs


def child_schema(s, key):
    if not s:
        return None
    props = s.get('properties') or {}
    if key in props:
        return props[key]
    addl = s.get('additionalProperties')
    return addl if isinstance(addl, dict) else None


def item_schema(s):
    if not s:
        return None
    it = s.get('items')
    return it if isinstance(it, dict) else None


# minimal schemas describing ObjectMeta for managed fields / list types
OBJECT_META_SCHEMA = {
    'type': 'object',
    'properties': {
        'ownerReferences': {'type': 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['uid'],
                            'items': {'type': 'object'}},
        'finalizers': {'type': 'array', 'x-kubernetes-list-type': 'set', 'items': {'type': 'string'}},
        'labels': {'type': 'object', 'additionalProperties': {'type': 'string'}},
        'annotations': {'type': 'object', 'additionalProperties': {'type': 'string'}},
    },
}


def is_dns_subdomain_name(v):
    return is_dns1123_subdomain(v)
