/* SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>

#include "chrony.h"
#include "cleanup.h"
#include "strutil.h"

const char *chrony_state_name(char c)
{
        switch (c) {
        case '*':
                return "synced";
        case '+':
                return "combined";
        case '-':
                return "not_combined";
        case '?':
                return "unreachable";
        case '~':
                return "variable";
        case 'x':
        default:
                return "error";
        }
}

void chrony_sources_free(ChronySource *l, size_t n)
{
        for (size_t i = 0; i < n; i++)
                free(l[i].name);
        free(l);
}

int chrony_parse_sources(const char *output, ChronySource **ret, size_t *ret_n)
{
        _cleanup_strv_free_ char **lines = NULL;
        ChronySource *l = NULL;
        size_t n = 0;
        int r;

        r = strv_split(output, "\n", &lines);
        if (r < 0)
                return r;
        STRV_FOREACH (line, lines) {
                _cleanup_strv_free_ char **fields = NULL;
                ChronySource *nl;

                /* strings.Fields: runs of Go's white space */
                r = strv_split(*line, " \t\r\v\f", &fields);
                if (r < 0) {
                        chrony_sources_free(l, n);
                        return r;
                }
                /* a server line: "^*", "^+"... then the name. The Go agent
                 * would index out of range on a bare "^" or a line without a
                 * second field; such lines are skipped here. */
                if (strv_length(fields) < 2 || fields[0][0] != '^' || fields[0][1] == 0)
                        continue;
                nl = reallocarray(l, n + 1, sizeof(ChronySource));
                if (!nl) {
                        chrony_sources_free(l, n);
                        return -ENOMEM;
                }
                l = nl;
                l[n] = (ChronySource){ .name = strdup(fields[1]), .state = chrony_state_name(fields[0][1]) };
                if (!l[n].name) {
                        chrony_sources_free(l, n);
                        return -ENOMEM;
                }
                n++;
        }
        *ret = l;
        *ret_n = n;
        return 0;
}
