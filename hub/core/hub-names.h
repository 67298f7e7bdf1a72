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
        /* Cluster API (cradle-hub --capi): CAPI core's and CAPOA's kinds */
        HUB_KIND_CAPI_CLUSTER,
        HUB_KIND_MACHINE,
        HUB_KIND_OACP,
        HUB_KIND_OAC,
        /* read only: the worker replicas a cluster's MachineDeployments ask for */
        HUB_KIND_MACHINEDEPLOYMENT,
        _HUB_KIND_MAX,
        /* a write's target of a kind the hub does not watch: its resource
         * from the body's apiVersion and kind (creates only) */
        HUB_KIND_OTHER = _HUB_KIND_MAX + 1,
        _HUB_KIND_INVALID = -22,
} HubKind;

typedef struct HubKindInfo {
        HubKind kind;
        KubeResource resource;
        /* the informer's label selector (Secrets and ConfigMaps: only the
         * labelled ones, as upstream's filtered cache) or NULL */
        const char *label_selector;
        /* the CRD may be missing on a hub (metal3 without the bare-metal
         * operator, hive without hive; MachineDeployments on a management
         * cluster): the kind is then skipped */
        bool optional;
        /* a Cluster API kind: watched only with --capi (hub_cache_want_cluster_api()) */
        bool cluster_api;
} HubKindInfo;

const HubKindInfo *hub_kind_info(HubKind k);
const char *hub_kind_to_string(HubKind k);
HubKind hub_kind_from_string(const char *s);

/* ---- groups ---- */

#define HUB_GROUP_AGENT_INSTALL "agent-install.openshift.io"
#define HUB_GROUP_HIVE "hive.openshift.io"
#define HUB_GROUP_HIVE_EXTENSIONS "extensions.hive.openshift.io"
#define HUB_GROUP_METAL3 "metal3.io"
/* the Cluster API control plane of CAPOA (cluster-api-provider-openshift-
 * assisted), read when it owns an AgentClusterInstall (cluster.h) */
#define HUB_GROUP_CAPI_CONTROL_PLANE "controlplane.cluster.x-k8s.io"
#define HUB_KIND_NAME_CAPI_CONTROL_PLANE "OpenshiftAssistedControlPlane"
#define HUB_RESOURCE_CAPI_CONTROL_PLANE "openshiftassistedcontrolplanes"
#define HUB_CAPI_CONTROL_PLANE_VERSION "v1alpha3"
/* cradle-hub as the Cluster API provider (--capi, capi-*.c): CAPI core
 * (cluster-api ae7ff047, contract v1beta2) and CAPOA's bootstrap kind */
#define HUB_GROUP_CAPI "cluster.x-k8s.io"
#define HUB_CAPI_VERSION "v1beta2"
#define HUB_GROUP_CAPI_BOOTSTRAP "bootstrap.cluster.x-k8s.io"
#define HUB_CAPI_BOOTSTRAP_VERSION "v1alpha2"
#define HUB_KIND_NAME_CAPI_BOOTSTRAP "OpenshiftAssistedConfig"
#define HUB_CAPI_LABEL_CLUSTER_NAME "cluster.x-k8s.io/cluster-name"
/* --watch-filter: Cluster API's label for sharding objects between provider instances */
#define HUB_CAPI_LABEL_WATCH_FILTER "cluster.x-k8s.io/watch-filter"
#define HUB_CAPI_LABEL_CONTROL_PLANE "cluster.x-k8s.io/control-plane"
#define HUB_CAPI_ANNOTATION_PAUSED "cluster.x-k8s.io/paused"
#define HUB_CAPI_ANNOTATION_CLONED_FROM_NAME "cluster.x-k8s.io/cloned-from-name"
#define HUB_CAPI_ANNOTATION_CLONED_FROM_GROUPKIND "cluster.x-k8s.io/cloned-from-groupkind"
#define HUB_CAPI_SECRET_TYPE "cluster.x-k8s.io/secret"
/* CAPOA's label on its configs (capi.md §3.2) */
#define HUB_CAPI_LABEL_CONFIG "bootstrap.cluster.x-k8s.io/openshiftAssistedConfig"
/* conditions (the contracts' and CAPOA's types) */
#define HUB_CAPI_COND_PAUSED "Paused"
#define HUB_CAPI_COND_AVAILABLE "Available"
#define HUB_CAPI_COND_KUBECONFIG_AVAILABLE "KubeconfigAvailable"
#define HUB_CAPI_COND_MACHINES_CREATED "MachinesCreated"
#define HUB_CAPI_COND_DATA_SECRET_AVAILABLE "DataSecretAvailable"
#define HUB_CAPI_COND_READY "Ready"
/* cradle's own condition on a Machine: its host's install stage and percentage */
#define HUB_CAPI_COND_HOST_INSTALLATION "HostInstallation"
/* its reason on a Machine the installation started without (added on day 2) */
#define HUB_CAPI_REASON_NOT_IN_DAY1 "NotInDay1Installation"
/* a MachineHealthCheck's conditions on a Machine: the first, and the
 * second while the Machine's owner (a MachineSet, a control plane) is to
 * remediate it; the control plane's reasons on the second as KCP's */
#define HUB_CAPI_COND_HEALTH_CHECK_SUCCEEDED "HealthCheckSucceeded"
#define HUB_CAPI_COND_OWNER_REMEDIATED "OwnerRemediated"
#define HUB_CAPI_REASON_REMEDIATION_DEFERRED "RemediationDeferred"
#define HUB_CAPI_REASON_CANNOT_BE_REMEDIATED "CannotBeRemediated"
#define HUB_CAPI_REASON_MACHINE_DELETING "MachineDeleting"
/* KCP's condition while an object waits on its finalizer (the
 * control-plane contract's list of conditions to align with) */
#define HUB_CAPI_COND_DELETING "Deleting"

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
/* the service refused the last registration (hub-claim.h) */
#define HUB_ANNOTATION_REGISTRATION_REFUSED "cradle.agent-install.openshift.io/registration-refused"
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
/* CAPOA's (capi.md §3.3 step 2, §3.6 step 1), kept by cradle-hub --capi */
#define HUB_FINALIZER_CAPI_CONTROL_PLANE \
        "openshiftassistedcontrolplane.controlplane.cluster.x-k8s.io/deprovision"
#define HUB_FINALIZER_CAPI_BOOTSTRAP "openshiftassistedconfig.bootstrap.cluster.x-k8s.io/deprovision"

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

/* ---- the installation side (notes §1, §5): ClusterDeployment, AgentClusterInstall ---- */

#define HUB_GROUP_HIVE_EXTENSIONS_VERSION "v1beta1"
#define HUB_ANNOTATION_INSTALL_CONFIG_OVERRIDES "agent-install.openshift.io/install-config-overrides"
#define HUB_ANNOTATION_IGNORED_CLUSTER_VALIDATIONS "agent-install.openshift.io/ignored-cluster-validations"
#define HUB_ANNOTATION_IGNORED_HOST_VALIDATIONS "agent-install.openshift.io/ignored-host-validations"
#define HUB_ANNOTATION_RECONCILE_PAUSE "hive.openshift.io/reconcile-pause"
#define HUB_LABEL_ACI_CONSUMER "agentclusterinstalls.agent-install.openshift.io/consumer"
#define HUB_LABEL_CD_NAME "hive.openshift.io/cluster-deployment-name"
#define HUB_LABEL_SECRET_TYPE "hive.openshift.io/secret-type"
#define HUB_SECRET_TYPE_KUBECONFIG "kubeconfig"
#define HUB_SECRET_TYPE_KUBEADMINCREDS "kubeadmincreds"
/* a ClusterImageSet's release as `oc adm release info` reads it (upstream's
 * docs/enhancements/label-clusterimagesets.md, proposed 2022 and not in the
 * service's controllers): what a digest-pinned release states about itself */
#define HUB_LABEL_CIS_OPENSHIFT_VERSION "agent-install.openshift.io/openshift-version"
#define HUB_LABEL_CIS_ARCHITECTURE "agent-install.openshift.io/architecture"
/* the hub's own: what the ignored-validations annotations last set, and
 * the custom manifests last synced (a digest of the ConfigMaps' data) */
#define HUB_ANNOTATION_IGNORED_VALIDATIONS_DIGEST "cradle.agent-install.openshift.io/ignored-validations"
#define HUB_ANNOTATION_MANIFESTS_DIGEST "cradle.agent-install.openshift.io/manifests-digest"

/* ACI condition types (notes §1.8) */
#define HUB_COND_REQUIREMENTS_MET "RequirementsMet"
#define HUB_COND_VALIDATED "Validated"
#define HUB_COND_COMPLETED "Completed"
#define HUB_COND_FAILED "Failed"
#define HUB_COND_STOPPED "Stopped"
#define HUB_COND_LAST_PREPARATION_FAILED "LastInstallationPreparationFailed"

/* SpecSynced True of the ACI: upstream puts the reason in the message */
#define HUB_MSG_ACI_SYNC_OK "SyncOK"

#define HUB_REASON_INSUFFICIENT_AGENTS "InsufficientAgents"
#define HUB_MSG_INSUFFICIENT_AGENTS \
        "The cluster currently requires exactly %u master agents, %u arbiter agents and %u worker agents, " \
        "but currently registered %u master agents, %u arbiter agents and %u worker agents"
#define HUB_REASON_UNSYNCED_AGENTS "UnsyncedAgents"
#define HUB_MSG_UNSYNCED_AGENTS "The cluster currently has %u agents with spec error"
#define HUB_REASON_UNAPPROVED_AGENTS "UnapprovedAgents"
#define HUB_MSG_UNAPPROVED_AGENTS "The installation is pending on the approval of %u agents"
#define HUB_REASON_CLUSTER_READY "ClusterIsReady"
#define HUB_MSG_CLUSTER_READY "The cluster is ready to begin the installation"
#define HUB_REASON_CLUSTER_NOT_READY "ClusterNotReady"
#define HUB_MSG_CLUSTER_NOT_READY "The cluster is not ready to begin the installation"
#define HUB_REASON_CLUSTER_ALREADY_INSTALLING "ClusterAlreadyInstalling"
#define HUB_MSG_CLUSTER_ALREADY_INSTALLING "The cluster requirements are met"
#define HUB_REASON_CLUSTER_INSTALLATION_STOPPED "ClusterInstallationStopped"
#define HUB_MSG_CLUSTER_INSTALLATION_STOPPED "The cluster installation stopped"
#define HUB_REASON_UNKNOWN_STATUS "UnknownStatus"
#define HUB_MSG_UNKNOWN_STATUS "The installation status is currently not recognized:"

#define HUB_REASON_VALIDATIONS_FAILING "ValidationsFailing"
#define HUB_MSG_CLUSTER_VALIDATIONS_FAILING "The cluster's validations are failing:"
#define HUB_REASON_VALIDATIONS_USER_PENDING "ValidationsUserPending"
#define HUB_MSG_CLUSTER_VALIDATIONS_USER_PENDING "The cluster's validations are pending for user:"
#define HUB_REASON_VALIDATIONS_PASSING "ValidationsPassing"
#define HUB_MSG_CLUSTER_VALIDATIONS_PASSING "The cluster's validations are passing"
#define HUB_REASON_VALIDATIONS_UNKNOWN "ValidationsUnknown"
#define HUB_MSG_CLUSTER_VALIDATIONS_UNKNOWN "The cluster's validations have not yet been calculated"

#define HUB_REASON_INSTALLATION_COMPLETED "InstallationCompleted"
#define HUB_MSG_INSTALLATION_COMPLETED "The installation has completed:"
#define HUB_REASON_INSTALLATION_FAILED "InstallationFailed"
#define HUB_MSG_INSTALLATION_HAS_FAILED "The installation has failed:"
#define HUB_REASON_INSTALLATION_NOT_STARTED "InstallationNotStarted"
#define HUB_MSG_INSTALLATION_NOT_STARTED "The installation has not yet started"
#define HUB_REASON_INSTALLATION_ON_HOLD "InstallationOnHold"
#define HUB_MSG_INSTALLATION_ON_HOLD "The installation is on hold. To unhold set holdInstallation to false"
#define HUB_REASON_INSTALLATION_IN_PROGRESS "InstallationInProgress"
#define HUB_MSG_INSTALLATION_IN_PROGRESS "The installation is in progress:"

#define HUB_MSG_INSTALLATION_FAILED "The installation failed:"
#define HUB_REASON_INSTALLATION_NOT_FAILED "InstallationNotFailed"
#define HUB_MSG_INSTALLATION_NOT_FAILED "The installation has not failed"

#define HUB_MSG_STOPPED_FAILED "The installation has stopped due to error"
#define HUB_REASON_INSTALLATION_CANCELLED "InstallationCancelled"
#define HUB_MSG_STOPPED_CANCELLED "The installation has stopped because it was cancelled"
#define HUB_MSG_STOPPED_COMPLETED "The installation has stopped because it completed successfully"
#define HUB_REASON_INSTALLATION_NOT_STOPPED "InstallationNotStopped"
#define HUB_MSG_INSTALLATION_NOT_STOPPED "The installation is waiting to start or in progress"

/* LastInstallationPreparationFailed: upstream's reasons are sentences */
#define HUB_REASON_PREPARATION_NEVER "Cluster preparation has never been performed for this cluster"
#define HUB_REASON_PREPARATION_OK "There is no failing prior preparation attempt"
#define HUB_REASON_PREPARATION_FAILED "The last installation preparation failed"

#define HUB_REASON_NOT_AVAILABLE "NotAvailable"
#define HUB_MSG_NOT_AVAILABLE "Information not available"

/* ---- Agent conditions (notes §5.6) ---- */

#define HUB_COND_CONNECTED "Connected"
#define HUB_COND_INSTALLED "Installed"
#define HUB_COND_BOUND "Bound"
#define HUB_COND_CLEANUP "Cleanup"

#define HUB_REASON_AGENT_DISCONNECTED "AgentIsDisconnected"
#define HUB_MSG_AGENT_DISCONNECTED \
        "The agent has not contacted the installation service in some time, user action should be taken"
#define HUB_REASON_AGENT_CONNECTED "AgentIsConnected"
#define HUB_MSG_AGENT_CONNECTED "The agent's connection to the installation service is unimpaired"
#define HUB_REASON_AGENT_READY "AgentIsReady"
#define HUB_MSG_AGENT_READY "The agent is ready to begin the installation"
#define HUB_REASON_AGENT_NOT_APPROVED "AgentIsNotApproved"
#define HUB_MSG_AGENT_NOT_APPROVED "The agent is not approved"
#define HUB_REASON_AGENT_NOT_READY "AgentNotReady"
#define HUB_MSG_AGENT_NOT_READY "The agent is not ready to begin the installation"
#define HUB_REASON_AGENT_ALREADY_INSTALLING "AgentAlreadyInstalling"
#define HUB_MSG_AGENT_ALREADY_INSTALLING "Installation already started and is in progress"
#define HUB_REASON_AGENT_INSTALLATION_STOPPED "AgentInstallationStopped"
#define HUB_MSG_AGENT_INSTALLATION_STOPPED "The agent installation stopped"
#define HUB_REASON_BINDING "Binding"
#define HUB_MSG_BINDING "The agent is currently binding to a cluster deployment"
#define HUB_REASON_UNBINDING "Unbinding"
#define HUB_MSG_UNBINDING "The agent is currently unbinding from a cluster deployment"
#define HUB_REASON_UNBINDING_PENDING "UnbindingPendingUserAction"
#define HUB_MSG_UNBINDING_PENDING "The agent is currently unbinding; Pending host reboot from infraenv image"
#define HUB_REASON_UNBOUND "Unbound"
#define HUB_MSG_UNBOUND "The agent is not bound to any cluster deployment"
#define HUB_REASON_BOUND "Bound"
#define HUB_MSG_BOUND "The agent is bound to a cluster deployment"
#define HUB_MSG_AGENT_VALIDATIONS_FAILING "The agent's validations are failing:"
#define HUB_MSG_AGENT_VALIDATIONS_USER_PENDING "The agent's validations are pending for user:"
#define HUB_MSG_AGENT_VALIDATIONS_UNKNOWN "The agent's validations have not yet been calculated"
#define HUB_MSG_AGENT_VALIDATIONS_PASSING "The agent's validations are passing"
#define HUB_REASON_CLEANUP_FAILED "CleanupFailed"

/* Agent annotations mirroring the host (for backup and restore, notes §5.2) */
#define HUB_ANNOTATION_AGENT_STATE "agent.agent-install.openshift.io/state"
#define HUB_ANNOTATION_AGENT_ROLE "agent.agent-install.openshift.io/role"
#define HUB_ANNOTATION_AGENT_INVENTORY "agent.agent-install.openshift.io/inventory"
/* cradle's: what the inventory annotation leaves out when the whole was too large */
#define HUB_ANNOTATION_AGENT_INVENTORY_TRIMMED "cradle.agent-install.openshift.io/inventory-trimmed"
#define HUB_ANNOTATION_AGENT_VALIDATIONS "agent.agent-install.openshift.io/validations-info"
#define HUB_ANNOTATION_AGENT_STAGE "agent.agent-install.openshift.io/current-stage"
#define HUB_ANNOTATION_SKIP_SPOKE_CLEANUP "agent.agent-install.openshift.io/skip-spoke-cleanup"

/* ---- requeue delays of the installation side ---- */

/* the day-2 CSR loop (APPROVE_CSRS_REQUEUE_DURATION) */
#define HUB_REQUEUE_APPROVE_CSRS (60 * USEC_PER_SEC)
