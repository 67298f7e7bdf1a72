/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The user-facing side of assisted-service's v2 API: what the hub
 * controllers call (infra-envs, hosts, events, clusters, manifests,
 * credentials). The operations are a table, so that every method, path
 * template and success status lives in one place and is checked against
 * swagger.yaml (tests/assisted/test-assisted-user.c); callers name an
 * operation and its path parameters, and the generic assisted_call() of
 * assisted.h does the rest.
 *
 * User calls authenticate with "Authorization: Bearer <token>" when the
 * service wants it (AssistedClientOptions.bearer_token_file).
 */

#include <stddef.h>

typedef struct AssistedClient AssistedClient;
typedef struct json_object json_object;

typedef enum AssistedOp {
        /* infra-envs */
        ASSISTED_OP_REGISTER_INFRA_ENV,
        ASSISTED_OP_LIST_INFRA_ENVS,
        ASSISTED_OP_GET_INFRA_ENV,
        ASSISTED_OP_UPDATE_INFRA_ENV,
        ASSISTED_OP_DEREGISTER_INFRA_ENV,
        ASSISTED_OP_GET_INFRA_ENV_DOWNLOAD_URL,
        ASSISTED_OP_DOWNLOAD_INFRA_ENV_FILES,
        ASSISTED_OP_GET_INFRA_ENV_PRESIGNED_FILE_URL,
        /* hosts */
        ASSISTED_OP_LIST_HOSTS,
        ASSISTED_OP_GET_HOST,
        ASSISTED_OP_UPDATE_HOST,
        ASSISTED_OP_DEREGISTER_HOST,
        ASSISTED_OP_BIND_HOST,
        ASSISTED_OP_UNBIND_HOST,
        ASSISTED_OP_INSTALL_HOST,
        ASSISTED_OP_UPDATE_HOST_INSTALLER_ARGS,
        ASSISTED_OP_UPDATE_HOST_IGNITION,
        ASSISTED_OP_RESET_HOST,
        ASSISTED_OP_UPDATE_HOST_INSTALL_PROGRESS,
        /* events */
        ASSISTED_OP_LIST_EVENTS,
        ASSISTED_OP_TRIGGER_EVENT,
        /* clusters */
        ASSISTED_OP_REGISTER_CLUSTER,
        ASSISTED_OP_IMPORT_CLUSTER,
        ASSISTED_OP_LIST_CLUSTERS,
        ASSISTED_OP_GET_CLUSTER,
        ASSISTED_OP_UPDATE_CLUSTER,
        ASSISTED_OP_DEREGISTER_CLUSTER,
        ASSISTED_OP_LIST_CLUSTER_HOSTS,
        ASSISTED_OP_INSTALL_CLUSTER,
        ASSISTED_OP_CANCEL_INSTALLATION,
        ASSISTED_OP_RESET_CLUSTER,
        ASSISTED_OP_TRANSFORM_CLUSTER_TO_DAY2,
        ASSISTED_OP_UPDATE_CLUSTER_INSTALL_CONFIG,
        ASSISTED_OP_GET_CLUSTER_INSTALL_CONFIG,
        ASSISTED_OP_SET_IGNORED_VALIDATIONS,
        ASSISTED_OP_GET_IGNORED_VALIDATIONS,
        ASSISTED_OP_GET_CREDENTIALS,
        ASSISTED_OP_DOWNLOAD_CLUSTER_CREDENTIALS,
        ASSISTED_OP_LIST_CLUSTER_MANIFESTS,
        ASSISTED_OP_CREATE_CLUSTER_MANIFEST,
        ASSISTED_OP_DELETE_CLUSTER_MANIFEST,
        ASSISTED_OP_LIST_MONITORED_OPERATORS,
        /* the assisted-installer-controller's (agentAuth) */
        ASSISTED_OP_REPORT_MONITORED_OPERATOR,
        ASSISTED_OP_UPDATE_CLUSTER_FINALIZING_PROGRESS,
        ASSISTED_OP_UPLOAD_CLUSTER_INGRESS_CERT,
        ASSISTED_OP_COMPLETE_INSTALLATION,
        ASSISTED_OP_LIST_SUPPORTED_OPENSHIFT_VERSIONS,
        _ASSISTED_OP_MAX,
        _ASSISTED_OP_INVALID = -22,
} AssistedOp;

typedef struct AssistedOpInfo {
        const char *id; /* swagger operationId */
        const char *method;
        const char *path; /* template under /api/assisted-install: "/v2/infra-envs/{infra_env_id}" */
        long success; /* the success status */
        unsigned n_params; /* path parameters, in order */
} AssistedOpInfo;

const AssistedOpInfo *assisted_op_info(AssistedOp op);
AssistedOp assisted_op_from_id(const char *id);

/* The path of op with its {parameters} replaced, in order, by params
 * (escaped as path segments); query (without '?', already escaped) is
 * appended when not NULL/empty. -EINVAL when params has not exactly the
 * operation's count. */
int assisted_op_path(AssistedOp op, char *const *params, const char *query, char **ret);

/* assisted_call() of op. ret_json may be NULL. */
int assisted_op_call(AssistedClient *c, AssistedOp op, char *const *params, const char *query,
                     json_object *body, long *ret_status, json_object **ret_json, char **reterr);

/* A file of an infra-env (file_name "ipxe-script", "discovery.ign",
 * "static-network-config") as text, at most max bytes. */
int assisted_download_infra_env_file(AssistedClient *c, const char *infra_env_id, const char *file_name,
                                     size_t max, long *ret_status, char **ret_data, char **reterr);
