/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * libcradle-hub: the hub-side controllers of the Assisted Installer as a
 * library. `cradle-hub` is a thin program around it; another program can
 * embed the same controllers.
 *
 * A CradleHub watches the agent-install.openshift.io, hive.openshift.io,
 * extensions.hive.openshift.io and metal3.io resources of a cluster and
 * drives an assisted-service over its REST API (v2). See hub/README.md.
 *
 * Options are set by the names of cradle-hub's flags ("service-url",
 * "namespace", "leader-elect", ...), values as text, so that the ABI does
 * not depend on a struct layout. Every function returns 0 or a negative
 * errno; where reterr is given it receives an allocated message (never
 * holding a secret) that the caller frees.
 *
 * Threads: cradle_hub_start() starts the hub's threads; cradle_hub_stop()
 * may be called from any thread and from a signal handler; the other
 * functions from one thread.
 */

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct CradleHub CradleHub;

/* The library's version ("0.1.0"). */
const char *cradle_hub_version(void);

int cradle_hub_new(CradleHub **ret);
/* Stops the hub when running. Accepts NULL; returns NULL. */
CradleHub *cradle_hub_free(CradleHub *h);

/* Sets an option by its flag name (without dashes). Repeatable options
 * ("namespace") append; booleans take "true"/"false"; durations Go's
 * syntax ("10s", "2m"). -ENOENT for an unknown name, -EINVAL for a bad
 * value. Only before cradle_hub_start(). */
int cradle_hub_set_option(CradleHub *h, const char *name, const char *value, char **reterr);

/* Parses a command line of flags (argv[0] skipped) in Go's flag syntax:
 * "--name=value", "--name value", "-name value", "--bool". Returns 1 to go
 * on, 0 when help was asked (-h, --help: print it), < 0 on an error. */
int cradle_hub_parse_args(CradleHub *h, int argc, char **argv, char **reterr);

/* Prints the options with their defaults and meanings (cradle-hub --help). */
void cradle_hub_print_options(FILE *f);

/* Connects to the cluster and the service, starts the informers, the HTTP
 * endpoints, the leader election when asked, then the controllers. */
int cradle_hub_start(CradleHub *h, char **reterr);

/* Blocks until the hub stops: 0 after cradle_hub_stop(), -ENOLCK when the
 * leader lease was lost, another negative errno on a fatal error. */
int cradle_hub_wait(CradleHub *h);

/* Asks the hub to stop (async-signal-safe): work queues drain, in-flight
 * reconciles finish, the lease is released. */
void cradle_hub_stop(CradleHub *h);

#ifdef __cplusplus
}
#endif
