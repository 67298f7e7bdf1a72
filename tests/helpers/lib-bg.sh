# Sourced by in-netns.sh and in-pidns.sh.
# run_bg COMMAND...: runs COMMAND in the background and exits with its
# status. In the background so that a signal runs the caller's traps at once:
# the shell would hold it until a foreground command ended, and meson sends
# SIGKILL half a second after SIGTERM. TERM and INT go on to COMMAND.
run_bg() {
        "$@" &
        child=$!
        trap 'kill -TERM "$child" 2> /dev/null; exit 143' TERM
        trap 'kill -INT "$child" 2> /dev/null; exit 130' INT
        set +e
        wait "$child"
        rc=$?
        set -e
        exit $rc
}
