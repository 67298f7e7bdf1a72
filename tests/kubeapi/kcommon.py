"""Shared helpers of the test kube-apiserver: Status bodies, field errors,
Go-compatible formatting and JSON encoding, timestamps.

Messages and Status shapes follow k8s.io/apimachinery (v1.26) so that a
client sees the same bytes it would see from a real kube-apiserver.
"""

import base64
import copy
import datetime
import decimal
import json
import re
import uuid

OMIT = object()     # "no value" marker for field errors and absent nodes


# ---------------------------------------------------------------- time

def utcnow():
    return datetime.datetime.now(datetime.timezone.utc)


def fmt_time(dt):
    """metav1.Time: RFC 3339, UTC, seconds."""
    return dt.astimezone(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ')


def fmt_microtime(dt):
    """metav1.MicroTime: RFC 3339 with exactly 6 fractional digits, UTC."""
    return dt.astimezone(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%S.%fZ')


def now_time():
    return fmt_time(utcnow())


_TIME_RE = re.compile(r'^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})'
                      r'(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$')


def parse_time(s):
    """Parses RFC 3339 (Go's time.RFC3339 parser). Returns an aware datetime
    or raises ValueError."""
    if not isinstance(s, str):
        raise ValueError('not a string')
    m = _TIME_RE.match(s)
    if not m:
        raise ValueError('parsing time %s' % go_quote(s))
    y, mo, d, h, mi, se, frac, tz = m.groups()
    us = 0
    if frac:
        us = int((frac[1:] + '000000')[:6])
    if tz in ('Z', 'z'):
        tzinfo = datetime.timezone.utc
    else:
        sign = 1 if tz[0] == '+' else -1
        tzinfo = datetime.timezone(sign * datetime.timedelta(hours=int(tz[1:3]), minutes=int(tz[4:6])))
    return datetime.datetime(int(y), int(mo), int(d), int(h), int(mi), int(se), us, tzinfo)


def normalize_time(v):
    """What a typed metav1.Time field stores: UTC seconds (null stays null)."""
    if v is None:
        return None
    return fmt_time(parse_time(v))


def normalize_microtime(v):
    if v is None:
        return None
    return fmt_microtime(parse_time(v))


def new_uid():
    return str(uuid.uuid4())


# ---------------------------------------------------------------- Go formatting

def go_quote(s):
    """strconv.Quote"""
    out = ['"']
    for ch in s:
        o = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == '\\':
            out.append('\\\\')
        elif ch == '\a':
            out.append('\\a')
        elif ch == '\b':
            out.append('\\b')
        elif ch == '\f':
            out.append('\\f')
        elif ch == '\n':
            out.append('\\n')
        elif ch == '\r':
            out.append('\\r')
        elif ch == '\t':
            out.append('\\t')
        elif ch == '\v':
            out.append('\\v')
        elif o < 0x20 or o == 0x7f:
            out.append('\\x%02x' % o)
        elif not ch.isprintable() and o > 0x7f:
            out.append('\\u%04x' % o if o <= 0xffff else '\\U%08x' % o)
        else:
            out.append(ch)
    out.append('"')
    return ''.join(out)


def go_float(f):
    """fmt %v of a float64 (strconv 'g', shortest)."""
    if f != f:
        return 'NaN'
    if f in (float('inf'), float('-inf')):
        return '+Inf' if f > 0 else '-Inf'
    if f == 0:
        return '0'
    d = decimal.Decimal(repr(f))
    sign, digits, exp = d.as_tuple()
    digits = list(digits)
    while len(digits) > 1 and digits[-1] == 0:
        digits.pop()
        exp += 1
    nd = len(digits)
    x = exp + nd - 1        # decimal exponent of the first digit
    s = '-' if sign else ''
    ds = ''.join(str(c) for c in digits)
    if x < -4 or x >= 6:
        # %e form
        mant = ds[0] + ('.' + ds[1:] if nd > 1 else '')
        return '%s%se%s%02d' % (s, mant, '-' if x < 0 else '+', abs(x))
    if x >= nd - 1:
        return s + ds + '0' * (x - nd + 1)
    if x >= 0:
        return s + ds[:x + 1] + '.' + ds[x + 1:]
    return s + '0.' + '0' * (-x - 1) + ds


def go_v(v):
    """fmt %v for values decoded from JSON."""
    if v is None:
        return '<nil>'
    if v is True:
        return 'true'
    if v is False:
        return 'false'
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return go_float(v)
    if isinstance(v, str):
        return v
    if isinstance(v, list):
        return '[' + ' '.join(go_v(x) for x in v) + ']'
    if isinstance(v, dict):
        return 'map[' + ' '.join('%s:%s' % (k, go_v(v[k])) for k in sorted(v)) + ']'
    return str(v)


def go_sharp_v(v):
    """fmt %#v for values decoded from JSON (interface{} values)."""
    if v is None:
        return '<nil>'
    if isinstance(v, bool):
        return 'true' if v else 'false'
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return go_float(v)
    if isinstance(v, str):
        return go_quote(v)
    if isinstance(v, list):
        return '[]interface {}{' + ', '.join(go_sharp_v(x) for x in v) + '}'
    if isinstance(v, dict):
        return 'map[string]interface {}{' + ', '.join(
            '%s:%s' % (go_quote(k), go_sharp_v(v[k])) for k in sorted(v)) + '}'
    return repr(v)


# ---------------------------------------------------------------- JSON

_HTML_ESC = {'<': '\\u003c', '>': '\\u003e', '&': '\\u0026',
             '\u2028': '\\u2028', '\u2029': '\\u2029'}
_HTML_RE = re.compile('[<>&\u2028\u2029]')


def dumps(obj):
    """Go encoding/json style: compact, HTML-escaped, UTF-8 text."""
    s = json.dumps(obj, ensure_ascii=False, separators=(',', ':'), allow_nan=False)
    return _HTML_RE.sub(lambda m: _HTML_ESC[m.group(0)], s)


def sort_keys_deep(obj):
    """What json.Marshal of a map[string]interface{} (unstructured) gives."""
    if isinstance(obj, dict):
        return {k: sort_keys_deep(obj[k]) for k in sorted(obj)}
    if isinstance(obj, list):
        return [sort_keys_deep(x) for x in obj]
    return obj


class _DupDict(dict):
    pass


def loads_tracking_duplicates(text):
    """json.loads that also returns the paths of duplicate object keys, the
    way the strict decoder of kube-apiserver reports them."""
    def hook(pairs):
        d = _DupDict()
        d.dups = []
        for k, v in pairs:
            if k in d:
                d.dups.append(k)
            d[k] = v
        return d
    obj = json.loads(text, object_pairs_hook=hook)
    dups = []

    def plain(o, path):
        if isinstance(o, dict):
            for k in getattr(o, 'dups', ()):
                dups.append(k if not path else path + '.' + k)
            return {k: plain(v, k if not path else path + '.' + k) for k, v in o.items()}
        if isinstance(o, list):
            return [plain(v, '%s[%d]' % (path, i)) for i, v in enumerate(o)]
        return o
    return plain(obj, ''), dups


def deepcopy(o):
    return copy.deepcopy(o)


def b64(s):
    if isinstance(s, str):
        s = s.encode()
    return base64.b64encode(s).decode()


# ---------------------------------------------------------------- errors

class ApiError(Exception):
    """An error answer: a Status body (or plain text) with an HTTP code."""

    def __init__(self, code, body, headers=None, content_type='application/json'):
        super().__init__(body.get('message') if isinstance(body, dict) else body)
        self.code = code
        self.body = body
        self.headers = headers or []
        self.content_type = content_type


def status_body(code, reason, message, details=None, list_meta=None, status='Failure'):
    b = {'kind': 'Status', 'apiVersion': 'v1', 'metadata': list_meta or {}, 'status': status}
    if message:
        b['message'] = message
    if reason:
        b['reason'] = reason
    if details is not None:
        b['details'] = details
    if code:
        b['code'] = code
    return b


def make_details(name='', group='', kind='', uid='', causes=None, retry=0):
    d = {}
    if name:
        d['name'] = name
    if group:
        d['group'] = group
    if kind:
        d['kind'] = kind
    if uid:
        d['uid'] = uid
    if causes:
        d['causes'] = causes
    if retry:
        d['retryAfterSeconds'] = retry
    return d


def gr_string(group, resource):
    """schema.GroupResource.String()"""
    return resource if not group else resource + '.' + group


def err_not_found(group, resource, name):
    return ApiError(404, status_body(404, 'NotFound', '%s %s not found' % (gr_string(group, resource), go_quote(name)),
                                     make_details(name=name, group=group, kind=resource)))


def err_already_exists(group, resource, name):
    return ApiError(409, status_body(409, 'AlreadyExists',
                                     '%s %s already exists' % (gr_string(group, resource), go_quote(name)),
                                     make_details(name=name, group=group, kind=resource)))


OPTIMISTIC_LOCK_MSG = 'the object has been modified; please apply your changes to the latest version and try again'


def err_conflict(group, resource, name, msg):
    gr = gr_string(group, resource)
    if gr:
        message = 'Operation cannot be fulfilled on %s %s: %s' % (gr, go_quote(name), msg)
    else:
        message = 'Operation cannot be fulfilled on %s: %s' % (go_quote(name), msg)
    return ApiError(409, status_body(409, 'Conflict', message, make_details(name=name, group=group, kind=resource)))


def err_bad_request(msg):
    return ApiError(400, status_body(400, 'BadRequest', msg))


def err_forbidden(group, resource, name, msg, causes=None):
    gr = gr_string(group, resource)
    if not gr:
        message = 'forbidden: %s' % msg
    elif not name:
        message = '%s is forbidden: %s' % (gr, msg)
    else:
        message = '%s %s is forbidden: %s' % (gr, go_quote(name), msg)
    return ApiError(403, status_body(403, 'Forbidden', message,
                                     make_details(name=name, group=group, kind=resource, causes=causes)))


def err_method_not_supported(group, resource, action):
    return ApiError(405, status_body(405, 'MethodNotAllowed', '%s is not supported on resources of kind %s'
                                     % (action, go_quote(gr_string(group, resource))),
                                     make_details(group=group, kind=resource)))


def err_internal(msg):
    return ApiError(500, status_body(500, 'InternalError', 'Internal error occurred: %s' % msg,
                                     make_details(causes=[{'message': msg}])))


def err_expired(msg, list_meta=None):
    return ApiError(410, status_body(410, 'Expired', msg, None, list_meta))


def err_gone(msg):
    return ApiError(410, status_body(410, 'Gone', msg))


def err_unsupported_media(msg):
    return ApiError(415, status_body(415, 'UnsupportedMediaType', msg))


def err_not_acceptable():
    return ApiError(406, status_body(406, 'NotAcceptable',
                                     'the server was unable to respond with a content type that the client supports'))


def err_timeout(msg, retry=1):
    return ApiError(504, status_body(504, 'Timeout', msg, make_details(retry=retry)),
                    headers=[('Retry-After', str(retry))])


def err_too_many_requests(retry=1, message='Too many requests, please try again later.'):
    return ApiError(429, status_body(429, 'TooManyRequests', message, make_details(retry=retry)),
                    headers=[('Retry-After', str(retry))])


def err_unauthorized():
    return ApiError(401, status_body(401, 'Unauthorized', 'Unauthorized'))


# What a real kube-apiserver (v1.26) with its etcd refuses for size:
# the request body (the apiserver's MaxRequestBodyBytes, 3 MiB: 413 before
# the body is decoded), etcd's --max-request-bytes (1.5 MiB: etcd
# answers "request is too large") and the etcd client's gRPC send limit
# (2 MiB: the client refuses before sending). The two etcd errors are not
# kube Status errors, so the apiserver answers 500 with the error text and
# no reason (responsewriters.ErrorToAPIStatus).
MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024
ETCD_MAX_REQUEST_BYTES = 1536 * 1024
ETCD_CLIENT_MAX_SEND_BYTES = 2 * 1024 * 1024


def err_request_entity_too_large(limit=MAX_REQUEST_BODY_BYTES):
    return ApiError(413, status_body(413, 'RequestEntityTooLarge', 'Request entity too large: limit is %d' % limit))


def etcd_request_size(key, value_len):
    """About the size of the etcd transaction that stores value_len bytes
    under key: a guarded put names the key in its compare, its put and its
    else-get, plus a few bytes of framing."""
    return value_len + 3 * len(key) + 32


def check_etcd_size(key, value_len):
    n = etcd_request_size(key, value_len)
    if n > ETCD_CLIENT_MAX_SEND_BYTES:
        raise ApiError(500, status_body(500, '', 'rpc error: code = ResourceExhausted desc = trying to send message '
                                        'larger than max (%d vs. %d)' % (n, ETCD_CLIENT_MAX_SEND_BYTES)))
    if n > ETCD_MAX_REQUEST_BYTES:
        raise ApiError(500, status_body(500, '', 'etcdserver: request is too large'))


def err_page_not_found():
    return ApiError(404, '404 page not found\n', content_type='text/plain; charset=utf-8')


# field.Error (k8s.io/apimachinery/pkg/util/validation/field)
_TYPE_STRING = {
    'FieldValueNotFound': 'Not found',
    'FieldValueRequired': 'Required value',
    'FieldValueDuplicate': 'Duplicate value',
    'FieldValueInvalid': 'Invalid value',
    'FieldValueTypeInvalid': 'Invalid value',
    'FieldValueNotSupported': 'Unsupported value',
    'FieldValueForbidden': 'Forbidden',
    'FieldValueTooLong': 'Too long',
    'FieldValueTooMany': 'Too many',
    'InternalError': 'Internal error',
}


class FieldError:
    def __init__(self, type_, field, value=OMIT, detail=''):
        self.type = type_
        self.field = field
        self.value = value
        self.detail = detail

    def body(self):
        t = _TYPE_STRING[self.type]
        if self.type in ('FieldValueRequired', 'FieldValueForbidden', 'FieldValueTooLong', 'InternalError') \
                or self.value is OMIT:
            s = t
        else:
            v = self.value
            if v is None:
                v = 'null'
            if isinstance(v, bool):
                s = '%s: %s' % (t, 'true' if v else 'false')
            elif isinstance(v, (int, float)):
                s = '%s: %s' % (t, go_v(v))
            elif isinstance(v, str):
                s = '%s: %s' % (t, go_quote(v))
            else:
                s = '%s: %s' % (t, go_sharp_v(v))
        if self.detail:
            s += ': ' + self.detail
        return s

    def __str__(self):
        return '%s: %s' % (self.field, self.body())


def fe_required(field, detail=''):
    return FieldError('FieldValueRequired', field, OMIT, detail)


def fe_invalid(field, value, detail):
    return FieldError('FieldValueInvalid', field, value, detail)


def fe_type_invalid(field, value, detail):
    return FieldError('FieldValueTypeInvalid', field, value, detail)


def fe_forbidden(field, detail):
    return FieldError('FieldValueForbidden', field, OMIT, detail)


def fe_not_supported(field, value, valid):
    detail = ''
    if valid:
        detail = 'supported values: ' + ', '.join(go_quote(v) for v in valid)
    return FieldError('FieldValueNotSupported', field, value, detail)


def fe_duplicate(field, value):
    return FieldError('FieldValueDuplicate', field, value)


def fe_too_long(field, value, max_len):
    return FieldError('FieldValueTooLong', field, value,
                      'may not be longer than %d' % max_len if max_len >= 0 else 'value is too long')


def fe_too_many(field, actual, max_items):
    return FieldError('FieldValueTooMany', field, actual, 'must have at most %d items' % max_items)


def aggregate(errs):
    msgs = []
    seen = set()
    for e in errs:
        m = str(e)
        if m in seen:
            continue
        seen.add(m)
        msgs.append(m)
    if not msgs:
        return ''
    if len(msgs) == 1:
        return msgs[0]
    return '[' + ', '.join(msgs) + ']'


def err_invalid(group, kind, name, errs):
    """errors.NewInvalid(qualifiedKind, name, errs)"""
    qk = kind if not group else kind + '.' + group
    causes = [{'reason': e.type, 'message': e.body(), 'field': e.field} for e in errs]
    for c in causes:
        if not c['field']:
            del c['field']
    agg = aggregate(errs)
    if agg:
        message = '%s %s is invalid: %s' % (qk, go_quote(name), agg)
    else:
        message = '%s %s is invalid' % (qk, go_quote(name))
    return ApiError(422, status_body(422, 'Invalid', message,
                                     make_details(name=name, group=group, kind=kind, causes=causes)))


# ---------------------------------------------------------------- name validation

DNS1123_LABEL = r'[a-z0-9]([-a-z0-9]*[a-z0-9])?'
DNS1123_SUBDOMAIN = DNS1123_LABEL + r'(\.' + DNS1123_LABEL + r')*'
_DNS_LABEL_RE = re.compile('^' + DNS1123_LABEL + '$')
_DNS_SUB_RE = re.compile('^' + DNS1123_SUBDOMAIN + '$')
DNS1035_LABEL = r'[a-z]([-a-z0-9]*[a-z0-9])?'
_DNS1035_RE = re.compile('^' + DNS1035_LABEL + '$')
QNAME_CHAR = r'[A-Za-z0-9]'
QNAME_EXT = r'[-A-Za-z0-9_.]'
QUALIFIED_NAME = '(' + QNAME_CHAR + QNAME_EXT + '*)?' + QNAME_CHAR
_QNAME_RE = re.compile('^' + QUALIFIED_NAME + '$')
LABEL_VALUE = '((' + QNAME_CHAR + QNAME_EXT + '*)?' + QNAME_CHAR + ')?'
_LABEL_VALUE_RE = re.compile('^' + LABEL_VALUE + '$')


def _regex_err(msg, fmt, examples):
    s = msg + ' (e.g. '
    if examples:
        s += ',  or '.join("'%s'" % e for e in examples) + ', '
    return s + "regex used for validation is '" + fmt + "')"


def is_dns1123_subdomain(v):
    errs = []
    if len(v) > 253:
        errs.append('must be no more than 253 characters')
    if not _DNS_SUB_RE.match(v):
        errs.append(_regex_err("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
                               "'-' or '.', and must start and end with an alphanumeric character",
                               DNS1123_SUBDOMAIN, ['example.com']))
    return errs


def is_dns1123_label(v):
    errs = []
    if len(v) > 63:
        errs.append('must be no more than 63 characters')
    if not _DNS_LABEL_RE.match(v):
        errs.append(_regex_err("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or "
                               "'-', and must start and end with an alphanumeric character",
                               DNS1123_LABEL, ['my-name', '123-abc']))
    return errs


def is_dns1035_label(v):
    errs = []
    if len(v) > 63:
        errs.append('must be no more than 63 characters')
    if not _DNS1035_RE.match(v):
        errs.append(_regex_err("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start "
                               "with an alphabetic character, and end with an alphanumeric character",
                               DNS1035_LABEL, ['my-name', 'abc-123']))
    return errs


def is_path_segment_name(v):
    if v in ('.', '..'):
        return ['may not be %s' % go_quote(v)]
    errs = []
    for bad in ('/', '%'):
        if bad in v:
            errs.append('may not contain %s' % go_quote(bad))
    return errs


def is_qualified_name(v):
    errs = []
    parts = v.split('/')
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append('prefix part ' + 'must be non-empty')
        else:
            errs.extend('prefix part ' + m for m in is_dns1123_subdomain(prefix))
    else:
        return [_regex_err("a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must "
                           "start and end with an alphanumeric character", QUALIFIED_NAME,
                           ['MyName', 'my.name', '123-abc'])
                + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    if not name:
        errs.append('name part must be non-empty')
    elif len(name) > 63:
        errs.append('name part must be no more than 63 characters')
    if name and not _QNAME_RE.match(name):
        errs.append('name part ' + _regex_err("must consist of alphanumeric characters, '-', '_' or '.', and must "
                                              "start and end with an alphanumeric character", QUALIFIED_NAME,
                                              ['MyName', 'my.name', '123-abc']))
    return errs


def is_label_value(v):
    errs = []
    if len(v) > 63:
        errs.append('must be no more than 63 characters')
    if not _LABEL_VALUE_RE.match(v):
        errs.append(_regex_err("a valid label must be an empty string or consist of alphanumeric characters, '-', "
                               "'_' or '.', and must start and end with an alphanumeric character",
                               LABEL_VALUE, ['MyValue', 'my_value', '12345']))
    return errs
