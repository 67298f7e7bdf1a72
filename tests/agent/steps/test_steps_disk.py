#!/usr/bin/python3
"""installation-disk-speed-check on loop devices this test creates.

The backing files live on a tmpfs this test mounts (fdatasync there is
quick, and no real disk is touched). Each device is filled with random
bytes first; after the step, every byte from offset 23069000 (the end of
fio's region: 10030 writes of 2300 bytes) to the end must be unchanged,
and the region itself must have been written. Devices are detached in
the exit handler, also when a test fails.
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stepslib  # noqa: E402
from stepslib import check_output, step  # noqa: E402

REGION_END = 10030 * 2300          # 23069000
stepslib.require_root()
if not shutil.which("losetup"):
    stepslib.skip("losetup is not installed")
stepslib.model()
lab = stepslib.Lab()
MNT = os.path.join(lab.tmp, "tmpfs")
os.makedirs(MNT)
if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256m", "tmpfs", MNT]).returncode != 0:
    stepslib.skip("cannot mount a tmpfs for the loop devices' backing files")
loops = []


def cleanup():
    for dev in loops:
        subprocess.run(["losetup", "-d", dev])
    subprocess.run(["umount", MNT])


import atexit  # noqa: E402
atexit.register(cleanup)


def loop_device(name, size):
    path = os.path.join(MNT, name)
    with open(path, "wb") as f:
        f.write(os.urandom(size))
    p = subprocess.run(["losetup", "-f", "--show", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0:
        stepslib.skip("cannot create a loop device: %s" % p.stderr.decode().strip())
    dev = p.stdout.decode().strip()
    loops.append(dev)
    return dev, path


def digest(path, start, end=None):
    with open(path, "rb") as f:
        f.seek(start)
        data = f.read() if end is None else f.read(end - start)
    return hashlib.sha256(data).hexdigest()


def snapshot(path):
    return digest(path, 0, REGION_END), digest(path, REGION_END)


def test_measures_and_writes_only_fio_region():
    dev, path = loop_device("disk1.img", 40 * 1024 * 1024)
    region, outside = snapshot(path)
    r = step("installation-disk-speed-check", json.dumps({"path": dev}), "480.00")
    assert r["exit_code"] == 0 and r["error"] == "", r
    out = check_output("installation-disk-speed-check", r["output"])
    assert out["path"] == dev, out
    # whole milliseconds, omitted when 0 (as the Go model's omitempty)
    assert isinstance(out.get("io_sync_duration", 0), int) and out.get("io_sync_duration", 0) >= 0, out
    subprocess.run(["losetup", "-d", dev], check=True)   # drop the device's page cache view
    loops.remove(dev)
    after_region, after_outside = snapshot(path)
    assert after_outside == outside, "bytes outside [0, %d) changed" % REGION_END
    assert after_region != region, "the region was not written"
    # the last byte of the region was written, the first after it was not
    with open(path, "rb") as f:
        f.seek(REGION_END - 2300)
        last_block = f.read(2300)
    assert last_block.count(0) < 2300


def test_dry_run_writes_nothing():
    dev, path = loop_device("disk2.img", 40 * 1024 * 1024)
    before = digest(path, 0)
    r = step("installation-disk-speed-check", json.dumps({"path": dev}), "480.00", dry_run=True)
    assert r["exit_code"] == 0 and r["output"] == json.dumps({"io_sync_duration": 1, "path": dev},
                                                             separators=(",", ":")), r
    check_output("installation-disk-speed-check", r["output"])
    assert digest(path, 0) == before


def test_small_busy_and_missing_devices_are_refused():
    small, spath = loop_device("small.img", 16 * 1024 * 1024)
    before = digest(spath, 0)
    r = step("installation-disk-speed-check", json.dumps({"path": small}), "480.00")
    assert r["exit_code"] == 255 and r["output"] == json.dumps({"path": small}, separators=(",", ":")), r
    assert r["error"].startswith("Could not get I/O performance for path %s" % small), r
    assert digest(spath, 0) == before

    busy, bpath = loop_device("busy.img", 40 * 1024 * 1024)
    before = digest(bpath, 0)
    holder = os.open(busy, os.O_RDONLY | os.O_EXCL)     # as a mount or LVM would hold it
    try:
        r = step("installation-disk-speed-check", json.dumps({"path": busy}), "480.00")
    finally:
        os.close(holder)
    assert r["exit_code"] == 255 and "in use" in r["error"], r
    assert digest(bpath, 0) == before

    r = step("installation-disk-speed-check", '{"path":"/dev/cradle-no-such-disk"}', "480.00")
    assert r["exit_code"] == 255 and "cradle-no-such-disk" in r["error"], r
    assert not os.path.exists("/dev/cradle-no-such-disk")


def test_invalid_arguments_run_nothing():
    dev, path = loop_device("disk3.img", 40 * 1024 * 1024)
    before = digest(path, 0)
    for args, err in (((json.dumps({"path": dev}), "soon"), 'strconv.ParseFloat: parsing "soon": invalid syntax'),
                      (("{}", "480.00"), "validation failure list:\npath in body is required"),
                      (('{"path": 5}', "480.00"),
                       "json: cannot unmarshal number into Go struct field DiskSpeedCheckRequest.path of type string")):
        r = step("installation-disk-speed-check", *args)
        assert r["exit_code"] == -1 and r["error"] == err, r
    r = step("installation-disk-speed-check", json.dumps({"path": dev}))
    assert r["exit_code"] == -1 and "2 params" in r["error"], r
    assert digest(path, 0) == before


def test_disk_speed_check_program():
    cradle = os.environ.get("CRADLE_BINARY")
    if not cradle or not os.path.exists(cradle):
        print("(no cradle binary: program test not run)")
        return
    dev, path = loop_device("disk4.img", 40 * 1024 * 1024)
    outside = digest(path, REGION_END)
    p = subprocess.run([cradle, "disk_speed_check", "--with-journal-logging=false", json.dumps({"path": dev})],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=dict(os.environ, CRADLE_LOG_TARGET="null"))
    assert p.returncode == 0 and p.stderr == b"", p
    check_output("installation-disk-speed-check", p.stdout.decode())
    assert digest(path, REGION_END) == outside
    p = subprocess.run([cradle, "disk_speed_check"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       env=dict(os.environ, CRADLE_LOG_TARGET="null"))
    assert p.returncode == 255 and p.stdout == b"" and \
        p.stderr == b"Failed to unmarshal DiskSpeedCheckRequest: unexpected end of JSON input", p
    p = subprocess.run([cradle, "disk_speed_check", "--dry-run", json.dumps({"path": dev})],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=dict(os.environ, CRADLE_LOG_TARGET="null"))
    assert p.returncode == 0 and json.loads(p.stdout) == {"io_sync_duration": 1, "path": dev}, p


stepslib.run_tests([(n, f) for n, f in sorted(globals().items()) if n.startswith("test_")])
