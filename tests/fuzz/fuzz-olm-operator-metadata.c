/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz-sources: controller/abi.c controller/olm.c controller/finalize.c */
/* An <operator>.metadata.yaml of the agent-based installer's ConfigMap
 * olm-operator-manifests, as the controller reads it, then that ConfigMap
 * with it and the files it lists. */
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "controller/abi.h"
#include "fuzz.h"
#include "jsonutil.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        _cleanup_(json_object_putp) json_object *cm = NULL, *d = NULL;
        _cleanup_(operator_metadata_done) OperatorMetadata m = {};
        _cleanup_free_ char *text = fuzz_text(data, size), *err = NULL, *err2 = NULL;
        CustomManifest *manifests = NULL;
        OlmOperator *ops = NULL;
        size_t n = 0, nm = 0;
        int r;

        if (!text)
                return 0;
        r = operator_metadata_parse(text, size, &m, &err);
        if (r < 0) {
                if (r == -EBADMSG && !err)
                        abort();
                return 0;
        }
        if (!m.namespace || !m.subscription || !m.manifests)
                abort();
        /* the ConfigMap: the metadata and a file for every other name it lists */
        cm = json_object_new_object();
        d = json_object_new_object();
        if (!cm || !d || json_add_string(d, "op.metadata.yaml", text) < 0)
                return 0;
        for (size_t i = 0; m.manifests[i]; i++)
                if (i % 2 == 0 && json_add_string(d, m.manifests[i], "a2luZDogQQ==") < 0)
                        return 0;
        if (json_add(cm, "data", TAKE_PTR(d)) < 0)
                return 0;
        r = olm_manifests_configmap_read(cm, "4.8", &ops, &n, &manifests, &nm, &err2);
        if (r >= 0) {
                if (n != 1 || !streq(ops[0].name, "op"))
                        abort();
                olm_operators_free(ops, n);
                custom_manifests_free(manifests, nm);
        } else if (r == -EBADMSG ? !err2 : r != -ENOENT && r != -ENOMEM)
                /* EBADMSG: a listed name that replaced the metadata, or a
                 * NUL that cut it short */
                abort();
        return 0;
}
