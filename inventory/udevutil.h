/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/* Cleanup wrappers for libudev handles (inventory/ only links libudev). */

#include <libudev.h>

#include "macro.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(struct udev *, udev_unref)
DEFINE_TRIVIAL_CLEANUP_FUNC(struct udev_enumerate *, udev_enumerate_unref)
DEFINE_TRIVIAL_CLEANUP_FUNC(struct udev_device *, udev_device_unref)
DEFINE_TRIVIAL_CLEANUP_FUNC(struct udev_hwdb *, udev_hwdb_unref)
