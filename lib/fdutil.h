/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Descriptors a child must not inherit. cradle opens its own descriptors
 * O_CLOEXEC, but libraries do not all do so (libcurl's connection sockets
 * and its wake-up socket pair, c-ares' query sockets), and a descriptor
 * without the flag would reach every program we start: the agent's live
 * connection to the service held by podman containers, LVM reporting
 * "File descriptor 4 (socket:[...]) leaked on pvdisplay invocation". So, as
 * systemd's close_all_fds() does, the child closes everything but what it is
 * explicitly handed, between fork and exec.
 */

#include <stdbool.h>
#include <stddef.h>

/* Closes every descriptor from 3 up, except those in keep[] (any order;
 * values below 3 are ignored). close_range(2) where the kernel has it (5.9),
 * else closes what /proc/self/fd lists, else every number below
 * RLIMIT_NOFILE. Async-signal-safe (for the child between fork and exec):
 * no allocation, raw system calls. Returns 0 or -errno. */
int close_all_fds(const int *keep, size_t n_keep);

/* The same, never with close_range(2): for the fallback's tests. With
 * use_proc false, the brute-force loop. */
int close_all_fds_fallback(const int *keep, size_t n_keep, bool use_proc);

/* Sets FD_CLOEXEC on fd (for descriptors a library opened without it).
 * Returns 0 or -errno. */
int fd_cloexec(int fd);
