/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The manager's options and the table of controllers (hub.c). A controller
 * type is declared in its own header and listed in hub_controller_types[].
 */

#include <stdbool.h>

#include "hub-controller.h"
#include "timeutil.h"

typedef struct HubOptions {
        char *kubeconfig;
        char *kube_context;
        double kube_api_qps;
        unsigned kube_api_burst;
        char *service_url;
        char *service_ca_file;
        char *service_token_file;
        char **namespaces;
        bool leader_elect;
        char *leader_election_id;
        char *leader_election_namespace;
        char *health_probe_bind_address;
        char *metrics_bind_address;
        usec_t service_poll_interval;
        usec_t service_resync_period;
        usec_t service_timeout;
        usec_t sync_period;
        usec_t image_cooldown;
        usec_t approve_csrs_requeue;
        usec_t kubeconfig_cert_expiration;
        usec_t kubeconfig_cert_renew_before;
        char *image_type;
        char *watch_filter;
        bool converged_flow;
        bool capi;
        unsigned max_concurrent_reconciles;
        char *log_level;
} HubOptions;

/* The controllers of the hub, in start order. */
extern const HubControllerType *const hub_controller_types[];
extern const size_t hub_n_controller_types;
