#!/usr/bin/python3
"""refservice: a faithful fake of assisted-service's REST API (v2): what the
agent, the installer and the controller call, and the user-facing part
cradle-hub calls; for testing the cradle agent, installer and hub.

Usage: refservice.py [--bind 127.0.0.1] [--port 0 --port-file F] [--scenario S.json]
                     [--record requests.jsonl] [--logs-dir DIR] [--token T]
                     [--tls-cert C --tls-key K] [--swagger swagger.yaml] [--api-generation 2023|head]
                     [--quiet]

See README.md beside this file for the scenario format and the control API.
"""

import argparse
import email.parser
import email.policy
import hashlib
import io
import json
import os
import re
import signal
import socket
import ssl
import struct
import sys
import tarfile
import threading
import time
import traceback
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import generations  # noqa: E402
import swaggerval  # noqa: E402
from swaggerval import GoJSONError, Swagger, ValidationError, go_decode, go_dumps, go_quote  # noqa: E402
import refmodel  # noqa: E402
from refmodel import ApiError, Model, now_ms  # noqa: E402

SWAGGER_REL = os.path.join("shared", "reference", "assisted-service", "swagger.yaml")
CONTROL_PREFIX = "/__control"

# observed/01
COMPONENT_VERSIONS = {"versions": {
    "assisted-installer": "quay.io/edge-infrastructure/assisted-installer:latest",
    "assisted-installer-controller": "quay.io/edge-infrastructure/assisted-installer-controller:latest",
    "assisted-installer-service": "Unknown",
    "discovery-agent": "quay.io/edge-infrastructure/assisted-installer-agent:latest"}}

SECRET_HEADERS = ("x-secret-key", "authorization", "watcher-authorization", "image-token")
SECRET_QUERY = ("api_key", "image_token")


def find_swagger(explicit=None):
    if explicit:
        return explicit
    env = os.environ.get("REFSERVICE_SWAGGER")
    if env:
        return env
    vendored = os.path.join(os.path.dirname(HERE), "reference", "assisted-service", "swagger.yaml")
    if os.path.exists(vendored):
        return vendored
    d = HERE
    while True:
        cand = os.path.join(d, SWAGGER_REL)
        if os.path.exists(cand):
            return cand
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    raise FileNotFoundError("swagger.yaml not found (looked for %s above %s); use --swagger" % (SWAGGER_REL, HERE))


class Response(object):
    def __init__(self, status, body=b"", content_type=None, headers=None):
        self.status = status
        if isinstance(body, str):
            body = body.encode("utf-8")
        self.body = body
        self.content_type = content_type
        self.headers = headers or {}
        self.action = None   # fault actions: reset, close, truncate
        self.json = None


def json_response(status, obj, headers=None):
    # go-openapi runtime.JSONProducer: json.Encoder with SetEscapeHTML(false), trailing newline
    r = Response(status, go_dumps(obj, escape_html=False) + "\n", "application/json", headers)
    r.json = obj
    return r


def error_response(err):
    return json_response(err.http_status(), err.body())


def openapi_error(code, message, headers=None):
    return json_response(422 if code >= 600 else code, {"code": code, "message": message}, headers)


# ---------------------------------------------------------------------------
# faults


class Faults(object):
    ACTIONS = ("status", "delay", "reset", "close", "garbage", "html", "truncate")

    def __init__(self):
        self.lock = threading.Lock()
        self.rules = []
        self.next_id = 1

    def clear(self):
        with self.lock:
            self.rules = []

    def add(self, spec):
        if not isinstance(spec, dict):
            raise ValueError("a fault rule is a JSON object")
        action = spec.get("action", "status")
        if action not in self.ACTIONS:
            raise ValueError("unknown fault action %r (one of %s)" % (action, ", ".join(self.ACTIONS)))
        rule = {
            "id": spec.get("id") or "f%d" % self.next_id,
            "method": (spec.get("method") or "").upper() or None,
            "path": spec.get("path") or ".*",
            "query": spec.get("query"),
            "skip": int(spec.get("skip", 0)),
            "count": spec.get("count", 1),
            "action": action,
            "status": spec.get("status"),
            "body": spec.get("body"),
            "content_type": spec.get("content_type"),
            "delay": float(spec.get("delay", 0)),
            "after": bool(spec.get("after", False)),
            "seen": 0,
            "applied": 0,
        }
        re.compile(rule["path"])
        if rule["query"]:
            re.compile(rule["query"])
        with self.lock:
            self.next_id += 1
            self.rules.append(rule)
        return dict(rule)

    def delete(self, rid):
        with self.lock:
            n = len(self.rules)
            self.rules = [r for r in self.rules if r["id"] != rid]
            return n != len(self.rules)

    def list(self):
        with self.lock:
            return [dict(r) for r in self.rules]

    def pick(self, method, path, query):
        with self.lock:
            for r in self.rules:
                if r["method"] and r["method"] != method:
                    continue
                if not re.search(r["path"], path):
                    continue
                if r["query"] and not re.search(r["query"], query or ""):
                    continue
                r["seen"] += 1
                if r["seen"] <= r["skip"]:
                    continue
                if r["count"] is not None and r["applied"] >= int(r["count"]):
                    continue
                r["applied"] += 1
                return dict(r)
        return None

    @staticmethod
    def response(rule):
        a = rule["action"]
        st = rule.get("status")
        body = rule.get("body")
        ct = rule.get("content_type")
        if a in ("reset", "close"):
            r = Response(0)
            r.action = a
            return r
        if a == "html":
            st = st or 502
            if body is None:
                body = "<html>\r\n<head><title>%d Bad Gateway</title></head>\r\n<body>\r\n<center><h1>%d Bad " \
                       "Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n" % (st, st)
            return Response(st, body, ct or "text/html")
        if a == "garbage":
            return Response(st or 200, body if body is not None else '{"instructions": [{"step_type": "inv',
                            ct or "application/json")
        if a == "truncate":
            r = Response(st or 200, body if body is not None else
                         '{"next_instruction_seconds":60,"post_step_action":"continue","instructions":null}\n',
                         ct or "application/json")
            r.action = "truncate"
            return r
        # status
        st = st or 500
        if body is None:
            return json_response(st, {"code": str(st), "href": "", "id": st, "kind": "Error",
                                      "reason": "fault injected by refservice (rule %s)" % rule["id"]})
        if isinstance(body, (dict, list)):
            return json_response(st, body)
        return Response(st, body, ct or "application/json")


# ---------------------------------------------------------------------------
# recording


class Recorder(object):
    def __init__(self, path=None):
        self.lock = threading.Lock()
        self.items = []
        self.seq = 0
        self.path = path
        self.fp = open(path, "a", encoding="utf-8") if path else None

    def clear(self):
        with self.lock:
            self.items = []

    def add(self, rec):
        with self.lock:
            self.seq += 1
            rec["seq"] = self.seq
            self.items.append(rec)
            if self.fp:
                self.fp.write(json.dumps(rec, sort_keys=True) + "\n")
                self.fp.flush()

    def query(self, since=0, path=None, method=None, operation=None):
        with self.lock:
            out = []
            for r in self.items:
                if r["seq"] <= since:
                    continue
                if path and not re.search(path, r["path"]):
                    continue
                if method and r["method"] != method.upper():
                    continue
                if operation and r.get("operation") != operation:
                    continue
                out.append(r)
            return out

    def close(self):
        if self.fp:
            self.fp.close()
            self.fp = None


# ---------------------------------------------------------------------------
# the API (go-openapi request pipeline + handlers)


def _accept_matches(accept, offers, default):
    """go-openapi middleware.NegotiateContentType (simplified: q=0 excluded)."""
    if not accept:
        return offers[0] if offers else default
    specs = []
    for part in accept.split(","):
        part = part.strip()
        if not part:
            continue
        fields = [f.strip() for f in part.split(";")]
        q = 1.0
        for f in fields[1:]:
            if f.startswith("q="):
                try:
                    q = float(f[2:])
                except ValueError:
                    q = 0.0
        if q > 0:
            specs.append(fields[0].lower())
    if not specs:
        return offers[0] if offers else default
    for offer in offers:
        o = offer.lower()
        for s in specs:
            if s == "*/*" or s == o or (s.endswith("/*") and o.startswith(s[:-1])):
                return offer
    return default


def go_param_name(name):
    """The name go-swagger's generated binder gives a body parameter in its
    errors ("new-cluster-params" -> "newClusterParams")."""
    words = [w for w in re.split(r"[-_]", name) if w]
    if not words:
        return name
    return words[0][:1].lower() + words[0][1:] + "".join(w[:1].upper() + w[1:] for w in words[1:])


_BOOL_TRUE = ("true", "1", "yes", "ok", "y", "on", "selected", "checked", "t", "enabled")
_BOOL_FALSE = ("false", "0", "no", "n", "off", "f", "disabled", "")


class Api(object):
    def __init__(self, swagger, model, token=None, logs_dir=None):
        # the swagger of each API generation (generations.py)
        self.views = {}
        for g in generations.GENERATIONS:
            doc = generations.swagger_doc(swagger.doc, g)
            self.views[g] = swagger if doc is swagger.doc else Swagger(doc=doc)
        self.model = model
        self.token = token
        self.logs_dir = logs_dir
        self.logs = []
        self.logs_lock = threading.Lock()

    @property
    def sw(self):
        """The swagger of the generation played now."""
        return self.views[self.model.generation()]

    # -- pipeline ----------------------------------------------------------
    def handle(self, method, path, rawquery, headers, body, rec):
        base = self.sw.base_path
        if not (path == base or path.startswith(base + "/")):
            return openapi_error(404, "path %s was not found" % path)
        sub = path[len(base):] or "/"
        tmpl, op, params = self.sw.route(method, sub)
        if tmpl is None:
            return openapi_error(404, "path %s was not found" % path)
        if op is None:
            allowed = params
            return openapi_error(405, "method %s is not allowed, but [%s] are" % (method, ",".join(allowed)),
                                 {"Allow": ",".join(allowed)})
        op_id = op.get("operationId")
        rec["operation"] = op_id
        rec["route"] = tmpl
        # security
        auth = self.authenticate(op, headers, rawquery, params)
        rec["auth"] = auth[0]
        if auth[1] is not None:
            return auth[1]
        # content type, response format
        has_body = bool(body) or headers.get("Transfer-Encoding", "").lower() == "chunked"
        req_ct = ""
        if has_body:
            ct = headers.get("Content-Type") or "application/octet-stream"
            req_ct = ct.split(";")[0].strip().lower()
            consumes = [c.lower() for c in self.sw.op_consumes(op)]
            if req_ct not in consumes:
                return openapi_error(415, "unsupported media type %s, only %s are allowed" % (
                    json.dumps(req_ct), "[" + " ".join(self.sw.op_consumes(op)) + "]"))
        produces = self.sw.op_produces(op)
        # middleware/validation.go responseFormat: NegotiateContentType(r, produces, "") == "" -> 406
        if produces and not _accept_matches(headers.get("Accept"), produces, ""):
            return openapi_error(406, "unsupported media type requested, only %s are available" % (
                "[" + " ".join(produces) + "]"))
        # parameters
        query = urllib.parse.parse_qs(rawquery, keep_blank_values=True)
        args, errors, warnings = self.bind(op, params, query, headers, body, req_ct)
        rec["validation_errors"] = [e.message for e in errors]
        if warnings:
            rec.setdefault("warnings", []).extend(warnings)
        if errors:
            e = errors[0]
            return openapi_error(e.code, e.message)
        handler = getattr(self, "op_" + op_id, None)
        if handler is None:
            return openapi_error(501, "operation %s has not yet been implemented by refservice" % op_id)
        with self.model.lock:
            self.model.monitor()
            try:
                return handler(args, headers, rec)
            except ApiError as err:
                if produces == ["application/octet-stream"]:
                    # the responder writes models.Error with the negotiated producer: go-openapi's
                    # ByteStreamProducer json.Marshal()s the struct, the header stays octet-stream
                    r = Response(err.http_status(), go_dumps(err.body()), "application/octet-stream")
                    r.json = err.body()
                    return r
                return error_response(err)

    def authenticate(self, op, headers, rawquery, path_params=None):
        if not self.token:
            return "none", None
        # a signed infra-env URL (api_key / image_token) carries the
        # infra-env's image token (the real service: a JWT naming the
        # infra-env), good for that infra-env's endpoints
        ie = self.model.infra_envs.get((path_params or {}).get("infra_env_id", ""))
        ie_token = ie.image_key[4] if ie is not None and ie.image_key else None
        schemes = self.sw.op_security(op)
        presented = []
        query = urllib.parse.parse_qs(rawquery)
        for s in schemes:
            if s == "agentAuth" and headers.get("X-Secret-Key") is not None:
                presented.append(headers.get("X-Secret-Key"))
            elif s == "userAuth" and headers.get("Authorization") is not None:
                v = headers.get("Authorization")
                presented.append(v[7:] if v.lower().startswith("bearer ") else v)
            elif s == "urlAuth" and query.get("api_key"):
                presented.append(query["api_key"][0])
            elif s == "watcherAuth" and headers.get("Watcher-Authorization") is not None:
                presented.append(headers.get("Watcher-Authorization"))
            elif s == "imageAuth" and headers.get("Image-Token") is not None:
                presented.append(headers.get("Image-Token"))
            elif s == "imageURLAuth" and query.get("image_token"):
                presented.append(query["image_token"][0])
        if not presented or all(p == "" for p in presented):
            # go-openapi: no authenticator applied -> errors.Unauthenticated("invalid credentials")
            return "missing", json_response(401, {"code": 401, "message": "unauthenticated for invalid credentials"})
        if any(p == self.token for p in presented):
            return "ok", None
        if ie_token and any(p == ie_token for p in presented):
            return "ok", None
        if self.local_auth_signed(schemes, headers, query):
            return "ok", None
        return "wrong", json_response(401, {"code": 401, "message": "Unauthorized"})

    def local_auth_signed(self, schemes, headers, query):
        """AUTH_TYPE=local: a token the service signed for an infra-env that
        exists passes agentAuth and urlAuth for every operation, not only
        that infra-env's (pkg/auth/local_authenticator.go AuthAgentAuth,
        AuthURLAuth; authz.go gives local auth the none authorizer): the
        events URL of a cluster or a host signed with an infra-env's key,
        as cradle-hub publishes them, opens."""
        if self.model.auth_type() != "local":
            return False
        signed = []
        if "agentAuth" in schemes and headers.get("X-Secret-Key"):
            signed.append(headers.get("X-Secret-Key"))
        if "urlAuth" in schemes and query.get("api_key"):
            signed.append(query["api_key"][0])
        return any(self.model.infra_env_by_token(t) is not None for t in signed)

    def bind(self, op, path_params, query, headers, body, req_ct):
        args = {}
        errors = []
        warnings = []
        declared_query = set()
        for p in op.get("parameters", []):
            p = self.sw.resolve(p)
            name = p["name"]
            where = p["in"]
            if where == "path":
                raw = urllib.parse.unquote(path_params.get(name, ""))
                errors.extend(self._simple(p, raw, args))
            elif where == "query":
                declared_query.add(name)
                if name not in query:
                    if p.get("required"):
                        errors.append(ValidationError(swaggerval.REQUIRED, "%s in query is required" % name))
                    elif "default" in p:
                        args[name] = p["default"]
                    continue
                raw = query[name][0]
                if raw == "":
                    if p.get("required"):
                        errors.append(ValidationError(swaggerval.REQUIRED, "%s in query is required" % name))
                    continue
                if p.get("type") == "array":
                    # collectionFormat csv (the default); each item validated as items
                    raws = query[name] if p.get("collectionFormat") == "multi" else raw.split(",")
                    items = []
                    for i, item in enumerate(raws):
                        sub = dict(p.get("items") or {}, name="%s.%d" % (name, i), **{"in": where})
                        holder = {}
                        errs = self._simple(sub, item, holder)
                        errors.extend(errs)
                        if not errs:
                            items.append(holder[sub["name"]])
                    args[name] = items
                    continue
                errors.extend(self._simple(p, raw, args))
            elif where == "header":
                raw = headers.get(name)
                if raw is None:
                    for k in headers.keys():
                        if k.lower().replace("-", "_") == name.lower():
                            warnings.append("header %s is not %s: the service does not see it" % (k, name))
                    if p.get("required"):
                        errors.append(ValidationError(swaggerval.REQUIRED, "%s in header is required" % name))
                    continue
                errors.extend(self._simple(p, raw, args))
            elif where == "body":
                schema = p.get("schema", {})
                name = go_param_name(name)
                if not body:
                    if p.get("required"):
                        errors.append(ValidationError(swaggerval.REQUIRED, "%s in body is required" % name))
                    continue
                try:
                    value = go_decode(body)
                except GoJSONError as e:
                    if str(e) == "EOF":   # io.EOF: only whitespace was sent
                        if p.get("required"):
                            errors.append(ValidationError(swaggerval.REQUIRED, "%s in body is required" % name))
                        continue
                    errors.append(ValidationError(400, 'parsing %s body from "" failed, because %s' % (name, e)))
                    continue
                uerr = self.sw.go_unmarshal_error(schema, value)
                if uerr:
                    errors.append(ValidationError(400, 'parsing %s body from "" failed, because %s' % (name, uerr)))
                    continue
                if value is None and self.sw.schema_type(schema) == "object":
                    value = {}   # JSON null leaves Go's struct at its zero value
                if generations.strict(self.model.generation()):
                    # the UnknownFieldsRejectingConsumer: the first key its
                    # struct lacks (after a type error met first, approximately)
                    unknown = self.sw.strict_unknown(schema, value)
                    if unknown:
                        errors.append(ValidationError(400, 'parsing %s body from "" failed, because json: '
                                                           'unknown field "%s"' % (name, unknown[0])))
                        continue
                errors.extend(self.sw.validate(schema, value, "", "body"))
                unknown = self.sw.unknown_keys(schema, value)
                warnings.extend("unknown body key %s (ignored by the service)" % k for k in unknown)
                args["body"] = value
            elif where == "formData":
                if req_ct != "multipart/form-data":
                    if p.get("required"):
                        errors.append(ValidationError(swaggerval.REQUIRED, "%s in formData is required" % name))
                    continue
                try:
                    parts = parse_multipart(headers.get("Content-Type", ""), body)
                except ValueError as e:
                    errors.append(ValidationError(400, 'parsing %s formData from "" failed, because %s' % (name, e)))
                    continue
                part = parts.get(name)
                if part is None:
                    if p.get("required"):
                        errors.append(ValidationError(swaggerval.REQUIRED, "%s in formData is required" % name))
                    continue
                args[name] = part
                args["_parts"] = parts
        for k in query:
            if k not in declared_query:
                warnings.append("unknown query parameter %s (ignored by the service)" % k)
        return args, errors, warnings

    def _simple(self, p, raw, args):
        name = p["name"]
        where = p["in"]
        t = p.get("type", "string")
        fmt = p.get("format")
        if t == "integer":
            try:
                if not re.match(r"^[+-]?[0-9]+$", raw):
                    raise ValueError(raw)
                v = int(raw)
                lim = 2 ** 31 if fmt == "int32" else 2 ** 63
                if not -lim <= v < lim:
                    raise ValueError(raw)
            except ValueError:
                return [ValidationError(swaggerval.INVALID_TYPE, '%s in %s must be of type %s: %s' % (
                    name, where, "int32" if fmt == "int32" else "int64", json.dumps(raw)))]
            args[name] = v
            return []
        if t == "boolean":
            low = raw.strip().lower()
            if low in _BOOL_TRUE:
                args[name] = True
            elif low in _BOOL_FALSE:
                args[name] = False
            else:
                return [ValidationError(swaggerval.INVALID_TYPE, '%s in %s must be of type bool: %s' % (
                    name, where, json.dumps(raw)))]
            return []
        errs = self.sw.validate({k: v for k, v in p.items() if k in ("type", "enum", "pattern", "format",
                                                                     "minLength", "maxLength")},
                                raw, name, where)
        if not errs:
            args[name] = raw
        return errs

    # -- handlers (operationId) --------------------------------------------
    def op_v2RegisterHost(self, a, headers, rec):
        body, _h = self.model.register(a["infra_env_id"], a["body"], a.get("discovery_agent_version"))
        return json_response(201, body)

    def op_v2GetNextSteps(self, a, headers, rec):
        steps = self.model.next_steps(a["infra_env_id"], a["host_id"], a.get("timestamp"),
                                      a.get("discovery_agent_version"))
        return json_response(200, steps)

    def op_v2PostStepReply(self, a, headers, rec):
        reply = a.get("body")
        if reply is None:
            # body is optional in swagger; the handler dereferences it (nil pointer -> recovered panic)
            return json_response(500, {"code": 500, "message": "refservice: step reply without a body"})
        r = self.model.step_reply(a["infra_env_id"], a["host_id"], reply)
        rec["step_reply"] = r
        return Response(204)

    def op_v2UpdateHostInstallProgress(self, a, headers, rec):
        self.model.update_progress(a["infra_env_id"], a["host_id"], a["body"])
        return Response(200)

    def op_v2UpdateHostLogsProgress(self, a, headers, rec):
        self.model.host_logs_progress(a["infra_env_id"], a["host_id"], a["body"].get("logs_state") or "")
        return Response(204)

    def op_v2UpdateClusterLogsProgress(self, a, headers, rec):
        self.model.cluster_logs_progress(a["cluster_id"], a["body"].get("logs_state") or "")
        return Response(204)

    def op_v2GetHost(self, a, headers, rec):
        h = self.model.host(a["infra_env_id"], a["host_id"])
        return json_response(200, h.to_api())

    def op_v2ListHosts(self, a, headers, rec):
        # V2ListHosts looks the infra-env up first: an unknown one is a 404
        # ("record not found"), in b29f9bcf as in 2026
        self.model.infra_env(a["infra_env_id"])
        hosts = sorted((h for h in self.model.hosts.values() if h.infra_env_id == a["infra_env_id"]),
                       key=lambda h: h.seq)
        return json_response(200, [h.to_api() for h in hosts])

    def op_v2GetCluster(self, a, headers, rec):
        c = self.model.cluster(a["cluster_id"], bare_not_found=True)
        hosts = self.model.cluster_hosts(c.id)
        return json_response(200, self.model.cluster_api(c, include_hosts=not a.get("exclude-hosts", False)))

    def op_ListClusterHosts(self, a, headers, rec):
        c = self.model.cluster(a["cluster_id"])
        out = []
        for h in self.model.cluster_hosts(c.id):
            if a.get("role") and h.role != a["role"]:
                continue
            if a.get("status") and h.status != a["status"]:
                continue
            out.append(h.to_api(include_inventory=bool(a.get("with-inventory")),
                                include_connectivity=bool(a.get("with-connectivity"))))
        return json_response(200, out)

    def op_GetInfraEnv(self, a, headers, rec):
        return json_response(200, self.model.infra_env(a["infra_env_id"]).to_api())

    # -- infra-envs (user side) ----------------------------------------------
    def op_RegisterInfraEnv(self, a, headers, rec):
        return json_response(201, self.model.register_infra_env(a["body"]).to_api())

    def op_UpdateInfraEnv(self, a, headers, rec):
        return json_response(201, self.model.update_infra_env(a["infra_env_id"], a["body"]).to_api())

    def op_ListInfraEnvs(self, a, headers, rec):
        ies = [ie for ie in self.model.infra_envs.values()
               if not a.get("cluster_id") or ie.cluster_id == a["cluster_id"]]
        return json_response(200, [ie.to_api() for ie in ies])

    def op_DeregisterInfraEnv(self, a, headers, rec):
        self.model.deregister_infra_env(a["infra_env_id"])
        return Response(204)

    def op_GetInfraEnvDownloadURL(self, a, headers, rec):
        m = self.model
        ie = m.infra_env(a["infra_env_id"])
        if m.auth_type() != "none":
            ie.generated = False   # a signed URL is issued afresh
        m.generate_image(ie, event=False)
        return json_response(200, {"expires_at": ie.expires_at, "url": ie.download_url()})

    def op_GetInfraEnvPresignedFileURL(self, a, headers, rec):
        m = self.model
        ie = m.infra_env(a["infra_env_id"])
        if a.get("ipxe_script_type") and a["file_name"] != "ipxe-script":
            raise ApiError(400, "ipxe_script_type can be set only for \"ipxe-script\"")
        expires = refmodel.fmt_ms(refmodel.epoch_ms() + 4 * 3600 * 1000) if m.auth_type() == "rhsso" \
            else refmodel.ZERO_MS
        return json_response(200, {"expires_at": expires,
                                   "url": m.files_url(ie, a["file_name"], a.get("ipxe_script_type"))})

    def op_v2DownloadInfraEnvFiles(self, a, headers, rec):
        name, data = self.model.infra_env_file(a["infra_env_id"], a["file_name"], a.get("mac"),
                                               a.get("ipxe_script_type"))
        return file_response(name, data)

    def op_v2DeregisterHost(self, a, headers, rec):
        self.model.deregister_host(a["infra_env_id"], a["host_id"])
        return Response(204)

    def op_v2UpdateHost(self, a, headers, rec):
        return json_response(201, self.model.update_host(a["infra_env_id"], a["host_id"], a["body"]).to_api())

    def op_v2UpdateHostInstallerArgs(self, a, headers, rec):
        h = self.model.update_host_installer_args(a["infra_env_id"], a["host_id"], a["body"].get("args") or [])
        return json_response(201, h.to_api())

    def op_v2UpdateHostIgnition(self, a, headers, rec):
        self.model.update_host_ignition(a["infra_env_id"], a["host_id"], a["body"].get("config") or "")
        return Response(201)

    def op_BindHost(self, a, headers, rec):
        return json_response(200, self.model.bind_host(a["infra_env_id"], a["host_id"],
                                                       a["body"]["cluster_id"]).to_api())

    def op_UnbindHost(self, a, headers, rec):
        return json_response(200, self.model.unbind_host(a["infra_env_id"], a["host_id"]).to_api())

    def op_v2InstallHost(self, a, headers, rec):
        return json_response(202, self.model.install_host(a["infra_env_id"], a["host_id"]).to_api())

    def op_v2ListEvents(self, a, headers, rec):
        events, hdrs = self.model.list_events(a)
        return json_response(200, events, hdrs)

    def op_v2TriggerEvent(self, a, headers, rec):
        """events/api.go V2TriggerEvent: a user (or uncategorized) event is
        stored as it comes, stamped with the service's time; metrics events
        are kept apart; any other category is refused."""
        ev = a.get("body") or {}
        cat = ev.get("category") or ""
        if cat not in ("user", "", "metrics"):
            raise ApiError(400, "unexpected category %s" % cat)
        self.model.add_event(ev.get("name") or "", ev.get("message") or "", ev.get("severity") or "",
                             cluster_id=ev.get("cluster_id"), host_id=ev.get("host_id"),
                             infra_env_id=ev.get("infra_env_id"), props=ev.get("props") or None,
                             category="metrics" if cat == "metrics" else "user")
        return Response(201)

    def _cluster(self, status, c):
        return json_response(status, self.model.cluster_api(c))

    def op_v2InstallCluster(self, a, headers, rec):
        return self._cluster(202, self.model.rest_install_cluster(a["cluster_id"]))

    # -- clusters (user side) ---------------------------------------------------
    def op_v2RegisterCluster(self, a, headers, rec):
        _c, answer = self.model.register_cluster(a["body"])
        return json_response(201, answer)

    def op_v2ImportCluster(self, a, headers, rec):
        return self._cluster(201, self.model.import_cluster(a["body"]))

    def op_V2UpdateCluster(self, a, headers, rec):
        return self._cluster(201, self.model.update_cluster(a["cluster_id"], a["body"]))

    def op_v2ListClusters(self, a, headers, rec):
        m = self.model
        out = []
        for c in m.clusters.values():
            if a.get("openshift_cluster_id") and c.spec.get("openshift_cluster_id") != a["openshift_cluster_id"]:
                continue
            out.append(m.cluster_api(c, include_hosts=bool(a.get("with_hosts"))))
        return json_response(200, out)

    def op_v2DeregisterCluster(self, a, headers, rec):
        self.model.deregister_cluster(a["cluster_id"])
        return Response(204)

    def op_V2CancelInstallation(self, a, headers, rec):
        return self._cluster(202, self.model.cancel_installation(a["cluster_id"]))

    def op_v2ResetCluster(self, a, headers, rec):
        return self._cluster(202, self.model.reset_cluster(a["cluster_id"]))

    def op_TransformClusterToDay2(self, a, headers, rec):
        return self._cluster(202, self.model.transform_to_day2(a["cluster_id"]))

    def op_v2UpdateClusterInstallConfig(self, a, headers, rec):
        # 201 without a body, in b29f9bcf as in 2026
        self.model.update_install_config(a["cluster_id"], a.get("body") or "")
        return Response(201)

    def op_v2SetIgnoredValidations(self, a, headers, rec):
        return json_response(201, self.model.set_ignored_validations(a["cluster_id"], a.get("body") or {}))

    def op_v2GetIgnoredValidations(self, a, headers, rec):
        return json_response(200, self.model.ignored_validations(a["cluster_id"]))

    def op_V2ListClusterManifests(self, a, headers, rec):
        return json_response(200, self.model.list_manifests(a["cluster_id"]))

    def op_V2CreateClusterManifest(self, a, headers, rec):
        return json_response(201, self.model.create_manifest(a["cluster_id"], a["body"]))

    def op_V2DeleteClusterManifest(self, a, headers, rec):
        self.model.delete_manifest(a["cluster_id"], a.get("folder"), a.get("file_name") or "")
        return Response(200)

    def op_v2DownloadClusterManifest(self, a, headers, rec):
        name = a.get("file_name") or ""
        return file_response(name, self.model.manifest_content(a["cluster_id"], a.get("folder"), name))

    def op_V2DownloadClusterCredentials(self, a, headers, rec):
        return file_response(a["file_name"], self.model.cluster_credentials_file(a["cluster_id"], a["file_name"]))

    def op_V2GetCredentials(self, a, headers, rec):
        return json_response(200, self.model.credentials(a["cluster_id"]))

    # -- what the assisted-installer-controller calls -----------------------
    def op_v2UploadClusterIngressCert(self, a, headers, rec):
        self.model.upload_ingress_cert(a["cluster_id"], a.get("body") or "")
        return Response(201)

    def op_v2ReportMonitoredOperatorStatus(self, a, headers, rec):
        self.model.report_operator(a["cluster_id"], a.get("body") or {})
        return Response(200)

    def op_V2ListOfClusterOperators(self, a, headers, rec):
        return json_response(200, self.model.monitored_operators(a["cluster_id"], a.get("operator_name")))

    def op_v2CompleteInstallation(self, a, headers, rec):
        return self._cluster(202, self.model.complete_installation(a["cluster_id"], a.get("body") or {}))

    def op_v2UpdateClusterFinalizingProgress(self, a, headers, rec):
        self.model.set_finalizing_stage(a["cluster_id"], (a.get("body") or {}).get("finalizing_stage"))
        return Response(200)

    def op_v2ListComponentVersions(self, a, headers, rec):
        return json_response(200, COMPONENT_VERSIONS)

    def op_v2ListSupportedOpenshiftVersions(self, a, headers, rec):
        return json_response(200, self.model.openshift_versions())

    def op_v2DownloadHostIgnition(self, a, headers, rec):
        name, data = self.model.host_ignition(a["infra_env_id"], a["host_id"])
        return file_response(name, data)

    def op_V2DownloadClusterFiles(self, a, headers, rec):
        data = self.model.cluster_file(a["cluster_id"], a["file_name"])
        return file_response(a["file_name"], data)

    def op_V2UploadLogs(self, a, headers, rec):
        cluster_id = a["cluster_id"]
        logs_type = a["logs_type"]
        host_id = a.get("host_id")
        m = self.model
        h = None
        if logs_type == "host":
            if not host_id:
                raise ApiError(500, "cluster_id and host_id are required for upload %s logs" % logs_type)
            h = next((x for x in m.hosts.values() if x.id == host_id and x.cluster_id == cluster_id), None)
            if h is None:
                raise ApiError(404, "failed to get host %s in cluster %s: record not found" % (host_id, cluster_id))
        else:
            m.cluster(cluster_id)
        part = a.get("upfile")
        if part is None:
            raise ApiError(500, "refservice: no upfile part in the upload")
        meta = self.store_logs(cluster_id, logs_type, host_id, a.get("infra_env_id"), part)
        rec["logs"] = meta
        if h is not None:
            h.logs_collected_at = now_ms()
            h.logs_info = "collecting"
            h.touch()
        else:
            c = m.cluster(cluster_id)
            c.controller_logs_collected_at = now_ms()
            c.logs_info = "collecting"
        return Response(204)

    def store_logs(self, cluster_id, logs_type, host_id, ie_id, part):
        data = part["data"]
        with self.logs_lock:
            n = len(self.logs) + 1
            name = "%03d_%s_%s%s.tar.gz" % (n, cluster_id, logs_type, "_" + host_id if host_id else "")
            meta = {"name": name, "cluster_id": cluster_id, "logs_type": logs_type, "host_id": host_id,
                    "infra_env_id": ie_id, "size": len(data), "sha256": hashlib.sha256(data).hexdigest(),
                    "filename": part.get("filename"), "content_type": part.get("content_type"),
                    "gzip": data[:2] == b"\x1f\x8b", "time": now_ms()}
            try:
                with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as tf:
                    meta["tar_members"] = tf.getnames()
            except (tarfile.TarError, EOFError, OSError) as e:
                meta["tar_error"] = str(e)
            if self.logs_dir:
                with open(os.path.join(self.logs_dir, name), "wb") as f:
                    f.write(data)
                meta["path"] = os.path.join(self.logs_dir, name)
            meta["_data"] = data
            self.logs.append(meta)
            return {k: v for k, v in meta.items() if k != "_data"}


def file_response(name, data):
    # filemiddleware.NewResponder: Content-Disposition ("attachment;
    # filename=%q", the name Go-quoted) + octet-stream
    return Response(200, data, "application/octet-stream",
                    {"Content-Disposition": "attachment; filename=%s" % go_quote(name)})


def parse_multipart(content_type, body):
    if "boundary=" not in content_type:
        raise ValueError("no multipart boundary param in Content-Type")
    msg = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        b"Content-Type: " + content_type.encode("latin-1") + b"\r\nMIME-Version: 1.0\r\n\r\n" + body)
    if not msg.is_multipart():
        raise ValueError("multipart: NextPart: EOF")
    parts = {}
    for part in msg.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if not name:
            continue
        parts[name] = {"filename": part.get_filename(), "content_type": part.get_content_type(),
                       "data": part.get_payload(decode=True) or b""}
    if not parts and body.strip():
        raise ValueError("multipart: NextPart: EOF")
    return parts


# ---------------------------------------------------------------------------
# image-service paths (assisted-image-service: the URLs the infra-env's
# download_url and boot artifacts point at when image_service_base_url is
# this service)

IMAGE_PATH_RE = re.compile(r"^/(byid|byapikey|bytoken)/([^/]+)/([^/]+)/([^/]+)/(full|minimal|disconnected)\.iso$")
IMAGE_PREFIXES = ("/byid/", "/byapikey/", "/bytoken/", "/images/", "/boot-artifacts/")


def image_service(model, method, path, rawquery):
    """Stand-in bodies: no RHCOS image exists here (see Model.iso_standin)."""
    if method not in ("GET", "HEAD"):
        return Response(405, "method not allowed\n", "text/plain")
    q = urllib.parse.parse_qs(rawquery)
    with model.lock:
        m = IMAGE_PATH_RE.match(path)
        if m:
            kind, ident = m.group(1), m.group(2)
            ie = model.infra_envs.get(ident) if kind == "byid" else model.infra_env_by_token(ident)
            if ie is None:
                return Response(404 if kind == "byid" else 401, "not found\n" if kind == "byid" else
                                "unauthorized\n", "text/plain")
            return Response(200, model.iso_standin(ie), "application/octet-stream")
        parts = path.strip("/").split("/")
        if len(parts) == 3 and parts[0] == "images" and parts[2] == "pxe-initrd":
            ie = model.infra_envs.get(parts[1])
            if ie is None:
                return Response(404, "not found\n", "text/plain")
            token = ie.image_key[4] if ie.image_key else ""
            if token and (q.get("api_key") or q.get("image_token") or [""])[0] != token:
                return Response(401, "unauthorized\n", "text/plain")
            return Response(200, ("refservice stand-in initrd for infra-env %s (arch %s, version %s)\n" % (
                ie.id, q.get("arch", [""])[0], q.get("version", [""])[0])).encode(), "application/octet-stream")
        if len(parts) == 2 and parts[0] == "boot-artifacts" and parts[1] in ("kernel", "rootfs"):
            return Response(200, ("refservice stand-in %s (arch %s, version %s)\n" % (
                parts[1], q.get("arch", [""])[0], q.get("version", [""])[0])).encode(), "application/octet-stream")
    return Response(404, "not found\n", "text/plain")


# ---------------------------------------------------------------------------
# control API


class Control(object):
    def __init__(self, service):
        self.svc = service

    def handle(self, method, path, rawquery, body):
        q = urllib.parse.parse_qs(rawquery)
        sub = path[len(CONTROL_PREFIX):].strip("/")
        parts = sub.split("/") if sub else []
        svc = self.svc
        model = svc.model
        raw_body = len(parts) == 4 and parts[0] == "clusters" and parts[2] == "files"
        try:
            data = json.loads(body.decode("utf-8")) if body and not raw_body else None
        except ValueError as e:
            return ctl(400, {"error": "control body is not JSON: %s" % e})
        try:
            if parts == ["health"]:
                return ctl(200, {"ok": True, "port": svc.port})
            if parts == ["state"] and method == "GET":
                with model.lock:
                    return ctl(200, model.snapshot())
            if parts == ["reset"] and method == "POST":
                svc.reset((data or {}).get("scenario"))
                return ctl(200, {"ok": True})
            if parts == ["settings"] and method == "POST":
                with model.lock:
                    merged = dict(model.settings, **(data or {}))
                    if "install_cmd_style" not in (data or {}):
                        # a generation brings its own (the one set, or the one
                        # the service plays: the default style beside it is
                        # no contradiction)
                        merged.pop("install_cmd_style", None)
                    refmodel.check_scenario({"settings": merged})
                    model.settings.update(data or {})
                    return ctl(200, model.settings)
            if parts == ["requests"]:
                if method == "DELETE":
                    svc.recorder.clear()
                    return ctl(200, {"ok": True})
                items = svc.recorder.query(int(q.get("since", ["0"])[0]), q.get("path", [None])[0],
                                           q.get("method", [None])[0], q.get("operation", [None])[0])
                return ctl(200, items)
            if parts and parts[0] == "faults":
                if method == "GET":
                    return ctl(200, svc.faults.list())
                if method == "POST":
                    specs = data if isinstance(data, list) else [data]
                    return ctl(200, [svc.faults.add(s) for s in specs])
                if method == "DELETE" and len(parts) == 1:
                    svc.faults.clear()
                    return ctl(200, {"ok": True})
                if method == "DELETE" and len(parts) == 2:
                    return ctl(200 if svc.faults.delete(parts[1]) else 404, {"deleted": parts[1]})
            if parts and parts[0] == "hosts":
                with model.lock:
                    if len(parts) == 1 and method == "GET":
                        return ctl(200, [model.host_debug(h) for h in sorted(model.hosts.values(),
                                                                             key=lambda x: x.seq)])
                    if len(parts) == 1 and method == "POST":
                        h = model.add_host(data)
                        return ctl(200, model.host_debug(h))
                    h = model.find_host(parts[1])
                    if h is None:
                        return ctl(404, {"error": "no host %s" % parts[1]})
                    if len(parts) == 2 and method == "GET":
                        return ctl(200, model.host_debug(h))
                    if len(parts) == 2 and method == "POST":
                        model.control_update_host(h, data or {})
                        c = model.clusters.get(h.cluster_id) if h.cluster_id else None
                        if data and "inventory" in data:
                            inv = data["inventory"]
                            model.apply_inventory(h, inv if isinstance(inv, dict) else json.loads(inv))
                        model.refresh_cluster_install(c)
                        return ctl(200, model.host_debug(h))
            if parts and parts[0] == "clusters":
                with model.lock:
                    if len(parts) == 1 and method == "POST":
                        c = model.add_cluster(data or {})
                        return ctl(200, model.cluster_api(c))
                    c = model.clusters.get(parts[1]) if len(parts) > 1 else None
                    if c is None:
                        return ctl(404, {"error": "no cluster %s" % (parts[1] if len(parts) > 1 else "")})
                    if len(parts) == 2 and method == "GET":
                        return ctl(200, model.cluster_api(c))
                    if len(parts) == 2 and method == "POST":
                        model.control_update_cluster(c, data or {})
                        return ctl(200, model.cluster_api(c))
                    if len(parts) == 3 and parts[2] == "install" and method == "POST":
                        d = data or {}
                        model.install_cluster(c.id, prepare=bool(d.get("prepare")), force=bool(d.get("force")),
                                              bootstrap_host=d.get("bootstrap_host_id"))
                        return ctl(200, model.cluster_api(c))
                    if len(parts) == 4 and parts[2] == "files" and method in ("PUT", "POST"):
                        c.set_file(parts[3], body)
                        return ctl(200, {"name": parts[3], "size": len(body)})
            if parts == ["infra-envs"] and method == "POST":
                with model.lock:
                    ie = model.add_infra_env(data or {})
                    return ctl(200, ie.to_api())
            if parts and parts[0] == "logs":
                api = svc.api
                with api.logs_lock:
                    if len(parts) == 1:
                        return ctl(200, [{k: v for k, v in m.items() if k != "_data"} for m in api.logs])
                    for m in api.logs:
                        if m["name"] == parts[1]:
                            return Response(200, m["_data"], "application/octet-stream")
                return ctl(404, {"error": "no such logs"})
        except ApiError as e:
            return ctl(e.http_status(), {"error": e.message})
        except (KeyError, ValueError, TypeError) as e:
            return ctl(400, {"error": "%s: %s" % (type(e).__name__, e)})
        return ctl(404, {"error": "unknown control endpoint %s %s" % (method, path)})


def ctl(status, obj):
    r = Response(status, json.dumps(obj, sort_keys=True, default=str) + "\n", "application/json")
    r.json = obj
    return r


# ---------------------------------------------------------------------------
# HTTP server


def redact_headers(headers, token):
    out = {}
    for k, v in headers.items():
        if k.lower() in SECRET_HEADERS:
            state = "present"
            if token:
                raw = v[7:] if k.lower() == "authorization" and v.lower().startswith("bearer ") else v
                state = "matches --token" if raw == token else "does not match --token"
            out[k] = "<redacted, %s>" % state
        else:
            out[k] = v
    return out


def redact_query(rawquery):
    if not rawquery:
        return rawquery
    pairs = urllib.parse.parse_qsl(rawquery, keep_blank_values=True)
    return urllib.parse.urlencode([(k, "<redacted>" if k in SECRET_QUERY else v) for k, v in pairs])


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    svc = None   # set on the subclass
    timeout = 300   # idle keep-alive connections are dropped after this many seconds

    def setup(self):
        BaseHTTPRequestHandler.setup(self)
        if isinstance(self.request, ssl.SSLSocket):
            self.request.settimeout(10)
            try:
                self.request.do_handshake()
            except (ssl.SSLError, OSError) as e:
                self.svc.log("TLS handshake failed: %s" % e)
                self.close_connection = True
                raise
            self.request.settimeout(self.timeout)

    def log_message(self, fmt, *args):
        pass

    def send_response(self, code, message=None):
        # no Server header (Go's net/http sends none)
        self.log_request(code)
        self.send_response_only(code, message)
        self.send_header("Date", self.date_time_string())

    def read_body(self):
        te = (self.headers.get("Transfer-Encoding") or "").lower()
        if te == "chunked":
            chunks = []
            while True:
                line = self.rfile.readline(65537)
                if not line:
                    break
                size = int(line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while True:
                        trailer = self.rfile.readline(65537)
                        if trailer in (b"\r\n", b"\n", b""):
                            break
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            return b"".join(chunks)
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n > 0 else b""

    def do_any(self):
        svc = self.svc
        t0 = time.time()
        url = urllib.parse.urlsplit(self.path)
        path = url.path
        method = self.command
        body = self.read_body()
        if path == CONTROL_PREFIX or path.startswith(CONTROL_PREFIX + "/"):
            resp = svc.control.handle(method, path, url.query, body)
            self.write(resp, method)
            return
        headers = self.headers
        rec = {"time": now_ms(), "method": method, "path": path, "query": redact_query(url.query),
               "headers": redact_headers(dict(headers.items()), svc.api.token),
               "client": self.client_address[0]}
        rec.update(describe_body(headers.get("Content-Type", ""), body))
        rule = svc.faults.pick(method, path, url.query)
        resp = None
        if rule is not None:
            rec["fault"] = rule["id"]
            if rule["delay"]:
                time.sleep(rule["delay"])
            if not rule["after"] and rule["action"] != "delay":
                resp = Faults.response(rule)
        if resp is None and path.startswith(IMAGE_PREFIXES):
            rec["operation"] = "image-service"
            resp = image_service(svc.model, method, path, url.query)
        if resp is None:
            try:
                resp = svc.api.handle(method, path, url.query, headers, body, rec)
            except Exception as e:  # a bug in the fake: answer 500, keep serving
                rec["exception"] = traceback.format_exc()
                resp = json_response(500, {"code": 500, "message": "refservice internal error: %s" % e})
            if rule is not None and rule["after"] and rule["action"] != "delay":
                rec["processed_status"] = resp.status
                resp = Faults.response(rule)
        rec["status"] = resp.status if not resp.action or resp.action == "truncate" else None
        rec["fault_action"] = resp.action
        if resp.json is not None:
            rec["response"] = redact_json(resp.json)
        elif resp.body:
            rec["response_bytes"] = len(resp.body)
            if resp.content_type and resp.content_type.startswith("text/"):
                rec["response_text"] = resp.body[:4096].decode("utf-8", "replace")
        rec["duration_ms"] = int((time.time() - t0) * 1000)
        svc.recorder.add(rec)
        svc.log("%s %s%s -> %s%s" % (method, path, "?" + redact_query(url.query) if url.query else "",
                                      resp.status or resp.action, " (fault %s)" % rule["id"] if rule else ""))
        self.write(resp, method)

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = do_any

    def write(self, resp, method):
        if resp.action in ("reset", "close"):
            self._abort(rst=resp.action == "reset")
            return
        self.send_response(resp.status)
        if resp.content_type and resp.status not in (204, 304) and (resp.body or resp.json is not None):
            self.send_header("Content-Type", resp.content_type)
        for k, v in resp.headers.items():
            self.send_header(k, v)
        body = resp.body if method != "HEAD" else b""
        if resp.status in (204, 304):
            body = b""
        if resp.action == "truncate":
            self.send_header("Content-Length", str(len(body) * 2 + 10))
            self.end_headers()
            self.wfile.write(body[:max(1, len(body) // 2)])
            self.wfile.flush()
            self._abort(rst=False)
            return
        if resp.status != 204:
            self.send_header("Content-Length", str(len(resp.body)))
        self.end_headers()
        if body:
            self.wfile.write(body)
        self.wfile.flush()

    def _abort(self, rst):
        """Drop the connection without (more of) an answer: RST or FIN."""
        self.close_connection = True
        sock = self.request
        try:
            if rst:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            else:
                sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        try:
            os.close(sock.detach())
        except OSError:
            pass


SECRET_KEYS = ("pull_secret", "password")


def redact_json(value):
    """A copy of a recorded body without pull secrets and passwords (the
    user API carries them: RegisterInfraEnv, V2UpdateCluster, V2GetCredentials)."""
    if isinstance(value, dict):
        return {k: ("<redacted>" if k in SECRET_KEYS and v else redact_json(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [redact_json(v) for v in value]
    return value


def describe_body(content_type, body):
    if not body:
        return {}
    out = {"body_bytes": len(body)}
    ct = content_type.split(";")[0].strip().lower()
    if ct == "multipart/form-data":
        try:
            parts = parse_multipart(content_type, body)
            out["body_multipart"] = {k: {"filename": v["filename"], "content_type": v["content_type"],
                                         "size": len(v["data"])} for k, v in parts.items()}
        except ValueError as e:
            out["body_error"] = str(e)
        return out
    try:
        out["body"] = redact_json(json.loads(body.decode("utf-8")))
    except (ValueError, UnicodeDecodeError):
        text = body[:65536].decode("utf-8", "replace")
        out["body_text"] = text
    return out


class Service(object):
    def __init__(self, opts):
        self.opts = opts
        self.quiet = opts.quiet
        self.sw = Swagger(find_swagger(opts.swagger))
        try:
            self.initial_scenario = refmodel.load_scenario(opts.scenario) if opts.scenario else {}
            refmodel.check_scenario(self.initial_scenario)
        except (OSError, ValueError) as e:
            raise SystemExit("refservice: bad scenario %s: %s" % (opts.scenario, e))
        if opts.next_instruction_seconds is not None:
            self.initial_scenario.setdefault("settings", {})["next_instruction_seconds"] = \
                opts.next_instruction_seconds
        if opts.api_generation:
            self.initial_scenario.setdefault("settings", {})["api_generation"] = opts.api_generation
            try:
                refmodel.check_scenario(self.initial_scenario)
            except ValueError as e:
                raise SystemExit("refservice: --api-generation %s: %s" % (opts.api_generation, e))
        self.model = Model(self.sw, self.initial_scenario, opts.token)
        logs_dir = opts.logs_dir
        if not logs_dir and opts.record:
            logs_dir = os.path.join(os.path.dirname(os.path.abspath(opts.record)), "uploaded-logs")
        if logs_dir:
            os.makedirs(logs_dir, exist_ok=True)
        self.api = Api(self.sw, self.model, opts.token, logs_dir)
        self.faults = Faults()
        for f in self.initial_scenario.get("faults") or []:
            self.faults.add(f)
        self.recorder = Recorder(opts.record)
        self.control = Control(self)
        self.port = None
        self.httpd = None

    def log(self, msg):
        if not self.quiet:
            sys.stderr.write("refservice: %s\n" % msg)
            sys.stderr.flush()

    def reset(self, scenario=None):
        """Back to the start-up scenario, or to the one given; requests, faults
        and uploaded logs are cleared."""
        scenario = self.initial_scenario if scenario is None else scenario
        with self.model.lock:
            self.model.load(scenario)
        self.faults.clear()
        for f in scenario.get("faults") or []:
            self.faults.add(f)
        self.recorder.clear()
        with self.api.logs_lock:
            self.api.logs = []

    def serve(self):
        opts = self.opts
        bind = opts.bind
        if bind in ("", "0.0.0.0", "::", "[::]"):
            raise SystemExit("refservice: refusing to bind %r: bind 127.0.0.1, ::1 or a namespace address" % bind)
        family = socket.AF_INET6 if ":" in bind else socket.AF_INET

        class Server(ThreadingHTTPServer):
            address_family = family
            daemon_threads = True
            allow_reuse_address = True
            request_queue_size = 64

            def handle_error(self, request, client_address):
                pass

        handler = type("BoundHandler", (Handler,), {"svc": self})
        self.httpd = Server((bind.strip("[]"), opts.port), handler)
        if opts.tls_cert:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(opts.tls_cert, opts.tls_key)
            self.httpd.socket = ctx.wrap_socket(self.httpd.socket, server_side=True, do_handshake_on_connect=False)
        self.port = self.httpd.server_address[1]
        host = "[%s]" % bind.strip("[]") if family == socket.AF_INET6 else bind
        with self.model.lock:
            self.model.base_url = "%s://%s:%d" % ("https" if opts.tls_cert else "http", host, self.port)
        if opts.port_file:
            tmp = opts.port_file + ".tmp"
            with open(tmp, "w") as f:
                f.write("%d\n" % self.port)
            os.rename(tmp, opts.port_file)
        self.log("listening on %s://%s:%d%s" % ("https" if opts.tls_cert else "http",
                                                "[%s]" % bind if family == socket.AF_INET6 else bind, self.port,
                                                " (auth token set)" if opts.token else ""))

        def stop(signum, frame):
            threading.Thread(target=self.httpd.shutdown, daemon=True).start()

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
        try:
            self.httpd.serve_forever(poll_interval=0.2)
        finally:
            self.httpd.server_close()
            self.recorder.close()
            self.log("stopped")


def parse_args(argv):
    ap = argparse.ArgumentParser(description="Reference fake of assisted-service's agent/installer API (v2).")
    ap.add_argument("--bind", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    ap.add_argument("--port", type=int, default=8090, help="TCP port, 0 = pick a free one (default 8090)")
    ap.add_argument("--port-file", help="write the chosen port to this file once listening")
    ap.add_argument("--scenario", help="JSON scenario file (see README.md)")
    ap.add_argument("--record", help="append every API request as JSON lines to this file")
    ap.add_argument("--logs-dir", help="store uploaded log tarballs here")
    ap.add_argument("--token", default=os.environ.get("REFSERVICE_TOKEN"),
                    help="require this token (X-Secret-Key for agent endpoints)")
    ap.add_argument("--tls-cert", help="serve HTTPS with this PEM certificate (chain)")
    ap.add_argument("--tls-key", help="private key for --tls-cert")
    ap.add_argument("--swagger", help="path of assisted-service swagger.yaml")
    ap.add_argument("--next-instruction-seconds", type=int, help="override next_instruction_seconds")
    ap.add_argument("--api-generation", choices=("2023", "head"),
                    help="play this generation of the API (settings.api_generation; see generations.py)")
    ap.add_argument("--quiet", action="store_true", help="no per-request log lines on stderr")
    opts = ap.parse_args(argv)
    if bool(opts.tls_cert) != bool(opts.tls_key):
        ap.error("--tls-cert and --tls-key go together")
    return opts


def main(argv=None):
    opts = parse_args(sys.argv[1:] if argv is None else argv)
    if swaggerval.yaml is None:
        sys.stderr.write("refservice: python3-yaml is not installed (apt-get install python3-yaml)\n")
        return 77
    Service(opts).serve()
    return 0


if __name__ == "__main__":
    sys.exit(main())
