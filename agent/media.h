/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The live ISO's media check: before and after each step the Go agent makes
 * sure the device holding /run/media/iso still reads, because a host whose
 * virtual media was detached fails in strange ways.
 */

/* The mount source of the file system holding path, from a mountinfo file
 * (/proc/1/mountinfo: PID 1's view, which is the host's also inside a
 * --pid=host container). Allocated. */
int media_mount_source(const char *mountinfo, const char *path, char **ret);

/* 0 when there is no /run/media/iso (a minimal ISO or PXE) or its device
 * reads; otherwise -EIO with the Go agent's message in reterr. */
int media_check(const char *iso_path, char **reterr);

/* The reply's exit code for a disconnected media. */
#define MEDIA_DISCONNECTED_EXIT_CODE 256
