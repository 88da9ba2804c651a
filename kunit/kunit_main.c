// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suites for ipoib_cm.  Each *_test.c file compiles the part of the
 * module it tests into this module and registers its own suite; loading
 * ipoib_cm_kunit.ko runs them all.
 */

#include <linux/module.h>

MODULE_DESCRIPTION("KUnit tests for ipoib_cm");
MODULE_LICENSE("GPL");
