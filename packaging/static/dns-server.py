#!/usr/bin/python3
"""A tiny authoritative DNS responder for check.sh.

    dns-server.py ADDR NAME IPV4 QUERYLOG

Listens on UDP ADDR:53 (a loopback address), answers A queries for NAME
with IPV4, every other query with an empty NOERROR (AAAA) or NXDOMAIN, and
appends each question to QUERYLOG. Exits after 120 s.
"""

import socket
import struct
import sys
import time


def parse_question(msg):
    labels, i = [], 12
    while msg[i]:
        n = msg[i]
        labels.append(msg[i + 1:i + 1 + n].decode("ascii", "replace"))
        i += 1 + n
    qtype, qclass = struct.unpack("!HH", msg[i + 1:i + 5])
    return ".".join(labels).lower(), qtype, qclass, i + 5


def main():
    addr, name, ipv4, querylog = sys.argv[1:5]
    name = name.lower().rstrip(".")
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((addr, 53))
    print("ready", flush=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        s.settimeout(max(0.1, deadline - time.monotonic()))
        try:
            msg, peer = s.recvfrom(512)
        except socket.timeout:
            break
        if len(msg) < 17:
            continue
        (qid,) = struct.unpack("!H", msg[:2])
        qname, qtype, qclass, end = parse_question(msg)
        with open(querylog, "a") as f:
            f.write(f"{qname} {qtype}\n")
        question = msg[12:end]
        answers = b""
        if qname == name and qtype == 1 and qclass == 1:
            answers = (struct.pack("!HHHIH", 0xC00C, 1, 1, 30, 4) + socket.inet_aton(ipv4))
            rcode = 0
        elif qname == name:
            rcode = 0  # the name exists, without records of that type
        else:
            rcode = 3  # NXDOMAIN
        flags = 0x8400 | rcode  # response, authoritative
        header = struct.pack("!HHHHHH", qid, flags, 1, 1 if answers else 0, 0, 0)
        s.sendto(header + question + answers, peer)


if __name__ == "__main__":
    main()
