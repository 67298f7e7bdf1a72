"""Label selectors and field selectors with the grammar of
k8s.io/apimachinery/pkg/labels and pkg/fields."""

import re

from kcommon import go_quote, is_label_value, is_qualified_name


class SelectorError(Exception):
    pass


# ---------------------------------------------------------------- labels

_LS_TOKEN = re.compile(r'\s*(\(|\)|,|==|!=|=|!|>|<|[^\s(),=!<>]+)')
_KEYWORDS = {'in', 'notin'}


def _lex(s):
    out = []
    pos = 0
    s = s.rstrip()
    while pos < len(s):
        m = _LS_TOKEN.match(s, pos)
        if not m:
            raise SelectorError('unable to parse requirement: found unexpected character at %d' % pos)
        out.append(m.group(1))
        pos = m.end()
    return out


class LabelRequirement:
    def __init__(self, key, op, values):
        self.key = key
        self.op = op
        self.values = values

    def matches(self, labels):
        has = self.key in labels
        v = labels.get(self.key)
        op = self.op
        if op in ('=', '==', 'in'):
            return has and v in self.values
        if op in ('!=', 'notin'):
            return not has or v not in self.values
        if op == 'exists':
            return has
        if op == '!':
            return not has
        if op in ('gt', 'lt'):
            if not has:
                return False
            try:
                lv = int(v)
            except ValueError:
                return False
            rv = int(self.values[0])
            return lv > rv if op == 'gt' else lv < rv
        return False


def _validate_key(k):
    errs = is_qualified_name(k)
    if errs:
        raise SelectorError('unable to parse requirement: <nil>: Invalid value: %s: %s' % (go_quote(k), errs[0]))


def _validate_value(k, v, i=0):
    errs = is_label_value(v)
    if errs:
        raise SelectorError('unable to parse requirement: values[%d][%s]: Invalid value: %s: %s'
                            % (i, k, go_quote(v), errs[0]))


def parse_label_selector(s):
    """Returns a list of LabelRequirement (AND)."""
    if s is None or not s.strip():
        return []
    toks = _lex(s)
    reqs = []
    i = 0

    def peek():
        return toks[i] if i < len(toks) else None

    while i < len(toks):
        t = toks[i]
        if t == '!':
            i += 1
            k = peek()
            if k is None or k in '(),=!<>':
                raise SelectorError("found '%s', expected: identifier" % (k or ''))
            _validate_key(k)
            i += 1
            reqs.append(LabelRequirement(k, '!', []))
        else:
            k = t
            if k in '(),=!<>':
                raise SelectorError("found '%s', expected: !, identifier, or 'end of string'" % k)
            _validate_key(k)
            i += 1
            op = peek()
            if op is None or op == ',':
                reqs.append(LabelRequirement(k, 'exists', []))
            elif op in ('=', '==', '!='):
                i += 1
                v = peek()
                if v is None or v == ',':
                    v = ''
                else:
                    if v in '()=!<>':
                        raise SelectorError("found '%s', expected: identifier" % v)
                    i += 1
                _validate_value(k, v)
                reqs.append(LabelRequirement(k, op, [v]))
            elif op in ('in', 'notin'):
                i += 1
                if peek() != '(':
                    raise SelectorError("found '%s', expected: '('" % (peek() or ''))
                i += 1
                vals = []
                while True:
                    v = peek()
                    if v is None:
                        raise SelectorError("found '', expected: ',', or ')'")
                    if v == ')':
                        i += 1
                        break
                    if v == ',':
                        vals.append('')
                        i += 1
                        continue
                    _validate_value(k, v, len(vals))
                    vals.append(v)
                    i += 1
                    if peek() == ',':
                        i += 1
                        if peek() == ')':
                            vals.append('')
                    elif peek() != ')':
                        raise SelectorError("found '%s', expected: ',' or ')'" % (peek() or ''))
                if not vals:
                    raise SelectorError('unable to parse requirement: for \'in\', \'notin\' operators, values set '
                                        'can\'t be empty')
                reqs.append(LabelRequirement(k, op, vals))
            elif op in ('>', '<'):
                i += 1
                v = peek()
                if v is None:
                    raise SelectorError("found '', expected: identifier")
                i += 1
                try:
                    int(v)
                except ValueError:
                    raise SelectorError('unable to parse requirement: for \'Gt\', \'Lt\' operators, the value '
                                        'must be an integer')
                reqs.append(LabelRequirement(k, 'gt' if op == '>' else 'lt', [v]))
            else:
                raise SelectorError("found '%s', expected: in, notin, =, ==, !=, gt, lt" % op)
        if i < len(toks):
            if toks[i] != ',':
                raise SelectorError("found '%s', expected: ',' or 'end of string'" % toks[i])
            i += 1
            if i >= len(toks):
                raise SelectorError("found '', expected: identifier after ','")
    return reqs


def labels_match(reqs, labels):
    labels = labels or {}
    return all(r.matches(labels) for r in reqs)


def selector_from_label_selector(ls):
    """metav1.LabelSelector (matchLabels/matchExpressions) -> requirements."""
    reqs = []
    if not ls:
        return reqs
    for k, v in sorted((ls.get('matchLabels') or {}).items()):
        reqs.append(LabelRequirement(k, '=', [v]))
    for e in ls.get('matchExpressions') or []:
        op = {'In': 'in', 'NotIn': 'notin', 'Exists': 'exists', 'DoesNotExist': '!'}.get(e.get('operator'))
        if op is None:
            raise SelectorError('%s is not a valid label selector operator' % go_quote(e.get('operator', '')))
        reqs.append(LabelRequirement(e.get('key', ''), op, list(e.get('values') or [])))
    return reqs


# ---------------------------------------------------------------- fields

def _split_unescaped(s, sep):
    parts = []
    cur = []
    i = 0
    while i < len(s):
        c = s[i]
        if c == '\\' and i + 1 < len(s):
            cur.append(s[i:i + 2])
            i += 2
            continue
        if c == sep:
            parts.append(''.join(cur))
            cur = []
        else:
            cur.append(c)
        i += 1
    parts.append(''.join(cur))
    return parts


def _unescape(v):
    out = []
    i = 0
    while i < len(v):
        c = v[i]
        if c == '\\':
            if i + 1 >= len(v):
                raise SelectorError('invalid field selector: trailing backslash')
            n = v[i + 1]
            if n not in '\\,=!':
                raise SelectorError('invalid escape sequence: %s' % v[i:i + 2])
            out.append(n)
            i += 2
            continue
        if c in ',=':
            raise SelectorError('invalid field selector: unescaped %s' % c)
        out.append(c)
        i += 1
    return ''.join(out)


def parse_field_selector(s):
    """Returns [(field, op, value)] with op in '=', '!='."""
    if s is None or s == '':
        return []
    out = []
    for part in _split_unescaped(s, ','):
        if part == '':
            continue
        for op, norm in (('!=', '!='), ('==', '='), ('=', '=')):
            pos = _find_unescaped(part, op)
            if pos >= 0:
                field = part[:pos]
                val = part[pos + len(op):]
                out.append((field, norm, _unescape(val)))
                break
        else:
            raise SelectorError("invalid selector: '%s'; can't understand '%s'" % (s, part))
    return out


def _find_unescaped(s, op):
    i = 0
    while i < len(s):
        if s[i] == '\\':
            i += 2
            continue
        if s.startswith(op, i):
            return i
        i += 1
    return -1


def fields_match(terms, values):
    for field, op, v in terms:
        have = values.get(field, '')
        if op == '=' and have != v:
            return False
        if op == '!=' and have == v:
            return False
    return True
