/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

#include "controller/run.h"
#include "timeutil.h"

/* One round of UpdateBMHs (controller/bmh.h), baremetal platform only: the
 * delay to the next round (the poll interval), USEC_INFINITY once every
 * BMH is updated. */
usec_t bmhs_round(Controller *ctl);
