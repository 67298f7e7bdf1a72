/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The PreprovisioningImage controller (notes §7), for BMO's converged
 * flow: the image URL and format from the InfraEnv (ISO, or kernel +
 * initrd + rootfs), ImageReady and ImageError with their reasons, the 60 s
 * cool-down, the InfraEnv's enable-ironic-agent annotation, a reboot of
 * the BMH when the URL changes, the finalizer.
 *
 * Not done here: the ironic agent ignition upstream adds to the discovery
 * image through an internal call (NO-REST in the notes); see README.md.
 */

#include "hub-controller.h"

typedef struct PpiObserved {
        HubObserved base; /* object: the PreprovisioningImage */
        json_object *infraenv; /* from the PPI's infraenvs label, or NULL */
        json_object *bmh; /* of the same name, or NULL */
        int bmh_error; /* reading it failed (not -ENOENT) */
        usec_t cooldown; /* --image-cooldown */
} PpiObserved;

extern const HubControllerType hub_ppi_controller;

int ppi_decide(const HubObserved *o, HubPlan *plan);
void ppi_observed_done(HubObserved *o);
