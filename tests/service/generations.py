#!/usr/bin/python3
"""The API generations refservice can play (setting `api_generation`).

None (the default): the observed late-2023 service's answers and rules
(shared/reference/observed/), its request bodies decoded against the 2026
swagger and unknown keys only warned about: what the agent, installer and
controller suites were written against.

"2023": the late-2023 service as it runs (openshift/assisted-service
b29f9bcfebe05eb59d3cc76952eca45d7d21dbaa, 2023-10-27, the commit observed/
was captured from): its own models, derived below from the 2026 swagger by
the differences of that commit's swagger.yaml, and its JSON consumer
(internal/json/consumers.go UnknownFieldsRejectingConsumer,
ENABLE_REJECT_UNKNOWN_FIELDS default true, internal/feature/flags.go):
a request body key its model lacks is refused,
  400 {"code":400,"message":"parsing newClusterParams body from \"\" failed,
       because json: unknown field \"control_plane_count\""}
Clusters carry high_availability_mode and no control_plane_count; the
install step is the observed one; operations added since answer as the
2023 router does (404, or 405 where the path has other methods).

"head": the 2026 swagger's service: the same strict consumer (the flag's
default is still true), control_plane_count in clusters and in the install
step, no singular api_vip/ingress_vip.

Only the request and cluster models are derived (what the hub and the
agent send and read); other answers keep the observed shapes.
"""

import copy

GENERATIONS = (None, "2023", "head")

# the operations of the 2026 swagger that b29f9bcf's does not have
ABSENT_2023_OPERATIONS = frozenset((
    "GetDetailedSupportedFeatures", "V2GetBundle", "V2ListBundles", "v2ListReleaseSources",
    "v2RegisterDisconnectedCluster", "v2UpdateClusterFinalizingProgress"))

# properties of the 2026 models that b29f9bcf's models do not have (every
# model a request body reaches, and the cluster)
ABSENT_2023_PROPERTIES = {
    "cluster-create-params": ("control_plane_count", "load_balancer", "ntp_sources", "operator_bundles"),
    "v2-cluster-update-params": ("control_plane_count", "load_balancer", "ntp_sources", "operator_bundles"),
    "infra-env-create-params": ("network_discovery_delay_seconds", "ntp_sources", "rendezvous_ip"),
    "infra-env-update-params": ("network_discovery_delay_seconds", "ntp_sources", "openshift_version",
                                "rendezvous_ip"),
    "host-update-params": ("fencing_credentials", "ignition_endpoint_http_headers"),
    "platform": ("external",),
    "cluster": ("control_plane_count", "last-installation-preparation", "load_balancer", "ntp_sources",
                "operator_bundles", "org_soft_timeouts_enabled"),
}

# b29f9bcf's properties that the 2026 models dropped (its swagger.yaml, as
# written there)
_IP_PATTERN = r"^(?:(?:(?:[0-9]{1,3}\.){3}[0-9]{1,3})|(?:(?:[0-9a-fA-F]*:[0-9a-fA-F]*){2,}))$"
_IP_PATTERN_OR_EMPTY = r"^(?:(?:(?:[0-9]{1,3}\.){3}[0-9]{1,3})|(?:(?:[0-9a-fA-F]*:[0-9a-fA-F]*){2,}))?$"
EXTRA_2023_PROPERTIES = {
    "cluster-create-params": {
        "api_vip": {"type": "string", "pattern": _IP_PATTERN_OR_EMPTY},
        "ingress_vip": {"type": "string", "pattern": _IP_PATTERN},
    },
    "v2-cluster-update-params": {
        "api_vip": {"type": "string", "pattern": _IP_PATTERN_OR_EMPTY, "x-nullable": True},
        "ingress_vip": {"type": "string", "pattern": _IP_PATTERN_OR_EMPTY, "x-nullable": True},
    },
    "cluster": {
        "api_vip": {"type": "string", "pattern": _IP_PATTERN},
        "ingress_vip": {"type": "string", "pattern": _IP_PATTERN},
    },
    "platform": {"is_external": {"type": "boolean", "readOnly": True}},
}


def check(generation):
    if generation not in GENERATIONS:
        raise ValueError("api_generation must be null, \"2023\" or \"head\"")


def swagger_doc(doc, generation):
    """The swagger document of a generation, from the 2026 one (doc is not
    changed)."""
    check(generation)
    if generation != "2023":
        return doc
    out = copy.deepcopy(doc)
    paths = out.get("paths", {})
    for tmpl in list(paths):
        item = paths[tmpl]
        for method in list(item):
            op = item[method]
            if isinstance(op, dict) and op.get("operationId") in ABSENT_2023_OPERATIONS:
                del item[method]
        if not any(isinstance(op, dict) and "operationId" in op for op in item.values()):
            del paths[tmpl]
    defs = out.get("definitions", {})
    for name, props in ABSENT_2023_PROPERTIES.items():
        for p in props:
            defs[name].get("properties", {}).pop(p, None)
    for name, props in EXTRA_2023_PROPERTIES.items():
        defs[name].setdefault("properties", {}).update(copy.deepcopy(props))
    return out


def strict(generation):
    """Request bodies are decoded with DisallowUnknownFields."""
    return generation is not None


def install_cmd_style(generation, setting):
    """The install step's style: the generation's, else the setting's."""
    return generation if generation is not None else setting
