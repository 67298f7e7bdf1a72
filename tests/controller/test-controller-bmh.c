/* SPDX-License-Identifier: Apache-2.0 */
/*
 * BareMetalHosts and Machines (controller/bmh.h): upstream's edits
 * (notes/controller.md §5.5) on objects as the API server lists them.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "controller/bmh.h"
#include "jsonutil.h"
#include "strutil.h"
#include "tests.h"

#define NOW "2026-08-20T10:00:00Z"

static json_object *parse_json(const char *text)
{
        json_object *o = NULL;

        ASSERT_OK(json_parse(text, strlen(text), 1 << 20, &o, NULL));
        return o;
}

static const char *text_of(json_object *o)
{
        return json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
}

static const char *MACHINES =
        "{\"items\": ["
        "{\"apiVersion\": \"machine.openshift.io/v1beta1\", \"kind\": \"Machine\", \"metadata\": {\"name\": "
        "\"c-master-0\", \"namespace\": \"openshift-machine-api\", \"labels\": "
        "{\"machine.openshift.io/cluster-api-machine-role\": \"master\"}}},"
        "{\"apiVersion\": \"machine.openshift.io/v1beta1\", \"kind\": \"Machine\", \"metadata\": {\"name\": "
        "\"c-worker-a\", \"namespace\": \"openshift-machine-api\", \"labels\": "
        "{\"machine.openshift.io/cluster-api-machine-role\": \"worker\"}}},"
        "{\"metadata\": {\"name\": \"c-worker-b\", \"namespace\": \"openshift-machine-api\", \"labels\": "
        "{\"machine.openshift.io/cluster-api-machine-role\": \"worker\"}}},"
        "{\"metadata\": {\"name\": \"c-unlabelled\", \"namespace\": \"openshift-machine-api\"}}"
        "]}";

TEST(unallocated_machines)
{
        _cleanup_(json_object_putp) json_object *machines = parse_json(MACHINES);
        _cleanup_(json_object_putp) json_object *bmhs = parse_json(
                "{\"items\": [{\"metadata\": {\"name\": \"m0\"}, \"spec\": {\"consumerRef\": {\"name\": "
                "\"c-master-0\"}}}, {\"metadata\": {\"name\": \"w0\"}, \"spec\": {\"consumerRef\": "
                "{\"name\": "
                "\"c-worker-a\"}}}, {\"metadata\": {\"name\": \"w1\"}, \"spec\": {}}]}");
        _cleanup_(json_object_putp) json_object *none = parse_json("{\"items\": []}");
        _cleanup_(unallocated_machines_done) UnallocatedMachines u = {}, all = {};

        /* only workers, only those no BMH names */
        ASSERT_OK(unallocated_machines(bmhs, machines, &u));
        ASSERT_EQ(u.n, 1u);
        ASSERT_STREQ(json_get_string(json_get(u.machines[0], "metadata"), "name"), "c-worker-b");
        ASSERT_OK(unallocated_machines(none, machines, &all));
        ASSERT_EQ(all.n, 2u);
}

TEST(with_provisioning)
{
        _cleanup_(json_object_putp) json_object *machines = parse_json(MACHINES);
        _cleanup_(json_object_putp) json_object *none = parse_json("{\"items\": []}");
        _cleanup_(unallocated_machines_done) UnallocatedMachines u = {};
        _cleanup_(json_object_putp) json_object *master = parse_json(
                "{\"metadata\": {\"name\": \"m0\", \"annotations\": {\"baremetalhost.metal3.io/paused\": "
                "\"\", "
                "\"baremetalhost.metal3.io/status\": \"{}\"}}, \"spec\": {\"online\": true, "
                "\"consumerRef\": "
                "{\"name\": \"c-master-0\"}}, \"status\": {\"provisioning\": {\"state\": \"unmanaged\"}}}");
        _cleanup_(json_object_putp) json_object *worker = parse_json(
                "{\"metadata\": {\"name\": \"w0\"}, \"spec\": {\"online\": true, \"externallyProvisioned\": "
                "true}}");
        _cleanup_(json_object_putp) json_object *worker2 =
                parse_json("{\"metadata\": {\"name\": \"w1\"}, \"spec\": {\"online\": true}}");
        _cleanup_(json_object_putp) json_object *worker3 =
                parse_json("{\"metadata\": {\"name\": \"w2\"}, \"spec\": {\"online\": true}}");
        _cleanup_(json_object_putp) json_object *done = parse_json(
                "{\"metadata\": {\"name\": \"m1\"}, \"spec\": {\"online\": true, \"externallyProvisioned\": "
                "true, \"consumerRef\": {\"name\": \"c-master-1\"}}, \"status\": {\"provisioning\": "
                "{\"state\": "
                "\"externally provisioned\"}}}");
        _cleanup_(json_object_putp) json_object *settled = parse_json(
                "{\"metadata\": {\"name\": \"m2\"}, \"spec\": {\"online\": true, \"externallyProvisioned\": "
                "true, \"consumerRef\": {\"name\": \"c-master-2\"}}, \"status\": {\"provisioning\": "
                "{\"state\": "
                "\"\"}}}");
        _cleanup_free_ char *err = NULL;

        ASSERT_OK(unallocated_machines(none, machines, &u));
        /* a master: externally provisioned, the paused annotation gone, its
         * consumerRef kept, the status annotation left alone */
        ASSERT_EQ(bmh_edit_provisioned(master, &u, NULL), 1);
        ASSERT_STREQ(
                text_of(master),
                "{\"metadata\":{\"name\":\"m0\",\"annotations\":{\"baremetalhost.metal3.io/"
                "status\":\"{}\"}},"
                "\"spec\":{\"online\":true,\"consumerRef\":{\"name\":\"c-master-0\"},"
                "\"externallyProvisioned\":true},\"status\":{\"provisioning\":{\"state\":\"unmanaged\"}}}");
        /* a worker without a consumerRef: the first unallocated worker
         * Machine, its apiVersion and kind from the list item */
        ASSERT_EQ(bmh_edit_provisioned(worker, &u, NULL), 1);
        ASSERT_STREQ(text_of(json_get_path(worker, "spec.consumerRef")),
                     "{\"apiVersion\":\"machine.openshift.io/v1beta1\",\"kind\":\"Machine\",\"namespace\":"
                     "\"openshift-machine-api\",\"name\":\"c-worker-a\"}");
        /* the next one; an item without them is a Machine all the same */
        ASSERT_EQ(bmh_edit_provisioned(worker2, &u, NULL), 1);
        ASSERT_STREQ(text_of(json_get_path(worker2, "spec")),
                     "{\"online\":true,\"externallyProvisioned\":true,\"consumerRef\":{\"apiVersion\":"
                     "\"machine.openshift.io/v1beta1\",\"kind\":\"Machine\",\"namespace\":"
                     "\"openshift-machine-api\",\"name\":\"c-worker-b\"}}");
        /* none left: the round fails for this BMH */
        ASSERT_EQ(bmh_edit_provisioned(worker3, &u, &err), -EAGAIN);
        ASSERT_STREQ(
                err,
                "no available machine for bmh w2, need to wait for machineset controller to create one");
        /* a state past unmanaged is left alone; nothing to change: no update */
        ASSERT_EQ(bmh_edit_provisioned(done, &u, NULL), 0);
        ASSERT_EQ(bmh_edit_provisioned(settled, &u, NULL), 0);
}

TEST(without_provisioning)
{
        _cleanup_(json_object_putp) json_object *machines = parse_json(MACHINES);
        _cleanup_(json_object_putp) json_object *none = parse_json("{\"items\": []}");
        _cleanup_(unallocated_machines_done) UnallocatedMachines u = {};
        _cleanup_(json_object_putp) json_object *bmh = parse_json(
                "{\"metadata\": {\"name\": \"w0\", \"annotations\": {\"baremetalhost.metal3.io/status\": "
                "\"{\\\"hardware\\\": {\\\"hostname\\\": \\\"w0\\\"}, \\\"poweredOn\\\": true, "
                "\\\"operationalStatus\\\": \\\"OK\\\", \\\"provisioning\\\": {\\\"state\\\": "
                "\\\"externally provisioned\\\"}}\", \"other\": \"kept\"}}, \"spec\": {\"online\": true}}");
        _cleanup_(json_object_putp) json_object *dated = parse_json(
                "{\"metadata\": {\"name\": \"m0\", \"annotations\": {\"baremetalhost.metal3.io/status\": "
                "\"{\\\"lastUpdated\\\": \\\"2020-01-01T00:00:00Z\\\"}\"}}, \"spec\": {\"consumerRef\": "
                "{\"name\": \"c-master-0\"}}}");
        _cleanup_(json_object_putp) json_object *bare = parse_json("{\"metadata\": {\"name\": \"m1\"}, "
                                                                   "\"spec\": {\"consumerRef\": {\"name\": "
                                                                   "\"x\"}}}");
        _cleanup_(json_object_putp) json_object *bad = parse_json(
                "{\"metadata\": {\"name\": \"m2\", \"annotations\": {\"baremetalhost.metal3.io/status\": "
                "\"{\"}}}");
        _cleanup_(json_object_putp) json_object *status = NULL, *status2 = NULL, *none_status = NULL,
                                                *bad_status = NULL;
        _cleanup_free_ char *err = NULL;

        ASSERT_OK(unallocated_machines(none, machines, &u));
        /* the annotation's status, with the fields Go always encodes and
         * lastUpdated now */
        ASSERT_EQ(bmh_status_from_annotation(bmh, NOW, &status, NULL), 1);
        ASSERT_STREQ(
                text_of(status),
                "{\"hardware\":{\"hostname\":\"w0\"},\"poweredOn\":true,\"operationalStatus\":\"OK\","
                "\"provisioning\":{\"state\":\"externally provisioned\",\"ID\":\"\"},\"errorMessage\":\"\","
                "\"hardwareProfile\":\"\",\"errorCount\":0,\"lastUpdated\":\"" NOW "\"}");
        /* a lastUpdated of its own is kept */
        ASSERT_EQ(bmh_status_from_annotation(dated, NOW, &status2, NULL), 1);
        ASSERT_STREQ(json_get_string(status2, "lastUpdated"), "2020-01-01T00:00:00Z");
        /* no annotation: no status update */
        ASSERT_EQ(bmh_status_from_annotation(bare, NOW, &none_status, NULL), 0);
        ASSERT_NULL(none_status);
        ASSERT_EQ(bmh_status_from_annotation(bad, NOW, &bad_status, &err), -EBADMSG);
        ASSERT_CONTAINS(err, "Failed to unmarshal status annotation of m2");

        /* then: the annotation goes, the consumerRef comes */
        ASSERT_EQ(bmh_edit_unprovisioned(bmh, &u, NULL), 1);
        ASSERT_STREQ(text_of(bmh),
                     "{\"metadata\":{\"name\":\"w0\",\"annotations\":{\"other\":\"kept\"}},\"spec\":{"
                     "\"online\":true,"
                     "\"consumerRef\":{\"apiVersion\":\"machine.openshift.io/v1beta1\",\"kind\":\"Machine\","
                     "\"namespace\":\"openshift-machine-api\",\"name\":\"c-worker-a\"}}}");
        /* done already: nothing */
        ASSERT_EQ(bmh_edit_unprovisioned(bmh, &u, NULL), 0);
        ASSERT_EQ(bmh_edit_unprovisioned(bare, &u, NULL), 0);
}

DEFINE_TEST_MAIN
