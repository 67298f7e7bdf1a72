/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

#include "controller/run.h"
#include "timeutil.h"

/* One round of UpdateNodeLabels (controller/labels.h): the delay to the
 * next round (the poll interval), USEC_INFINITY when every labelled host's
 * Node carries its labels (and the worker pool, if paused, is unpaused). */
usec_t node_labels_round(Controller *ctl);
