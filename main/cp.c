/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cp SRC DEST, cp SRC... DIR: the one coreutils program the agent image's
 * contract calls ("podman run ... IMAGE cp /usr/bin/agent /hostbin", the
 * discovery ignition's agent.service), so that the image can hold nothing
 * but cradle (see packaging/containers/README.md).
 *
 * As coreutils' cp without options: regular files, sources followed through
 * symbolic links, the new file gets the source's permission bits less the
 * umask (no set-id bits), exit status 1 after a message per failed source.
 * One difference, on purpose: the destination is replaced atomically (a
 * temporary file beside it, renamed over it), so a copy over a running
 * executable works (coreutils fails with "Text file busy") and an
 * interrupted copy leaves the old file. Options are refused: the contract
 * uses none.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "cp.h"
#include "fileio.h"
#include "strutil.h"

static const char *last_component(const char *path)
{
        const char *slash = strrchr(path, '/');

        return slash ? slash + 1 : path;
}

static int copy_one(const char *src, const char *dest, mode_t umask_bits)
{
        _cleanup_close_ int fd = -1;
        struct stat st, dst;
        int r;

        fd = open(src, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0 || fstat(fd, &st) < 0) {
                if (fd < 0 && errno == EISDIR)
                        goto directory;
                fprintf(stderr, "cp: cannot stat '%s': %m\n", src);
                return -errno;
        }
        if (S_ISDIR(st.st_mode))
                goto directory;
        if (!S_ISREG(st.st_mode)) {
                fprintf(stderr, "cp: '%s' is not a regular file (this cp copies regular files only)\n", src);
                return -EINVAL;
        }
        if (stat(dest, &dst) >= 0) {
                if (dst.st_dev == st.st_dev && dst.st_ino == st.st_ino) {
                        fprintf(stderr, "cp: '%s' and '%s' are the same file\n", src, dest);
                        return -EINVAL;
                }
                if (S_ISDIR(dst.st_mode)) {
                        fprintf(stderr, "cp: cannot overwrite directory '%s' with non-directory\n", dest);
                        return -EISDIR;
                }
        }

        r = copy_file_atomic(fd, dest, st.st_mode & 0777 & ~umask_bits);
        if (r < 0) {
                errno = -r;
                fprintf(stderr, "cp: cannot create regular file '%s': %m\n", dest);
        }
        return r;

directory:
        fprintf(stderr, "cp: -r not specified; omitting directory '%s'\n", src);
        return -EISDIR;
}

static void help(void)
{
        printf("Usage: cp SOURCE DEST\n"
               "  or:  cp SOURCE... DIRECTORY\n"
               "Copies regular files (cradle's cp, for the agent image's \"cp /usr/bin/agent /hostbin\").\n"
               "Symbolic links among the sources are followed; the copy gets the source's permission\n"
               "bits less the umask and replaces the destination atomically. No options.\n");
}

int cp_main(int argc, char **argv)
{
        int first = 1, n, ret = 0;
        bool to_dir = false;
        struct stat st;
        const char *dest;
        mode_t umask_bits;

        if (argc > 1 && (streq(argv[1], "--help") || streq(argv[1], "-h"))) {
                help();
                return 0;
        }
        if (argc > 1 && streq(argv[1], "--"))
                first = 2;
        for (int i = first; i < argc; i++)
                if (argv[i][0] == '-' && argv[i][1] != 0) {
                        fprintf(stderr, "cp: option '%s' is not supported (cradle's cp takes none)\n",
                                argv[i]);
                        return 1;
                }
        n = argc - first;
        if (n == 0) {
                fprintf(stderr, "cp: missing file operand\n");
                return 1;
        }
        if (n == 1) {
                fprintf(stderr, "cp: missing destination file operand after '%s'\n", argv[first]);
                return 1;
        }
        dest = argv[argc - 1];
        if (stat(dest, &st) >= 0 && S_ISDIR(st.st_mode))
                to_dir = true;
        else if (n > 2) {
                fprintf(stderr, "cp: target '%s' is not a directory\n", dest);
                return 1;
        }

        umask_bits = umask(0);
        (void)umask(umask_bits);
        for (int i = first; i < argc - 1; i++) {
                _cleanup_free_ char *target = NULL;

                if (to_dir) {
                        target = strdup_printf("%s/%s", dest, last_component(argv[i]));
                        if (!target) {
                                fprintf(stderr, "cp: out of memory\n");
                                return 1;
                        }
                }
                if (copy_one(argv[i], target ? target : dest, umask_bits) < 0)
                        ret = 1;
        }
        return ret;
}
