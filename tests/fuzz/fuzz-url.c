/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz-sources: */
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "fuzz.h"
#include "http.h"
#include "redact.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        _cleanup_free_ char *s = NULL, *r = NULL, *h = NULL, *proxy = NULL, *joined = NULL;

        if (size > 4096)
                return 0;
        /* not strndup: the input has no terminator for it to look for */
        s = malloc(size + 1);
        if (!s)
                return 0;
        memcpy(s, data, size);
        s[size] = 0;
        r = redact_url(s);
        h = redact_header(s);
        joined = http_url_join("http://s:6000/api/assisted-install", s);
        setenv("HTTP_PROXY", "http://p:3128", 1);
        setenv("NO_PROXY", s, 1);
        (void)http_proxy_for_url("http://svc.example.com:8080/x", &proxy);
        free(proxy);
        proxy = NULL;
        unsetenv("NO_PROXY");
        (void)http_proxy_for_url(s, &proxy);
        return 0;
}
