/* SPDX-License-Identifier: Apache-2.0 */
/* Replays files (or every file of directories) through a fuzz target. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "cleanup.h"
#include "fileio.h"
#include "fuzz.h"
#include "log.h"
#include "strutil.h"

static int replay_file(const char *path)
{
        _cleanup_free_ char *data = NULL;
        size_t n;
        int r;

        r = read_full_file(path, 16u * 1024 * 1024, &data, &n);
        if (r < 0) {
                fprintf(stderr, "cannot read '%s': %s\n", path, strerror(-r));
                return r;
        }
        (void)LLVMFuzzerTestOneInput((const uint8_t *)data, n);
        return 0;
}

int main(int argc, char **argv)
{
        unsigned count = 0;

        log_set_max_level(LOG_CRIT);
        for (int i = 1; i < argc; i++) {
                struct stat st;
                if (stat(argv[i], &st) < 0) {
                        fprintf(stderr, "cannot stat '%s'\n", argv[i]);
                        return 1;
                }
                if (S_ISDIR(st.st_mode)) {
                        _cleanup_closedir_ DIR *d = opendir(argv[i]);
                        struct dirent *de;
                        while (d && (de = readdir(d))) {
                                _cleanup_free_ char *p = NULL;
                                if (de->d_name[0] == '.')
                                        continue;
                                p = strdup_printf("%s/%s", argv[i], de->d_name);
                                if (!p || replay_file(p) < 0)
                                        return 1;
                                count++;
                        }
                } else {
                        if (replay_file(argv[i]) < 0)
                                return 1;
                        count++;
                }
        }
        printf("replayed %u inputs\n", count);
        return count > 0 ? 0 : 77;
}
