/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <json-c/json.h>
#include <string.h>

#include "cleanup.h"
#include "controller/dry.h"
#include "controller/finalize.h"
#include "jsonutil.h"
#include "strutil.h"

/* a certificate, as the service merges the CA into the kubeconfig only
 * when it is one (upstream's mock holds a fixed bundle too) */
#define DRY_INGRESS_CA \
        "-----BEGIN CERTIFICATE-----\n" \
        "MIIBrDCCAVGgAwIBAgIUCoxho+IbVGGcN/CcD7fRaOHmwdQwCgYIKoZIzj0EAwIw\n" \
        "KjEoMCYGA1UEAwwfaW5ncmVzcy1vcGVyYXRvckBjcmFkbGUtZHJ5LXJ1bjAgFw0y\n" \
        "NjExMjcxNTUxMDFaGA8yMTI2MTEwMzE1NTEwMVowKjEoMCYGA1UEAwwfaW5ncmVz\n" \
        "cy1vcGVyYXRvckBjcmFkbGUtZHJ5LXJ1bjBZMBMGByqGSM49AgEGCCqGSM49AwEH\n" \
        "A0IABJhFO//OHvfEO+NsVRTtBGMXDMFzKeTiQGWoVM6NXng1n060IGDtvlhkmmLj\n" \
        "jvBPPodfVlF10aouFgWaTXw0oDCjUzBRMB0GA1UdDgQWBBTX7JXu7p/CtZSOjMph\n" \
        "QjA7ecVOjTAfBgNVHSMEGDAWgBTX7JXu7p/CtZSOjMphQjA7ecVOjTAPBgNVHRMB\n" \
        "Af8EBTADAQH/MAoGCCqGSM49BAMCA0kAMEYCIQCXgj/VyKaoKJ3e1T0tKyr1s7gb\n" \
        "ecCcIkctFdUpo1C8UAIhAOaziHX0McCO0v0CrtiUIx9oTmb7h0yk9Fz/IXljMZYP\n" \
        "-----END CERTIFICATE-----\n"

#define ALL_IS_WELL \
        "[{\"type\": \"Available\", \"status\": \"True\", \"message\": \"All is well\"}, {\"type\": " \
        "\"Progressing\", \"status\": \"False\", \"message\": \"All is well\"}, {\"type\": " \
        "\"Degraded\", \"status\": \"False\", \"message\": \"All is well\"}]"

static json_object *literal(const char *text)
{
        json_object *o = NULL;

        (void)json_parse(text, strlen(text), 1u << 20, &o, NULL);
        return o;
}

static bool is(const KubeResource *res, const char *group, const char *resource)
{
        return streq(strempty(res->group), group) && streq(res->resource, resource);
}

static json_object *dry_node(const DryClusterHost *h)
{
        _cleanup_(json_object_putp) json_object *n =
                literal("{\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {}, \"status\": "
                        "{\"conditions\": "
                        "[{\"type\": \"Ready\", \"status\": \"True\"}], \"addresses\": []}}");
        json_object *addr = json_new_object();

        if (!n || !addr || json_add_string(json_get(n, "metadata"), "name", strempty(h->hostname)) < 0 ||
            (!isempty(h->ip) && (json_add_string(addr, "type", "InternalIP") < 0 ||
                                 json_add_string(addr, "address", h->ip) < 0 ||
                                 json_append(json_get_path(n, "status.addresses"), TAKE_PTR(addr)) < 0))) {
                json_object_put(addr);
                return NULL;
        }
        json_object_put(addr);
        return TAKE_PTR(n);
}

static json_object *dry_node_find(const DryCluster *c, const char *name)
{
        for (size_t i = 0; i < c->n; i++)
                if (c->rebooted[i] && streq_ptr(c->hosts[i].hostname, name))
                        return dry_node(&c->hosts[i]);
        return NULL;
}

static json_object *dry_cluster_version(const DryCluster *c)
{
        json_object *cv =
                literal("{\"apiVersion\": \"config.openshift.io/v1\", \"kind\": \"ClusterVersion\", "
                        "\"metadata\": {\"name\": \"version\"}, \"status\": {\"desired\": {}, "
                        "\"capabilities\": {\"enabledCapabilities\": [\"" CONSOLE_CAPABILITY
                        "\"], \"knownCapabilities\": [\"" CONSOLE_CAPABILITY
                        "\"]}, \"conditions\": " ALL_IS_WELL "}}");

        if (cv && json_add_string(json_get_path(cv, "status.desired"), "version",
                                  strempty(c->openshift_version)) < 0)
                return json_object_put(cv), NULL;
        return cv;
}

static json_object *dry_console(const DryCluster *c)
{
        json_object *co =
                literal("{\"apiVersion\": \"config.openshift.io/v1\", \"kind\": \"ClusterOperator\", "
                        "\"metadata\": {\"name\": \"" CONSOLE_OPERATOR "\"}, \"status\": "
                        "{\"versions\": [{\"name\": \"operator\"}], \"conditions\": " ALL_IS_WELL "}}");

        if (co && json_add_string(json_object_array_get_idx(json_get_path(co, "status.versions"), 0),
                                  "version", strempty(c->openshift_version)) < 0)
                return json_object_put(co), NULL;
        return co;
}

static json_object *dry_ingress_ca(void)
{
        json_object *cm =
                literal("{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": {\"name\": "
                        "\"" INGRESS_CA_CONFIGMAP "\", \"namespace\": \"" INGRESS_CA_NAMESPACE "\"}, "
                        "\"data\": {}}");

        if (cm && json_add_string(json_get(cm, "data"), INGRESS_CA_KEY, DRY_INGRESS_CA) < 0)
                return json_object_put(cm), NULL;
        return cm;
}

int dry_cluster_get(const DryCluster *c, const KubeResource *res, const char *ns, const char *name,
                    json_object **ret)
{
        json_object *o = NULL;

        if (is(res, "", "nodes"))
                o = dry_node_find(c, name);
        else if (is(res, "config.openshift.io", "proxies") && streq_ptr(name, "cluster"))
                o = literal(
                        "{\"apiVersion\": \"config.openshift.io/v1\", \"kind\": \"Proxy\", \"metadata\": "
                        "{\"name\": \"cluster\"}, \"spec\": {}, \"status\": {}}");
        else if (is(res, "config.openshift.io", "clusterversions") && streq_ptr(name, "version"))
                o = dry_cluster_version(c);
        else if (is(res, "config.openshift.io", "clusteroperators") && streq_ptr(name, CONSOLE_OPERATOR))
                o = dry_console(c);
        else if (is(res, "", "configmaps") && streq_ptr(ns, INGRESS_CA_NAMESPACE) &&
                 streq_ptr(name, INGRESS_CA_CONFIGMAP))
                o = dry_ingress_ca();
        else
                return -ENOENT;
        if (!o)
                return is(res, "", "nodes") ? -ENOENT : -ENOMEM;
        *ret = o;
        return 0;
}

int dry_cluster_list(const DryCluster *c, const KubeResource *res, const char *ns, json_object **ret)
{
        _cleanup_(json_object_putp) json_object *list = json_new_object(), *items = json_object_new_array();
        _cleanup_free_ char *kind = strdup_printf("%sList", res->kind);

        (void)ns;
        if (!list || !items || !kind)
                return -ENOMEM;
        if (is(res, "", "nodes")) {
                for (size_t i = 0; i < c->n; i++)
                        if (c->rebooted[i] && json_append(items, dry_node(&c->hosts[i])) < 0)
                                return -ENOMEM;
        } else if (is(res, "config.openshift.io", "clusteroperators")) {
                if (json_append(items, dry_console(c)) < 0)
                        return -ENOMEM;
        }
        /* anything else (certificate requests, pods) is empty */
        if (json_add_string(list, "kind", kind) < 0 || json_add(list, "items", TAKE_PTR(items)) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(list);
        return 0;
}
