/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz-sources: agent/steps/install-request.c agent/steps/install-command.c */
/*
 * The install step's request as the service sends it (untrusted): parsed,
 * validated, and when valid turned into the installer's arguments and the
 * podman command line.
 */
#include <stdlib.h>
#include <string.h>

#include "agent/config.h"
#include "agent/steps/install.h"
#include "cleanup.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        _cleanup_free_ char *text = NULL, *err = NULL, *cmd = NULL;
        _cleanup_strv_free_ char **argv = NULL;
        AgentConfig c = { .url = (char *)"http://198.51.100.1:6000",
                          .agent_version = (char *)"quay.io/x/agent:1",
                          .insecure = true,
                          .cacert = (char *)"/etc/ca.pem" };
        InstallRequest r = {};

        if (size > 1 << 20)
                return 0;
        text = malloc(size + 1);
        if (!text)
                return 0;
        memcpy(text, data, size);
        text[size] = 0;
        if (install_request_parse(text, &r, &err) < 0)
                return 0;
        argv = install_installer_argv(&r, &c, size % 2 == 0);
        cmd = install_podman_command(&r, &c, false);
        (void)install_mode_decide(INSTALL_MODE_AUTO, r.installer_image, c.agent_version);
        install_request_done(&r);
        return 0;
}
