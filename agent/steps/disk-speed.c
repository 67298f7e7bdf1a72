/* SPDX-License-Identifier: Apache-2.0 */
#include <fcntl.h>
#include <linux/fs.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "cleanup.h"
#include "disk-speed.h"
#include "jsonutil.h"
#include "step-model.h"
#include "strutil.h"

typedef struct Job {
        int fd;
        unsigned seed;
        usec_t deadline;
        uint64_t *lat_ns;
        size_t n;
        int error;
        bool timed_out;
} Job;

static uint64_t now_ns(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *job_run(void *userdata)
{
        Job *j = userdata;
        uint8_t block[DISK_SPEED_BLOCK_SIZE];
        uint32_t x = 0x9e3779b9u ^ j->seed;

        for (size_t i = 0; i < sizeof(block); i++) {
                /* xorshift32: data no device can compress or dedupe away */
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                block[i] = (uint8_t)x;
        }
        for (size_t w = 0; w < DISK_SPEED_WRITES; w++) {
                off_t off = (off_t)w * DISK_SPEED_BLOCK_SIZE;
                size_t done = 0;
                uint64_t t0;

                if (j->deadline > 0 && now_usec(CLOCK_MONOTONIC) >= j->deadline) {
                        j->timed_out = true;
                        return NULL;
                }
                if (stop_requested()) {
                        j->error = -ECANCELED;
                        return NULL;
                }
                while (done < sizeof(block)) {
                        ssize_t k = pwrite(j->fd, block + done, sizeof(block) - done, off + (off_t)done);
                        if (k < 0) {
                                if (errno == EINTR)
                                        continue;
                                j->error = -errno;
                                return NULL;
                        }
                        if (k == 0) {
                                j->error = -ENOSPC;
                                return NULL;
                        }
                        done += (size_t)k;
                }
                t0 = now_ns();
                if (fdatasync(j->fd) < 0) {
                        j->error = -errno;
                        return NULL;
                }
                j->lat_ns[j->n++] = now_ns() - t0;
        }
        return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
        return x < y ? -1 : x > y;
}

uint64_t disk_speed_percentile(uint64_t *samples, size_t n, double p)
{
        size_t rank;

        if (n == 0)
                return 0;
        qsort(samples, n, sizeof(uint64_t), cmp_u64);
        /* nearest rank: the smallest value with at least p% of the samples
         * at or below it */
        rank = (size_t)((p / 100.0) * (double)n + 0.999999999);
        if (rank < 1)
                rank = 1;
        if (rank > n)
                rank = n;
        return samples[rank - 1];
}

static int open_target(const char *path, int *ret_fd, char **reterr)
{
        _cleanup_close_ int fd = -1;
        struct stat st;

        if (stat(path, &st) < 0) {
                *reterr = strdup_printf("cannot access '%s': %s", path, strerror(errno));
                return -errno;
        }
        if (S_ISBLK(st.st_mode)) {
                uint64_t size = 0;

                fd = open(path, O_WRONLY | O_CLOEXEC | O_EXCL);
                if (fd < 0) {
                        int r = -errno;
                        *reterr = strdup_printf("cannot open '%s'%s: %s", path,
                                                r == -EBUSY ? " (in use: mounted or held by another device)"
                                                            : "",
                                                strerror(-r));
                        return r;
                }
                if (ioctl(fd, BLKGETSIZE64, &size) < 0) {
                        int r = -errno;
                        *reterr = strdup_printf("cannot get the size of '%s': %s", path, strerror(-r));
                        return r;
                }
                if (size < DISK_SPEED_REGION_END) {
                        *reterr = strdup_printf("'%s' holds %llu bytes, less than the %llu the test writes",
                                                path, (unsigned long long)size,
                                                (unsigned long long)DISK_SPEED_REGION_END);
                        return -ENOSPC;
                }
        } else if (S_ISREG(st.st_mode)) {
                fd = open(path, O_WRONLY | O_CLOEXEC);
                if (fd < 0) {
                        int r = -errno;
                        *reterr = strdup_printf("cannot open '%s': %s", path, strerror(-r));
                        return r;
                }
        } else {
                *reterr = strdup_printf("'%s' is neither a block device nor a regular file", path);
                return -EINVAL;
        }
        *ret_fd = TAKE_FD(fd);
        return 0;
}

int disk_speed_measure(const char *path, usec_t deadline, DiskSpeedResult *ret, char **reterr)
{
        _cleanup_close_ int fd = -1;
        Job jobs[DISK_SPEED_JOBS] = {};
        pthread_t threads[DISK_SPEED_JOBS];
        bool started[DISK_SPEED_JOBS] = {};
        DiskSpeedResult res = {};
        int64_t worst = -1;
        int r, first_error = 0;

        r = open_target(path, &fd, reterr);
        if (r < 0)
                return r;

        /* both jobs write the same region at once, as two fio processes do */
        for (unsigned i = 0; i < DISK_SPEED_JOBS; i++) {
                jobs[i] = (Job){ .fd = fd, .seed = i + 1, .deadline = deadline };
                jobs[i].lat_ns = calloc(DISK_SPEED_WRITES, sizeof(uint64_t));
                if (!jobs[i].lat_ns) {
                        r = -ENOMEM;
                        break;
                }
                r = -pthread_create(&threads[i], NULL, job_run, &jobs[i]);
                if (r < 0)
                        break;
                started[i] = true;
        }
        for (unsigned i = 0; i < DISK_SPEED_JOBS; i++)
                if (started[i])
                        pthread_join(threads[i], NULL);
        if (r < 0) {
                for (unsigned i = 0; i < DISK_SPEED_JOBS; i++)
                        free(jobs[i].lat_ns);
                *reterr = strdup_printf("cannot start the disk test: %s", strerror(-r));
                return r;
        }

        for (unsigned i = 0; i < DISK_SPEED_JOBS; i++) {
                if (jobs[i].timed_out)
                        res.timed_out = true;
                else if (jobs[i].error < 0) {
                        if (first_error == 0)
                                first_error = jobs[i].error;
                } else {
                        /* ns -> ms truncated, as time.Duration.Milliseconds() */
                        int64_t ms =
                                (int64_t)(disk_speed_percentile(jobs[i].lat_ns, jobs[i].n, 99.0) / 1000000u);
                        worst = MAX(worst, ms);
                }
                free(jobs[i].lat_ns);
        }
        if (res.timed_out) {
                *reterr = strdup_printf("the disk test on '%s' did not finish in time", path);
                return -ETIME;
        }
        if (worst < 0) {
                *reterr = strdup_printf("writing to '%s' failed: %s", path, strerror(-first_error));
                return first_error;
        }
        res.io_sync_ms = worst;
        *ret = res;
        return 0;
}

static const ModelSchema path_schema = { .kind = MODEL_STRING, .go_type = "string" };
static const ModelField request_fields[] = {
        { "path", &path_schema, false },
        {},
};
/* json.Unmarshal only: disk_speed_check itself does not run Validate() */
static const ModelSchema request_schema = { .kind = MODEL_OBJECT,
                                            .go_type = "DiskSpeedCheckRequest",
                                            .fields = request_fields };

static char *response(int64_t ms, const char *path)
{
        _cleanup_(json_object_putp) json_object *o = json_new_object();

        /* DiskSpeedCheckResponse: both fields omitempty, alphabetical */
        if (!o || json_add_int64_nonzero(o, "io_sync_duration", ms) < 0 ||
            json_add_string_nonempty(o, "path", path) < 0)
                return NULL;
        return json_to_string(o, 0);
}

int disk_speed_check_run(const char *request, bool dry_run, usec_t deadline, char **ret_output,
                         char **ret_error, int *ret_exit_code)
{
        _cleanup_(json_object_putp) json_object *req = NULL;
        _cleanup_free_ char *err = NULL, *out = NULL;
        DiskSpeedResult res = {};
        const char *path;
        int r;

        *ret_output = *ret_error = NULL;
        *ret_exit_code = -1;
        r = model_parse_arg(request, &request_schema, &req, &err);
        if (r < 0) {
                *ret_error = strdup_printf("Failed to unmarshal DiskSpeedCheckRequest: %s", strna(err));
                return *ret_error ? 0 : -ENOMEM;
        }
        path = model_get_string(req, "path");
        if (!path) {
                *ret_error = strdup("Missing Filename in DiskSpeedCheckRequest");
                return *ret_error ? 0 : -ENOMEM;
        }
        if (isempty(path)) {
                *ret_output = response(0, path);
                *ret_error = strdup("Missing disk path");
                return *ret_output && *ret_error ? 0 : -ENOMEM;
        }
        if (dry_run) {
                /* "Don't want to cause the disk any harm in dry mode" */
                *ret_output = response(DISK_SPEED_DRY_RUN_MS, path);
                *ret_exit_code = 0;
                return *ret_output ? 0 : -ENOMEM;
        }

        r = disk_speed_measure(path, deadline, &res, &err);
        if (r == -ETIME) {
                /* the Go step's `timeout` killed the container: nothing on stdout */
                *ret_exit_code = 124;
                *ret_error = TAKE_PTR(err);
                return 0;
        }
        if (r < 0) {
                *ret_output = response(0, path);
                *ret_error =
                        strdup_printf("Could not get I/O performance for path %s (%s)", path, strna(err));
                return *ret_output && *ret_error ? 0 : -ENOMEM;
        }
        out = response(res.io_sync_ms, path);
        if (!out)
                return -ENOMEM;
        *ret_output = TAKE_PTR(out);
        *ret_exit_code = 0;
        return 0;
}
