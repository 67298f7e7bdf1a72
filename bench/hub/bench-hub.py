#!/usr/bin/python3
"""bench/hub [BENCH-HUB] [bmac|nmstate|install|capi|all]: cradle-hub's controllers at scale.

The two benchmarks of issue 13 and the one of issue 14, against the test kube-apiserver
(tests/kubeapi, the reference CRDs) and the reference service
(tests/service):

bmac     1,000 BareMetalHosts and 1,000 Agents (each Agent's inventory has
         its BMH's boot MAC, the InfraEnv has an image): BMAC matches,
         approves and specs every Agent and sets every BMH's image; then
         the same pass again, which must write nothing. Reports time, peak
         RSS of the hub side, and the API requests the hub made per object
         (from the server's request log).

nmstate  one InfraEnv selecting 3,960 NMStateConfigs (the docs' sample,
         crds/nmstate.yaml, varied by MAC and address): the reconcile that
         builds the static network config and registers the infra-env with
         it, a reconcile with nothing new (no service call, no write), and
         the one after a single NMStateConfig changed (the whole list sent
         again, as the service takes it).

install  1,000 Agents bound to 10 clusters (issue 14): the service holds
         10 clusters, 10 infra-envs bound to them and 100 hosts in each
         (inventories, validations, statuses of its own); the hub side
         10 ClusterDeployments and AgentClusterInstalls and 10 InfraEnvs
         linked to them. cradle-hub's ClusterDeployment and Agent
         controllers run until a pass writes nothing (the Agents created,
         bound, their status; the clusters synced), then one full pass with
         nothing to change (time, peak RSS, writes: must be 0), then one
         host's inventory changes in the service (no event: the poller's
         periodic resync finds it by its fingerprint) and the keys the
         poller names are reconciled (exactly the writes that change
         needs: the Agent's status and its inventory annotation), then a
         full pass again.

capi     cradle-hub --capi, the Cluster API way (issue 22): 10 Clusters
         (BENCH_CAPI_CLUSTERS), each tools/rehearse --capi's resources
         (hublab.capi_resources: a Metal3Cluster, an
         OpenshiftAssistedControlPlane of 3 replicas, a MachineDeployment
         of 2 workers), CAPI core played by tests/capi/capicore.py, the
         cradle-hub program itself (hublab.Hub) against the reference
         service. One host per Machine registers with the Machine's name in
         the control plane's infra-env and reports its inventory (as
         test-hub-e2e.c's register_host()); once cradle-hub bound it, it
         registers again and answers its connectivity check, so that the
         hosts become known and cradle-hub starts each installation
         (v2InstallCluster). Counted from both request logs by user agent
         (cradle-hub's own; not cradle-hub-spoke/, not capicore's or this
         script's): requests and writes (non-GET) to steady state (15 s
         without a write), then a restarted cradle-hub's first pass over
         the settled objects, which must write nothing (what it writes is
         printed). Printed per Machine next to install's per Agent.

Measured (a build without sanitizers; the machine: 2 cores, shared with
other engineers' builds and tests, so times are loose):

  bmac     2,034 requests of the hub side (2.03 per BMH+Agent pair: a patch
           of each); match and approve 13.5 s; the pass again 0.07 s, 0
           writes; peak RSS 58 MB.
  nmstate  the register reconcile 3.2 s (2.2 s of it the service), 5 writes;
           nothing new: 0.41 s, 0 writes, 1 service call; one config
           changed: 1.4 s, 2 writes, 5 service calls; peak RSS 151 MB.
  install  warm-up passes 82 s + 85 s + 1.3 s (the Agents created, then
           spec and status); the full pass with nothing to change 0.97 s,
           0 writes, 10 service calls; one host changed: 2 writes (the
           Agent's status and its inventory annotation); peak RSS 98 MB.
  capi     50 Machines of 10 clusters: steady state 135 s after cradle-hub
           started (65 s of it waiting for the service to settle and the
           15 s of quiet), every host bound, every installation started.

                                      requests     writes   full pass
                                     per object per object  req / writes
  CAPI path, per Machine (50)           34.02      15.34    1.08 / 0
    kube-apiserver / service          712/989     587/180    34/20 / 0/0
  ClusterDeployment path, per Agent     4.23       3.05     0.04 / 0
    (1000) kube-apiserver / service  3073/1155    3041/10     0/45 / 0/0

  The CAPI path's writes per Machine: machines/status 5.3 (the
  HostInstallation condition as the host moves), a bootstrap data Secret
  1, the service's BindHost, UpdateHost (role, hostname) and
  UpdateHostIgnition (the sentinel) 1 each, OpenshiftAssistedConfig
  create (control plane) and status, Metal3Machine and Machine creates
  (control plane: 0.6 each), and per cluster: RegisterCluster,
  RegisterInfraEnv, InstallCluster, 3 control-plane patches, ~4 status
  patches; the pull secret's watch labels once. Its requests are not
  comparable one to one: the CAPI figure is the cradle-hub program over
  2-3 minutes (the service polled every second: --service-poll-interval
  1s, as the e2e runs it; watches, lists and a restart in its full
  pass), the install figure bench-hub.c's
  controllers in-process, one pass after another. Writes are: about 5
  times the ClusterDeployment path's per object, 0 in both full passes.
  The reads (printed): cradle-hub --capi reads Secrets from its cache
  (the data Secrets and <cluster>-kubeconfig carry the watch labels from
  their creation, the pull secret gets them at its first reconcile: one
  GET of each, while the cache has not caught up), watches the
  MachineDeployments (one list), reads <cluster>-kubeconfig only from the
  installation's start and the Metal3MachineTemplate only to make a
  Machine; settled, no kube-apiserver request in 10 s. Before that (issue
  22's cache change: 10-14 GETs of Secrets per Machine, a template GET and
  a MachineDeployments LIST per reconcile) the same run measured 58.66
  requests per Machine (2225/708), 15.52 writes, a full pass of 3.64
  (142/40), and 30 requests in the settled 10 s; the hub then ran at its
  client's 20 QPS, which held its reconciles back. Unthrottled, the
  control plane reconciles about twice as often while hosts move
  (v2GetCluster 509 against 239, each with a v2ListHosts): hence the
  larger service share. Since then the control plane reads the
  infra-env's host list only while a Machine's host is not yet bound to
  its cluster (v2GetCluster carries the bound hosts): v2ListHosts 240
  where it was one per reconcile (~509), the service's share 989 where
  it was 1,248 (39.68 requests per Machine), the full pass 1.08 where it
  was 1.48 (40 service reads: 20). Settled, the 10 control planes still
  read their cluster every 10 s while it prepares to install (10 GETs in
  10 s, no kube-apiserver request).

Not a test: figures, no verdict. Use a build without -Dsanitize.
"""
import json
import os
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, 'tests', 'kubeapi'))
sys.path.insert(0, os.path.join(ROOT, 'tests', 'service'))
import kubeapi_harness as H  # noqa: E402
from refclient import RefService  # noqa: E402

REF = os.path.join(ROOT, 'tests', 'reference', 'assisted-service')
CRDS = [os.path.join(REF, 'config', 'crd', 'bases'), os.path.join(REF, 'hack', 'crds', 'metal3'),
        os.path.join(REF, 'hack', 'crds', 'hive')]
WORKERS = 8
AI = '/apis/agent-install.openshift.io/v1beta1/namespaces/%s/'
M3 = '/apis/metal3.io/v1alpha1/namespaces/%s/'
PULL_SECRET = '{"auths":{"cloud.openshift.com":{"auth":"dXNlcjpwYXNzd29yZAo=","email":"r@rr.com"}}}'


def parallel(s, n, fn):
    errors = []

    def work(k):
        c = s.conn()
        try:
            for i in range(k, n, WORKERS):
                fn(c, i)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)
    threads = [threading.Thread(target=work, args=(k,)) for k in range(WORKERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        sys.exit('bench-hub: %s' % errors[0])


def req(c, method, path, body, ctype='application/json'):
    c.request(method, path, body=json.dumps(body), headers={'Content-Type': ctype})
    r = c.getresponse()
    raw = r.read()
    if r.status >= 300:
        raise RuntimeError('%s %s: %s %s' % (method, path, r.status, raw[:300]))
    return raw


def mac(i):
    return '02:%02x:%02x:%02x:%02x:%02x' % ((i >> 32) & 255, (i >> 24) & 255, (i >> 16) & 255, (i >> 8) & 255, i & 255)


def hub_requests(s, since):
    """What the hub side sent (its user agent), by verb and resource."""
    got = s.ctl('GET', '/requests?since=%d' % since)
    items = got.get('requests', got) if isinstance(got, dict) else got
    counts = {}
    for r in items:
        if not str(r.get('userAgent', r.get('user_agent', ''))).startswith('cradle'):
            continue
        k = '%s %s%s' % (r.get('verb'), r.get('resource'), '/' + r['subresource'] if r.get('subresource') else '')
        counts[k] = counts.get(k, 0) + 1
    return counts


def last_seq(s):
    got = s.ctl('GET', '/requests')
    items = got.get('requests', got) if isinstance(got, dict) else got
    return max([r.get('seq', 0) for r in items] or [0])


def bench_bmac(bench, s, url, n=1000):
    ns = 'bench-bmac'
    s.post('/api/v1/namespaces', {'metadata': {'name': ns}})
    s.post(AI % ns + 'infraenvs', {'apiVersion': 'agent-install.openshift.io/v1beta1', 'kind': 'InfraEnv',
                                   'metadata': {'name': 'myinfraenv'}, 'spec': {'pullSecretRef': {'name': 'ps'}}})
    s.patch(AI % ns + 'infraenvs/myinfraenv/status',
            {'status': {'isoDownloadURL': 'http://img/byid/ie/4.14/x86_64/minimal.iso',
                        'createdTime': '2020-01-01T00:00:00Z'}})
    t0 = time.monotonic()

    def create(c, i):
        name = 'host-%04d' % i
        req(c, 'POST', M3 % ns + 'baremetalhosts',
            {'apiVersion': 'metal3.io/v1alpha1', 'kind': 'BareMetalHost',
             'metadata': {'name': name, 'labels': {'infraenvs.agent-install.openshift.io': 'myinfraenv'},
                          'annotations': {'bmac.agent-install.openshift.io/role': 'worker',
                                          'bmac.agent-install.openshift.io/hostname': name + '.example.test'}},
             'spec': {'online': False, 'bootMACAddress': mac(i),
                      'bmc': {'address': 'redfish://198.51.100.5/%d' % i, 'credentialsName': 'bmc'}}})
        req(c, 'PATCH', M3 % ns + 'baremetalhosts/' + name + '/status',
            {'status': {'operationalStatus': 'OK', 'poweredOn': False, 'errorCount': 0, 'errorMessage': '',
                        'hardwareProfile': '',
                        'provisioning': {'ID': str(i), 'state': 'ready'}}}, 'application/merge-patch+json')
        agent = '%08x-0000-4000-8000-%012x' % (i, i)
        req(c, 'POST', AI % ns + 'agents',
            {'apiVersion': 'agent-install.openshift.io/v1beta1', 'kind': 'Agent',
             'metadata': {'name': agent, 'labels': {'infraenvs.agent-install.openshift.io': 'myinfraenv'}},
             'spec': {'approved': False, 'role': ''}})
        req(c, 'PATCH', AI % ns + 'agents/' + agent + '/status',
            {'status': {'inventory': {
                'hostname': name, 'memory': {'physicalBytes': 17179869184},
                'cpu': {'count': 8, 'architecture': 'x86_64', 'flags': ['vmx']},
                'systemVendor': {'manufacturer': 'Red Hat', 'productName': 'KVM', 'virtual': True},
                'interfaces': [{'name': 'eth0', 'macAddress': mac(i), 'flags': [], 'speedMbps': 10000,
                                'ipV4Addresses': ['198.51.100.%d/24' % (i % 250 + 1)], 'ipV6Addresses': []}],
                'disks': [{'id': '/dev/disk/by-path/pci-%d' % i, 'path': '/dev/sda', 'driveType': 'SSD',
                           'sizeBytes': 128849018880,
                           'installationEligibility': {'eligible': True, 'notEligibleReasons': []}}]}}},
            'application/merge-patch+json')
    parallel(s, n, create)
    print('bmac: %d BareMetalHosts and %d Agents made in %.1f s' % (n, n, time.monotonic() - t0))
    since = last_seq(s)
    p = subprocess.run([bench, s.path('kubeconfig'), url, ns, 'bmac', str(n)], stdout=subprocess.PIPE, text=True)
    print(p.stdout.rstrip())
    if p.returncode != 0:
        sys.exit('bench-hub exited with %d' % p.returncode)
    counts = hub_requests(s, since)
    total = sum(counts.values())
    print('API requests of the hub side: %d in all (%.2f per BMH+Agent pair): %s' %
          (total, total / n, ', '.join('%s %d' % kv for kv in sorted(counts.items()))))


def bench_nmstate(bench, s, url, n=3960):
    ns = 'bench-nm'
    s.post('/api/v1/namespaces', {'metadata': {'name': ns}})
    s.post('/api/v1/namespaces/%s/secrets' % ns,
           {'apiVersion': 'v1', 'kind': 'Secret', 'type': 'kubernetes.io/dockerconfigjson',
            'metadata': {'name': 'pull-secret', 'labels': {'agent-install.openshift.io/watch': 'true'}},
            'stringData': {'.dockerconfigjson': PULL_SECRET}})
    t0 = time.monotonic()

    def config(i, ip_offset=0):
        # the docs' sample, crds/nmstate.yaml, its MACs and addresses varied
        a, b = mac(2 * i), mac(2 * i + 1)
        ip1 = '10.%d.%d.%d' % (i // 60000, (i // 250) % 240, i % 250 + 1 + ip_offset)
        ip2 = '10.%d.%d.%d' % (100 + i // 60000, (i // 250) % 240, i % 250 + 1)
        return {'config': {
            'interfaces': [
                {'name': 'eth0', 'type': 'ethernet', 'state': 'up', 'mac-address': a,
                 'ipv4': {'enabled': True, 'address': [{'ip': ip1, 'prefix-length': 24}], 'dhcp': False}},
                {'name': 'eth1', 'type': 'ethernet', 'state': 'up', 'mac-address': b,
                 'ipv4': {'enabled': True, 'address': [{'ip': ip2, 'prefix-length': 24}], 'dhcp': False}}],
            'dns-resolver': {'config': {'server': ['192.168.126.1']}},
            'routes': {'config': [
                {'destination': '0.0.0.0/0', 'next-hop-address': '192.168.126.1', 'next-hop-interface': 'eth0',
                 'table-id': 254},
                {'destination': '0.0.0.0/0', 'next-hop-address': '192.168.140.1', 'next-hop-interface': 'eth1',
                 'table-id': 254, 'metric': 100}]}},
            'interfaces': [{'name': 'eth0', 'macAddress': a}, {'name': 'eth1', 'macAddress': b}]}

    def create(c, i):
        req(c, 'POST', AI % ns + 'nmstateconfigs',
            {'apiVersion': 'agent-install.openshift.io/v1beta1', 'kind': 'NMStateConfig',
             'metadata': {'name': 'host-%04d' % i,
                          'labels': {'some-user-defined-label-name': 'some-user-defined-label-value'}},
             'spec': config(i)})
    parallel(s, n, create)
    s.post(AI % ns + 'infraenvs',
           {'apiVersion': 'agent-install.openshift.io/v1beta1', 'kind': 'InfraEnv', 'metadata': {'name': 'myinfraenv'},
            'spec': {'pullSecretRef': {'name': 'pull-secret'},
                     'nmStateConfigLabelSelector': {'matchLabels': {
                         'some-user-defined-label-name': 'some-user-defined-label-value'}}}})
    print('nmstate: %d NMStateConfigs made in %.1f s' % (n, time.monotonic() - t0))
    p = subprocess.Popen([bench, s.path('kubeconfig'), url, ns, 'nmstate', 'myinfraenv'], stdout=subprocess.PIPE,
                         stdin=subprocess.PIPE, text=True)
    for line in p.stdout:
        line = line.rstrip()
        if line == 'ready for a change':
            s.patch(AI % ns + 'nmstateconfigs/host-0007', {'spec': config(7, ip_offset=100)})
            p.stdin.write('go\n')
            p.stdin.flush()
            continue
        print(line)
    if p.wait() != 0:
        sys.exit('bench-hub exited with %d' % p.returncode)


def service_inventory(i, memory_gib=16):
    """a host's inventory as the agent reports it"""
    return {
        'hostname': 'bench-%04d' % i, 'bmc_address': '0.0.0.0', 'bmc_v6address': '::/0',
        'boot': {'current_boot_mode': 'bios'},
        'cpu': {'architecture': 'x86_64', 'count': 8, 'flags': ['fpu', 'vmx'], 'frequency': 2100,
                'model_name': 'Xeon'},
        'memory': {'physical_bytes': memory_gib << 30, 'usable_bytes': (memory_gib << 30) - (1 << 28)},
        'disks': [{'id': '/dev/disk/by-path/pci-0000:00:05.0', 'by_path': '/dev/disk/by-path/pci-0000:00:05.0',
                   'drive_type': 'SSD', 'name': 'vda', 'path': '/dev/vda', 'size_bytes': 128849018880,
                   'bootable': True, 'serial': 's-%d' % i}],
        'interfaces': [{'name': 'eth0', 'mac_address': mac(i), 'type': 'physical', 'has_carrier': True,
                        'flags': ['up', 'broadcast', 'multicast', 'running'], 'mtu': 1500, 'speed_mbps': 10000,
                        'ipv4_addresses': ['10.%d.%d.%d/16' % (i // 100, (i % 100) // 250, i % 250 + 1)],
                        'ipv6_addresses': []}],
        'routes': [{'destination': '0.0.0.0', 'family': 2, 'gateway': '10.%d.0.254' % (i // 100),
                    'interface': 'eth0'}],
        'system_vendor': {'manufacturer': 'Red Hat', 'product_name': 'KVM', 'virtual': True}}


def uid(kind, i):
    return '%08x-0000-4000-8000-%012x' % (kind, i)


def bench_install(bench, s, svc, clusters=10, per=100):
    ns = 'bench-install'
    scenario = {'settings': {'min_disk_size_gb': 1, 'next_instruction_seconds': 60},
                'clusters': [], 'infra_envs': [], 'hosts': []}
    for c in range(clusters):
        scenario['clusters'].append({'id': uid(1, c), 'name': 'c%02d' % c, 'base_dns_domain': 'bench.test',
                                     'control_plane_count': 3})
        scenario['infra_envs'].append({'id': uid(2, c), 'name': 'ie%02d' % c, 'cluster_id': uid(1, c)})
        for h in range(per):
            i = c * per + h
            scenario['hosts'].append({'id': uid(3, i), 'infra_env_id': uid(2, c), 'inventory': service_inventory(i)})
    t0 = time.monotonic()
    svc.reset(scenario)
    s.post('/api/v1/namespaces', {'metadata': {'name': ns}})
    s.post('/api/v1/namespaces/%s/secrets' % ns,
           {'apiVersion': 'v1', 'kind': 'Secret', 'type': 'kubernetes.io/dockerconfigjson',
            'metadata': {'name': 'pull-secret', 'labels': {'agent-install.openshift.io/watch': 'true'}},
            'stringData': {'.dockerconfigjson': PULL_SECRET}})
    s.post('/apis/hive.openshift.io/v1/clusterimagesets',
           {'apiVersion': 'hive.openshift.io/v1', 'kind': 'ClusterImageSet', 'metadata': {'name': 'bench-4.13'},
            'spec': {'releaseImage': 'quay.io/openshift-release-dev/ocp-release:4.13.18-x86_64'}})
    for c in range(clusters):
        name = 'c%02d' % c
        s.post('/apis/hive.openshift.io/v1/namespaces/%s/clusterdeployments' % ns,
               {'apiVersion': 'hive.openshift.io/v1', 'kind': 'ClusterDeployment',
                'metadata': {'name': name, 'annotations': {'cradle.agent-install.openshift.io/cluster-id': uid(1, c)}},
                'spec': {'baseDomain': 'bench.test', 'clusterName': name,
                         'clusterInstallRef': {'group': 'extensions.hive.openshift.io', 'kind': 'AgentClusterInstall',
                                               'name': name, 'version': 'v1beta1'},
                         'platform': {'agentBareMetal': {'agentSelector': {}}},
                         'pullSecretRef': {'name': 'pull-secret'}}})
        s.post('/apis/extensions.hive.openshift.io/v1beta1/namespaces/%s/agentclusterinstalls' % ns,
               {'apiVersion': 'extensions.hive.openshift.io/v1beta1', 'kind': 'AgentClusterInstall',
                'metadata': {'name': name},
                'spec': {'clusterDeploymentRef': {'name': name}, 'imageSetRef': {'name': 'bench-4.13'},
                         'networking': {'clusterNetwork': [{'cidr': '10.128.0.0/14', 'hostPrefix': 23}],
                                        'serviceNetwork': ['172.30.0.0/16']},
                         'provisionRequirements': {'controlPlaneAgents': 3}}})
        s.post(AI % ns + 'infraenvs',
               {'apiVersion': 'agent-install.openshift.io/v1beta1', 'kind': 'InfraEnv',
                'metadata': {'name': 'ie%02d' % c,
                             'annotations': {'cradle.agent-install.openshift.io/infra-env-id': uid(2, c)}},
                'spec': {'pullSecretRef': {'name': 'pull-secret'}, 'clusterRef': {'name': name, 'namespace': ns}}})
    print('install: %d clusters with %d hosts each in the service, their objects made in %.1f s' %
          (clusters, per, time.monotonic() - t0))
    since = last_seq(s)
    kseq0, sseq0 = since, service_seq(svc)
    marks = (since, sseq0)
    figures = {'objects': clusters * per}
    p = subprocess.Popen([bench, s.path('kubeconfig'), svc.url, ns, 'install', str(clusters)],
                         stdout=subprocess.PIPE, stdin=subprocess.PIPE, text=True)
    for line in p.stdout:
        line = line.rstrip()
        if line.startswith('warm-up pass'):
            # bench-hub sleeps 2 s after each: the log's end is the pass's
            marks = (last_seq(s), service_seq(svc))
        if line == 'ready for a change':
            figures['steady'] = hub_figures(s, svc, kseq0, sseq0, marks)
            figures['pass'] = hub_figures(s, svc, marks[0], marks[1])
            print('install: to steady state: %s; the full pass: %s' % (
                written(figures['steady']), written(figures['pass'])))
            counts = hub_requests(s, since)
            print('API requests of the hub side so far: %d (%s)' % (
                sum(counts.values()), ', '.join('%s %d' % kv for kv in sorted(counts.items()))))
            since = last_seq(s)
            # one host's memory doubles (a reboot with more RAM, as the agent reports it)
            svc.set_host(uid(3, 7), inventory=service_inventory(7, memory_gib=32))
            p.stdin.write('go\n')
            p.stdin.flush()
            print('host %s: its inventory changed in the service (memory 16 -> 32 GiB)' % uid(3, 7))
            continue
        print(line)
    if p.wait() != 0:
        sys.exit('bench-hub exited with %d' % p.returncode)
    counts = hub_requests(s, since)
    print('API requests of the hub side from the change on: %d (%s)' % (
        sum(counts.values()), ', '.join('%s %d' % kv for kv in sorted(counts.items()))))
    return figures


# ---- capi: cradle-hub --capi, the Cluster API way (issue 22) ----

SPOKE_AGENT = 'cradle-hub-spoke/'  # the hub's clients of the new clusters' API servers: not counted


def hub_agent(ua):
    """cradle-hub's own clients (cradle-hub/, bench-hub's cradle/), not
    its spoke clients nor capicore's or this script's (no cradle agent)"""
    ua = str(ua or '')
    return ua.startswith('cradle') and not ua.startswith(SPOKE_AGENT)
READS = ('get', 'list', 'watch')


def kube_log(s, since):
    got = s.ctl('GET', '/requests?since=%d' % since)
    return got.get('requests', got) if isinstance(got, dict) else got


def split(items, agent, write):
    """(requests, writes, what was written) of one user agent's entries"""
    mine = [r for r in items if agent(r)]
    written = [r for r in mine if write(r)]
    return len(mine), len(written), written, [r for r in mine if not write(r)]


def hub_figures(s, svc, kseq, sseq, until=None):
    """The hub's kube-apiserver and service requests since those marks (up
    to until's): {kube: (requests, writes, written), service: (...)}"""
    kend, send = until or (float('inf'), float('inf'))
    k = split([r for r in kube_log(s, kseq) if r.get('seq', 0) <= kend],
              lambda r: hub_agent(r.get('userAgent')), lambda r: r.get('verb') not in READS)
    v = split([r for r in svc.requests(since=sseq) if r.get('seq', 0) <= send],
              lambda r: hub_agent((r.get('headers') or {}).get('User-Agent')),
              lambda r: r.get('method') != 'GET')
    return {'kube': k, 'service': v}


def service_seq(svc):
    items = svc.requests()
    return max([r.get('seq', 0) for r in items] or [0])


def written(fig, which=2):
    """what the hub wrote (which=2) or read (3), by verb and resource"""
    out = {}
    for r in fig['kube'][which]:
        k = '%s %s%s' % (r.get('verb'), r.get('resource'), '/' + r['subresource'] if r.get('subresource') else '')
        if which == 3 and r.get('verb') == 'get' and r.get('name'):
            k += ' ' + r['name']
        out[k] = out.get(k, 0) + 1
    for r in fig['service'][which]:
        k = '%s %s' % (r.get('method'), r.get('operation') or r.get('path'))
        out[k] = out.get(k, 0) + 1
    return ', '.join('%s %d' % kv for kv in sorted(out.items())) or 'nothing'


def capi_objects(ns, c, workers, hublab):
    """tools/rehearse --capi's resources (hublab.capi_resources) for cluster c, named c<NN>"""
    name = 'c%02d' % c
    text = json.dumps(hublab.capi_resources(ns, workers=workers)[1:])   # [0]: the pull secret, made once
    for old in (hublab.CAPI_CONTROL_PLANE, hublab.CAPI_MACHINE_TEMPLATE, hublab.CAPI_WORKERS, hublab.CAPI_CLUSTER):
        text = text.replace('"%s"' % old, '"%s%s"' % (name, old[len(hublab.CAPI_CLUSTER):]))
    return name, json.loads(text)


def capi_host_ip(i):
    return '198.51.100.%d' % (110 + i)     # the clusters' API and ingress VIPs: .100, .101


def report_connectivity(svc, hosts):
    """each bound host's connectivity check (L2 and L3 to every other host of
    its cluster), as an agent answers the service's connectivity-check step:
    the service's majority group, without which no host becomes known"""
    for host_id, ie_id, i in hosts:
        steps = svc.instructions(ie_id, host_id)[1] or {}
        step = [x for x in steps.get('instructions') or [] if x.get('step_type') == 'connectivity-check']
        report = {'remote_hosts': [
            {'host_id': other, 'l2_connectivity': [
                {'outgoing_nic': 'eth0', 'outgoing_ip_address': capi_host_ip(i), 'remote_ip_address': capi_host_ip(j),
                 'remote_mac': mac(j), 'successful': True}],
             'l3_connectivity': [{'outgoing_nic': 'eth0', 'remote_ip_address': capi_host_ip(j), 'successful': True,
                                  'average_rtt_ms': 0.1, 'packet_loss_percentage': 0}]}
            for other, _, j in hosts if other != host_id]}
        st, out = svc.reply(ie_id, host_id, step[0] if step else {'step_type': 'connectivity-check'}, output=report)
        if st >= 300:
            raise RuntimeError('host %s: the connectivity reply answered %s %s' % (host_id, st, out))


def register_capi_host(svc, ie_id, host_id, hostname, i):
    """a host of the infra-env registering with its Machine's hostname and
    reporting its inventory, as tests/hub/test-hub-e2e.c's register_host()"""
    st, out = svc.register(ie_id, host_id)
    if st != 201:
        raise RuntimeError('host %s: registration answered %s %s' % (host_id, st, out))
    steps = svc.instructions(ie_id, host_id)[1] or {}
    step = [s for s in steps.get('instructions') or [] if s.get('step_type') == 'inventory']
    if not step:
        raise RuntimeError('host %s: no inventory step in %s' % (host_id, steps))
    inv = service_inventory(i)
    inv['hostname'] = hostname
    inv['interfaces'][0]['ipv4_addresses'] = ['%s/24' % capi_host_ip(i)]
    inv['routes'][0]['gateway'] = '198.51.100.1'
    st, out = svc.reply(ie_id, host_id, step[0], output=inv)
    if st >= 300:
        raise RuntimeError('host %s: the inventory reply answered %s %s' % (host_id, st, out))


def failing(validations_info):
    """the ids of the validations that do not pass"""
    try:
        v = json.loads(validations_info) if isinstance(validations_info, str) else validations_info or {}
    except ValueError:
        return None
    return ', '.join(x.get('id') for group in v.values() for x in group if x.get('status') != 'success')


def quiet(s, svc, seconds, timeout):
    """waits until the hub writes nothing (kube-apiserver nor service) for
    seconds; returns the time it took"""
    t0 = last = time.monotonic()
    kseq, sseq = last_seq(s), service_seq(svc)
    while time.monotonic() - last < seconds:
        if time.monotonic() - t0 > timeout:
            raise RuntimeError('the hub still writes after %d s' % timeout)
        time.sleep(1)
        f = hub_figures(s, svc, kseq, sseq)
        kseq, sseq = last_seq(s), service_seq(svc)
        if f['kube'][1] or f['service'][1]:
            last = time.monotonic()
    return time.monotonic() - t0


def bench_capi(s, svc, clusters=int(os.environ.get('BENCH_CAPI_CLUSTERS', '10')), workers=2):
    sys.path.insert(0, os.path.join(ROOT, 'tests', 'hub'))
    import hublab
    C = hublab.capicore()
    ns = 'bench-capi'
    per = 3 + workers
    kube = hublab.Kube(s.path('kubeconfig'))
    C.ensure_crds(kube)
    lab = hublab.Lab('bench-capi')
    core = hub = None
    t0 = time.monotonic()
    try:
        s.post('/api/v1/namespaces', {'metadata': {'name': ns}})
        kube.request('POST', '/api/v1/namespaces/%s/secrets' % ns, hublab.capi_resources(ns)[0])
        resolver = C.Resolver(kube)
        names = []
        for c in range(clusters):
            name, objs = capi_objects(ns, c, workers, hublab)
            names.append(name)
            for o in objs:
                group = o['apiVersion'].rpartition('/')[0]
                kube.request('POST', '/apis/%s/namespaces/%s/%s' % (
                    o['apiVersion'], ns, resolver.resource(group, o['kind'])[1]), o)
        print('capi: %d Clusters, each an OpenshiftAssistedControlPlane of 3 replicas and a MachineDeployment of %d '
              'workers, made in %.1f s' % (clusters, workers, time.monotonic() - t0))
        kseq, sseq = last_seq(s), service_seq(svc)
        t0 = time.monotonic()
        core = C.CapiCore(kube, ns, interval=1).start()
        hub = hublab.Hub(lab, s.path('kubeconfig'), svc.url, ns, extra=('--capi', '--log-level', 'info')).start()

        # the hosts: one per Machine, registering with its name once the
        # control plane's infra-env is registered (its annotation)
        booted = {}
        deadline = time.monotonic() + 600
        while len(booted) < clusters * per:
            if time.monotonic() > deadline:
                raise RuntimeError('%d of %d hosts registered after 600 s' % (len(booted), clusters * per))
            for cp in kube.request('GET', resolver.path(ns, 'controlplane.cluster.x-k8s.io',
                                                        'OpenshiftAssistedControlPlane'))['items']:
                ie_id = ((cp['metadata'].get('annotations') or {}).get(hublab.ANNOTATION_INFRA_ENV_ID))
                cluster = (cp['metadata'].get('labels') or {}).get(C.CLUSTER_NAME_LABEL)
                if not ie_id or not cluster:
                    continue
                for m in kube.request('GET', '/apis/cluster.x-k8s.io/v1beta2/namespaces/%s/machines?labelSelector=%s'
                                      % (ns, C.CLUSTER_NAME_LABEL + '%3D' + cluster))['items']:
                    mname = m['metadata']['name']
                    if mname in booted or not (m['spec'].get('bootstrap') or {}).get('dataSecretName'):
                        continue
                    i = len(booted)
                    register_capi_host(svc, ie_id, uid(4, i), mname, i)
                    booted[mname] = (uid(4, i), ie_id, i)
            time.sleep(1)
        print('capi: %d hosts registered with their Machines\' names in %.1f s' % (len(booted), time.monotonic() - t0))
        # once cradle-hub bound them to their clusters, each registers again
        # (a bound host is binding until its agent does) and reports its
        # inventory and its connectivity
        names = dict((h[0], m) for m, h in booted.items())
        by_id = dict((h[0], h) for h in booted.values())

        def bound():
            out = {}
            for h in svc.hosts():
                if h.get('id') in by_id and h.get('cluster_id'):
                    out.setdefault(h['cluster_id'], []).append(by_id[h['id']])
            return out if sum(len(v) for v in out.values()) == len(booted) else None
        groups = hublab.wait('every host bound to its cluster', bound, 600, 1)
        for hosts in groups.values():
            for host_id, ie_id, i in hosts:
                register_capi_host(svc, ie_id, host_id, names[host_id], i)
        for hosts in groups.values():
            report_connectivity(svc, hosts)
        print('capi: every host bound, registered again, its connectivity reported, in %.1f s' % (
            time.monotonic() - t0))
        settle = quiet(s, svc, 15, 900)
        steady = time.monotonic() - t0
        machines = kube.request('GET', '/apis/cluster.x-k8s.io/v1beta2/namespaces/%s/machines' % ns)['items']
        bound = sum(1 for m in machines if any(c.get('type') == 'HostInstallation'
                                               for c in (m.get('status') or {}).get('conditions') or []))
        states = {}
        why = None
        for cid in set(h.get('cluster_id') for h in svc.hosts() if h.get('id') in by_id and h.get('cluster_id')):
            rec = svc.control('GET', '/clusters/%s' % cid)
            st = rec.get('status')
            states[st] = states.get(st, 0) + 1
            if st in ('insufficient', 'pending-for-input', 'ready') and why is None:
                why = '%s: %s' % (rec.get('status_info'), failing(rec.get('validations_info')) or '')
                for h in rec.get('hosts') or []:
                    if h.get('status') != 'known':
                        why += '; a host %s: %s' % (h.get('status'), failing(h.get('validations_info')))
                        break
        steady_fig = hub_figures(s, svc, kseq, sseq)
        print('capi: steady state in %.0f s (quiet %.0f s of it): %d Machines, %d with their host bound '
              '(HostInstallation), the clusters in the service: %s' % (
                  steady, settle, len(machines), bound, ', '.join('%s %d' % kv for kv in sorted(states.items()))))
        if why:
            print('capi: a cluster not installing: %s' % why)
        print('capi: to steady state: %s' % written(steady_fig))
        print('capi: read to steady state: %s' % written(steady_fig, 3))
        # settled: what the hub still sends while nothing changes
        kseq, sseq = last_seq(s), service_seq(svc)
        time.sleep(10)
        idle = hub_figures(s, svc, kseq, sseq)
        print('capi: settled, 10 s of nothing changing: %d kube-apiserver requests, %d service requests, written %s; '
              'read: %s' % (idle['kube'][0], idle['service'][0], written(idle), written(idle, 3)))
        hub.stop()
        # the full pass with nothing to change: a cradle-hub restarted over
        # the settled objects (its first pass is over every object)
        kseq, sseq = last_seq(s), service_seq(svc)
        t0 = time.monotonic()
        hub.start()
        quiet(s, svc, 15, 600)
        hub.stop()
        pass_fig = hub_figures(s, svc, kseq, sseq)
        print('capi: a restarted cradle-hub\'s full pass over the settled objects, %.0f s (15 s of quiet in it): '
              'written %s' % (time.monotonic() - t0, written(pass_fig)))
        return {'objects': len(machines), 'steady': steady_fig, 'pass': pass_fig}
    finally:
        if hub:
            hub.stop()
        if core:
            core.stop()
        lab.close()


def compare(capi, install):
    print('\nper object, the hub\'s requests (kube-apiserver + service) and writes (non-GET):')
    print('%-44s %10s %10s %10s %10s' % ('', 'requests', 'writes', 'pass req', 'pass wr'))
    for label, f in (('CAPI path, per Machine', capi), ('ClusterDeployment path, per Agent', install)):
        if not f:
            continue
        label = '%s (%d)' % (label, f['objects'])
        n = float(f['objects'])
        st, ps = f['steady'], f['pass']
        print('%-44s %10.2f %10.2f %10.2f %10.2f' % (
            label, (st['kube'][0] + st['service'][0]) / n, (st['kube'][1] + st['service'][1]) / n,
            (ps['kube'][0] + ps['service'][0]) / n, (ps['kube'][1] + ps['service'][1]) / n))
        print('%-44s %10s %10s %10s %10s' % (
            '  of it kube-apiserver / service', '%d/%d' % (st['kube'][0], st['service'][0]),
            '%d/%d' % (st['kube'][1], st['service'][1]), '%d/%d' % (ps['kube'][0], ps['service'][0]),
            '%d/%d' % (ps['kube'][1], ps['service'][1])))


def main():
    bench = sys.argv[1] if len(sys.argv) > 1 else 'build/bench/hub/bench-hub'
    which = sys.argv[2] if len(sys.argv) > 2 else 'all'
    args = []
    for c in CRDS:
        args += ['--apply', c]
    s = H.Server(args + ['--window', '100000']).start()
    svc = RefService(scenario={'settings': {'min_disk_size_gb': 1}})
    svc.start()
    try:
        if which in ('bmac', 'all'):
            bench_bmac(bench, s, svc.url)
        if which in ('nmstate', 'all'):
            bench_nmstate(bench, s, svc.url)
        capi = install = None
        if which in ('install', 'all'):
            install = bench_install(bench, s, svc)
        if which in ('capi', 'all'):
            capi = bench_capi(s, svc)
        if capi or install:
            compare(capi, install)
    finally:
        svc.stop()
        s.stop()


main()
