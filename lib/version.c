/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "version-generated.h"
#include "version.h"

const char *cradle_version(void)
{
        return CRADLE_VERSION;
}

const char *cradle_git_revision(void)
{
        return CRADLE_GIT_REVISION;
}
