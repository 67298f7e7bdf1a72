#!/usr/bin/python3
"""container-image-availability and upgrade-agent with podman against a
registry this test starts (Debian's docker-registry, on 127.0.0.1 inside a
network namespace it makes). podman uses a storage and a registries.conf
of the test's own (CONTAINERS_STORAGE_CONF, CONTAINERS_REGISTRIES_CONF):
this machine's images are not touched. The test image is built offline
(podman import of a one-file tarball) and pushed there.
"""
import json
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stepslib  # noqa: E402
from stepslib import check_output, step  # noqa: E402

stepslib.require_root()
REGISTRY = shutil.which("docker-registry")
if not shutil.which("podman"):
    stepslib.skip("podman is not installed")
if not REGISTRY:
    stepslib.skip("docker-registry is not installed")
stepslib.model()
lab = stepslib.Lab()
NS = lab.ns("img")
T = lab.tmp
with open(os.path.join(T, "storage.conf"), "w") as f:
    f.write('[storage]\ndriver = "vfs"\ngraphroot = "%s/graph"\nrunroot = "%s/run"\n' % (T, T))
with open(os.path.join(T, "registries.conf"), "w") as f:
    f.write('unqualified-search-registries = []\n[[registry]]\nlocation = "127.0.0.1:5000"\ninsecure = true\n')
with open(os.path.join(T, "registry.yml"), "w") as f:
    f.write("version: 0.1\nstorage:\n  filesystem:\n    rootdirectory: %s/registry\nhttp:\n  addr: 127.0.0.1:5000\n" % T)
ENV = {"CONTAINERS_STORAGE_CONF": os.path.join(T, "storage.conf"),
       "CONTAINERS_REGISTRIES_CONF": os.path.join(T, "registries.conf")}
penv = dict(os.environ, **ENV)
lab.spawn(NS, [REGISTRY, "serve", os.path.join(T, "registry.yml")],
          stdout=open(os.path.join(T, "registry.log"), "w"), stderr=subprocess.STDOUT)


def podman(*args):
    return subprocess.run(["ip", "netns", "exec", NS, "podman"] + list(args), env=penv, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE)


os.makedirs(os.path.join(T, "root"))
with open(os.path.join(T, "root", "hello"), "w") as f:
    f.write("hello from the test image\n")
subprocess.run(["tar", "-C", os.path.join(T, "root"), "-cf", os.path.join(T, "img.tar"), "."], check=True)
if podman("import", os.path.join(T, "img.tar"), "localhost/cradle-steps-test:1").returncode != 0:
    stepslib.skip("podman cannot import an image here")
IMAGE = "127.0.0.1:5000/cradle/steps-test:1"
for _ in range(50):
    p = podman("push", "localhost/cradle-steps-test:1", IMAGE)
    if p.returncode == 0:
        break
    time.sleep(0.2)
else:
    stepslib.skip("cannot push to the test registry: %s" % p.stderr.decode())
podman("rmi", "-f", "localhost/cradle-steps-test:1")


def images(req, **kw):
    return step("container-image-availability", json.dumps(req), netns=NS, env=ENV, **kw)


def test_1_pull_reports_size_time_rate():
    assert podman("image", "exists", IMAGE).returncode != 0
    r = images({"images": [IMAGE], "timeout": 120})
    assert r["exit_code"] == 0 and r["error"] == "", r
    out = check_output("container-image-availability", r["output"])
    img = out["images"][0]
    assert img["name"] == IMAGE and img["result"] == "success", out
    size = int(podman("image", "inspect", "--format={{.Size}}", IMAGE).stdout)
    assert img["size_bytes"] == size and img["time"] > 0, img
    assert abs(img["download_rate"] - size / 1e6 / img["time"]) < 1e-9, img


def test_2_present_image_and_failures():
    r = images({"images": [IMAGE, "127.0.0.1:5000/cradle/missing:1"], "timeout": 120})
    assert r["exit_code"] == 2, r      # any failed image
    out = check_output("container-image-availability", r["output"])
    assert out["images"] == [{"name": IMAGE, "result": "success"},
                             {"name": "127.0.0.1:5000/cradle/missing:1", "result": "failure"}], out
    # no time left: failure without pulling
    r = images({"images": [IMAGE], "timeout": 0})
    assert r["exit_code"] == 2 and json.loads(r["output"])["images"] == [{"name": IMAGE, "result": "failure"}], r
    r = images({"images": ["Not An Image!"]})
    assert r["exit_code"] == -1 and "images.0 in body should match" in r["error"], r
    r = images({"timeout": 5})
    assert r["exit_code"] == -1 and r["error"] == "validation failure list:\nimages in body is required", r


def test_3_dry_run_fakes_figures():
    r = images({"images": [IMAGE, "127.0.0.1:5000/cradle/missing:1"], "timeout": 1}, dry_run=True)
    assert r["exit_code"] == 0, r
    out = check_output("container-image-availability", r["output"])
    assert out["images"] == [{"download_rate": 100, "name": n, "result": "success", "size_bytes": 400000000,
                              "time": 10} for n in (IMAGE, "127.0.0.1:5000/cradle/missing:1")], out


def test_4_upgrade_agent():
    podman("rmi", "-f", IMAGE)
    r = step("upgrade-agent", json.dumps({"agent_image": IMAGE}), netns=NS, env=ENV)
    assert r["exit_code"] == 0 and r["end_runner"] is True, r
    assert check_output("upgrade-agent", r["output"]) == {"agent_image": IMAGE, "result": "success"}, r
    assert podman("image", "exists", IMAGE).returncode == 0
    r = step("upgrade-agent", json.dumps({"agent_image": "127.0.0.1:5000/cradle/missing:1"}), netns=NS, env=ENV)
    # a failed pull is still exit 0, and the runner goes on
    assert r["exit_code"] == 0 and r["end_runner"] is False, r
    assert json.loads(r["output"]) == {"agent_image": "127.0.0.1:5000/cradle/missing:1", "result": "failure"}, r


stepslib.run_tests([(n, f) for n, f in sorted(globals().items()) if n.startswith("test_")])
