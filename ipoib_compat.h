/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Differences between the kernels ipoib_cm builds against (6.1, 6.12, 7.2).
 * Every version test in the module lives in this file.
 */

#ifndef _IPOIB_COMPAT_H
#define _IPOIB_COMPAT_H

#include <linux/version.h>

/* 6.12 moved the unaligned accessors out of asm/. */
#if __has_include(<linux/unaligned.h>)
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

/* 6.3 made the path record count of the SA callback unsigned. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
typedef unsigned int ipoib_sa_num_prs_t;
#else
typedef int ipoib_sa_num_prs_t;
#endif

#endif /* _IPOIB_COMPAT_H */
