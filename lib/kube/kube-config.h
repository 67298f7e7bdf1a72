/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Where a Kubernetes client connects and how it authenticates: kubeconfig
 * files (as kubectl reads them) and in-cluster service-account files.
 *
 * kubeconfig: the path given, else $KUBECONFIG (a ':'-separated list merged
 * as kubectl does: the first file that sets current-context wins, the first
 * definition of a cluster, user or context name wins, a missing file is
 * skipped), else $HOME/.kube/config. The context is the one named, else
 * current-context. Supported: cluster server, certificate-authority(-data),
 * insecure-skip-tls-verify, tls-server-name; user client-certificate(-data),
 * client-key(-data), token, tokenFile, exec (client.authentication.k8s.io/v1
 * and v1beta1); context namespace. Relative file paths are relative to the
 * kubeconfig file that names them. Unsupported user entries (auth-provider,
 * username/password, impersonation) are an error naming them.
 *
 * In-cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT, and the
 * files token, ca.crt and namespace of the service-account directory
 * (/var/run/secrets/kubernetes.io/serviceaccount unless another is given).
 * The token file is re-read by the client whenever it changes.
 *
 * Errors are negative errno with a message in *reterr that names the file
 * and the entry that is missing or malformed; it never contains a secret.
 */

#include <stdbool.h>

#include "macro.h"

#define KUBE_SERVICE_ACCOUNT_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

typedef struct KubeExecConfig {
        char *api_version; /* client.authentication.k8s.io/v1 or v1beta1 */
        char *command;
        char **args;
        char **env; /* "NAME=value" added to the plugin's environment */
        char *interactive_mode; /* Never, IfAvailable, Always (recorded only) */
        bool provide_cluster_info;
} KubeExecConfig;

typedef struct KubeConfig {
        char *source; /* the file(s) or "in-cluster", for messages */
        char *context; /* context name (NULL in-cluster) */
        char *cluster; /* cluster name */
        char *user; /* user name */
        char *server; /* "https://host:port", no trailing slash */
        char *tls_server_name;
        char *ca_file; /* certificate-authority (absolute path) */
        char *ca_pem; /* certificate-authority-data, decoded */
        bool insecure; /* insecure-skip-tls-verify */
        char *client_cert_file; /* absolute path */
        char *client_cert_pem; /* decoded data */
        char *client_key_file;
        char *client_key_pem;
        char *token; /* registered as a secret */
        char *token_file; /* re-read when it changes */
        KubeExecConfig *exec;
        char *namespace; /* context's namespace, "default" when unset */
        bool in_cluster;
} KubeConfig;

KubeConfig *kube_config_free(KubeConfig *c);
DEFINE_TRIVIAL_CLEANUP_FUNC(KubeConfig *, kube_config_free)

/* Loads a kubeconfig. path: a file, or a ':' list as $KUBECONFIG; NULL
 * means $KUBECONFIG then $HOME/.kube/config. context NULL: current-context. */
int kube_config_load(const char *path, const char *context, KubeConfig **ret, char **reterr);

/* Parses a kubeconfig document (YAML or JSON) already in memory; base_dir is
 * where relative paths are resolved (NULL: the working directory). */
int kube_config_parse(const char *data, size_t len, const char *base_dir, const char *context,
                      KubeConfig **ret, char **reterr);

/* In-cluster configuration. sa_dir NULL: KUBE_SERVICE_ACCOUNT_DIR. Fails with
 * -ENXIO when KUBERNETES_SERVICE_HOST/PORT are not set. */
int kube_config_in_cluster(const char *sa_dir, KubeConfig **ret, char **reterr);

/* What controllers do: an explicit kubeconfig path, else $KUBECONFIG, else
 * in-cluster when KUBERNETES_SERVICE_HOST is set, else $HOME/.kube/config. */
int kube_config_load_default(const char *path, const char *context, KubeConfig **ret, char **reterr);

/* A deep copy. */
int kube_config_copy(const KubeConfig *c, KubeConfig **ret);
