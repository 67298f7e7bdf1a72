/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/* The release version ("0.1.0") and the git revision the binary was built
 * from ("1e30592", "1e30592-dirty", or "unknown" outside a checkout). */
const char *cradle_version(void);
const char *cradle_git_revision(void);
