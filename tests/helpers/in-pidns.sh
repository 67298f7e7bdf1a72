#!/bin/sh
# in-pidns.sh COMMAND...: runs COMMAND as PID 1 of a PID namespace and in a
# mount namespace of its own (private propagation), on this machine's
# network: for tests that must reach a cluster CRADLE_TEST_KUBECONFIG names
# and send no network steps (the installer's bootstrap talks to the
# reference service and the Kubernetes API only, both on loopback unless a
# real cluster is named). When COMMAND ends, or this script is killed (a
# meson timeout), every process it left behind ends with it; mounts it made
# go with its namespace. Exits 77 (skip) without root.
set -eu
if [ "$(id -u)" != 0 ]; then
        echo "SKIP: PID and mount namespaces need root"
        exit 77
fi
export CRADLE_TEST_PIDNS=1
. "$(dirname "$0")/lib-bg.sh"
run_bg unshare --pid --fork --kill-child=SIGTERM --mount-proc --mount --propagation private -- "$@"
