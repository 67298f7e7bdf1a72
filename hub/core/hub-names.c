/* SPDX-License-Identifier: Apache-2.0 */
#include "hub-names.h"
#include "macro.h"

/* The resources as the CRDs in tests/reference/assisted-service declare
 * them (storage versions). */
static const HubKindInfo kinds[_HUB_KIND_MAX] = {
        [HUB_KIND_INFRAENV] = {
                .kind = HUB_KIND_INFRAENV,
                .resource = { HUB_GROUP_AGENT_INSTALL, "v1beta1", "infraenvs", "InfraEnv", true },
        },
        [HUB_KIND_NMSTATECONFIG] = {
                .kind = HUB_KIND_NMSTATECONFIG,
                .resource = { HUB_GROUP_AGENT_INSTALL, "v1beta1", "nmstateconfigs", "NMStateConfig", true },
        },
        [HUB_KIND_AGENT] = {
                .kind = HUB_KIND_AGENT,
                .resource = { HUB_GROUP_AGENT_INSTALL, "v1beta1", "agents", "Agent", true },
        },
        [HUB_KIND_BMH] = {
                .kind = HUB_KIND_BMH,
                .resource = { HUB_GROUP_METAL3, "v1alpha1", "baremetalhosts", "BareMetalHost", true },
                .optional = true,
        },
        [HUB_KIND_PPI] = {
                .kind = HUB_KIND_PPI,
                .resource = { HUB_GROUP_METAL3, "v1alpha1", "preprovisioningimages", "PreprovisioningImage",
                              true },
                .optional = true,
        },
        [HUB_KIND_CLUSTERDEPLOYMENT] = {
                .kind = HUB_KIND_CLUSTERDEPLOYMENT,
                .resource = { HUB_GROUP_HIVE, "v1", "clusterdeployments", "ClusterDeployment", true },
                .optional = true,
        },
        [HUB_KIND_AGENTCLUSTERINSTALL] = {
                .kind = HUB_KIND_AGENTCLUSTERINSTALL,
                .resource = { HUB_GROUP_HIVE_EXTENSIONS, "v1beta1", "agentclusterinstalls",
                              "AgentClusterInstall", true },
                .optional = true,
        },
        [HUB_KIND_CLUSTERIMAGESET] = {
                .kind = HUB_KIND_CLUSTERIMAGESET,
                .resource = { HUB_GROUP_HIVE, "v1", "clusterimagesets", "ClusterImageSet", false },
                .optional = true,
        },
        [HUB_KIND_SECRET] = {
                .kind = HUB_KIND_SECRET,
                .resource = { "", "v1", "secrets", "Secret", true },
                .label_selector = HUB_LABEL_WATCH "=true",
        },
        [HUB_KIND_CONFIGMAP] = {
                .kind = HUB_KIND_CONFIGMAP,
                .resource = { "", "v1", "configmaps", "ConfigMap", true },
                .label_selector = HUB_LABEL_WATCH "=true",
        },
        [HUB_KIND_CAPI_CLUSTER] = {
                .kind = HUB_KIND_CAPI_CLUSTER,
                .resource = { HUB_GROUP_CAPI, HUB_CAPI_VERSION, "clusters", "Cluster", true },
                .cluster_api = true,
        },
        [HUB_KIND_MACHINE] = {
                .kind = HUB_KIND_MACHINE,
                .resource = { HUB_GROUP_CAPI, HUB_CAPI_VERSION, "machines", "Machine", true },
                .cluster_api = true,
        },
        [HUB_KIND_OACP] = {
                .kind = HUB_KIND_OACP,
                .resource = { HUB_GROUP_CAPI_CONTROL_PLANE, HUB_CAPI_CONTROL_PLANE_VERSION,
                              HUB_RESOURCE_CAPI_CONTROL_PLANE, HUB_KIND_NAME_CAPI_CONTROL_PLANE, true },
                .cluster_api = true,
        },
        [HUB_KIND_OAC] = {
                .kind = HUB_KIND_OAC,
                .resource = { HUB_GROUP_CAPI_BOOTSTRAP, HUB_CAPI_BOOTSTRAP_VERSION, "openshiftassistedconfigs",
                              HUB_KIND_NAME_CAPI_BOOTSTRAP, true },
                .cluster_api = true,
        },
        /* the workers' replicas (capi-controlplane.c): a management cluster
         * without MachineDeployments has no workers to wait for */
        [HUB_KIND_MACHINEDEPLOYMENT] = {
                .kind = HUB_KIND_MACHINEDEPLOYMENT,
                .resource = { HUB_GROUP_CAPI, HUB_CAPI_VERSION, "machinedeployments", "MachineDeployment",
                              true },
                .optional = true,
                .cluster_api = true,
        },
};

const HubKindInfo *hub_kind_info(HubKind k)
{
        if (k < 0 || k >= _HUB_KIND_MAX)
                return NULL;
        return &kinds[k];
}

const char *hub_kind_to_string(HubKind k)
{
        const HubKindInfo *i = hub_kind_info(k);

        return i ? i->resource.kind : NULL;
}

HubKind hub_kind_from_string(const char *s)
{
        if (!s)
                return _HUB_KIND_INVALID;
        for (HubKind k = 0; k < _HUB_KIND_MAX; k++)
                if (streq(kinds[k].resource.kind, s))
                        return k;
        return _HUB_KIND_INVALID;
}
