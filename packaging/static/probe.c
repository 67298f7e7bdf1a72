/* SPDX-License-Identifier: Apache-2.0 */
/*
 * probe: uses every library of the static build for real, so that a static
 * link that drops or breaks one of them shows up as a failure, not as a
 * binary that only looks complete. check.sh runs it inside a root that holds
 * nothing but this binary and a few files under /etc.
 *
 *   probe URL DNS_URL CAFILE OTHER_CAFILE IMAGE FSTYPE JOURNAL_TOKEN
 *
 * URL      an https:// URL whose host name only /etc/hosts knows, serving
 *          the JSON object {"probe": true}
 * DNS_URL  the same server under a name only the DNS server in
 *          /etc/resolv.conf knows
 * CAFILE   the CA that signed the server's certificate
 * OTHER_CAFILE  a CA that did not (the transfer must fail)
 * IMAGE    a file holding a file system of type FSTYPE
 * JOURNAL_TOKEN  sent as CRADLE_PROBE= with sd_journal_send()
 *
 * Prints one "ok"/"FAIL" line per check; exits 0 only when all pass.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>

#include <ares.h>
#include <blkid/blkid.h>
#include <curl/curl.h>
#include <json-c/json.h>
#include <libudev.h>
#include <openssl/evp.h>
#include <openssl/opensslv.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>

static int failures;

/* cradle's lib/ takes systemd's idioms and names (STYLE.md). The static
 * archives of libsystemd, libudev and libblkid define helpers with the same
 * names; build-deps.sh renames theirs, and these make the link prove it. */
char **strv_free(char **l);
int parse_size(const char *s, unsigned long long *ret);
char **strv_free(char **l) {
        if (l)
                for (char **p = l; *p; p++)
                        free(*p);
        free(l);
        return NULL;
}
int parse_size(const char *s, unsigned long long *ret) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 10);
        if (errno != 0 || end == s || *end)
                return -EINVAL;
        *ret = v;
        return 0;
}

static void report(bool ok, const char *what, const char *detail) {
        printf("%s %s: %s\n", ok ? "ok  " : "FAIL", what, detail);
        if (!ok)
                failures++;
}

static void check_md5(void) {
        static const char want[] = "900150983cd24fb0d6963f7d28e17f72"; /* md5("abc") */
        unsigned char md[EVP_MAX_MD_SIZE];
        unsigned n = 0;
        char hex[2 * EVP_MAX_MD_SIZE + 1] = "";

        if (EVP_Digest("abc", 3, md, &n, EVP_md5(), NULL) != 1)
                return report(false, "md5", "EVP_Digest failed");
        for (unsigned i = 0; i < n; i++)
                snprintf(hex + 2 * i, 3, "%02x", md[i]);
        report(strcmp(hex, want) == 0, "md5", hex);
}

static void check_json(void) {
        const char *in = "{ \"a\": [ 1, 2, { \"b\": \"c\" } ], \"d\": true }";
        json_object *o = json_tokener_parse(in);
        if (!o)
                return report(false, "json-c", "parse failed");
        json_object_object_add(o, "e", json_object_new_string("f"));
        const char *out = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
        report(strcmp(out, "{\"a\":[1,2,{\"b\":\"c\"}],\"d\":true,\"e\":\"f\"}") == 0, "json-c", out);
        json_object_put(o);
}

static void check_blkid(const char *image, const char *fstype) {
        blkid_probe pr = blkid_new_probe_from_filename(image);
        const char *type = NULL;
        char detail[256];

        if (!pr)
                return report(false, "blkid", "cannot open image");
        blkid_probe_enable_superblocks(pr, 1);
        blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE | BLKID_SUBLKS_UUID);
        int r = blkid_do_safeprobe(pr);
        if (r == 0)
                (void) blkid_probe_lookup_value(pr, "TYPE", &type, NULL);
        snprintf(detail, sizeof(detail), "rc=%d TYPE=%s", r, type ? type : "(none)");
        report(r == 0 && type && strcmp(type, fstype) == 0, "blkid", detail);
        blkid_free_probe(pr);
}

static void check_udev(void) {
        struct udev *udev = udev_new();
        struct udev_enumerate *e;
        struct udev_list_entry *l;
        unsigned n = 0;
        char detail[256] = "";

        if (!udev)
                return report(false, "libudev", "udev_new failed");
        e = udev_enumerate_new(udev);
        if (!e || udev_enumerate_add_match_subsystem(e, "block") < 0 || udev_enumerate_scan_devices(e) < 0) {
                report(false, "libudev", "enumerate failed");
                goto out;
        }
        udev_list_entry_foreach(l, udev_enumerate_get_list_entry(e)) {
                struct udev_device *d = udev_device_new_from_syspath(udev, udev_list_entry_get_name(l));
                if (d && n == 0)
                        snprintf(detail, sizeof(detail), "first %s (%s)", udev_device_get_sysname(d),
                                 udev_device_get_devtype(d) ?: "?");
                udev_device_unref(d);
                n++;
        }
        char line[300];
        snprintf(line, sizeof(line), "%u block devices, %s", n, detail);
        report(n > 0, "libudev", line);
out:
        udev_enumerate_unref(e);
        udev_unref(udev);
}

static void check_journal(const char *token) {
        char detail[128];
        int booted = sd_booted();
        int r = sd_journal_send("MESSAGE=cradle static probe", "PRIORITY=6", "CRADLE_PROBE=%s", token, NULL);
        snprintf(detail, sizeof(detail), "sd_booted=%d sd_journal_send=%d (%s)", booted, r,
                 r < 0 ? strerror(-r) : "sent");
        report(r >= 0, "libsystemd", detail);
}

struct ares_result {
        bool done;
        int status;
        char addr[INET6_ADDRSTRLEN];
};

static void ares_cb(void *arg, int status, int timeouts, struct ares_addrinfo *ai) {
        struct ares_result *res = arg;
        (void) timeouts;
        res->done = true;
        res->status = status;
        if (status == ARES_SUCCESS && ai && ai->nodes) {
                struct ares_addrinfo_node *n = ai->nodes;
                if (n->ai_family == AF_INET)
                        inet_ntop(AF_INET, &((struct sockaddr_in *) n->ai_addr)->sin_addr, res->addr,
                                  sizeof(res->addr));
                else
                        inet_ntop(AF_INET6, &((struct sockaddr_in6 *) n->ai_addr)->sin6_addr, res->addr,
                                  sizeof(res->addr));
        }
        ares_freeaddrinfo(ai);
}

static void check_ares(const char *name, const char *want) {
        ares_channel ch;
        struct ares_result res = { .status = -1 };
        struct ares_addrinfo_hints hints = { .ai_family = AF_INET };
        char detail[128];

        if (ares_init(&ch) != ARES_SUCCESS)
                return report(false, "c-ares", "ares_init failed");
        ares_getaddrinfo(ch, name, NULL, &hints, ares_cb, &res);
        for (int i = 0; !res.done && i < 50; i++) {
                fd_set r, w;
                struct timeval tv, *tvp;
                FD_ZERO(&r);
                FD_ZERO(&w);
                int nfds = ares_fds(ch, &r, &w);
                if (nfds == 0)
                        break;
                tvp = ares_timeout(ch, NULL, &tv);
                select(nfds, &r, &w, NULL, tvp);
                ares_process(ch, &r, &w);
        }
        ares_destroy(ch);
        snprintf(detail, sizeof(detail), "%s -> %s (%s)", name, res.addr[0] ? res.addr : "nothing",
                 res.done ? ares_strerror(res.status) : "no answer");
        report(res.done && res.status == ARES_SUCCESS && strcmp(res.addr, want) == 0, "c-ares", detail);
}

struct body {
        char data[4096];
        size_t len;
};

static size_t body_write(char *p, size_t size, size_t n, void *userdata) {
        struct body *b = userdata;
        size_t len = size * n;
        if (len > sizeof(b->data) - 1 - b->len)
                return 0; /* too big: curl fails the transfer */
        memcpy(b->data + b->len, p, len);
        b->len += len;
        b->data[b->len] = 0;
        return len;
}

static void check_curl(const char *url, const char *dns_url, const char *cafile, const char *other_cafile) {
        const curl_version_info_data *v = curl_version_info(CURLVERSION_NOW);
        char detail[512];
        struct body body = { .len = 0 };
        long code = 0;
        bool features_ok = (v->features & CURL_VERSION_SSL) && (v->features & CURL_VERSION_ASYNCHDNS) &&
                v->ares && (v->features & CURL_VERSION_LIBZ);
        char protos[256] = "";

        size_t used = 0;
        for (const char *const *p = v->protocols; *p && used < sizeof(protos); p++) {
                int n = snprintf(protos + used, sizeof(protos) - used, "%s ", *p);
                if (n < 0)
                        break;
                used += (size_t) n;
        }
        snprintf(detail, sizeof(detail), "%s; protocols: %s", curl_version(), protos);
        report(features_ok && strcmp(protos, "http https ") == 0, "curl build", detail);

        /* TLS 1.3, then TLS 1.2: both must work with the trimmed OpenSSL... */
        /* ... and a name only DNS knows, resolved by c-ares inside curl. */
        const struct {
                const char *name;
                const char *url;
                long version;
        } tls[] = {
                { "curl tls1.3", url, CURL_SSLVERSION_TLSv1_3 | CURL_SSLVERSION_MAX_TLSv1_3 },
                { "curl tls1.2", url, CURL_SSLVERSION_TLSv1_2 | CURL_SSLVERSION_MAX_TLSv1_2 },
                { "curl dns", dns_url, CURL_SSLVERSION_DEFAULT },
        };
        for (size_t i = 0; i < sizeof(tls) / sizeof(tls[0]); i++) {
                CURL *c = curl_easy_init();
                if (!c)
                        return report(false, tls[i].name, "curl_easy_init failed");
                body.len = 0;
                body.data[0] = 0;
                curl_easy_setopt(c, CURLOPT_URL, tls[i].url);
                curl_easy_setopt(c, CURLOPT_CAINFO, cafile);
                curl_easy_setopt(c, CURLOPT_CAPATH, NULL);
                curl_easy_setopt(c, CURLOPT_SSLVERSION, tls[i].version);
                curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "https");
                curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");
                curl_easy_setopt(c, CURLOPT_TIMEOUT, 20L);
                curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
                curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, body_write);
                curl_easy_setopt(c, CURLOPT_WRITEDATA, &body);
                CURLcode rc = curl_easy_perform(c);
                curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
                char *ip = NULL;
                curl_easy_getinfo(c, CURLINFO_PRIMARY_IP, &ip);
                snprintf(detail, sizeof(detail), "GET %s -> %s, HTTP %ld via %s, %zu bytes", tls[i].url,
                         curl_easy_strerror(rc), code, ip ? ip : "?", body.len);
                report(rc == CURLE_OK && code == 200, tls[i].name, detail);
                curl_easy_cleanup(c);
        }

        json_object *o = json_tokener_parse(body.data);
        json_object *probe = NULL;
        report(o && json_object_object_get_ex(o, "probe", &probe) && json_object_get_boolean(probe),
               "curl body", body.len ? body.data : "(empty)");
        json_object_put(o);

        /* The same server checked against another CA must be refused. */
        CURL *c = curl_easy_init();
        if (!c)
                return report(false, "curl verify", "curl_easy_init failed");
        curl_easy_setopt(c, CURLOPT_URL, url);
        curl_easy_setopt(c, CURLOPT_CAINFO, other_cafile);
        curl_easy_setopt(c, CURLOPT_CAPATH, NULL);
        curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, body_write);
        body.len = 0;
        curl_easy_setopt(c, CURLOPT_WRITEDATA, &body);
        CURLcode rc = curl_easy_perform(c);
        snprintf(detail, sizeof(detail), "against another CA -> %s", curl_easy_strerror(rc));
        report(rc == CURLE_PEER_FAILED_VERIFICATION, "curl verify", detail);
        curl_easy_cleanup(c);
}

int main(int argc, char **argv) {
        if (argc != 8) {
                fprintf(stderr, "usage: %s URL DNS_URL CAFILE OTHER_CAFILE IMAGE FSTYPE JOURNAL_TOKEN\n", argv[0]);
                return 2;
        }
        printf("info OpenSSL: %s\n", OpenSSL_version(OPENSSL_VERSION));
        if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK || ares_library_init(ARES_LIB_INIT_ALL) != ARES_SUCCESS) {
                fprintf(stderr, "library init failed\n");
                return 1;
        }
        unsigned long long sz = 0;
        report(parse_size("4096", &sz) == 0 && sz == 4096 && !strv_free(NULL), "own helpers",
               "strv_free(), parse_size() of our own link beside libsystemd/libblkid");
        check_md5();
        check_json();
        check_blkid(argv[5], argv[6]);
        check_udev();
        check_journal(argv[7]);
        check_ares("localhost", "127.0.0.1");                       /* /etc/hosts */
        CURLU *u = curl_url();
        char *dns_host = NULL;
        if (u && curl_url_set(u, CURLUPART_URL, argv[2], 0) == CURLUE_OK &&
            curl_url_get(u, CURLUPART_HOST, &dns_host, 0) == CURLUE_OK)
                check_ares(dns_host, "127.0.0.1");                  /* DNS */
        else
                report(false, "c-ares", "cannot parse DNS_URL");
        curl_free(dns_host);
        curl_url_cleanup(u);
        check_curl(argv[1], argv[2], argv[3], argv[4]);
        ares_library_cleanup();
        curl_global_cleanup();
        printf("%d failed\n", failures);
        return failures ? 1 : 0;
}
