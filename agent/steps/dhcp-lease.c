/* SPDX-License-Identifier: Apache-2.0 */
/* dhclient lease files (dhcp-lease.h; fuzzed alone). */
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "cleanup.h"
#include "dhcp-lease.h"
#include "strutil.h"

#define LEASE_TEXT_MAX (2u * 1024 * 1024)

static bool is_space(char c)
{
        return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
}

int dhcp_lease_last(const char *text, char **ret)
{
        size_t end = strlen(text), open;

        while (end > 0 && is_space(text[end - 1]))
                end--;
        if (end == 0 || text[end - 1] != '}')
                return -ENOENT;
        /* [^}{]* back to the opening brace */
        for (open = end - 1; open > 0; open--)
                if (text[open - 1] == '{' || text[open - 1] == '}')
                        break;
        if (open == 0 || text[open - 1] != '{')
                return -ENOENT;
        open--;
        {
                size_t k = open, start;

                while (k > 0 && is_space(text[k - 1]))
                        k--;
                if (k < 5 || !strneq(text + k - 5, "lease", 5))
                        return -ENOENT;
                start = k - 5;
                if (start > 0 && !is_space(text[start - 1]))
                        return -ENOENT;
                *ret = strndup(text + start, end - start);
        }
        return *ret ? 0 : -ENOMEM;
}

int dhcp_lease_address(const char *lease, char **ret)
{
        const char *p = lease;

        while ((p = strstr(p, "fixed-address"))) {
                const char *v = p + strlen("fixed-address");
                size_t n;

                if (p > lease && !is_space(p[-1])) {
                        p = v;
                        continue;
                }
                if (!is_space(*v)) {
                        p = v;
                        continue;
                }
                while (is_space(*v))
                        v++;
                n = strcspn(v, "; \t\r\n\f");
                if (n == 0 || v[n] == 0)
                        return -ENOENT;
                *ret = strndup(v, n);
                return *ret ? 0 : -ENOMEM;
        }
        return -ENOENT;
}

char *dhcp_lease_set_interface(const char *text, const char *iface)
{
        _cleanup_buf_ Buf b = BUF_INIT(LEASE_TEXT_MAX);
        const char *p = text;
        char *ret = NULL;

        /* interface\s+"[^"]+" -> interface "IFACE" */
        while (*p) {
                if (startswith(p, "interface")) {
                        const char *q = p + strlen("interface"), *close = NULL;
                        size_t k = 0;

                        while (is_space(q[k]))
                                k++;
                        if (k > 0 && q[k] == '"' && q[k + 1] != '"' && q[k + 1] != 0)
                                close = strchr(q + k + 1, '"');
                        if (close) {
                                if (buf_appendf(&b, "interface \"%s\"", iface) < 0)
                                        return NULL;
                                p = close + 1;
                                continue;
                        }
                }
                if (buf_append_char(&b, *p++) < 0)
                        return NULL;
        }
        if (buf_take(&b, &ret, NULL) < 0)
                return NULL;
        return ret;
}
