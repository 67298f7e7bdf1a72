/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The crash-safe link between a Kubernetes object and the service object
 * it registers (hub/README.md, "Identity"). Pure: the reconciler observes
 * (the object, and when asked the service's candidates) and this decides.
 *
 * The protocol: the object is marked "registering" (annotation
 * HUB_ANNOTATION_REGISTERING = "<RFC 3339 time> <holder>") before the
 * register call; the id annotation replaces the marker after it. A marker
 * without an id means a register call may have reached the service: the
 * service's objects are searched before any new registration.
 *
 * A marker of another holder is waited for (HUB_CLAIM_HOLD) unless it is
 * a predecessor's: written before this replica became the only one acting
 * (it holds the Lease, or runs without leader election, which is a single
 * replica by configuration), by a process that therefore acts no more (it
 * crashed, was restarted, or lost the Lease and stopped). Then the search
 * runs at once: a restarted hub resumes without waiting out the hold.
 *
 * A registration the service refused (a 4xx other than 409) stored
 * nothing: its marker goes (a search would look for what was never made,
 * and could adopt an object of that name someone else registered), and
 * HUB_ANNOTATION_REGISTRATION_REFUSED = "<RFC 3339 time> <generation>"
 * records the refusal in the same write (hub_claim_refused()). The next
 * registration waits HUB_CLAIM_REFUSAL_BACKOFF after it unless the
 * object's spec changed since (its generation): each attempt writes the
 * object twice, and those writes alone would start the next attempt at
 * once, again and again.
 */

#include <stdbool.h>

#include "timeutil.h"

typedef struct json_object json_object;

/* a marker of another holder younger than this makes a replica wait */
#define HUB_CLAIM_HOLD (120 * USEC_PER_SEC)
/* a refused registration is not tried again sooner, the spec unchanged */
#define HUB_CLAIM_REFUSAL_BACKOFF (60 * USEC_PER_SEC)
/* clock skew allowed between the hub and the service */
#define HUB_CLAIM_SKEW (300 * USEC_PER_SEC)

typedef enum HubClaimAction {
        HUB_CLAIM_LINKED, /* the id annotation names the service object */
        HUB_CLAIM_MARK, /* no marker: write one (then register) */
        HUB_CLAIM_SEARCH, /* marker, no id, no search made: list the service's objects */
        HUB_CLAIM_REGISTER, /* the search found nothing: register */
        HUB_CLAIM_ADOPT, /* the search found it: write its id */
        HUB_CLAIM_WAIT, /* another holder's fresh marker: wait */
        _HUB_CLAIM_ACTION_MAX,
} HubClaimAction;

typedef struct HubClaimInput {
        json_object *object; /* the Kubernetes object */
        const char *id_annotation; /* HUB_ANNOTATION_INFRAENV_ID, HUB_ANNOTATION_CLUSTER_ID */
        const char *name; /* the name the service object has */
        const char *identity; /* this replica */
        usec_t now; /* CLOCK_REALTIME */
        /* CLOCK_REALTIME since when this replica is the only one acting
         * (its controllers started: the Lease held, or no leader
         * election); 0: not known (every other holder's marker is held) */
        usec_t active_since;
        json_object *candidates; /* the service's objects (array), NULL when not searched */
        char *const *claimed_ids; /* ids other objects link (from the cache index) */
} HubClaimInput;

typedef struct HubClaimDecision {
        HubClaimAction action;
        char *id; /* LINKED, ADOPT */
        char **duplicates; /* ADOPT: other candidates (reported, never deleted) */
        usec_t wait; /* WAIT: how long */
} HubClaimDecision;

void hub_claim_decision_done(HubClaimDecision *d);
const char *hub_claim_action_to_string(HubClaimAction a);

int hub_claim_decide(const HubClaimInput *in, HubClaimDecision *ret);

/* The service refused the registration: desired loses its marker and
 * records the refusal (now, its metadata.generation). */
int hub_claim_refused(json_object *desired, usec_t now);

/* "<RFC 3339 time, to the microsecond> <holder>"; allocated. */
char *hub_claim_marker(usec_t now, const char *identity);
/* -EINVAL when malformed. */
int hub_claim_parse_marker(const char *v, usec_t *ret_time, char **ret_holder);
