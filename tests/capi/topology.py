"""A stand-in for Cluster API's topology controller: a Cluster whose
spec.topology names a ClusterClass gets its objects made from the class's
templates, as CAPI core's cluster topology reconciler makes them.

Written from the v1beta2 ClusterClass and Cluster CRDs of tests/reference
and the contract pages (../shared/reference/cluster-api/docs/book/src/
developer/providers/contracts/: control-plane.md §"ControlPlaneTemplate",
bootstrap-config.md §"BootstrapConfigTemplate: support for SSA dry run"),
so that a provider's templates can be held to what ClusterClass does with
them. For each such Cluster of one namespace:

  * the infrastructure cluster: made once from the class's
    spec.infrastructure.templateRef (the template's spec.template),
    named <cluster>-<random>, and the Cluster's spec.infrastructureRef;
  * the control plane: its desired state is the class's
    spec.controlPlane.templateRef template's spec.template plus what the
    Cluster's topology says of this cluster (spec.replicas from
    topology.controlPlane.replicas, spec.machineTemplate.infrastructureRef
    naming a clone of the class's controlPlane.machineInfrastructure
    template) and the labels cluster.x-k8s.io/cluster-name and
    topology.cluster.x-k8s.io/owned. As the real controller does, it is
    first applied with server-side apply as a dry run (field manager
    capi-topology) and compared with what is stored; only a difference in
    the fields the topology owns is applied for real. The Cluster's
    spec.controlPlaneRef names it;
  * workers: a MachineDeployment per topology.workers.machineDeployments
    entry, named <cluster>-<name>-<random>, whose template names clones of
    its class's bootstrap and infrastructure templates, replicas from the
    topology; a replica change is applied the same way.

The rest (variables and patches, upgrades, MachinePools, the
topology's conditions, rebasing onto a new class) is left out.
Standard library and python3-yaml, as capicore.py.
"""

import copy
import urllib.parse

from capicore import (CLUSTER_NAME_LABEL, CORE, CORE_API_VERSION, KubeError, Loop, MERGE, Resolver, _rand, ref)

FIELD_MANAGER = "capi-topology"
APPLY = "application/apply-patch+yaml"
OWNED_LABEL = "topology.cluster.x-k8s.io/owned"
DEPLOYMENT_TOPOLOGY_LABEL = "topology.cluster.x-k8s.io/deployment-name"


def _subset_differs(desired, current):
    """True when a field of desired (maps compared recursively, anything
    else as a whole) is absent from or different in current: what a dry
    run of the topology's apply would change."""
    if isinstance(desired, dict):
        if not isinstance(current, dict):
            return True
        return any(_subset_differs(v, current.get(k)) for k, v in desired.items())
    return desired != current


class Topology(Loop):
    """The topology controller over one namespace:
    Topology(kube, namespace).start() ... .stop(), or reconcile() once."""

    name = "capi-topology"

    def __init__(self, kube, namespace, interval=0.2):
        super().__init__(interval)
        self.kube = kube
        self.ns = namespace
        self.res = Resolver(kube)
        self.dry_runs = 0        # dry-run applies the server accepted
        self.applies = 0         # applies for real after a dry run found a difference

    # ---- requests ---------------------------------------------------------------------

    def _path(self, group, kind, name=None):
        return self.res.path(self.ns, group, kind, name)

    @staticmethod
    def _group(r):
        """A reference's group: ContractVersionedObjectReference's apiGroup,
        or a ClusterClass templateRef's apiVersion (group/version)."""
        return r.get("apiGroup") or r["apiVersion"].split("/")[0]

    def _get(self, r):
        try:
            return self.kube.request("GET", self._path(self._group(r), r["kind"], r["name"]))
        except KubeError as e:
            if e.status == 404:
                return None
            raise

    def apply(self, obj, dry_run):
        """Server-side apply of obj (the topology's field manager, forced
        as the real controller forces it); returns the server's answer."""
        group = obj["apiVersion"].split("/")[0]
        q = {"fieldManager": FIELD_MANAGER, "force": "true"}
        if dry_run:
            q["dryRun"] = "All"
        path = "%s?%s" % (self._path(group, obj["kind"], obj["metadata"]["name"]), urllib.parse.urlencode(q))
        # JSON is YAML: the apply body needs no YAML writer
        out = self.kube.request("PATCH", path, obj, APPLY)
        if dry_run:
            self.dry_runs += 1
        else:
            self.applies += 1
        return out

    def converge(self, desired):
        """The topology's apply: a dry run first; applied for real only
        when the dry run's result differs from what is stored."""
        current = self._get(ref(desired["apiVersion"].split("/")[0], desired["kind"],
                                desired["metadata"]["name"]))
        dry = self.apply(desired, True)
        if current is not None and not _subset_differs(
                {"spec": dry.get("spec"), "labels": dry["metadata"].get("labels")},
                {"spec": current.get("spec"), "labels": current["metadata"].get("labels")}):
            return current
        return self.apply(desired, False)

    def _clone_template(self, template_ref, cluster, suffix):
        """A copy of a template (a new <Kind>Template object, as the
        topology controller clones the class's templates per cluster)."""
        tpl = self._get(template_ref)
        if tpl is None:
            raise LookupError("template %s %s not found" % (template_ref["kind"], template_ref["name"]))
        name = "%s-%s-%s" % (cluster["metadata"]["name"], suffix, _rand())
        obj = {"apiVersion": tpl["apiVersion"], "kind": tpl["kind"],
               "metadata": {"name": name, "namespace": self.ns,
                            "labels": {CLUSTER_NAME_LABEL: cluster["metadata"]["name"], OWNED_LABEL: ""},
                            "ownerReferences": [self._owner(cluster)]},
               "spec": copy.deepcopy(tpl.get("spec") or {})}
        self.kube.request("POST", self._path(self._group(template_ref), tpl["kind"]), obj)
        return ref(self._group(template_ref), tpl["kind"], name)

    @staticmethod
    def _owner(cluster):
        return {"apiVersion": CORE_API_VERSION, "kind": "Cluster", "name": cluster["metadata"]["name"],
                "uid": cluster["metadata"]["uid"]}

    def _set_cluster_ref(self, cluster, field, r):
        body = {"spec": {field: r}, "metadata": {"resourceVersion": cluster["metadata"]["resourceVersion"]}}
        return self.kube.request("PATCH", CORE + "/namespaces/%s/clusters/%s" % (self.ns, cluster["metadata"]["name"]),
                                 body, MERGE)

    # ---- the reconciler -------------------------------------------------------------

    def reconcile(self):
        for c in self.kube.request("GET", CORE + "/namespaces/%s/clusters" % self.ns).get("items") or []:
            topo = (c.get("spec") or {}).get("topology")
            if not topo or c["metadata"].get("deletionTimestamp"):
                continue
            try:
                self.reconcile_cluster(c, topo)
            except (KubeError, LookupError) as e:
                if getattr(e, "status", None) not in (404, 409):
                    self._error(e)

    def _class(self, c, topo):
        cref = topo.get("classRef") or {}
        ns = cref.get("namespace") or self.ns
        return self.kube.request("GET", CORE + "/namespaces/%s/clusterclasses/%s" % (ns, cref["name"]))

    def reconcile_cluster(self, c, topo):
        cc = self._class(c, topo)
        cspec = cc.get("spec") or {}
        name = c["metadata"]["name"]
        labels = {CLUSTER_NAME_LABEL: name, OWNED_LABEL: ""}
        if not (c["spec"].get("infrastructureRef") or {}).get("name"):
            infra_tpl = self._get(cspec["infrastructure"]["templateRef"])
            if infra_tpl is None:
                raise LookupError("the ClusterClass's infrastructure template is missing")
            kind = infra_tpl["kind"][:-len("Template")]
            group = self._group(cspec["infrastructure"]["templateRef"])
            obj = {"apiVersion": self.res.api_version(group, kind), "kind": kind,
                   "metadata": {"name": "%s-%s" % (name, _rand()), "namespace": self.ns, "labels": labels,
                                "ownerReferences": [self._owner(c)]},
                   "spec": copy.deepcopy((infra_tpl["spec"].get("template") or {}).get("spec") or {})}
            self.converge(obj)
            c = self._set_cluster_ref(c, "infrastructureRef", ref(group, kind, obj["metadata"]["name"]))
        self.reconcile_control_plane(c, topo, cspec, labels)
        for md in ((topo.get("workers") or {}).get("machineDeployments") or []):
            self.reconcile_machine_deployment(c, topo, cspec, md, labels)

    def reconcile_control_plane(self, c, topo, cspec, labels):
        cpc = cspec["controlPlane"]
        tpl = self._get(cpc["templateRef"])
        if tpl is None:
            raise LookupError("the ClusterClass's control-plane template is missing")
        kind = tpl["kind"][:-len("Template")]
        group = self._group(cpc["templateRef"])
        cur_ref = c["spec"].get("controlPlaneRef") or {}
        current = self._get(cur_ref) if cur_ref.get("name") else None
        t = (tpl.get("spec") or {}).get("template") or {}
        spec = copy.deepcopy(t.get("spec") or {})
        tcp = topo.get("controlPlane") or {}
        if tcp.get("replicas") is not None:
            spec["replicas"] = tcp["replicas"]
        infra_ref = ((((current or {}).get("spec") or {}).get("machineTemplate") or {}).get("infrastructureRef"))
        if not infra_ref and (cpc.get("machineInfrastructure") or {}).get("templateRef"):
            infra_ref = self._clone_template(cpc["machineInfrastructure"]["templateRef"], c, "control-plane")
        if infra_ref:
            spec.setdefault("machineTemplate", {})["infrastructureRef"] = infra_ref
        meta = {"name": cur_ref.get("name") or "%s-%s" % (c["metadata"]["name"], _rand()), "namespace": self.ns,
                "labels": dict((t.get("metadata") or {}).get("labels") or {},
                               **((tcp.get("metadata") or {}).get("labels") or {}), **labels),
                "ownerReferences": [self._owner(c)]}
        ann = dict((t.get("metadata") or {}).get("annotations") or {},
                   **((tcp.get("metadata") or {}).get("annotations") or {}))
        if ann:
            meta["annotations"] = ann
        self.converge({"apiVersion": self.res.api_version(group, kind), "kind": kind, "metadata": meta,
                       "spec": spec})
        if not cur_ref.get("name"):
            self._set_cluster_ref(c, "controlPlaneRef", ref(group, kind, meta["name"]))

    def reconcile_machine_deployment(self, c, topo, cspec, md, labels):
        cname = c["metadata"]["name"]
        classes = {w["class"]: w for w in ((cspec.get("workers") or {}).get("machineDeployments") or [])}
        wc = classes.get(md["class"])
        if wc is None:
            raise LookupError("the ClusterClass has no worker class %s" % md["class"])
        sel = "%s=%s,%s=%s" % (CLUSTER_NAME_LABEL, cname, DEPLOYMENT_TOPOLOGY_LABEL, md["name"])
        existing = self.kube.request("GET", CORE + "/namespaces/%s/machinedeployments?labelSelector=%s"
                                     % (self.ns, urllib.parse.quote(sel))).get("items") or []
        if existing:
            cur = existing[0]
            tspec = cur["spec"]["template"]["spec"]
            boot, infra, name = tspec["bootstrap"]["configRef"], tspec["infrastructureRef"], cur["metadata"]["name"]
        else:
            boot = self._clone_template(wc["bootstrap"]["templateRef"], c, md["name"])
            infra = self._clone_template(wc["infrastructure"]["templateRef"], c, md["name"])
            name = "%s-%s-%s" % (cname, md["name"], _rand())
        mlabels = dict(labels, **{DEPLOYMENT_TOPOLOGY_LABEL: md["name"]})
        spec = {"clusterName": cname, "replicas": md.get("replicas", 1),
                "selector": {"matchLabels": {DEPLOYMENT_TOPOLOGY_LABEL: md["name"], CLUSTER_NAME_LABEL: cname}},
                "template": {"metadata": {"labels": mlabels},
                             "spec": {"clusterName": cname, "bootstrap": {"configRef": boot},
                                      "infrastructureRef": infra}}}
        if topo.get("version"):
            spec["template"]["spec"]["version"] = topo["version"]
        self.converge({"apiVersion": CORE_API_VERSION, "kind": "MachineDeployment",
                       "metadata": {"name": name, "namespace": self.ns, "labels": mlabels,
                                    "ownerReferences": [self._owner(c)]},
                       "spec": spec})
