/* SPDX-License-Identifier: Apache-2.0 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "buf.h"
#include "cleanup.h"
#include "redact.h"
#include "strutil.h"

static pthread_mutex_t secrets_lock = PTHREAD_MUTEX_INITIALIZER;
static char **secrets;

static void secrets_erase(void)
{
        pthread_mutex_lock(&secrets_lock);
        if (secrets)
                for (char **s = secrets; *s; s++)
                        erase_and_free(*s);
        free(secrets);
        secrets = NULL;
        pthread_mutex_unlock(&secrets_lock);
}

int redact_register_secret(const char *value)
{
        static bool registered_atexit;
        int r = 0;

        if (!value || strlen(value) < 4)
                return 0;

        pthread_mutex_lock(&secrets_lock);
        if (!strv_contains(secrets, value))
                r = strv_extend(&secrets, value);
        if (r >= 0 && !registered_atexit) {
                atexit(secrets_erase);
                registered_atexit = true;
        }
        pthread_mutex_unlock(&secrets_lock);
        return r;
}

char *redact_known_secrets(const char *s)
{
        _cleanup_free_ char *out = strdup(s);

        if (!out)
                return NULL;

        pthread_mutex_lock(&secrets_lock);
        STRV_FOREACH (secret, secrets) {
                if (!strstr(out, *secret))
                        continue;
                char *n = str_replace_all(out, *secret, REDACTED);
                if (!n) {
                        pthread_mutex_unlock(&secrets_lock);
                        return NULL;
                }
                free(out);
                out = n;
        }
        pthread_mutex_unlock(&secrets_lock);
        return TAKE_PTR(out);
}

static bool query_key_is_sensitive(const char *key, size_t len)
{
        static const char *const names[] = {
                "token",
                "api_key",
                "apikey",
                "access_token",
                "refresh_token",
                "id_token",
                "password",
                "passwd",
                "secret",
                "client_secret",
                "signature",
                "sig",
                "x-amz-signature",
                "x-amz-credential",
                "x-amz-security-token",
                "auth",
                "authorization",
                "key",
        };

        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                if (strlen(names[i]) == len && strncasecmp(key, names[i], len) == 0)
                        return true;
        return false;
}

char *redact_url(const char *url)
{
        _cleanup_buf_ Buf b = BUF_INIT(BUF_MAX_SMALL_FILE);
        const char *p = url, *scheme_end, *authority, *at, *path_start, *q;
        char *ret;

        scheme_end = strstr(url, "://");
        authority = scheme_end ? scheme_end + 3 : url;
        path_start = authority + strcspn(authority, "/?#");

        /* userinfo: keep the user, hide the password */
        at = memchr(authority, '@', (size_t)(path_start - authority));
        if (at) {
                const char *colon = memchr(authority, ':', (size_t)(at - authority));
                if (colon) {
                        if (buf_append(&b, p, (size_t)(colon + 1 - p)) < 0 ||
                            buf_append_str(&b, REDACTED) < 0)
                                return NULL;
                        p = at;
                }
        }

        q = strchr(path_start, '?');
        if (!q) {
                if (buf_append_str(&b, p) < 0)
                        return NULL;
                goto done;
        }
        if (buf_append(&b, p, (size_t)(q + 1 - p)) < 0)
                return NULL;
        p = q + 1;
        while (*p && *p != '#') {
                size_t n = strcspn(p, "&#");
                const char *eq = memchr(p, '=', n);
                if (eq && query_key_is_sensitive(p, (size_t)(eq - p))) {
                        if (buf_append(&b, p, (size_t)(eq + 1 - p)) < 0 || buf_append_str(&b, REDACTED) < 0)
                                return NULL;
                } else if (buf_append(&b, p, n) < 0)
                        return NULL;
                p += n;
                if (*p == '&') {
                        if (buf_append_char(&b, '&') < 0)
                                return NULL;
                        p++;
                }
        }
        if (buf_append_str(&b, p) < 0)
                return NULL;
done:
        if (buf_take(&b, &ret, NULL) < 0)
                return NULL;
        return ret;
}

bool redact_header_is_sensitive(const char *name)
{
        static const char *const names[] = {
                "authorization", "proxy-authorization", "x-secret-key", "cookie",
                "set-cookie",    "x-auth-token",        "x-api-key",    "x-registry-auth",
        };

        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                if (strcasecmp(name, names[i]) == 0)
                        return true;
        return false;
}

char *redact_header(const char *line)
{
        const char *colon = strchr(line, ':');
        _cleanup_free_ char *name = NULL;

        if (!colon)
                return strdup(line);
        name = strndup(line, (size_t)(colon - line));
        if (!name)
                return NULL;
        strstrip(name);
        if (!redact_header_is_sensitive(name))
                return strdup(line);
        return strdup_printf("%.*s: " REDACTED, (int)(colon - line), line);
}
