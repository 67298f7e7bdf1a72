/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Base macros every cradle file may use: scope-bound ownership (_cleanup_),
 * explicit hand-off (TAKE_PTR, TAKE_FD), compiler-checked contracts and the
 * negative-errno error convention. Modelled on systemd's macro.h and
 * alloc-util.h; nothing here allocates.
 */

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _unused_ __attribute__((unused))
#define _warn_unused_result_ __attribute__((warn_unused_result))
#define _noreturn_ __attribute__((noreturn))
#define _pure_ __attribute__((pure))
#define _sentinel_ __attribute__((sentinel))
#define _likely_(x) (__builtin_expect(!!(x), 1))
#define _unlikely_(x) (__builtin_expect(!!(x), 0))

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

/* Errors we invent ourselves, as opposed to ones a syscall gave us. The bit
 * keeps log_*_errno() from pretending errno said so; ERRNO_VALUE() strips it. */
#define SYNTHETIC_ERRNO(e) (1 << 30 | (e))
#define ERRNO_VALUE(e) (abs(e) & ~(1 << 30))
#define ERRNO_IS_SYNTHETIC(e) ((abs(e) & (1 << 30)) != 0)

/* Returns a negative errno from a libc call that set errno, never 0. */
static inline int negative_errno(void)
{
        return errno > 0 ? -errno : -EIO;
}

#define streq(a, b) (strcmp((a), (b)) == 0)
#define strneq(a, b, n) (strncmp((a), (b), (n)) == 0)
#define streq_ptr(a, b) ((a) == (b) || ((a) && (b) && streq((a), (b))))
#define isempty(s) (!(s) || !(s)[0])
#define strempty(s) ((s) ? (s) : "")
#define strna(s) ((s) ? (s) : "n/a")

#define TAKE_PTR(p) \
        ({ \
                __typeof__(p) _ptr_ = (p); \
                (p) = NULL; \
                _ptr_; \
        })

#define TAKE_FD(fd) \
        ({ \
                int _fd_ = (fd); \
                (fd) = -1; \
                _fd_; \
        })

static inline void freep(void *p)
{
        free(*(void **)p);
}
#define _cleanup_free_ _cleanup_(freep)

/* Closes and returns -1 so that "fd = safe_close(fd);" resets the variable;
 * errno is preserved so a caller's error report stays intact. */
static inline int safe_close(int fd)
{
        if (fd >= 0) {
                int saved = errno;
                (void)close(fd);
                errno = saved;
        }
        return -1;
}

static inline void closep(int *fd)
{
        safe_close(*fd);
}
#define _cleanup_close_ _cleanup_(closep)

#define DEFINE_TRIVIAL_CLEANUP_FUNC(type, func) \
        static inline void func##p(type *p) \
        { \
                if (*p) \
                        func(*p); \
        }

/* Zero memory that held a secret before releasing it: the compiler may not
 * drop an explicit_bzero(). */
void erase_and_free(void *p);
static inline void erase_and_freep(void *p)
{
        erase_and_free(*(void **)p);
}
#define _cleanup_erase_ _cleanup_(erase_and_freep)

/* Clamp arithmetic helpers used for size computations that must not wrap. */
static inline bool size_add_overflows(size_t a, size_t b, size_t *ret)
{
        return __builtin_add_overflow(a, b, ret);
}
