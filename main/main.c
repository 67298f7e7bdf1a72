/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cradle: one binary, many names. The applet table and the dispatch on the
 * verb or the program name are in verbs.c.
 */
#include "verbs.h"

int main(int argc, char **argv)
{
        return multicall_main(argc, argv);
}
