/* SPDX-License-Identifier: Apache-2.0 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include <openssl/evp.h>

#include "macro.h"
#include "uuid.h"

void uuid_format(const uint8_t b[static 16], char ret[static UUID_STRING_MAX])
{
        snprintf(ret, UUID_STRING_MAX,
                 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2],
                 b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

void uuid_random(char ret[static UUID_STRING_MAX])
{
        uint8_t b[16];

        while (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b))
                ;
        b[6] = (b[6] & 0x0f) | 0x40;
        b[8] = (b[8] & 0x3f) | 0x80;
        uuid_format(b, ret);
}

int uuid_from_md5(const void *data, size_t len, char ret[static UUID_STRING_MAX])
{
        uint8_t digest[EVP_MAX_MD_SIZE];
        unsigned n = 0;

        if (EVP_Digest(data, len, digest, &n, EVP_md5(), NULL) != 1 || n != 16)
                return -EIO;
        uuid_format(digest, ret);
        return 0;
}

bool uuid_is_valid(const char *s)
{
        static const int groups[] = { 8, 4, 4, 4, 12 };

        if (!s || strlen(s) != 36)
                return false;
        for (size_t g = 0; g < ELEMENTSOF(groups); g++) {
                for (int i = 0; i < groups[g]; i++, s++)
                        if (!isxdigit((unsigned char)*s))
                                return false;
                if (g < ELEMENTSOF(groups) - 1 && *s++ != '-')
                        return false;
        }
        return true;
}
