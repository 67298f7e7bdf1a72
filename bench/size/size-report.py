#!/usr/bin/python3
"""Where the bytes of the cradle executable go: per library and per module.

    size-report.py BUILDDIR [--detail LIB] [--json FILE]

Relinks BUILDDIR's cradle exactly as ninja links it (`ninja -t commands`),
adding -Wl,-Map, and reads the map: every input section the final link kept
(after --gc-sections) is charged to the archive or object it came from. The
figures are the bytes each input contributes to the sections a stripped
executable carries (code, read-only data, data, unwind tables); .bss takes
no file space and is shown apart. Libraries are the archives (glibc's pieces
together, libgcc's together); cradle's own objects are grouped by the source
folder they were compiled from (lib/, lib/kube/, agent/steps/, ...).

--detail LIB lists LIB's largest members (an archive name such as
libcrypto.a, or a cradle folder such as agent/steps). It is a report, not a
test: figures, no verdicts. Meaningful for the static build
(-Dstatic=true), which links every library in; a dynamic build shows only
cradle's own code.
"""

import argparse
import collections
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

# Output sections whose bytes a stripped executable carries, by kind.
KIND = {
    '.text': 'code', '.init': 'code', '.fini': 'code', '.plt': 'code', '__libc_freeres_fn': 'code',
    '.rodata': 'rodata', '.gcc_except_table': 'rodata', '.note.gnu.property': 'rodata',
    '.note.gnu.build-id': 'rodata', '.note.ABI-tag': 'rodata', '.rela.plt': 'rodata',
    '.eh_frame': 'unwind', '.eh_frame_hdr': 'unwind',
    '.data': 'data', '.data.rel.ro': 'data', '.tdata': 'data', '.init_array': 'data',
    '.fini_array': 'data', '.got': 'data', '.got.plt': 'data', '__libc_subfreeres': 'data',
    '__libc_IO_vtables': 'data', '__libc_atexit': 'data',
    '.bss': 'bss', '.tbss': 'bss', '__libc_freeres_ptrs': 'bss',
}
COLUMNS = ['code', 'rodata', 'data', 'unwind']

GLIBC = {'libc.a', 'libm.a', 'libm-2.36.a', 'libmvec.a', 'libpthread.a', 'librt.a', 'libdl.a',
         'libresolv.a', 'libutil.a'}
LIBGCC = {'libgcc.a', 'libgcc_eh.a'}


def relink_with_map(builddir, tmp):
    cmds = subprocess.run(['ninja', '-C', builddir, '-t', 'commands', 'cradle'], check=True,
                          capture_output=True, text=True).stdout.strip().split('\n')
    link = cmds[-1]
    argv = shlex.split(link)
    if '-o' not in argv:
        sys.exit('size-report: the last command for cradle is not a link: ' + link)
    exe = os.path.join(tmp, 'cradle')
    mapfile = os.path.join(tmp, 'cradle.map')
    argv[argv.index('-o') + 1] = exe
    argv.insert(1, '-Wl,-Map=' + mapfile)
    r = subprocess.run(argv, cwd=builddir, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit('size-report: relinking failed:\n' + r.stderr)
    return exe, mapfile


def source_objects(source_root):
    """meson's object name (path with '/' turned into '_', plus .o) -> source folder."""
    names = {}
    for d, dirs, files in os.walk(source_root):
        dirs[:] = [x for x in dirs if not x.startswith(('.', 'build')) and x not in ('tests', 'bench')]
        for f in files:
            if f.endswith('.c'):
                rel = os.path.relpath(os.path.join(d, f), source_root)
                names[rel.replace('/', '_') + '.o'] = os.path.dirname(rel) or '.'
    return names


def group_of(path, objects):
    """(group, member) for an input file of the map."""
    m = re.match(r'(.*)\((.*)\)$', path)
    archive, member = (m.group(1), m.group(2)) if m else (path, '')
    base = os.path.basename(archive)
    # cradle's own code: meson's thin archives list their members' paths
    obj = os.path.basename(member or archive)
    if '.a.p/' in archive or archive.startswith(('libcradle', 'cradle.p/')) or '/cradle.p/' in archive:
        return 'cradle', objects.get(obj, os.path.dirname(obj) or obj)
    if base in GLIBC:
        return 'glibc', base + ':' + member
    if base in LIBGCC:
        return 'libgcc', base + ':' + member
    if base.startswith('crt') and base.endswith('.o'):
        return 'crt*.o', base
    if member:
        return base, member
    if '.ltrans' in base:
        return 'cradle', '(link-time optimised)'
    return base, ''


def parse_map(mapfile, objects):
    lines = open(mapfile, errors='replace').read().split('\n')
    start = lines.index('Linker script and memory map')
    sizes = collections.defaultdict(lambda: collections.defaultdict(collections.Counter))
    out = None
    re_in = re.compile(r'^ (\S+)?\s+0x([0-9a-f]+)\s+0x([0-9a-f]+) (.+)$')
    for line in lines[start + 1:]:
        if line and not line.startswith(' '):
            out = line.split()[0]
            continue
        m = re_in.match(line)
        if not m or out not in KIND:
            continue
        size = int(m.group(3), 16)
        if size == 0:
            continue
        group, member = group_of(m.group(4).strip(), objects)
        sizes[group][member][KIND[out]] += size
    return sizes


def total(counter):
    return sum(counter[k] for k in COLUMNS)


def table(title, rows, total_bytes):
    print(title)
    print('  %-34s %10s %6s %9s %9s %9s %9s %8s' % ('', 'bytes', '%', 'code', 'rodata', 'data', 'unwind', 'bss'))
    for name, c in rows:
        t = total(c)
        print('  %-34s %10d %5.1f%% %9d %9d %9d %9d %8d' % (
            name[:34], t, 100.0 * t / total_bytes if total_bytes else 0, c['code'], c['rodata'], c['data'],
            c['unwind'], c['bss']))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('builddir')
    ap.add_argument('--source-root', default=os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))))
    ap.add_argument('--detail', action='append', default=[], help='list the largest members of LIB')
    ap.add_argument('--json', help='also write the figures as JSON')
    a = ap.parse_args()
    builddir = os.path.abspath(a.builddir)

    with tempfile.TemporaryDirectory(prefix='cradle-size.') as tmp:
        exe, mapfile = relink_with_map(builddir, tmp)
        stripped = os.path.join(tmp, 'cradle.stripped')
        subprocess.run(['strip', '-o', stripped, exe], check=True)
        stripped_size = os.path.getsize(stripped)
        built = os.path.join(builddir, 'cradle')
        subprocess.run(['strip', '-o', stripped + '.built', built], check=True)
        built_size = os.path.getsize(stripped + '.built')
        sizes = parse_map(mapfile, source_objects(a.source_root))

    libs = {g: sum((c for c in members.values()), collections.Counter()) for g, members in sizes.items()}
    charged = sum(total(c) for c in libs.values())
    static = 'glibc' in libs

    print('cradle executable: %d bytes stripped (%s build); %d bytes charged below, the rest is ELF '
          'headers, alignment and section padding' % (stripped_size, 'static' if static else 'dynamic', charged))
    if built_size != stripped_size:
        print('note: the relinked executable differs from %s (%d bytes stripped)' % (built, built_size))
    print()
    table('per library (archive):', sorted(libs.items(), key=lambda kv: -total(kv[1])), charged)
    print()
    modules = sizes.get('cradle', {})
    ours = libs.get('cradle', collections.Counter())
    table('per cradle module (source folder), %d bytes in all:' % total(ours),
          sorted(modules.items(), key=lambda kv: -total(kv[1])), total(ours))
    for lib in a.detail:
        members = sizes.get(lib) or {m: c for m, c in modules.items() if m == lib.rstrip('/')}
        if lib in sizes:
            rows = sorted(members.items(), key=lambda kv: -total(kv[1]))[:40]
            print()
            table('largest members of %s:' % lib, rows, total(libs[lib]))
        else:
            print('\nno library or module named %r' % lib)
    if a.json:
        with open(a.json, 'w') as f:
            json.dump({'stripped_bytes': stripped_size,
                       'libraries': {g: dict(c) for g, c in libs.items()},
                       'modules': {m: dict(c) for m, c in modules.items()}}, f, indent=1, sort_keys=True)


if __name__ == '__main__':
    main()
