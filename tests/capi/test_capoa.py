#!/usr/bin/python3
"""CAPOA run unchanged with cradle-hub as its backend (issue 22, "CAPOA's
own scenarios with cradle-hub as its backend, asserted on the service's
record and the cluster's objects"): CAPOA's multinode example, three
control-plane and two worker Machines, through CAPOA's ClusterDeployment,
AgentClusterInstall and per-Machine InfraEnvs, cradle-hub's registration in
the service, the Machines' bootstrap data, five dry-run hosts booted from
it, CAPOA's approvals, to the installation (capoa.py says what the lab
gives CAPOA).

Needs CRADLE_TEST_CAPOA_DIR (a CAPOA checkout with its managers built);
skips, saying so, without it. Against the test kube-apiserver and the
reference service, or CRADLE_TEST_KUBECONFIG's cluster (when its CAPI CRDs
store v1beta1 and its CAPOA CRDs are this build's) and
CRADLE_TEST_SERVICE_URL's service (with CRADLE_TEST_SERVICE_TOKEN: CAPOA
needs signed URLs).
"""

import base64
import json
import os
import re
import sys
import time
import unittest
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

try:
    import yaml  # noqa: F401
except ImportError:
    print("python3-yaml is not installed")
    sys.exit(77)

import capoa  # noqa: E402
import hublab as H  # noqa: E402

try:
    capoa.capoa_dir()
except capoa.Unsuitable as e:
    print("skipped: %s" % e)
    sys.exit(77)

T0 = time.monotonic()


def say(msg):
    sys.stderr.write("[%6.1fs] %s\n" % (time.monotonic() - T0, msg))
    sys.stderr.flush()


class CapoaExample(unittest.TestCase):
    def setUp(self):
        self.lab = H.Lab("capoa")
        self.ns = "capoa-" + uuid.uuid4().hex[:8]

    def tearDown(self):
        res = getattr(self._outcome, "result", None)
        failed = res is not None and any(t is self for t, _ in res.errors + res.failures)
        if failed:
            for name in ("cradle-hub", "capoa-bootstrap", "capoa-controlplane"):
                say("--- %s (tail)\n%s" % (name, self.lab.log(name)[-3000:]))
        self.lab.close()
        if not failed and hasattr(self, "flow"):
            # the namespace went, CAPOA's and cradle-hub's finalizers by their own controllers
            self.assertEqual(self.flow.left, [], "the lab's objects kept their finalizers")

    def test_example_over_cradle_hub(self):
        try:
            f = capoa.CapoaInstall(self.lab, self.ns, say=say).up()
        except capoa.Unsuitable as e:
            self.skipTest(str(e))
        f.apply()
        data = f.boot()
        self.assertEqual(len(data), 5, "the example's 3 control-plane and 2 worker Machines")
        import refclient
        hub = refclient.HubClient(f.svc)
        # the service's record: CAPOA's cluster, one infra-env per Machine,
        # each Machine's data the discovery Ignition of its own infra-env
        cd = f.kube.get("ClusterDeployment", self.ns, capoa.CLUSTER)
        cluster_id = cd["metadata"]["annotations"][H.ANNOTATION_CLUSTER_ID]
        st, cluster = hub.call("GET", "/v2/clusters/%s" % cluster_id)
        self.assertEqual(st, 200, cluster)
        self.assertEqual((cluster["name"], cluster["openshift_version"]), (capoa.CLUSTER, "4.14.0"))
        infra_envs = set()
        for machine, (value, (_, ie_id, token)) in sorted(data.items()):
            st, ign = hub.infra_env_file(ie_id, "discovery.ign")
            self.assertEqual(st, 200, ign)
            self.assertEqual(json.loads(value), json.loads(ign), "machine/%s's bootstrap data" % machine)
            st, ie = hub.infra_env(ie_id)
            self.assertEqual((st, ie.get("cluster_id")), (200, cluster_id), machine)
            if not f.svc.real:
                self.assertTrue(token, "a service with local auth gives the agent its token")
            infra_envs.add(ie_id)
        self.assertEqual(len(infra_envs), 5, "one infra-env per Machine (CAPOA's design)")
        for ie in f.kube.list("InfraEnv", self.ns):
            url = ((ie.get("status") or {}).get("debugInfo") or {}).get("eventsURL") or ""
            self.assertIn("api_key=", url, "the eventsURL CAPOA reads its key from")
        for m in f.machines():
            self.assertTrue(m["spec"]["bootstrap"].get("dataSecretName"), m["metadata"]["name"])
            self.assertIs(m["status"].get("bootstrapReady"), True, m["metadata"]["name"])
        # CAPOA approves each Agent (one per infra-env) with its Machine's role
        roles = {}

        def approved():
            f.report()
            roles.clear()
            for a in f.kube.list("Agent", self.ns):
                if (a.get("spec") or {}).get("approved"):
                    roles[a["metadata"]["name"]] = a["spec"].get("role")
            return len(roles) == 5
        H.wait("CAPOA to approve the five Agents", approved, 180)
        self.assertEqual(sorted(roles.values()), ["master"] * 3 + ["worker"] * 2)
        f.run(timeout=900, stall=300)
        f.controller_ended(timeout=120)
        # the installation, as the service and cradle-hub tell it: the cluster
        # installed, then imported for day 2 as the real controllers do
        st, cluster = hub.call("GET", "/v2/clusters/%s" % cluster_id)
        self.assertEqual((cluster["kind"], cluster["status"]), ("AddHostsCluster", "adding-hosts"))
        self.assertEqual(H.condition(f.aci(), "Completed")["reason"], "InstallationCompleted")
        hosts = {a["metadata"]["name"]: a for a in f.kube.list("Agent", self.ns)}
        self.assertEqual(sorted((a.get("status") or {}).get("role") for a in hosts.values()),
                         ["master"] * 3 + ["worker"] * 2)
        # CAPI's view, through CAPOA: the control plane ready, every Machine on its Node
        c = f.capi_cluster()
        self.assertIs(c["status"].get("controlPlaneReady"), True)
        for m in f.machines():
            self.assertEqual((m["status"]["phase"], m["status"]["nodeRef"]["name"]),
                             ("Running", m["metadata"]["name"]))
        sec = f.workload_kubeconfig()
        text = base64.b64decode(sec["data"]["value"]).decode()
        with open(f.new_cluster.kubeconfig) as fh:
            server = re.search(r"server:\s*(\S+)", fh.read()).group(1)
        self.assertIn(server, text, "CAPOA's <cluster>-kubeconfig names the new cluster")
        for line in f.summary():
            say(line)
        self.flow = f

if __name__ == "__main__":
    unittest.main(verbosity=2)
