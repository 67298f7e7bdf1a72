/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdlib.h>

#include <json-c/json.h>

#include "cleanup.h"
#include "hub-glue.h"
#include "hub-names.h"
#include "hub-plan.h"
#include "jsonutil.h"
#include "strutil.h"

typedef struct Collect {
        const char *annotation;
        char **ids;
} Collect;

static int collect_id(json_object *obj, void *userdata)
{
        Collect *c = userdata;
        const char *id = hub_object_annotation(obj, c->annotation);

        if (isempty(id))
                return 0;
        return strv_extend(&c->ids, id);
}

static int empty_if_null(char ***l)
{
        if (!*l) {
                *l = calloc(1, sizeof(char *));
                if (!*l)
                        return -ENOMEM;
        }
        return 0;
}

int hub_tracked_ids(HubCache *c, HubKind kind, const char *annotation, char ***ret)
{
        Collect col = { .annotation = annotation };
        int r;

        r = hub_cache_foreach(c, kind, collect_id, &col);
        if (r >= 0)
                r = empty_if_null(&col.ids);
        if (r < 0) {
                strv_free(col.ids);
                return r;
        }
        *ret = col.ids;
        return 0;
}

int hub_host_changed_keys(HubCache *c, HubService *s, const char *infra_env_id, const char *host_id,
                          char ***ret_agent_keys, char ***ret_cd_keys)
{
        _cleanup_strv_free_ char **ies = NULL, **agents = NULL, **cds = NULL;
        _cleanup_(json_object_putp) json_object *host = NULL;
        const char *cluster_id;
        int r;

        r = hub_cache_index_keys(c, HUB_KIND_INFRAENV, HUB_INDEX_INFRAENV_ID, infra_env_id, &ies);
        if (r < 0)
                return r;
        STRV_FOREACH (k, ies) {
                _cleanup_free_ char *ns = NULL, *name = NULL;

                if (hub_key_split(*k, &ns, &name) < 0)
                        continue;
                if (strv_extendf(&agents, "%s/%s", strempty(ns), host_id) < 0)
                        return -ENOMEM;
        }
        if (hub_service_host(s, infra_env_id, host_id, &host) >= 0) {
                cluster_id = json_get_string(host, "cluster_id");
                if (!isempty(cluster_id)) {
                        r = hub_cache_index_keys(c, HUB_KIND_CLUSTERDEPLOYMENT, HUB_INDEX_CD_CLUSTER_ID,
                                                 cluster_id, &cds);
                        if (r < 0)
                                return r;
                }
        }
        if (empty_if_null(&agents) < 0 || empty_if_null(&cds) < 0)
                return -ENOMEM;
        *ret_agent_keys = TAKE_PTR(agents);
        *ret_cd_keys = TAKE_PTR(cds);
        return 0;
}
