#!/usr/bin/python3
"""The man pages against --help: every page renders with man -l without a
groff warning, and says what the binary's --help says.

For each verb with a page (cradle-VERB(1)): every flag that
"cradle VERB --help" lists appears in the page's OPTIONS with its type word
and its whole description (usage text, default, environment variables), and
the page lists no flag that --help does not; for ignition, the same for each
sub-verb; for kube (its own getopt parser), every line of its help. cradle(1)
names every verb of "cradle help" with its summary, and every verb but help
and version has its page. The pages are generated from the flag tables
(packaging/man/), so this test is what proves the generator reads them
faithfully; it reads --help from the binary under test (CRADLE_BINARY).

Environment: CRADLE_BINARY, CRADLE_BUILD_ROOT.
"""
import os
import re
import shutil
import subprocess
import sys
import unittest

CRADLE = os.environ.get("CRADLE_BINARY", "")
MANDIR = os.path.join(os.environ.get("CRADLE_BUILD_ROOT", ""), "packaging", "man")
NO_PAGE = {"help", "version"}


def norm(text):
    """Rendered text without layout: hyphenation and line breaks undone,
    blanks collapsed."""
    text = text.replace("\u2010", "-").replace("\u2212", "-").replace("\u2019", "'").replace("\u2018", "'")
    return re.sub(r"\s+", " ", text).strip()


def render(page):
    env = dict(os.environ, LC_ALL="C.UTF-8", MANWIDTH="80")
    env.pop("MAN_KEEP_FORMATTING", None)
    p = subprocess.run(["man", "--warnings=w", "-l", os.path.join(MANDIR, page + ".1")], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0 or p.stderr.strip():
        raise AssertionError("man -l %s.1: exit %d\n%s" % (page, p.returncode, p.stderr))
    # bold and underline as overstrikes, should a pager setting keep them
    return re.sub(".\b", "", p.stdout)


def cradle(*args):
    p = subprocess.run([CRADLE] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise AssertionError("cradle %s: exit %d\n%s" % (" ".join(args), p.returncode, p.stderr))
    return p.stdout


def go_flags(help_text):
    """{name: (type word or "", description)} of a Go-style usage text:
    "  -name type" then "    \\tdescription"."""
    flags, lines = {}, help_text.split("\n")
    for i, line in enumerate(lines):
        m = re.match(r"^  -(\S+)(?: (\S+))?$", line)
        if m and i + 1 < len(lines) and lines[i + 1].startswith("    \t"):
            flags[m.group(1)] = (m.group(2) or "", lines[i + 1][5:])
    return flags


def page_flags(rendered):
    """Flag names the rendered page lists as option entries (a tag at the
    entry indent; a short one shares its line with the description)."""
    sections = re.split(r"^(?=\S)", rendered, flags=re.M)
    body = "".join(x for x in sections if x.startswith("OPTIONS") or x.startswith("VERBS"))
    return set(re.findall(r"^ {7}-([A-Za-z0-9][\w.-]*)(?: [a-z]+)?(?:$| {2,})", body, re.M))


def verbs():
    return [m.group(1) for m in (re.match(r"^  ([a-z_][a-z_-]*) +(.*)$", ln)
                                 for ln in cradle("help").split("\n")) if m]


class ManPages(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not CRADLE or not os.path.isdir(MANDIR):
            raise unittest.SkipTest("CRADLE_BINARY or the built man pages (packaging/man/) are missing")
        if not shutil.which("man"):
            raise unittest.SkipTest("man (man-db) is not installed")

    def check_flags(self, help_text, rendered, where):
        flags = go_flags(help_text)
        self.assertTrue(flags, "%s: no flags found in --help" % where)
        text = norm(rendered)
        for name, (typ, desc) in sorted(flags.items()):
            head = "-%s %s" % (name, typ) if typ else "-%s" % name
            self.assertIn(norm(head + " " + desc), text, "%s: flag -%s as --help prints it" % (where, name))
        self.assertEqual(page_flags(rendered), set(flags), "%s: the page's flags and --help's differ" % where)

    def test_every_verb_has_its_page(self):
        pages = {f[:-2] for f in os.listdir(MANDIR) if f.endswith(".1")}
        want = {"cradle"} | {"cradle-" + v for v in verbs() if v not in NO_PAGE}
        self.assertEqual(pages, want)

    def test_cradle_lists_every_verb(self):
        text = norm(render("cradle"))
        for line in cradle("help").split("\n"):
            m = re.match(r"^  ([a-z_][a-z_-]*) +(.*)$", line)
            if m:
                self.assertIn(norm("%s %s." % m.groups()), text, "cradle(1): verb %s" % m.group(1))

    def test_goflags_verbs(self):
        for v in verbs():
            if v in NO_PAGE or v in ("ignition", "kube"):
                continue
            with self.subTest(verb=v):
                help_text = cradle(v, "--help")
                rendered = render("cradle-" + v)
                self.check_flags(help_text, rendered, "cradle-%s(1)" % v)
                # the description --help prints between "Usage of" and the flags
                synopsis = help_text.split("\n", 1)[1].split("\n  -", 1)[0]
                self.assertIn(norm(synopsis), norm(rendered))

    def test_ignition_subverbs(self):
        rendered = render("cradle-ignition")
        subs = re.findall(r"^  ([a-z]+) +", cradle("ignition", "--help"), re.M)
        self.assertTrue(subs)
        seen = set()
        for s in subs:
            with self.subTest(subverb=s):
                help_text = cradle("ignition", s, "--help")
                # the sub-verb's subsection: from its heading to the next heading
                section = norm(re.split(r"\n(?: {3}|[A-Z])\S", rendered.split("\n   %s\n" % s, 1)[1], 1)[0])
                flags = go_flags(help_text)
                for name, (typ, desc) in flags.items():
                    head = "-%s %s" % (name, typ) if typ else "-%s" % name
                    self.assertIn(norm(head + " " + desc), section, "ignition %s: -%s" % (s, name))
                seen |= set(flags)
        self.assertEqual(page_flags(rendered), seen)

    def test_kube_help_verbatim(self):
        text = norm(render("cradle-kube"))
        for line in cradle("kube", "--help").split("\n"):
            if line.strip():
                self.assertIn(norm(line), text)


if __name__ == "__main__":
    r = unittest.main(exit=False, verbosity=2).result
    sys.exit(0 if r.wasSuccessful() else 1)
