/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The installation disk's fdatasync latency, measured in-process the way
 * the Go agent's disk_speed_check measures it with fio:
 *
 *   fio --filename PATH --name=test --rw=write --ioengine=sync --size=22m
 *       -bs=2300 --fdatasync=1 --output-format=json      (two jobs at once)
 *
 * i.e. sequential buffered writes of 2300 bytes from offset 0, each
 * followed by fdatasync(2), timing the fdatasync calls; the reported
 * io_sync_duration is the 99th percentile of those latencies in whole
 * milliseconds (Go's Duration.Milliseconds()), the worse of the two jobs.
 *
 * The region written is exactly fio's: fio issues full 2300-byte writes
 * until 22 MiB are covered, so 10030 writes ending at byte 23069000
 * (measured with fio 3.33 on a loop device; tests/agent/steps checks that
 * no byte outside [0, DISK_SPEED_REGION_END) changes). The bytes written
 * are a pseudo-random pattern, not zeros, so that thin or compressing
 * storage cannot skip them. O_DIRECT is not used: fio's job is buffered
 * (ioengine=sync without direct=1), and 2300 is not a sector multiple.
 *
 * Block devices are opened O_EXCL (a device that is mounted or held by
 * LVM/md is refused with EBUSY rather than written); a path that does not
 * exist is refused rather than created (fio would create a regular file).
 */

#include <stdbool.h>
#include <stdint.h>

#include "timeutil.h"

#define DISK_SPEED_BLOCK_SIZE 2300u
#define DISK_SPEED_SIZE (22u * 1024 * 1024)
#define DISK_SPEED_WRITES ((DISK_SPEED_SIZE + DISK_SPEED_BLOCK_SIZE - 1) / DISK_SPEED_BLOCK_SIZE)
#define DISK_SPEED_REGION_END ((uint64_t)DISK_SPEED_WRITES * DISK_SPEED_BLOCK_SIZE) /* 23069000 */
#define DISK_SPEED_JOBS 2
/* dry run: the Go agent's dryModeSyncDurationInNS, 1 ms */
#define DISK_SPEED_DRY_RUN_MS 1

typedef struct DiskSpeedResult {
        int64_t io_sync_ms; /* worst job's p99 */
        bool timed_out;
} DiskSpeedResult;

/*
 * Runs the two jobs on path, stopping at the deadline (CLOCK_MONOTONIC; 0:
 * none) with -ETIME. Returns 0, or a negative errno with a message in
 * *reterr when no job could measure (a job that fails while the other one
 * measures is ignored, as the Go agent ignores it).
 */
int disk_speed_measure(const char *path, usec_t deadline, DiskSpeedResult *ret, char **reterr);

/* Nearest-rank percentile (0 < p <= 100) of n samples (sorted in place). */
uint64_t disk_speed_percentile(uint64_t *samples, size_t n, double p);

/* The Go agent's DiskSpeedCheck (the disk_speed_check program): request
 * JSON in, the response JSON, error text and exit code out; dry_run fakes
 * the latency. */
int disk_speed_check_run(const char *request, bool dry_run, usec_t deadline, char **ret_output,
                         char **ret_error, int *ret_exit_code);
