/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "assisted-user.h"
#include "assisted.h"
#include "buf.h"
#include "cleanup.h"
#include "http.h"
#include "strutil.h"

/* swagger.yaml, operation by operation: operationId, method, path, the
 * lowest 2xx status; tests/assisted/test-assisted-user.c checks each */
static const AssistedOpInfo ops[_ASSISTED_OP_MAX] = {
        [ASSISTED_OP_REGISTER_INFRA_ENV] = { "RegisterInfraEnv", "POST", "/v2/infra-envs", 201, 0 },
        [ASSISTED_OP_LIST_INFRA_ENVS] = { "ListInfraEnvs", "GET", "/v2/infra-envs", 200, 0 },
        [ASSISTED_OP_GET_INFRA_ENV] = { "GetInfraEnv", "GET", "/v2/infra-envs/{infra_env_id}", 200, 1 },
        [ASSISTED_OP_UPDATE_INFRA_ENV] = { "UpdateInfraEnv", "PATCH", "/v2/infra-envs/{infra_env_id}", 201,
                                           1 },
        [ASSISTED_OP_DEREGISTER_INFRA_ENV] = { "DeregisterInfraEnv", "DELETE",
                                               "/v2/infra-envs/{infra_env_id}", 204, 1 },
        [ASSISTED_OP_GET_INFRA_ENV_DOWNLOAD_URL] = { "GetInfraEnvDownloadURL", "GET",
                                                     "/v2/infra-envs/{infra_env_id}/downloads/image-url",
                                                     200, 1 },
        [ASSISTED_OP_DOWNLOAD_INFRA_ENV_FILES] = { "v2DownloadInfraEnvFiles", "GET",
                                                   "/v2/infra-envs/{infra_env_id}/downloads/files", 200, 1 },
        [ASSISTED_OP_GET_INFRA_ENV_PRESIGNED_FILE_URL] = { "GetInfraEnvPresignedFileURL", "GET",
                                                           "/v2/infra-envs/{infra_env_id}/downloads/"
                                                           "files-presigned",
                                                           200, 1 },
        [ASSISTED_OP_LIST_HOSTS] = { "v2ListHosts", "GET", "/v2/infra-envs/{infra_env_id}/hosts", 200, 1 },
        [ASSISTED_OP_GET_HOST] = { "v2GetHost", "GET", "/v2/infra-envs/{infra_env_id}/hosts/{host_id}", 200,
                                   2 },
        [ASSISTED_OP_UPDATE_HOST] = { "v2UpdateHost", "PATCH",
                                      "/v2/infra-envs/{infra_env_id}/hosts/{host_id}", 201, 2 },
        [ASSISTED_OP_DEREGISTER_HOST] = { "v2DeregisterHost", "DELETE",
                                          "/v2/infra-envs/{infra_env_id}/hosts/{host_id}", 204, 2 },
        [ASSISTED_OP_BIND_HOST] = { "BindHost", "POST",
                                    "/v2/infra-envs/{infra_env_id}/hosts/{host_id}/actions/bind", 200, 2 },
        [ASSISTED_OP_UNBIND_HOST] = { "UnbindHost", "POST",
                                      "/v2/infra-envs/{infra_env_id}/hosts/{host_id}/actions/unbind", 200,
                                      2 },
        [ASSISTED_OP_INSTALL_HOST] = { "v2InstallHost", "POST",
                                       "/v2/infra-envs/{infra_env_id}/hosts/{host_id}/actions/install", 202,
                                       2 },
        [ASSISTED_OP_UPDATE_HOST_INSTALLER_ARGS] = { "v2UpdateHostInstallerArgs", "PATCH",
                                                     "/v2/infra-envs/{infra_env_id}/hosts/{host_id}/"
                                                     "installer-args",
                                                     201, 2 },
        [ASSISTED_OP_UPDATE_HOST_IGNITION] = { "v2UpdateHostIgnition", "PATCH",
                                               "/v2/infra-envs/{infra_env_id}/hosts/{host_id}/ignition", 201,
                                               2 },
        [ASSISTED_OP_RESET_HOST] = { "v2ResetHost", "POST",
                                     "/v2/infra-envs/{infra_env_id}/hosts/{host_id}/actions/reset", 200, 2 },
        /* the day-2 Joined/Done of a host (the hub, as upstream's Agent controller) */
        [ASSISTED_OP_UPDATE_HOST_INSTALL_PROGRESS] = { "v2UpdateHostInstallProgress", "PUT",
                                                       "/v2/infra-envs/{infra_env_id}/hosts/{host_id}/"
                                                       "progress",
                                                       200, 2 },
        [ASSISTED_OP_LIST_EVENTS] = { "v2ListEvents", "GET", "/v2/events", 200, 0 },
        /* the controller's reboots_for_node (agentAuth) */
        [ASSISTED_OP_TRIGGER_EVENT] = { "v2TriggerEvent", "POST", "/v2/events", 201, 0 },
        [ASSISTED_OP_REGISTER_CLUSTER] = { "v2RegisterCluster", "POST", "/v2/clusters", 201, 0 },
        [ASSISTED_OP_IMPORT_CLUSTER] = { "v2ImportCluster", "POST", "/v2/clusters/import", 201, 0 },
        [ASSISTED_OP_LIST_CLUSTERS] = { "v2ListClusters", "GET", "/v2/clusters", 200, 0 },
        [ASSISTED_OP_GET_CLUSTER] = { "v2GetCluster", "GET", "/v2/clusters/{cluster_id}", 200, 1 },
        [ASSISTED_OP_UPDATE_CLUSTER] = { "V2UpdateCluster", "PATCH", "/v2/clusters/{cluster_id}", 201, 1 },
        [ASSISTED_OP_DEREGISTER_CLUSTER] = { "v2DeregisterCluster", "DELETE", "/v2/clusters/{cluster_id}",
                                             204, 1 },
        [ASSISTED_OP_LIST_CLUSTER_HOSTS] = { "ListClusterHosts", "GET", "/v2/clusters/{cluster_id}/hosts",
                                             200, 1 },
        [ASSISTED_OP_INSTALL_CLUSTER] = { "v2InstallCluster", "POST",
                                          "/v2/clusters/{cluster_id}/actions/install", 202, 1 },
        [ASSISTED_OP_CANCEL_INSTALLATION] = { "V2CancelInstallation", "POST",
                                              "/v2/clusters/{cluster_id}/actions/cancel", 202, 1 },
        [ASSISTED_OP_RESET_CLUSTER] = { "v2ResetCluster", "POST", "/v2/clusters/{cluster_id}/actions/reset",
                                        202, 1 },
        [ASSISTED_OP_TRANSFORM_CLUSTER_TO_DAY2] = { "TransformClusterToDay2", "POST",
                                                    "/v2/clusters/{cluster_id}/actions/allow-add-workers",
                                                    202, 1 },
        [ASSISTED_OP_UPDATE_CLUSTER_INSTALL_CONFIG] = { "v2UpdateClusterInstallConfig", "PATCH",
                                                        "/v2/clusters/{cluster_id}/install-config", 201, 1 },
        [ASSISTED_OP_GET_CLUSTER_INSTALL_CONFIG] = { "v2GetClusterInstallConfig", "GET",
                                                     "/v2/clusters/{cluster_id}/install-config", 200, 1 },
        [ASSISTED_OP_SET_IGNORED_VALIDATIONS] = { "v2SetIgnoredValidations", "PUT",
                                                  "/v2/clusters/{cluster_id}/ignored-validations", 201, 1 },
        [ASSISTED_OP_GET_IGNORED_VALIDATIONS] = { "v2GetIgnoredValidations", "GET",
                                                  "/v2/clusters/{cluster_id}/ignored-validations", 200, 1 },
        [ASSISTED_OP_GET_CREDENTIALS] = { "V2GetCredentials", "GET", "/v2/clusters/{cluster_id}/credentials",
                                          200, 1 },
        [ASSISTED_OP_DOWNLOAD_CLUSTER_CREDENTIALS] = { "V2DownloadClusterCredentials", "GET",
                                                       "/v2/clusters/{cluster_id}/downloads/credentials",
                                                       200, 1 },
        [ASSISTED_OP_LIST_CLUSTER_MANIFESTS] = { "V2ListClusterManifests", "GET",
                                                 "/v2/clusters/{cluster_id}/manifests", 200, 1 },
        [ASSISTED_OP_CREATE_CLUSTER_MANIFEST] = { "V2CreateClusterManifest", "POST",
                                                  "/v2/clusters/{cluster_id}/manifests", 201, 1 },
        [ASSISTED_OP_DELETE_CLUSTER_MANIFEST] = { "V2DeleteClusterManifest", "DELETE",
                                                  "/v2/clusters/{cluster_id}/manifests", 200, 1 },
        [ASSISTED_OP_LIST_MONITORED_OPERATORS] = { "V2ListOfClusterOperators", "GET",
                                                   "/v2/clusters/{cluster_id}/monitored-operators", 200, 1 },
        [ASSISTED_OP_REPORT_MONITORED_OPERATOR] = { "v2ReportMonitoredOperatorStatus", "PUT",
                                                    "/v2/clusters/{cluster_id}/monitored-operators", 200,
                                                    1 },
        [ASSISTED_OP_UPDATE_CLUSTER_FINALIZING_PROGRESS] = { "v2UpdateClusterFinalizingProgress", "PUT",
                                                             "/v2/clusters/{cluster_id}/progress", 200, 1 },
        [ASSISTED_OP_UPLOAD_CLUSTER_INGRESS_CERT] = { "v2UploadClusterIngressCert", "POST",
                                                      "/v2/clusters/{cluster_id}/uploads/ingress-cert", 201,
                                                      1 },
        [ASSISTED_OP_COMPLETE_INSTALLATION] = { "v2CompleteInstallation", "POST",
                                                "/v2/clusters/{cluster_id}/actions/complete-installation",
                                                202, 1 },
        [ASSISTED_OP_LIST_SUPPORTED_OPENSHIFT_VERSIONS] = { "v2ListSupportedOpenshiftVersions", "GET",
                                                            "/v2/openshift-versions", 200, 0 },
};

const AssistedOpInfo *assisted_op_info(AssistedOp op)
{
        if (op < 0 || op >= _ASSISTED_OP_MAX)
                return NULL;
        return &ops[op];
}

AssistedOp assisted_op_from_id(const char *id)
{
        if (!id)
                return _ASSISTED_OP_INVALID;
        for (AssistedOp op = 0; op < _ASSISTED_OP_MAX; op++)
                if (streq(ops[op].id, id))
                        return op;
        return _ASSISTED_OP_INVALID;
}

int assisted_op_path(AssistedOp op, char *const *params, const char *query, char **ret)
{
        const AssistedOpInfo *info = assisted_op_info(op);
        _cleanup_buf_ Buf b = BUF_INIT(64 * 1024);
        unsigned used = 0;
        const char *p;
        int r;

        if (!info || strv_length(params) != info->n_params)
                return -EINVAL;
        p = info->path;
        while (*p) {
                const char *open = strchr(p, '{'), *close;
                _cleanup_free_ char *e = NULL;

                if (!open) {
                        r = buf_append_str(&b, p);
                        if (r < 0)
                                return r;
                        break;
                }
                close = strchr(open, '}');
                if (!close)
                        return -EINVAL;
                r = buf_append(&b, p, (size_t)(open - p));
                if (r < 0)
                        return r;
                e = http_escape(params[used++]);
                if (!e)
                        return -ENOMEM;
                r = buf_append_str(&b, e);
                if (r < 0)
                        return r;
                p = close + 1;
        }
        if (!isempty(query)) {
                r = buf_appendf(&b, "?%s", query);
                if (r < 0)
                        return r;
        }
        return buf_take(&b, ret, NULL);
}

int assisted_op_call(AssistedClient *c, AssistedOp op, char *const *params, const char *query,
                     json_object *body, long *ret_status, json_object **ret_json, char **reterr)
{
        const AssistedOpInfo *info = assisted_op_info(op);
        _cleanup_free_ char *path = NULL;
        int r;

        if (!info)
                return -EINVAL;
        r = assisted_op_path(op, params, query, &path);
        if (r < 0)
                return r;
        return assisted_call(c, info->method, path, body, info->success, ret_status, ret_json, reterr);
}

int assisted_download_infra_env_file(AssistedClient *c, const char *infra_env_id, const char *file_name,
                                     size_t max, long *ret_status, char **ret_data, char **reterr)
{
        _cleanup_free_ char *path = NULL, *query = NULL, *e = http_escape(file_name);
        int r;

        if (!e)
                return -ENOMEM;
        query = strdup_printf("file_name=%s", e);
        if (!query)
                return -ENOMEM;
        r = assisted_op_path(ASSISTED_OP_DOWNLOAD_INFRA_ENV_FILES, (char *[]){ (char *)infra_env_id, NULL },
                             query, &path);
        if (r < 0)
                return r;
        return assisted_download(c, path, max, ret_status, ret_data, NULL, reterr);
}
