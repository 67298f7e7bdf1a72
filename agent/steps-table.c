/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The step table: one handler per step type the agent answers. Step types
 * of the enum without an entry (execute, next-step-runner) get the Go
 * agent's "failed to find action" reply. Kept apart from steps.c so that a
 * handler's unit test links only that handler.
 */
#include "macro.h"
#include "steps.h"

static const StepHandler *const handlers[] = {
        &step_inventory,
        &step_install,
        &step_stop_installation,
};

const StepHandler *step_handler_find(StepType type)
{
        for (size_t i = 0; i < ELEMENTSOF(handlers); i++)
                if (handlers[i]->type == type)
                        return handlers[i];
        return NULL;
}
