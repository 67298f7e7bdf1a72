/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz-sources: ignition/ign-*.c */
/*
 * The Ignition parser and everything that walks its model: validation,
 * serialization (which must parse again and be stable), merge, translation,
 * the api-vip filter and file extraction.
 */
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "fuzz.h"
#include "ignition/ignition.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        _cleanup_(ign_report_donep) IgnReport report = IGN_REPORT_INIT;
        _cleanup_ign_config_ IgnConfig *c = NULL, *again = NULL, *merged = NULL, *filtered = NULL,
                                       *latest = NULL;
        _cleanup_free_ char *text = NULL, *text2 = NULL, *merged_text = NULL, *err = NULL;

        if (ign_config_parse((const char *)data, size, 1 << 20, &c, &report) < 0)
                return 0;
        (void)ign_config_validate(c, &report);
        free(ign_report_format(&report));

        /* what we write must read back, and writing it again changes nothing */
        if (ign_config_serialize(c, -1, 0, &text, NULL, NULL) < 0)
                return 0;
        if (ign_config_parse(text, strlen(text), 1 << 22, &again, NULL) < 0)
                __builtin_trap();
        if (ign_config_serialize(again, -1, 0, &text2, NULL, NULL) < 0 || strcmp(text, text2) != 0)
                __builtin_trap();

        if (ign_config_merge(c, again, &merged) >= 0)
                (void)ign_config_serialize(merged, -1, IGN_SERIALIZE_PRETTY, &merged_text, NULL, NULL);
        latest = ign_config_copy(c);
        if (latest)
                (void)ign_config_translate(latest, IGN_VERSION_LATEST, NULL);
        for (int v = 0; v < _IGN_VERSION_MAX; v++) {
                _cleanup_free_ char *s = NULL, *e = NULL;
                (void)ign_config_serialize(c, (IgnVersion)v, 0, &s, NULL, &e);
        }
        (void)ign_config_filter_api_vip(c, &filtered);
        for (size_t i = 0; i < c->storage.n_files && i < 4; i++) {
                _cleanup_free_ void *contents = NULL;
                _cleanup_free_ char *e = NULL;
                if (c->storage.files[i].path)
                        (void)ign_config_extract_file(c, c->storage.files[i].path, 1 << 20, &contents, NULL,
                                                      &e);
        }
        return 0;
}
