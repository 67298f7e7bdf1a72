/* SPDX-License-Identifier: Apache-2.0 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"
#include "spawn.h"
#include "strutil.h"
#include "tests.h"

static void (*at_end[16])(void); /* test_at_end(), in registration order */
static size_t n_at_end;
static TestCase *cases;
static TestCase **cases_tail = &cases;
static jmp_buf case_jump;
static bool case_failed, case_skipped;
static char *tmpdir;

void test_register(TestCase *t)
{
        *cases_tail = t;
        cases_tail = &t->next;
}

void test_at_end(void (*fn)(void))
{
        for (size_t i = 0; i < n_at_end; i++)
                if (at_end[i] == fn)
                        return;
        if (n_at_end >= ELEMENTSOF(at_end))
                abort();
        at_end[n_at_end++] = fn;
}

/* True when one of them failed (an ASSERT in it ends that one only). */
static bool run_at_end(void)
{
        volatile bool any_failed = false;

        while (n_at_end > 0) {
                void (*fn)(void) = at_end[--n_at_end];

                case_failed = case_skipped = false;
                if (setjmp(case_jump) == 0)
                        fn();
                any_failed = any_failed || case_failed;
        }
        return any_failed;
}

void test_fail(const char *file, int line, const char *fmt, ...)
{
        va_list ap;

        fprintf(stderr, "%s:%d: FAIL: ", file, line);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
        case_failed = true;
        longjmp(case_jump, 1);
}

void test_skip(const char *fmt, ...)
{
        va_list ap;

        fprintf(stderr, "SKIP: ");
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
        case_skipped = true;
        longjmp(case_jump, 1);
}

static void remove_tmpdir(void)
{
        char *argv[] = { (char *)"rm", (char *)"-rf", tmpdir, NULL };
        SpawnResult r = {};

        if (!tmpdir)
                return;
        if (getenv("TEST_KEEP"))
                fprintf(stderr, "keeping %s\n", tmpdir);
        else if (spawn_simple(argv, 60 * USEC_PER_SEC, &r) >= 0)
                spawn_result_done(&r);
        free(tmpdir);
        tmpdir = NULL;
}

const char *test_tmpdir(void)
{
        if (!tmpdir) {
                char tmpl[] = "/tmp/cradle-test-XXXXXX";
                if (!mkdtemp(tmpl)) {
                        perror("mkdtemp");
                        abort();
                }
                tmpdir = strdup(tmpl);
                atexit(remove_tmpdir);
        }
        return tmpdir;
}

const char *test_srcdir(void)
{
        const char *s = getenv("CRADLE_SOURCE_ROOT");
        return s ? s : ".";
}

const char *test_builddir(void)
{
        const char *s = getenv("CRADLE_BUILD_ROOT");
        return s ? s : ".";
}

char *test_src_path(const char *rel)
{
        return strdup_printf("%s/%s", test_srcdir(), rel);
}

bool test_is_root(void)
{
        return geteuid() == 0;
}

static int servers[16];

static void stop_all_servers(void)
{
        for (size_t i = 0; i < ELEMENTSOF(servers); i++)
                if (servers[i] > 0)
                        test_server_stop(servers[i]);
}

int test_server_start(char *const *argv, const char *port_file, int *ret_pid, unsigned *ret_port)
{
        static bool registered;
        _cleanup_free_ char *text = NULL;
        pid_t pid;

        (void)unlink(port_file);
        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                setpgid(0, 0);
                execvp(argv[0], argv);
                perror("exec");
                _exit(127);
        }
        if (!registered) {
                atexit(stop_all_servers);
                registered = true;
        }
        for (size_t i = 0; i < ELEMENTSOF(servers); i++)
                if (servers[i] == 0) {
                        servers[i] = pid;
                        break;
                }
        for (int i = 0; i < 1500; i++) {
                int status;
                FILE *f = fopen(port_file, "re");
                if (f) {
                        unsigned port = 0;
                        int n = fscanf(f, "%u", &port);
                        fclose(f);
                        if (n == 1 && port > 0) {
                                *ret_pid = pid;
                                *ret_port = port;
                                return 0;
                        }
                }
                if (waitpid(pid, &status, WNOHANG) == pid) {
                        for (size_t k = 0; k < ELEMENTSOF(servers); k++)
                                if (servers[k] == pid)
                                        servers[k] = 0;
                        return -ECHILD;
                }
                usleep(10000);
        }
        test_server_stop(pid);
        return -ETIMEDOUT;
}

void test_server_stop(int pid)
{
        if (pid <= 0)
                return;
        kill(-pid, SIGTERM);
        kill(pid, SIGTERM);
        for (int i = 0; i < 300; i++) {
                if (waitpid(pid, NULL, WNOHANG) == pid)
                        goto done;
                usleep(10000);
        }
        kill(-pid, SIGKILL);
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
done:
        for (size_t i = 0; i < ELEMENTSOF(servers); i++)
                if (servers[i] == pid)
                        servers[i] = 0;
}

size_t test_open_inheritable_fds(int ret[TEST_INHERITABLE_FDS])
{
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof(a);
        int l, sp[2];

        l = socket(AF_INET, SOCK_STREAM, 0);
        ASSERT_GE(l, 0);
        ASSERT_EQ(bind(l, (struct sockaddr *)&a, sizeof(a)), 0);
        ASSERT_EQ(listen(l, 1), 0);
        ASSERT_EQ(getsockname(l, (struct sockaddr *)&a, &len), 0);
        ret[0] = socket(AF_INET, SOCK_STREAM, 0);
        ASSERT_GE(ret[0], 0);
        ASSERT_EQ(connect(ret[0], (struct sockaddr *)&a, sizeof(a)), 0);
        ret[1] = accept(l, NULL, NULL);
        ASSERT_GE(ret[1], 0);
        close(l);
        ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sp), 0);
        ret[2] = sp[0];
        ret[3] = sp[1];
        ret[4] = fcntl(ret[0], F_DUPFD, 300);
        ASSERT_GE(ret[4], 300);
        return TEST_INHERITABLE_FDS;
}

void test_close_fds(const int *fds, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (fds[i] >= 0)
                        close(fds[i]);
}

int test_run(char *const *argv, char **ret_out)
{
        SpawnOptions o = { .argv = argv, .timeout = 300 * USEC_PER_SEC, .merge_output = true };
        SpawnResult r = {};
        int q;

        q = spawn_run(&o, &r);
        if (q < 0)
                return q;
        if (ret_out)
                *ret_out = TAKE_PTR(r.out);
        else if (r.out_len > 0)
                fprintf(stderr, "%s", r.out);
        q = r.exit_status;
        spawn_result_done(&r);
        return q;
}

int test_main(int argc, char **argv)
{
        const char *filter = getenv("TEST_FILTER");
        volatile unsigned ran = 0, failed = 0, skipped = 0;
        bool end_failed;

        (void)argc;
        (void)argv;
        setvbuf(stdout, NULL, _IOLBF, 0);
        for (TestCase *volatile t = cases; t; t = t->next) {
                if (filter && !strstr(t->name, filter))
                        continue;
                case_failed = case_skipped = false;
                fprintf(stderr, "=== %s\n", t->name);
                if (setjmp(case_jump) == 0)
                        t->fn();
                ran++;
                if (case_failed) {
                        failed++;
                        fprintf(stderr, "--- FAIL %s\n", t->name);
                } else if (case_skipped) {
                        skipped++;
                        fprintf(stderr, "--- SKIP %s\n", t->name);
                } else
                        fprintf(stderr, "--- ok %s\n", t->name);
        }
        end_failed = run_at_end();
        fprintf(stderr, "%u cases: %u passed, %u failed, %u skipped\n", ran, ran - failed - skipped, failed,
                skipped);
        if (end_failed)
                fprintf(stderr, "FAIL: the clean-up after the last case\n");
        if (failed > 0 || end_failed)
                return 1;
        if (ran > 0 && skipped == ran)
                return 77;
        return 0;
}
