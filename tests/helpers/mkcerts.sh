#!/bin/sh
# mkcerts.sh DIR: a throw-away PKI for tests. Writes ca.pem/ca-key.pem, a
# server certificate for localhost/127.0.0.1/::1 (server.pem, server-key.pem),
# a client certificate (client.pem, client-key.pem; CN=cradle-test, O=testers)
# and a second, unrelated CA (other-ca.pem) for negative tests.
set -eu
dir=$1
mkdir -p "$dir"
cd "$dir"
[ -f server.pem ] && exit 0

openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=cradle test CA" \
        -keyout ca-key.pem -out ca.pem -addext "basicConstraints=critical,CA:TRUE" \
        -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=unrelated CA" \
        -keyout other-ca-key.pem -out other-ca.pem 2>/dev/null

openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" -keyout server-key.pem -out server.csr 2>/dev/null
printf 'subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1\nextendedKeyUsage=serverAuth\n' > server.ext
openssl x509 -req -in server.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial -days 2 \
        -extfile server.ext -out server.pem 2>/dev/null

openssl req -newkey rsa:2048 -nodes -subj "/O=testers/CN=cradle-test" -keyout client-key.pem -out client.csr 2>/dev/null
printf 'extendedKeyUsage=clientAuth\n' > client.ext
openssl x509 -req -in client.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial -days 2 \
        -extfile client.ext -out client.pem 2>/dev/null
rm -f server.csr client.csr server.ext client.ext
