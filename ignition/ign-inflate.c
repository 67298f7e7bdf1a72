/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gzip decompression (RFC 1952 around RFC 1951 deflate) for Ignition's
 * "compression": "gzip" resources. cradle links no zlib (the static build
 * carries only what DESIGN.md names), and decompressing is all it needs:
 * a small canonical-Huffman inflater, bounded by the caller's ceiling, with
 * the CRC-32 and length of every member checked. Concatenated members are
 * read one after the other, as Go's gzip reader does.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "ign-internal.h"

#define MAXBITS 15
#define MAXLCODES 286
#define MAXDCODES 30
#define FIXLCODES 288

typedef struct Inflate {
        const uint8_t *in;
        size_t in_len, pos;
        uint32_t bitbuf;
        int bitcnt;
        Buf *out;
} Inflate;

typedef struct Huffman {
        short count[MAXBITS + 1];
        short symbol[FIXLCODES];
} Huffman;

static int bits(Inflate *s, int need, uint32_t *ret)
{
        uint32_t val = s->bitbuf;

        while (s->bitcnt < need) {
                if (s->pos >= s->in_len)
                        return -EBADMSG;
                val |= (uint32_t)s->in[s->pos++] << s->bitcnt;
                s->bitcnt += 8;
        }
        s->bitbuf = val >> need;
        s->bitcnt -= need;
        *ret = val & ((1u << need) - 1);
        return 0;
}

static int decode(Inflate *s, const Huffman *h, int *ret)
{
        int code = 0, first = 0, index = 0;

        for (int len = 1; len <= MAXBITS; len++) {
                uint32_t b;
                int r = bits(s, 1, &b);
                if (r < 0)
                        return r;
                code |= (int)b;
                int count = h->count[len];
                if (code - count < first) {
                        *ret = h->symbol[index + (code - first)];
                        return 0;
                }
                index += count;
                first += count;
                first <<= 1;
                code <<= 1;
        }
        return -EBADMSG;
}

/* Builds the decoding tables; incomplete codes are allowed only for the
 * one-distance-code case deflate permits, over-subscribed ones never. */
static int construct(Huffman *h, const short *length, int n, bool allow_incomplete)
{
        short offs[MAXBITS + 1];
        int left = 1;

        memset(h->count, 0, sizeof(h->count));
        for (int symbol = 0; symbol < n; symbol++)
                h->count[length[symbol]]++;
        if (h->count[0] == n)
                return 0;
        for (int len = 1; len <= MAXBITS; len++) {
                left <<= 1;
                left -= h->count[len];
                if (left < 0)
                        return -EBADMSG;
        }
        offs[1] = 0;
        for (int len = 1; len < MAXBITS; len++)
                offs[len + 1] = (short)(offs[len] + h->count[len]);
        for (int symbol = 0; symbol < n; symbol++)
                if (length[symbol] != 0)
                        h->symbol[offs[length[symbol]]++] = (short)symbol;
        if (left > 0 && !allow_incomplete)
                return -EBADMSG;
        return 0;
}

static const short length_base[29] = { 3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                       31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258 };
static const short length_extra[29] = { 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                        2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0 };
static const short dist_base[30] = { 1,    2,    3,    4,    5,    7,    9,    13,    17,    25,
                                     33,   49,   65,   97,   129,  193,  257,  385,   513,   769,
                                     1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577 };
static const short dist_extra[30] = { 0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                      6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13 };

static int codes(Inflate *s, const Huffman *lencode, const Huffman *distcode, size_t member_start)
{
        int symbol, r;

        for (;;) {
                r = decode(s, lencode, &symbol);
                if (r < 0)
                        return r;
                if (symbol < 256) {
                        char c = (char)symbol;
                        r = buf_append(s->out, &c, 1);
                        if (r < 0)
                                return r;
                } else if (symbol == 256)
                        return 0;
                else {
                        uint32_t e;
                        size_t len, dist;
                        symbol -= 257;
                        if (symbol >= 29)
                                return -EBADMSG;
                        r = bits(s, length_extra[symbol], &e);
                        if (r < 0)
                                return r;
                        len = (size_t)length_base[symbol] + e;
                        r = decode(s, distcode, &symbol);
                        if (r < 0)
                                return r;
                        if (symbol >= 30)
                                return -EBADMSG;
                        r = bits(s, dist_extra[symbol], &e);
                        if (r < 0)
                                return r;
                        dist = (size_t)dist_base[symbol] + e;
                        if (dist > s->out->len - member_start)
                                return -EBADMSG;
                        for (size_t i = 0; i < len; i++) {
                                char c = s->out->data[s->out->len - dist];
                                r = buf_append(s->out, &c, 1);
                                if (r < 0)
                                        return r;
                        }
                }
        }
}

static int stored(Inflate *s)
{
        size_t len;
        int r;

        s->bitbuf = 0;
        s->bitcnt = 0;
        if (s->pos + 4 > s->in_len)
                return -EBADMSG;
        len = s->in[s->pos] | (size_t)s->in[s->pos + 1] << 8;
        if ((s->in[s->pos + 2] ^ s->in[s->pos]) != 0xff || (s->in[s->pos + 3] ^ s->in[s->pos + 1]) != 0xff)
                return -EBADMSG;
        s->pos += 4;
        if (len > s->in_len - s->pos)
                return -EBADMSG;
        r = buf_append(s->out, s->in + s->pos, len);
        if (r < 0)
                return r;
        s->pos += len;
        return 0;
}

static int fixed(Inflate *s, size_t member_start)
{
        /* built per block rather than cached in statics: callers may be
         * threads of the agent, and the tables are cheap */
        Huffman lencode, distcode;
        short lengths[FIXLCODES];

        {
                int symbol = 0;
                for (; symbol < 144; symbol++)
                        lengths[symbol] = 8;
                for (; symbol < 256; symbol++)
                        lengths[symbol] = 9;
                for (; symbol < 280; symbol++)
                        lengths[symbol] = 7;
                for (; symbol < FIXLCODES; symbol++)
                        lengths[symbol] = 8;
                (void)construct(&lencode, lengths, FIXLCODES, true);
                for (symbol = 0; symbol < MAXDCODES; symbol++)
                        lengths[symbol] = 5;
                (void)construct(&distcode, lengths, MAXDCODES, true);
        }
        return codes(s, &lencode, &distcode, member_start);
}

static int dynamic(Inflate *s, size_t member_start)
{
        static const short order[19] = { 16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15 };
        short lengths[MAXLCODES + MAXDCODES];
        Huffman lencode, distcode;
        uint32_t nlen, ndist, ncode, v;
        int index, r, symbol;

        if ((r = bits(s, 5, &nlen)) < 0 || (r = bits(s, 5, &ndist)) < 0 || (r = bits(s, 4, &ncode)) < 0)
                return r;
        nlen += 257;
        ndist += 1;
        ncode += 4;
        if (nlen > MAXLCODES || ndist > MAXDCODES)
                return -EBADMSG;
        for (index = 0; index < (int)ncode; index++) {
                r = bits(s, 3, &v);
                if (r < 0)
                        return r;
                lengths[order[index]] = (short)v;
        }
        for (; index < 19; index++)
                lengths[order[index]] = 0;
        r = construct(&lencode, lengths, 19, false);
        if (r < 0)
                return r;
        index = 0;
        while (index < (int)(nlen + ndist)) {
                short len = 0;
                uint32_t rep;
                r = decode(s, &lencode, &symbol);
                if (r < 0)
                        return r;
                if (symbol < 16) {
                        lengths[index++] = (short)symbol;
                        continue;
                }
                if (symbol == 16) {
                        if (index == 0)
                                return -EBADMSG;
                        len = lengths[index - 1];
                        r = bits(s, 2, &rep);
                        rep += 3;
                } else if (symbol == 17) {
                        r = bits(s, 3, &rep);
                        rep += 3;
                } else {
                        r = bits(s, 7, &rep);
                        rep += 11;
                }
                if (r < 0)
                        return r;
                if (index + (int)rep > (int)(nlen + ndist))
                        return -EBADMSG;
                while (rep--)
                        lengths[index++] = len;
        }
        if (lengths[256] == 0)
                return -EBADMSG;
        r = construct(&lencode, lengths, (int)nlen, false);
        if (r < 0)
                return r;
        /* one distance code (or none, for literal-only data) may be incomplete */
        r = construct(&distcode, lengths + nlen, (int)ndist, true);
        if (r < 0)
                return r;
        return codes(s, &lencode, &distcode, member_start);
}

static uint32_t crc32_update(uint32_t crc, const uint8_t *p, size_t n)
{
        uint32_t table[256];

        for (uint32_t i = 0; i < 256; i++) {
                uint32_t c = i;
                for (int k = 0; k < 8; k++)
                        c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
                table[i] = c;
        }
        crc = ~crc;
        while (n--)
                crc = table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
        return ~crc;
}

static int gzip_member(Inflate *s)
{
        size_t start = s->out->len;
        uint8_t flags;
        uint32_t last, type, crc, isize;
        int r;

        if (s->in_len - s->pos < 18 || s->in[s->pos] != 0x1f || s->in[s->pos + 1] != 0x8b ||
            s->in[s->pos + 2] != 8)
                return -EBADMSG;
        flags = s->in[s->pos + 3];
        if (flags & 0xe0)
                return -EBADMSG;
        s->pos += 10;
        if (flags & 4) { /* FEXTRA */
                size_t xlen;
                if (s->in_len - s->pos < 2)
                        return -EBADMSG;
                xlen = s->in[s->pos] | (size_t)s->in[s->pos + 1] << 8;
                s->pos += 2;
                if (xlen > s->in_len - s->pos)
                        return -EBADMSG;
                s->pos += xlen;
        }
        for (int bit = 8; bit <= 16; bit <<= 1) /* FNAME, FCOMMENT: NUL-terminated */
                if (flags & bit) {
                        const uint8_t *z = memchr(s->in + s->pos, 0, s->in_len - s->pos);
                        if (!z)
                                return -EBADMSG;
                        s->pos = (size_t)(z - s->in) + 1;
                }
        if (flags & 2) { /* FHCRC */
                if (s->in_len - s->pos < 2)
                        return -EBADMSG;
                s->pos += 2;
        }

        s->bitbuf = 0;
        s->bitcnt = 0;
        do {
                if ((r = bits(s, 1, &last)) < 0 || (r = bits(s, 2, &type)) < 0)
                        return r;
                switch (type) {
                case 0:
                        r = stored(s);
                        break;
                case 1:
                        r = fixed(s, start);
                        break;
                case 2:
                        r = dynamic(s, start);
                        break;
                default:
                        return -EBADMSG;
                }
                if (r < 0)
                        return r;
        } while (!last);

        if (s->in_len - s->pos < 8)
                return -EBADMSG;
        crc = s->in[s->pos] | (uint32_t)s->in[s->pos + 1] << 8 | (uint32_t)s->in[s->pos + 2] << 16 |
              (uint32_t)s->in[s->pos + 3] << 24;
        isize = s->in[s->pos + 4] | (uint32_t)s->in[s->pos + 5] << 8 | (uint32_t)s->in[s->pos + 6] << 16 |
                (uint32_t)s->in[s->pos + 7] << 24;
        s->pos += 8;
        if (crc != crc32_update(0, (const uint8_t *)s->out->data + start, s->out->len - start) ||
            isize != (uint32_t)(s->out->len - start))
                return -EBADMSG;
        return 0;
}

int ign_gunzip(const void *in, size_t in_len, size_t max, void **ret, size_t *ret_len)
{
        _cleanup_buf_ Buf out = BUF_INIT(max);
        Inflate s = { .in = in, .in_len = in_len, .out = &out };
        char *data;
        size_t len;
        int r;

        do {
                r = gzip_member(&s);
                if (r < 0)
                        return r;
        } while (s.pos < s.in_len);

        r = buf_take(&out, &data, &len);
        if (r < 0)
                return r;
        *ret = data;
        if (ret_len)
                *ret_len = len;
        return 0;
}
