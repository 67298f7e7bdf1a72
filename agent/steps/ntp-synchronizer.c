/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ntp-synchronizer: add the NTP sources the service asks for to chronyd and
 * report the state of every source.
 *
 * Argument: NtpSynchronizationRequest {"ntp_source": "a,b"} ("" for none);
 * each source must be an IP address or a host name (assisted-service's
 * ValidateNTPSource), else "Invalid NTP source: ..." and exit -1.
 * Output: NtpSynchronizationResponse.
 *
 * As the Go agent (notes §6.3): for each requested source not yet among
 * chronyd's sources (by name, or by one of its addresses),
 * `chronyc add server SRC iburst` on the host (a failure is only logged);
 * then `chronyc -n sources` (30 s at most: exit 124 gives "chronyc was
 * timed out after 30 seconds", another failure "chronyc exited with
 * non-zero exit code N: STDOUT\nSTDERR", both exit -1); each source's name
 * is replaced by the first name a reverse lookup gives, without its dots.
 * Names are looked up through resolver.c (c-ares), as domain-resolution.
 */
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "chrony.h"
#include "cleanup.h"
#include "jsonutil.h"
#include "log.h"
#include "net-probe.h"
#include "resolver.h"
#include "spawn.h"
#include "step-util.h"
#include "strutil.h"

#define LOOKUP_TIMEOUT (10 * USEC_PER_SEC)

/* assisted-service's hostnameRegex */
static bool hostname_valid(const char *s)
{
        regex_t re;
        bool ok;

        if (regcomp(&re, "^[a-z0-9][-a-z0-9.]{0,61}[a-z0-9]$", REG_EXTENDED | REG_NOSUB) != 0)
                return false;
        ok = regexec(&re, s, 0, NULL, 0) == 0;
        regfree(&re);
        return ok;
}

static bool ntp_source_valid(const char *s)
{
        IpAddr a;

        return ip_addr_parse(s, &a) >= 0 || hostname_valid(s);
}

/* Runs chronyc on the host. Returns 0 with the exit status (124 on our
 * timeout, -1 when it could not start) and the outputs. */
static int chronyc(const StepContext *ctx, char *const *argv, usec_t timeout, int *ret_code, char **ret_out,
                   char **ret_err)
{
        _cleanup_spawn_result_ SpawnResult res = {};
        SpawnOptions o = { .argv = argv, .timeout = timeout };
        int r;

        r = host_exec_run(ctx->host, &o, &res);
        if (r < 0) {
                *ret_code = -1;
                *ret_out = strdup("");
                *ret_err = r == -ENOENT ? strdup_printf("exec: \"%s\": executable file not found in $PATH",
                                                        argv[0])
                                        : strdup_printf("cannot run %s: %s", argv[0], strerror(-r));
                return *ret_out && *ret_err ? 0 : -ENOMEM;
        }
        *ret_code = res.timed_out ? 124 : res.exit_status;
        *ret_out = TAKE_PTR(res.out);
        *ret_err = TAKE_PTR(res.err);
        if (!*ret_out)
                *ret_out = strdup("");
        if (!*ret_err)
                *ret_err = strdup("");
        return *ret_out && *ret_err ? 0 : -ENOMEM;
}

/* getNTPSources(): 0 and the list, or -EIO with the Go agent's message. */
static int get_sources(const StepContext *ctx, ChronySource **ret, size_t *ret_n, char **reterr)
{
        char *argv[] = { (char *)"chronyc", (char *)"-n", (char *)"sources", NULL };
        _cleanup_free_ char *out = NULL, *err = NULL;
        int r, code;

        r = chronyc(ctx, argv, CHRONYC_TIMEOUT_SECONDS * USEC_PER_SEC, &code, &out, &err);
        if (r < 0)
                return r;
        if (code == 124) {
                *reterr = strdup_printf("chronyc was timed out after %d seconds", CHRONYC_TIMEOUT_SECONDS);
                return -EIO;
        }
        if (code != 0) {
                *reterr = strdup_printf("chronyc exited with non-zero exit code %d: %s\n%s", code, out, err);
                return -EIO;
        }
        return chrony_parse_sources(out, ret, ret_n);
}

static int configured(const StepContext *ctx, const char *server, bool *ret)
{
        _cleanup_free_ char *err = NULL;
        ChronySource *l = NULL;
        ResolveResult res = {};
        size_t n = 0;
        int r;

        *ret = false;
        r = get_sources(ctx, &l, &n, &err);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                log_warning("Failed to check if NTP source %s is configured: Failed to get NTP sources: %s",
                            server, strna(err));
                return 0;
        }
        for (size_t i = 0; i < n && !*ret; i++)
                *ret = streq(l[i].name, server);
        if (!*ret) {
                free(err);
                err = NULL;
                r = resolve_host(server, LOOKUP_TIMEOUT, &res, &err);
                if (r == -ENOMEM) {
                        chrony_sources_free(l, n);
                        return r;
                }
                if (r < 0 || res.not_found)
                        log_warning(
                                "Failed to check if NTP source %s is configured: Failed to lookup server %s",
                                server, server);
                else
                        for (size_t i = 0; i < n && !*ret; i++)
                                *ret = strv_contains(res.ipv4, l[i].name) ||
                                       strv_contains(res.ipv6, l[i].name);
                resolve_result_done(&res);
        }
        chrony_sources_free(l, n);
        return 0;
}

static int add_sources(const StepContext *ctx, const char *list)
{
        _cleanup_strv_free_ char **sources = NULL;
        int r;

        r = strv_split(list, ",", &sources);
        if (r < 0)
                return r;
        STRV_FOREACH (s, sources) {
                _cleanup_free_ char *out = NULL, *err = NULL;
                char *argv[] = { (char *)"chronyc", (char *)"add", (char *)"server", *s,
                                 (char *)"iburst",  NULL };
                bool is = false;
                int code;

                r = configured(ctx, *s, &is);
                if (r < 0)
                        return r;
                if (is)
                        continue;
                r = chronyc(ctx, argv, 0, &code, &out, &err);
                if (r < 0)
                        return r;
                if (code != 0)
                        /* only logged: the sources are reported anyway */
                        log_error("Failed to add NTP server %s: chronyc exited with non-zero exit code %d: "
                                  "%s\n%s",
                                  *s, code, out, err);
        }
        return 0;
}

static int run(const StepContext *ctx, char *const *args, StepResult *ret)
{
        _cleanup_(json_object_putp) json_object *req = NULL, *resp = NULL, *list = NULL;
        _cleanup_free_ char *err = NULL;
        ChronySource *sources = NULL;
        size_t n = 0;
        const char *ntp;
        int r;

        r = step_parse_arg(args[0], &model_ntp_synchronization_request, ret, &req);
        if (r <= 0)
                return r;
        ntp = model_get_string(req, "ntp_source");
        if (!isempty(ntp)) {
                _cleanup_strv_free_ char **parts = NULL;

                /* strings.Split keeps empty fields: "a,,b" is invalid */
                r = strv_split(ntp, ",", &parts);
                if (r < 0)
                        return r;
                if (strv_length(parts) == 0 || strstr(ntp, ",,") || startswith(ntp, ",") ||
                    endswith(ntp, ","))
                        return step_fail(ret, -1, "Invalid NTP source: %s", ntp);
                STRV_FOREACH (p, parts)
                        if (!ntp_source_valid(*p))
                                return step_fail(ret, -1, "Invalid NTP source: %s", ntp);

                r = add_sources(ctx, ntp);
                if (r < 0)
                        return r;
        }

        r = get_sources(ctx, &sources, &n, &err);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return step_fail(ret, -1, "%s", strna(err));

        resp = json_new_object();
        list = json_new_array();
        if (!resp || !list) {
                chrony_sources_free(sources, n);
                return -ENOMEM;
        }
        for (size_t i = 0; i < n; i++) {
                _cleanup_(json_object_putp) json_object *e = json_new_object();
                _cleanup_strv_free_ char **names = NULL;
                _cleanup_free_ char *name = NULL;

                /* net.LookupAddr, then strings.Trim(names[0], ".") */
                if (resolve_reverse(sources[i].name, LOOKUP_TIMEOUT, &names) >= 0 && names && names[0]) {
                        const char *s = names[0];
                        size_t len;

                        while (*s == '.')
                                s++;
                        len = strlen(s);
                        while (len > 0 && s[len - 1] == '.')
                                len--;
                        name = strndup(s, len);
                } else
                        name = strdup(sources[i].name);
                if (!e || !name || json_add_string_nonempty(e, "source_name", name) < 0 ||
                    json_add_string_nonempty(e, "source_state", sources[i].state) < 0 ||
                    json_append(list, TAKE_PTR(e)) < 0) {
                        chrony_sources_free(sources, n);
                        return -ENOMEM;
                }
        }
        chrony_sources_free(sources, n);
        /* make([]*NtpSource, 0): [] when chronyd has no source */
        if (json_add(resp, "ntp_sources", TAKE_PTR(list)) < 0)
                return -ENOMEM;
        return step_succeed_json(ret, resp);
}

const StepHandler step_ntp_synchronizer = {
        .type = STEP_NTP_SYNCHRONIZER,
        .min_args = 1,
        .max_args = 1,
        .run = run,
};
