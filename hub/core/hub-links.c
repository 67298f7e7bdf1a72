/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "cleanup.h"
#include "http.h"
#include "hub-links.h"
#include "jsonutil.h"
#include "strutil.h"

#define API_PATH "/api/assisted-install/"

void hub_link_signer_done(HubLinkSigner *s)
{
        free(s->base);
        free(s->api_key);
        *s = (HubLinkSigner){};
}

/* the raw value of key in the query of url, or NULL (allocated) */
static int query_value(const char *url, const char *key, char **ret)
{
        const char *q = strchr(url, '?');
        size_t kl = strlen(key);

        *ret = NULL;
        for (const char *p = q ? q + 1 : NULL; p && *p;) {
                size_t n = strcspn(p, "&#");

                if (n > kl && strneq(p, key, kl) && p[kl] == '=') {
                        *ret = strndup(p + kl + 1, n - kl - 1);
                        return *ret ? 0 : -ENOMEM;
                }
                if (p[n] != '&')
                        break;
                p += n + 1;
        }
        return 0;
}

int hub_link_signer_parse(const char *url, HubLinkSigner *ret)
{
        _cleanup_(hub_link_signer_done) HubLinkSigner s = {};
        const char *api = url ? strstr(url, API_PATH) : NULL;
        int r;

        if (!api || api == url)
                return -EINVAL;
        s.base = strndup(url, (size_t)(api - url));
        if (!s.base)
                return -ENOMEM;
        r = query_value(api, "api_key", &s.api_key);
        if (r < 0)
                return r;
        if (s.api_key && isempty(s.api_key)) {
                free(s.api_key);
                s.api_key = NULL;
        }
        *ret = s;
        s = (HubLinkSigner){};
        return 0;
}

const char *hub_link_source_of_infraenv(json_object *infraenv)
{
        const char *u =
                json_get_string(json_get_path(infraenv, "status.bootArtifacts"), "discoveryIgnitionURL");

        return isempty(u) ? NULL : u;
}

/* <base>/api/assisted-install/v2/<path>, then the query: api_key first
 * (url.Values.Encode sorts the keys; every other key the hub adds sorts
 * after it), then the rest (already in order) */
static char *make_link(const HubLinkSigner *s, const char *path, const char *rest)
{
        bool key = s->api_key, more = !isempty(rest);

        return strdup_printf("%s" API_PATH "v2/%s%s%s%s%s%s", s->base, path, key || more ? "?" : "",
                             key ? "api_key=" : "", strempty(s->api_key), key && more ? "&" : "",
                             strempty(rest));
}

char *hub_link_events(const HubLinkSigner *s, const char *key, const char *id)
{
        _cleanup_free_ char *e = http_escape(strempty(id)), *rest = NULL;

        rest = e ? strdup_printf("%s=%s", key, e) : NULL;
        return rest ? make_link(s, "events", rest) : NULL;
}

char *hub_link_cluster_logs(const HubLinkSigner *s, const char *cluster_id)
{
        _cleanup_free_ char *e = http_escape(strempty(cluster_id)), *path = NULL;

        path = e ? strdup_printf("clusters/%s/logs", e) : NULL;
        return path ? make_link(s, path, NULL) : NULL;
}

char *hub_link_host_logs(const HubLinkSigner *s, const char *cluster_id, const char *host_id)
{
        _cleanup_free_ char *c = http_escape(strempty(cluster_id)), *h = http_escape(strempty(host_id)),
                            *path = NULL, *rest = NULL;

        if (!c || !h)
                return NULL;
        path = strdup_printf("clusters/%s/logs", c);
        rest = strdup_printf("host_id=%s&logs_type=host", h);
        return path && rest ? make_link(s, path, rest) : NULL;
}

/* the link with its api_key's value taken out */
static char *without_key_value(const char *url)
{
        _cleanup_free_ char *v = NULL, *needle = NULL;

        if (query_value(url, "api_key", &v) < 0)
                return NULL;
        if (isempty(v))
                return strdup(url);
        needle = strdup_printf("api_key=%s", v);
        return needle ? str_replace_all(url, needle, "api_key=") : NULL;
}

int hub_link_set(json_object *obj, const char *key, const char *want)
{
        const char *have = json_get_string(obj, key);
        _cleanup_free_ char *a = NULL, *b = NULL;

        if (!want)
                return 0;
        if (!isempty(have)) {
                a = without_key_value(have);
                b = without_key_value(want);
                if (!a || !b)
                        return -ENOMEM;
                if (streq(a, b))
                        return 0;
        }
        return json_add_string(obj, key, want);
}
