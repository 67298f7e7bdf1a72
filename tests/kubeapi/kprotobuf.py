"""Request bodies in Kubernetes' protobuf encoding, for the built-in kinds
clients write that way.

client-go and controller-runtime send a built-in kind (a Secret, a Lease,
an Event) as application/vnd.kubernetes.protobuf, and kube-apiserver takes
it; custom resources have no protobuf form and stay JSON. The encoding: the
4-byte magic "k8s\\0", then a runtime.Unknown message (typeMeta, raw, ...)
whose raw holds the object's own message. Field numbers are those of the
generated.proto files of k8s.io/apimachinery and k8s.io/api (v0.31). Only
the kinds below are decoded; another kind's body is refused (415), saying
so.

decode(body) -> (apiVersion, kind, object as the JSON form's dict)."""
import base64
import datetime
import json

MAGIC = b'k8s\x00'


class DecodeError(ValueError):
    def __init__(self, msg, truncated=False):
        super().__init__(msg)
        self.truncated = truncated


# message name -> {field number: (json name, type)}; a type is a scalar
# name, a message name, ('repeated', type) or ('map', key type, value type)
MESSAGES = {
    # runtime/generated.proto
    'Unknown': {1: ('typeMeta', 'TypeMeta'), 2: ('raw', 'rawbytes'), 3: ('contentEncoding', 'string'),
                4: ('contentType', 'string')},
    'TypeMeta': {1: ('apiVersion', 'string'), 2: ('kind', 'string')},
    # apis/meta/v1/generated.proto
    'ObjectMeta': {1: ('name', 'string'), 2: ('generateName', 'string'), 3: ('namespace', 'string'),
                   4: ('selfLink', 'string'), 5: ('uid', 'string'), 6: ('resourceVersion', 'string'),
                   7: ('generation', 'int64'), 8: ('creationTimestamp', 'Time'), 9: ('deletionTimestamp', 'Time'),
                   10: ('deletionGracePeriodSeconds', 'int64'), 11: ('labels', ('map', 'string', 'string')),
                   12: ('annotations', ('map', 'string', 'string')),
                   13: ('ownerReferences', ('repeated', 'OwnerReference')),
                   14: ('finalizers', ('repeated', 'string')),
                   17: ('managedFields', ('repeated', 'ManagedFieldsEntry'))},
    'OwnerReference': {5: ('apiVersion', 'string'), 1: ('kind', 'string'), 3: ('name', 'string'),
                       4: ('uid', 'string'), 6: ('controller', 'bool'), 7: ('blockOwnerDeletion', 'bool')},
    'ManagedFieldsEntry': {1: ('manager', 'string'), 2: ('operation', 'string'), 3: ('apiVersion', 'string'),
                           4: ('time', 'Time'), 6: ('fieldsType', 'string'), 7: ('fieldsV1', 'FieldsV1'),
                           8: ('subresource', 'string')},
    'FieldsV1': {1: ('Raw', 'rawbytes')},
    'Time': {1: ('seconds', 'int64'), 2: ('nanos', 'int32')},
    'MicroTime': {1: ('seconds', 'int64'), 2: ('nanos', 'int32')},
    # api/core/v1/generated.proto
    'Secret': {1: ('metadata', 'ObjectMeta'), 5: ('immutable', 'bool'), 2: ('data', ('map', 'string', 'bytes')),
               4: ('stringData', ('map', 'string', 'string')), 3: ('type', 'string')},
    'ConfigMap': {1: ('metadata', 'ObjectMeta'), 4: ('immutable', 'bool'),
                  2: ('data', ('map', 'string', 'string')), 3: ('binaryData', ('map', 'string', 'bytes'))},
    'Event': {1: ('metadata', 'ObjectMeta'), 2: ('involvedObject', 'ObjectReference'), 3: ('reason', 'string'),
              4: ('message', 'string'), 5: ('source', 'EventSource'), 6: ('firstTimestamp', 'Time'),
              7: ('lastTimestamp', 'Time'), 8: ('count', 'int32'), 9: ('type', 'string'),
              10: ('eventTime', 'MicroTime'), 11: ('series', 'EventSeries'), 12: ('action', 'string'),
              13: ('related', 'ObjectReference'), 14: ('reportingComponent', 'string'),
              15: ('reportingInstance', 'string')},
    'EventSource': {1: ('component', 'string'), 2: ('host', 'string')},
    'EventSeries': {1: ('count', 'int32'), 2: ('lastObservedTime', 'MicroTime')},
    'ObjectReference': {1: ('kind', 'string'), 2: ('namespace', 'string'), 3: ('name', 'string'),
                        4: ('uid', 'string'), 5: ('apiVersion', 'string'), 6: ('resourceVersion', 'string'),
                        7: ('fieldPath', 'string')},
    # api/coordination/v1/generated.proto
    'Lease': {1: ('metadata', 'ObjectMeta'), 2: ('spec', 'LeaseSpec')},
    'LeaseSpec': {1: ('holderIdentity', 'string'), 2: ('leaseDurationSeconds', 'int32'),
                  3: ('acquireTime', 'MicroTime'), 4: ('renewTime', 'MicroTime'), 5: ('leaseTransitions', 'int32'),
                  6: ('strategy', 'string'), 7: ('preferredHolder', 'string')},
}

# (apiVersion, kind) -> the message of its raw bytes
KINDS = {('v1', 'Secret'): 'Secret', ('v1', 'ConfigMap'): 'ConfigMap', ('v1', 'Event'): 'Event',
         ('coordination.k8s.io/v1', 'Lease'): 'Lease'}

_VARINT, _FIXED64, _LEN, _FIXED32 = 0, 1, 2, 5


def _varint(buf, i):
    shift = value = 0
    while True:
        if i >= len(buf):
            raise DecodeError('truncated varint', True)
        b = buf[i]
        i += 1
        value |= (b & 0x7f) << shift
        if not b & 0x80:
            return value, i
        shift += 7
        if shift > 63:
            raise DecodeError('varint too long')


def _fields(buf):
    """(field number, wire type, value) of a message: an int or bytes"""
    i = 0
    while i < len(buf):
        key, i = _varint(buf, i)
        num, wt = key >> 3, key & 7
        if num == 0:
            raise DecodeError('field number 0')
        if wt == _VARINT:
            v, i = _varint(buf, i)
        elif wt == _LEN:
            n, i = _varint(buf, i)
            if i + n > len(buf):
                raise DecodeError('truncated field %d' % num, True)
            v, i = bytes(buf[i:i + n]), i + n
        elif wt == _FIXED64:
            if i + 8 > len(buf):
                raise DecodeError('truncated field %d' % num, True)
            v, i = bytes(buf[i:i + 8]), i + 8
        elif wt == _FIXED32:
            if i + 4 > len(buf):
                raise DecodeError('truncated field %d' % num, True)
            v, i = bytes(buf[i:i + 4]), i + 4
        else:
            raise DecodeError('wire type %d of field %d' % (wt, num))
        if i > len(buf):
            raise DecodeError('truncated field %d' % num, True)
        yield num, wt, v


def _signed(v, bits):
    v &= (1 << 64) - 1
    if v >= 1 << 63:
        v -= 1 << 64
    if bits == 32 and not -(1 << 31) <= v < 1 << 31:
        raise DecodeError('int32 out of range')
    return v


def _scalar(t, wt, v):
    if t in ('string', 'bytes', 'rawbytes'):
        if wt != _LEN:
            raise DecodeError('%s with wire type %d' % (t, wt))
        if t == 'string':
            try:
                return v.decode('utf-8')
            except UnicodeDecodeError:
                raise DecodeError('string not UTF-8')
        return base64.b64encode(v).decode() if t == 'bytes' else v
    if wt != _VARINT:
        raise DecodeError('%s with wire type %d' % (t, wt))
    if t == 'bool':
        return v != 0
    return _signed(v, 32 if t == 'int32' else 64)


def _time(fields, micro):
    try:
        t = datetime.datetime.fromtimestamp(fields.get('seconds', 0), datetime.timezone.utc)
    except (ValueError, OverflowError, OSError):
        raise DecodeError('time out of range')
    if micro:
        return t.strftime('%Y-%m-%dT%H:%M:%S.') + '%06dZ' % (fields.get('nanos', 0) // 1000)
    return t.strftime('%Y-%m-%dT%H:%M:%SZ')


def _message(name, buf):
    schema = MESSAGES[name]
    out = {}
    for num, wt, v in _fields(buf):
        if num not in schema:
            continue    # an unknown field: proto2 skips it, as the server's decoder does
        key, t = schema[num]
        if isinstance(t, tuple) and t[0] == 'map':
            if wt != _LEN:
                raise DecodeError('map entry with wire type %d' % wt)
            entry = {n: (w, x) for n, w, x in _fields(v)}
            k = _scalar(t[1], *entry[1]) if 1 in entry else ''
            val = _value(t[2], *entry[2]) if 2 in entry else ''
            out.setdefault(key, {})[k] = val
        elif isinstance(t, tuple) and t[0] == 'repeated':
            out.setdefault(key, []).append(_value(t[1], wt, v))
        else:
            out[key] = _value(t, wt, v)
    return out


def _value(t, wt, v):
    if t in MESSAGES:
        if wt != _LEN:
            raise DecodeError('%s with wire type %d' % (t, wt))
        m = _message(t, v)
        if t in ('Time', 'MicroTime'):
            return _time(m, t == 'MicroTime')
        if t == 'FieldsV1':
            return _fields_v1(m.get('Raw', b''))
        return m
    return _scalar(t, wt, v)


def _fields_v1(raw):
    try:
        return json.loads(raw.decode('utf-8') or '{}')
    except (UnicodeDecodeError, ValueError):
        raise DecodeError('fieldsV1 is not JSON')


def decode(body):
    """(apiVersion, kind, object) of a protobuf request body; DecodeError
    when it is not one, KeyError (the kind) when its kind is not decoded
    here."""
    if not body.startswith(MAGIC):
        raise DecodeError('no "k8s\\x00" prefix')
    unknown = _message('Unknown', body[len(MAGIC):])
    tm = unknown.get('typeMeta', {})
    api_version, kind = tm.get('apiVersion', ''), tm.get('kind', '')
    if unknown.get('contentEncoding'):
        raise DecodeError('content encoding %r' % unknown['contentEncoding'])
    name = KINDS.get((api_version, kind))
    if name is None:
        raise KeyError('%s %s' % (api_version, kind))
    obj = {'kind': kind, 'apiVersion': api_version}
    obj.update(_message(name, unknown.get('raw', b'')))
    return api_version, kind, obj


# ---- encoding, for tests: what client-go sends ----

def _enc_varint(v):
    v &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = v & 0x7f
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _enc_field(num, wt, payload):
    key = _enc_varint(num << 3 | wt)
    if wt == _LEN:
        return key + _enc_varint(len(payload)) + payload
    return key + payload


def _enc_value(t, v):
    if t in MESSAGES:
        if t in ('Time', 'MicroTime'):
            fmt = '%Y-%m-%dT%H:%M:%S.%fZ' if '.' in v else '%Y-%m-%dT%H:%M:%SZ'
            d = datetime.datetime.strptime(v, fmt).replace(tzinfo=datetime.timezone.utc)
            v = {'seconds': int(d.timestamp()), 'nanos': d.microsecond * 1000}
        elif t == 'FieldsV1':
            v = {'Raw': json.dumps(v).encode()}
        return _LEN, encode_message(t, v)
    if t == 'string':
        return _LEN, v.encode('utf-8')
    if t == 'bytes':
        return _LEN, base64.b64decode(v)
    if t == 'rawbytes':
        return _LEN, v
    return _VARINT, _enc_varint(int(v))


def encode_message(name, obj):
    by_key = {k: (num, t) for num, (k, t) in MESSAGES[name].items()}
    out = b''
    for key, v in obj.items():
        if key not in by_key:
            continue
        num, t = by_key[key]
        if isinstance(t, tuple) and t[0] == 'map':
            for mk, mv in v.items():
                e = _enc_field(1, *_enc_value(t[1], mk)) + _enc_field(2, *_enc_value(t[2], mv))
                out += _enc_field(num, _LEN, e)
        elif isinstance(t, tuple) and t[0] == 'repeated':
            for item in v:
                out += _enc_field(num, *_enc_value(t[1], item))
        else:
            out += _enc_field(num, *_enc_value(t, v))
    return out


def encode(obj):
    """A JSON-form object of a kind in KINDS as client-go sends it."""
    name = KINDS[(obj['apiVersion'], obj['kind'])]
    raw = encode_message(name, {k: v for k, v in obj.items() if k not in ('apiVersion', 'kind')})
    return MAGIC + encode_message('Unknown', {'typeMeta': {'apiVersion': obj['apiVersion'], 'kind': obj['kind']},
                                              'raw': raw})
