/* SPDX-License-Identifier: Apache-2.0 */
#include <json-c/json.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <unistd.h>

#include "cleanup.h"
#include "fileio.h"
#include "http.h"
#include "jsonutil.h"
#include "redact.h"
#include "strutil.h"
#include "tests.h"

static unsigned plain_port, tls_port, mtls_port;
static char *certs;

static unsigned start_httpd(const char *name, const char *tls, bool client_ca)
{
        _cleanup_free_ char *script = test_src_path("tests/helpers/httpd.py");
        _cleanup_free_ char *port_file = strdup_printf("%s/%s.port", test_tmpdir(), name);
        _cleanup_free_ char *cert = strdup_printf("%s/server.pem", certs);
        _cleanup_free_ char *key = strdup_printf("%s/server-key.pem", certs);
        _cleanup_free_ char *ca = strdup_printf("%s/ca.pem", certs);
        char *argv[12] = { "/usr/bin/python3", script, "--port-file", port_file };
        int n = 4, pid;
        unsigned port;

        if (tls) {
                argv[n++] = "--tls-cert";
                argv[n++] = cert;
                argv[n++] = "--tls-key";
                argv[n++] = key;
        }
        if (client_ca) {
                argv[n++] = "--client-ca";
                argv[n++] = ca;
        }
        argv[n] = NULL;
        ASSERT_OK(test_server_start(argv, port_file, &pid, &port));
        return port;
}

static void setup(void)
{
        _cleanup_free_ char *mk = NULL;

        if (plain_port)
                return;
        if (access("/usr/bin/python3", X_OK) < 0)
                test_skip("/usr/bin/python3 is not installed (tools/deps installs it)");
        certs = strdup_printf("%s/pki", test_tmpdir());
        mk = test_src_path("tests/helpers/mkcerts.sh");
        {
                char *argv[] = { "sh", mk, certs, NULL };
                ASSERT_EQ(test_run(argv, NULL), 0);
        }
        plain_port = start_httpd("plain", NULL, false);
        tls_port = start_httpd("tls", "yes", false);
        mtls_port = start_httpd("mtls", "yes", true);
}

static HttpClient *client(const char *scheme, unsigned port, HttpClientOptions o)
{
        _cleanup_free_ char *base = strdup_printf("%s://127.0.0.1:%u/", scheme, port);
        _cleanup_free_ char *err = NULL;
        HttpClient *c = NULL;

        o.base_url = base;
        ASSERT_OK(http_client_new(&o, &c, &err));
        return c;
}

TEST(get_json_with_headers)
{
        setup();
        _cleanup_(http_client_freep) HttpClient *c =
                client("http", plain_port, (HttpClientOptions){ .user_agent = "cradle-test" });
        _cleanup_http_response_ HttpResponse r = {};
        _cleanup_(json_object_putp) json_object *j = NULL;

        ASSERT_OK(http_client_set_header(c, "Discovery_agent_version", "quay.io/x/agent:v1"));
        ASSERT_OK(http_request_json(c, "GET", "/echo", NULL, &r, &j, NULL));
        ASSERT_EQ(r.status, 200);
        ASSERT_STREQ(http_response_header(&r, "Content-Type"), "application/json");
        ASSERT_STREQ(json_get_string(j, "method"), "GET");
        ASSERT_STREQ(json_get_string(json_get(j, "headers"), "discovery_agent_version"),
                     "quay.io/x/agent:v1");
        ASSERT_STREQ(json_get_string(json_get(j, "headers"), "user-agent"), "cradle-test");
        ASSERT_STREQ(json_get_string(json_get(j, "headers"), "accept"), "application/json");
}

TEST(post_json_body_and_connection_reuse)
{
        setup();
        _cleanup_(http_client_freep) HttpClient *c = client("http", plain_port, (HttpClientOptions){});
        _cleanup_(json_object_putp) json_object *body = json_new_object(), *j1 = NULL, *j2 = NULL;
        _cleanup_http_response_ HttpResponse r1 = {}, r2 = {};
        int64_t p1, p2;

        ASSERT_OK(json_add_string(body, "host_id", "b1f5c5b7-caf8-66bd-addd-439b331f2640"));
        ASSERT_OK(http_request_json(c, "POST", "echo", body, &r1, &j1, NULL));
        ASSERT_STREQ(json_get_string(j1, "method"), "POST");
        ASSERT_STREQ(json_get_string(j1, "body"), "{\"host_id\":\"b1f5c5b7-caf8-66bd-addd-439b331f2640\"}");
        ASSERT_STREQ(json_get_string(json_get(j1, "headers"), "content-type"), "application/json");
        ASSERT_OK(http_request_json(c, "PUT", "echo", body, &r2, &j2, NULL));
        ASSERT_STREQ(json_get_string(j2, "method"), "PUT");
        /* same source port: the one curl handle kept the connection */
        ASSERT_OK(json_get_int64(j1, "peer_port", &p1));
        ASSERT_OK(json_get_int64(j2, "peer_port", &p2));
        ASSERT_EQ(p1, p2);
}

static unsigned retries_seen;
static char last_reason[128];

static void on_retry(void *userdata, const char *method, const char *url, unsigned attempt,
                     unsigned attempts, usec_t delay, const char *reason)
{
        (void)userdata;
        (void)method;
        (void)url;
        (void)attempts;
        ASSERT_LE(delay, 40 * USEC_PER_MSEC);
        retries_seen = attempt;
        snprintf(last_reason, sizeof(last_reason), "%s", reason);
}

#define FAST_RETRY(n, what) \
        ((HttpRetryPolicy){ .max_retries = (n), \
                            .base_delay = 10 * USEC_PER_MSEC, \
                            .max_delay = 40 * USEC_PER_MSEC, \
                            .on = (what) })

TEST(retries_503_then_succeeds)
{
        setup();
        _cleanup_(http_client_freep) HttpClient *c = client(
                "http", plain_port,
                (HttpClientOptions){ .retry = FAST_RETRY(3, HTTP_RETRY_TRANSPORT | HTTP_RETRY_503_504),
                                     .on_retry = on_retry });
        _cleanup_http_response_ HttpResponse r = {};
        HttpRequest req = { .path = "/flaky/a/2" };

        retries_seen = 0;
        ASSERT_OK(http_request(c, &req, &r, NULL));
        ASSERT_EQ(r.status, 200);
        ASSERT_STREQ(r.body, "ok after 2");
        ASSERT_EQ(r.attempts, 3);
        ASSERT_EQ(retries_seen, 2);
        ASSERT_STREQ(last_reason, "status 503");
}

TEST(retries_are_bounded)
{
        setup();
        _cleanup_(http_client_freep) HttpClient *c = client(
                "http", plain_port, (HttpClientOptions){ .retry = FAST_RETRY(2, HTTP_RETRY_503_504) });
        _cleanup_http_response_ HttpResponse r = {}, count = {};
        HttpRequest req = { .path = "/flaky/b/10" }, creq = { .path = "/count/flaky/b" };

        ASSERT_OK(http_request(c, &req, &r, NULL));
        ASSERT_EQ(r.status, 503);
        ASSERT_EQ(r.attempts, 3);
        ASSERT_OK(http_request(c, &creq, &count, NULL));
}

TEST(status_rules)
{
        setup();
        _cleanup_(http_client_freep) HttpClient *go = client(
                "http", plain_port, (HttpClientOptions){ .retry = FAST_RETRY(3, HTTP_RETRY_503_504) });
        _cleanup_(http_client_freep) HttpClient *all =
                client("http", plain_port, (HttpClientOptions){ .retry = FAST_RETRY(2, HTTP_RETRY_5XX) });
        _cleanup_http_response_ HttpResponse r1 = {}, r2 = {}, r3 = {};
        HttpRequest req500 = { .path = "/status/500" }, req404 = { .path = "/status/404" };

        ASSERT_OK(http_request(go, &req500, &r1, NULL));
        ASSERT_EQ(r1.status, 500);
        ASSERT_EQ(r1.attempts, 1);
        ASSERT_OK(http_request(all, &req500, &r2, NULL));
        ASSERT_EQ(r2.attempts, 3);
        ASSERT_OK(http_request(all, &req404, &r3, NULL));
        ASSERT_EQ(r3.status, 404);
        ASSERT_EQ(r3.attempts, 1);
}

static unsigned closed_port(void)
{
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t l = sizeof(a);
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

        ASSERT_OK(bind(fd, (struct sockaddr *)&a, sizeof(a)));
        ASSERT_OK(getsockname(fd, (struct sockaddr *)&a, &l));
        close(fd);
        return ntohs(a.sin_port);
}

TEST(connection_refused_is_retried_then_reported)
{
        _cleanup_(http_client_freep) HttpClient *c = client(
                "http", closed_port(),
                (HttpClientOptions){ .retry = FAST_RETRY(2, HTTP_RETRY_TRANSPORT), .on_retry = on_retry });
        HttpResponse r = {};
        _cleanup_free_ char *err = NULL;
        HttpRequest req = { .path = "/v2/infra-envs?api_key=SUPERSECRETKEY" };

        retries_seen = 0;
        ASSERT_ERROR(http_request(c, &req, &r, &err), ECONNREFUSED);
        ASSERT_EQ(retries_seen, 2);
        ASSERT_CONTAINS(err, "GET http://127.0.0.1:");
        ASSERT_CONTAINS(err, "api_key=***");
        ASSERT_NOT_CONTAINS(err, "SUPERSECRETKEY");
}

TEST(reset_and_timeout)
{
        setup();
        _cleanup_(http_client_freep) HttpClient *c = client("http", plain_port, (HttpClientOptions){});
        HttpResponse r = {};
        HttpRequest reset = { .path = "/reset" },
                    slow = { .path = "/slow/3000", .total_timeout = 200 * USEC_PER_MSEC };

        ASSERT_ERROR(http_request(c, &reset, &r, NULL), ECONNRESET);
        ASSERT_ERROR(http_request(c, &slow, &r, NULL), ETIMEDOUT);
}

static long server_count(HttpClient *c, const char *key)
{
        _cleanup_free_ char *path = strdup_printf("/count/%s", key);
        _cleanup_http_response_ HttpResponse r = {};

        ASSERT_OK(http_request(c, &(HttpRequest){ .path = path }, &r, NULL));
        ASSERT_EQ(r.status, 200);
        return strtol(r.body, NULL, 10);
}

/* A POST whose connection closes before any answer was taken by the
 * server (a registration the service committed): sent once, the caller
 * told, never resent by the transport behind its back. libcurl resends
 * a request once when a reused connection dies that way. */
TEST(a_post_is_never_resent_on_a_dead_reused_connection)
{
        setup();
        _cleanup_(http_client_freep) HttpClient *c = client("http", plain_port, (HttpClientOptions){});
        _cleanup_http_response_ HttpResponse warm = {};
        HttpResponse r = {};
        long before = server_count(c, "reset");

        /* a connection to reuse */
        ASSERT_OK(http_request(c, &(HttpRequest){ .path = "/echo" }, &warm, NULL));
        ASSERT_TRUE(http_request(c, &(HttpRequest){ .path = "/reset", .body = "{}", .body_len = 2 }, &r,
                                 NULL) < 0);
        ASSERT_EQ(server_count(c, "reset") - before, 1);
}

static int count_bytes(void *userdata, const char *data, size_t n)
{
        (void)data;
        *(size_t *)userdata += n;
        return 0;
}

TEST(size_cap_and_streaming)
{
        setup();
        _cleanup_(http_client_freep) HttpClient *c =
                client("http", plain_port, (HttpClientOptions){ .max_response = 1000 });
        _cleanup_http_response_ HttpResponse ok = {}, streamed = {};
        HttpResponse r = {};
        _cleanup_free_ char *err = NULL;
        size_t got = 0;
        HttpRequest small = { .path = "/big/1000" }, big = { .path = "/big/5000" },
                    stream = { .path = "/big/50000", .on_data = count_bytes, .userdata = &got };

        ASSERT_OK(http_request(c, &small, &ok, NULL));
        ASSERT_EQ(ok.body_len, 1000);
        ASSERT_ERROR(http_request(c, &big, &r, &err), E2BIG);
        ASSERT_CONTAINS(err, "larger than 1000 bytes");
        /* a streamed body is the caller's to bound */
        ASSERT_OK(http_request(c, &stream, &streamed, NULL));
        ASSERT_EQ(got, 50000);
        ASSERT_EQ(streamed.body_len, 0);
}

TEST(stream_success_only_buffers_error_bodies)
{
        setup();
        _cleanup_(http_client_freep) HttpClient *c = client("http", plain_port, (HttpClientOptions){});
        _cleanup_http_response_ HttpResponse ok = {}, failed = {};
        size_t got = 0;
        HttpRequest stream = { .path = "/big/3000",
                               .on_data = count_bytes,
                               .userdata = &got,
                               .stream_success_only = true },
                    err = { .path = "/status/404",
                            .on_data = count_bytes,
                            .userdata = &got,
                            .stream_success_only = true };

        ASSERT_OK(http_request(c, &stream, &ok, NULL));
        ASSERT_EQ(got, 3000);
        ASSERT_EQ(ok.body_len, 0);
        /* the error document is kept for the caller, not streamed */
        ASSERT_OK(http_request(c, &err, &failed, NULL));
        ASSERT_EQ(failed.status, 404);
        ASSERT_EQ(got, 3000);
        ASSERT_STREQ(failed.body, "status 404");
}

TEST(garbage_json_is_an_error)
{
        setup();
        _cleanup_(http_client_freep) HttpClient *c = client("http", plain_port, (HttpClientOptions){});
        _cleanup_http_response_ HttpResponse r = {};
        json_object *j = NULL;
        _cleanup_free_ char *err = NULL;

        ASSERT_ERROR(http_request_json(c, "GET", "/garbage", NULL, &r, &j, &err), EBADMSG);
        ASSERT_NULL(j);
        ASSERT_EQ(r.status, 200);
        ASSERT_CONTAINS(err, "not JSON");
}

TEST(redirects_are_followed)
{
        setup();
        _cleanup_(http_client_freep) HttpClient *c = client("http", plain_port, (HttpClientOptions){});
        _cleanup_http_response_ HttpResponse r = {};
        HttpRequest req = { .path = "/redirect" };

        ASSERT_OK(http_request(c, &req, &r, NULL));
        ASSERT_EQ(r.status, 200);
        ASSERT_CONTAINS(r.body, "\"path\": \"/echo\"");
}

TEST(tls_trust)
{
        setup();
        _cleanup_free_ char *ca = strdup_printf("%s/ca.pem", certs),
                            *other = strdup_printf("%s/other-ca.pem", certs);
        _cleanup_free_ char *ca_data = NULL, *err = NULL;
        HttpRequest req = { .path = "/echo" };
        HttpResponse r = {};

        /* the system store alone does not know our test CA */
        {
                _cleanup_(http_client_freep) HttpClient *c =
                        client("https", tls_port, (HttpClientOptions){});
                ASSERT_ERROR(http_request(c, &req, &r, &err), EPERM);
        }
        /* --cacert adds to the system store */
        {
                _cleanup_(http_client_freep) HttpClient *c =
                        client("https", tls_port, (HttpClientOptions){ .ca_file = ca });
                ASSERT_OK(http_request(c, &req, &r, NULL));
                ASSERT_EQ(r.status, 200);
                http_response_done(&r);
        }
        /* an unrelated CA does not help */
        {
                _cleanup_(http_client_freep) HttpClient *c =
                        client("https", tls_port, (HttpClientOptions){ .ca_file = other });
                ASSERT_ERROR(http_request(c, &req, &r, NULL), EPERM);
        }
        /* --insecure skips verification */
        {
                _cleanup_(http_client_freep) HttpClient *c =
                        client("https", tls_port, (HttpClientOptions){ .insecure = true });
                ASSERT_OK(http_request(c, &req, &r, NULL));
                http_response_done(&r);
        }
        /* kubeconfig-style: CA data, trusted alone */
        ASSERT_OK(read_full_file(ca, 1 << 20, &ca_data, NULL));
        {
                _cleanup_(http_client_freep) HttpClient *c =
                        client("https", tls_port,
                               (HttpClientOptions){ .ca_pem = ca_data, .ca_replace_system = true });
                ASSERT_OK(http_request(c, &req, &r, NULL));
                http_response_done(&r);
        }
}

TEST(bad_ca_file_fails_at_creation)
{
        _cleanup_free_ char *path = strdup_printf("%s/not-a-ca.pem", test_tmpdir()), *err = NULL;
        HttpClientOptions o = { .base_url = "https://127.0.0.1:1", .ca_file = path };
        HttpClient *c = NULL;

        ASSERT_OK(write_file_atomic(path, "hello\n", 6, 0644));
        ASSERT_ERROR(http_client_new(&o, &c, &err), EINVAL);
        ASSERT_CONTAINS(err, "holds no PEM certificate");
        free(err);
        err = NULL;
        o.ca_file = "/nonexistent/ca.pem";
        ASSERT_ERROR(http_client_new(&o, &c, &err), ENOENT);
        ASSERT_CONTAINS(err, "cannot read CA file '/nonexistent/ca.pem'");
}

TEST(client_certificates)
{
        setup();
        _cleanup_free_ char *ca = strdup_printf("%s/ca.pem", certs),
                            *cp = strdup_printf("%s/client.pem", certs),
                            *kp = strdup_printf("%s/client-key.pem", certs), *cert = NULL, *key = NULL;
        HttpRequest req = { .path = "/echo" };
        HttpResponse r = {};

        ASSERT_OK(read_full_file(cp, 1 << 20, &cert, NULL));
        ASSERT_OK(read_full_file(kp, 1 << 20, &key, NULL));
        {
                _cleanup_(http_client_freep) HttpClient *c =
                        client("https", mtls_port, (HttpClientOptions){ .ca_file = ca });
                ASSERT_TRUE(http_request(c, &req, &r, NULL) < 0);
        }
        {
                _cleanup_(http_client_freep) HttpClient *c =
                        client("https", mtls_port,
                               (HttpClientOptions){
                                       .ca_file = ca, .client_cert_pem = cert, .client_key_pem = key });
                ASSERT_OK(http_request(c, &req, &r, NULL));
                ASSERT_EQ(r.status, 200);
                http_response_done(&r);
        }
}

TEST(proxy_from_environment)
{
        setup();
        _cleanup_free_ char *proxy = strdup_printf("127.0.0.1:%u", plain_port);
        _cleanup_(http_client_freep) HttpClient *c = client("http", plain_port, (HttpClientOptions){});
        _cleanup_(json_object_putp) json_object *j = NULL, *direct = NULL;
        _cleanup_http_response_ HttpResponse r = {}, d = {};

        /* upper-case HTTP_PROXY is honoured (Go does; curl alone would not) */
        setenv("HTTP_PROXY", proxy, 1);
        ASSERT_OK(http_request_json(c, "GET", "http://assisted.example.invalid:8090/api/x", NULL, &r, &j,
                                    NULL));
        ASSERT_TRUE(json_object_get_boolean(json_get(j, "proxied")));
        ASSERT_STREQ(json_get_string(j, "url"), "http://assisted.example.invalid:8090/api/x");
        /* loopback is never proxied */
        ASSERT_OK(http_request_json(c, "GET", "/echo", NULL, &d, &direct, NULL));
        ASSERT_NULL(json_get(direct, "proxied"));
        unsetenv("HTTP_PROXY");
}

TEST(direct_client_never_uses_a_proxy)
{
        setup();
        _cleanup_free_ char *proxy = strdup_printf("127.0.0.1:%u", plain_port);
        _cleanup_(http_client_freep) HttpClient *c =
                client("http", plain_port,
                       (HttpClientOptions){ .direct = true, .total_timeout = 5 * USEC_PER_SEC });
        _cleanup_(json_object_putp) json_object *j = NULL;
        _cleanup_http_response_ HttpResponse r = {};
        _cleanup_free_ char *err = NULL;
        int ret;

        /* the proxy would answer for this name (proxy_from_environment);
         * a direct client resolves it itself, and .invalid resolves to
         * nothing */
        setenv("HTTP_PROXY", proxy, 1);
        setenv("HTTPS_PROXY", proxy, 1);
        ret = http_request_json(c, "GET", "http://assisted.example.invalid:8090/api/x", NULL, &r, &j, &err);
        unsetenv("HTTP_PROXY");
        unsetenv("HTTPS_PROXY");
        ASSERT_TRUE(ret < 0);
        ASSERT_EQ(r.status, 0);
        ASSERT_NULL(j);
}

TEST(status_texts_are_go_s)
{
        ASSERT_STREQ(http_status_text(200), "OK");
        ASSERT_STREQ(http_status_text(404), "Not Found");
        ASSERT_STREQ(http_status_text(413), "Request Entity Too Large");
        ASSERT_STREQ(http_status_text(503), "Service Unavailable");
        ASSERT_STREQ(http_status_text(299), "");
        ASSERT_STREQ(http_status_text(0), "");
}

TEST(proxy_selection_rules)
{
        static const struct {
                const char *http, *https, *no_proxy, *url, *want;
        } cases[] = {
                { "proxy:3128", NULL, NULL, "http://svc.example.com/x", "http://proxy:3128" },
                { "http://p:1", NULL, NULL, "https://svc.example.com/x", NULL },
                { NULL, "http://sp:2", NULL, "https://svc.example.com/x", "http://sp:2" },
                { "http://p:1", NULL, "example.com", "http://svc.example.com/", NULL },
                { "http://p:1", NULL, ".example.com", "http://example.com/", "http://p:1" },
                { "http://p:1", NULL, ".example.com", "http://a.example.com/", NULL },
                { "http://p:1", NULL, "*", "http://a.b/", NULL },
                { "http://p:1", NULL, "10.0.0.0/8", "http://10.1.2.3:6000/", NULL },
                { "http://p:1", NULL, "10.0.0.0/8", "http://11.1.2.3/", "http://p:1" },
                { "http://p:1", NULL, "svc:8080", "http://svc:8080/", NULL },
                { "http://p:1", NULL, "svc:8080", "http://svc:80/", "http://p:1" },
                { "http://p:1", NULL, "2001:db8::/32", "http://[2001:db8::5]:80/", NULL },
                { "http://p:1", NULL, NULL, "http://localhost:6000/", NULL },
                { "http://p:1", NULL, NULL, "http://[::1]:6000/", NULL },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *got = NULL;
                unsetenv("HTTP_PROXY");
                unsetenv("http_proxy");
                unsetenv("HTTPS_PROXY");
                unsetenv("NO_PROXY");
                if (cases[i].http)
                        setenv("http_proxy", cases[i].http, 1);
                if (cases[i].https)
                        setenv("HTTPS_PROXY", cases[i].https, 1);
                if (cases[i].no_proxy)
                        setenv("no_proxy", cases[i].no_proxy, 1);
                ASSERT_OK(http_proxy_for_url(cases[i].url, &got));
                if (cases[i].want)
                        ASSERT_STREQ(got, cases[i].want);
                else if (got)
                        test_fail(__FILE__, __LINE__, "case %zu: expected no proxy, got %s", i, got);
        }
        unsetenv("http_proxy");
        unsetenv("HTTPS_PROXY");
        unsetenv("no_proxy");
}

TEST(multipart_upload)
{
        setup();
        _cleanup_free_ char *path = strdup_printf("%s/logs.tar.gz", test_tmpdir());
        _cleanup_(http_client_freep) HttpClient *c = client("http", plain_port, (HttpClientOptions){});
        _cleanup_http_response_ HttpResponse r = {};
        _cleanup_(json_object_putp) json_object *j = NULL;
        HttpRequest req = { .method = "POST",
                            .path = "/echo",
                            .upload_field = "upfile",
                            .upload_file = path,
                            .upload_filename = "logs.tar.gz" };

        ASSERT_OK(write_file_atomic(path, "TARBALL-BYTES", 13, 0600));
        ASSERT_OK(http_request(c, &req, &r, NULL));
        ASSERT_OK(json_parse(r.body, r.body_len, 1 << 20, &j, NULL));
        ASSERT_CONTAINS(json_get_string(json_get(j, "headers"), "content-type"),
                        "multipart/form-data; boundary=");
        ASSERT_CONTAINS(json_get_string(j, "body"), "name=\"upfile\"; filename=\"logs.tar.gz\"");
        ASSERT_CONTAINS(json_get_string(j, "body"), "TARBALL-BYTES");
}

TEST(secret_headers_are_registered_for_redaction)
{
        _cleanup_(http_client_freep) HttpClient *c = client("http", 1, (HttpClientOptions){});
        _cleanup_free_ char *s = NULL;

        ASSERT_OK(http_client_set_header(c, "X-Secret-Key", "pull-secret-token-value"));
        s = redact_known_secrets("sent X-Secret-Key: pull-secret-token-value");
        ASSERT_STREQ(s, "sent X-Secret-Key: ***");
}

TEST(url_helpers)
{
        _cleanup_free_ char *a = http_url_join("http://s:6000/api/assisted-install/", "/v2/infra-envs");
        _cleanup_free_ char *b = http_url_join("http://s:6000/api/assisted-install", "v2/x");
        _cleanup_free_ char *c = http_url_join("http://s", "https://other/y");
        _cleanup_free_ char *e = http_escape("a b/c?d=é");

        ASSERT_STREQ(a, "http://s:6000/api/assisted-install/v2/infra-envs");
        ASSERT_STREQ(b, "http://s:6000/api/assisted-install/v2/x");
        ASSERT_STREQ(c, "https://other/y");
        ASSERT_STREQ(e, "a%20b%2Fc%3Fd%3D%C3%A9");
}

DEFINE_TEST_MAIN
