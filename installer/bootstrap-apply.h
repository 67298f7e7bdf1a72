/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Laying bootstrap.ign onto the live root (notes §4.1 step 4), both ways,
 * as decisions:
 *
 *  - the upstream way: machine-config-daemon's "start --once-from" in the
 *    --mco-image through podman, up to 3 attempts; mcd_podman_argv() is its
 *    command line;
 *  - the native way (--bootstrap-apply=native): cradle's Ignition apply,
 *    no image pull. native_apply_plan() turns bootstrap.ign into exactly
 *    what the MCD's once-from does with an Ignition config
 *    (runOnceFromIgnition: writeFiles, then writeUnits): every storage file
 *    written whatever its "overwrite" (directories 0755, files 0644 unless
 *    a mode is given, owner root unless given), every unit's drop-ins and
 *    contents written or masked, empty drop-ins and unmasked units without
 *    contents removed, a unit with contents disabled first when it is
 *    enabled, then `systemctl enable` / `disable` of the units that say so
 *    and `systemctl preset` of those that do not. Everything else the MCD
 *    ignores there too (directories, links, passwd, disks, filesystems,
 *    RAID, LUKS, kernel arguments, merge/replace pointers): the plan lists
 *    it, installer/bootstrap.c logs it.
 *
 * What the native way cannot do the way the MCD does, and therefore refuses
 * before anything is written (installer/README.md, "The bootstrap"):
 *  - an Ignition config of spec 2.x (the MCD converts it; cradle's Ignition
 *    module reads 3.x);
 *  - a file with "append" entries (the MCD refuses those as well);
 *  - a file whose source is not a data: URL (the MCD cannot fetch either);
 *  - contents that do not decode, decompress or match their hash (checked
 *    for every file first, so a bad one never leaves half a tree).
 * What it does not do at all: the MCD's backup stamps under
 * /etc/machine-config-daemon/{orig,noorig} (they serve a later MCD on the
 * same root; this root is discarded at the reboot), and the bind mount of
 * rpm-ostree (the once-from of an Ignition config never calls it).
 */

#include <stdbool.h>
#include <stddef.h>

#include "ignition/ignition.h"

typedef enum BootstrapApply {
        BOOTSTRAP_APPLY_MCD,
        BOOTSTRAP_APPLY_NATIVE,
        _BOOTSTRAP_APPLY_MAX,
        _BOOTSTRAP_APPLY_INVALID = -22,
} BootstrapApply;

BootstrapApply bootstrap_apply_from_string(const char *s); /* "mcd", "native" */
const char *bootstrap_apply_to_string(BootstrapApply a);

#define MCD_ATTEMPTS 3

/* podman run --net host --pid=host --volume ROOT:/rootfs:rw --volume
 * ROOT/usr/bin/rpm-ostree:/usr/bin/rpm-ostree --privileged --entrypoint
 * /usr/bin/machine-config-daemon IMAGE start --node-name localhost
 * --root-mount /rootfs --once-from ONCE_FROM --skip-reboot, with root "/"
 * on a host (the upstream argv exactly); once_from is the path inside that
 * root. */
char **mcd_podman_argv(const char *mco_image, const char *root, const char *once_from);

typedef struct NativeApplyPlan {
        IgnConfig *config; /* files and units only, as the MCD writes them */
        char **remove; /* root paths the MCD removes: empty drop-ins, unmasked units without contents */
        char **disable_first; /* units with contents: disabled before they are rewritten when enabled */
        char **enable; /* systemctl enable (one call) */
        char **disable; /* systemctl disable (one call) */
        char **preset; /* systemctl preset, one call each, failures ignored */
        char **ignored; /* what the config holds that the MCD ignores ("storage.directories (2)") */
} NativeApplyPlan;

void native_apply_plan_done(NativeApplyPlan *p);
/* -EOPNOTSUPP with *reterr saying what the native way cannot apply. */
int native_apply_plan(const IgnConfig *bootstrap, NativeApplyPlan *ret, char **reterr);
