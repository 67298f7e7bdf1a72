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
set -eu
if [ "$(id -u)" != 0 ]; then
        echo "SKIP: network namespaces need root"
        exit 77
fi
command -v ip > /dev/null || { echo "SKIP: iproute2 is not installed"; exit 77; }
ns="cradle-t$$-$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')"
cleanup() { ip netns del "$ns" 2> /dev/null || true; }
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
# (a signal still removes the namespace: lib-bg.sh)
. "$(dirname "$0")/lib-bg.sh"
run_bg ip netns exec "$ns" unshare --pid --fork --kill-child=SIGTERM --mount-proc -- "$@"
