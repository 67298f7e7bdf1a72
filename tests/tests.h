/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * A small test harness: TEST(name) { ... } registers a case; the ASSERT_*
 * macros print both values and the location and abort the case. Each test
 * program ends with DEFINE_TEST_MAIN. A case may call test_skip("reason")
 * when it cannot run here: the program then exits 77 (meson's "skipped")
 * unless another case failed, and prints the reason.
 *
 * Environment: TEST_FILTER=substring runs only matching cases.
 */

#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct TestCase {
        const char *name;
        void (*fn)(void);
        struct TestCase *next;
} TestCase;

void test_register(TestCase *t);
int test_main(int argc, char **argv);
_Noreturn void test_fail(const char *file, int line, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
_Noreturn void test_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Runs fn once the last case is done, before test_main() returns (the
 * last registered first). Unlike atexit(), this runs before the libraries'
 * own exit-time cleanup (OpenSSL's), so fn may still make requests: a
 * harness removes there what a real server keeps (namespaces...). Only the
 * process that runs the cases calls them, never a forked child. */
void test_at_end(void (*fn)(void));

/* A scratch directory for the running program (created on first use,
 * removed at exit unless TEST_KEEP=1). */
const char *test_tmpdir(void);
/* The source and build roots (from the environment meson sets). */
const char *test_srcdir(void);
const char *test_builddir(void);
/* Path of a file under the source tree; allocated. */
char *test_src_path(const char *rel);
/* True when running as root (tests that need it skip otherwise). */
bool test_is_root(void);

/* Starts a helper server (argv[0] found in PATH or by path) that writes its
 * port to port_file once it listens; waits for that file (15 s at most).
 * The server is stopped at exit if test_server_stop() was not called. */
int test_server_start(char *const *argv, const char *port_file, int *ret_pid, unsigned *ret_port);
void test_server_stop(int pid);
/* Opens the descriptors a careless library leaves to children (none of
 * them O_CLOEXEC): a live TCP connection on 127.0.0.1 (both ends), a socket
 * pair (libcurl's wake-up pair), and a dup of one at number 300. Writes them
 * to ret and returns how many (TEST_INHERITABLE_FDS). */
#define TEST_INHERITABLE_FDS 5
size_t test_open_inheritable_fds(int ret[TEST_INHERITABLE_FDS]);
void test_close_fds(const int *fds, size_t n);
/* Runs a command to completion; returns its exit status (<0 when it could
 * not run). Output goes to the test's stderr unless ret_out is given. */
int test_run(char *const *argv, char **ret_out);

#define TEST(n) \
        static void test_##n(void); \
        static TestCase test_case_##n = { .name = #n, .fn = test_##n }; \
        __attribute__((constructor)) static void test_register_##n(void) \
        { \
                test_register(&test_case_##n); \
        } \
        static void test_##n(void)

#define DEFINE_TEST_MAIN \
        int main(int argc, char **argv) \
        { \
                return test_main(argc, argv); \
        }

#define ASSERT_TRUE(expr) \
        do { \
                if (!(expr)) \
                        test_fail(__FILE__, __LINE__, "expected true: %s", #expr); \
        } while (0)
#define ASSERT_FALSE(expr) \
        do { \
                if ((expr)) \
                        test_fail(__FILE__, __LINE__, "expected false: %s", #expr); \
        } while (0)
#define ASSERT_OK(expr) \
        do { \
                long long _r = (long long)(expr); \
                if (_r < 0) \
                        test_fail(__FILE__, __LINE__, "%s failed: %lld (%s)", #expr, _r, \
                                  strerror((int)-_r)); \
        } while (0)
#define ASSERT_ERROR(expr, err) \
        do { \
                long long _r = (long long)(expr); \
                if (_r != -(long long)(err)) \
                        test_fail(__FILE__, __LINE__, "%s: expected -%s (%d), got %lld", #expr, #err, \
                                  (err), _r); \
        } while (0)
#define ASSERT_EQ(a, b) \
        do { \
                long long _a = (long long)(a), _b = (long long)(b); \
                if (_a != _b) \
                        test_fail(__FILE__, __LINE__, "%s == %s: %lld != %lld", #a, #b, _a, _b); \
        } while (0)
#define ASSERT_NE(a, b) \
        do { \
                long long _a = (long long)(a), _b = (long long)(b); \
                if (_a == _b) \
                        test_fail(__FILE__, __LINE__, "%s != %s: both %lld", #a, #b, _a); \
        } while (0)
#define ASSERT_GE(a, b) \
        do { \
                long long _a = (long long)(a), _b = (long long)(b); \
                if (!(_a >= _b)) \
                        test_fail(__FILE__, __LINE__, "%s >= %s: %lld < %lld", #a, #b, _a, _b); \
        } while (0)
#define ASSERT_LE(a, b) \
        do { \
                long long _a = (long long)(a), _b = (long long)(b); \
                if (!(_a <= _b)) \
                        test_fail(__FILE__, __LINE__, "%s <= %s: %lld > %lld", #a, #b, _a, _b); \
        } while (0)
#define ASSERT_STREQ(a, b) \
        do { \
                const char *_a = (a), *_b = (b); \
                if (!_a || !_b || strcmp(_a, _b) != 0) \
                        test_fail(__FILE__, __LINE__, "%s == %s:\n  \"%s\"\n  \"%s\"", #a, #b, \
                                  _a ? _a : "(null)", _b ? _b : "(null)"); \
        } while (0)
#define ASSERT_NULL(p) \
        do { \
                if ((p) != NULL) \
                        test_fail(__FILE__, __LINE__, "expected NULL: %s", #p); \
        } while (0)
#define ASSERT_NOT_NULL(p) \
        do { \
                if ((p) == NULL) \
                        test_fail(__FILE__, __LINE__, "expected non-NULL: %s", #p); \
        } while (0)
#define ASSERT_CONTAINS(hay, needle) \
        do { \
                const char *_h = (hay), *_n = (needle); \
                if (!_h || !strstr(_h, _n)) \
                        test_fail(__FILE__, __LINE__, "%s does not contain \"%s\":\n  \"%s\"", #hay, _n, \
                                  _h ? _h : "(null)"); \
        } while (0)
#define ASSERT_NOT_CONTAINS(hay, needle) \
        do { \
                const char *_h = (hay), *_n = (needle); \
                if (_h && strstr(_h, _n)) \
                        test_fail(__FILE__, __LINE__, "%s contains \"%s\":\n  \"%s\"", #hay, _n, _h); \
        } while (0)
