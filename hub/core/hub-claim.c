/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "cleanup.h"
#include "hub-claim.h"
#include "hub-names.h"
#include "hub-plan.h"
#include "jsonutil.h"
#include "strutil.h"

static const char *const action_names[_HUB_CLAIM_ACTION_MAX] = {
        [HUB_CLAIM_LINKED] = "linked",     [HUB_CLAIM_MARK] = "mark",   [HUB_CLAIM_SEARCH] = "search",
        [HUB_CLAIM_REGISTER] = "register", [HUB_CLAIM_ADOPT] = "adopt", [HUB_CLAIM_WAIT] = "wait",
};

const char *hub_claim_action_to_string(HubClaimAction a)
{
        if (a < 0 || a >= _HUB_CLAIM_ACTION_MAX)
                return NULL;
        return action_names[a];
}

void hub_claim_decision_done(HubClaimDecision *d)
{
        free(d->id);
        strv_free(d->duplicates);
        *d = (HubClaimDecision){};
}

char *hub_claim_marker(usec_t now, const char *identity)
{
        char ts[32];

        /* to the microsecond: a successor tells a marker written just
         * before it started from one written just after */
        hub_format_time(now, ts);
        ts[strlen(ts) - 1] = 0; /* the Z */
        return strdup_printf("%s.%06" PRIu64 "Z %s", ts, (uint64_t)(now % USEC_PER_SEC), strempty(identity));
}

int hub_claim_parse_marker(const char *v, usec_t *ret_time, char **ret_holder)
{
        _cleanup_free_ char *ts = NULL;
        const char *sp;
        usec_t t;

        if (isempty(v))
                return -EINVAL;
        sp = strchr(v, ' ');
        ts = sp ? strndup(v, (size_t)(sp - v)) : strdup(v);
        if (!ts)
                return -ENOMEM;
        if (hub_parse_time(ts, &t) < 0)
                return -EINVAL;
        if (ret_holder) {
                *ret_holder = strdup(sp ? sp + 1 : "");
                if (!*ret_holder)
                        return -ENOMEM;
        }
        *ret_time = t;
        return 0;
}

/* how long a refused registration still holds the next back: 0 when it
 * may go (no refusal, one long enough ago or of an older spec, or an
 * unreadable record) */
static usec_t refusal_backoff(const HubClaimInput *in)
{
        const char *v = hub_object_annotation(in->object, HUB_ANNOTATION_REGISTRATION_REFUSED), *sp;
        _cleanup_free_ char *ts = NULL;
        usec_t refused;
        int64_t generation = 0;

        if (!v)
                return 0;
        sp = strchr(v, ' ');
        ts = sp ? strndup(v, (size_t)(sp - v)) : strdup(v);
        if (!ts || hub_parse_time(ts, &refused) < 0)
                return 0;
        (void)json_get_int64(json_get(in->object, "metadata"), "generation", &generation);
        if (sp && generation != strtoll(sp + 1, NULL, 10))
                return 0;
        if (in->now >= refused + HUB_CLAIM_REFUSAL_BACKOFF || in->now + HUB_CLAIM_SKEW < refused)
                return 0;
        return refused + HUB_CLAIM_REFUSAL_BACKOFF - in->now;
}

int hub_claim_refused(json_object *desired, usec_t now)
{
        _cleanup_free_ char *v = NULL;
        int64_t generation = 0;
        char ts[32];

        hub_format_time(now, ts);
        (void)json_get_int64(json_get(desired, "metadata"), "generation", &generation);
        v = strdup_printf("%s %" PRIi64, ts, generation);
        if (!v)
                return -ENOMEM;
        if (hub_object_set_annotation(desired, HUB_ANNOTATION_REGISTERING, NULL) < 0 ||
            hub_object_set_annotation(desired, HUB_ANNOTATION_REGISTRATION_REFUSED, v) < 0)
                return -ENOMEM;
        return 0;
}

/* another holder's marker written before this replica became the only
 * one acting */
static bool predecessor(const HubClaimInput *in, usec_t marked)
{
        return in->active_since > 0 && marked < in->active_since;
}

int hub_claim_decide(const HubClaimInput *in, HubClaimDecision *ret)
{
        const char *id = hub_object_annotation(in->object, in->id_annotation);
        const char *marker = hub_object_annotation(in->object, HUB_ANNOTATION_REGISTERING);
        _cleanup_free_ char *holder = NULL;
        const char *best = NULL;
        usec_t marked = 0, best_time = 0;
        bool parsed;
        size_t n;

        *ret = (HubClaimDecision){};
        if (!isempty(id)) {
                ret->action = HUB_CLAIM_LINKED;
                ret->id = strdup(id);
                return ret->id ? 0 : -ENOMEM;
        }
        if (!marker) {
                usec_t wait = refusal_backoff(in);

                ret->action = wait > 0 ? HUB_CLAIM_WAIT : HUB_CLAIM_MARK;
                ret->wait = wait;
                return 0;
        }
        /* an unreadable marker is searched for without a time bound */
        parsed = hub_claim_parse_marker(marker, &marked, &holder) >= 0;
        if (parsed && !streq_ptr(holder, in->identity) && in->now < marked + HUB_CLAIM_HOLD &&
            !predecessor(in, marked)) {
                ret->action = HUB_CLAIM_WAIT;
                ret->wait = marked + HUB_CLAIM_HOLD - in->now;
                return 0;
        }
        if (!in->candidates) {
                ret->action = HUB_CLAIM_SEARCH;
                return 0;
        }
        n = json_object_is_type(in->candidates, json_type_array) ? json_object_array_length(in->candidates)
                                                                 : 0;
        for (size_t pass = 0; pass < 2 && (pass == 0 || best); pass++)
                for (size_t i = 0; i < n; i++) {
                        json_object *c = json_object_array_get_idx(in->candidates, i);
                        const char *cid = json_get_string(c, "id");
                        usec_t created = 0;
                        int r;

                        if (isempty(cid) || !streq_ptr(json_get_string(c, "name"), in->name) ||
                            strv_contains(in->claimed_ids, cid))
                                continue;
                        (void)hub_parse_time(json_get_string(c, "created_at"), &created);
                        if (parsed && created + HUB_CLAIM_SKEW < marked)
                                continue;
                        if (pass == 0) {
                                if (!best || created < best_time ||
                                    (created == best_time && strcmp(cid, best) < 0)) {
                                        best = cid;
                                        best_time = created;
                                }
                        } else if (!streq(cid, best)) {
                                r = strv_extend(&ret->duplicates, cid);
                                if (r < 0)
                                        return r;
                        }
                }
        if (!best) {
                ret->action = HUB_CLAIM_REGISTER;
                return 0;
        }
        ret->action = HUB_CLAIM_ADOPT;
        ret->id = strdup(best);
        return ret->id ? 0 : -ENOMEM;
}
