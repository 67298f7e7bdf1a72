#!/usr/bin/python3
# Round trips, schema checks and the second opinion of Ignition's own
# validator over the corpus in tests/ignition/corpus.
#
#  - round trip: serialize(parse(x)) is x up to Go's omitempty equivalence
#    (null, {} and [] mean "absent"), and serializing again is byte-identical;
#  - every config cradle writes (same-version and up-translations, merges of
#    the hive-integration overrides onto every valid config, pointer configs
#    of every version) validates against the JSON schema of the version it
#    declares (../shared/reference/ignition) and passes `cradle ignition
#    validate`; for 3.0-3.3 also the real ignition-validate;
#  - down-translation either works (and validates) or is refused with exit 1;
#  - ignition-validate's verdict on every corpus file of spec 3.0-3.3 matches
#    cradle's, and so do the paths of the errors, except where KNOWN_DIFFS
#    says why they differ.
#
# Usage: check-corpus.py CRADLE SOURCE_ROOT. Exits 77 when the schemas or
# python3-jsonschema are missing.
import json
import os
import re
import subprocess
import sys
import tempfile

cradle, src = sys.argv[1], sys.argv[2]
corpus = os.path.join(src, "tests/ignition/corpus")
# ../shared beside the clone (CI), or further up (worktrees)
refdir = os.environ.get("CRADLE_IGNITION_SCHEMAS", "")
if not refdir and os.path.isdir(os.path.join(src, "tests", "reference", "ignition")):
    refdir = os.path.join(src, "tests", "reference", "ignition")
d = os.path.abspath(src)
while not refdir and d != "/":
    d = os.path.dirname(d)
    if os.path.isdir(os.path.join(d, "shared", "reference", "ignition")):
        refdir = os.path.join(d, "shared", "reference", "ignition")
try:
    import jsonschema
except ImportError:
    print("python3-jsonschema is not installed: skipping")
    sys.exit(77)
if not os.path.exists(os.path.join(refdir, "ignition-v3_5.schema.json")):
    print("Ignition JSON schemas not found next to the tree (%s): skipping" % refdir)
    sys.exit(77)
ignition_validate = "/usr/bin/ignition-validate" if os.access("/usr/bin/ignition-validate", os.X_OK) else None

VERSIONS = ["3.0.0", "3.1.0", "3.2.0", "3.3.0", "3.4.0", "3.5.0"]
SCHEMAS = {}
for v in VERSIONS:
    with open(os.path.join(refdir, "ignition-v%s.schema.json" % v[:3].replace(".", "_"))) as f:
        SCHEMAS[v] = jsonschema.Draft4Validator(json.load(f))

# Files on which ignition-validate 2.14 and cradle disagree on an error path
# on purpose, with the reason (see tests/ignition/README.md).
KNOWN_DIFFS = {
    # Ignition 2.14 predates these checks; newer Ignition has them, and the
    # runtime fails on such configs anyway.
    "systemd-path-conflict.ign": "path conflicts with systemd units: newer Ignition only",
    "parent-is-file.ign": "file used as a parent directory: newer Ignition only",
    # Go's JSON decoder matches keys case-insensitively: "Path" sets path.
    "unknown-keys.ign": "case-insensitive key matching in Go",
    # Ignition reports an invalid luks key file at the made-up path ".keys".
    "luks.ign": "Ignition reports key file URLs at $.storage.luks[N].keys",
    # Ignition stops at the first JSON type error; cradle reports them all.
    "type-errors.ign": "all type errors instead of the first",
    # cradle reports the collision and the overlap at the later partition;
    # Ignition reports the overlap at the earlier one.
    "partitions.ign": "overlap reported at the other partition",
}

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg)


def normalize(v):
    """Go's omitempty view: null, {} and [] are absent."""
    if isinstance(v, dict):
        out = {}
        for k, x in v.items():
            n = normalize(x)
            if n is None or n == {} or n == []:
                continue
            out[k] = n
        return out
    if isinstance(v, list):
        return [normalize(x) if normalize(x) is not None else "" for x in v]
    return v


def run(args, stdin=None):
    p = subprocess.run(args, input=stdin, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def check_written(text, what):
    """A config cradle wrote: schema of its version, cradle's and Ignition's validators."""
    try:
        doc = json.loads(text)
    except ValueError as e:
        fail("%s: output is not JSON: %s" % (what, e))
        return
    version = doc.get("ignition", {}).get("version")
    if version not in SCHEMAS:
        fail("%s: declares unknown version %r" % (what, version))
        return
    errors = sorted(SCHEMAS[version].iter_errors(doc), key=lambda e: list(e.path))
    for e in errors:
        fail("%s: schema %s: %s at %s" % (what, version, e.message, "/".join(map(str, e.path))))
    with tempfile.NamedTemporaryFile("w", suffix=".ign", delete=False) as f:
        f.write(text)
        name = f.name
    try:
        rc, _, err = run([cradle, "ignition", "validate", name])
        if rc != 0:
            fail("%s: cradle ignition validate rejects what cradle wrote:\n%s" % (what, err))
        if ignition_validate and version <= "3.3.0":
            rc, out, err = run([ignition_validate, name])
            if rc != 0:
                fail("%s: ignition-validate rejects what cradle wrote:\n%s%s" % (what, out, err))
    finally:
        os.unlink(name)


def version_of(path):
    try:
        with open(path) as f:
            return json.load(f)["ignition"]["version"]
    except Exception:
        return None


valid = sorted(os.path.join(corpus, "valid", f) for f in os.listdir(os.path.join(corpus, "valid")))
invalid = sorted(os.path.join(corpus, "invalid", f) for f in os.listdir(os.path.join(corpus, "invalid"))
                 if f.endswith(".ign"))
written = 0

# --- round trips and translations -------------------------------------------
for path in valid:
    name = os.path.basename(path)
    own = version_of(path)
    with open(path) as f:
        orig = json.load(f)
    rc, out, err = run([cradle, "ignition", "translate", "-version", own, path])
    if rc != 0:
        fail("%s: same-version serialization failed: %s" % (name, err))
        continue
    if normalize(json.loads(out)) != normalize(orig):
        fail("%s: round trip changed the config:\n  in:  %s\n  out: %s" %
             (name, json.dumps(normalize(orig), sort_keys=True), json.dumps(normalize(json.loads(out)), sort_keys=True)))
    rc2, out2, _ = run([cradle, "ignition", "translate", "-version", own, "-"], stdin=out)
    if rc2 != 0 or out2 != out:
        fail("%s: serializing a serialized config is not byte-identical" % name)
    check_written(out, name + " (same version)")
    written += 1
    for v in VERSIONS:
        if v == own:
            continue
        rc, out, err = run([cradle, "ignition", "translate", "-version", v, path])
        if v > own:
            if rc != 0:
                fail("%s: up-translation to %s failed: %s" % (name, v, err))
                continue
            check_written(out, "%s (to %s)" % (name, v))
            written += 1
        elif rc == 0:
            check_written(out, "%s (down to %s)" % (name, v))
            written += 1
        elif rc != 1 or "cannot translate" not in err:
            fail("%s: down-translation to %s failed without a clear refusal (rc %d): %s" % (name, v, rc, err))

# --- merges of the hive-integration overrides onto every config --------------
overrides = [p for p in valid if "override" in os.path.basename(p)]
for base in valid:
    for over in overrides:
        rc, out, err = run([cradle, "ignition", "merge", base, over])
        what = "merge %s + %s" % (os.path.basename(base), os.path.basename(over))
        if rc != 0:
            fail("%s: %s" % (what, err))
            continue
        check_written(out, what)
        written += 1

# --- pointer configs of every version -----------------------------------------
with tempfile.NamedTemporaryFile("w", suffix=".pem", delete=False) as ca:
    ca.write("-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUexample\n-----END CERTIFICATE-----\n")
for v in VERSIONS:
    args = [cradle, "ignition", "pointer", "-url", "https://api-int.c.example.com:22623/config/worker",
            "-ca", ca.name, "-version", v]
    if v != "3.0.0":
        args += ["-header", "X-Cluster=c", "-token", "not-a-real-token"]
    rc, out, err = run(args)
    if rc != 0:
        fail("pointer %s: %s" % (v, err))
        continue
    check_written(out, "pointer %s" % v)
    written += 1
os.unlink(ca.name)

# --- second opinion: ignition-validate on 3.0-3.3 --------------------------------
compared = 0
if ignition_validate:
    for path in valid + invalid:
        name = os.path.basename(path)
        v = version_of(path)
        if v is None or v not in VERSIONS[:4]:
            continue  # 2.14 knows 3.0-3.3 (3.4 only as -experimental)
        irc, iout, ierr = run([ignition_validate, path])
        crc, cout, cerr = run([cradle, "ignition", "validate", path])
        compared += 1
        if name in KNOWN_DIFFS:
            print("%s: known difference (%s): ignition-validate %d, cradle %d" % (name, KNOWN_DIFFS[name], irc, crc))
            continue
        if (irc == 0) != (crc == 0):
            fail("%s: verdicts differ: ignition-validate %d, cradle %d\n%s%s%s" % (name, irc, crc, iout, ierr, cerr))
            continue
        ipaths = set()
        for line in (iout + ierr).splitlines():
            m = re.match(r"error at (\$[^,]*),", line)
            if m:
                ipaths.add(re.sub(r"\.(\d+)", r"[\1]", m.group(1)))
        cpaths = set()
        for line in cerr.splitlines():
            m = re.match(r"(\$[^:]*): (?!warning:)", line)
            if m:
                cpaths.add(m.group(1))
        if ipaths != cpaths:
            fail("%s: error paths differ:\n  ignition-validate: %s\n  cradle:            %s" %
                 (name, sorted(ipaths), sorted(cpaths)))
else:
    print("ignition-validate not installed: no second opinion")

print("%d configs written and checked, %d compared with ignition-validate" % (written, compared))
if failures:
    print("%d failures" % len(failures))
    sys.exit(1)
print("ok")
