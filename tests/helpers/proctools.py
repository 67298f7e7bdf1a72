"""Processes a test starts: each in a process group of its own, its
stdout and stderr in a log file the test reads."""
import os
import signal
import subprocess


def stop_group(proc, grace=20):
    """SIGTERM to proc's process group (started with start_new_session=True),
    SIGKILL after grace seconds; returns its exit status. Whatever it started
    (a podman, a wrapper's child) goes with it: an agent left polling would
    answer the next test's steps for the same host ID."""
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, None)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.wait(wait)
            break
        except subprocess.TimeoutExpired:
            continue
    return proc.wait()


class LoggedProcess(object):
    def __init__(self, argv, env, log_path):
        self.log = open(log_path, "w+")
        self.proc = subprocess.Popen(argv, env=env, stdout=self.log, stderr=subprocess.STDOUT,
                                     start_new_session=True)

    def output(self):
        self.log.flush()
        self.log.seek(0)
        return self.log.read()

    def stop(self, grace=20):
        return stop_group(self.proc, grace)
