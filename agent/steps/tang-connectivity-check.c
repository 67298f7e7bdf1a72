/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tang-connectivity-check: can the host reach the cluster's Tang servers
 * (disk encryption), and what do they advertise?
 *
 * Argument: TangConnectivityRequest {"tang_servers": "<JSON text>"}, the
 * text being [{"url","thumbprint"}]. Output: TangConnectivityResponse.
 * For each server (notes §6.6): the URL must be a request URI and the
 * thumbprint set; GET URL/adv/THUMBPRINT with a plain client (system CAs,
 * proxy from the environment); status 200, a non-empty body, JSON. All
 * good: {"is_success":true,"tang_server_response":[...]} exit 0. Any
 * failure: {"tang_server_response":null} (is_success false is omitted),
 * exit -1 and the errors in go-multierror's format.
 *
 * The Go client has no time limit; here each GET gets TANG_TIMEOUT.
 */
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "buf.h"
#include "cleanup.h"
#include "http.h"
#include "jsonutil.h"
#include "log.h"
#include "step-util.h"
#include "strutil.h"
#include "tang.h"

#define TANG_TIMEOUT (60 * USEC_PER_SEC)
#define TANG_MAX_RESPONSE (1024u * 1024)

static const ModelSchema string_schema = { .kind = MODEL_STRING, .go_type = "string" };

/* assisted-service's pkg/tang TangServer list */
static const ModelField server_fields[] = {
        { "url", &string_schema, false },
        { "thumbprint", &string_schema, false },
        {},
};
static const ModelSchema server_schema = { .kind = MODEL_OBJECT,
                                           .go_type = "TangServer",
                                           .fields = server_fields };
static const ModelSchema servers_schema = { .kind = MODEL_ARRAY,
                                            .go_type = "[]tang.TangServer",
                                            .items = &server_schema };

/* url.ParseRequestURI's acceptance: an absolute URI or an absolute path */
static bool request_uri_valid(const char *s)
{
        size_t n;

        if (s[0] == '/')
                return true;
        n = strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-.");
        return n > 0 && s[n] == ':' && ((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z'));
}

static int fetch(const char *url, json_object **ret, char **reterr)
{
        _cleanup_(http_client_freep) HttpClient *c = NULL;
        _cleanup_http_response_ HttpResponse resp = {};
        _cleanup_free_ char *err = NULL;
        HttpClientOptions o = { .total_timeout = TANG_TIMEOUT, .max_response = TANG_MAX_RESPONSE };
        HttpRequest req = { .path = url };
        int r;

        r = http_client_new(&o, &c, &err);
        if (r >= 0)
                r = http_request(c, &req, &resp, &err);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                *reterr = strdup_printf("HTTP GET failure: Get \"%s\": %s", url, strna(err));
                return -EIO;
        }
        if (resp.status != 200) {
                *reterr = strdup_printf("HTTP GET failure. Status Code: %ld", resp.status);
                return -EIO;
        }
        return tang_parse_advertisement(resp.body, resp.body_len, url, ret, reterr);
}

static int run(const StepContext *ctx, char *const *args, StepResult *ret)
{
        _cleanup_(json_object_putp) json_object *req = NULL, *servers = NULL, *fail = NULL, *ok = NULL,
                                                *list = NULL;
        _cleanup_strv_free_ char **errors = NULL;
        _cleanup_free_ char *err = NULL, *text = NULL;
        int r;

        (void)ctx;
        fail = json_new_object();
        if (!fail || json_add_or_null(fail, "tang_server_response", NULL) < 0)
                return -ENOMEM;
        r = step_parse_arg(args[0], &model_tang_connectivity_request, ret, &req);
        if (r <= 0)
                return r;

        r = model_parse_arg(model_get_string(req, "tang_servers"), &servers_schema, &servers, &err);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return step_set_result(ret, fail, -1, err);

        for (size_t i = 0; i < model_array_length(servers); i++) {
                json_object *s = json_object_array_get_idx(servers, i);
                const char *url = strempty(model_get_string(s, "url"));
                const char *thumb = strempty(model_get_string(s, "thumbprint"));
                _cleanup_free_ char *full = NULL, *e = NULL;
                json_object *entry = NULL;

                if (isempty(url) || !request_uri_valid(url)) {
                        r = strv_extendf(&errors,
                                         isempty(url) ? "parse \"%s\": empty url"
                                                      : "parse \"%s\": invalid URI for request",
                                         url);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (isempty(thumb)) {
                        log_error("Tang thumbprint isn't set for server: %s", url);
                        r = strv_extendf(&errors, "Tang thumbprint isn't set for server: %s", url);
                        if (r < 0)
                                return r;
                        continue;
                }
                full = strdup_printf("%s/adv/%s", url, thumb);
                if (!full)
                        return -ENOMEM;
                r = fetch(full, &entry, &e);
                if (r == -ENOMEM)
                        return r;
                if (r < 0) {
                        r = strv_extend(&errors, strna(e));
                        if (r < 0)
                                return r;
                        continue;
                }
                if (!list) {
                        list = json_new_array();
                        if (!list) {
                                json_object_put(entry);
                                return -ENOMEM;
                        }
                }
                if (json_append(list, entry) < 0)
                        return -ENOMEM;
        }

        if (errors) {
                text = go_multierror_format(errors);
                if (!text)
                        return -ENOMEM;
                return step_set_result(ret, fail, -1, text);
        }
        ok = json_new_object();
        if (!ok || json_add_bool(ok, "is_success", true) < 0 ||
            json_add_or_null(ok, "tang_server_response", TAKE_PTR(list)) < 0)
                return -ENOMEM;
        return step_succeed_json(ret, ok);
}

const StepHandler step_tang_connectivity_check = {
        .type = STEP_TANG_CONNECTIVITY_CHECK,
        .min_args = 1,
        .max_args = 1,
        .run = run,
};
