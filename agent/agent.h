/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/* The "agent" and "next_step_runner" applets. */
int agent_main(int argc, char **argv);
int next_step_runner_main(int argc, char **argv);
