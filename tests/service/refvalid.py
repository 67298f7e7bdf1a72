#!/usr/bin/python3
"""Input validations of the reference service's user-facing API.

Each function raises ValidationFailed with the message text the real
assisted-service answers (its source is named beside each one) or returns
normally.  Where Python cannot do what the service's Go libraries do (nmstate,
x509 parsing, Go's gzip), the check is the structural part the service's own
code applies, and the docstring says what is left out.
"""

import base64
import binascii
import functools
import gzip
import io
import ipaddress
import json
import re
import struct
import urllib.parse

try:
    import yaml
except ImportError:   # refservice.py exits 77 before anything here is used
    yaml = None

from swaggerval import GoJSONError, go_decode, go_dumps


class ValidationFailed(Exception):
    pass


def fail(fmt, *args):
    raise ValidationFailed(fmt % args if args else fmt)


def go_list(items):
    """fmt.Sprintf("%s", []string{...}): [a b c]."""
    return "[" + " ".join(items) + "]"


def multierror(errors):
    """hashicorp/go-multierror's default ListFormatFunc."""
    if len(errors) == 1:
        return "1 error occurred:\n\t* %s\n\n" % errors[0]
    return "%d errors occurred:\n\t%s\n\n" % (len(errors), "\n\t".join("* " + e for e in errors))


# ---------------------------------------------------------------------------
# pull secret (internal/cluster/validations/validations.go ParsePullSecret,
# ValidatePullSecret)


def validate_pull_secret(secret, registries_with_auth=()):
    try:
        s = json.loads(secret.strip())
    except ValueError:
        fail("pull secret must be a well-formed JSON")
    auths = s.get("auths") if isinstance(s, dict) else None
    if not isinstance(auths, dict) or not auths:
        fail("pull secret must contain 'auths' JSON-object field")
    creds = {}
    for registry, a in auths.items():
        if not isinstance(a, dict) or ("auth" not in a and "credsStore" not in a):
            fail('invalid pull secret: "%s" JSON-object requires either \'auth\' or \'credsStore\' field', registry)
        raw = a.get("auth")
        try:
            data = base64.b64decode(raw if isinstance(raw, str) else "", validate=True)
        except (binascii.Error, ValueError):
            fail("invalid pull secret: 'auth' fields of \"%s\" are not base64-encoded", registry)
        if len(data.split(b":")) != 2:
            fail("invalid pull secret: 'auth' for %s is not in 'user:password' format", registry)
        creds[registry] = True
    for registry in registries_with_auth:
        if registry == "docker.io" and "https://index.docker.io/v1/" in creds:
            continue
        if registry not in creds:
            fail('pull secret must contain auth for "%s"', registry)


# ---------------------------------------------------------------------------
# SSH keys (validations.go ValidateSSHPublicKey)

_SSH_RE = re.compile(r"^(ssh-rsa AAAAB3NzaC1yc2|ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNT|"
                     r"ecdsa-sha2-nistp384 AAAAE2VjZHNhLXNoYTItbmlzdHAzODQAAAAIbmlzdHAzOD|"
                     r"ecdsa-sha2-nistp521 AAAAE2VjZHNhLXNoYTItbmlzdHA1MjEAAAAIbmlzdHA1Mj|"
                     r"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5|ssh-dss AAAAB3NzaC1kc3)[0-9A-Za-z+/]+[=]{0,3}( .*)?$")


def validate_ssh_keys(keys):
    """Each line must match the service's regexp; x/crypto/ssh's parse is
    approximated by decoding the base64 blob and checking the key type it
    names (the error text then is Go's "ssh: no key found")."""
    for key in keys.split("\n"):
        key = key.strip()
        if not _SSH_RE.match(key):
            fail("SSH key: %s does not match any supported type: ssh-rsa, ssh-ed25519, ecdsa-[VARIANT]", key)
        kind, blob = key.split(" ")[:2]
        try:
            raw = base64.b64decode(blob, validate=True)
            n = struct.unpack(">I", raw[:4])[0]
            ok = raw[4:4 + n].decode("ascii") == kind
        except (binascii.Error, ValueError, struct.error, UnicodeDecodeError):
            ok = False
        if not ok:
            fail("Malformed SSH key: %s: ssh: no key found", key)


# ---------------------------------------------------------------------------
# PEM bundle (validations.go ValidatePEMCertificateBundle)

_PEM_RE = re.compile(r"-----BEGIN ([A-Z0-9 ]+)-----\r?\n(.*?)-----END \1-----\r?\n?", re.S)


def validate_pem_bundle(bundle):
    """pem.Decode then x509.ParseCertificate per block.  Python has no X.509
    parser here: a block passes when its base64 decodes to a DER SEQUENCE."""
    rest = bundle
    while True:
        m = _PEM_RE.search(rest)
        if m is None:
            fail("invalid block")
        body = "".join(m.group(2).split())
        try:
            der = base64.b64decode(body, validate=True)
        except (binascii.Error, ValueError):
            fail("invalid block")
        if m.group(1) != "CERTIFICATE" or len(der) < 4 or der[0] != 0x30:
            fail("parse failed: x509: malformed certificate")
        rest = rest[m.end():]
        if not rest:
            return


def pem_certificates(text):
    """The CERTIFICATE blocks of text that look like certificates (for the
    ingress CA and kubeconfig merge)."""
    out = []
    for m in _PEM_RE.finditer(text or ""):
        try:
            der = base64.b64decode("".join(m.group(2).split()), validate=True)
        except (binascii.Error, ValueError):
            continue
        if m.group(1) == "CERTIFICATE" and der[:1] == b"\x30":
            out.append(m.group(0) if m.group(0).endswith("\n") else m.group(0) + "\n")
    return out


# ---------------------------------------------------------------------------
# hostnames, NTP, proxies (pkg/validations/validations.go)

_HOSTNAME_RE = re.compile(r"^[a-z0-9][a-z0-9\-\.]{0,61}[a-z0-9]$")
_HOST_HOSTNAME_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,62}(?:[.][a-z0-9-]{1,63})*$")


def _parse_ip(s):
    try:
        ipaddress.ip_address(s)
        return True
    except ValueError:
        return False


def valid_ntp_source(sources):
    return all(_parse_ip(s) or _HOSTNAME_RE.match(s) for s in sources.split(","))


def validate_ntp_source(sources):
    if sources and not valid_ntp_source(sources):
        fail("Invalid NTP source: %s", sources)


_DNS_LABEL = r"(?:[a-zA-Z0-9_](?:[a-zA-Z0-9_-]{0,61}[a-zA-Z0-9])?)"
_DNS_RE = re.compile(r"^" + _DNS_LABEL + r"(?:\." + _DNS_LABEL + r")*\.?$")


def _is_dns_name(s):
    """govalidator.IsDNSName."""
    if s == "" or len(s.replace(".", "")) > 255:
        return False
    return bool(_DNS_RE.match(s)) and not _parse_ip(s)


def _is_url(s):
    """govalidator.IsURL, the parts the service depends on: a host is present."""
    if not s or len(s) >= 2083 or s.startswith(".") or " " in s:
        return False
    u = urllib.parse.urlsplit(s if "://" in s else "http://" + s)
    host = u.hostname or ""
    return bool(host) and (_parse_ip(host) or _is_dns_name(host) or host == "localhost")


def validate_http_proxy(url):
    if not _is_url(url):
        fail("Proxy URL format is not valid: '%s'", url)
    scheme = urllib.parse.urlsplit(url).scheme
    if scheme == "https":
        fail("The URL scheme must be http; https is currently not supported: '%s'", url)
    if scheme != "http":
        fail("The URL scheme must be http and specified in the URL: '%s'", url)


def validate_no_proxy(no_proxy, ocp_version=None):
    if "*" in no_proxy:
        if not ocp_version:
            return
        return   # wildcard supported from 4.8.0-fc.4; every version served here is newer
    for s in no_proxy.split(","):
        s = s[1:] if s.startswith(".") else s
        if _parse_ip(s):
            continue
        try:
            ipaddress.ip_network(s, strict=False)
            if "/" in s:
                continue
        except ValueError:
            pass
        if _is_dns_name(s):
            continue
        fail("NO Proxy format is not valid: '%s'. NO Proxy is a comma-separated list of destination domain names, "
             "domains, IP addresses or other network CIDRs. A domain can be prefaced with '.' to include all "
             "subdomains of that domain. Use '*' to bypass proxy for all destinations with OpenShift 4.8 or later.",
             no_proxy)


def validate_proxy(http_proxy, https_proxy, no_proxy, ocp_version=None):
    """inventory.go validateProxySettings."""
    if http_proxy:
        try:
            validate_http_proxy(http_proxy)
        except ValidationFailed as e:
            fail("Failed to validate HTTP Proxy: %s", e)
    if https_proxy:
        try:
            validate_http_proxy(https_proxy)
        except ValidationFailed as e:
            fail("Failed to validate HTTPS Proxy: %s", e)
    if no_proxy:
        validate_no_proxy(no_proxy, ocp_version)


def validate_host_hostname(name):
    """hostutil.ValidateHostname (400 errors)."""
    if len(name) > 253:
        fail("hostname is too long")
    pattern = "^[a-z0-9][a-z0-9-]{0,62}(?:[.][a-z0-9-]{1,63})*$"
    if not _HOST_HOSTNAME_RE.match(name):
        fail("Hostname does not pass required regex validation: %s. Hostname: %s", pattern, name)


def validate_installer_args(args):
    """pkg/validations ValidateInstallerArgs."""
    allowed = ["--append-karg", "--delete-karg", "-n", "--copy-network", "--network-dir", "--save-partlabel",
               "--save-partindex", "--image-url", "--image-file"]
    values = re.compile(r"^[A-Za-z0-9@!#$%*()_+-=//.,\";':{}\[\]]+$")
    for a in args:
        if re.match(r"^-+.*", a):
            if a not in allowed:
                fail("found unexpected flag %s for installer - allowed flags are %s", a, go_list(allowed))
            continue
        if not values.match(a):
            fail("found unexpected chars in value %s for installer", a)


def validate_tags(tags):
    if tags and not all(re.match(r"^\w+( \w+)*$", t) for t in tags.split(",")):
        fail("Invalid format for Tags: %s. Tags should be a comma-separated list (e.g. tag1,tag2,tag3). Each tag can "
             "consist of the following characters: Alphanumeric (aA-zZ, 0-9), underscore (_) and white-spaces.", tags)


def validate_cluster_name(name, platform):
    """validations.go ValidateClusterNameFormat."""
    regex = r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
    if platform == "none":
        regex = r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)*$"
    if not re.match(regex, name):
        fail("Cluster name format is not valid: '%s'. Name must start and end with either a letter or number and "
             "consist of lower-case letters, numbers, and hyphens. Subdomains in cluster names are only valid with "
             "none platform.", name)


def validate_base_domain(domain):
    """pkg/validations ValidateDomainNameFormat (dnsApi.ValidateDNSName)."""
    if re.match(r"^[a-z\d][\-]*[a-z\d]+$", domain) and len(domain) > 1:
        return
    if not re.match(r"^([a-z\d]([\-]*[a-z\d]+)*\.)+[a-z\d]+[\-]*[a-z\d]+$", domain):
        fail("DNS format mismatch: %s domain name is not valid", domain)


# ---------------------------------------------------------------------------
# Kubernetes labels (apimachinery validation.ValidateLabels)

_QNAME_RE = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_DNS1123_SUB_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_LABEL_VALUE_RE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


def validate_node_labels(labels):
    """Returns the aggregate error text (ToAggregate().Error()) or None."""
    errs = []
    for k in sorted(labels):
        v = labels[k]
        prefix, _, name = k.rpartition("/")
        if "/" in k and (not prefix or len(prefix) > 253 or not _DNS1123_SUB_RE.match(prefix)):
            errs.append("node_labels: Invalid value: %s: prefix part a lowercase RFC 1123 subdomain must consist of "
                        "lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric "
                        "character (e.g. 'example.com', regex used for validation is "
                        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')" % json.dumps(k))
        if not name or len(name) > 63 or not _QNAME_RE.match(name):
            errs.append("node_labels: Invalid value: %s: name part must consist of alphanumeric characters, '-', '_' "
                        "or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or "
                        "'my.name',  or '123-abc', regex used for validation is "
                        "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')" % json.dumps(k))
        if len(v) > 63 or not _LABEL_VALUE_RE.match(v):
            errs.append("node_labels: Invalid value: %s: a valid label must be an empty string or consist of "
                        "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
                        "character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
                        "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')" % json.dumps(v))
    if not errs:
        return None
    return errs[0] if len(errs) == 1 else "[" + ", ".join(errs) + "]"


# ---------------------------------------------------------------------------
# Ignition (internal/ignition ParseToLatest: v3.2, then v3.1; coreos/ignition
# config errors), and the 256 KiB archive limit (validations.go
# ValidateIgnitionImageSize)

IGNITION_IMAGE_SIZE_PADDING = 256 * 1024


def _ign_type_ok(schema, value, defs):
    if "$ref" in schema:
        schema = defs.get(schema["$ref"].split("/")[-1], {})
    t = schema.get("type")
    if isinstance(t, list):
        return any(_ign_type_ok(dict(schema, type=x), value, defs) for x in t)
    if value is None:
        return True
    if t == "object":
        if not isinstance(value, dict):
            return False
        props = schema.get("properties", {})
        return all(_ign_type_ok(props[k], v, defs) for k, v in value.items() if k in props)
    if t == "array":
        return isinstance(value, list) and all(_ign_type_ok(schema.get("items", {}), v, defs) for v in value)
    if t == "string":
        return isinstance(value, str)
    if t == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if t == "boolean":
        return isinstance(value, bool)
    return True


def parse_ignition(config, schemas=None):
    """Raise ValidationFailed("error parsing ignition: ...") unless config
    parses as Ignition 3.2.0 or 3.1.0.  schemas: {"3.1.0": schema, "3.2.0":
    schema} (the vendored Ignition JSON schemas) for the type check."""
    if not config:
        fail("error parsing ignition: not a config (empty)")
    try:
        value = go_decode(config, strict=True)
    except GoJSONError:
        fail("error parsing ignition: config is not valid")
    if not isinstance(value, dict):
        fail("error parsing ignition: config is not valid")
    ign = value.get("ignition")
    version = ign.get("version") if isinstance(ign, dict) else None
    if ign is not None and not isinstance(ign, dict) or version is not None and not isinstance(version, str):
        fail("error parsing ignition: config is not valid")
    if version not in ("3.2.0", "3.1.0"):
        fail("error parsing ignition: unsupported config version")
    schema = (schemas or {}).get(version)
    if schema is not None and not _ign_type_ok(schema, value, schema.get("definitions", {})):
        fail("error parsing ignition: config is not valid")
    return value


def _cpio_newc(name, data):
    name_b = name.encode() + b"\0"
    hdr = "070701" + "".join("%08X" % x for x in (0, 0o100644, 0, 0, 1, 0, len(data), 0, 0, 0, 0,
                                                   len(name_b), 0))
    out = hdr.encode() + name_b
    out += b"\0" * (-len(out) % 4)
    out += data + b"\0" * (-len(data) % 4)
    return out


def ignition_archive_size(config):
    """Size of the gzip'ed cpio archive assisted-image-service embeds
    (isoeditor.IgnitionContent.Archive: config.ign + trailer).  Python's
    zlib stands in for Go's compress/gzip: the size may differ by a few
    bytes from the real one."""
    raw = _cpio_newc("config.ign", config.encode("utf-8")) + _cpio_newc("TRAILER!!!", b"")
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0) as gz:
        gz.write(raw)
    return len(buf.getvalue())


def validate_ignition_image_size(config):
    size = ignition_archive_size(config)
    if size > IGNITION_IMAGE_SIZE_PADDING:
        fail("The ignition archive size (%d KiB) is over the maximum allowable size (%d KiB)",
             size // 1024, IGNITION_IMAGE_SIZE_PADDING // 1024)


# ---------------------------------------------------------------------------
# kernel arguments (inventory.go validateKernelArguments)


def validate_kernel_arguments(args):
    for a in args or []:
        if (a or {}).get("operation") != "append":
            fail("Only kernel argument operation append is supported.  Got %s", (a or {}).get("operation", ""))


# ---------------------------------------------------------------------------
# static network config (pkg/staticnetworkconfig/generator.go,
# ValidateStaticConfigParamsYAML and FormatStaticNetworkConfigForDB)

NMSTATE_IFACE_TYPES = ("ethernet", "bond", "linux-bridge", "ovs-bridge", "ovs-interface", "vlan", "vxlan",
                       "team", "dummy", "loopback", "mac-vlan", "mac-vtap", "vrf", "infiniband", "veth",
                       "ipvlan", "hsr", "macsec", "xfrm", "unknown")
NMSTATE_STATES = ("up", "down", "absent", "ignore")
# 'man systemd.net-naming-scheme': a predictable name of a physical NIC
_PREDICTABLE_IFACE_RE = re.compile(r"^en[PsvxXbucaipod]")
_NMSTATE_PREFIX = "nmstate GenerateConfiguration failed, error: InvalidArgument: Invalid YAML string: "


def _yaml_error(e):
    mark = getattr(e, "problem_mark", None)
    line = " line %d:" % (mark.line + 1) if mark is not None else ""
    return "yaml:%s %s" % (line, getattr(e, "problem", None) or str(e))


_FAST_LOADER = getattr(yaml, "CSafeLoader", None)


@functools.lru_cache(maxsize=8192)
def _parse_host_yaml(text):
    """One host's nmstate YAML, parsed once per distinct text (a request with
    thousands of hosts parses each several times otherwise), with libyaml's
    loader when PyYAML has it (8x faster here).  A document that libyaml
    refuses is parsed again by the pure-Python loader so that the error
    wording stays the same with or without libyaml.  Callers only read the
    result."""
    if _FAST_LOADER is not None:
        try:
            return yaml.load(text, Loader=_FAST_LOADER)
        except yaml.YAMLError:
            pass
    return yaml.safe_load(text)


def _nmstate_check(host_yaml):
    """generateConfiguration: YAML -> JSON, then nmstate's
    GenerateConfiguration.  nmstate is not available here: what is checked is
    the structure its NetworkState deserialiser rejects (a document that is
    not a mapping, interfaces that are not a list of named entries of a known
    type and state); what nmstate itself would reject beyond that (addresses,
    routes, bond options ...) passes."""
    if host_yaml == "":
        return "cannot generate configuration with an empty host YAML"
    try:
        doc = _parse_host_yaml(host_yaml)
    except yaml.YAMLError as e:
        return "error converting YAML to JSON: " + _yaml_error(e)
    if not isinstance(doc, dict):
        return _NMSTATE_PREFIX + "invalid type: expected struct NetworkState"
    ifaces = doc.get("interfaces")
    if ifaces is not None and not isinstance(ifaces, list):
        return _NMSTATE_PREFIX + "interfaces: invalid type: expected a sequence"
    for i, itf in enumerate(ifaces or []):
        if not isinstance(itf, dict) or not isinstance(itf.get("name"), str) or not itf.get("name"):
            return _NMSTATE_PREFIX + "interfaces[%d]: missing field `name`" % i
        t = itf.get("type", "unknown")
        if t not in NMSTATE_IFACE_TYPES:
            return _NMSTATE_PREFIX + "interfaces[%d].type: unknown variant `%s`" % (i, t)
        if itf.get("state", "up") not in NMSTATE_STATES:
            return _NMSTATE_PREFIX + "interfaces[%d].state: unknown variant `%s`" % (i, itf.get("state"))
    return None


def _interface_names_error(mac_map, host_yaml):
    """validateInterfaceNamesExistenceYAML: every ethernet interface and bond
    port the YAML names must be in the MAC map, carry a mac-address
    identifier, or have a predictable physical NIC name.  Where the service's
    code would panic (no interfaces list, an entry that is not a mapping) the
    check is skipped; the "Mac-address identifier is not supported" refusal
    (it depends on the OS image's nmstate version) is not modelled."""
    try:
        doc = _parse_host_yaml(host_yaml)
    except yaml.YAMLError as e:
        return _yaml_error(e)
    if not isinstance(doc, dict) or not isinstance(doc.get("interfaces"), list):
        return None
    names = [m.get("logical_nic_name", "") for m in mac_map]
    ifaces = doc["interfaces"]
    if not all(isinstance(x, dict) for x in ifaces):
        return None
    with_mac_id = set(str(x.get("name")) for x in ifaces if "name" in x and x.get("identifier") == "mac-address")
    for nic in ifaces:
        if "name" not in nic:
            return "interface name not found in networks configuration"
        name = str(nic["name"])
        mac_id = nic.get("identifier") == "mac-address"
        t = nic.get("type")
        if t in ("802-3-ethernet", "ethernet"):
            if name not in names and not mac_id and not _PREDICTABLE_IFACE_RE.match(name):
                return "mac-interface mapping for interface %s is missing and not a physical interface" % name
        elif t == "bond":
            agg = nic.get("link-aggregation")
            ports = agg.get("port") if isinstance(agg, dict) else None
            for port in ports if isinstance(ports, list) else []:
                port = str(port)
                if port not in names and port not in with_mac_id and not _PREDICTABLE_IFACE_RE.match(port):
                    return "mac-interface mapping for interface %s is missing and not a physical interface" % name
    return None


def static_network_errors(configs, late_2023=False):
    """The go-multierror text, or None. The 2026 service's
    ValidateStaticConfigParamsYAML: at least one NIC, unique MACs and
    NICs, the YAML (the first host whose YAML fails ends the check), the
    NICs' names; b29f9bcf's ValidateStaticConfigParams (late_2023): unique
    MACs and NICs and the YAML through nmstate, for every host, nothing
    else."""
    errs = []
    for i, host in enumerate(configs):
        host = host or {}
        mac_map = [m or {} for m in host.get("mac_interface_map") or []]
        if not mac_map and not late_2023:
            errs.append("at least one interface for host %d must be provided" % i)
        else:
            names = set(m.get("logical_nic_name", "") for m in mac_map)
            macs = set(m.get("mac_address", "") for m in mac_map)
            if len(names) < len(mac_map) or len(macs) < len(mac_map):
                errs.append("MACs and Interfaces for host %d must be unique" % i)
        net_yaml = host.get("network_yaml") or ""
        e = _nmstate_check(net_yaml)
        if e:
            errs.append("failed to validate network yaml for host %d, %s" % (i, e))
            if not late_2023:
                break
        if late_2023:
            continue
        e = _interface_names_error(mac_map, net_yaml)
        if e:
            errs.append(e)
    return multierror(errs) if errs else None


def format_static_network_config(configs):
    """FormatStaticNetworkConfigForDB: sorted, json.Marshal'ed; "" when empty."""
    if not configs:
        return ""
    hosts = []
    for host in configs:
        items = []
        for m in (host or {}).get("mac_interface_map") or []:
            item = {}
            if (m or {}).get("logical_nic_name"):
                item["logical_nic_name"] = m["logical_nic_name"]
            if (m or {}).get("mac_address"):
                item["mac_address"] = m["mac_address"]
            items.append(item)
        items.sort(key=lambda m: (m.get("logical_nic_name", ""), m.get("mac_address", "")))
        hosts.append((items, (host or {}).get("network_yaml") or ""))

    def map_key(items):
        return [(m.get("logical_nic_name", ""), m.get("mac_address", "")) for m in items]
    hosts.sort(key=lambda h: (h[1], len(h[0]), map_key(h[0])))
    out = []
    for items, net in hosts:
        d = {}
        if items:
            d["mac_interface_map"] = items
        if net:
            d["network_yaml"] = net
        out.append(d)
    return go_dumps(out)


def _nmpolicy(host):
    """injectNMPolicyCaptures: the host's YAML as an nmpolicy whose capture
    section finds each mapped NIC by MAC (the service's string rewriting,
    including its re-indentation on every mapped NIC)."""
    text = host.get("network_yaml", "")
    try:
        doc = _parse_host_yaml(text) or {}
    except yaml.YAMLError:
        doc = {}
    name_to_type = {}
    for itf in (doc.get("interfaces") if isinstance(doc, dict) else None) or []:
        if not isinstance(itf, dict):
            continue
        if itf.get("type") == "vlan":
            name_to_type[str((itf.get("vlan") or {}).get("base-iface", ""))] = "vlan"
        else:
            name_to_type[str(itf.get("name", ""))] = itf.get("type", "")
    captures = []
    for j, m in enumerate(host.get("mac_interface_map") or []):
        nic = m.get("logical_nic_name", "")
        captures.append('  iface%d: interfaces.mac-address == "%s"' % (j, m.get("mac_address", "").upper()))
        repl = '"{{ capture.iface%d.interfaces.0.name }}"' % j
        if name_to_type.get(nic) == "vlan":
            text = re.sub("base-iface: " + nic, lambda _m: "base-iface: " + repl, text)
        else:
            text = re.sub(nic, lambda _m: repl, text)
        text = "\n".join("  " + line for line in text.split("\n") if line.strip() != "")
    return "capture:\n" + "\n".join(captures) + "\ndesiredState:\n" + text


def static_network_archive(stored):
    """The static-network-config download: GenerateStaticNetworkConfigArchive
    over GenerateStaticNetworkConfigDataYAML's files (the service's choice
    for OS images whose nmstate runs as a service): per host
    /etc/assisted/network/host<i>/mac_interface.ini and ymlFile<i>.yml.
    (For older OS images the service writes nmstate-generated
    NetworkManager keyfiles instead; nmstate is not available here.)"""
    import tarfile
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as tf:
        for i, host in enumerate(json.loads(stored) if stored else []):
            lines = sorted("%s=%s" % (m.get("mac_address", ""), m.get("logical_nic_name", ""))
                           for m in host.get("mac_interface_map") or [])
            files = [("mac_interface.ini", "\n".join(lines)), ("ymlFile%d.yml" % i, _nmpolicy(host))]
            for name, content in files:
                data = content.encode("utf-8")
                ti = tarfile.TarInfo("/etc/assisted/network/host%d/%s" % (i, name))
                ti.size = len(data)
                ti.mode = 0o600
                tf.addfile(ti, io.BytesIO(data))
    return buf.getvalue()


# ---------------------------------------------------------------------------
# install-config overrides (installcfg builder ValidateInstallConfigPatch:
# json.Unmarshal into the install config, then its Validate())


def validate_install_config_overrides(patch):
    try:
        value = go_decode(patch, strict=True)
    except GoJSONError as e:
        msg = str(e)
        fail("unexpected end of JSON input" if msg == "EOF" else msg)
    if not isinstance(value, dict):
        kind = {list: "array", str: "string", bool: "bool", type(None): "null"}.get(type(value), "number")
        if value is None:
            return value
        fail("json: cannot unmarshal %s into Go value of type installcfg.InstallerConfigBaremetal", kind)
    return value
