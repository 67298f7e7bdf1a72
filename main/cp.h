/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/* cp SRC DEST | cp SRC... DIR, for the agent image: see main/cp.c. */
int cp_main(int argc, char **argv);
