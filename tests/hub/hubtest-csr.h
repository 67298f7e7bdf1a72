/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/* A day-2 node's certificate requests and its Node, as the new cluster's
 * API shows them, for the tests of the two paths that approve them (the
 * Agent's and the Cluster API provider's). */

#include <json-c/json.h>

#include "hubtest.h"

/* CSRs made with openssl (prime256v1): the kubelet's client request of
 * worker-0, its serving request (DNS:worker-0, IP:198.51.100.21), and
 * another node's */
#define CSR_CLIENT \
        "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0KTUlIeU1JR1lBZ0VBTURZeEZUQVRCZ05WQkFvTURITjVjM1JsY" \
        "lRw" \
        "dWIyUmxjekVkTUJzR0ExVUVBd3dVYzNsegpkR1Z0T201dlpHVTZkMjl5YTJWeUxUQXdXVEFUQmdjcWhrak9QUUlCQmdncWhra" \
        "k9Q" \
        "UU1CQndOQ0FBVExKbGFTCjlESm9rRzIrL296U1ZZMG42NzlOREhvWEVtODdyUjlwR051aHRFamZaV0Mvbkc4NnRNL0s2YWlFb" \
        "082" \
        "MWF2UFMKamtKNWlzanJIVzNwNEJ2U29BQXdDZ1lJS29aSXpqMEVBd0lEU1FBd1JnSWhBUGZVZG92a0hXRXJjYnpQZWtDSAphU" \
        "TRQ" \
        "M1BoaEJsWjBRN3lTWFB1dmFBTEZBaUVBd0xXV2hJUFVzZDNlTUt6QUoxTXlvN1A2VytwNjlCbzdxV2wzCkZ6VExQN3c9Ci0tL" \
        "S0t" \
        "RU5EIENFUlRJRklDQVRFIFJFUVVFU1QtLS0tLQo="
#define CSR_SERVING \
        "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0KTUlJQkhUQ0J4QUlCQURBMk1SVXdFd1lEVlFRS0RBeHplWE4wW" \
        "lcw" \
        "NmJtOWtaWE14SFRBYkJnTlZCQU1NRkhONQpjM1JsYlRwdWIyUmxPbmR2Y210bGNpMHdNRmt3RXdZSEtvWkl6ajBDQVFZSUtvW" \
        "kl6" \
        "ajBEQVFjRFFnQUV5eVpXCmt2UXlhSkJ0dnY2TTBsV05KK3UvVFF4NkZ4SnZPNjBmYVJqYm9iUkkzMlZndjV4dk9yVFB5dW1va" \
        "EtE" \
        "dXRXcnoKMG81Q2VZckk2eDF0NmVBYjBxQXNNQ29HQ1NxR1NJYjNEUUVKRGpFZE1Cc3dHUVlEVlIwUkJCSXdFSUlJZDI5eQphM" \
        "lZ5" \
        "TFRDSEJNWXpaQlV3Q2dZSUtvWkl6ajBFQXdJRFNBQXdSUUloQUpSWm1RU2Y2OGFFVzBKSm85a3M3ZG9KCnBpQ1RpQW5EWDVXY" \
        "XF6" \
        "ZXBoK24xQWlCYjVCTUhGRHpadzZQaER4K3IzZUc1T2ZNcFlRRFp2SWlrQmtSRTFhOEEKdmc9PQotLS0tLUVORCBDRVJUSUZJQ" \
        "0FU" \
        "RSBSRVFVRVNULS0tLS0K"
#define CSR_OTHER \
        "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0KTUlIdU1JR1ZBZ0VBTURNeEZUQVRCZ05WQkFvTURITjVjM1JsY" \
        "lRw" \
        "dWIyUmxjekVhTUJnR0ExVUVBd3dSYzNsegpkR1Z0T201dlpHVTZiM1JvWlhJd1dUQVRCZ2NxaGtqT1BRSUJCZ2dxaGtqT1BRT" \
        "UJC" \
        "d05DQUFUTEpsYVM5REpvCmtHMisvb3pTVlkwbjY3OU5ESG9YRW04N3JSOXBHTnVodEVqZlpXQy9uRzg2dE0vSzZhaUVvTzYxY" \
        "XZQ" \
        "U2prSjUKaXNqckhXM3A0QnZTb0FBd0NnWUlLb1pJemowRUF3SURTQUF3UlFJZ05iY0Q3SUd1M0xyOWFZUTYzcW1peXRsaApqM" \
        "lNM" \
        "KzkxZHRBdExZaExYRzJFQ0lRQ05aUHhsZFovT1NJR21pZFdDMWYwbDJQRml5cDZKQmZzY2RJaXF6MFNsCm5nPT0KLS0tLS1FT" \
        "kQg" \
        "Q0VSVElGSUNBVEUgUkVRVUVTVC0tLS0tCg=="

static inline json_object *csr(const char *name, const char *request, const char *username,
                               const char *groups, const char *usages)
{
        return hubtest_jsonf(
                "{\"apiVersion\":\"certificates.k8s.io/v1\",\"kind\":\"CertificateSigningRequest\","
                "\"metadata\":{\"name\":\"%s\"},\"spec\":{\"request\":\"%s\",\"username\":\"%s\","
                "\"groups\":%s,\"usages\":%s,\"signerName\":\"x\"},\"status\":{}}",
                name, request, username, groups, usages);
}

#define BOOTSTRAPPER "system:serviceaccount:openshift-machine-config-operator:node-bootstrapper"
#define BOOTSTRAPPER_GROUPS \
        "[\"system:serviceaccounts:openshift-machine-config-operator\",\"system:serviceaccounts\"," \
        "\"system:authenticated\"]"

/* the Node of worker-0, Ready or not */
static inline json_object *node(bool ready)
{
        return hubtest_jsonf(
                "{\"metadata\":{\"name\":\"worker-0\",\"labels\":{\"kubernetes.io/hostname\":"
                "\"worker-0\"}},\"status\":{\"addresses\":[{\"type\":\"InternalIP\",\"address\":"
                "\"198.51.100.21\"},{\"type\":\"Hostname\",\"address\":\"worker-0\"}],"
                "\"conditions\":[{\"type\":\"Ready\",\"status\":\"%s\"}]}}",
                ready ? "True" : "False");
}
