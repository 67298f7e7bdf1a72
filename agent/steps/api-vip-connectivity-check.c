/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api-vip-connectivity-check (day-2 hosts): can the host fetch the worker
 * Ignition config from the target cluster's machine config server?
 *
 * Argument: APIVipConnectivityRequest {"url", "ca_certificate" (base64
 * PEM), "ignition_endpoint_token", "request_headers": [{"key","value"}],
 * "verify_cidr" (ignored, as by the Go agent)}. Output:
 * APIVipConnectivityResponse.
 *
 * As the Go agent (notes §6.7): GET url with "Accept:
 * application/vnd.coreos.ignition+json; version=3.2.0", "Authorization:
 * Bearer TOKEN" when a token is given, and the extra headers; with
 * ca_certificate that CA is the only one trusted (the Go client's own
 * pool), otherwise the system's. Success: the body parsed as Ignition
 * (3.0 to 3.2, translated to 3.2 and validated, as ParseCompatibleVersion)
 * and filtered by ignition/ to storage.luks and the files
 * /etc/kubernetes/manifests/coredns.yaml, .../keepalived.yaml and
 * /etc/kubernetes/kubeconfig, serialized as 3.2 into "ignition":
 *   {"ignition":"{...}","is_success":true,"url":URL}
 * A download problem (transport error, non-2xx, empty or non-JSON body, a
 * CA that does not decode) or a config Ignition 3.2 cannot take:
 *   {"download_error":"ignition file download failed: ...","url":URL}
 * with exit 0 and the error "ignition download error".
 *
 * The filtered config is ignition/'s serialization (keys present only when
 * set), not Go's (which writes empty objects for unset sections); both
 * are the same Ignition config.
 */
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "base64.h"
#include "cleanup.h"
#include "http.h"
#include "ignition/ignition.h"
#include "jsonutil.h"
#include "log.h"
#include "redact.h"
#include "step-util.h"
#include "strutil.h"

#define IGNITION_ACCEPT "Accept: application/vnd.coreos.ignition+json; version=3.2.0"
#define FETCH_TIMEOUT (120 * USEC_PER_SEC)

static int fail_download(StepResult *ret, const char *url, const char *why)
{
        _cleanup_(json_object_putp) json_object *o = json_new_object();
        _cleanup_free_ char *text = strdup_printf("ignition file download failed: %s", why);

        log_error("ignition file download failed from %s: %s", url, why);
        if (!o || !text || json_add_string(o, "download_error", text) < 0 ||
            json_add_string_nonempty(o, "url", url) < 0)
                return -ENOMEM;
        return step_set_result(ret, o, 0, "ignition download error");
}

/* 0 with the filtered config's text, or -EBADMSG with why in *reterr */
static int filter(const char *body, size_t len, char **ret, char **reterr)
{
        _cleanup_(ign_report_done) IgnReport report = IGN_REPORT_INIT;
        _cleanup_ign_config_ IgnConfig *c = NULL, *f = NULL;
        int r;

        r = ign_config_parse(body, len, 0, &c, &report);
        if (r == -ENOMEM)
                return r;
        if (r >= 0 && c->version > IGN_V3_2) {
                *reterr = strdup_printf("invalid ignition format: unsupported config version %s",
                                        ign_version_to_string(c->version));
                return -EBADMSG;
        }
        if (r >= 0)
                r = ign_config_translate(c, IGN_V3_2, reterr);
        if (r >= 0)
                r = ign_config_validate(c, &report);
        if (r < 0) {
                _cleanup_free_ char *text = ign_report_format(&report);
                if (!*reterr)
                        *reterr = strdup_printf("invalid ignition format: %s", strna(text));
                return r == -ENOMEM ? r : -EBADMSG;
        }
        r = ign_config_filter_api_vip(c, &f);
        if (r < 0)
                return r;
        return ign_config_serialize(f, IGN_V3_2, 0, ret, NULL, reterr);
}

static int run(const StepContext *ctx, char *const *args, StepResult *ret)
{
        _cleanup_(json_object_putp) json_object *req = NULL, *ok = NULL;
        _cleanup_(http_client_freep) HttpClient *client = NULL;
        _cleanup_http_response_ HttpResponse resp = {};
        _cleanup_strv_free_ char **headers = NULL;
        _cleanup_free_ char *ca = NULL, *err = NULL, *filtered = NULL;
        HttpClientOptions o = { .total_timeout = FETCH_TIMEOUT, .retry = HTTP_RETRY_NONE };
        const char *url, *ca_b64, *token;
        json_object *extra, *doc;
        size_t ca_len = 0;
        int r;

        (void)ctx;
        r = step_parse_arg(args[0], &model_api_vip_connectivity_request, ret, &req);
        if (r <= 0)
                return r;
        url = model_get_string(req, "url");
        ca_b64 = model_get_string(req, "ca_certificate");
        token = model_get_string(req, "ignition_endpoint_token");

        if (ca_b64) {
                r = base64_decode(ca_b64, "\r\n", &ca, &ca_len);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        return fail_download(ret, url,
                                             "Failed to decode CaCertificate: illegal base64 data");
                o.ca_pem = ca;
                o.ca_replace_system = true;
        }
        r = strv_extend(&headers, IGNITION_ACCEPT);
        if (r >= 0 && token) {
                (void)redact_register_secret(token);
                r = strv_extendf(&headers, "Authorization: Bearer %s", token);
        }
        extra = model_get(req, "request_headers");
        for (size_t i = 0; r >= 0 && i < model_array_length(extra); i++) {
                json_object *h = json_object_array_get_idx(extra, i);
                const char *k = model_get_string(h, "key");

                if (isempty(k))
                        continue;
                r = strv_extendf(&headers, "%s: %s", k, strempty(model_get_string(h, "value")));
        }
        if (r < 0)
                return r;

        r = http_client_new(&o, &client, &err);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return fail_download(ret, url, err ? err : "unable to parse cert");
        {
                HttpRequest hr = { .path = url, .headers = headers };
                r = http_request(client, &hr, &resp, &err);
        }
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                _cleanup_free_ char *why = strdup_printf("HTTP download failure: %s", strna(err));
                return why ? fail_download(ret, url, why) : -ENOMEM;
        }
        if (resp.status < 200 || resp.status > 299) {
                _cleanup_free_ char *why =
                        strdup_printf("HTTP download failure. Status Code: %ld", resp.status);
                return why ? fail_download(ret, url, why) : -ENOMEM;
        }
        if (resp.body_len == 0)
                return fail_download(ret, url, "Empty Ignition file");
        {
                _cleanup_free_ char *perr = NULL;
                json_object *probe = NULL;

                r = json_parse(resp.body, resp.body_len, IGN_PARSE_MAX, &probe, &perr);
                json_object_put(probe);
                if (r < 0) {
                        _cleanup_free_ char *why =
                                strdup_printf("Error unmarshaling Ignition string: %s", strna(perr));
                        return why ? fail_download(ret, url, why) : -ENOMEM;
                }
        }

        free(err);
        err = NULL;
        r = filter(resp.body, resp.body_len, &filtered, &err);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return fail_download(ret, url, strna(err));

        ok = json_new_object();
        if (!ok || json_add_string(ok, "ignition", filtered) < 0 ||
            json_add_bool(ok, "is_success", true) < 0 || json_add_string_nonempty(ok, "url", url) < 0)
                return -ENOMEM;
        doc = ok;
        return step_succeed_json(ret, doc);
}

const StepHandler step_api_vip_connectivity_check = {
        .type = STEP_API_VIP_CONNECTIVITY_CHECK,
        .min_args = 1,
        .max_args = 1,
        .run = run,
};
