/* SPDX-License-Identifier: Apache-2.0 */
#include "hub-private.h"
#include "agent.h"
#include "bmac.h"
#include "capi-bootstrap.h"
#include "capi-controlplane.h"
#include "cluster.h"
#include "infraenv.h"
#include "ppi.h"

/* The controllers, in start order. */
const HubControllerType *const hub_controller_types[] = {
        &hub_infraenv_controller,
        &hub_agent_controller,
        &hub_bmac_controller,
        &hub_ppi_controller,
        &hub_cd_controller,
        &hub_aci_controller,
        /* the Cluster API provider, only with --capi */
        &hub_capi_controlplane_controller,
        &hub_capi_bootstrap_controller,
};
const size_t hub_n_controller_types = ELEMENTSOF(hub_controller_types);
