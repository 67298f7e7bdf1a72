/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The discovery steps' pure pieces: argument models (go-openapi's words),
 * the chronyc parser on the Go agent's own test outputs, the DNS answer,
 * ARP, NDP and ICMP parsers, lease files, the Tang advertisement, ping's
 * arithmetic, the disk check's region and percentile, and the dispatcher
 * for every step type this branch adds.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include <ares.h>
#include <json-c/json.h>

#include "agent/steps.h"
#include "agent/steps/chrony.h"
#include "agent/steps/dhcp-lease.h"
#include "agent/steps/disk-speed.h"
#include "agent/steps/net-probe.h"
#include "agent/steps/resolver.h"
#include "agent/steps/step-model.h"
#include "agent/steps/step-util.h"
#include "agent/steps/tang.h"
#include "cleanup.h"
#include "fileio.h"
#include "jsonutil.h"
#include "strutil.h"
#include "tests.h"
#include "timeutil.h"

/* ---- argument models ----------------------------------------------------- */

static const struct {
        const ModelSchema *model;
        const char *arg;
        const char *error; /* NULL: valid */
} model_cases[] = {
        { &model_ntp_synchronization_request, "{\"ntp_source\":\"\"}", NULL },
        { &model_ntp_synchronization_request, "{\"NTP_SOURCE\":\"a\"}",
          NULL }, /* Go matches keys case-insensitively */
        { &model_ntp_synchronization_request, "{}",
          "validation failure list:\nntp_source in body is required" },
        { &model_ntp_synchronization_request, "null",
          "validation failure list:\nntp_source in body is required" },
        { &model_ntp_synchronization_request, "{\"ntp_source\":null}",
          "validation failure list:\nntp_source in body is required" },
        { &model_ntp_synchronization_request, "{\"ntp_source\":1}",
          "json: cannot unmarshal number into Go struct field NtpSynchronizationRequest.ntp_source of type "
          "string" },
        { &model_ntp_synchronization_request, "", "unexpected end of JSON input" },
        { &model_container_image_availability_request, "{\"images\":[],\"timeout\":1.5}",
          "json: cannot unmarshal number 1.5 into Go struct field ContainerImageAvailabilityRequest.timeout "
          "of type "
          "int64" },
        { &model_container_image_availability_request,
          "{\"images\":[\"quay.io/openshift-release-dev/ocp-release:4.13.18-x86_64\",\"registry.local:5000/"
          "a/b@sha256:"
          "35855191065d777e85d53f903628d99ec5c829ee07c075d884a8b7d23c5790fd\"],\"timeout\":960}",
          NULL },
        { &model_container_image_availability_request, "{\"images\":[\"an image\"]}",
          "validation failure list:\nimages.0 in body should match "
          "'^(([a-zA-Z0-9\\-\\.]+)(:[0-9]+)?\\/)?[a-z0-9\\._\\-\\/@]+[?::a-zA-Z0-9_\\-.]+$'" },
        { &model_connectivity_check_params,
          "[{\"host_id\":\"a1a1a1a1-0000-4000-8000-000000000002\",\"nics\":[{\"ip_addresses\":[\"192.168."
          "122.12\","
          "\"fe80::1\"],\"mac\":\"52:54:00:00:00:02\",\"name\":\"enp1s0\"}]}]",
          NULL },
        { &model_connectivity_check_params,
          "[{\"nics\":[{\"mac\":\"52:54:00:00:00\",\"ip_addresses\":[\"x\"]}]}]",
          "validation failure list:\n0.nics.0.mac in body must be of type mac: \"52:54:00:00:00\"\n"
          "0.nics.0.ip_addresses.0 in body should match "
          "'^(?:(?:(?:[0-9]{1,3}\\.){3}[0-9]{1,3})|(?:(?:[0-9a-fA-F]*:[0-9a-fA-F]*){2,}))$'" },
        { &model_connectivity_check_params, "[{\"nics\":{}}]",
          "json: cannot unmarshal object into Go struct field ConnectivityCheckHost.nics of type "
          "[]*models.ConnectivityCheckNic" },
        { &model_free_addresses_request, "[\"192.168.122.0/24\"]", NULL },
        { &model_free_addresses_request, "[\"not a network\"]",
          "validation failure list:\n0 in body should match "
          "'^([0-9]{1,3}\\.){3}[0-9]{1,3}\\/[0-9]|[1-2][0-9]|3[0-2]?$'" },
        { &model_verify_vips_request, "[{\"vip\":\"\",\"vip_type\":\"api\"}]", NULL },
        { &model_dhcp_allocation_request,
          "{\"interface\":\"eth0\",\"api_vip_mac\":\"00:1a:4a:fb:12:7e\",\"ingress_vip_mac\":\"00-1A-4A-4A-"
          "AA-1C\"}",
          NULL },
        { &model_logs_gather_cmd_request, "{\"cluster_id\":\"x\"}",
          "validation failure list:\ncluster_id in body must be of type uuid: \"x\"\ninfra_env_id in body "
          "is "
          "required\nhost_id in body is required\nbootstrap in body is required\ninstaller_gather in body "
          "is "
          "required" },
        { &model_download_boot_artifacts_request, "[]",
          "json: cannot unmarshal array into Go value of type models.DownloadBootArtifactsRequest" },
};

TEST(models_validate_as_go_openapi)
{
        for (size_t i = 0; i < ELEMENTSOF(model_cases); i++) {
                _cleanup_(json_object_putp) json_object *doc = NULL;
                _cleanup_free_ char *err = NULL;
                int r = model_parse_arg(model_cases[i].arg, model_cases[i].model, &doc, &err);

                if (!model_cases[i].error) {
                        if (r < 0)
                                test_fail(__FILE__, __LINE__, "case %zu (%s): %s", i, model_cases[i].arg,
                                          err);
                } else {
                        if (r != -EINVAL)
                                test_fail(__FILE__, __LINE__, "case %zu (%s) passed", i, model_cases[i].arg);
                        ASSERT_STREQ(err, model_cases[i].error);
                }
        }
}

TEST(model_lookup_is_case_insensitive_like_go)
{
        _cleanup_(json_object_putp) json_object *doc = NULL;
        _cleanup_free_ char *err = NULL;

        ASSERT_OK(model_parse_arg("{\"Path\":\"/dev/x\",\"other\":1}", &model_disk_speed_check_request, &doc,
                                  &err));
        ASSERT_STREQ(model_get_string(doc, "path"), "/dev/x");
        ASSERT_NULL(model_get(doc, "missing"));
        ASSERT_EQ(model_array_length(NULL), 0);
}

/* ---- chronyc --------------------------------------------------------------- */

TEST(chronyc_sources_of_the_go_agent_tests)
{
        _cleanup_free_ char *p1 =
                test_src_path("tests/reference/observed/tool-outputs/chronyc-sources--output-1.txt");
        _cleanup_free_ char *p2 =
                test_src_path("tests/reference/observed/tool-outputs/chronyc-sources--output-2.txt");
        _cleanup_free_ char *t1 = NULL, *t2 = NULL;
        ChronySource *l = NULL;
        size_t n = 0;

        ASSERT_OK(read_full_file(p1, 1 << 20, &t1, NULL));
        ASSERT_OK(chrony_parse_sources(t1, &l, &n));
        ASSERT_EQ(n, 4);
        ASSERT_STREQ(l[0].name, "ntpool1.603.newcontinuum>");
        ASSERT_STREQ(l[0].state, "combined");
        ASSERT_STREQ(l[1].name, "eterna.binary.net");
        ASSERT_STREQ(l[1].state, "synced");
        ASSERT_STREQ(l[2].name, "time.cloudflare.com");
        ASSERT_STREQ(l[2].state, "unreachable");
        ASSERT_STREQ(l[3].state, "unreachable");
        chrony_sources_free(l, n);

        ASSERT_OK(read_full_file(p2, 1 << 20, &t2, NULL));
        ASSERT_OK(chrony_parse_sources(t2, &l, &n));
        ASSERT_EQ(n, 11);
        ASSERT_STREQ(l[0].name, "64.22.253.155");
        ASSERT_STREQ(l[0].state, "unreachable");
        ASSERT_STREQ(l[4].name, "10.5.26.10");
        ASSERT_STREQ(l[4].state, "not_combined");
        ASSERT_STREQ(l[6].name, "10.11.160.238");
        ASSERT_STREQ(l[6].state, "synced");
        chrony_sources_free(l, n);
}

TEST(chronyc_states_and_odd_lines)
{
        static const char *const map[][2] = { { "*", "synced" },       { "+", "combined" },
                                              { "-", "not_combined" }, { "?", "unreachable" },
                                              { "x", "error" },        { "~", "variable" },
                                              { "#", "error" } };
        ChronySource *l = NULL;
        size_t n = 0;

        for (size_t i = 0; i < ELEMENTSOF(map); i++)
                ASSERT_STREQ(chrony_state_name(map[i][0][0]), map[i][1]);
        /* a bare "^" or a line without a name would make the Go agent
         * panic; they are skipped */
        ASSERT_OK(chrony_parse_sources("^\n^*\n=* x\n#* refclock 0\n^~ a.b 1\n", &l, &n));
        ASSERT_EQ(n, 1);
        ASSERT_STREQ(l[0].name, "a.b");
        ASSERT_STREQ(l[0].state, "variable");
        chrony_sources_free(l, n);
}

/* ---- DNS -------------------------------------------------------------------- */

static size_t put_name(uint8_t *p, const char *dotted)
{
        size_t n = 0;

        while (*dotted) {
                size_t l = strcspn(dotted, ".");
                p[n++] = (uint8_t)l;
                memcpy(p + n, dotted, l);
                n += l;
                dotted += l;
                if (*dotted == '.')
                        dotted++;
        }
        p[n++] = 0;
        return n;
}

TEST(dns_cname_chain_with_compression)
{
        uint8_t m[512] = { 0x12, 0x34, 0x81, 0x80, 0, 1, 0, 2, 0, 0, 0, 0 };
        _cleanup_strv_free_ char **chain = NULL;
        _cleanup_free_ char *q = NULL;
        size_t n = 12, t, second;

        n += put_name(m + n, "alias2.lab.example.test");
        m[n++] = 0, m[n++] = 5, m[n++] = 0, m[n++] = 1;
        /* alias2 -> alias1.lab.example.test: owner by pointer to 12 */
        m[n++] = 0xc0, m[n++] = 12;
        m[n++] = 0, m[n++] = 5, m[n++] = 0, m[n++] = 1, m[n++] = 0, m[n++] = 0, m[n++] = 0, m[n++] = 60;
        t = put_name(m + n + 2, "alias1.lab.example.test");
        m[n++] = 0, m[n++] = (uint8_t)t;
        second = n;
        n += t;
        /* alias1 -> api + pointer to "lab.example.test" (12 + 7) */
        m[n++] = 0xc0, m[n++] = (uint8_t)second;
        m[n++] = 0, m[n++] = 5, m[n++] = 0, m[n++] = 1, m[n++] = 0, m[n++] = 0, m[n++] = 0, m[n++] = 60;
        m[n++] = 0, m[n++] = 6;
        m[n++] = 3, m[n++] = 'a', m[n++] = 'p', m[n++] = 'i', m[n++] = 0xc0, m[n++] = 12 + 7;

        ASSERT_OK(dns_parse_cname_chain(m, n, &q, &chain));
        ASSERT_STREQ(q, "alias2.lab.example.test");
        ASSERT_EQ(strv_length(chain), 2);
        ASSERT_STREQ(chain[0], "alias1.lab.example.test");
        ASSERT_STREQ(chain[1], "api.lab.example.test");

        /* every truncation is refused, never read past */
        for (size_t k = 0; k < n; k++) {
                _cleanup_strv_free_ char **c2 = NULL;
                _cleanup_free_ char *q2 = NULL;
                int r = dns_parse_cname_chain(m, k, &q2, &c2);
                ASSERT_TRUE(r == -EBADMSG || (r == 0 && strv_length(c2) < 2));
        }
}

/* Go's resolver's words for each kind of failure (net.DNSError) */
TEST(dns_errors_in_go_words)
{
        static const struct {
                int status;
                const char *server, *want;
        } cases[] = {
                { ARES_ENOTFOUND, "198.51.100.1:53", "lookup api.x.test on 198.51.100.1:53: no such host" },
                { ARES_ENODATA, "198.51.100.1:53", "lookup api.x.test on 198.51.100.1:53: no such host" },
                { ARES_ETIMEOUT, "198.51.100.1:53", "lookup api.x.test on 198.51.100.1:53: i/o timeout" },
                { ARES_ESERVFAIL, "[2001:db8::1]:53",
                  "lookup api.x.test on [2001:db8::1]:53: server misbehaving" },
                { ARES_EREFUSED, "198.51.100.1:53",
                  "lookup api.x.test on 198.51.100.1:53: server misbehaving" },
                { ARES_ECONNREFUSED, "198.51.100.1:53",
                  "lookup api.x.test on 198.51.100.1:53: read udp 198.51.100.1:53: read: connection "
                  "refused" },
                { ARES_ETIMEOUT, NULL, "lookup api.x.test: i/o timeout" },
                { ARES_ECANCELLED, NULL, "lookup api.x.test: operation was canceled" },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *m =
                        resolve_error_message("api.x.test", cases[i].server, cases[i].status);
                ASSERT_STREQ(m, cases[i].want);
                ASSERT_NOT_CONTAINS(m, "DNS");
        }
        ASSERT_NULL(resolve_go_error(ARES_ENOMEM));
        {
                _cleanup_free_ char *m = resolve_error_message("a.test", NULL, ARES_ENOMEM);
                ASSERT_STREQ(m, "lookup a.test: Out of memory");
        }
}

TEST(dns_compression_loop_is_refused)
{
        uint8_t m[] = { 0, 0, 0x81, 0x80, 0, 1, 0, 0, 0, 0, 0, 0, 0xc0, 12, 0, 5, 0, 1 };
        _cleanup_strv_free_ char **chain = NULL;
        _cleanup_free_ char *q = NULL;

        ASSERT_ERROR(dns_parse_cname_chain(m, sizeof(m), &q, &chain), EBADMSG);
}

/* ---- ARP, NDP, ICMP --------------------------------------------------------- */

TEST(arp_request_and_reply)
{
        uint8_t mac[6] = { 0x02, 0, 0, 0, 0, 0x0a }, got[6], pkt[28];
        struct in_addr src, dst, s, t;

        inet_pton(AF_INET, "198.51.100.1", &src);
        inet_pton(AF_INET, "198.51.100.2", &dst);
        ASSERT_EQ(arp_build_request(pkt, mac, src, dst), 28);
        ASSERT_EQ(arp_parse_reply(pkt, sizeof(pkt), got, &s, &t), 0); /* a request */
        pkt[7] = 2;
        ASSERT_EQ(arp_parse_reply(pkt, sizeof(pkt), got, &s, &t), 1);
        ASSERT_TRUE(memcmp(got, mac, 6) == 0 && s.s_addr == src.s_addr && t.s_addr == dst.s_addr);
        ASSERT_ERROR(arp_parse_reply(pkt, 27, got, &s, &t), EBADMSG);
        pkt[5] = 16; /* not IPv4 */
        ASSERT_ERROR(arp_parse_reply(pkt, sizeof(pkt), got, &s, &t), EBADMSG);
}

TEST(ndp_advertisement)
{
        uint8_t na[32] = { 136, 0, 0, 0, 0x60 }, mac[6];
        struct in6_addr target, want;
        bool has = false;

        inet_pton(AF_INET6, "2001:db8:5::2", &want);
        memcpy(na + 8, &want, 16);
        na[24] = 2, na[25] = 1;
        memcpy(na + 26, "\x96\x8b\x92\xc7\xf2\x86", 6);
        ASSERT_EQ(ndp_parse_advert(na, sizeof(na), &target, mac, &has), 1);
        ASSERT_TRUE(has && memcmp(&target, &want, 16) == 0 && mac[0] == 0x96 && mac[5] == 0x86);
        ASSERT_EQ(ndp_parse_advert(na, 24, &target, mac, &has), 1);
        ASSERT_FALSE(has);
        na[25] = 0; /* an option of length 0 would loop forever */
        ASSERT_ERROR(ndp_parse_advert(na, sizeof(na), &target, mac, &has), EBADMSG);
        na[0] = 135;
        ASSERT_EQ(ndp_parse_advert(na, sizeof(na), &target, mac, &has), 0);
}

TEST(icmp_echo_replies)
{
        uint8_t v4[28] = { 0x45, 0, 0, 28, 0, 0, 0, 0, 64, 1 }, v6[8] = { 129, 0, 0, 0, 0xab, 0xcd, 0, 9 };
        uint16_t id, seq;

        v4[20 + 4] = 0x12, v4[20 + 5] = 0x34, v4[20 + 7] = 3;
        ASSERT_EQ(icmp_parse_echo_reply(AF_INET, true, v4, sizeof(v4), &id, &seq), 1);
        ASSERT_TRUE(id == 0x1234 && seq == 3);
        ASSERT_EQ(icmp_parse_echo_reply(AF_INET, false, v4 + 20, 8, &id, &seq), 1);
        v4[0] = 0x4f; /* IHL beyond the packet */
        ASSERT_ERROR(icmp_parse_echo_reply(AF_INET, true, v4, sizeof(v4), &id, &seq), EBADMSG);
        ASSERT_EQ(icmp_parse_echo_reply(AF_INET6, false, v6, sizeof(v6), &id, &seq), 1);
        ASSERT_TRUE(id == 0xabcd && seq == 9);
        v6[0] = 128; /* a request */
        ASSERT_EQ(icmp_parse_echo_reply(AF_INET6, false, v6, sizeof(v6), &id, &seq), 0);
}

TEST(addresses_and_prefixes)
{
        IpAddr a, n;
        unsigned len;
        char buf[IP_ADDR_STRING_MAX];

        ASSERT_OK(ip_prefix_parse("198.51.100.0/29", &n, &len));
        ASSERT_OK(ip_addr_parse("198.51.100.7", &a));
        ASSERT_TRUE(ip_prefix_contains(&n, len, &a));
        ASSERT_OK(ip_addr_parse("198.51.100.8", &a));
        ASSERT_FALSE(ip_prefix_contains(&n, len, &a));
        ASSERT_OK(ip_prefix_parse("2001:db8:5::1/64", &n, &len));
        ASSERT_OK(ip_addr_parse("2001:db8:5::ffff", &a));
        ASSERT_TRUE(ip_prefix_contains(&n, len, &a));
        ASSERT_STREQ(ip_addr_format(&a, buf), "2001:db8:5::ffff");
        ASSERT_OK(ip_addr_parse("169.254.3.4", &a));
        ASSERT_TRUE(ip_addr_is_link_local(&a));
        ASSERT_OK(ip_addr_parse("fe80::1", &a));
        ASSERT_TRUE(ip_addr_is_link_local(&a));
        ASSERT_ERROR(ip_prefix_parse("198.51.100.0/33", &n, &len), EINVAL);
        ASSERT_ERROR(ip_addr_parse("198.51.100.0/24", &a), EINVAL);
}

TEST(ping_summary_arithmetic)
{
        /* 10 sent, 4 back: "60% packet loss"; the average truncated to
         * whole microseconds, printed with three decimals */
        PingResult r = { .transmitted = 10, .received = 4, .rtt_sum = 4 * 2871 + 3 };

        ASSERT_TRUE(ping_loss_percent(&r) == 60.0);
        ASSERT_TRUE(ping_average_ms(&r) == 2.871);
        r = (PingResult){ .transmitted = 3, .received = 2, .rtt_sum = 120 };
        ASSERT_TRUE(ping_loss_percent(&r) > 33.33 && ping_loss_percent(&r) < 33.34);
        ASSERT_TRUE(ping_average_ms(&r) == 0.06);
}

TEST(probes_end_on_a_stop_request)
{
        /* an address that never answers, with a long wait after each
         * request: after SIGTERM (stop_request) the probes return at once */
        PingOptions o = { .count = 5, .interval = 2 * USEC_PER_SEC, .wait = 30 * USEC_PER_SEC };
        IpAddr a;
        PingResult p;
        bool up;
        int r;

        ASSERT_OK(ip_addr_parse("192.0.2.1", &a));
        stop_request();
        r = ping_sweep(&a, 1, &o, &up);
        if (r == -EPERM || r == -EACCES) {
                stop_reset();
                test_skip("no ICMP socket here (not root, ping_group_range): %s", strerror(-r));
        }
        ASSERT_ERROR(r, ECANCELED);
        ASSERT_ERROR(ping_run(&a, &o, &p), ECANCELED);
        stop_reset();
}

/* ---- leases, Tang, disk -------------------------------------------------------- */

TEST(dhcp_lease_files)
{
        const char *file =
                "lease {\n  interface \"api\";\n  fixed-address 198.51.100.150;\n}\n"
                "lease {\n  interface \"api\";\n  fixed-address 198.51.100.151;\n  option x 1;\n}\n\n";
        _cleanup_free_ char *last = NULL, *addr = NULL, *renamed = NULL;

        ASSERT_OK(dhcp_lease_last(file, &last));
        ASSERT_STREQ(last,
                     "lease {\n  interface \"api\";\n  fixed-address 198.51.100.151;\n  option x 1;\n}");
        ASSERT_OK(dhcp_lease_address(last, &addr));
        ASSERT_STREQ(addr, "198.51.100.151");
        ASSERT_ERROR(dhcp_lease_last("lease { }  trailing", &last), ENOENT);
        ASSERT_ERROR(dhcp_lease_last("xlease { }", &last), ENOENT);
        ASSERT_ERROR(dhcp_lease_address("lease { interface \"a\"; }", &addr), ENOENT);
        renamed = dhcp_lease_set_interface("lease {\n interface  \"old\";\n interface \"\";\n}", "ingress");
        ASSERT_STREQ(renamed, "lease {\n interface \"ingress\";\n interface \"\";\n}");
}

TEST(tang_advertisement)
{
        const char *adv =
                "{\"payload\":\"eyJrZXlzIjpbXX0\",\"signatures\":[{\"protected\":\"eyJhbGciOiJFUzUxMiJ9\","
                "\"signature\":\"c2ln\",\"header\":{}}],\"unknown\":1}";
        _cleanup_(json_object_putp) json_object *e = NULL;
        _cleanup_free_ char *err = NULL, *text = NULL;

        ASSERT_OK(tang_parse_advertisement(adv, strlen(adv), "http://t/adv/X", &e, &err));
        text = json_to_string(e, 0);
        ASSERT_STREQ(
                text,
                "{\"payload\":\"eyJrZXlzIjpbXX0\",\"signatures\":[{\"protected\":\"eyJhbGciOiJFUzUxMiJ9\","
                "\"signature\":\"c2ln\"}],\"tang_url\":\"http://t/adv/X\"}");
        ASSERT_ERROR(tang_parse_advertisement("", 0, "u", &e, &err), EBADMSG);
        free(err);
        err = NULL;
        ASSERT_ERROR(tang_parse_advertisement("{\"payload\":[]}", 14, "u", &e, &err), EBADMSG);
        ASSERT_STREQ(err,
                     "Error unmarshaling tang response: json: cannot unmarshal array into Go struct field "
                     "TangServerResponse.payload of type string");
}

TEST(disk_check_region_is_fios)
{
        uint64_t s[200];

        /* fio --size=22m -bs=2300: 10030 full writes, the last one ending
         * 328 bytes after 22 MiB (measured with fio on a loop device) */
        ASSERT_EQ(DISK_SPEED_WRITES, 10030);
        ASSERT_EQ(DISK_SPEED_REGION_END, 23069000);
        for (size_t i = 0; i < ELEMENTSOF(s); i++)
                s[i] = ELEMENTSOF(s) - i; /* 200..1 */
        ASSERT_EQ(disk_speed_percentile(s, ELEMENTSOF(s), 99.0), 198);
        ASSERT_EQ(disk_speed_percentile(s, 1, 99.0), s[0]);
        ASSERT_EQ(disk_speed_percentile(s, 0, 99.0), 0);
}

TEST(go_error_texts)
{
        char *one[] = { (char *)"a", NULL }, *two[] = { (char *)"a", (char *)"b", NULL };
        _cleanup_free_ char *t1 = go_multierror_format(one), *t2 = go_multierror_format(two);
        _cleanup_free_ char *e = go_errno_string(ENOENT), *l = go_strv_format(two);

        ASSERT_STREQ(t1, "1 error occurred:\n\t* a\n\n");
        ASSERT_STREQ(t2, "2 errors occurred:\n\t* a\n\t* b\n\n");
        ASSERT_STREQ(e, "no such file or directory");
        ASSERT_STREQ(l, "[a b]");
}

/* ---- dispatch ------------------------------------------------------------------ */

TEST(every_step_type_has_its_handler)
{
        static const StepType types[] = {
                STEP_CONNECTIVITY_CHECK,
                STEP_FREE_NETWORK_ADDRESSES,
                STEP_NTP_SYNCHRONIZER,
                STEP_DOMAIN_RESOLUTION,
                STEP_VERIFY_VIPS,
                STEP_TANG_CONNECTIVITY_CHECK,
                STEP_API_VIP_CONNECTIVITY_CHECK,
                STEP_DHCP_LEASE_ALLOCATE,
                STEP_INSTALLATION_DISK_SPEED_CHECK,
                STEP_CONTAINER_IMAGE_AVAILABILITY,
                STEP_UPGRADE_AGENT,
                STEP_DOWNLOAD_BOOT_ARTIFACTS,
                STEP_REBOOT_FOR_RECLAIM,
        };

        for (size_t i = 0; i < ELEMENTSOF(types); i++) {
                const StepHandler *h = step_handler_find(types[i]);
                ASSERT_NOT_NULL(h);
                ASSERT_EQ(h->type, types[i]);
                ASSERT_EQ(h->max_args, types[i] == STEP_INSTALLATION_DISK_SPEED_CHECK ? 2 : 1);
        }
        ASSERT_NULL(step_handler_find(STEP_EXECUTE));
}

TEST(invalid_arguments_run_nothing)
{
        AgentConfig config = {};
        StepContext ctx = { .config = &config };
        StepResult r = {};
        char *bad[] = { (char *)"{\"path\":true}", (char *)"480.00", NULL };
        char *none[] = { NULL };

        step_run(&ctx, "installation-disk-speed-check", bad, &r);
        ASSERT_EQ(r.exit_code, -1);
        ASSERT_STREQ(r.error, "json: cannot unmarshal bool into Go struct field DiskSpeedCheckRequest.path "
                              "of type string");
        ASSERT_NULL(r.output);
        step_result_done(&r);
        step_run(&ctx, "verify-vips", none, &r);
        ASSERT_EQ(r.exit_code, -1);
        step_result_done(&r);
}

DEFINE_TEST_MAIN
