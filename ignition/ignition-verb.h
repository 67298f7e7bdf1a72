/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/* The "ignition" applet: cradle ignition validate|merge|pointer|apply|extract|translate. */
int ignition_main(int argc, char **argv);
