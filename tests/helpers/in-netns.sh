#!/bin/sh
# in-netns.sh COMMAND...: runs COMMAND inside a network namespace made for
# it, so that nothing it does reaches this machine's network. The namespace
# has loopback and one veth pair with both ends inside ("nic0" 198.51.100.10/24
# and "nic0-peer", a NIC that leads nowhere), and is removed afterwards,
# also when COMMAND fails. Exits 77 (skip) when namespaces are not available.
# COMMAND is also PID 1 of a PID namespace of its own: when it ends, or when
# this script is killed (a meson timeout), every process it left behind (an
# agent still polling, a daemon) ends with it instead of running on into the
# next test.
# With CRADLE_TEST_KUBECONFIG or CRADLE_TEST_SERVICE_URL (the real programs),
# their addresses answer inside the namespace too, through nsrelay.py: a test
# that runs whole inside it reaches them by the URLs it was given.
set -eu
if [ "$(id -u)" != 0 ]; then
        echo "SKIP: network namespaces need root"
        exit 77
fi
command -v ip > /dev/null || { echo "SKIP: iproute2 is not installed"; exit 77; }
ns="cradle-t$$-$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')"
relay= ready=
cleanup() {
        if [ -n "$relay" ]; then
                kill -TERM "$relay" 2> /dev/null || true
                wait "$relay" 2> /dev/null || true
        fi
        [ -z "$ready" ] || rm -f "$ready"
        ip netns del "$ns" 2> /dev/null || true
}
trap cleanup EXIT
if ! ip netns add "$ns" 2> /dev/null; then
        echo "SKIP: cannot create a network namespace"
        exit 77
fi
ip -n "$ns" link set lo up
ip -n "$ns" link add nic0 type veth peer name nic0-peer
ip -n "$ns" link set nic0-peer up
ip -n "$ns" addr add 198.51.100.10/24 dev nic0
ip -n "$ns" link set nic0 up
export CRADLE_TEST_NETNS="$ns"
if [ -n "${CRADLE_TEST_KUBECONFIG:-}${CRADLE_TEST_SERVICE_URL:-}" ]; then
        ready=$(mktemp)
        rm -f "$ready"
        python3 "$(dirname "$0")/nsrelay.py" --ready "$ready" \
                ${CRADLE_TEST_KUBECONFIG:+--kubeconfig "$CRADLE_TEST_KUBECONFIG"} \
                "$ns" ${CRADLE_TEST_SERVICE_URL:+"$CRADLE_TEST_SERVICE_URL"} &
        relay=$!
        tries=0
        until [ -e "$ready" ]; do
                if ! kill -0 "$relay" 2> /dev/null || [ "$tries" -ge 300 ]; then
                        echo "in-netns.sh: the relay to the real programs did not start" >&2
                        exit 1
                fi
                tries=$((tries + 1))
                sleep 0.1
        done
fi
# (a signal still removes the namespace: lib-bg.sh)
. "$(dirname "$0")/lib-bg.sh"
run_bg ip netns exec "$ns" unshare --pid --fork --kill-child=SIGTERM --mount-proc -- "$@"
