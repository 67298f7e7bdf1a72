/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ignition/: merge rules one by one, translation up and down, data URLs,
 * gzip, extraction, the api-vip filter, pointer configs, reports, size
 * awareness and apply-to-root refusals.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "fileio.h"
#include "ignition/ign-internal.h"
#include "gzip.h"
#include "ignition/ignition.h"
#include "strutil.h"
#include "tests.h"

static IgnConfig *parse_ok(const char *json)
{
        _cleanup_(ign_report_donep) IgnReport report = IGN_REPORT_INIT;
        IgnConfig *c = NULL;
        int r = ign_config_parse(json, strlen(json), 0, &c, &report);
        if (r < 0) {
                _cleanup_free_ char *s = ign_report_format(&report);
                test_fail(__FILE__, __LINE__, "cannot parse %s: %s", json, strna(s));
        }
        return c;
}

static char *serialize(const IgnConfig *c)
{
        char *s = NULL;
        ASSERT_OK(ign_config_serialize(c, -1, 0, &s, NULL, NULL));
        return s;
}

/* ---- merge: one case per rule of config/merge ------------------------------------------- */

static const struct {
        const char *rule, *parent, *child, *merged;
} merge_cases[] = {
        { "pointer fields: the child's set values win, unset ones keep the parent's",
          "{\"ignition\":{\"version\":\"3.2.0\"},\"storage\":{\"files\":[{\"path\":\"/"
          "a\",\"mode\":420,\"overwrite\":true,"
          "\"contents\":{\"source\":\"data:,old\"}}]}}",
          "{\"ignition\":{\"version\":\"3.2.0\"},\"storage\":{\"files\":[{\"path\":\"/"
          "a\",\"contents\":{\"source\":\"data:,"
          "new\"}}]}}",
          "{\"ignition\":{\"version\":\"3.2.0\"},\"storage\":{\"files\":[{\"overwrite\":true,\"path\":\"/"
          "a\",\"contents\":{"
          "\"source\":\"data:,new\"},\"mode\":420}]}}" },
        { "files, links and directories share one key space: a child link replaces a parent file",
          "{\"ignition\":{\"version\":\"3.2.0\"},\"storage\":{\"files\":[{\"path\":\"/a\"},{\"path\":\"/"
          "b\"}]}}",
          "{\"ignition\":{\"version\":\"3.2.0\"},\"storage\":{\"links\":[{\"path\":\"/a\",\"target\":\"/"
          "b\"}]}}",
          "{\"ignition\":{\"version\":\"3.2.0\"},\"storage\":{\"files\":[{\"path\":\"/"
          "b\"}],\"links\":[{\"path\":\"/a\","
          "\"target\":\"/b\"}]}}" },
        { "keyed lists: merged in the parent's order, new child entries appended",
          "{\"ignition\":{\"version\":\"3.2.0\"},\"systemd\":{\"units\":[{\"name\":\"a.service\","
          "\"enabled\":true},{"
          "\"name\":\"b.service\",\"mask\":true}]}}",
          "{\"ignition\":{\"version\":\"3.2.0\"},\"systemd\":{\"units\":[{\"name\":\"c.service\"},{\"name\":"
          "\"a.service\","
          "\"enabled\":false,\"contents\":\"[Unit]\\n\"}]}}",
          "{\"ignition\":{\"version\":\"3.2.0\"},\"systemd\":{\"units\":[{\"contents\":\"[Unit]\\n\","
          "\"enabled\":false,"
          "\"name\":\"a.service\"},{\"mask\":true,\"name\":\"b.service\"},{\"name\":\"c.service\"}]}}" },
        { "drop-ins merge by name inside their unit",
          "{\"ignition\":{\"version\":\"3.2.0\"},\"systemd\":{\"units\":[{\"name\":\"a.service\","
          "\"dropins\":[{\"name\":"
          "\"x.conf\",\"contents\":\"1\"},{\"name\":\"y.conf\"}]}]}}",
          "{\"ignition\":{\"version\":\"3.2.0\"},\"systemd\":{\"units\":[{\"name\":\"a.service\","
          "\"dropins\":[{\"name\":"
          "\"x.conf\",\"contents\":\"2\"}]}]}}",
          "{\"ignition\":{\"version\":\"3.2.0\"},\"systemd\":{\"units\":[{\"dropins\":[{\"contents\":\"2\","
          "\"name\":\"x."
          "conf\"},{\"name\":\"y.conf\"}],\"name\":\"a.service\"}]}}" },
        { "users by name; string lists are keyed by value (union)",
          "{\"ignition\":{\"version\":\"3.2.0\"},\"passwd\":{\"users\":[{\"name\":\"core\","
          "\"sshAuthorizedKeys\":[\"k1\","
          "\"k2\"],\"uid\":1000}],\"groups\":[{\"name\":\"g\",\"gid\":5}]}}",
          "{\"ignition\":{\"version\":\"3.2.0\"},\"passwd\":{\"users\":[{\"name\":\"core\","
          "\"sshAuthorizedKeys\":[\"k3\","
          "\"k1\"]}],\"groups\":[{\"name\":\"g\",\"gid\":6}]}}",
          "{\"ignition\":{\"version\":\"3.2.0\"},\"passwd\":{\"groups\":[{\"gid\":6,\"name\":\"g\"}],"
          "\"users\":[{\"name\":"
          "\"core\",\"sshAuthorizedKeys\":[\"k1\",\"k2\",\"k3\"],\"uid\":1000}]}}" },
        { "disks by device, partitions by number (label when no number), number replaced as a Go int",
          "{\"ignition\":{\"version\":\"3.2.0\"},\"storage\":{\"disks\":[{\"device\":\"/dev/"
          "a\",\"wipeTable\":true,"
          "\"partitions\":[{\"number\":1,\"sizeMiB\":10},{\"label\":\"l\",\"sizeMiB\":20}]}]}}",
          "{\"ignition\":{\"version\":\"3.2.0\"},\"storage\":{\"disks\":[{\"device\":\"/dev/"
          "a\",\"partitions\":[{"
          "\"number\":1,\"startMiB\":5},{\"label\":\"l\",\"sizeMiB\":30}]}]}}",
          "{\"ignition\":{\"version\":\"3.2.0\"},\"storage\":{\"disks\":[{\"device\":\"/dev/"
          "a\",\"partitions\":[{"
          "\"number\":1,\"sizeMiB\":10,\"startMiB\":5},{\"label\":\"l\",\"sizeMiB\":30}],\"wipeTable\":true}"
          "]}}" },
        { "lists that ignore duplicates are appended: file append, filesystem options, raid options",
          "{\"ignition\":{\"version\":\"3.2.0\"},\"storage\":{\"files\":[{\"path\":\"/"
          "m\",\"append\":[{\"source\":\"data:,"
          "1\"}]}],\"filesystems\":[{\"device\":\"/dev/"
          "f\",\"format\":\"xfs\",\"options\":[\"-f\"]}],\"raid\":[{\"name\":"
          "\"md\",\"level\":\"raid1\",\"devices\":[\"/dev/x\"],\"options\":[\"--a\"]}]}}",
          "{\"ignition\":{\"version\":\"3.2.0\"},\"storage\":{\"files\":[{\"path\":\"/"
          "m\",\"append\":[{\"source\":\"data:,"
          "1\"}]}],\"filesystems\":[{\"device\":\"/dev/"
          "f\",\"options\":[\"-f\"]}],\"raid\":[{\"name\":\"md\",\"devices\":["
          "\"/dev/y\"],\"options\":[\"--a\"]}]}}",
          "{\"ignition\":{\"version\":\"3.2.0\"},\"storage\":{\"files\":[{\"path\":\"/"
          "m\",\"append\":[{\"source\":\"data:,"
          "1\"},{\"source\":\"data:,1\"}]}],\"filesystems\":[{\"device\":\"/dev/"
          "f\",\"format\":\"xfs\",\"options\":[\"-f\","
          "\"-f\"]}],\"raid\":[{\"devices\":[\"/dev/x\",\"/dev/"
          "y\"],\"level\":\"raid1\",\"name\":\"md\",\"options\":["
          "\"--a\",\"--a\"]}]}}" },
        { "HTTP headers merge by name; a child header without a value removes the parent's",
          "{\"ignition\":{\"version\":\"3.2.0\",\"config\":{\"merge\":[{\"source\":\"https://x/"
          "c\",\"httpHeaders\":[{"
          "\"name\":\"A\",\"value\":\"1\"},{\"name\":\"B\",\"value\":\"2\"}]}]}}}",
          "{\"ignition\":{\"version\":\"3.2.0\",\"config\":{\"merge\":[{\"source\":\"https://x/"
          "c\",\"httpHeaders\":[{"
          "\"name\":\"A\"},{\"name\":\"B\",\"value\":\"3\"},{\"name\":\"C\",\"value\":\"4\"}]},{\"source\":"
          "\"https://x/"
          "d\"}]}}}",
          "{\"ignition\":{\"config\":{\"merge\":[{\"httpHeaders\":[{\"name\":\"B\",\"value\":\"3\"},{"
          "\"name\":\"C\","
          "\"value\":\"4\"}],\"source\":\"https://x/c\"},{\"source\":\"https://x/"
          "d\"}]},\"version\":\"3.2.0\"}}" },
        { "kernel arguments share one key space: an argument moves from shouldExist to shouldNotExist",
          "{\"ignition\":{\"version\":\"3.3.0\"},\"kernelArguments\":{\"shouldExist\":[\"quiet\",\"a=1\"]}}",
          "{\"ignition\":{\"version\":\"3.3.0\"},\"kernelArguments\":{\"shouldNotExist\":[\"quiet\"]}}",
          "{\"ignition\":{\"version\":\"3.3.0\"},\"kernelArguments\":{\"shouldExist\":[\"a=1\"],"
          "\"shouldNotExist\":["
          "\"quiet\"]}}" },
        { "luks by name, tang servers by URL, clevis structs merged field by field",
          "{\"ignition\":{\"version\":\"3.3.0\"},\"storage\":{\"luks\":[{\"name\":\"v\",\"device\":\"/dev/"
          "v\",\"clevis\":{"
          "\"tpm2\":true,\"tang\":[{\"url\":\"https://t\",\"thumbprint\":\"a\"}]}}]}}",
          "{\"ignition\":{\"version\":\"3.3.0\"},\"storage\":{\"luks\":[{\"name\":\"v\",\"clevis\":{"
          "\"threshold\":2,"
          "\"tang\":[{\"url\":\"https://t\",\"thumbprint\":\"b\"}]}}]}}",
          "{\"ignition\":{\"version\":\"3.3.0\"},\"storage\":{\"luks\":[{\"clevis\":{\"tang\":[{"
          "\"thumbprint\":\"b\","
          "\"url\":\"https://t\"}],\"threshold\":2,\"tpm2\":true},\"device\":\"/dev/"
          "v\",\"name\":\"v\"}]}}" },
        { "configs of different versions merge in the newer one",
          "{\"ignition\":{\"version\":\"3.1.0\"},\"storage\":{\"files\":[{\"path\":\"/a\"}]}}",
          "{\"ignition\":{\"version\":\"3.4.0\"},\"storage\":{\"files\":[{\"path\":\"/b\",\"mode\":2541}]}}",
          "{\"ignition\":{\"version\":\"3.4.0\"},\"storage\":{\"files\":[{\"path\":\"/a\"},{\"path\":\"/"
          "b\",\"mode\":"
          "2541}]}}" },
        { "sections and scalars of the ignition section: child values override, CAs keyed by source",
          "{\"ignition\":{\"version\":\"3.2.0\",\"timeouts\":{\"httpTotal\":10,\"httpResponseHeaders\":5},"
          "\"proxy\":{"
          "\"httpProxy\":\"http://"
          "p\",\"noProxy\":[\"a\"]},\"security\":{\"tls\":{\"certificateAuthorities\":[{"
          "\"source\":\"data:,ca1\"}]}}}}",
          "{\"ignition\":{\"version\":\"3.2.0\",\"timeouts\":{\"httpTotal\":20},\"proxy\":{\"noProxy\":["
          "\"b\"]},"
          "\"security\":{\"tls\":{\"certificateAuthorities\":[{\"source\":\"data:,ca2\"},{\"source\":\"data:"
          ",ca1\"}]}}}}",
          "{\"ignition\":{\"proxy\":{\"httpProxy\":\"http://"
          "p\",\"noProxy\":[\"a\",\"b\"]},\"security\":{\"tls\":{"
          "\"certificateAuthorities\":[{\"source\":\"data:,ca1\"},{\"source\":\"data:,ca2\"}]}},"
          "\"timeouts\":{"
          "\"httpResponseHeaders\":5,\"httpTotal\":20},\"version\":\"3.2.0\"}}" },
};

TEST(merge_rules)
{
        for (size_t i = 0; i < ELEMENTSOF(merge_cases); i++) {
                _cleanup_ign_config_ IgnConfig *p = parse_ok(merge_cases[i].parent),
                                               *c = parse_ok(merge_cases[i].child), *m = NULL, *want = NULL;
                _cleanup_free_ char *got = NULL, *expected = NULL;

                fprintf(stderr, "merge rule: %s\n", merge_cases[i].rule);
                ASSERT_OK(ign_config_merge(p, c, &m));
                got = serialize(m);
                want = parse_ok(merge_cases[i].merged);
                expected = serialize(want);
                ASSERT_STREQ(got, expected);
        }
}

TEST(merge_hive_override_onto_pointer)
{
        /* the installer's use: the host's pointer config + ignition-config-overrides */
        _cleanup_ign_config_ IgnConfig *base = parse_ok("{\"ignition\":{\"version\":\"3.2.0\",\"config\":{"
                                                        "\"merge\":[{\"source\":\"https://api-int.c:22623/"
                                                        "config/worker\"}]}}}");
        _cleanup_ign_config_ IgnConfig *over =
                parse_ok("{\"ignition\": {\"version\": \"3.1.0\"}, \"storage\": {\"files\": [{\"path\": "
                         "\"/tmp/example\", "
                         "\"contents\": {\"source\": "
                         "\"data:text/plain;base64,aGVscGltdHJhcHBlZGluYXN3YWdnZXJzcGVj\"}}]}}");
        _cleanup_ign_config_ IgnConfig *m = NULL;
        _cleanup_free_ char *s = NULL;

        ASSERT_OK(ign_config_merge(base, over, &m));
        ASSERT_EQ(m->version, IGN_V3_2);
        ASSERT_OK(ign_config_validate(m, NULL));
        s = serialize(m);
        ASSERT_STREQ(
                s, "{\"ignition\":{\"config\":{\"merge\":[{\"source\":\"https://api-int.c:22623/config/"
                   "worker\"}]},"
                   "\"version\":\"3.2.0\"},\"storage\":{\"files\":[{\"path\":\"/tmp/example\",\"contents\":{"
                   "\"source\":\"data:text/plain;base64,aGVscGltdHJhcHBlZGluYXN3YWdnZXJzcGVj\"}}]}}");
}

/* ---- translation -------------------------------------------------------------------------- */

TEST(translate_up)
{
        _cleanup_ign_config_ IgnConfig *c =
                parse_ok("{\"ignition\":{\"version\":\"3.2.0\"},\"storage\":{\"raid\":[{\"name\":\"md\","
                         "\"devices\":[\"/dev/a\"]}],"
                         "\"files\":[{\"path\":\"/s\",\"mode\":3565}]},\"extraKey\":1}");
        _cleanup_free_ char *s = NULL;

        ASSERT_OK(ign_config_translate(c, IGN_V3_3, NULL));
        s = serialize(c);
        /* level becomes "" as Go's StrToPtr makes it; unknown keys are dropped */
        ASSERT_STREQ(s, "{\"ignition\":{\"version\":\"3.3.0\"},\"storage\":{\"files\":[{\"path\":\"/"
                        "s\",\"mode\":3565}],"
                        "\"raid\":[{\"devices\":[\"/dev/a\"],\"level\":\"\",\"name\":\"md\"}]}}");
        free(s);
        ASSERT_OK(ign_config_translate(c, IGN_V3_5, NULL));
        s = serialize(c);
        /* 3.3 ignored setuid/setgid/sticky: 3.4 masks them (06755 -> 0755) */
        ASSERT_CONTAINS(s, "\"mode\":493");
        ASSERT_CONTAINS(s, "\"version\":\"3.5.0\"");
}

TEST(translate_down_refusals)
{
        static const struct {
                const char *json;
                IgnVersion to;
                const char *why;
        } cases[] = {
                { "{\"ignition\":{\"version\":\"3.2.0\"},\"storage\":{\"luks\":[{\"name\":\"l\",\"device\":"
                  "\"/dev/l\"}]}}",
                  IGN_V3_1, "$.storage.luks is not in the older spec" },
                { "{\"ignition\":{\"version\":\"3.1.0\",\"config\":{\"merge\":[{\"source\":\"https://"
                  "x\",\"httpHeaders\":[{"
                  "\"name\":\"a\",\"value\":\"b\"}]}]}}}",
                  IGN_V3_0, "$.ignition.config.merge[0].httpHeaders is not in the older spec" },
                { "{\"ignition\":{\"version\":\"3.4.0\"},\"storage\":{\"directories\":[{\"path\":\"/"
                  "t\",\"mode\":1023}]}}",
                  IGN_V3_3, "$.storage.directories[0].mode has setuid/setgid/sticky bits" },
                { "{\"ignition\":{\"version\":\"3.3.0\"},\"storage\":{\"filesystems\":[{\"device\":\"/dev/"
                  "a\",\"format\":"
                  "\"none\"}]}}",
                  IGN_V3_2, "$.storage.filesystems[0].format is \"none\"" },
                { "{\"ignition\":{\"version\":\"3.5.0\"},\"storage\":{\"luks\":[{\"name\":\"l\",\"device\":"
                  "\"/dev/l\","
                  "\"cex\":{\"enabled\":true}}]}}",
                  IGN_V3_4, "$.storage.luks[0].cex is not in the older spec" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_ign_config_ IgnConfig *c = parse_ok(cases[i].json);
                _cleanup_free_ char *err = NULL, *s = NULL;
                ASSERT_ERROR(ign_config_serialize(c, cases[i].to, 0, &s, NULL, &err), EOPNOTSUPP);
                ASSERT_CONTAINS(err, cases[i].why);
                ASSERT_CONTAINS(err, "without losing data");
        }

        /* what the older spec can hold goes down fine */
        _cleanup_ign_config_ IgnConfig *c = parse_ok("{\"ignition\":{\"version\":\"3.4.0\"},\"storage\":{"
                                                     "\"files\":[{\"path\":\"/a\",\"mode\":420}]}}");
        _cleanup_free_ char *s = NULL;
        ASSERT_OK(ign_config_serialize(c, IGN_V3_0, 0, &s, NULL, NULL));
        ASSERT_STREQ(s, "{\"ignition\":{\"version\":\"3.0.0\"},\"storage\":{\"files\":[{\"path\":\"/"
                        "a\",\"mode\":420}]}}");
}

TEST(unknown_keys_kept_at_same_version)
{
        _cleanup_ign_config_ IgnConfig *c = NULL;
        _cleanup_(ign_report_donep) IgnReport report = IGN_REPORT_INIT;
        const char *json =
                "{\"ignition\":{\"version\":\"3.1.0\"},\"storage\":{\"luks\":[{\"name\":\"x\"}],\"files\":[{"
                "\"path\":\"/a\",\"future\":{\"k\":[1,2]}}]}}";
        _cleanup_free_ char *s = NULL, *r = NULL;

        ASSERT_OK(ign_config_parse(json, strlen(json), 0, &c, &report));
        r = ign_report_format(&report);
        ASSERT_STREQ(r, "$.storage.luks: warning: unused key \"luks\" (spec 3.2.0 has it, not 3.1.0)\n"
                        "$.storage.files[0].future: warning: unused key \"future\"\n");
        s = serialize(c);
        ASSERT_STREQ(
                s,
                "{\"ignition\":{\"version\":\"3.1.0\"},\"storage\":{\"files\":[{\"path\":\"/a\",\"future\":{"
                "\"k\":[1,2]}}],\"luks\":[{\"name\":\"x\"}]}}");
}

/* ---- parsing limits and reports -------------------------------------------------------------- */

TEST(parse_limits)
{
        _cleanup_(ign_report_donep) IgnReport report = IGN_REPORT_INIT;
        const char *json = "{\"ignition\":{\"version\":\"3.2.0\"}}";
        _cleanup_free_ char *s = NULL;
        IgnConfig *c = NULL;

        ASSERT_ERROR(ign_config_parse(json, strlen(json), 10, &c, &report), E2BIG);
        ASSERT_NULL(c);
        ASSERT_TRUE(ign_report_has_errors(&report));
        ign_report_done(&report);

        json = "{\"ignition\":{\"version\":\"3.2.0\"},\"storage\":{\"files\":[{\"path\":\"/a\\u0000b\"}]}}";
        ASSERT_ERROR(ign_config_parse(json, strlen(json), 0, &c, &report), EBADMSG);
        s = ign_report_format(&report);
        ASSERT_STREQ(s, "$.storage.files[0].path: string contains a NUL character\n");
}

TEST(size_awareness)
{
        _cleanup_(ign_report_donep) IgnReport report = IGN_REPORT_INIT;
        _cleanup_ign_config_ IgnConfig *c = ign_config_new(IGN_V3_2);
        _cleanup_free_ char *big = malloc(300 * 1024), *s = NULL;
        size_t len;

        ASSERT_FALSE(ign_size_check(IGN_SIZE_LIMIT, &report));
        ASSERT_EQ(report.n_entries, 0);
        c->storage.files = calloc(1, sizeof(IgnFile));
        c->storage.n_files = 1;
        c->storage.files[0].path = strdup("/big");
        memset(big, 'a', 300 * 1024 - 1);
        big[300 * 1024 - 1] = 0;
        c->storage.files[0].contents.source = ign_data_url_encode(big, strlen(big), false);
        ASSERT_OK(ign_config_serialize(c, -1, 0, &s, &len, NULL));
        ASSERT_TRUE(ign_size_check(len, &report));
        ASSERT_EQ(report.entries[0].severity, IGN_WARNING);
        ASSERT_STREQ(report.entries[0].path, "$");
        ASSERT_CONTAINS(report.entries[0].message, "256 KiB");
}

/* ---- data URLs and gzip ------------------------------------------------------------------------ */

TEST(data_urls)
{
        static const struct {
                const char *url, *data;
        } good[] = {
                { "data:,hello%20world", "hello world" },
                { "data:;base64,aGVsbG8=", "hello" },
                { "data:text/plain;charset=utf-8;base64,aGk=", "hi" },
                { "data:text/plain;charset=\"a;b\",x", "x" },
                { "data:x-custom/thing,y", "y" },
                { "data:application/octet-stream;name=a%2Fb;base64,", "" },
                { "data:,", "" },
        };
        static const char *const bad[] = {
                "data:,a%zz",         "data:;base64,abc", "data:;base64,ab=c", "data:foo/bar,x",
                "data:text,x",        "data:text/plain",  "data:,a b",         "data:;charset,x",
                "data:;base64,a\nb=", "http://x",
        };

        for (size_t i = 0; i < ELEMENTSOF(good); i++) {
                _cleanup_free_ void *out = NULL;
                size_t len;
                ASSERT_OK(ign_data_url_decode(good[i].url, &out, &len, NULL));
                ASSERT_EQ(len, strlen(good[i].data));
                ASSERT_TRUE(memcmp(out, good[i].data, len) == 0);
        }
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                _cleanup_free_ void *out = NULL;
                _cleanup_free_ char *err = NULL;
                if (ign_data_url_decode(bad[i], &out, NULL, &err) != -EINVAL)
                        test_fail(__FILE__, __LINE__, "accepted bad data URL %s", bad[i]);
                ASSERT_NOT_NULL(err);
        }

        /* both encodings round-trip every byte */
        uint8_t all[256];
        for (int i = 0; i < 256; i++)
                all[i] = (uint8_t)i;
        for (int percent = 0; percent <= 1; percent++) {
                _cleanup_free_ char *url = ign_data_url_encode(all, sizeof(all), percent);
                _cleanup_free_ void *out = NULL;
                size_t len;
                ASSERT_NOT_NULL(url);
                ASSERT_OK(ign_data_url_decode(url, &out, &len, NULL));
                ASSERT_EQ(len, sizeof(all));
                ASSERT_TRUE(memcmp(out, all, len) == 0);
        }
}

static void *b64(const char *s, size_t *len)
{
        _cleanup_free_ char *url = strdup_printf("data:;base64,%s", s);
        void *out = NULL;
        ASSERT_OK(ign_data_url_decode(url, &out, len, NULL));
        return out;
}

TEST(gunzip)
{
        /* made with Python's gzip: stored block, fixed Huffman, two members */
        static const char stored[] =
                "H4sIAAAAAAAEAwFKAbX+"
                "aGVsbG8gZ3ppcApoZWxsbyBnemlwCmhlbGxvIGd6aXAKaGVsbG8gZ3ppcApoZWxsbyBnemlwCmhlbGxvIGd6aXAKaGV"
                "sbG8gZ3ppcApoZWxsbyBnemlwCmhlbGxvIGd6aXAKaGVsbG8gZ3ppcApoZWxsbyBnemlwCmhlbGxvIGd6aXAKaGVsbG"
                "8gZ3ppcApoZWxsbyBnemlwCmhlbGxvIGd6aXAKaGVsbG8gZ3ppcApoZWxsbyBnemlwCmhlbGxvIGd6aXAKaGVsbG8gZ"
                "3ppcApoZWxsbyBnemlwCmhlbGxvIGd6aXAKaGVsbG8gZ3ppcApoZWxsbyBnemlwCmhlbGxvIGd6aXAKaGVsbG8gZ3pp"
                "cApoZWxsbyBnemlwCmhlbGxvIGd6aXAKaGVsbG8gZ3ppcApoZWxsbyBnemlwCmhlbGxvIGd6aXAKiIHR8UoBAAA=";
        static const char fixed[] = "H4sIAAAAAAAEA8tIzcnJV0ivyizgyhhlUhIOAIiB0fFKAQAA";
        static const char multi[] = "H4sIAAAAAAACA8vPS+UCAJ+oF/gEAAAAH4sIAAAAAAACAyspz+cCAHQIF5YEAAAA";
        const char *const inputs[] = { stored, fixed };

        for (size_t i = 0; i < ELEMENTSOF(inputs); i++) {
                size_t in_len, out_len;
                _cleanup_free_ void *in = b64(inputs[i], &in_len);
                _cleanup_free_ void *out = NULL;
                ASSERT_OK(gzip_decompress(in, in_len, 1 << 20, &out, &out_len));
                ASSERT_EQ(out_len, 330);
                ASSERT_TRUE(strneq(out, "hello gzip\nhello gzip\n", 22));
                ASSERT_ERROR(gzip_decompress(in, in_len, 100, &out, &out_len), E2BIG);
                /* corrupt the CRC */
                ((uint8_t *)in)[in_len - 6] ^= 1;
                ASSERT_ERROR(gzip_decompress(in, in_len, 1 << 20, &out, &out_len), EBADMSG);
                /* truncated */
                ASSERT_ERROR(gzip_decompress(in, in_len / 2, 1 << 20, &out, &out_len), EBADMSG);
        }
        {
                size_t in_len, out_len;
                _cleanup_free_ void *in = b64(multi, &in_len);
                _cleanup_free_ void *out = NULL;
                ASSERT_OK(gzip_decompress(in, in_len, 1 << 20, &out, &out_len));
                ASSERT_EQ(out_len, 8);
                ASSERT_TRUE(memcmp(out, "one\ntwo\n", 8) == 0);
        }
        ASSERT_ERROR(gzip_decompress("not gzip at all, really", 23, 1 << 20, &(void *){ NULL }, NULL),
                     EBADMSG);
}

TEST(gunzip_dynamic_blocks_from_gzip)
{
        /* dynamic Huffman blocks, as gzip -9 writes them for varied data */
        _cleanup_free_ char *in_path = strdup_printf("%s/payload", test_tmpdir());
        _cleanup_free_ char *gz = NULL, *payload = malloc(200000);
        _cleanup_free_ void *out = NULL;
        size_t gz_len, out_len;
        uint32_t x = 12345;

        for (size_t i = 0; i < 200000; i++) {
                x = x * 1103515245 + 12345;
                payload[i] = "abcdefghij \n{}\"0123"[(x >> 16) % 20];
        }
        ASSERT_OK(write_file_atomic(in_path, payload, 200000, 0644));
        char *argv[] = { (char *)"gzip", (char *)"-9", (char *)"-k", (char *)"-f", in_path, NULL };
        if (test_run(argv, NULL) != 0)
                test_skip("gzip is not installed");
        _cleanup_free_ char *gz_path = strdup_printf("%s.gz", in_path);
        ASSERT_OK(read_full_file(gz_path, 1 << 22, &gz, &gz_len));
        ASSERT_OK(gzip_decompress(gz, gz_len, 1 << 22, &out, &out_len));
        ASSERT_EQ(out_len, 200000);
        ASSERT_TRUE(memcmp(out, payload, out_len) == 0);
}

/* ---- extraction and filtering -------------------------------------------------------------------- */

TEST(extract_file)
{
        _cleanup_ign_config_ IgnConfig *c = parse_ok(
                "{\"ignition\":{\"version\":\"3.2.0\"},\"storage\":{\"files\":["
                "{\"path\":\"/root/.docker/"
                "config.json\",\"contents\":{\"source\":\"data:;base64,eyJhdXRocyI6e319\"}},"
                "{\"path\":\"/"
                "appended\",\"contents\":{\"source\":\"data:,a\"},\"append\":[{\"source\":\"data:,b\"},{"
                "\"source\":\"data:,c\"}]},"
                "{\"path\":\"/remote\",\"contents\":{\"source\":\"https://example.com/x\"}},"
                "{\"path\":\"/"
                "hashed\",\"contents\":{\"source\":\"data:,hello%0A\",\"verification\":{\"hash\":\"sha256-"
                "0000000000000000000000000000000000000000000000000000000000000000\"}}},"
                "{\"path\":\"/"
                "hashed-ok\",\"contents\":{\"source\":\"data:,hello%0A\",\"verification\":{\"hash\":"
                "\"sha256-"
                "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03\"}}}]}}");
        _cleanup_free_ void *data = NULL;
        _cleanup_free_ char *err = NULL;
        size_t len;

        ASSERT_OK(ign_config_extract_file(c, "/root/.docker/config.json", 1 << 20, &data, &len, NULL));
        ASSERT_STREQ(data, "{\"auths\":{}}");
        free(data);
        ASSERT_OK(ign_config_extract_file(c, "/appended", 1 << 20, &data, &len, NULL));
        ASSERT_STREQ(data, "abc");
        free(data);
        ASSERT_OK(ign_config_extract_file(c, "/hashed-ok", 1 << 20, &data, &len, NULL));
        ASSERT_STREQ(data, "hello\n");
        free(data);
        data = NULL;
        ASSERT_ERROR(ign_config_extract_file(c, "/nope", 1 << 20, &data, &len, &err), ENOENT);
        free(err);
        err = NULL;
        ASSERT_ERROR(ign_config_extract_file(c, "/remote", 1 << 20, &data, &len, &err), EPROTONOSUPPORT);
        free(err);
        err = NULL;
        ASSERT_ERROR(ign_config_extract_file(c, "/hashed", 1 << 20, &data, &len, &err), EIO);
        ASSERT_CONTAINS(err, "hash mismatch");
        ASSERT_ERROR(ign_config_extract_file(c, "/appended", 2, &data, &len, NULL), E2BIG);
}

TEST(filter_api_vip)
{
        _cleanup_ign_config_ IgnConfig *c = parse_ok(
                "{\"ignition\":{\"version\":\"3.2.0\",\"config\":{\"merge\":[{\"source\":\"https://x\"}]}},"
                "\"passwd\":{\"users\":[{\"name\":\"core\"}]},"
                "\"storage\":{\"luks\":[{\"name\":\"root\",\"device\":\"/dev/a\"}],\"files\":["
                "{\"path\":\"/etc/kubernetes/kubeconfig\",\"contents\":{\"source\":\"data:,k\"}},"
                "{\"path\":\"/etc/other\"},"
                "{\"path\":\"/etc/kubernetes/manifests/coredns.yaml\"},"
                "{\"path\":\"/etc/kubernetes/manifests/keepalived.yaml\"}]},"
                "\"systemd\":{\"units\":[{\"name\":\"a.service\"}]}}");
        _cleanup_ign_config_ IgnConfig *f = NULL;
        _cleanup_free_ char *s = NULL;

        ASSERT_OK(ign_config_filter_api_vip(c, &f));
        s = serialize(f);
        ASSERT_STREQ(
                s,
                "{\"ignition\":{\"version\":\"3.2.0\"},\"storage\":{\"files\":[{\"path\":\"/etc/kubernetes/"
                "kubeconfig\",\"contents\":{\"source\":\"data:,k\"}},{\"path\":\"/etc/kubernetes/manifests/"
                "coredns.yaml\"},{\"path\":\"/etc/kubernetes/manifests/keepalived.yaml\"}],\"luks\":[{"
                "\"device\":\"/dev/a\",\"name\":\"root\"}]}}");
}

/* ---- pointer configs --------------------------------------------------------------------------- */

TEST(pointer)
{
        char *headers[] = { (char *)"X-Role=worker", (char *)"Accept: application/vnd.coreos.ignition+json",
                            NULL };
        const char *pem = "-----BEGIN CERTIFICATE-----\nAA==\n-----END CERTIFICATE-----\n";
        IgnPointerOptions o = {
                .version = IGN_V3_1,
                .url = "https://api-int.c.example.com:22623/config/worker",
                .ca_pem = pem,
                .ca_len = strlen(pem),
                .headers = headers,
                .token = "tok",
        };
        _cleanup_ign_config_ IgnConfig *c = NULL, *back = NULL;
        _cleanup_free_ char *s = NULL;
        _cleanup_free_ void *ca = NULL;
        size_t ca_len;

        ASSERT_OK(ign_pointer_new(&o, &c));
        ASSERT_OK(ign_config_validate(c, NULL));
        s = serialize(c);
        ASSERT_CONTAINS(
                s,
                "{\"ignition\":{\"config\":{\"merge\":[{\"httpHeaders\":[{\"name\":\"X-Role\",\"value\":"
                "\"worker\"},{\"name\":\"Accept\",\"value\":\"application/vnd.coreos.ignition+json\"},{"
                "\"name\":\"Authorization\",\"value\":\"Bearer tok\"}],\"source\":\"https://api-int.c."
                "example.com:22623/config/worker\"}]},\"security\":{\"tls\":{\"certificateAuthorities\":[{"
                "\"source\":\"data:;base64,");
        ASSERT_CONTAINS(s, "\"version\":\"3.1.0\"}}");
        /* the skip-MCO-reboot flow reads merge[0].source and the first CA back */
        back = parse_ok(s);
        ASSERT_STREQ(back->ignition.config.merge[0].source, o.url);
        ASSERT_OK(ign_data_url_decode(back->ignition.security.tls.certificate_authorities[0].source, &ca,
                                      &ca_len, NULL));
        ASSERT_EQ(ca_len, strlen(pem));
        ASSERT_TRUE(memcmp(ca, pem, ca_len) == 0);

        o.version = IGN_V3_0;
        ASSERT_ERROR(ign_pointer_new(&o, &(IgnConfig *){ NULL }), EOPNOTSUPP);
        char *bad[] = { (char *)"novalue", NULL };
        o.version = IGN_V3_2;
        o.headers = bad;
        ASSERT_ERROR(ign_pointer_new(&o, &(IgnConfig *){ NULL }), EINVAL);
}

/* ---- apply -------------------------------------------------------------------------------------- */

static char *mkroot(const char *name)
{
        char *p = strdup_printf("%s/%s", test_tmpdir(), name);
        ASSERT_OK(mkdir_p(p, 0755));
        return p;
}

TEST(apply_refuses_escapes)
{
        _cleanup_free_ char *root = mkroot("escape"), *outside = mkroot("outside"), *link = NULL,
                            *err = NULL;
        _cleanup_ign_config_ IgnConfig *c = NULL;
        struct stat st;

        link = strdup_printf("%s/etc", root);
        ASSERT_TRUE(symlink(outside, link) == 0);
        c = parse_ok(
                "{\"ignition\":{\"version\":\"3.2.0\"},\"storage\":{\"files\":[{\"path\":\"/etc/passwd\","
                "\"contents\":{\"source\":\"data:,pwned\"}}]}}");
        ASSERT_ERROR(ign_config_apply(c, root, 0, &err), EXDEV);
        ASSERT_CONTAINS(err, "outside the root");
        free(err);
        err = NULL;
        /* chroot semantics: the absolute link resolves inside the root, where
         * the target does not exist, so still nothing lands outside */
        (void)ign_config_apply(c, root, IGN_APPLY_SYMLINKS_IN_ROOT, &err);
        _cleanup_free_ char *victim = strdup_printf("%s/passwd", outside);
        ASSERT_TRUE(lstat(victim, &st) < 0);
}

TEST(apply_rules)
{
        _cleanup_free_ char *root = mkroot("rules"), *err = NULL, *p = NULL, *data = NULL;
        _cleanup_ign_config_ IgnConfig *c = NULL;

        /* passwd cannot be laid onto a root: refused unless skipped */
        c = parse_ok("{\"ignition\":{\"version\":\"3.2.0\"},\"passwd\":{\"users\":[{\"name\":\"core\"}]},"
                     "\"storage\":{"
                     "\"files\":[{\"path\":\"/etc/"
                     "a\",\"contents\":{\"source\":\"data:,1\"}}]},\"systemd\":{\"units\":[{"
                     "\"name\":\"t@a.service\",\"enabled\":true},{\"name\":\"t@b.service\",\"enabled\":true}"
                     ",{\"name\":"
                     "\"u.service\",\"enabled\":true}]}}");
        ASSERT_ERROR(ign_config_apply(c, root, 0, &err), EOPNOTSUPP);
        ASSERT_CONTAINS(err, "passwd");
        free(err);
        err = NULL;
        ASSERT_OK(ign_config_apply(c, root, IGN_APPLY_SKIP_UNSUPPORTED, &err));
        p = strdup_printf("%s/etc/systemd/system-preset/20-ignition.preset", root);
        ASSERT_OK(read_full_file(p, 4096, &data, NULL));
        /* instantiated units are grouped on one line, as Ignition writes them */
        ASSERT_STREQ(data, "enable t@.service a b\nenable u.service\n");

        /* a second run: the file exists and overwrite is false */
        ASSERT_ERROR(ign_config_apply(c, root, IGN_APPLY_SKIP_UNSUPPORTED, &err), EEXIST);
        ASSERT_CONTAINS(err, "overwrite is false");

        /* invalid configs are refused before anything is written */
        _cleanup_ign_config_ IgnConfig *bad = parse_ok(
                "{\"ignition\":{\"version\":\"3.2.0\"},\"storage\":{\"files\":[{\"path\":\"rel\"}]}}");
        free(err);
        err = NULL;
        ASSERT_ERROR(ign_config_apply(bad, root, 0, &err), EBADMSG);
        ASSERT_CONTAINS(err, "must be absolute");
}

TEST(apply_owner_names_from_root)
{
        _cleanup_free_ char *root = mkroot("owners"), *p = NULL, *err = NULL;
        _cleanup_ign_config_ IgnConfig *c = NULL;
        struct stat st;

        if (!test_is_root())
                test_skip("chown needs root");
        p = strdup_printf("%s/etc/passwd", root);
        ASSERT_OK(mkdir_p(strndupa(p, strlen(p) - 7), 0755));
        ASSERT_OK(write_file_atomic(p, "root:x:0:0::/root:/bin/sh\nsvc:x:4242:4343::/:/bin/false\n", 56,
                                    0644));
        free(p);
        p = strdup_printf("%s/etc/group", root);
        ASSERT_OK(write_file_atomic(p, "root:x:0:\nsvcgrp:x:4343:\n", 25, 0644));
        c = parse_ok("{\"ignition\":{\"version\":\"3.2.0\"},\"storage\":{\"files\":[{\"path\":\"/srv/"
                     "f\",\"user\":{\"name\":"
                     "\"svc\"},\"group\":{\"name\":\"svcgrp\"},\"mode\":384}]}}");
        ASSERT_OK(ign_config_apply(c, root, 0, &err));
        free(p);
        p = strdup_printf("%s/srv/f", root);
        ASSERT_TRUE(lstat(p, &st) == 0);
        ASSERT_EQ(st.st_uid, 4242);
        ASSERT_EQ(st.st_gid, 4343);
        ASSERT_EQ(st.st_mode & 07777, 0600);
}

DEFINE_TEST_MAIN
