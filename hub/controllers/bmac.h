/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * BMAC, the BareMetalHost ↔ Agent controller (notes §6): matches a BMH to
 * the Agent whose inventory has its boot MAC, approves the Agent and copies
 * role, hostname, machine config pool, installer args, ignition overrides,
 * installation disk (root device hints), cluster reference, node and agent
 * labels from the BMH's annotations; sets the BMH's image (legacy flow) or
 * custom deploy method (converged flow), the detached and inspect
 * annotations and the hardware details from the Agent's inventory. One
 * merge patch per object per reconcile. No service calls.
 */

#include "hub-controller.h"

typedef struct BmacObserved {
        HubObserved base; /* object: the BareMetalHost */
        bool converged; /* --converged-flow */
        usec_t cooldown; /* --image-cooldown */
        json_object *agent; /* the matched Agent, or NULL */
        json_object *infraenv; /* the BMH's InfraEnv (label), or NULL */
        json_object *ppi; /* the PreprovisioningImage of the same name, or NULL */
} BmacObserved;

extern const HubControllerType hub_bmac_controller;

int bmac_decide(const HubObserved *o, HubPlan *plan);
void bmac_observed_done(HubObserved *o);

/* The id of the disk of an Agent's status.inventory that a BMH's
 * spec.rootDeviceHints select (an eligible one; a multipath disk first),
 * or "/dev/not-found-by-hints". NULL when there are no hints. */
char *bmac_disk_by_hints(json_object *hints, json_object *inventory);
/* The hardware details annotation of an Agent (inspect.metal3.io/hardwaredetails). */
int bmac_hardware_details(json_object *agent, json_object **ret);
