/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The install step's command lines: the upstream podman command, cradle's
 * in-process installer's argv, and which of the two runs. See install.h.
 */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/config.h"
#include "agent/steps/install.h"
#include "buf.h"
#include "cleanup.h"
#include "jsonutil.h"
#include "shell.h"
#include "strutil.h"

char *go_json_marshal_strv(char *const *l)
{
        _cleanup_buf_ Buf b = BUF_INIT(BUF_MAX_JSON_DOC);
        char *ret;
        int r = buf_append_char(&b, '[');

        for (size_t i = 0; r >= 0 && l && l[i]; i++) {
                if (i > 0)
                        r = buf_append_char(&b, ',');
                if (r >= 0)
                        r = buf_append_char(&b, '"');
                for (const unsigned char *p = (const unsigned char *)l[i]; r >= 0 && *p; p++) {
                        switch (*p) {
                        case '"':
                                r = buf_append_str(&b, "\\\"");
                                break;
                        case '\\':
                                r = buf_append_str(&b, "\\\\");
                                break;
                        case '\n':
                                r = buf_append_str(&b, "\\n");
                                break;
                        case '\r':
                                r = buf_append_str(&b, "\\r");
                                break;
                        case '\t':
                                r = buf_append_str(&b, "\\t");
                                break;
                        case '<':
                        case '>':
                        case '&':
                                r = buf_appendf(&b, "\\u%04x", *p);
                                break;
                        default:
                                r = *p < 0x20 ? buf_appendf(&b, "\\u%04x", *p)
                                              : buf_append_char(&b, (char)*p);
                        }
                }
                if (r >= 0)
                        r = buf_append_char(&b, '"');
        }
        if (r >= 0)
                r = buf_append_char(&b, ']');
        if (r < 0 || buf_take(&b, &ret, NULL) < 0)
                return NULL;
        return ret;
}

char **install_installer_argv(const InstallRequest *r, const AgentConfig *c, bool copy_network)
{
        _cleanup_strv_free_ char **l = NULL;
        int q = 0;

        q |= strv_extend_pair(&l, "--role", strempty(r->role));
        q |= strv_extend_pair(&l, "--infra-env-id", strempty(r->infra_env_id));
        q |= strv_extend_pair(&l, "--cluster-id", strempty(r->cluster_id));
        q |= strv_extend_pair(&l, "--host-id", strempty(r->host_id));
        q |= strv_extend_pair(&l, "--boot-device", strempty(r->boot_device));
        q |= strv_extend_pair(&l, "--url", strempty(c->url));
        q |= strv_extend_pair(&l, "--controller-image", strempty(r->controller_image));
        q |= strv_extend_pair(&l, "--agent-image", strempty(c->agent_version));
        /* each generation of the request in the form the Go agent of the
         * same release passed it on (a service and its installer image move
         * together): control_plane_count (2025 on) or high_availability_mode
         * (before), whichever the request carries */
        if (r->control_plane_count != 0) {
                char n[32];
                snprintf(n, sizeof(n), "%lld", (long long)r->control_plane_count);
                q |= strv_extend_pair(&l, "--control-plane-count", n);
        }
        if (r->high_availability_mode)
                q |= strv_extend_pair(&l, "--high-availability-mode", r->high_availability_mode);
        if (!isempty(r->mco_image))
                q |= strv_extend_pair(&l, "--mco-image", r->mco_image);
        if (!isempty(r->must_gather_image))
                q |= strv_extend_pair(&l, "--must-gather-image", r->must_gather_image);
        if (!isempty(r->openshift_version))
                q |= strv_extend_pair(&l, "--openshift-version", r->openshift_version);
        STRV_FOREACH (d, r->disks_to_format)
                q |= strv_extend_pair(&l, "--format-disk", *d);
        /* booleans as bare flags: "--flag value" would end Go's flag parsing */
        if (c->insecure)
                q |= strv_extend(&l, "--insecure");
        if (r->check_cvo)
                q |= strv_extend(&l, "--check-cluster-version");
        if (r->skip_installation_disk_cleanup)
                q |= strv_extend(&l, "--skip-installation-disk-cleanup");
        if (!isempty(c->cacert))
                q |= strv_extend_pair(&l, "--cacert", c->cacert);
        {
                _cleanup_strv_free_ char **args = NULL;
                _cleanup_(json_object_putp) json_object *a = NULL;
                if (!isempty(r->installer_args) &&
                    json_parse(r->installer_args, strlen(r->installer_args), BUF_MAX_JSON_DOC, &a, NULL) >=
                            0 &&
                    json_object_is_type(a, json_type_array))
                        for (size_t i = 0; i < json_object_array_length(a); i++)
                                q |= strv_extend(&args,
                                                 json_object_get_string(json_object_array_get_idx(a, i)));
                if (copy_network && !strv_contains(args, "--copy-network"))
                        q |= strv_extend(&args, "--copy-network");
                if (args) {
                        _cleanup_free_ char *j = go_json_marshal_strv(args);
                        q |= j ? strv_extend_pair(&l, "--installer-args", j) : -ENOMEM;
                }
        }
        if (r->enable_skip_mco_reboot)
                q |= strv_extend(&l, "--enable-skip-mco-reboot");
        if (r->notify_num_reboots)
                q |= strv_extend(&l, "--notify-num-reboots");
        if (r->has_proxy && (!isempty(r->http_proxy) || !isempty(r->https_proxy))) {
                if (!isempty(r->http_proxy))
                        q |= strv_extend_pair(&l, "--http-proxy", r->http_proxy);
                if (!isempty(r->https_proxy))
                        q |= strv_extend_pair(&l, "--https-proxy", r->https_proxy);
                if (!isempty(r->no_proxy)) {
                        _cleanup_free_ char *np = strdup(r->no_proxy);
                        q |= np ? strv_extend_pair(&l, "--no-proxy", strstrip(np)) : -ENOMEM;
                }
        }
        if (r->service_ips) {
                _cleanup_free_ char *ips = strv_join(r->service_ips, ",");
                q |= ips ? strv_extend_pair(&l, "--service-ips", ips) : -ENOMEM;
        }
        if (!isempty(r->coreos_image))
                q |= strv_extend_pair(&l, "--coreos-image", r->coreos_image);
        if (q != 0)
                return NULL;
        return TAKE_PTR(l);
}

char *install_podman_command(const InstallRequest *r, const AgentConfig *c, bool copy_network)
{
        static const char *const base[] = {
                "podman",
                "run",
                "--privileged",
                "--pid=host",
                "--net=host",
                "--name=assisted-installer",
                "-v",
                "/dev:/dev:rw",
                "-v",
                "/opt:/opt:rw",
                "-v",
                "/var/log:/var/log:rw",
                "-v",
                "/run/systemd/journal/socket:/run/systemd/journal/socket",
                "-v",
                "/etc/pki:/etc/pki",
                "-v",
                "/tmp:/tmp",
                "--env=PULL_SECRET_TOKEN",
        };
        _cleanup_strv_free_ char **podman = NULL, **args = install_installer_argv(r, c, copy_network);
        _cleanup_free_ char *p = NULL, *a = NULL, *image = NULL;

        if (!args)
                return NULL;
        for (size_t i = 0; i < ELEMENTSOF(base); i++)
                if (strv_extend(&podman, base[i]) < 0)
                        return NULL;
        if (!isempty(c->cacert) &&
            (strv_extend(&podman, "-v") < 0 || strv_extendf(&podman, "%s:%s:rw", c->cacert, c->cacert) < 0))
                return NULL;
        p = shell_join(podman);
        a = shell_join(args);
        /* the Go agent puts the image in unquoted; a valid image reference
         * (the swagger pattern) needs no quotes, so quoting changes nothing
         * for those and keeps anything else from reaching the shell */
        image = shell_quote(strempty(r->installer_image));
        if (!p || !a || !image)
                return NULL;
        return strdup_printf("%s %s %s", p, image, a);
}

static const char *const mode_names[_INSTALL_MODE_MAX] = {
        [INSTALL_MODE_AUTO] = "auto",
        [INSTALL_MODE_PODMAN] = "podman",
        [INSTALL_MODE_INPROCESS] = "inprocess",
};

InstallMode install_mode_from_string(const char *s)
{
        for (int i = 0; s && i < _INSTALL_MODE_MAX; i++)
                if (streq(s, mode_names[i]))
                        return (InstallMode)i;
        return _INSTALL_MODE_INVALID;
}

const char *install_mode_to_string(InstallMode m)
{
        return m >= 0 && m < _INSTALL_MODE_MAX ? mode_names[m] : NULL;
}

InstallMode install_mode_decide(InstallMode configured, const char *installer_image, const char *agent_image)
{
        if (configured == INSTALL_MODE_PODMAN || configured == INSTALL_MODE_INPROCESS)
                return configured;
        /* the service runs cradle as its installer image too: we are that program */
        if (!isempty(installer_image) && streq_ptr(installer_image, agent_image))
                return INSTALL_MODE_INPROCESS;
        return INSTALL_MODE_PODMAN;
}
