#!/usr/bin/python3
"""Swagger 2.0 helpers for the reference service.

What is modelled here, and from where:
  * routing over swagger.yaml's paths (static segments win over {params},
    like go-openapi's denco router), 404/405 as go-openapi answers them;
  * request body decoding with Go's encoding/json semantics as used by
    go-openapi's JSON consumer (json.Decoder: first value only, trailing
    bytes ignored, UnmarshalTypeError for wrong JSON types -> HTTP 400);
  * model validation with go-swagger/go-openapi semantics (required, enum,
    format, pattern, min/max, lengths, items; errors carry the go-openapi
    codes 601.. and messages, e.g. 606 "step_type in body should be one of
    [...]", served as HTTP 422 with only the first error, like
    errors.ServeError does for a CompositeError);
  * re-marshalling a decoded value through a model the way the service does
    with json.Unmarshal + json.Marshal of a go-swagger struct (unknown keys
    dropped, keys sorted, scalar zero values omitted, arrays kept).

Standard library + python3-yaml only.
"""

import decimal
import ipaddress
import json
import re

try:
    import yaml
except ImportError:  # the caller decides what to do (tests exit 77)
    yaml = None


# go-openapi/errors codes (errors/schema.go: maximumValidHTTPCode = 600, iota)
INVALID_TYPE = 601
REQUIRED = 602
TOO_LONG = 603
TOO_SHORT = 604
PATTERN = 605
ENUM = 606
MULTIPLE_OF = 607
MAX = 608
MIN = 609
UNIQUE = 610
MAX_ITEMS = 611
MIN_ITEMS = 612
UNALLOWED_PROPERTY = 616


class ValidationError(object):
    """One go-openapi validation error: numeric code + message."""

    __slots__ = ("code", "message")

    def __init__(self, code, message):
        self.code = code
        self.message = message

    def http_status(self):
        # errors.ServeError: asHTTPCode(code >= 600 -> 422)
        return 422 if self.code >= 600 else self.code

    def as_dict(self):
        return {"code": self.code, "message": self.message}

    def __repr__(self):
        return "ValidationError(%d, %r)" % (self.code, self.message)


class GoJSONError(Exception):
    """A json.Decoder error, with Go's message text (approximated)."""


class GoNum(float):
    """A JSON number written with a fraction or exponent (keeps its text)."""

    def __new__(cls, text):
        obj = float.__new__(cls, text)
        obj.raw = text
        return obj


def _reject_constant(name):
    raise ValueError("invalid constant %s" % name)


_DECODER = json.JSONDecoder(parse_float=GoNum, parse_constant=_reject_constant)
_WS = " \t\r\n"


def go_decode(raw, strict=False):
    """Decode the first JSON value of raw (bytes or str) like json.Decoder.

    Returns the value; raises GoJSONError with a Go-like message.
    Trailing data after the first value is ignored, as with json.Decoder;
    strict=True behaves like json.Unmarshal (only whitespace may follow).
    """
    if isinstance(raw, bytes):
        text = raw.decode("utf-8", "replace")
    else:
        text = raw
    i = 0
    while i < len(text) and text[i] in _WS:
        i += 1
    if i >= len(text):
        raise GoJSONError("EOF")
    try:
        value, end = _DECODER.raw_decode(text, i)
        if strict:
            while end < len(text) and text[end] in _WS:
                end += 1
            if end < len(text):
                raise GoJSONError("invalid character %s after top-level value" % _go_quote_char(text[end]))
    except json.JSONDecodeError as e:
        if e.pos >= len(text.rstrip(_WS)):
            raise GoJSONError("unexpected EOF")
        ch = text[e.pos]
        if e.pos == i:
            raise GoJSONError("invalid character %s looking for beginning of value" % _go_quote_char(ch))
        raise GoJSONError("invalid character %s %s" % (_go_quote_char(ch), _go_context(e.msg)))
    except ValueError as e:  # NaN / Infinity
        raise GoJSONError("invalid character 'N' looking for beginning of value" if "NaN" in str(e)
                          else "invalid character 'I' looking for beginning of value")
    return value


def _go_quote_char(ch):
    if ch == "'":
        return "'\\''"
    if ch == '"':
        return "'\"'"
    if ord(ch) < 0x20:
        return "'\\x%02x'" % ord(ch)
    return "'%s'" % ch


def _go_context(msg):
    if "delimiter" in msg and "','" in msg:
        return "after object key:value pair"
    if "':'" in msg:
        return "after object key"
    if "property name" in msg:
        return "looking for beginning of object key string"
    if "control character" in msg:
        return "in string literal"
    return "looking for beginning of value"


# ---------------------------------------------------------------------------
# Go-style JSON encoding (encoding/json)


def go_float(f):
    """strconv.FormatFloat(f, 'f' or 'e', -1, 64) as encoding/json uses it."""
    if f != f or f in (float("inf"), float("-inf")):
        raise ValueError("unsupported float")
    a = abs(f)
    if a != 0 and (a < 1e-6 or a >= 1e21):
        s = repr(float(f))
        # Go: 1e-07 / 1e+21 (two-digit exponent at least)
        m = re.match(r"^(-?[0-9.]+)e([+-]?)([0-9]+)$", s)
        if m:
            sign = m.group(2) or "+"
            exp = m.group(3).lstrip("0").rjust(2, "0")
            s = "%se%s%s" % (m.group(1), sign, exp)
        return s
    if float(f).is_integer():
        return str(int(f))
    return format(decimal.Decimal(repr(float(f))), "f")


def _go_str(s, escape_html):
    out = json.dumps(s, ensure_ascii=False)
    out = out.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    if escape_html:
        out = out.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return out


_GO_QUOTE_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t",
                     "\v": "\\v", "\\": "\\\\", '"': '\\"'}


def go_quote(s):
    """Go's strconv.Quote (fmt's %q of a string): double-quoted, with Go
    escapes for the quote, the backslash and what is not printable."""
    out = ['"']
    for ch in s:
        if ch in _GO_QUOTE_ESCAPES:
            out.append(_GO_QUOTE_ESCAPES[ch])
        elif ch.isprintable():
            out.append(ch)
        elif ord(ch) < 0x80:
            out.append("\\x%02x" % ord(ch))
        elif ord(ch) < 0x10000:
            out.append("\\u%04x" % ord(ch))
        else:
            out.append("\\U%08x" % ord(ch))
    out.append('"')
    return "".join(out)


def go_dumps(value, escape_html=True):
    """Compact JSON the way Go's json.Marshal writes it (dict order kept)."""
    parts = []
    _go_dump(value, parts, escape_html)
    return "".join(parts)


def _go_dump(v, parts, esc):
    if v is None:
        parts.append("null")
    elif v is True:
        parts.append("true")
    elif v is False:
        parts.append("false")
    elif isinstance(v, int):
        parts.append(str(v))
    elif isinstance(v, float):
        parts.append(go_float(v))
    elif isinstance(v, str):
        parts.append(_go_str(v, esc))
    elif isinstance(v, dict):
        parts.append("{")
        first = True
        for k, item in v.items():
            if not first:
                parts.append(",")
            first = False
            parts.append(_go_str(str(k), esc))
            parts.append(":")
            _go_dump(item, parts, esc)
        parts.append("}")
    elif isinstance(v, (list, tuple)):
        parts.append("[")
        for i, item in enumerate(v):
            if i:
                parts.append(",")
            _go_dump(item, parts, esc)
        parts.append("]")
    else:
        raise TypeError("cannot encode %r" % (v,))


# ---------------------------------------------------------------------------
# formats (go-openapi/strfmt)

_UUID_RE = re.compile(r"(?i)^(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{32})$")
_MAC_RE = re.compile(r"(?i)^(?:[0-9a-f]{2}(?:[:-][0-9a-f]{2}){5}|[0-9a-f]{2}(?:[:-][0-9a-f]{2}){7}|"
                     r"[0-9a-f]{2}(?:[:-][0-9a-f]{2}){19}|[0-9a-f]{4}(?:\.[0-9a-f]{4}){2,9})$")
_DATETIME_RE = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:[Zz]|[+-]\d{2}:?\d{2})?$")


def _is_ip(s, version):
    try:
        ip = ipaddress.ip_address(s)
    except ValueError:
        # Go's net.ParseIP also takes IPv4-mapped forms such as ::ffff:1.2.3.4
        return False
    if version == 4:
        return "." in s
    return ":" in s and ip is not None


def check_format(fmt, value):
    """True if value (a string) satisfies the strfmt format (unknown: True)."""
    if fmt == "uuid":
        return bool(_UUID_RE.match(value))
    if fmt == "ipv4":
        return _is_ip(value, 4)
    if fmt == "ipv6":
        return _is_ip(value, 6)
    if fmt == "mac":
        return bool(_MAC_RE.match(value))
    if fmt == "date-time":
        return bool(_DATETIME_RE.match(value))
    if fmt == "cidr":
        try:
            ipaddress.ip_network(value, strict=False)
            return "/" in value
        except ValueError:
            return False
    return True


# ---------------------------------------------------------------------------
# schema access


def _camel(name):
    return "".join(p[:1].upper() + p[1:] for p in re.split(r"[-_ ]", name) if p)


class Swagger(object):
    """swagger.yaml loaded, with $ref resolution and a router."""

    def __init__(self, path=None, doc=None):
        """From swagger.yaml at path, or from an already loaded doc."""
        if doc is None:
            if yaml is None:
                raise RuntimeError("python3-yaml is not installed")
            with open(path, "r", encoding="utf-8") as f:
                doc = yaml.safe_load(f)
        self.doc = doc
        self.base_path = self.doc.get("basePath", "")
        self.definitions = self.doc.get("definitions", {})
        self.global_security = self.doc.get("security", [])
        self.global_consumes = self.doc.get("consumes", ["application/json"])
        self.global_produces = self.doc.get("produces", ["application/json"])
        self._routes = []
        for tmpl, item in self.doc.get("paths", {}).items():
            segs = [s for s in tmpl.split("/") if s]
            self._routes.append((tmpl, segs, item))
        # static segments win: sort by the positions of parameter segments
        self._routes.sort(key=lambda r: [1 if s.startswith("{") else 0 for s in r[1]])

    # -- schemas --------------------------------------------------------
    def resolve(self, schema):
        seen = 0
        while isinstance(schema, dict) and "$ref" in schema:
            ref = schema["$ref"]
            if not ref.startswith("#/definitions/"):
                raise KeyError(ref)
            extra = {k: v for k, v in schema.items() if k != "$ref"}
            schema = self.definitions[ref[len("#/definitions/"):]]
            if extra:
                merged = dict(schema)
                merged.update(extra)
                schema = merged
            seen += 1
            if seen > 50:
                raise RecursionError(ref)
        return schema

    def definition(self, name):
        return self.definitions[name]

    def ref_name(self, schema):
        if isinstance(schema, dict) and "$ref" in schema:
            return schema["$ref"].split("/")[-1]
        return None

    def properties(self, schema):
        """Merged properties/required of an object schema (allOf flattened)."""
        schema = self.resolve(schema)
        props = {}
        required = []
        for part in schema.get("allOf", []):
            p, r = self.properties(part)
            props.update(p)
            required.extend(r)
        props.update(schema.get("properties", {}) or {})
        required.extend(schema.get("required", []) or [])
        return props, required

    def schema_type(self, schema):
        schema = self.resolve(schema)
        t = schema.get("type")
        if t:
            return t
        if "properties" in schema or "allOf" in schema:
            return "object"
        if "items" in schema:
            return "array"
        return None

    # -- routing --------------------------------------------------------
    def route(self, method, path):
        """Match path (without basePath) -> (template, op, path_params).

        Returns (None, None, None) for no path, (template, None, allowed) for a
        path without that method.
        """
        segs = path.split("/")[1:] if path.startswith("/") else path.split("/")
        if any(s == "" for s in segs):
            return None, None, None   # denco: no route for empty segments / trailing slash
        methods_seen = None
        for tmpl, tsegs, item in self._routes:
            if len(tsegs) != len(segs):
                continue
            params = {}
            ok = True
            for t, s in zip(tsegs, segs):
                if t.startswith("{") and t.endswith("}"):
                    params[t[1:-1]] = s
                elif t != s:
                    ok = False
                    break
            if not ok:
                continue
            op = item.get(method.lower())
            if op is None:
                if methods_seen is None:
                    methods_seen = (tmpl, sorted(m.upper() for m in item if m in
                                                 ("get", "put", "post", "delete", "patch", "head", "options")))
                continue
            return tmpl, op, params
        if methods_seen:
            return methods_seen[0], None, methods_seen[1]
        return None, None, None

    def operation(self, op_id):
        for tmpl, _segs, item in self._routes:
            for m, op in item.items():
                if isinstance(op, dict) and op.get("operationId") == op_id:
                    return tmpl, m.upper(), op
        raise KeyError(op_id)

    def op_security(self, op):
        sec = op.get("security", self.global_security)
        names = []
        for req in sec or []:
            names.extend(req.keys())
        return names

    def op_consumes(self, op):
        return op.get("consumes", self.global_consumes)

    def op_produces(self, op):
        return op.get("produces", self.global_produces)

    # -- Go unmarshal type check ---------------------------------------
    def go_type_name(self, schema):
        name = self.ref_name(schema)
        s = self.resolve(schema)
        t = self.schema_type(s)
        if name:
            if t in ("object", None) or "enum" in s:
                return "models." + _camel(name)
            if t == "array":
                return "models." + _camel(name)
        if t == "string":
            fmt = s.get("format")
            return {"uuid": "strfmt.UUID", "date-time": "strfmt.DateTime", "ipv4": "strfmt.IPv4",
                    "ipv6": "strfmt.IPv6", "mac": "strfmt.MAC"}.get(fmt, "string")
        if t == "integer":
            return "int32" if s.get("format") == "int32" else "int64"
        if t == "number":
            return "float32" if s.get("format") == "float" else "float64"
        if t == "boolean":
            return "bool"
        if t == "array":
            return "[]" + self.go_type_name(s.get("items", {}))
        return "interface {}"

    def go_unmarshal_error(self, schema, value, model=None):
        """The first json.Unmarshal type error decoding value into schema's Go
        type, as Go words it, or None."""
        model = model or _camel(self.ref_name(schema) or "value")
        return self._unmarshal(schema, value, model, [], True)

    def _unmarshal(self, schema, v, model, path, top):
        if v is None:
            return None
        s = self.resolve(schema)
        t = self.schema_type(s)
        kind = _json_kind(v)

        def err():
            # encoding/json: "number <literal>" only when a number does not fit an integer
            word = _go_value_word(v) if t == "integer" else kind
            if top or not path:
                return "json: cannot unmarshal %s into Go value of type %s" % (word, self.go_type_name(schema))
            return "json: cannot unmarshal %s into Go struct field %s.%s of type %s" % (
                word, model, ".".join(path), self.go_type_name(schema))

        if t is None:
            return None
        if t == "string":
            if kind != "string":
                return err()
            if s.get("format") == "date-time" and not _DATETIME_RE.match(v):
                return 'parsing time "%s" as "2006-01-02T15:04:05Z07:00": cannot parse "%s" as "2006"' % (
                    json.dumps(v)[1:-1], v[:4])
            return None
        if t == "integer":
            if kind != "number":
                return err()
            if isinstance(v, float):
                return err()
            lim = 2 ** 31 if s.get("format") == "int32" else 2 ** 63
            if not -lim <= v < lim:
                return err()
            return None
        if t == "number":
            return None if kind == "number" else err()
        if t == "boolean":
            return None if kind == "bool" else err()
        if t == "array":
            if kind != "array":
                return err()
            items = s.get("items", {})
            for item in v:
                e = self._unmarshal(items, item, model, path, top if not path else False)
                if e:
                    return e
            return None
        if t == "object":
            props, _req = self.properties(s)
            extra = s.get("additionalProperties")
            if not props and extra is None and not self.ref_name(schema):
                # go-swagger makes a bare object schema interface{}: any JSON
                return None
            if kind != "object":
                return err()
            for k, item in v.items():
                if k in props:
                    e = self._unmarshal(props[k], item, model, path + [k], False)
                elif isinstance(extra, dict):
                    e = self._unmarshal(extra, item, model, path + [k], False)
                else:
                    e = None
                if e:
                    return e
            return None
        return None

    # -- validation (go-swagger generated Validate) -------------------
    def validate(self, schema, value, name="", where="body"):
        """All validation errors for value against schema, in go-swagger order."""
        errs = []
        self._validate(schema, value, name, where, errs)
        return errs

    def _validate(self, schema, v, name, where, errs):
        s = self.resolve(schema)
        t = self.schema_type(s)
        if v is None:
            return
        if t == "object":
            if not isinstance(v, dict):
                return
            props, required = self.properties(s)
            for pname in sorted(set(props) | set(required)):
                full = "%s.%s" % (name, pname) if name else pname
                pschema = props.get(pname, {})
                present = pname in v and v[pname] is not None
                if pname in required:
                    if not present:
                        errs.append(ValidationError(REQUIRED, _msg_in("%s in %s is required", "%s is required",
                                                                      full, where)))
                        continue
                if present:
                    self._validate(pschema, v[pname], full, where, errs)
            if s.get("additionalProperties") is False:
                for k in v:
                    if k not in props:
                        errs.append(ValidationError(UNALLOWED_PROPERTY,
                                                    "%s.%s in %s is a forbidden property" % (name, k, where)
                                                    if where else "%s.%s is a forbidden property" % (name, k)))
            return
        if t == "array":
            if not isinstance(v, list):
                return
            if "minItems" in s and len(v) < s["minItems"]:
                errs.append(ValidationError(MIN_ITEMS, _msg_in("%s in %s should have at least %d items",
                                                               "%s should have at least %d items",
                                                               name, where, s["minItems"])))
            if "maxItems" in s and len(v) > s["maxItems"]:
                errs.append(ValidationError(MAX_ITEMS, _msg_in("%s in %s should have at most %d items",
                                                               "%s should have at most %d items",
                                                               name, where, s["maxItems"])))
            if s.get("uniqueItems"):
                seen = []
                for item in v:
                    if item in seen:
                        errs.append(ValidationError(UNIQUE, _msg_in("%s in %s shouldn't contain duplicates",
                                                                    "%s shouldn't contain duplicates",
                                                                    name, where)))
                        break
                    seen.append(item)
            items = s.get("items", {})
            for i, item in enumerate(v):
                self._validate(items, item, "%s.%d" % (name, i) if name else str(i), where, errs)
            return
        if t == "string":
            if not isinstance(v, str):
                return
            if "enum" in s and v not in s["enum"]:
                errs.append(ValidationError(ENUM, _enum_msg(name, where, s["enum"])))
                return
            if "minLength" in s and len(v) < s["minLength"]:
                errs.append(ValidationError(TOO_SHORT, _msg_in("%s in %s should be at least %d chars long",
                                                               "%s should be at least %d chars long",
                                                               name, where, s["minLength"])))
            if "maxLength" in s and len(v) > s["maxLength"]:
                errs.append(ValidationError(TOO_LONG, _msg_in("%s in %s should be at most %d chars long",
                                                              "%s should be at most %d chars long",
                                                              name, where, s["maxLength"])))
            if "pattern" in s and not re.search(s["pattern"], v):
                errs.append(ValidationError(PATTERN, _msg_in("%s in %s should match '%s'", "%s should match '%s'",
                                                             name, where, s["pattern"])))
            fmt = s.get("format")
            if fmt and not check_format(fmt, v):
                errs.append(ValidationError(INVALID_TYPE, '%s in %s must be of type %s: %s' % (
                    name, where, fmt, json.dumps(v)) if where else '%s must be of type %s: %s' % (
                    name, fmt, json.dumps(v))))
            return
        if t in ("integer", "number"):
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                return
            if "enum" in s and v not in s["enum"]:
                errs.append(ValidationError(ENUM, _enum_msg(name, where, s["enum"])))
            if "minimum" in s:
                excl = s.get("exclusiveMinimum", False)
                if v < s["minimum"] or (excl and v == s["minimum"]):
                    tmpl = "%s in %s should be greater than %v" if excl else \
                        "%s in %s should be greater than or equal to %v"
                    errs.append(ValidationError(MIN, tmpl.replace("%v", _go_num(s["minimum"])) % (name, where)))
            if "maximum" in s:
                excl = s.get("exclusiveMaximum", False)
                if v > s["maximum"] or (excl and v == s["maximum"]):
                    tmpl = "%s in %s should be less than %v" if excl else \
                        "%s in %s should be less than or equal to %v"
                    errs.append(ValidationError(MAX, tmpl.replace("%v", _go_num(s["maximum"])) % (name, where)))
            return
        if t == "boolean":
            return

    # -- unknown keys (warnings, or json.Decoder's DisallowUnknownFields)
    def _unknown(self, schema, v, name, strict):
        """(path, key) of the keys of v that schema does not declare, in
        the order a decoder meets them. strict: as Go's struct decoding does,
        so a free object (no properties) takes any key."""
        out = []
        s = self.resolve(schema)
        t = self.schema_type(s)
        if t == "object" and isinstance(v, dict):
            props, _r = self.properties(s)
            extra = s.get("additionalProperties")
            for k, item in v.items():
                full = "%s.%s" % (name, k) if name else k
                if k in props:
                    out.extend(self._unknown(props[k], item, full, strict))
                elif isinstance(extra, dict):
                    out.extend(self._unknown(extra, item, full, strict))
                elif extra in (None, False) and (props or not strict):
                    out.append((full, k))
        elif t == "array" and isinstance(v, list):
            for i, item in enumerate(v):
                out.extend(self._unknown(s.get("items", {}), item, "%s.%d" % (name, i) if name else str(i), strict))
        return out

    def unknown_keys(self, schema, v, name=""):
        """Dotted paths of the keys schema does not declare (the service
        ignores them unless it decodes strictly)."""
        return [full for full, _k in self._unknown(schema, v, name, False)]

    def strict_unknown(self, schema, v):
        """The keys json.Decoder with DisallowUnknownFields refuses in v,
        in the order it meets them: keys a struct (an object schema with
        properties) does not declare. Maps (additionalProperties) and free
        objects take any key."""
        return [k for _full, k in self._unknown(schema, v, "", True)]

    # -- re-marshal through the Go struct (json.Unmarshal + json.Marshal)
    def go_filter(self, schema, v, required=False):
        """The value json.Marshal writes after json.Unmarshal of v into the
        go-swagger type for schema. Returns (present, value)."""
        s = self.resolve(schema)
        t = self.schema_type(s)
        omit = s.get("x-omitempty")
        nullable = s.get("x-nullable", True)
        if t == "object":
            props, req = self.properties(s)
            if not props and isinstance(s.get("additionalProperties"), (dict, bool)):
                if not v:
                    return False, None
                return True, v
            if not isinstance(v, dict):
                if nullable is False:
                    v = {}
                else:
                    return (required or omit is False), None
            out = {}
            for k in sorted(props):
                present, item = self.go_filter(props[k], v.get(k), k in req)
                if present:
                    out[k] = item
            return True, out
        if t == "array":
            if not isinstance(v, list):
                # nil slice: encoded as null unless omitempty
                return (omit is not True), None
            if omit is True and not v:
                return False, None
            items = s.get("items", {})
            out = []
            for item in v:
                _p, x = self.go_filter(items, item, True)
                out.append(x)
            return True, out
        zero = {"string": "", "integer": 0, "number": 0, "boolean": False}.get(t)
        if v is None:
            v = zero
        if t == "integer" and isinstance(v, float):
            v = int(v)
        if required or omit is False:
            return True, v
        if v == zero:
            return False, None
        return True, v


def _json_kind(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    if isinstance(v, dict):
        return "object"
    return "?"


def _go_value_word(v):
    k = _json_kind(v)
    if k == "number":
        raw = getattr(v, "raw", None)
        return "number %s" % (raw if raw is not None else v) if isinstance(v, float) or \
            (isinstance(v, int) and abs(v) >= 2 ** 31) else "number"
    return k


def _go_num(x):
    if isinstance(x, float):
        return go_float(x)
    return str(x)


def _msg_in(tmpl, tmpl_noin, name, where, *rest):
    if where:
        return tmpl % ((name, where) + rest)
    return tmpl_noin % ((name,) + rest)


def _enum_msg(name, where, values):
    # fmt %v of []interface{}: [a b c]
    vals = "[" + " ".join(str(x) for x in values) + "]"
    if where:
        return "%s in %s should be one of %s" % (name, where, vals)
    return "%s should be one of %s" % (name, vals)


def humanize_bytes(n):
    """go-humanize Bytes(): SI units, one decimal below 10."""
    sizes = ["B", "kB", "MB", "GB", "TB", "PB", "EB"]
    if n < 10:
        return "%d B" % n
    import math
    e = int(math.floor(math.log(n) / math.log(1000)))
    e = min(e, len(sizes) - 1)
    val = math.floor(n / (1000 ** e) * 10 + 0.5) / 10
    if val < 10:
        return "%.1f %s" % (val, sizes[e])
    return "%.0f %s" % (val, sizes[e])
