/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Name resolution for the steps (domain-resolution, ntp-synchronizer), the
 * same way in the dynamic and the static build: c-ares, which reads
 * /etc/hosts, /etc/resolv.conf (servers, search, ndots, timeout, attempts)
 * and the hosts: order of /etc/nsswitch.conf itself. A static glibc binary
 * cannot use getaddrinfo() (NSS modules are dlopen()ed from the host's
 * glibc); the static build links Debian's libcares.a for curl already
 * (packaging/static), so the steps use the same library everywhere.
 *
 * Semantics follow the Go agent's calls:
 *  resolve_host()    net.LookupIP + net.LookupCNAME: addresses split by
 *                    family, "not found" (NXDOMAIN, no records) apart from
 *                    failures, and the canonical name ("name." when there is
 *                    no CNAME, the end of the CNAME chain otherwise);
 *  resolve_reverse() net.LookupAddr: hosts file, then PTR.
 *
 * Each call makes its own channel (thread-safe), bounded by timeout.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "timeutil.h"

typedef struct ResolveResult {
        char **ipv4; /* never NULL after success */
        char **ipv6;
        char *canonical; /* NULL when the name did not resolve */
        char **cname_chain; /* the CNAME targets followed, in order (NULL when none) */
        bool not_found;
} ResolveResult;

void resolve_result_done(ResolveResult *r);

/* 0 with *ret filled (also for "not found": ret->not_found), or a negative
 * errno with a message (server failure, timeout, refused). */
int resolve_host(const char *name, usec_t timeout, ResolveResult *ret, char **reterr);

/* The error text of Go's resolver for a c-ares status ("no such host",
 * "i/o timeout", "server misbehaving" for SERVFAIL, REFUSED and the other
 * rcodes, "read: connection refused" when the server's port is closed,
 * ...); NULL for a status Go has no words for. */
const char *resolve_go_error(int ares_status);
/* net.DNSError's text: "lookup NAME on SERVER: TEXT" ("lookup NAME: TEXT"
 * without a server); allocated. */
char *resolve_error_message(const char *name, const char *server, int ares_status);

/* Names for an IPv4/IPv6 address in text form; -ENOENT when none. */
int resolve_reverse(const char *address, usec_t timeout, char ***ret_names);

/* RFC 1035 numbers (arpa/nameser.h would pull in sys/param.h's MIN/MAX) */
#define DNS_CLASS_IN 1
#define DNS_TYPE_CNAME 5

/*
 * The DNS message parser used for CNAME answers: the first question's name
 * in *ret_qname and the chain of CNAME targets that starts at it in
 * *ret_chain (each without a trailing dot; NULL when the answer has none).
 * -EBADMSG for malformed messages (truncated, compression loops, names
 * longer than 255 bytes).
 */
int dns_parse_cname_chain(const uint8_t *msg, size_t len, char **ret_qname, char ***ret_chain);
