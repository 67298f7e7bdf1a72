/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * BareMetalHosts and Machines on the baremetal platform (UpdateBMHs,
 * notes/controller.md §5.5), as pure edits of the objects one round read.
 * controller/task-bmh.c does the I/O every 30 s until every BMH is
 * updated.
 *
 * The service wrote each host's hardware into the BMH manifests of
 * bootstrap.ign as the annotation baremetalhost.metal3.io/status (and
 * spec.externallyProvisioned for OCP >= 4.7). With metal3 provisioning
 * (provisionings/provisioning-configuration exists) a BMH in provisioning
 * state "" or "unmanaged" becomes externally provisioned, loses the paused
 * annotation and, without a consumerRef, points at the next worker Machine
 * no BMH names yet. Without provisioning the status annotation becomes the
 * status (status update), then the annotation goes and the consumerRef is
 * set (update). A BMH that needs a Machine when none is left fails the
 * round ("no available machine for bmh %s, ...") until the machineset
 * controller makes one.
 */

#include <stddef.h>

typedef struct json_object json_object;

#define BMH_NAMESPACE "openshift-machine-api"
#define BMH_STATUS_ANNOTATION "baremetalhost.metal3.io/status"
#define BMH_PAUSED_ANNOTATION "baremetalhost.metal3.io/paused"
#define MACHINE_ROLE_LABEL "machine.openshift.io/cluster-api-machine-role"
#define METAL3_PROVISIONING "provisioning-configuration"

/* The worker Machines that no BMH's consumerRef names, in list order
 * (borrowed from machines), handed out one by one. */
typedef struct UnallocatedMachines {
        json_object **machines;
        size_t n, next;
} UnallocatedMachines;

int unallocated_machines(json_object *bmhs, json_object *machines, UnallocatedMachines *ret);
void unallocated_machines_done(UnallocatedMachines *u);

/* updateBMHWithProvisioning's edit of bmh, in place: 1 when it must be
 * updated, 0 when there is nothing to do, -EAGAIN (with *reterr) when it
 * needs a Machine and none is left. */
int bmh_edit_provisioned(json_object *bmh, UnallocatedMachines *u, char **reterr);

/* copyBMHAnnotationsToStatus: the status the annotation holds, as Go's
 * BareMetalHostStatus encodes it (its fields without omitempty present),
 * lastUpdated set to now when it has none: 1 and *ret; 0 when there is no
 * annotation; -EBADMSG (with *reterr) when it does not parse. */
int bmh_status_from_annotation(json_object *bmh, const char *now, json_object **ret, char **reterr);

/* updateBMHWithNOProvisioning's edit after the status update, in place:
 * the status annotation dropped, the consumerRef set; as
 * bmh_edit_provisioned. */
int bmh_edit_unprovisioned(json_object *bmh, UnallocatedMachines *u, char **reterr);
