/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "controller/service.h"
#include "log.h"
#include "strutil.h"
#include "timeutil.h"

static void retry_notify(const char *what, const char *error, unsigned retry, usec_t delay)
{
        log_info("%s failed (%s), retry %u in %.1f s", what, strna(error), retry,
                 (double)delay / (double)USEC_PER_SEC);
}

static int call(ControllerService *s, const char *what, AssistedCallFunc op, void *userdata,
                long *ret_status, char **reterr)
{
        return assisted_call_retrying(s->client, &s->retry, what, op, userdata, retry_notify, ret_status,
                                      reterr);
}

typedef struct ClusterArgs {
        ControllerService *s;
        bool with_hosts;
        json_object *cluster;
} ClusterArgs;

static int op_get_cluster(AssistedClient *c, void *userdata, long *ret_status, char **reterr)
{
        ClusterArgs *a = userdata;

        json_object_put(a->cluster);
        a->cluster = NULL;
        return assisted_get_cluster(c, a->s->cluster_id, a->with_hosts, ret_status, &a->cluster, reterr);
}

int controller_service_get_cluster(ControllerService *s, bool with_hosts, long *ret_status,
                                   json_object **ret, char **reterr)
{
        ClusterArgs a = { .s = s, .with_hosts = with_hosts };
        int r;

        r = call(s, "get cluster", op_get_cluster, &a, ret_status, reterr);
        if (r < 0) {
                json_object_put(a.cluster);
                return r;
        }
        if (!a.cluster) {
                if (reterr)
                        *reterr = strdup("the service answered the cluster without a body");
                return -EBADMSG;
        }
        *ret = a.cluster;
        return 0;
}

typedef struct StageArgs {
        const char *infra_env_id;
        const char *host_id;
        const char *stage;
} StageArgs;

static int op_host_stage(AssistedClient *c, void *userdata, long *ret_status, char **reterr)
{
        StageArgs *a = userdata;

        return assisted_update_progress(c, a->infra_env_id, a->host_id, a->stage, NULL, ret_status, reterr);
}

int controller_service_host_stage(ControllerService *s, const char *infra_env_id, const char *host_id,
                                  const char *stage, char **reterr)
{
        StageArgs a = { .infra_env_id = infra_env_id, .host_id = host_id, .stage = stage };

        return call(s, "host progress update", op_host_stage, &a, NULL, reterr);
}
