/* SPDX-License-Identifier: Apache-2.0 */
#include "hub-private.h"
#include "infraenv.h"

/* The controllers, in start order. The installation side (issue 14) adds
 * its types here. */
const HubControllerType *const hub_controller_types[] = {
        &hub_infraenv_controller,
};
const size_t hub_n_controller_types = ELEMENTSOF(hub_controller_types);
