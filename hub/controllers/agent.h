/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The Agent controller. In REST mode the service creates no Agent objects
 * (notes §5.0): this controller's key is "<namespace>/<host id>" whether
 * or not the Agent exists, and it
 *
 * - creates the Agent of a registered host (name = host id, the InfraEnv's
 *   label and agentLabels, an ownerReference to the InfraEnv, spec
 *   {approved: false, role: ""} and the InfraEnv's clusterRef and
 *   propagated node labels),
 * - moves an Agent whose host registered again from another InfraEnv of
 *   the namespace (the old host record deregistered, spec reset, labels and
 *   owner moved),
 * - keeps status.inventory (§5.4), the inventory labels and the InfraEnv
 *   label current.
 *
 * The installation side (agent-install.h) adds the finalizer, spec →
 * service, binding, conditions, the rest of the status, day-2 and
 * deletion.
 */

#include "agent-install.h"
#include "hub-controller.h"

typedef struct AgentObserved {
        HubObserved base; /* object: the Agent, or NULL */
        /* the host: its latest registration among the namespace's
         * infra-envs, or NULL */
        json_object *host;
        json_object *infraenv; /* the InfraEnv of that registration */
        char *infra_env_id;
        /* the InfraEnv the Agent's label names, when it is another one,
         * and the host's record there if it still exists */
        json_object *old_infraenv;
        char *old_infra_env_id;
        json_object *old_host;
        /* a host that could not be read (the service down) */
        int host_error;
        char *host_message;
        /* the installation side's facts (agent-install.h) */
        AgentInstallObserved install;
} AgentObserved;

extern const HubControllerType hub_agent_controller;

int agent_decide(const HubObserved *o, HubPlan *plan);
void agent_observed_done(HubObserved *o);

/* status.inventory of an Agent from the service's inventory JSON text
 * (notes §5.4, field by field); -EBADMSG when the text does not parse. */
int agent_inventory_status(const char *inventory, json_object **ret);
/* The inventory labels (notes §5.4) into the object's labels. */
int agent_inventory_labels(json_object *agent, json_object *status_inventory);
/* A label value as upstream sanitizes it (characters outside
 * [-A-Za-z0-9_.] removed), NULL when still not a valid label value. */
char *agent_label_value(const char *s);
