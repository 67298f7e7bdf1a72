"""CAPOA (cluster-api-provider-openshift-assisted) run unchanged on top of
cradle-hub: the lab of test_capoa.py.

CAPOA is a translator: for a Cluster API Cluster whose control plane is an
OpenshiftAssistedControlPlane it writes a ClusterDeployment, an
AgentClusterInstall and, per Machine, an InfraEnv; it makes each Machine's
bootstrap data Secret of its InfraEnv's discovery Ignition (fetched from the
service with the api_key of the InfraEnv's status.debugInfo.eventsURL), and
approves the Agents that register there. cradle-hub's ClusterDeployment
path is its backend: it registers those objects in the assisted-service and
keeps them in step. CAPI core and Metal3 are played by capicore.py, at
v1beta1: the CAPOA that builds here (bc5cc25d, cluster-api v1.9.5) speaks
only v1beta1.

CRADLE_TEST_CAPOA_DIR names a CAPOA checkout with its two managers built:

    go build -o bin/capoa-bootstrap-manager ./bootstrap/main.go
    go build -o bin/capoa-controlplane-manager ./controlplane/main.go

The lab takes its CRDs ({bootstrap,controlplane}/config/crd/bases) and its
own example (examples/multinode-example.yaml.j2) from there. What the lab
has to give CAPOA, as its deployment would:

  * a service that signs URLs (AUTH_TYPE=local): CAPOA needs the api_key of
    the eventsURL. The reference service started with a token is one;
  * the Secret its HTTP client reads a CA bundle from
    (ASSISTED_CA_BUNDLE_NAME/NAMESPACE, here in the lab's namespace); any
    CA does over plain HTTP;
  * a serving certificate for the bootstrap manager's webhook server, whose
    directory bc5cc25d fixes at /tmp/k8s-webhook-server/serving-certs, and
    its port, 9443 (checked free first);
  * a release the service offers that CAPOA accepts (4.14.0 or later; the
    reference service's OS images stop at 4.14);
  * a workload cluster it can reach: CAPOA's control plane reads the new
    cluster through the admin kubeconfig the service hands out, so that
    kubeconfig is the lab's new cluster's (CapiInstall's part, through the
    reference service's control API; a real service's would name
    api.<cluster>.<domain>).

Each manager runs in a mount namespace of its own (unshare): a private
/tmp holding the webhook certificate, and a resolv.conf naming 127.0.0.9,
where nothing answers, so that no name it looks up (the example's
api.test-multinode.lab.home, say) leaves this machine.
"""

import base64
import glob
import json
import os
import re
import shlex
import socket
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(TESTS, "hub"))
sys.path.insert(0, os.path.join(TESTS, "kubeapi"))
sys.path.insert(0, os.path.join(TESTS, "service"))

import capicore as C  # noqa: E402
import capijudge  # noqa: E402
import hublab as H  # noqa: E402

DIR_ENV = "CRADLE_TEST_CAPOA_DIR"
MANAGERS = ("bootstrap", "controlplane")
EXAMPLE = "examples/multinode-example.yaml.j2"
CLUSTER = "test-multinode"          # the example's Cluster, control plane, ClusterDeployment and ACI
RELEASE = "quay.io/openshift-release-dev/ocp-release:4.14.0-x86_64"
WEBHOOK_CERT_DIR = "/tmp/k8s-webhook-server/serving-certs"     # bc5cc25d bootstrap/main.go, fixed
NO_RESOLVER = "nameserver 127.0.0.9\noptions timeout:1 attempts:1\n"
WEBHOOK_PORT = 9443
CA_SECRET = "assisted-installer-ca"
# a well-formed public key (the service refuses a made-up one); its private half is nowhere
EXAMPLE_SSH_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAINWolkXy9klEnIeetrKnEf/R2YoHqMl7c+WShSH7UtmR lab@capoa"
BOOT = "bootstrap.cluster.x-k8s.io"
CP = "controlplane.cluster.x-k8s.io"


class Unsuitable(H.LabError):
    """What the lab needs is not there (no CAPOA build, a cluster whose CRDs
    are another generation, a real service whose kubeconfig the lab cannot
    make the new cluster's, port 9443 taken): the test skips, saying this."""


def capoa_dir():
    """CRADLE_TEST_CAPOA_DIR, checked; Unsuitable when unset or incomplete."""
    d = os.environ.get(DIR_ENV, "").strip()
    if not d:
        raise Unsuitable("%s is not set: it names a CAPOA checkout with bin/capoa-bootstrap-manager and "
                         "bin/capoa-controlplane-manager built (tests/capi/README.md)" % DIR_ENV)
    missing = [p for p in [manager(d, m) for m in MANAGERS] + [os.path.join(d, EXAMPLE)] if not os.path.exists(p)]
    if missing or not crd_files(d):
        raise Unsuitable("%s=%s lacks %s" % (DIR_ENV, d, ", ".join(missing) or "config/crd/bases"))
    return d


def manager(d, which):
    return os.path.join(d, "bin", "capoa-%s-manager" % which)


def crd_files(d):
    return sorted(glob.glob(os.path.join(d, "*", "config", "crd", "bases", "*.yaml")))


def contract_labels(d):
    """{group: {contract label: versions}} as the checkout's
    <provider>/config/crd/kustomization.yaml gives them (labels[].pairs or
    commonLabels): what its installation puts on its CRDs, and what CAPI
    core reads to pick the version of a reference to its kinds."""
    import yaml
    out = {}
    for kust in sorted(glob.glob(os.path.join(d, "*", "config", "crd", "kustomization.yaml"))):
        with open(kust) as f:
            k = yaml.safe_load(f) or {}
        pairs = dict(k.get("commonLabels") or {})
        for entry in k.get("labels") or []:
            pairs.update(entry.get("pairs") or {})
        pairs = {key: v for key, v in pairs.items() if key.startswith(C.CONTRACT_LABEL_PREFIX)}
        for base in glob.glob(os.path.join(os.path.dirname(kust), "bases", "*.yaml")):
            with open(base) as f:
                for doc in yaml.safe_load_all(f):
                    if doc and doc.get("kind") == "CustomResourceDefinition" and pairs:
                        out[doc["spec"]["group"]] = pairs
    return out


def reference_capi_files():
    """The reference CRDs of CAPI core and Metal3's CAPI kinds (not the
    reference CAPOA's: CAPOA brings its own generation)."""
    return [f for f in C.crd_files() if "/capoa/" not in f]


def example_documents(d, ns, version, vips, ssh_key, pull_secret):
    """CAPOA's own multinode example, as its README has a user fill it in:
    the pull secret and SSH key, a release the service offers, VIPs on
    the lab's network; every object in ns."""
    import yaml
    with open(os.path.join(d, EXAMPLE)) as f:
        text = f.read()
    text = text.replace('"{{ pullsecret }}"', base64.b64encode(pull_secret.encode()).decode())
    text = text.replace('"{{ ssh_authorized_key }}"', json.dumps(ssh_key))
    text = re.sub(r"distributionVersion: \S+", "distributionVersion: " + version, text)
    docs = [doc for doc in yaml.safe_load_all(text) if doc]
    for doc in docs:
        doc["metadata"]["namespace"] = ns
        _renamespace(doc.get("spec"), ns)
        if doc["kind"] == "OpenshiftAssistedControlPlane":
            doc["spec"]["config"]["apiVIPs"], doc["spec"]["config"]["ingressVIPs"] = [vips[0]], [vips[1]]
    return docs


def _renamespace(node, ns):
    """Every reference's namespace (the example's test-capi) set to ns."""
    if isinstance(node, dict):
        if "namespace" in node and "kind" in node:
            node["namespace"] = ns
        for v in node.values():
            _renamespace(v, ns)
    elif isinstance(node, list):
        for v in node:
            _renamespace(v, ns)


def resource_path(kube, obj, ns):
    """The collection URL of obj's apiVersion and kind, from discovery."""
    group, _, version = obj["apiVersion"].rpartition("/")
    base = "/apis/%s/%s" % (group, version) if group else "/api/" + version
    for r in kube.request("GET", base).get("resources") or []:
        if r.get("kind") == obj["kind"] and "/" not in r["name"]:
            return "%s/namespaces/%s/%s" % (base, ns, r["name"])
    return None


def port_free(port):
    s = socket.socket()
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("0.0.0.0", port))
        return True
    except OSError:
        return False
    finally:
        s.close()


def discovery_agent(ignition):
    """(service URL, infra-env id, PULL_SECRET_TOKEN) of a discovery
    Ignition's agent.service, or None."""
    try:
        units = json.loads(ignition)["systemd"]["units"]
    except (ValueError, KeyError, TypeError):
        return None
    unit = next((u.get("contents") or "" for u in units if u.get("name") == "agent.service"), "")
    m = re.search(r"--url (\S+) --infra-env-id (\S+)", unit)
    if not m:
        return None
    t = re.search(r"^Environment=PULL_SECRET_TOKEN=(\S*)$", unit, re.M)
    return m.group(1), m.group(2), t.group(1) if t else ""


class CapoaInstall(H.CapiInstall):
    """The day-1 flow of CAPOA's example over cradle-hub's ClusterDeployment
    path: up() as Install's with CAPOA's CRDs, CAPI's at v1beta1, the
    reference service with a token, then CAPOA's two managers; apply()
    starts capicore (v1beta1) and applies the example; boot() boots one
    dry-run host per Machine from its bootstrap data Secret (the infra-env
    and token its Ignition names; the host named after its Machine) and
    brings up the new cluster; CAPOA approves the Agents; step() plays the
    installer's kubeconfig, cradle's controller, the new cluster and
    Metal3's providerIDs on its Nodes (CapiInstall's parts) and returns
    "completed" once the AgentClusterInstall is Completed with its Secrets,
    the Cluster's control plane is ready, and every Machine Running."""

    cd_name = CLUSTER
    aci_name = CLUSTER
    TOKEN = "capoa-lab-token"
    FINALIZED_KINDS = H.Install.FINALIZED_KINDS

    def __init__(self, lab, ns, say=None):
        self.dir = capoa_dir()
        self.docs = None
        H.Install.__init__(self, lab, ns, say=say, hosts=0, release=RELEASE, static_network=False,
                           service_settings={"release_images": [{
                               "openshift_version": "4.14", "cpu_architecture": "x86_64",
                               "cpu_architectures": ["x86_64"], "url": RELEASE, "version": "4.14.0",
                               "default": True, "support_level": "production"}]})
        self.workers = 0
        self.core = None
        self.files_put = set()
        self.managers = {}

    def host_name(self, host):
        return None     # its Machine's (boot())

    # ---- servers ----------------------------------------------------------------------

    def start_kube(self):
        real = os.environ.get("CRADLE_TEST_KUBECONFIG")
        if real:
            kube = H.Kube(real)
            try:
                H.ensure_crds(kube)
                C.ensure_crds(kube, reference_capi_files(), storage="v1beta1")
                C.ensure_crds(kube, crd_files(self.dir), labels=contract_labels(self.dir))
                self.check_generation(kube)
            finally:
                kube.close()
            return real, None
        import kubeapi_harness
        d = self.lab.path("crds")
        args = []
        for sub in H.CRD_DIRS:
            args += ["--apply", os.path.join(H.CRDS, sub)]
        for p in C.write_crds(d, reference_capi_files(), storage="v1beta1") + \
                C.write_crds(d, crd_files(self.dir), labels=contract_labels(self.dir), prefix="capoa"):
            args += ["--apply", p]
        srv = kubeapi_harness.Server(args, state_dir=self.lab.path("kubeapi")).start(timeout=180)
        self.lab.on_close.append(srv.stop)
        return os.path.join(srv.state, "kubeconfig"), srv

    def check_generation(self, kube):
        """Unsuitable unless the cluster stores CAPI at v1beta1 and serves
        CAPOA's kinds at the versions of this build's CRDs."""
        stored = C.stored_version(kube, "cluster.x-k8s.io", "clusters")
        if stored != "v1beta1":
            raise Unsuitable("the cluster's clusters.cluster.x-k8s.io CRD stores %s; this CAPOA build speaks "
                             "v1beta1" % stored)
        for doc in C.crd_documents(crd_files(self.dir)):
            want = next(v["name"] for v in doc["spec"]["versions"] if v.get("storage"))
            have = C.stored_version(kube, doc["spec"]["group"], doc["spec"]["names"]["plural"])
            if have != want:
                raise Unsuitable("the cluster's %s CRD stores %s; this CAPOA build's stores %s" % (
                    doc["metadata"]["name"], have, want))

    def start_service(self, settings):
        import refclient
        svc = refclient.RefService(scenario={"settings": settings}, token=self.TOKEN, bind="127.0.0.1",
                                   workdir=self.lab.path("refservice"))
        os.makedirs(svc.workdir, exist_ok=True)
        svc.start(timeout=60)
        self.lab.on_close.append(svc.stop)
        return svc

    def up(self, timeout=120):
        import refclient
        if refclient.real_service():
            raise Unsuitable(refclient.control_skip_reason(
                "the admin kubeconfig it hands out must be the lab's new cluster's, which CAPOA reads"))
        if not port_free(WEBHOOK_PORT):
            raise Unsuitable("port %d is taken: CAPOA's bootstrap manager serves its webhooks there" % WEBHOOK_PORT)
        H.Install.up(self, timeout)
        crt, key = self.webhook_certificate()
        resolv = self.lab.path("capoa-resolv.conf")
        with open(resolv, "w") as f:
            f.write(NO_RESOLVER)
        env = dict(os.environ, ASSISTED_CA_BUNDLE_NAMESPACE=self.ns, ASSISTED_CA_BUNDLE_NAME=CA_SECRET)
        for which in MANAGERS:
            health = H.free_port()
            argv = [manager(self.dir, which), "--kubeconfig", self.kubeconfig, "--metrics-bind-address", "0",
                    "--health-probe-bind-address", "127.0.0.1:%d" % health, "--leader-elect=false"]
            # /tmp private, the lab's own directory in it again (through a descriptor opened before)
            lab = shlex.quote(self.lab.tmp)
            setup = ("exec 3< {lab}; mount -t tmpfs capoa-tmp /tmp; mkdir -p {lab} {d}; "
                     "mount --no-canonicalize --bind /proc/self/fd/3 {lab}; exec 3<&-; cp {crt} {d}/tls.crt; cp {key} {d}/tls.key; "
                     "mount --bind {resolv} /etc/resolv.conf; exec \"$@\"").format(
                lab=lab, d=WEBHOOK_CERT_DIR, crt=shlex.quote(crt), key=shlex.quote(key), resolv=shlex.quote(resolv))
            self.managers[which] = self.lab.spawn("capoa-" + which, [
                "unshare", "--mount", "--propagation", "private", "sh", "-ec", setup, "sh"] + argv, env=env)
            H.wait("CAPOA's %s manager to be ready" % which, lambda: self.manager_ready(which, health), timeout)
        self.say("CAPOA's bootstrap and control-plane managers (%s) ready, unchanged, against %s" % (
            self.dir, "the test kube-apiserver" if not os.environ.get("CRADLE_TEST_KUBECONFIG") else
            "the cluster of CRADLE_TEST_KUBECONFIG"))
        return self

    def manager_ready(self, which, port):
        import http.client
        p = self.managers[which]
        if p.poll() is not None:
            raise H.LabError("CAPOA's %s manager exited (%s):\n%s" % (which, p.returncode,
                                                                      self.lab.log("capoa-" + which)[-3000:]))
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            c.request("GET", "/readyz")
            return c.getresponse().status == 200
        except OSError:
            return False

    def webhook_certificate(self):
        """(cert, key): a self-signed serving certificate in the lab, which
        each manager's private /tmp gets where bc5cc25d reads it."""
        crt, key = self.lab.path("capoa-webhook.crt"), self.lab.path("capoa-webhook.key")
        if not os.path.exists(crt):
            subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                            "-nodes", "-days", "2", "-subj", "/CN=capoa-webhook.lab", "-keyout", key, "-out", crt],
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return crt, key

    # ---- the user's part -------------------------------------------------------------

    def resources(self):
        if self.docs is None:
            pull = H.docs("pullsecret.yaml")
            ps = base64.b64decode(pull["data"][".dockerconfigjson"]).decode() if "data" in pull else \
                pull["stringData"][".dockerconfigjson"]
            self.docs = example_documents(self.dir, self.ns, "4.14.0", (H.CAPI_API_VIP, H.CAPI_INGRESS_VIP),
                                          EXAMPLE_SSH_KEY, ps)
        return self.docs

    def apply(self, objects=None):
        if self.core is None:
            # started before the namespace, so stopped after its removal (the lab closes backwards): a
            # deleted Machine goes after its config, whose CAPOA finalizer needs the Machine to find
            self.core = capijudge.core_for(self.kube, self.kubeconfig, self.ns, interval=1, deletion=True).start()
            self.lab.on_close.append(self.core.stop)
            self.say("Cluster API core's controllers: %s; Metal3's as tests/capi/capicore.py plays them at v1beta1; "
                     "watching %s" % (capijudge.judging(), self.ns))
        self.namespace()
        with open(self.webhook_certificate()[0]) as f:
            ca = f.read()
        self.kube.apply({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": CA_SECRET, "namespace": self.ns},
                         "data": {"ca.crt": base64.b64encode(ca.encode()).decode()}})
        for o in objects or self.resources():
            path = resource_path(self.kube, o, self.ns)
            if path is None:
                self.say("left out %s/%s: this cluster serves no %s %s (the Metal3 stand-in needs none)" % (
                    o["kind"], o["metadata"]["name"], o["apiVersion"], o["kind"]))
                continue
            self.kube.request("POST", path, self.core.admit(o))
            self.say("applied %s/%s (CAPOA's example)" % (o["kind"], o["metadata"]["name"]))

    # ---- hosts --------------------------------------------------------------------------

    def machines(self):
        return sorted(self.kube.request("GET", "/apis/cluster.x-k8s.io/v1beta1/namespaces/%s/machines" % self.ns)
                      .get("items") or [], key=lambda m: m["metadata"]["name"])

    def expected_machines(self):
        n = 0
        for o in self.resources():
            if o["kind"] in ("OpenshiftAssistedControlPlane", "MachineDeployment"):
                n += o["spec"].get("replicas", 1)
        return n

    def boot_data(self):
        """{Machine: (ignition, discovery_agent(ignition))} once every Machine
        of the example has its bootstrap data Secret; else None."""
        ms = self.machines()
        if len(ms) < self.expected_machines():
            return None
        return self.parsed_boot_data(ms, lambda value: (lambda agent: (value, agent) if agent else None)(
            discovery_agent(value)))

    def boot(self, hosts=None, timeout=180):
        """One host per Machine, booted from its bootstrap data: the
        infra-env and the token its agent.service names, the service through
        the lab's relay (the Ignition's URL is the service's loopback
        address), the hostname its Machine's."""
        data = H.wait("every Machine's bootstrap data", lambda: self.report() is not None and self.boot_data(),
                      timeout)
        if not self.hosts:
            self.hosts = H.make_hosts(self.lab, self.sw, len(data))
        for h, (machine, (_, (url, ie_id, token))) in zip(self.hosts, sorted(data.items())):
            h["hostname"], h["machine"], h["infra_env_id"], h["token"] = machine, machine, ie_id, token
            self.say("%s boots from machine/%s's bootstrap data: infra-env %s, %s" % (
                h["name"], machine, ie_id, "its agent token" if token else "no agent token"))
        self.new_cluster = H.NewCluster(self.lab, self.hosts, self.say)
        self.say("the new cluster: a second test kube-apiserver with an OpenShift cluster's CRDs (its kubeconfig "
                 "is the one the service will hand out, which CAPOA reads); the lab plays its kubelets and "
                 "operators only")
        hf = self.hosts_file()
        for h in hosts or self.hosts:
            self.agents[h["id"]] = H.start_agent(self.lab, h, self.relay.url, h["infra_env_id"], hf, h["token"])
        return data

    def approve(self):
        pass    # CAPOA's agent controller approves (one Agent per InfraEnv)

    # ---- CAPOA's objects (at the versions this build speaks) -------------------------

    def get_capi(self, api, plural, name):
        try:
            return self.kube.request("GET", "/apis/%s/namespaces/%s/%s/%s" % (api, self.ns, plural, name))
        except H.KubeError as e:
            if e.status == 404:
                return None
            raise

    def oacp(self):
        return self.get_capi(CP + "/v1alpha2", "openshiftassistedcontrolplanes", CLUSTER)

    def capi_cluster(self):
        return self.get_capi("cluster.x-k8s.io/v1beta1", "clusters", CLUSTER)

    def secrets(self):
        return H.Install.secrets(self)

    def admin_kubeconfig(self):
        return H.Install.admin_kubeconfig(self)

    def workload_kubeconfig(self):
        """CAPOA's <cluster>-kubeconfig Secret (the contract's), or None."""
        return self.kube.get("Secret", self.ns, CLUSTER + "-kubeconfig")

    # ---- watching ---------------------------------------------------------------------

    def report(self):
        rows = self.install_rows()
        c = self.capi_cluster()
        if c:
            st = c.get("status") or {}
            rows["cluster/" + CLUSTER] = "phase=%s infrastructureReady=%s controlPlaneReady=%s" % (
                st.get("phase", "-"), str(bool(st.get("infrastructureReady"))).lower(),
                str(bool(st.get("controlPlaneReady"))).lower())
        cp = self.oacp()
        if cp:
            st = cp.get("status") or {}
            conds = " ".join("%s=%s" % (c["type"], c["status"]) for c in st.get("conditions") or [])
            rows["openshiftassistedcontrolplane/" + CLUSTER] = "ready=%s initialized=%s replicas=%s/%s %s" % (
                str(bool(st.get("ready"))).lower(), str(bool(st.get("initialized"))).lower(),
                st.get("readyReplicas", "-"), st.get("replicas", "-"), conds)
        for m in self.machines():
            st = m.get("status") or {}
            rows["machine/" + m["metadata"]["name"]] = "phase=%s node=%s" % (
                st.get("phase", "-"), (st.get("nodeRef") or {}).get("name", "-"))
        return self.show(rows)

    def done(self):
        """The AgentClusterInstall Completed with its Secrets, the Cluster's
        control plane ready (CAPOA's status through CAPI core's), every
        Machine Running on its Node."""
        done = H.condition(self.aci(), "Completed")
        ms = self.machines()
        return (bool(done) and done["status"] == "True" and
                all(self.kube.get("Secret", self.ns, n) for n in self.secrets()) and
                bool(((self.capi_cluster() or {}).get("status") or {}).get("controlPlaneReady")) and
                len(ms) == self.expected_machines() and
                all((m.get("status") or {}).get("phase") == "Running" for m in ms))

    def step(self, approve=True, controller=True):
        """One look: "completed", "failed: <why>", "changed" or None."""
        changed = self.report()
        cd = self.kube.get("ClusterDeployment", self.ns, self.cd_name)
        self.cluster_id = self.cluster_id or (((cd or {}).get("metadata") or {}).get("annotations") or {}).get(
            H.ANNOTATION_CLUSTER_ID)
        if self.cluster_id and self.fitted is None:
            self.fitted = self.fit_requirements()
        self.check_nics()
        cluster = self.service_cluster()
        state = (cluster or {}).get("status")
        changed = self.play_installation(cluster, state, controller) or changed
        if self.done():
            return "completed"
        failed = H.condition(self.aci(), "Failed")
        if failed and failed["status"] == "True":
            return "failed: %s\n%s" % (failed["message"], self.where())
        failure = self.controller_failure()
        if failure:
            return failure
        for which, p in self.managers.items():
            if p.poll() is not None:
                return "failed: CAPOA's %s manager exited %s:\n%s" % (which, p.returncode,
                                                                     self.lab.log("capoa-" + which)[-2000:])
        return "changed" if changed else None

    def finalized_collections(self):
        """Install's kinds, and CAPOA's and CAPI's at the versions this
        build speaks (Kube's table names the reference's)."""
        out = H.Install.finalized_collections(self)
        for api, plural in ((CP + "/v1alpha2", "openshiftassistedcontrolplanes"),
                            (BOOT + "/v1alpha1", "openshiftassistedconfigs"),
                            (BOOT + "/v1alpha1", "openshiftassistedconfigtemplates"),
                            ("cluster.x-k8s.io/v1beta1", "clusters"), ("cluster.x-k8s.io/v1beta1", "machines"),
                            ("cluster.x-k8s.io/v1beta1", "machinesets"),
                            ("cluster.x-k8s.io/v1beta1", "machinedeployments"),
                            (C.INFRA_GROUP + "/v1beta1", "metal3clusters"),
                            (C.INFRA_GROUP + "/v1beta1", "metal3machines"),
                            (C.INFRA_GROUP + "/v1beta1", "metal3machinetemplates")):
            out.append((plural, "/apis/%s/namespaces/%s/%s" % (api, self.ns, plural)))
        return out

    def summary(self):
        """Lines for the end: the Cluster, CAPOA's kubeconfig Secret, the Machines."""
        st = (self.capi_cluster() or {}).get("status") or {}
        out = ["cluster/%s phase %s, infrastructureReady %s, controlPlaneReady %s" % (
            CLUSTER, st.get("phase"), st.get("infrastructureReady"), st.get("controlPlaneReady"))]
        sec = self.workload_kubeconfig() or {}
        text = base64.b64decode(((sec.get("data") or {}).get("value")) or "").decode(errors="replace")
        server = re.search(r"server:\s*(\S+)", text)
        out.append("secret/%s-kubeconfig (CAPOA's): the kubeconfig of %s" % (
            CLUSTER, server.group(1) if server else "no server"))
        for m in self.machines():
            mst = m.get("status") or {}
            out.append("machine/%s %s, node %s, providerID %s" % (m["metadata"]["name"], mst.get("phase"),
                                                                  (mst.get("nodeRef") or {}).get("name"),
                                                                  (m.get("spec") or {}).get("providerID")))
        return out

    def remove(self, timeout=None):
        H.Install.remove(self, timeout)
        if self.left and self.core is not None:
            self.say("CAPI core's stand-in, its last errors: %s" % (self.core.errors[-3:] or "none"))
