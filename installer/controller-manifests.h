/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The manifests the bootstrap lays into /opt/openshift/manifests before
 * bootkube starts, so that bootkube creates them in the new cluster (notes
 * §4.1 step 9, §7): the assisted-installer-controller's Namespace,
 * ServiceAccount, ClusterRole and ClusterRoleBinding (the controller
 * approves CSRs and watches nodes, cluster operators and BareMetalHosts
 * across the cluster), Role and RoleBinding (its own namespace: events,
 * pods, config maps, jobs), NetworkPolicy, ConfigMap, Secret and the Job
 * that runs --controller-image; and the MachineConfig that lets the
 * bootstrap's root ssh to the masters (notes §4.1 step 5).
 *
 * Pure: objects in, objects out; installer/bootstrap.c writes them as YAML.
 * Each object is a complete Kubernetes object (apiVersion, kind,
 * metadata.name and, when namespaced, metadata.namespace) of a served API
 * version.
 */

#include <stdbool.h>
#include <stddef.h>

#include "assisted/controller-contract.h"

typedef struct json_object json_object;

#define SSH_MACHINE_CONFIG "99-assisted-installer-master-ssh"
#define SSH_MANIFEST_FILE "99_openshift-machineconfig_99-assisted-installer-master-ssh.yaml"

typedef struct ControllerManifestsInput {
        const char *cluster_id;
        const char *inventory_url; /* --url */
        bool skip_cert_verification; /* --insecure */
        const char *ca_cert_path; /* --cacert; also mounted from the node */
        bool check_cluster_version;
        int control_plane_count; /* 1: single node (tolerations, bootstrap secrets) */
        const char *must_gather_image;
        const char *pull_secret_token; /* into the Secret only */
        const char *controller_image;
        const char *openshift_version;
        const char
                *service_ips; /* --service-ips: comma list; hostAliases of assisted-api.local.openshift.io */
        bool notify_num_reboots;
} ControllerManifestsInput;

typedef struct Manifest {
        char *file; /* base name in the manifests directory */
        json_object *object;
        bool secret; /* holds a credential: written 0600 */
} Manifest;

void manifests_free(Manifest *m, size_t n);

/* The controller's manifests in the order bootkube is best served (the
 * namespace first). */
int controller_manifests(const ControllerManifestsInput *in, Manifest **ret, size_t *ret_n);

/* MachineConfig 99-assisted-installer-master-ssh: role master, Ignition
 * 3.1.0, the core user with the public key. */
json_object *ssh_machine_config(const char *public_key);
