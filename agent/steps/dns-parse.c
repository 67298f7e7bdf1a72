/* SPDX-License-Identifier: Apache-2.0 */
/* The DNS message parser of resolver.h (no c-ares here: fuzzed alone). */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cleanup.h"
#include "resolver.h"
#include "strutil.h"

#define DNS_NAME_MAX 255

/* Reads the (possibly compressed) name at *off into out (dotted, no
 * trailing dot) and advances *off past it in the message. */
static int dns_read_name(const uint8_t *msg, size_t len, size_t *off, char out[static DNS_NAME_MAX + 1])
{
        size_t pos = *off, n = 0, end = 0;
        unsigned jumps = 0;
        bool jumped = false;

        for (;;) {
                uint8_t l;

                if (pos >= len)
                        return -EBADMSG;
                l = msg[pos];
                if ((l & 0xc0) == 0xc0) {
                        size_t target;

                        if (pos + 1 >= len || ++jumps > 64)
                                return -EBADMSG;
                        target = (size_t)(l & 0x3f) << 8 | msg[pos + 1];
                        if (!jumped)
                                end = pos + 2;
                        jumped = true;
                        if (target >= len)
                                return -EBADMSG;
                        pos = target;
                        continue;
                }
                if (l & 0xc0)
                        return -EBADMSG; /* the 0x40/0x80 label types are obsolete */
                pos++;
                if (l == 0)
                        break;
                if (pos + l > len || n + l + 1 > DNS_NAME_MAX)
                        return -EBADMSG;
                if (n > 0)
                        out[n++] = '.';
                for (size_t i = 0; i < l; i++) {
                        char c = (char)msg[pos + i];
                        /* a name we hand on must not carry NULs or dots inside a label */
                        out[n++] = c == 0 || c == '.' ? '?' : c;
                }
                pos += l;
        }
        out[n] = 0;
        *off = jumped ? end : pos;
        return 0;
}

typedef struct CnameRR {
        char owner[DNS_NAME_MAX + 1];
        char target[DNS_NAME_MAX + 1];
} CnameRR;

int dns_parse_cname_chain(const uint8_t *msg, size_t len, char **ret_qname, char ***ret_chain)
{
        _cleanup_free_ CnameRR *rrs = NULL;
        _cleanup_strv_free_ char **chain = NULL;
        char qname[DNS_NAME_MAX + 1], current[DNS_NAME_MAX + 1];
        unsigned qd, an;
        size_t off = 12, n_rrs = 0;
        int r;

        if (len < 12)
                return -EBADMSG;
        qd = (unsigned)(msg[4] << 8 | msg[5]);
        an = (unsigned)(msg[6] << 8 | msg[7]);
        if (qd < 1)
                return -EBADMSG;
        for (unsigned i = 0; i < qd; i++) {
                char name[DNS_NAME_MAX + 1];

                r = dns_read_name(msg, len, &off, i == 0 ? qname : name);
                if (r < 0)
                        return r;
                if (off + 4 > len)
                        return -EBADMSG;
                off += 4;
        }
        if (an > 0) {
                rrs = calloc(an, sizeof(CnameRR));
                if (!rrs)
                        return -ENOMEM;
        }
        for (unsigned i = 0; i < an; i++) {
                char owner[DNS_NAME_MAX + 1];
                uint16_t type, class, rdlen;
                size_t rdata;

                r = dns_read_name(msg, len, &off, owner);
                if (r < 0)
                        return r;
                if (off + 10 > len)
                        return -EBADMSG;
                type = (uint16_t)(msg[off] << 8 | msg[off + 1]);
                class = (uint16_t)(msg[off + 2] << 8 | msg[off + 3]);
                rdlen = (uint16_t)(msg[off + 8] << 8 | msg[off + 9]);
                rdata = off + 10;
                if (rdata + rdlen > len)
                        return -EBADMSG;
                if (type == DNS_TYPE_CNAME && class == DNS_CLASS_IN) {
                        size_t t = rdata;

                        r = dns_read_name(msg, len, &t, rrs[n_rrs].target);
                        if (r < 0)
                                return r;
                        if (t > rdata + rdlen)
                                return -EBADMSG;
                        memcpy(rrs[n_rrs].owner, owner, sizeof(owner));
                        n_rrs++;
                }
                off = rdata + rdlen;
        }

        /* follow the chain from the question's name; each record is used
         * at most once, so a CNAME loop ends */
        memcpy(current, qname, sizeof(current));
        for (size_t step = 0; step < n_rrs; step++) {
                bool found = false;

                for (size_t i = 0; i < n_rrs; i++)
                        if (rrs[i].owner[0] != 0 && strcasecmp(rrs[i].owner, current) == 0) {
                                r = strv_extend(&chain, rrs[i].target);
                                if (r < 0)
                                        return r;
                                memcpy(current, rrs[i].target, sizeof(current));
                                rrs[i].owner[0] = 0;
                                found = true;
                                break;
                        }
                if (!found)
                        break;
        }

        *ret_qname = strdup(qname);
        if (!*ret_qname)
                return -ENOMEM;
        *ret_chain = TAKE_PTR(chain);
        return 0;
}
