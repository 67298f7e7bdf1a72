/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * A small writer of .tar.gz archives: POSIX ustar headers in a gzip stream
 * (gzip.h's GzipWriter), the format of "tar -czf". Only what the logs
 * senders need (the agent's, the bootstrap's and the controller's logs):
 * directories, regular files (from disk or from memory) and nothing else (no links, devices, sparse files or PAX records). Names
 * longer than ustar can hold (100 bytes, or 155 + 100 split at a slash)
 * are refused with -ENAMETOOLONG.
 *
 * Usage:
 *         _cleanup_(tar_writer_freep) TarWriter *t = NULL;
 *         r = tar_writer_new(fd, mtime, &t);
 *         r = tar_writer_add_dir(t, "logs_host_X", 0755);
 *         r = tar_writer_add_file(t, "logs_host_X/mount.logs", "/var/log/logs_host_X/mount.logs");
 *         r = tar_writer_finish(t);    (end blocks, gzip trailer; fd stays open)
 */

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "macro.h"

typedef struct TarWriter TarWriter;

/* Writes to fd (not owned). mtime is used for entries added from memory
 * and for directories. */
int tar_writer_new(int fd, time_t mtime, TarWriter **ret);
TarWriter *tar_writer_free(TarWriter *t);
DEFINE_TRIVIAL_CLEANUP_FUNC(TarWriter *, tar_writer_free)

int tar_writer_add_dir(TarWriter *t, const char *name, mode_t mode);
/* Adds the regular file at path under name, with its mode, size and mtime. */
int tar_writer_add_file(TarWriter *t, const char *name, const char *path);
/* The same with the entry's mode given (0: the file's). */
int tar_writer_add_file_mode(TarWriter *t, const char *name, const char *path, mode_t mode);
int tar_writer_add_data(TarWriter *t, const char *name, mode_t mode, const void *data, size_t len);
/* Adds path under name: a regular file, or a directory with everything
 * under it (names sorted, as "tar -czf ARCHIVE -C PARENT NAME"); what is
 * neither (links, devices) is left out. */
int tar_writer_add_tree(TarWriter *t, const char *name, const char *path);
/* Two zero blocks, then the gzip trailer. Nothing may be added afterwards. */
int tar_writer_finish(TarWriter *t);

/* The ustar header for one entry into block (512 bytes); exposed for the
 * tests. typeflag is '0' (file) or '5' (directory). */
int tar_header_fill(char block[static 512], const char *name, mode_t mode, uint64_t size, time_t mtime,
                    char typeflag);
