/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz-sources: */
#include <json-c/json.h>

#include "cleanup.h"
#include "fuzz.h"
#include "jsonutil.h"
#include "strutil.h"

typedef struct Doc {
        char *step_type;
        char **args;
        int64_t seconds;
        bool flag;
        double rtt;
        json_object *obj;
} Doc;

static const JsonDispatch table[] = {
        { "step_type", json_dispatch_string, offsetof(Doc, step_type), 0 },
        { "args", json_dispatch_strv, offsetof(Doc, args), JSON_NULLABLE },
        { "next_instruction_seconds", json_dispatch_int64, offsetof(Doc, seconds), 0 },
        { "flag", json_dispatch_bool, offsetof(Doc, flag), 0 },
        { "rtt", json_dispatch_double, offsetof(Doc, rtt), 0 },
        { "obj", json_dispatch_object, offsetof(Doc, obj), 0 },
        {},
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        _cleanup_(json_object_putp) json_object *o = NULL, *again = NULL;
        _cleanup_free_ char *err = NULL, *text = NULL;
        Doc d = {};

        if (json_parse((const char *)data, size, 1 << 20, &o, &err) < 0)
                return 0;
        (void)json_dispatch(o, table, &d, 0, NULL);
        free(d.step_type);
        strv_free(d.args);
        json_object_put(d.obj);

        /* what we serialize must parse again */
        text = json_to_string(o, 0);
        if (text && json_parse(text, strlen(text), 1 << 22, &again, NULL) < 0)
                __builtin_trap();
        return 0;
}
