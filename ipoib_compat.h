/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Differences between the kernels ipoib_cm builds against (6.1, 6.12, 7.2
 * and what lies between).  Kbuild probes the kernel tree for each feature
 * (see "compat probes" there) instead of trusting version numbers, which
 * stable and distribution backports make unreliable; this header is the
 * only place that uses the results.
 */

#ifndef _IPOIB_COMPAT_H
#define _IPOIB_COMPAT_H

/* 6.12 moved the unaligned accessors out of asm/. */
#ifdef IPOIB_HAVE_LINUX_UNALIGNED_H
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

/* 6.3 made the path record count of the SA path query callback unsigned. */
#ifdef IPOIB_SA_NUM_PRS_UNSIGNED
#define IPOIB_SA_NUM_PRS	unsigned int
#else
#define IPOIB_SA_NUM_PRS	int
#endif

#endif /* _IPOIB_COMPAT_H */
