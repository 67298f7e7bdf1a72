/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The names other programs read byte for byte of the
 * assisted-installer-controller (notes/controller.md §1.2, §2, §10): the
 * bootstrap installer renders its manifests (installer/controller-manifests.c)
 * and waits for its ready Event and its pod, and `cradle controller`
 * (controller/) is the program. One header, so that the two sides cannot
 * drift.
 */

/* its namespace, and the name of its Job, ServiceAccount, container and
 * roles; the bootstrap finds its pod by the label job-name=<name> and the
 * name prefix */
#define CONTROLLER_NAMESPACE "assisted-installer"
#define CONTROLLER_NAME "assisted-installer-controller"
/* the image's program, /usr/bin/assisted-installer-controller: cradle
 * answers by that name too */
#define CONTROLLER_PROGRAM "assisted-installer-controller"

/* the Event the bootstrap waits for (it matches on metadata.name only);
 * name and reason, the message upstream's SetReadyState writes */
#define CONTROLLER_READY_EVENT "AssistedControllerIsReady"
#define CONTROLLER_READY_MESSAGE \
        "Assisted controller managed to connect to assisted service and kube-apiserver and is ready to " \
        "start"

/* the configuration the bootstrap renders */
#define CONTROLLER_CONFIGMAP "assisted-installer-controller-config"
#define CONTROLLER_SECRET "assisted-installer-controller-secret"
/* the Secret's key pull-secret-token mounted as the file "token" of this
 * directory (upstream since 2026-03); without it, $PULL_SECRET_TOKEN */
#define CONTROLLER_TOKEN_DIR "/etc/assisted-installer-controller"
#define CONTROLLER_TOKEN_FILE CONTROLLER_TOKEN_DIR "/token"
/* single node: the bootstrap's secrets (/etc/kubernetes/bootstrap-secrets)
 * mounted from the host, used before the service account's */
#define CONTROLLER_SNO_SECRETS_DIR "/tmp/bootstrap-secrets"
#define CONTROLLER_SNO_KUBECONFIG CONTROLLER_SNO_SECRETS_DIR "/kubeconfig"

/* its logs: the text log beside stdout, and what the service receives
 * (logs_type=controller) */
#define CONTROLLER_LOG_FILE "/tmp/controller_logs.log"
#define CONTROLLER_LOGS_ENTRY "assisted-installer-controller.logs"
#define CONTROLLER_LOGS_ARCHIVE "controller_logs.tar.gz"
