/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Single node, bootstrap in place (notes §4.9): startBootstrap without the
 * ssh key and the NetworkManager restart, bootkube (which renders
 * /opt/openshift/master.ign), then this host's own Ignition config merged
 * into master.ign, which coreos-installer writes to the disk.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "assisted/assisted-models.h"
#include "cleanup.h"
#include "fileio.h"
#include "ignition/ignition.h"
#include "installer/bootstrap-plan.h"
#include "installer/config.h"
#include "installer/installer-private.h"
#include "installer/single-node.h"
#include "log.h"
#include "strutil.h"

#define MASTER_IGN_MAX (64u * 1024 * 1024)

/* Parsed as spec 3.2: 3.1 and older translated up; newer is refused
 * (upstream parses 3.2 with a 3.1 fallback). */
static int parse_32(const char *what, const char *data, size_t len, IgnConfig **ret, char **reterr)
{
        _cleanup_ign_config_ IgnConfig *c = NULL;
        IgnReport report = IGN_REPORT_INIT;
        _cleanup_free_ char *text = NULL, *err = NULL;
        int r;

        r = ign_config_parse(data, len, MASTER_IGN_MAX, &c, &report);
        text = ign_report_format(&report);
        ign_report_done(&report);
        if (r < 0) {
                *reterr = strdup_printf("cannot parse %s: %s", what, strna(text));
                return r;
        }
        if (c->version > IGN_V3_2) {
                *reterr = strdup_printf("%s is Ignition spec %s; the single-node merge takes 3.2 at most",
                                        what, ign_version_to_string(c->version));
                return -EOPNOTSUPP;
        }
        r = ign_config_translate(c, IGN_V3_2, &err);
        if (r < 0) {
                *reterr = strdup_printf("cannot translate %s to spec 3.2: %s", what, strna(err));
                return r;
        }
        *ret = TAKE_PTR(c);
        return 0;
}

int single_node_merge(const char *master, size_t master_len, const char *host, size_t host_len, char **ret,
                      size_t *ret_len, char **reterr)
{
        _cleanup_ign_config_ IgnConfig *m = NULL, *h = NULL, *merged = NULL;
        IgnReport report = IGN_REPORT_INIT;
        _cleanup_free_ char *text = NULL;
        int r;

        r = parse_32(SINGLE_NODE_MASTER_IGNITION, master, master_len, &m, reterr);
        if (r < 0)
                return r;
        r = parse_32("the host's ignition", host, host_len, &h, reterr);
        if (r < 0)
                return r;
        /* only the host's own overrides: its pointer to the machine config
         * server goes */
        ign_config_clear_pointers(h);
        r = ign_config_merge(m, h, &merged);
        if (r < 0) {
                *reterr = strdup_printf("failed to apply host ignition config overrides: %s", strerror(-r));
                return r;
        }
        r = ign_config_validate(merged, &report);
        text = ign_report_format(&report);
        ign_report_done(&report);
        if (r < 0) {
                *reterr = strdup_printf("merged ignition config is invalid: %s", strna(text));
                return r;
        }
        return ign_config_serialize(merged, IGN_V3_2, 0, ret, ret_len, reterr);
}

int single_node_ignition(Installer *in, char **reterr)
{
        _cleanup_free_ char *master = installer_host_file(in, SINGLE_NODE_MASTER_IGNITION), *mdata = NULL,
                            *hdata = NULL, *merged = NULL, *err = NULL, *name = NULL, *host_path = NULL;
        size_t mlen = 0, hlen = 0, len = 0;
        struct stat st;
        int r;

        if (!master)
                return -ENOMEM;
        log_info("Installing single node openshift");
        r = bootstrap_start(in, /* single_node= */ true, reterr);
        if (r < 0) {
                log_error("Bootstrap failed %s", strna(*reterr));
                return r;
        }
        r = bootstrap_wait_bootkube(in, reterr);
        if (r < 0)
                return r;

        free(in->ignition_path);
        in->ignition_path = installer_host_arg(in, SINGLE_NODE_MASTER_IGNITION);
        if (!in->ignition_path)
                return -ENOMEM;
        if (free_and_strdup(&in->role, "master") < 0)
                return -ENOMEM;
        if (in->cfg->dry_run) {
                log_info("dry run: not merging this host's ignition into %s", SINGLE_NODE_MASTER_IGNITION);
                return 0;
        }
        /* bootstrap-in-place's bootkube wrote it */
        if (stat(master, &st) < 0) {
                log_error("Failed to find single node master ignition: %m");
                *reterr = strdup_printf("cannot find %s: %m", SINGLE_NODE_MASTER_IGNITION);
                return negative_errno();
        }

        name = strdup_printf("%s-%s.ign", in->role, strempty(in->cfg->host_id));
        host_path = name ? strdup_printf("%s/%s", in->cfg->install_dir, name) : NULL;
        if (!host_path)
                return -ENOMEM;
        log_info("Getting %s file", name);
        r = service_download_ignition(&in->svc, &hdata, &hlen, &err);
        if (r < 0) {
                log_error("Failed to fetch file (%s) from server. err: %s", name, strna(err));
                *reterr = TAKE_PTR(err);
                return r;
        }
        r = write_file_atomic(host_path, hdata, hlen, 0644);
        if (r < 0) {
                *reterr = strdup_printf("cannot write %s: %s", host_path, strerror(-r));
                return r;
        }
        r = read_full_file(master, MASTER_IGN_MAX, &mdata, &mlen);
        if (r < 0) {
                *reterr = strdup_printf("cannot read %s: %s", SINGLE_NODE_MASTER_IGNITION, strerror(-r));
                return r;
        }
        r = single_node_merge(mdata, mlen, hdata, hlen, &merged, &len, reterr);
        if (r < 0)
                return r;
        r = write_file_atomic(master, merged, len, 0600);
        if (r < 0) {
                *reterr = strdup_printf("cannot write %s: %s", SINGLE_NODE_MASTER_IGNITION, strerror(-r));
                return r;
        }
        log_info("Merged this host's ignition into %s", SINGLE_NODE_MASTER_IGNITION);
        return 0;
}
