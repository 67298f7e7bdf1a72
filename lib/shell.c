/* SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "buf.h"
#include "cleanup.h"
#include "shell.h"
#include "strutil.h"

#define SHELL_SAFE "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./-_"

char *shell_quote(const char *s)
{
        _cleanup_buf_ Buf b = BUF_INIT(BUF_MAX_JSON_DOC);
        char *ret;
        int r = 0;

        if (*s && strspn(s, SHELL_SAFE) == strlen(s))
                return strdup(s);

        r = buf_append_char(&b, '\'');
        for (const char *p = s; r >= 0 && *p; p++)
                r = *p == '\'' ? buf_append_str(&b, "'\\''") : buf_append_char(&b, *p);
        if (r >= 0)
                r = buf_append_char(&b, '\'');
        if (r < 0 || buf_take(&b, &ret, NULL) < 0)
                return NULL;
        return ret;
}

char *shell_join(char *const *argv)
{
        _cleanup_strv_free_ char **quoted = NULL;

        STRV_FOREACH (a, argv) {
                char *q = shell_quote(*a);
                if (!q || strv_push(&quoted, q) < 0) {
                        free(q);
                        return NULL;
                }
        }
        return strv_join(quoted, " ");
}
