/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz-sources: installer/plan.c installer/devclean.c installer/disk.c installer/config.c installer/bootstrap-apply.c ignition/ign-*.c logs/journal-text.c */
/*
 * What the installer parses from outside: the output of vgs, pvs,
 * dmsetup, mdadm, coreos-installer, rsync and efibootmgr, the service's
 * host list, --installer-args and the logs sender's --since. The first
 * byte picks the parser, the rest is its input.
 */
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "fuzz.h"
#include "installer/config.h"
#include "installer/devclean.h"
#include "installer/plan.h"
#include "jsonutil.h"
#include "logs/journal-text.h"
#include "strutil.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        _cleanup_free_ char *text = NULL;
        unsigned pct;

        if (size < 1 || size > 1 << 20)
                return 0;
        text = malloc(size);
        if (!text)
                return 0;
        memcpy(text, data + 1, size - 1);
        text[size - 1] = 0;

        switch (data[0] % 9) {
        case 0: {
                VgPv *l = NULL;
                size_t n = 0;
                if (cleanup_parse_vgs(text, &l, &n) >= 0)
                        vgpv_free(l, n);
                break;
        }
        case 1: {
                _cleanup_strv_free_ char **a = NULL, **b = NULL, **c = NULL;
                (void)cleanup_parse_pvs(text, &a);
                (void)cleanup_parse_dmsetup_ls(text, &b);
                (void)cleanup_parse_dmsetup_deps(text, &c);
                break;
        }
        case 2: {
                MdArray *l = NULL;
                size_t n = 0;
                if (cleanup_parse_mdadm_scan(text, &l, &n) >= 0)
                        md_arrays_free(l, n);
                break;
        }
        case 3:
                (void)coreos_progress_parse(text, &pct);
                (void)rsync_progress_parse(text, &pct);
                break;
        case 4:
                argvs_free(efibootmgr_delete_argvs(text, "\\EFI\\redhat\\shimx64.efi"));
                (void)efi_vendor_pick(text);
                break;
        case 5: {
                _cleanup_(json_object_putp) json_object *hosts = NULL;
                if (json_parse(text, strlen(text), 1 << 20, &hosts, NULL) >= 0)
                        (void)worker_may_continue("Cluster", hosts_done_count(hosts));
                break;
        }
        case 6: {
                _cleanup_strv_free_ char **l = NULL;
                _cleanup_free_ char *err = NULL;
                (void)installer_args_parse(text, &l, &err);
                break;
        }
        case 7: {
                usec_t t;
                (void)journal_since_parse(text, 1795428269ULL * USEC_PER_SEC, &t);
                break;
        }
        default: {
                _cleanup_free_ char *p = partition_path(text, 4);
                break;
        }
        }
        return 0;
}
