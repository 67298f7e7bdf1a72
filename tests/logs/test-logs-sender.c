/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The logs sender's parts: the .tar.gz writer (read back by tar(1) and
 * gzip(1)), journalctl's --since syntax, and the journal reader against a
 * real journal file (made by systemd-journal-remote), compared byte for
 * byte with what journalctl prints for the same query.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "fileio.h"
#include "logs/journal-text.h"
#include "targz.h"
#include "strutil.h"
#include "tests.h"

static char *tmp_path(const char *name)
{
        char *p = strdup_printf("%s/%s", test_tmpdir(), name);
        ASSERT_NOT_NULL(p);
        return p;
}

static bool have(const char *prog)
{
        char *argv[] = { (char *)"sh", (char *)"-c", NULL, NULL };
        _cleanup_free_ char *cmd = strdup_printf("command -v %s >/dev/null", prog), *out = NULL;

        argv[2] = cmd;
        return test_run(argv, &out) == 0;
}

TEST(tar_header_layout)
{
        char block[512];
        unsigned sum = 0;
        char want[8];

        ASSERT_OK(tar_header_fill(block, "logs_host_x/mount.logs", 0644, 1234, 1795400000, '0'));
        ASSERT_STREQ(block, "logs_host_x/mount.logs");
        ASSERT_STREQ(block + 100, "0000644");
        ASSERT_STREQ(block + 124, "00000002322"); /* 1234 */
        ASSERT_EQ(block[156], '0');
        ASSERT_STREQ(block + 257, "ustar");
        ASSERT_EQ(memcmp(block + 263, "00", 2), 0);
        /* checksum: the sum of the bytes with the field as spaces */
        memcpy(want, block + 148, 8);
        memset(block + 148, ' ', 8);
        for (size_t i = 0; i < 512; i++)
                sum += (unsigned char)block[i];
        {
                char expect[8];
                snprintf(expect, sizeof(expect), "%06o", sum);
                ASSERT_EQ(memcmp(want, expect, 6), 0);
                ASSERT_EQ(want[6], 0);
                ASSERT_EQ(want[7], ' ');
        }

        /* long names go into the prefix, split at a slash */
        {
                _cleanup_free_ char *longname = NULL;
                char dir[140], file[90];
                memset(dir, 'd', sizeof(dir) - 1);
                dir[sizeof(dir) - 1] = 0;
                memset(file, 'f', sizeof(file) - 1);
                file[sizeof(file) - 1] = 0;
                longname = strdup_printf("%s/%s", dir, file);
                ASSERT_OK(tar_header_fill(block, longname, 0644, 0, 0, '0'));
                ASSERT_EQ(strnlen(block + 345, 155), strlen(dir));
                ASSERT_EQ(strnlen(block, 100), strlen(file));
        }
        {
                char huge[300];
                memset(huge, 'x', sizeof(huge) - 1);
                huge[sizeof(huge) - 1] = 0;
                ASSERT_ERROR(tar_header_fill(block, huge, 0644, 0, 0, '0'), ENAMETOOLONG);
        }
        ASSERT_ERROR(tar_header_fill(block, "", 0644, 0, 0, '0'), EINVAL);
}

TEST(targz_round_trip)
{
        _cleanup_free_ char *archive = tmp_path("t.tar.gz"), *src = tmp_path("src.logs"), *out = NULL,
                            *list = NULL, *x = tmp_path("x"), *got = NULL, *big = NULL, *gotbig = NULL;
        _cleanup_(tar_writer_freep) TarWriter *t = NULL;
        _cleanup_close_ int fd = -1;
        const size_t big_len = 3 * 1024 * 1024 + 17;

        if (!have("tar") || !have("gzip"))
                test_skip("tar or gzip is not installed");

        /* compressible and incompressible data across several deflate chunks */
        big = malloc(big_len);
        ASSERT_NOT_NULL(big);
        for (size_t i = 0; i < big_len; i++)
                big[i] = (char)(i % 7 == 0 ? (char)((i * 2654435761u) >> 13) : (char)('a' + (int)(i % 26)));
        ASSERT_OK(write_file_atomic(src, big, big_len, 0640));

        fd = open(archive, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        ASSERT_TRUE(fd >= 0);
        ASSERT_OK(tar_writer_new(fd, 1795400000, &t));
        ASSERT_OK(tar_writer_add_dir(t, "logs_host_h", 0755));
        ASSERT_OK(tar_writer_add_file(t, "logs_host_h/big.logs", src));
        ASSERT_OK(tar_writer_add_data(t, "logs_host_h/report.logs", 0644, "two\nlines\n", 10));
        ASSERT_OK(tar_writer_add_data(t, "logs_host_h/empty.logs", 0644, "", 0));
        ASSERT_OK(tar_writer_finish(t));
        fd = safe_close(fd);

        {
                char *argv[] = { (char *)"gzip", (char *)"-t", archive, NULL };
                ASSERT_EQ(test_run(argv, NULL), 0);
        }
        {
                char *argv[] = { (char *)"tar", (char *)"-tzf", archive, NULL };
                ASSERT_EQ(test_run(argv, &list), 0);
                ASSERT_STREQ(list, "logs_host_h/\nlogs_host_h/big.logs\nlogs_host_h/report.logs\n"
                                   "logs_host_h/empty.logs\n");
        }
        ASSERT_OK(mkdir_p(x, 0755));
        {
                char *argv[] = { (char *)"tar", (char *)"-xzf", archive, (char *)"-C", x, NULL };
                ASSERT_EQ(test_run(argv, &out), 0);
        }
        {
                _cleanup_free_ char *p = strdup_printf("%s/logs_host_h/report.logs", x);
                ASSERT_OK(read_full_file(p, 1024, &got, NULL));
                ASSERT_STREQ(got, "two\nlines\n");
        }
        {
                _cleanup_free_ char *p = strdup_printf("%s/logs_host_h/big.logs", x);
                size_t n = 0;
                struct stat st;
                ASSERT_OK(read_full_file(p, big_len + 1, &gotbig, &n));
                ASSERT_EQ(n, big_len);
                ASSERT_EQ(memcmp(gotbig, big, big_len), 0);
                ASSERT_OK(stat(p, &st));
                ASSERT_EQ(st.st_mode & 0777, 0640);
        }
}

TEST(since_parse)
{
        /* 2026-11-23 10:04:29 UTC */
        const usec_t now = 1795428269ULL * USEC_PER_SEC;
        static const struct {
                const char *in;
                long long secs; /* -1: invalid */
        } cases[] = {
                { "now", 1795428269 },
                { "5 hours ago", 1795428269 - 5 * 3600 },
                { "1h 30min ago", 1795428269 - 5400 },
                { "90s ago", 1795428269 - 90 },
                { "-2d", 1795428269 - 2 * 86400 },
                { "+10min", 1795428269 + 600 },
                { "2 weeks ago", 1795428269 - 14 * 86400 },
                { "1 month ago", 1795428269 - 2629800 },
                { "today", 1795392000 },
                { "yesterday", 1795392000 - 86400 },
                { "tomorrow", 1795392000 + 86400 },
                { "@1795400000", 1795400000 },
                { "2026-11-23 02:13:20", 1795400000 },
                { "2026-11-23T02:13:20", 1795400000 },
                { "2026-11-23 02:13", 1795400000 - 20 },
                { "2026-11-23", 1795392000 },
                { "02:13:20", 1795400000 },
                { "  now  ", 1795428269 },
                { "", -1 },
                { "soon", -1 },
                { "5 fortnights ago", -1 },
                { "ago", -1 },
                { "2026-13-45", -1 },
                { "@x", -1 },
                { "12:00 tomorrow", -1 },
        };

        setenv("TZ", "UTC", 1);
        tzset();
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                usec_t got = 0;
                int r = journal_since_parse(cases[i].in, now, &got);
                fprintf(stderr, "since '%s' -> %d %llu\n", cases[i].in, r,
                        (unsigned long long)(got / USEC_PER_SEC));
                if (cases[i].secs < 0)
                        ASSERT_ERROR(r, EINVAL);
                else {
                        ASSERT_OK(r);
                        ASSERT_EQ(got / USEC_PER_SEC, cases[i].secs);
                }
        }
}

TEST(format_short)
{
        _cleanup_free_ char *a = NULL, *b = NULL, *c = NULL;

        setenv("TZ", "UTC", 1);
        tzset();
        a = journal_format_short(1795400000ULL * USEC_PER_SEC, "master-1", "installer", "42",
                                 "Writing image to disk", 21);
        ASSERT_STREQ(a, "Nov 23 02:13:20 master-1 installer[42]: Writing image to disk\n");
        b = journal_format_short(1795400000ULL * USEC_PER_SEC, "h", "x", NULL, "one\ntwo", 7);
        ASSERT_STREQ(b, "Nov 23 02:13:20 h x: one\n                     two\n");
        c = journal_format_short(1795400000ULL * USEC_PER_SEC, "h", "x", "1", "", 0);
        ASSERT_STREQ(c, "Nov 23 02:13:20 h x[1]: \n");
}

/* A journal directory NAME with ENTRIES (export format), written by
 * systemd-journal-remote: the same file format, flags and compression as
 * the host's journald writes. */
static char *write_journal(const char *name, const char *entries)
{
        _cleanup_free_ char *dir = tmp_path(name), *export = NULL, *out = NULL, *file = NULL;

        if (access("/lib/systemd/systemd-journal-remote", X_OK) < 0)
                test_skip("systemd-journal-remote is not installed (tools/deps --test)");
        export = strdup_printf("%s.export", dir);
        ASSERT_OK(mkdir_p(dir, 0755));
        ASSERT_OK(write_file_atomic(export, entries, strlen(entries), 0644));
        file = strdup_printf("--output=%s/remote.journal", dir);
        {
                char *argv[] = { (char *)"/lib/systemd/systemd-journal-remote", file, export, NULL };
                ASSERT_EQ(test_run(argv, &out), 0);
        }
        return TAKE_PTR(dir);
}

/* A journal file with entries of several tags and units. */
static char *make_journal(void)
{
        const char *entries =
                "__REALTIME_TIMESTAMP=1795400000000000\n__MONOTONIC_TIMESTAMP=1000000\n"
                "_BOOT_ID=0123456789abcdef0123456789abcdef\n_HOSTNAME=master-1\nSYSLOG_IDENTIFIER="
                "installer\n"
                "_PID=42\nTAG=installer\nMESSAGE=Writing image to disk\n\n"
                "__REALTIME_TIMESTAMP=1795400001000000\n__MONOTONIC_TIMESTAMP=2000000\n"
                "_BOOT_ID=0123456789abcdef0123456789abcdef\n_HOSTNAME=master-1\nSYSLOG_IDENTIFIER=agent\n"
                "_PID=7\nTAG=agent\nMESSAGE=Sending step reply\n\n"
                "__REALTIME_TIMESTAMP=1795400002000000\n__MONOTONIC_TIMESTAMP=3000000\n"
                "_BOOT_ID=0123456789abcdef0123456789abcdef\n_HOSTNAME=master-1\nSYSLOG_IDENTIFIER=bootkube."
                "sh\n"
                "_PID=99\n_SYSTEMD_UNIT=bootkube.service\nMESSAGE=Starting cluster-bootstrap...\n\n"
                "__REALTIME_TIMESTAMP=1795400003000000\n__MONOTONIC_TIMESTAMP=4000000\n"
                "_BOOT_ID=0123456789abcdef0123456789abcdef\n_HOSTNAME=master-1\nSYSLOG_IDENTIFIER=systemd\n"
                "_PID=1\nUNIT=bootkube.service\nMESSAGE=bootkube.service: Deactivated successfully.\n\n"
                "__REALTIME_TIMESTAMP=1795400004000000\n__MONOTONIC_TIMESTAMP=5000000\n"
                "_BOOT_ID=0123456789abcdef0123456789abcdef\n_HOSTNAME=master-1\nSYSLOG_IDENTIFIER="
                "installer\n"
                "_PID=42\nTAG=installer\nMESSAGE=Rebooting\n\n";

        return write_journal("journal", entries);
}

static char *ours(const JournalQuery *q)
{
        _cleanup_free_ char *path = tmp_path("ours.txt");
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        char *data = NULL;

        ASSERT_TRUE(fd >= 0);
        ASSERT_OK(journal_write_text(q, fd, NULL));
        fd = safe_close(fd);
        ASSERT_OK(read_full_file(path, 1 << 20, &data, NULL));
        return data;
}

static char *theirs(char **argv)
{
        char *out = NULL;

        ASSERT_EQ(test_run(argv, &out), 0);
        return out;
}

TEST(journal_like_journalctl)
{
        _cleanup_free_ char *dir = NULL, *a = NULL, *b = NULL, *c = NULL, *d = NULL, *e = NULL, *f = NULL,
                            *g = NULL, *h = NULL;

        if (!have("journalctl"))
                test_skip("journalctl is not installed");
        setenv("TZ", "UTC", 1);
        tzset();
        dir = make_journal();

        a = ours(&(JournalQuery){ .directory = dir, .select = JOURNAL_SELECT_TAG, .value = "installer" });
        {
                char *argv[] = { (char *)"journalctl",    (char *)"-D", dir, (char *)"--all", (char *)"-q",
                                 (char *)"TAG=installer", NULL };
                b = theirs(argv);
        }
        ASSERT_STREQ(a, b);
        ASSERT_CONTAINS(a, "master-1 installer[42]: Writing image to disk\n");
        ASSERT_CONTAINS(a, "installer[42]: Rebooting\n");
        ASSERT_NOT_CONTAINS(a, "Sending step reply");

        c = ours(&(JournalQuery){ .directory = dir, .select = JOURNAL_SELECT_UNIT, .value = "bootkube" });
        {
                char *argv[] = { (char *)"journalctl", (char *)"-D", dir,
                                 (char *)"--all",      (char *)"-q", (char *)"-u",
                                 (char *)"bootkube",   NULL };
                d = theirs(argv);
        }
        ASSERT_STREQ(c, d);
        ASSERT_CONTAINS(c, "Starting cluster-bootstrap");
        ASSERT_CONTAINS(c, "Deactivated successfully");

        /* --since keeps the later entries only */
        e = ours(&(JournalQuery){
                .directory = dir, .select = JOURNAL_SELECT_ALL, .since = 1795400002ULL * USEC_PER_SEC });
        {
                char *argv[] = { (char *)"journalctl",
                                 (char *)"-D",
                                 dir,
                                 (char *)"--all",
                                 (char *)"-q",
                                 (char *)"--since",
                                 (char *)"2026-11-23 02:13:22",
                                 NULL };
                f = theirs(argv);
        }
        ASSERT_STREQ(e, f);
        ASSERT_NOT_CONTAINS(e, "Writing image to disk");
        ASSERT_CONTAINS(e, "Rebooting");

        g = ours(&(JournalQuery){ .directory = dir, .select = JOURNAL_SELECT_TAG, .value = "nothing" });
        ASSERT_STREQ(g, "");
        /* a missing directory falls back to the local journal (never fails) */
        h = ours(&(JournalQuery){ .directory = "/nonexistent", .select = JOURNAL_SELECT_TAG, .value = "x" });
        ASSERT_NOT_NULL(h);
}

/* journald compresses large fields (zstd on RHEL 9, lz4 on RHEL 8) and
 * marks every file it creates with its algorithm as an incompatible flag: a
 * reader built without it refuses the whole file (the static build once did,
 * and read nothing). A field long enough to be compressed must read back. */
TEST(journal_compressed_entries)
{
        _cleanup_free_ char *message = NULL, *entries = NULL, *dir = NULL, *file = NULL, *raw = NULL,
                            *a = NULL, *b = NULL;
        size_t n = 0;

        if (!have("journalctl"))
                test_skip("journalctl is not installed");
        setenv("TZ", "UTC", 1);
        tzset();
        message = malloc(4001);
        ASSERT_NOT_NULL(message);
        for (size_t i = 0; i < 4000; i++)
                message[i] = "compressible journal field "[i % 27];
        message[4000] = '\0';
        entries = strdup_printf("__REALTIME_TIMESTAMP=1795400000000000\n__MONOTONIC_TIMESTAMP=1000000\n"
                                "_BOOT_ID=0123456789abcdef0123456789abcdef\n_HOSTNAME=master-1\n"
                                "SYSLOG_IDENTIFIER=installer\n_PID=42\nTAG=installer\nMESSAGE=%s\n\n",
                                message);
        dir = write_journal("journal-compressed", entries);

        /* the field is stored compressed, or this test tests nothing */
        file = strdup_printf("%s/remote.journal", dir);
        ASSERT_OK(read_full_file(file, 64 << 20, &raw, &n));
        ASSERT_NULL(memmem(raw, n, message, 200));

        a = ours(&(JournalQuery){ .directory = dir, .select = JOURNAL_SELECT_TAG, .value = "installer" });
        {
                char *argv[] = { (char *)"journalctl",    (char *)"-D", dir, (char *)"--all", (char *)"-q",
                                 (char *)"TAG=installer", NULL };
                b = theirs(argv);
        }
        ASSERT_STREQ(a, b);
        ASSERT_CONTAINS(a, message);
}

DEFINE_TEST_MAIN
