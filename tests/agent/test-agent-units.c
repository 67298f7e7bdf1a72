/* SPDX-License-Identifier: Apache-2.0 */
/* The agent's pure pieces: mountinfo lookup, registration response
 * parsing, the podman runner's argv, step dispatch errors. */
#include <json-c/json.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/config.h"
#include "agent/media.h"
#include "agent/podman-runner.h"
#include "agent/register.h"
#include "agent/steps.h"
#include "cleanup.h"
#include "fileio.h"
#include "redact.h"
#include <sys/stat.h>
#include "hostexec.h"
#include "jsonutil.h"
#include "shell.h"
#include "strutil.h"
#include "tests.h"

TEST(media_mount_source_picks_the_deepest_mount)
{
        _cleanup_free_ char *mi = test_src_path("tests/agent/fixtures/mountinfo-live-iso");
        _cleanup_free_ char *a = NULL, *b = NULL, *c = NULL, *d = NULL;

        ASSERT_OK(media_mount_source(mi, "/run/media/iso", &a));
        ASSERT_STREQ(a, "/dev/sr0");
        ASSERT_OK(media_mount_source(mi, "/run/media/iso/images/pxeboot", &b));
        ASSERT_STREQ(b, "/dev/loop0");
        ASSERT_OK(media_mount_source(mi, "/run/media/isotope", &c));
        ASSERT_STREQ(c, "tmpfs");
        ASSERT_OK(media_mount_source(mi, "/run/media/with space/x", &d));
        ASSERT_STREQ(d, "my tmp");
}

TEST(media_check_without_iso_is_fine)
{
        _cleanup_free_ char *err = NULL, *missing = strdup_printf("%s/no-iso-here", test_tmpdir());

        ASSERT_OK(media_check(missing, &err));
        ASSERT_NULL(err);
}

TEST(media_check_of_unreadable_source_reports_go_text)
{
        /* a directory that is a mount point we can resolve, whose source
         * ("proc") is not a readable device */
        _cleanup_free_ char *err = NULL;

        ASSERT_ERROR(media_check("/proc", &err), EIO);
        ASSERT_CONTAINS(err, "cannot access/read from the media (ISO) - media was likely disconnected");
}

static json_object *parse_json(const char *s)
{
        json_object *o = NULL;

        ASSERT_OK(json_parse(s, strlen(s), 1 << 20, &o, NULL));
        return o;
}

TEST(registration_response)
{
        /* observed/go-agent-wire-capture.json served_register_response_201 */
        _cleanup_(json_object_putp) json_object *host = parse_json(
                "{\"id\":\"b1f5c5b7-caf8-66bd-addd-439b331f2640\",\"kind\":\"Host\",\"status\":"
                "\"discovering\","
                "\"next_step_runner_command\":{\"command\":\"\",\"args\":[\"{\\\"agent_version\\\": "
                "\\\"quay.io/edge-infrastructure/assisted-installer-agent:test\\\", \\\"host_id\\\": "
                "\\\"b1f5c5b7-caf8-66bd-addd-439b331f2640\\\", \\\"infra_env_id\\\": "
                "\\\"11111111-2222-3333-4444-555555555555\\\"}\"],\"retry_seconds\":3}}");
        _cleanup_(json_object_putp) json_object *none =
                parse_json("{\"id\":\"x\",\"next_step_runner_command\":null}");
        _cleanup_(json_object_putp) json_object *bad =
                parse_json("{\"next_step_runner_command\":{\"args\":[\"{\\\"host_id\\\":\\\"nope\\\"}\"]}}");
        _cleanup_(next_step_runner_command_done) NextStepRunnerCommand c = {};
        NextStepRunnerCommand d = {};
        _cleanup_free_ char *err = NULL;

        ASSERT_OK(next_step_runner_command_parse(host, &c, NULL));
        ASSERT_STREQ(c.agent_version, "quay.io/edge-infrastructure/assisted-installer-agent:test");
        ASSERT_STREQ(c.host_id, "b1f5c5b7-caf8-66bd-addd-439b331f2640");
        ASSERT_STREQ(c.infra_env_id, "11111111-2222-3333-4444-555555555555");
        ASSERT_EQ(c.retry_seconds, 3);
        ASSERT_ERROR(next_step_runner_command_parse(none, &d, NULL), ENODATA);
        ASSERT_ERROR(next_step_runner_command_parse(bad, &d, &err), EBADMSG);
        ASSERT_STREQ(err, "missing field 'agent_version'");
}

TEST(podman_runner_argv_is_upstream)
{
        AgentConfig c = { .url = (char *)"http://10.0.0.1:6000",
                          .insecure = true,
                          .cacert = (char *)"/etc/assisted-service/service-ca-cert.crt" };
        NextStepRunnerCommand cmd = { .agent_version = (char *)"quay.io/x/agent:v2",
                                      .host_id = (char *)"b1f5c5b7-caf8-66bd-addd-439b331f2640",
                                      .infra_env_id = (char *)"11111111-2222-3333-4444-555555555555" };
        _cleanup_strv_free_ char **argv = podman_runner_argv(&c, &cmd);
        _cleanup_free_ char *text = shell_join(argv);

        ASSERT_STREQ(
                text,
                "podman run --rm -ti --privileged --pid=host --uts=host --net=host --pids-limit=0 "
                "-v /dev:/dev:rw -v /opt:/opt:rw -v /run/systemd/journal/socket:/run/systemd/journal/socket "
                "-v /var/log:/var/log:rw -v /run/media:/run/media:rw -v /etc/pki:/etc/pki "
                "-v /etc/assisted-service/service-ca-cert.crt:/etc/assisted-service/service-ca-cert.crt "
                "--env PULL_SECRET_TOKEN --env CONTAINERS_CONF --env CONTAINERS_STORAGE_CONF --env "
                "HTTP_PROXY "
                "--env HTTPS_PROXY --env NO_PROXY --env http_proxy --env https_proxy --env no_proxy "
                "--name next-step-runner quay.io/x/agent:v2 next_step_runner --url http://10.0.0.1:6000 "
                "--infra-env-id 11111111-2222-3333-4444-555555555555 "
                "--host-id b1f5c5b7-caf8-66bd-addd-439b331f2640 --agent-version quay.io/x/agent:v2 "
                "--insecure=true --cacert /etc/assisted-service/service-ca-cert.crt");
}

TEST(step_dispatch_errors_match_go)
{
        _cleanup_(host_exec_freep) HostExec *host = NULL;
        AgentConfig c = {};
        StepContext ctx = { .config = &c, .host_id = "h", .infra_env_id = "i", .step_id = "s" };
        char *none[] = { NULL };
        char *one[] = { (char *)"x", NULL };
        StepResult r = {};

        ASSERT_OK(host_exec_new(HOST_EXEC_DIRECT, 0, &host));
        ctx.host = host;

        step_run(&ctx, "no-such-step", none, &r);
        ASSERT_EQ(r.exit_code, -1);
        ASSERT_STREQ(r.error, "failed to find action for step type no-such-step");
        step_result_done(&r);

        /* in the enum, but the Go agent has no action for them */
        step_run(&ctx, "execute", none, &r);
        ASSERT_STREQ(r.error, "failed to find action for step type execute");
        step_result_done(&r);
        step_run(&ctx, "next-step-runner", none, &r);
        ASSERT_STREQ(r.error, "failed to find action for step type next-step-runner");
        step_result_done(&r);

        step_run(&ctx, "stop-installation", one, &r);
        ASSERT_EQ(r.exit_code, -1);
        ASSERT_STREQ(r.error, "stop-installation cmd accepts only 0 params");
        step_result_done(&r);

        step_run(&ctx, "inventory", none, &r);
        ASSERT_EQ(r.exit_code, -1);
        step_result_done(&r);

        step_run(&ctx, "inventory", one, &r);
        ASSERT_EQ(r.exit_code, -1);
        ASSERT_STREQ(r.error, "inventory: host id 'x' is not a valid UUID");
        step_result_done(&r);
}

TEST(stop_installation_runs_podman_on_the_host)
{
        _cleanup_(host_exec_freep) HostExec *host = NULL;
        _cleanup_free_ char *bin = strdup_printf("%s/bin", test_tmpdir()), *podman = NULL, *log = NULL,
                            *path = NULL, *got = NULL;
        AgentConfig c = {};
        StepContext ctx = { .config = &c };
        char *none[] = { NULL };
        StepResult r = {};
        FILE *f;

        ASSERT_OK(mkdir_p(bin, 0755));
        podman = strdup_printf("%s/podman", bin);
        log = strdup_printf("%s/podman.args", test_tmpdir());
        f = fopen(podman, "we");
        ASSERT_NOT_NULL(f);
        fprintf(f, "#!/bin/sh\necho \"$@\" > %s\necho assisted-installer\n", log);
        fclose(f);
        ASSERT_OK(chmod(podman, 0755));
        path = strdup_printf("%s:%s", bin, getenv("PATH"));
        setenv("PATH", path, 1);

        ASSERT_OK(host_exec_new(HOST_EXEC_DIRECT, 0, &host));
        ctx.host = host;
        step_run(&ctx, "stop-installation", none, &r);
        ASSERT_EQ(r.exit_code, 0);
        ASSERT_STREQ(r.output, "assisted-installer\n");
        ASSERT_NULL(r.error);
        step_result_done(&r);
        ASSERT_OK(read_full_file(log, 4096, &got, NULL));
        ASSERT_STREQ(got, "stop -i -t 5 assisted-installer\n");
}

TEST(stop_installation_without_podman_fails_like_go)
{
        _cleanup_(host_exec_freep) HostExec *host = NULL;
        AgentConfig c = {};
        StepContext ctx = { .config = &c };
        char *none[] = { NULL };
        StepResult r = {};
        _cleanup_free_ char *saved = strdup(getenv("PATH"));

        setenv("PATH", "/nonexistent", 1);
        ASSERT_OK(host_exec_new(HOST_EXEC_DIRECT, 0, &host));
        ctx.host = host;
        step_run(&ctx, "stop-installation", none, &r);
        setenv("PATH", saved, 1);
        ASSERT_EQ(r.exit_code, -1);
        ASSERT_STREQ(r.error, "exec: \"podman\": executable file not found in $PATH");
        step_result_done(&r);
}

/* A process in its own network namespace runs a command through
 * HOST_EXEC_ENTER and sees the "host's" network (here: the test process
 * stands for the host, as PID 1 does in production). */
TEST(host_exec_enters_the_hosts_namespaces)
{
        pid_t pid, host = getpid();
        int status;

        if (!test_is_root())
                test_skip("needs root to create and enter namespaces");
        pid = fork();
        ASSERT_TRUE(pid >= 0);
        if (pid == 0) {
                _cleanup_(host_exec_freep) HostExec *h = NULL;
                char *argv[] = { (char *)"cat", (char *)"/proc/self/net/dev", NULL };
                SpawnOptions o = { .argv = argv };
                SpawnResult in = {}, out = {};

                if (unshare(CLONE_NEWNET) < 0)
                        _exit(77);
                /* only "lo" here */
                if (spawn_run(&o, &in) < 0)
                        _exit(2);
                if (host_exec_new_target(HOST_EXEC_ENTER, HOST_NS_NET, host, &h) < 0 ||
                    host_exec_run(h, &o, &out) < 0)
                        _exit(3);
                /* PID 1's namespace has at least one more interface than our fresh one */
                {
                        int lines_in = 0, lines_out = 0;
                        for (char *p = in.out; p && *p; p++)
                                lines_in += *p == '\n';
                        for (char *p = out.out; p && *p; p++)
                                lines_out += *p == '\n';
                        _exit(lines_out > lines_in ? 0 : 4);
                }
        }
        ASSERT_EQ(waitpid(pid, &status, 0), pid);
        if (WEXITSTATUS(status) == 77)
                test_skip("cannot create a network namespace here");
        ASSERT_EQ(WEXITSTATUS(status), 0);
}

TEST(host_exec_auto_runs_directly_on_the_host)
{
        _cleanup_(host_exec_freep) HostExec *h = NULL;

        /* the test process is in its own namespaces: nothing to enter */
        ASSERT_OK(host_exec_new_target(HOST_EXEC_AUTO, HOST_NS_AGENT, getpid(), &h));
        ASSERT_FALSE(host_exec_enters(h));
}

TEST(host_exec_failure_text_is_upstream_and_scrubbed)
{
        char *argv[] = { (char *)"coreos-installer", (char *)"install", (char *)"--token=sekrit-value",
                         NULL };
        SpawnResult res = { .exit_status = 1,
                            .out = (char *)"writing...\nError: no space left on device\n" };
        _cleanup_free_ char *t = NULL, *enoent = NULL;

        ASSERT_OK(redact_register_secret("sekrit-value"));
        t = host_exec_failure_text(argv, 0, &res);
        ASSERT_STREQ(
                t, "failed executing coreos-installer install --token=***, Error exit status 1, LastOutput "
                   "\"Error: no space left on device\"");
        enoent = host_exec_failure_text(argv, -ENOENT, NULL);
        ASSERT_CONTAINS(enoent, "Error No such file or directory");
}

DEFINE_TEST_MAIN
