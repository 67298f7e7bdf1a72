/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Wire names of the hub, in one place: the kinds it reads and writes, and
 * the labels, annotations, finalizers, condition types, reasons and
 * messages of ../shared/reference/notes/hub.md (the "notes") and of the
 * CRDs in tests/reference/assisted-service. A string a controller writes
 * that differs from those is a bug; tests/hub/test-hub-names.c checks the
 * kinds against the CRDs.
 */

#include <stdbool.h>

#include "kube/kube.h"

/* ---- kinds ---- */

typedef enum HubKind {
        HUB_KIND_INFRAENV,
        HUB_KIND_NMSTATECONFIG,
        HUB_KIND_AGENT,
        HUB_KIND_BMH,
        HUB_KIND_PPI,
        HUB_KIND_CLUSTERDEPLOYMENT,
        HUB_KIND_AGENTCLUSTERINSTALL,
        HUB_KIND_CLUSTERIMAGESET,
        HUB_KIND_SECRET,
        HUB_KIND_CONFIGMAP,
        _HUB_KIND_MAX,
        _HUB_KIND_INVALID = -22,
} HubKind;

typedef struct HubKindInfo {
        HubKind kind;
        KubeResource resource;
        /* the informer's label selector (Secrets and ConfigMaps: only the
         * labelled ones, as upstream's filtered cache) or NULL */
        const char *label_selector;
        /* the CRD may be missing on a hub (metal3 without the bare-metal
         * operator, hive without hive): the kind is then skipped */
        bool optional;
} HubKindInfo;

const HubKindInfo *hub_kind_info(HubKind k);
const char *hub_kind_to_string(HubKind k);
HubKind hub_kind_from_string(const char *s);

/* ---- groups ---- */

#define HUB_GROUP_AGENT_INSTALL "agent-install.openshift.io"
#define HUB_GROUP_HIVE "hive.openshift.io"
#define HUB_GROUP_HIVE_EXTENSIONS "extensions.hive.openshift.io"
#define HUB_GROUP_METAL3 "metal3.io"

/* ---- labels (notes §0, §5.4, §6) ---- */

#define HUB_LABEL_WATCH "agent-install.openshift.io/watch"
#define HUB_LABEL_BACKUP "cluster.open-cluster-management.io/backup"
#define HUB_LABEL_INFRAENV "infraenvs.agent-install.openshift.io"
#define HUB_LABEL_CD_NAMESPACE "agent-install.openshift.io/clusterdeployment-namespace"
#define HUB_LABEL_BMH "agent-install.openshift.io/bmh"
#define HUB_LABEL_VELERO_EXCLUDE "velero.io/exclude-from-backup"
#define HUB_LABEL_INVENTORY_PREFIX "inventory.agent-install.openshift.io/"
#define HUB_LABEL_STORAGE_NONROTATIONAL "inventory.agent-install.openshift.io/storage-hasnonrotationaldisk"
#define HUB_LABEL_CPU_ARCHITECTURE "inventory.agent-install.openshift.io/cpu-architecture"
#define HUB_LABEL_CPU_VIRTENABLED "inventory.agent-install.openshift.io/cpu-virtenabled"
#define HUB_LABEL_HOST_MANUFACTURER "inventory.agent-install.openshift.io/host-manufacturer"
#define HUB_LABEL_HOST_PRODUCTNAME "inventory.agent-install.openshift.io/host-productname"
#define HUB_LABEL_HOST_ISVIRTUAL "inventory.agent-install.openshift.io/host-isvirtual"

/* ---- annotations ---- */

/* the hub's own: the link to the service object (hub/README.md) */
#define HUB_ANNOTATION_PREFIX "cradle.agent-install.openshift.io/"
#define HUB_ANNOTATION_INFRAENV_ID "cradle.agent-install.openshift.io/infra-env-id"
#define HUB_ANNOTATION_CLUSTER_ID "cradle.agent-install.openshift.io/cluster-id"
#define HUB_ANNOTATION_REGISTERING "cradle.agent-install.openshift.io/registering"
/* a digest of the pull secret last sent to the service (never the secret) */
#define HUB_ANNOTATION_PULL_SECRET_DIGEST "cradle.agent-install.openshift.io/pull-secret-digest"

#define HUB_ANNOTATION_INVENTORY_VERSION "inventory.agent-install.openshift.io/version"
#define HUB_INVENTORY_LABELS_VERSION "0.1"
#define HUB_ANNOTATION_PROPAGATE_NODE_LABELS "infraenv.agent-install.openshift.io/propagate-node-labels"
#define HUB_ANNOTATION_INHERITED_NODE_LABELS "agent.agent-install.openshift.io/inherited-node-labels"
#define HUB_ANNOTATION_ENABLE_IRONIC "infraenv.agent-install.openshift.io/enable-ironic-agent"
#define HUB_ANNOTATION_IRONIC_IMAGE_OVERRIDE \
        "infraenv.agent-install.openshift.io/ironic-agent-image-override"
#define HUB_ANNOTATION_IP_FAMILY "infraenv.agent-install.openshift.io/ip-family"

/* BMAC (notes §6) */
#define HUB_BMAC_ROLE "bmac.agent-install.openshift.io/role"
#define HUB_BMAC_HOSTNAME "bmac.agent-install.openshift.io/hostname"
#define HUB_BMAC_MCP "bmac.agent-install.openshift.io/machine-config-pool"
#define HUB_BMAC_INSTALLER_ARGS "bmac.agent-install.openshift.io/installer-args"
#define HUB_BMAC_IGNITION_OVERRIDES "bmac.agent-install.openshift.io/ignition-config-overrides"
#define HUB_BMAC_CLUSTER_REFERENCE "bmac.agent-install.openshift.io/cluster-reference"
#define HUB_BMAC_NODE_LABEL_PREFIX "bmac.agent-install.openshift.io.node-label."
#define HUB_BMAC_AGENT_LABEL_PREFIX "bmac.agent-install.openshift.io.agent-label."
#define HUB_BMAC_FENCING_SECRET_NAME "bmac.agent-install.openshift.io/fencing-credentials-secret-name"
#define HUB_BMAC_REMOVE_ON_DELETE "bmac.agent-install.openshift.io/remove-agent-and-node-on-delete"
#define HUB_BMAC_ALLOW_PROVISIONED "bmac.agent-install.openshift.io/allow-provisioned-host-management"
#define HUB_BMH_DETACHED "baremetalhost.metal3.io/detached"
#define HUB_BMH_PAUSED "baremetalhost.metal3.io/paused"
#define HUB_BMH_STATUS "baremetalhost.metal3.io/status"
#define HUB_BMH_INSPECT "inspect.metal3.io"
#define HUB_BMH_HARDWARE_DETAILS "inspect.metal3.io/hardwaredetails"
#define HUB_BMH_REBOOT "reboot.metal3.io"
#define HUB_BMAC_CONTROLLER_NAME "assisted-service-controller"
#define HUB_CUSTOM_DEPLOY_METHOD "start_assisted_install"

/* ---- finalizers ---- */

#define HUB_FINALIZER_INFRAENV "infraenv.agent-install.openshift.io/ai-deprovision"
#define HUB_FINALIZER_AGENT "agent.agent-install.openshift.io/ai-deprovision"
#define HUB_FINALIZER_BMAC "bmac.agent-install.openshift.io/deprovision"
#define HUB_FINALIZER_PPI "preprovisioningimage.agent-install.openshift.io/ai-deprovision"
#define HUB_FINALIZER_CD "clusterdeployments.agent-install.openshift.io/ai-deprovision"
#define HUB_FINALIZER_ACI "agentclusterinstall.agent-install.openshift.io/ai-deprovision"

/* ---- InfraEnv (notes §3) ---- */

#define HUB_COND_IMAGE_CREATED "ImageCreated"
#define HUB_REASON_INFRAENV_AVAILABLE "InfraEnvAvailable"
#define HUB_MSG_INFRAENV_AVAILABLE "InfraEnv is available"
#define HUB_MSG_IMAGE_HAS_BEEN_CREATED "Image has been created"
#define HUB_REASON_IMAGE_CREATED "ImageCreated"
#define HUB_REASON_IMAGE_CREATION_ERROR "ImageCreationError"
#define HUB_MSG_FAILED_TO_CREATE "Failed to create image"
#define HUB_REASON_MISSING_CD "MissingClusterDeployment"
#define HUB_MSG_CD_MISSING "ClusterDeployment is missing"

/* ---- PreprovisioningImage (notes §7) ---- */

#define HUB_COND_IMAGE_READY "ImageReady"
#define HUB_COND_IMAGE_ERROR "ImageError"
#define HUB_REASON_UNSUPPORTED_FORMAT "UnsupportedImageFormat"
#define HUB_MSG_UNSUPPORTED_FORMAT "Unsupported image format"
#define HUB_REASON_INFRAENV_NOT_AVAILABLE "InfraEnvNotAvailable"
#define HUB_REASON_ARCH_MISMATCH "InfraEnvArchMismatch"
#define HUB_REASON_IRONIC_FAILURE "IronicAgentIgnitionUpdateFailure"
#define HUB_REASON_WAITING_IMAGE "WaitingForInfraEnvImageToBeCreated"
#define HUB_MSG_WAITING_IMAGE "Waiting for InfraEnv image to be created"
#define HUB_REASON_WAITING_COOLDOWN "WaitingForInfraEnvImageToCoolDown"
#define HUB_MSG_WAITING_COOLDOWN "Waiting for InfraEnv image to cool down"

/* ---- conditions shared by the installation side (notes §1.8, §5.6) ---- */

#define HUB_COND_SPEC_SYNCED "SpecSynced"
#define HUB_REASON_SYNC_OK "SyncOK"
#define HUB_REASON_BACKEND_ERROR "BackendError"
#define HUB_REASON_INPUT_ERROR "InputError"
#define HUB_MSG_SPEC_SYNCED "The Spec has been successfully applied"
#define HUB_MSG_BACKEND_ERROR "The Spec could not be synced due to backend error"
#define HUB_MSG_INPUT_ERROR "The Spec could not be synced due to an input error"

/* ---- requeue delays (notes §10) ---- */

#define HUB_REQUEUE_ON_ERROR (10 * USEC_PER_SEC)
#define HUB_REQUEUE_LONGER_ON_ERROR (60 * USEC_PER_SEC)
#define HUB_REQUEUE_RECOVERABLE (20 * USEC_PER_SEC)
#define HUB_IMAGE_COOLDOWN (60 * USEC_PER_SEC)

/* ---- condition status ---- */

#define HUB_TRUE "True"
#define HUB_FALSE "False"
#define HUB_UNKNOWN "Unknown"
