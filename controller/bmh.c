/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "cleanup.h"
#include "controller/bmh.h"
#include "jsonutil.h"
#include "kube/kube.h"
#include "strutil.h"

void unallocated_machines_done(UnallocatedMachines *u)
{
        free(u->machines);
        *u = (UnallocatedMachines){};
}

static const char *consumer_name(json_object *bmh)
{
        return json_get_string(json_get_path(bmh, "spec.consumerRef"), "name");
}

int unallocated_machines(json_object *bmhs, json_object *machines, UnallocatedMachines *ret)
{
        json_object *items = json_get(machines, "items"), *hosts = json_get(bmhs, "items");
        size_t n = items ? json_object_array_length(items) : 0;
        UnallocatedMachines u = {};

        u.machines = calloc(n + 1, sizeof(json_object *));
        if (!u.machines)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                json_object *m = json_object_array_get_idx(items, i);
                const char *name = kube_object_name(m);
                bool taken = false;

                if (!streq_ptr(json_get_string(json_get_path(m, "metadata.labels"), MACHINE_ROLE_LABEL),
                               "worker"))
                        continue;
                for (size_t j = 0; hosts && j < json_object_array_length(hosts); j++)
                        if (streq_ptr(consumer_name(json_object_array_get_idx(hosts, j)), name))
                                taken = true;
                if (!taken)
                        u.machines[u.n++] = m;
        }
        *ret = u;
        return 0;
}

static json_object *spec_of(json_object *bmh)
{
        json_object *spec = json_get(bmh, "spec");

        if (!spec) {
                spec = json_new_object();
                if (!spec || json_add(bmh, "spec", spec) < 0)
                        return NULL;
        }
        return spec;
}

/* updateConsumerRef: {apiVersion, kind, namespace, name} of the next
 * Machine (a list item without apiVersion/kind is a Machine of
 * machine.openshift.io/v1beta1 all the same) */
static int consumer_ref_set(json_object *bmh, UnallocatedMachines *u, char **reterr)
{
        _cleanup_(json_object_putp) json_object *ref = NULL;
        json_object *m, *spec;

        if (u->next >= u->n) {
                if (reterr)
                        *reterr =
                                strdup_printf("no available machine for bmh %s, need to wait for machineset "
                                              "controller to create one",
                                              strna(kube_object_name(bmh)));
                return -EAGAIN;
        }
        m = u->machines[u->next++];
        ref = json_new_object();
        spec = spec_of(bmh);
        if (!ref || !spec ||
            json_add_string(ref, "apiVersion",
                            json_get_string(m, "apiVersion") ?: "machine.openshift.io/v1beta1") < 0 ||
            json_add_string(ref, "kind", json_get_string(m, "kind") ?: "Machine") < 0 ||
            json_add_string(ref, "namespace", strempty(kube_object_namespace(m))) < 0 ||
            json_add_string(ref, "name", strempty(kube_object_name(m))) < 0 ||
            json_add(spec, "consumerRef", TAKE_PTR(ref)) < 0)
                return -ENOMEM;
        return 0;
}

static bool annotation_drop(json_object *bmh, const char *key)
{
        json_object *annotations = json_get_path(bmh, "metadata.annotations");

        if (!annotations || !json_object_object_get_ex(annotations, key, NULL))
                return false;
        json_object_object_del(annotations, key);
        return true;
}

/* a consumerRef to the next free worker Machine where the BMH has none:
 * 1 when set, 0 when it had one */
static int consumer_ref_ensure(json_object *bmh, json_object *spec, UnallocatedMachines *u, char **reterr)
{
        json_object *ref = json_get(spec, "consumerRef");
        int r;

        if (ref && !json_object_is_type(ref, json_type_null))
                return 0;
        r = consumer_ref_set(bmh, u, reterr);
        return r < 0 ? r : 1;
}

int bmh_edit_provisioned(json_object *bmh, UnallocatedMachines *u, char **reterr)
{
        const char *state = strempty(json_get_string(json_get_path(bmh, "status.provisioning"), "state"));
        json_object *spec = spec_of(bmh);
        bool external = false, update;
        int r;

        if (!spec)
                return -ENOMEM;
        if (!isempty(state) && !streq(state, "unmanaged"))
                return 0;
        (void)json_get_bool(spec, "externallyProvisioned", &external);
        update = !external;
        if (json_add_bool(spec, "externallyProvisioned", true) < 0)
                return -ENOMEM;
        /* the baremetal operator waits for the status annotation until the
         * paused annotation goes (masters) */
        if (annotation_drop(bmh, BMH_PAUSED_ANNOTATION))
                update = true;
        r = consumer_ref_ensure(bmh, spec, u, reterr);
        if (r < 0)
                return r;
        return update || r > 0;
}

int bmh_edit_unprovisioned(json_object *bmh, UnallocatedMachines *u, char **reterr)
{
        json_object *spec = spec_of(bmh);
        bool update;
        int r;

        if (!spec)
                return -ENOMEM;
        update = annotation_drop(bmh, BMH_STATUS_ANNOTATION);
        r = consumer_ref_ensure(bmh, spec, u, reterr);
        if (r < 0)
                return r;
        return update || r > 0;
}

/* the fields of metal3's BareMetalHostStatus (and its ProvisionStatus)
 * that Go always encodes: no omitempty */
static int field_default(json_object *o, const char *key, json_object *(*make)(void))
{
        json_object *v;

        if (json_get(o, key))
                return 0;
        v = make();
        if (!v || json_add(o, key, v) < 0)
                return -ENOMEM;
        return 0;
}

static json_object *zero_string(void)
{
        return json_object_new_string("");
}

static json_object *zero_int(void)
{
        return json_object_new_int(0);
}

static json_object *zero_bool(void)
{
        return json_object_new_boolean(false);
}

static json_object *empty_object(void)
{
        return json_object_new_object();
}

int bmh_status_from_annotation(json_object *bmh, const char *now, json_object **ret, char **reterr)
{
        const char *text =
                json_get_string(json_get_path(bmh, "metadata.annotations"), BMH_STATUS_ANNOTATION);
        _cleanup_(json_object_putp) json_object *status = NULL;
        _cleanup_free_ char *err = NULL;
        json_object *prov;
        int r;

        if (isempty(text))
                return 0;
        r = json_parse(text, strlen(text), BUF_MAX_JSON_DOC, &status, &err);
        if (r >= 0 && !json_object_is_type(status, json_type_object))
                r = -EBADMSG, err = strdup("not a JSON object");
        if (r < 0) {
                if (reterr)
                        *reterr = strdup_printf("Failed to unmarshal status annotation of %s: %s",
                                                strna(kube_object_name(bmh)), strna(err));
                return -EBADMSG;
        }
        if (field_default(status, "errorMessage", zero_string) < 0 ||
            field_default(status, "hardwareProfile", zero_string) < 0 ||
            field_default(status, "operationalStatus", zero_string) < 0 ||
            field_default(status, "poweredOn", zero_bool) < 0 ||
            field_default(status, "errorCount", zero_int) < 0 ||
            field_default(status, "provisioning", empty_object) < 0)
                return -ENOMEM;
        prov = json_get(status, "provisioning");
        if (!json_object_is_type(prov, json_type_object)) {
                if (reterr)
                        *reterr =
                                strdup_printf("Failed to unmarshal status annotation of %s: provisioning is "
                                              "not an object",
                                              strna(kube_object_name(bmh)));
                return -EBADMSG;
        }
        if (field_default(prov, "ID", zero_string) < 0 || field_default(prov, "state", zero_string) < 0)
                return -ENOMEM;
        /* a zero LastUpdated would make the operator loop on a partial
         * status */
        if (isempty(json_get_string(status, "lastUpdated")) &&
            json_add_string(status, "lastUpdated", now) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(status);
        return 1;
}
