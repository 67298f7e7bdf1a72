/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Reading and writing whole files safely: reads are bounded, writes are
 * atomic (temporary file, fsync, rename) so that nothing half-written is
 * ever left at the destination.
 */

#include <stddef.h>
#include <sys/types.h>

/* Reads the whole file (regular files, /proc and /sys files alike). The
 * result is NUL-terminated; -E2BIG when larger than max. */
int read_full_file(const char *path, size_t max, char **ret, size_t *ret_len);
/* Reads from an open fd until EOF, bounded the same way. */
int read_full_fd(int fd, size_t max, char **ret, size_t *ret_len);
/* First line of a small file, whitespace-trimmed (sysfs attributes). */
int read_one_line_file(const char *path, char **ret);

/* Writes all of data to fd, retrying short writes and EINTR. */
int write_all(int fd, const void *data, size_t len);

/* Writes data to path atomically with the given mode; parent must exist. */
int write_file_atomic(const char *path, const void *data, size_t len, mode_t mode);
/* Copies the rest of the file open at src_fd to path the same way. What was
 * at path stays intact until the rename: a running executable there is
 * replaced, never rewritten in place (no ETXTBSY). */
int copy_file_atomic(int src_fd, const char *path, mode_t mode);
/* Writes a string to an existing file (sysfs/procfs attributes). */
int write_string_file(const char *path, const char *s);

/* mkdir -p with the given mode for the directories it creates. */
int mkdir_p(const char *path, mode_t mode);
