/* SPDX-License-Identifier: GPL-2.0 */
/* What the suites need from KUnit, on every kernel they build against. */

#ifndef _IPOIB_KUNIT_H
#define _IPOIB_KUNIT_H

#include <kunit/test.h>

/* KUNIT_EXPECT_MEMEQ came with 6.2; 6.1 compares with memcmp(). */
#ifndef KUNIT_EXPECT_MEMEQ
#define KUNIT_EXPECT_MEMEQ(test, left, right, size) \
	KUNIT_EXPECT_EQ(test, memcmp(left, right, size), 0)
#endif

#endif /* _IPOIB_KUNIT_H */
