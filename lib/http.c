/* SPDX-License-Identifier: Apache-2.0 */
#include <arpa/inet.h>
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <curl/curl.h>
#include <json-c/json.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "buf.h"
#include "cleanup.h"
#include "fdutil.h"
#include "fileio.h"
#include "http.h"
#include "jsonutil.h"
#include "redact.h"
#include "strutil.h"
#include "version.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(CURL *, curl_easy_cleanup)
DEFINE_TRIVIAL_CLEANUP_FUNC(struct curl_slist *, curl_slist_free_all)
DEFINE_TRIVIAL_CLEANUP_FUNC(curl_mime *, curl_mime_free)

struct HttpClient {
        pthread_mutex_t lock;
        CURL *curl;
        char *base_url;
        char *user_agent;
        char *system_ca_file;
        char *extra_ca_pem; /* added to the store from the SSL_CTX callback */
        bool ca_replace_system;
        char *client_cert_pem;
        char *client_key_pem;
        bool insecure;
        bool direct;
        usec_t connect_timeout;
        usec_t total_timeout;
        size_t max_response;
        HttpRetryPolicy retry;
        HttpRetryCallback on_retry;
        void *retry_userdata;
        char **headers; /* "Name: value" */
};

static const char *const system_ca_bundles[] = {
        "/etc/pki/tls/certs/ca-bundle.crt", /* RHEL, RHCOS, Fedora */
        "/etc/ssl/certs/ca-certificates.crt", /* Debian, Ubuntu */
        "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem", /* RHEL, extracted */
        "/etc/ssl/ca-bundle.pem", /* SUSE */
        "/etc/ssl/cert.pem", /* Alpine */
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static bool curl_has_openssl;
static bool curl_has_libz;

static void curl_init_once(void)
{
        curl_version_info_data *v;

        curl_global_init(CURL_GLOBAL_DEFAULT);
        v = curl_version_info(CURLVERSION_NOW);
        curl_has_openssl = v && v->ssl_version && strstr(v->ssl_version, "OpenSSL");
        curl_has_libz = v && (v->features & CURL_VERSION_LIBZ);
}

static int set_error(char **reterr, const char *fmt, ...) _printf_(2, 3);
static int set_error(char **reterr, const char *fmt, ...)
{
        va_list ap;

        if (!reterr)
                return 0;
        free(*reterr);
        va_start(ap, fmt);
        if (vasprintf(reterr, fmt, ap) < 0)
                *reterr = NULL;
        va_end(ap);
        return 0;
}

/* Counts the certificates in PEM data; 0 means "not a CA bundle". */
static int pem_count_certs(const char *pem)
{
        BIO *bio = BIO_new_mem_buf(pem, -1);
        X509 *x;
        int n = 0;

        if (!bio)
                return -ENOMEM;
        while ((x = PEM_read_bio_X509(bio, NULL, NULL, NULL))) {
                X509_free(x);
                n++;
        }
        ERR_clear_error();
        BIO_free(bio);
        return n;
}

static CURLcode ssl_ctx_add_cas(CURL *curl, void *ssl_ctx, void *userdata)
{
        HttpClient *c = userdata;
        X509_STORE *store = SSL_CTX_get_cert_store(ssl_ctx);
        BIO *bio;
        X509 *x;

        (void)curl;
        if (!c->extra_ca_pem)
                return CURLE_OK;
        bio = BIO_new_mem_buf(c->extra_ca_pem, -1);
        if (!bio)
                return CURLE_OUT_OF_MEMORY;
        while ((x = PEM_read_bio_X509(bio, NULL, NULL, NULL))) {
                /* a duplicate of a system CA is fine */
                (void)X509_STORE_add_cert(store, x);
                X509_free(x);
        }
        ERR_clear_error();
        BIO_free(bio);
        return CURLE_OK;
}

HttpClient *http_client_free(HttpClient *c)
{
        if (!c)
                return NULL;
        if (c->curl)
                curl_easy_cleanup(c->curl);
        pthread_mutex_destroy(&c->lock);
        free(c->base_url);
        free(c->user_agent);
        free(c->system_ca_file);
        free(c->extra_ca_pem);
        erase_and_free(c->client_cert_pem);
        erase_and_free(c->client_key_pem);
        STRV_FOREACH (h, c->headers)
                explicit_bzero(*h, strlen(*h));
        strv_free(c->headers);
        free(c);
        return NULL;
}

int http_client_new(const HttpClientOptions *o, HttpClient **ret, char **reterr)
{
        _cleanup_(http_client_freep) HttpClient *c = NULL;
        _cleanup_buf_ Buf pem = BUF_INIT(BUF_MAX_SMALL_FILE * 4);
        const char *env_bundle;
        int r;

        pthread_once(&curl_once, curl_init_once);

        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        pthread_mutex_init(&c->lock, NULL);
        c->curl = curl_easy_init();
        if (!c->curl)
                return -ENOMEM;

        c->base_url = strdup(strempty(o->base_url));
        c->user_agent = o->user_agent ? strdup(o->user_agent) : strdup_printf("cradle/%s", cradle_version());
        if (!c->base_url || !c->user_agent)
                return -ENOMEM;
        c->insecure = o->insecure;
        c->direct = o->direct;
        c->connect_timeout = o->connect_timeout ? o->connect_timeout : 30 * USEC_PER_SEC;
        c->total_timeout = o->total_timeout;
        c->max_response = o->max_response ? o->max_response : BUF_MAX_HTTP_BODY;
        c->retry = o->retry;
        c->on_retry = o->on_retry;
        c->retry_userdata = o->retry_userdata;
        c->ca_replace_system = o->ca_replace_system;

        env_bundle = getenv("SSL_CERT_FILE");
        if (env_bundle && access(env_bundle, R_OK) == 0)
                c->system_ca_file = strdup(env_bundle);
        for (size_t i = 0; !c->system_ca_file && i < ELEMENTSOF(system_ca_bundles); i++)
                if (access(system_ca_bundles[i], R_OK) == 0)
                        c->system_ca_file = strdup(system_ca_bundles[i]);

        if (!isempty(o->ca_file)) {
                _cleanup_free_ char *data = NULL;
                r = read_full_file(o->ca_file, BUF_MAX_SMALL_FILE * 2, &data, NULL);
                if (r < 0) {
                        set_error(reterr, "cannot read CA file '%s': %s", o->ca_file, strerror(-r));
                        return r;
                }
                if (pem_count_certs(data) <= 0) {
                        set_error(reterr, "CA file '%s' holds no PEM certificate", o->ca_file);
                        return -EINVAL;
                }
                if (buf_append_str(&pem, data) < 0 || buf_append_char(&pem, '\n') < 0)
                        return -ENOMEM;
        }
        if (!isempty(o->ca_pem)) {
                if (pem_count_certs(o->ca_pem) <= 0) {
                        set_error(reterr, "CA data holds no PEM certificate");
                        return -EINVAL;
                }
                if (buf_append_str(&pem, o->ca_pem) < 0)
                        return -ENOMEM;
        }
        if (pem.len > 0 && buf_take(&pem, &c->extra_ca_pem, NULL) < 0)
                return -ENOMEM;
        if (c->extra_ca_pem && !curl_has_openssl && !c->ca_replace_system) {
                set_error(reterr, "libcurl is not built with OpenSSL: cannot add a CA to the system trust");
                return -EOPNOTSUPP;
        }

        if (o->client_cert_pem || o->client_key_pem) {
                if (!o->client_cert_pem || !o->client_key_pem) {
                        set_error(reterr, "a client certificate needs both the certificate and its key");
                        return -EINVAL;
                }
                c->client_cert_pem = strdup(o->client_cert_pem);
                c->client_key_pem = strdup(o->client_key_pem);
                if (!c->client_cert_pem || !c->client_key_pem)
                        return -ENOMEM;
        }

        *ret = TAKE_PTR(c);
        return 0;
}

const char *http_client_base_url(const HttpClient *c)
{
        return c->base_url;
}

int http_client_set_header(HttpClient *c, const char *name, const char *value)
{
        size_t nl = strlen(name);
        int r = 0;

        if (value && redact_header_is_sensitive(name)) {
                r = redact_register_secret(value);
                if (r < 0)
                        return r;
        }

        pthread_mutex_lock(&c->lock);
        for (size_t i = 0; c->headers && c->headers[i]; i++)
                if (strncasecmp(c->headers[i], name, nl) == 0 && c->headers[i][nl] == ':') {
                        erase_and_free(c->headers[i]);
                        memmove(c->headers + i, c->headers + i + 1,
                                (strv_length(c->headers + i + 1) + 1) * sizeof(char *));
                        break;
                }
        if (value)
                r = strv_extendf(&c->headers, "%s: %s", name, value);
        pthread_mutex_unlock(&c->lock);
        return r;
}

const char *http_status_text(long status)
{
        /* net/http's StatusText (Go 1.19 and later) */
        static const struct {
                long status;
                const char *text;
        } texts[] = {
                { 100, "Continue" },
                { 101, "Switching Protocols" },
                { 102, "Processing" },
                { 103, "Early Hints" },
                { 200, "OK" },
                { 201, "Created" },
                { 202, "Accepted" },
                { 203, "Non-Authoritative Information" },
                { 204, "No Content" },
                { 205, "Reset Content" },
                { 206, "Partial Content" },
                { 207, "Multi-Status" },
                { 208, "Already Reported" },
                { 226, "IM Used" },
                { 300, "Multiple Choices" },
                { 301, "Moved Permanently" },
                { 302, "Found" },
                { 303, "See Other" },
                { 304, "Not Modified" },
                { 305, "Use Proxy" },
                { 307, "Temporary Redirect" },
                { 308, "Permanent Redirect" },
                { 400, "Bad Request" },
                { 401, "Unauthorized" },
                { 402, "Payment Required" },
                { 403, "Forbidden" },
                { 404, "Not Found" },
                { 405, "Method Not Allowed" },
                { 406, "Not Acceptable" },
                { 407, "Proxy Authentication Required" },
                { 408, "Request Timeout" },
                { 409, "Conflict" },
                { 410, "Gone" },
                { 411, "Length Required" },
                { 412, "Precondition Failed" },
                { 413, "Request Entity Too Large" },
                { 414, "Request URI Too Long" },
                { 415, "Unsupported Media Type" },
                { 416, "Requested Range Not Satisfiable" },
                { 417, "Expectation Failed" },
                { 418, "I'm a teapot" },
                { 421, "Misdirected Request" },
                { 422, "Unprocessable Entity" },
                { 423, "Locked" },
                { 424, "Failed Dependency" },
                { 425, "Too Early" },
                { 426, "Upgrade Required" },
                { 428, "Precondition Required" },
                { 429, "Too Many Requests" },
                { 431, "Request Header Fields Too Large" },
                { 451, "Unavailable For Legal Reasons" },
                { 500, "Internal Server Error" },
                { 501, "Not Implemented" },
                { 502, "Bad Gateway" },
                { 503, "Service Unavailable" },
                { 504, "Gateway Timeout" },
                { 505, "HTTP Version Not Supported" },
                { 506, "Variant Also Negotiates" },
                { 507, "Insufficient Storage" },
                { 508, "Loop Detected" },
                { 510, "Not Extended" },
                { 511, "Network Authentication Required" },
        };

        for (size_t i = 0; i < ELEMENTSOF(texts); i++)
                if (texts[i].status == status)
                        return texts[i].text;
        return "";
}

char *http_url_join(const char *base, const char *path)
{
        size_t bl;

        if (!path || !*path)
                return strdup(base);
        if (strstr(path, "://") || isempty(base))
                return strdup(path);
        bl = strlen(base);
        while (bl > 0 && base[bl - 1] == '/')
                bl--;
        while (*path == '/')
                path++;
        return strdup_printf("%.*s/%s", (int)bl, base, path);
}

char *http_escape(const char *s)
{
        _cleanup_buf_ Buf b = BUF_INIT(BUF_MAX_SMALL_FILE);
        char *ret;

        for (const char *p = s; *p; p++) {
                unsigned char ch = (unsigned char)*p;
                int r = isalnum(ch) || strchr("-._~", ch) ? buf_append_char(&b, (char)ch)
                                                          : buf_appendf(&b, "%%%02X", ch);
                if (r < 0)
                        return NULL;
        }
        if (buf_take(&b, &ret, NULL) < 0)
                return NULL;
        return ret;
}

static const char *getenv_any(const char *upper, const char *lower)
{
        const char *v = getenv(upper);

        if (isempty(v))
                v = getenv(lower);
        return isempty(v) ? NULL : v;
}

/* Splits "scheme://[user@]host[:port]/..." into host (brackets removed) and
 * port (default by scheme). */
static int url_host_port(const char *url, char **ret_host, unsigned *ret_port, bool *ret_https)
{
        const char *p = strstr(url, "://"), *h, *end, *at;
        bool https;
        _cleanup_free_ char *hostport = NULL;
        char *colon;
        unsigned port;

        if (!p)
                return -EINVAL;
        https = strncasecmp(url, "https", 5) == 0 && p == url + 5;
        h = p + 3;
        end = h + strcspn(h, "/?#");
        at = memchr(h, '@', (size_t)(end - h));
        if (at)
                h = at + 1;
        hostport = strndup(h, (size_t)(end - h));
        if (!hostport)
                return -ENOMEM;

        port = https ? 443 : 80;
        if (hostport[0] == '[') {
                char *close = strchr(hostport, ']');
                if (!close)
                        return -EINVAL;
                *close = 0;
                if (close[1] == ':' && safe_atou(close + 2, &port) < 0)
                        return -EINVAL;
                memmove(hostport, hostport + 1, strlen(hostport));
        } else if ((colon = strrchr(hostport, ':'))) {
                *colon = 0;
                if (safe_atou(colon + 1, &port) < 0)
                        return -EINVAL;
        }
        for (char *c = hostport; *c; c++)
                *c = (char)tolower((unsigned char)*c);
        *ret_host = TAKE_PTR(hostport);
        *ret_port = port;
        *ret_https = https;
        return 0;
}

static bool ip_in_cidr(const char *ip, const char *cidr)
{
        unsigned char a[16], net[16];
        _cleanup_free_ char *base = strdup(cidr);
        char *slash;
        unsigned bits;
        int fam;
        size_t len;

        if (!base || !(slash = strchr(base, '/')))
                return false;
        *slash = 0;
        if (safe_atou(slash + 1, &bits) < 0)
                return false;
        fam = strchr(base, ':') ? AF_INET6 : AF_INET;
        len = fam == AF_INET ? 4 : 16;
        if (bits > len * 8 || inet_pton(fam, ip, a) != 1 || inet_pton(fam, base, net) != 1)
                return false;
        for (unsigned i = 0; i < bits; i++) {
                unsigned char m = (unsigned char)(0x80 >> (i % 8));
                if ((a[i / 8] & m) != (net[i / 8] & m))
                        return false;
        }
        return true;
}

static bool host_is_loopback(const char *host)
{
        unsigned char a[16];

        if (streq(host, "localhost") || endswith(host, ".localhost"))
                return true;
        if (inet_pton(AF_INET, host, a) == 1)
                return a[0] == 127;
        if (inet_pton(AF_INET6, host, a) == 1)
                return ip_in_cidr(host, "::1/128");
        return false;
}

/* Go's httpproxy matching of NO_PROXY entries. */
static bool no_proxy_matches(const char *no_proxy, const char *host, unsigned port)
{
        _cleanup_strv_free_ char **entries = NULL;
        unsigned char tmp[16];
        bool host_is_ip = inet_pton(AF_INET, host, tmp) == 1 || inet_pton(AF_INET6, host, tmp) == 1;

        if (strv_split(no_proxy, ", ", &entries) < 0)
                return false;
        STRV_FOREACH (e, entries) {
                _cleanup_free_ char *entry = strdup_lower(*e);
                char *colon;
                unsigned eport = 0;

                if (!entry)
                        return false;
                if (streq(entry, "*"))
                        return true;
                if (strchr(entry, '/')) {
                        if (host_is_ip && ip_in_cidr(host, entry))
                                return true;
                        continue;
                }
                if (entry[0] == '[') {
                        char *close = strchr(entry, ']');
                        if (close) {
                                if (close[1] == ':')
                                        (void)safe_atou(close + 2, &eport);
                                *close = 0;
                                memmove(entry, entry + 1, strlen(entry));
                        }
                } else if ((colon = strrchr(entry, ':')) && strchr(entry, ':') == colon) {
                        (void)safe_atou(colon + 1, &eport);
                        *colon = 0;
                }
                if (eport != 0 && eport != port)
                        continue;
                if (inet_pton(AF_INET, entry, tmp) == 1 || inet_pton(AF_INET6, entry, tmp) == 1) {
                        if (host_is_ip && streq(entry, host))
                                return true;
                        continue;
                }
                if (startswith(entry, "*."))
                        memmove(entry, entry + 1, strlen(entry));
                if (entry[0] == '.') {
                        if (endswith(host, entry))
                                return true;
                } else if (streq(host, entry) ||
                           (endswith(host, entry) && host[strlen(host) - strlen(entry) - 1] == '.'))
                        return true;
        }
        return false;
}

int http_proxy_for_url(const char *url, char **ret)
{
        _cleanup_free_ char *host = NULL;
        const char *proxy, *no_proxy;
        unsigned port;
        bool https;
        int r;

        *ret = NULL;
        r = url_host_port(url, &host, &port, &https);
        if (r < 0)
                return r;
        if (host_is_loopback(host))
                return 0;
        proxy = https ? getenv_any("HTTPS_PROXY", "https_proxy") : getenv_any("HTTP_PROXY", "http_proxy");
        if (!proxy)
                return 0;
        no_proxy = getenv_any("NO_PROXY", "no_proxy");
        if (no_proxy && no_proxy_matches(no_proxy, host, port))
                return 0;
        /* Go accepts a bare "host:port" and means http:// */
        *ret = strstr(proxy, "://") ? strdup(proxy) : strdup_printf("http://%s", proxy);
        return *ret ? 0 : -ENOMEM;
}

typedef struct Transfer {
        HttpClient *client;
        const HttpRequest *req;
        Buf body;
        char **headers;
        bool too_big;
        bool aborted;
        bool streamed;
        int stream_error;
        long status; /* of the current response, from its status line */
} Transfer;

static size_t on_write(char *data, size_t size, size_t nmemb, void *userdata)
{
        Transfer *t = userdata;
        size_t n = size * nmemb;

        if (stop_requested()) {
                t->aborted = true;
                return 0;
        }
        if (t->req->on_data && (!t->req->stream_success_only || (t->status >= 200 && t->status <= 299))) {
                int r = t->req->on_data(t->req->userdata, data, n);
                t->streamed = true;
                if (r < 0) {
                        t->stream_error = r;
                        t->aborted = true;
                        return 0;
                }
                return n;
        }
        if (buf_append(&t->body, data, n) < 0) {
                t->too_big = true;
                return 0;
        }
        return n;
}

static int on_progress(void *userdata, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow)
{
        Transfer *t = userdata;

        (void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
        if (stop_requested()) {
                t->aborted = true;
                return 1;
        }
        return 0;
}

static size_t on_header(char *data, size_t size, size_t nmemb, void *userdata)
{
        Transfer *t = userdata;
        size_t n = size * nmemb, len = n;
        _cleanup_free_ char *line = NULL;
        char *colon;

        while (len > 0 && (data[len - 1] == '\n' || data[len - 1] == '\r'))
                len--;
        if (len >= 5 && strneq(data, "HTTP/", 5)) {
                /* a new response (redirect, 100-continue): forget earlier headers */
                const char *sp = memchr(data, ' ', len);

                t->status = 0;
                if (sp && len - (size_t)(sp - data) >= 4)
                        t->status = (sp[1] - '0') * 100 + (sp[2] - '0') * 10 + (sp[3] - '0');
                strv_free(t->headers);
                t->headers = NULL;
                return n;
        }
        line = strndup(data, len);
        if (!line)
                return 0;
        colon = strchr(line, ':');
        if (!colon)
                return n;
        for (char *c = line; c < colon; c++)
                *c = (char)tolower((unsigned char)*c);
        *colon = 0;
        if (strv_extendf(&t->headers, "%s: %s", line, strstrip(colon + 1)) < 0)
                return 0;
        return n;
}

void http_response_done(HttpResponse *r)
{
        free(r->body);
        strv_free(r->headers);
        *r = (HttpResponse){};
}

const char *http_response_header(const HttpResponse *r, const char *name)
{
        size_t nl = strlen(name);

        STRV_FOREACH (h, r->headers)
                if (strncasecmp(*h, name, nl) == 0 && (*h)[nl] == ':')
                        return *h + nl + 2;
        return NULL;
}

static int curl_code_to_errno(CURLcode code)
{
        switch (code) {
        case CURLE_COULDNT_CONNECT:
                return -ECONNREFUSED;
        case CURLE_COULDNT_RESOLVE_HOST:
        case CURLE_COULDNT_RESOLVE_PROXY:
                return -EHOSTUNREACH;
        case CURLE_OPERATION_TIMEDOUT:
                return -ETIMEDOUT;
        case CURLE_GOT_NOTHING:
        case CURLE_RECV_ERROR:
        case CURLE_SEND_ERROR:
        case CURLE_PARTIAL_FILE:
                return -ECONNRESET;
        case CURLE_PEER_FAILED_VERIFICATION:
        case CURLE_SSL_CACERT_BADFILE:
        case CURLE_SSL_CERTPROBLEM:
                return -EPERM;
        case CURLE_UNSUPPORTED_PROTOCOL:
        case CURLE_URL_MALFORMAT:
                return -EINVAL;
        case CURLE_SSL_CONNECT_ERROR:
        case CURLE_WEIRD_SERVER_REPLY:
        case CURLE_HTTP2:
                return -EPROTO;
        case CURLE_FILESIZE_EXCEEDED:
                return -E2BIG;
        case CURLE_OUT_OF_MEMORY:
                return -ENOMEM;
        case CURLE_READ_ERROR:
        case CURLE_FILE_COULDNT_READ_FILE:
                return -EIO;
        default:
                return -EIO;
        }
}

static bool transport_error_retryable(int r)
{
        /* no response at all, as Go's "temporary" network errors; a rejected
         * certificate or an oversized body will not get better by retrying */
        return r == -ECONNREFUSED || r == -EHOSTUNREACH || r == -ETIMEDOUT || r == -ECONNRESET ||
               r == -EPROTO;
}

static bool status_retryable(const HttpRetryPolicy *p, long status)
{
        if ((p->on & HTTP_RETRY_5XX) && status >= 500 && status <= 599)
                return true;
        if ((p->on & HTTP_RETRY_503_504) && (status == 503 || status == 504))
                return true;
        if ((p->on & HTTP_RETRY_429) && status == 429)
                return true;
        return false;
}

/* One attempt; returns 0 with the status in *ret_status, or -errno. */
/* libcurl opens its sockets without SOCK_CLOEXEC: flag them (fdutil.h) */
static int on_socket(void *userdata, curl_socket_t fd, curlsocktype purpose)
{
        (void)userdata;
        (void)purpose;
        return fd_cloexec(fd) < 0 ? CURL_SOCKOPT_ERROR : CURL_SOCKOPT_OK;
}

static int perform_once(HttpClient *c, const HttpRequest *req, const char *url, const char *method,
                        Transfer *t, long *ret_status, char *errbuf)
{
        _cleanup_(curl_slist_free_allp) struct curl_slist *hdrs = NULL;
        _cleanup_(curl_mime_freep) curl_mime *mime = NULL;
        _cleanup_free_ char *proxy = NULL;
        CURL *h = c->curl;
        usec_t total = req->total_timeout ? req->total_timeout : c->total_timeout;
        CURLcode code;
        int r;

        curl_easy_reset(h);
        errbuf[0] = 0;
        curl_easy_setopt(h, CURLOPT_URL, url);
        curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
        curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(h, CURLOPT_USERAGENT, c->user_agent);
        curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)(c->connect_timeout / USEC_PER_MSEC));
        if (total > 0)
                curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)(total / USEC_PER_MSEC));
        curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
        curl_easy_setopt(h, CURLOPT_MAXREDIRS, 10L);
        curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
        curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
        /* as Go's transport: ask for gzip only when we can decode it */
        if (curl_has_libz)
                curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "gzip");
        curl_easy_setopt(h, CURLOPT_SOCKOPTFUNCTION, on_socket);
        curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
        curl_easy_setopt(h, CURLOPT_TCP_KEEPIDLE, 30L);
        curl_easy_setopt(h, CURLOPT_TCP_KEEPINTVL, 30L);
        /* libcurl sends a request again, once and silently, when a reused
         * connection closes before any byte of the answer: a POST the
         * server had taken (a registration) would be made twice. Go's
         * transport never resends a written non-idempotent request, and a
         * fresh connection is one libcurl never resends on. */
        if (streq(method, "POST"))
                curl_easy_setopt(h, CURLOPT_FRESH_CONNECT, 1L);
        curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_write);
        curl_easy_setopt(h, CURLOPT_WRITEDATA, t);
        curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
        curl_easy_setopt(h, CURLOPT_HEADERDATA, t);
        /* called about once a second, also while connecting: a stop request
         * ends the transfer instead of waiting for a slow peer */
        curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
        curl_easy_setopt(h, CURLOPT_XFERINFODATA, t);
        curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
        if (!req->on_data)
                curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)c->max_response);

        /* TLS */
        if (c->insecure) {
                curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
                curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
        } else if (c->ca_replace_system && c->extra_ca_pem) {
                struct curl_blob blob = { .data = c->extra_ca_pem,
                                          .len = strlen(c->extra_ca_pem),
                                          .flags = CURL_BLOB_NOCOPY };
                curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &blob);
                curl_easy_setopt(h, CURLOPT_CAPATH, NULL);
        } else {
                if (c->system_ca_file)
                        curl_easy_setopt(h, CURLOPT_CAINFO, c->system_ca_file);
                if (c->extra_ca_pem) {
                        curl_easy_setopt(h, CURLOPT_SSL_CTX_FUNCTION, ssl_ctx_add_cas);
                        curl_easy_setopt(h, CURLOPT_SSL_CTX_DATA, c);
                }
        }
        if (c->client_cert_pem) {
                struct curl_blob cert = { .data = c->client_cert_pem,
                                          .len = strlen(c->client_cert_pem),
                                          .flags = CURL_BLOB_NOCOPY };
                struct curl_blob key = { .data = c->client_key_pem,
                                         .len = strlen(c->client_key_pem),
                                         .flags = CURL_BLOB_NOCOPY };
                curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
                curl_easy_setopt(h, CURLOPT_SSLCERT_BLOB, &cert);
                curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
                curl_easy_setopt(h, CURLOPT_SSLKEY_BLOB, &key);
        }

        /* our proxy decision, not curl's own environment reading ("": none) */
        if (!c->direct) {
                r = http_proxy_for_url(url, &proxy);
                if (r < 0)
                        return r;
        }
        curl_easy_setopt(h, CURLOPT_PROXY, proxy ? proxy : "");

        /* headers: client defaults, then the request's */
        STRV_FOREACH (hd, c->headers) {
                struct curl_slist *n = curl_slist_append(hdrs, *hd);
                if (!n)
                        return -ENOMEM;
                hdrs = n;
        }
        STRV_FOREACH (hd, req->headers) {
                struct curl_slist *n = curl_slist_append(hdrs, *hd);
                if (!n)
                        return -ENOMEM;
                hdrs = n;
        }
        if (req->body) {
                _cleanup_free_ char *ct = strdup_printf(
                        "Content-Type: %s", req->content_type ? req->content_type : "application/json");
                struct curl_slist *n = ct ? curl_slist_append(hdrs, ct) : NULL;
                if (!n)
                        return -ENOMEM;
                hdrs = n;
        }
        /* curl adds "Expect: 100-continue" to large bodies; Go does not wait */
        {
                struct curl_slist *n = curl_slist_append(hdrs, "Expect:");
                if (!n)
                        return -ENOMEM;
                hdrs = n;
        }
        curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);

        if (req->upload_file) {
                curl_mimepart *part;
                mime = curl_mime_init(h);
                if (!mime || !(part = curl_mime_addpart(mime)))
                        return -ENOMEM;
                curl_mime_name(part, req->upload_field ? req->upload_field : "upfile");
                if (curl_mime_filedata(part, req->upload_file) != CURLE_OK)
                        return -ENOENT;
                if (req->upload_filename)
                        curl_mime_filename(part, req->upload_filename);
                curl_mime_type(part, "application/octet-stream");
                curl_easy_setopt(h, CURLOPT_MIMEPOST, mime);
        } else if (req->body) {
                curl_easy_setopt(h, CURLOPT_POSTFIELDS, req->body);
                curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body_len);
        }
        if (!streq(method, "GET") || req->body || req->upload_file)
                curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
        if (streq(method, "HEAD"))
                curl_easy_setopt(h, CURLOPT_NOBODY, 1L);

        code = curl_easy_perform(h);
        /* keep the handle from pointing at our stack after return */
        curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
        curl_easy_setopt(h, CURLOPT_ERRORBUFFER, NULL);
        if (t->too_big)
                return -E2BIG;
        if (t->aborted)
                return t->stream_error < 0 ? t->stream_error : -ECANCELED;
        if (code != CURLE_OK) {
                if (!errbuf[0])
                        snprintf(errbuf, CURL_ERROR_SIZE, "%s", curl_easy_strerror(code));
                return curl_code_to_errno(code);
        }
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, ret_status);
        return 0;
}

int http_request(HttpClient *c, const HttpRequest *req, HttpResponse *ret, char **reterr)
{
        _cleanup_free_ char *url = NULL, *redacted = NULL;
        const HttpRetryPolicy *policy = req->retry ? req->retry : &c->retry;
        const char *method = req->method ? req->method : (req->body || req->upload_file) ? "POST" : "GET";
        unsigned attempts = 1 + policy->max_retries;
        Transfer t = { .client = c, .req = req };
        char errbuf[CURL_ERROR_SIZE];
        long status = 0;
        int r = 0;

        url = http_url_join(c->base_url, req->path);
        if (!url)
                return -ENOMEM;
        redacted = redact_url(url);
        if (!redacted)
                return -ENOMEM;

        pthread_mutex_lock(&c->lock);
        for (unsigned attempt = 0; attempt < attempts; attempt++) {
                _cleanup_free_ char *reason = NULL;
                bool retry;
                usec_t delay;

                buf_init(&t.body, c->max_response);
                strv_free(t.headers);
                t.headers = NULL;
                t.too_big = t.aborted = t.streamed = false;
                t.stream_error = 0;

                r = perform_once(c, req, url, method, &t, &status, errbuf);
                if (r == 0) {
                        retry = status_retryable(policy, status);
                        if (retry)
                                reason = strdup_printf("status %ld", status);
                } else {
                        retry = (policy->on & HTTP_RETRY_TRANSPORT) && transport_error_retryable(r);
                        if (retry)
                                reason = redact_known_secrets(errbuf);
                }
                if (!retry || t.streamed || attempt + 1 >= attempts) {
                        ret->attempts = attempt + 1;
                        break;
                }

                delay = backoff_full_jitter(policy->base_delay, policy->max_delay, attempt);
                if (c->on_retry)
                        c->on_retry(c->retry_userdata, method, redacted, attempt + 1, attempts, delay,
                                    strempty(reason));
                buf_release(&t.body);
                if (sleep_usec(delay) < 0) {
                        r = -ECANCELED;
                        snprintf(errbuf, sizeof(errbuf), "stop requested");
                        break;
                }
        }
        pthread_mutex_unlock(&c->lock);

        if (r < 0) {
                _cleanup_free_ char *msg = redact_known_secrets(errbuf);
                if (r == -E2BIG)
                        set_error(reterr, "%s %s: response larger than %zu bytes", method, redacted,
                                  c->max_response);
                else
                        set_error(reterr, "%s %s: %s", method, redacted, msg ? msg : "request failed");
                buf_release(&t.body);
                strv_free(t.headers);
                return r;
        }

        ret->status = status;
        ret->headers = TAKE_PTR(t.headers);
        r = buf_take(&t.body, &ret->body, &ret->body_len);
        if (r < 0) {
                http_response_done(ret);
                return r;
        }
        return 0;
}

int http_request_json(HttpClient *c, const char *method, const char *path, json_object *body,
                      HttpResponse *ret, json_object **ret_json, char **reterr)
{
        _cleanup_free_ char *text = NULL;
        HttpRequest req = { .method = method, .path = path };
        char *const accept[] = { (char *)"Accept: application/json", NULL };
        int r;

        if (body) {
                text = json_to_string(body, 0);
                if (!text)
                        return -ENOMEM;
                req.body = text;
                req.body_len = strlen(text);
        }
        req.headers = accept;

        r = http_request(c, &req, ret, reterr);
        if (r < 0)
                return r;
        if (ret_json) {
                *ret_json = NULL;
                if (ret->body_len > 0) {
                        _cleanup_free_ char *perr = NULL;
                        r = json_parse(ret->body, ret->body_len, c->max_response, ret_json, &perr);
                        if (r < 0) {
                                set_error(reterr, "%s %s: status %ld with a body that is not JSON: %s",
                                          method, path, ret->status, strna(perr));
                                return -EBADMSG;
                        }
                }
        }
        return 0;
}
