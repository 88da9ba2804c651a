// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the no-SRQ receive budget and the receive CQ's size.
 */

#include <kunit/test.h>

#include "../ipoib_cm_size.c"

#define KIB	1024ULL
#define MIB	(1024 * KIB)
#define BUF	(64 * KIB)

static void budget_from_memory(struct kunit *test)
{
	/* 256 MiB of 64 KiB buffers, on a device with large CQs. */
	KUNIT_EXPECT_EQ(test, ipoib_cm_nosrq_budget(256 * MIB, BUF, 4194303),
			4096U);
	/* A part of a buffer is no buffer. */
	KUNIT_EXPECT_EQ(test, ipoib_cm_nosrq_budget(BUF - 1, BUF, 4194303),
			0U);
	KUNIT_EXPECT_EQ(test, ipoib_cm_nosrq_budget(0, BUF, 4194303), 0U);
	/* More memory than a u32 of buffers counts. */
	KUNIT_EXPECT_EQ(test, ipoib_cm_nosrq_budget(U64_MAX, 1, U32_MAX),
			U32_MAX - IPOIB_CM_DRAIN_WRS);
}

static void budget_within_the_cq(struct kunit *test)
{
	/* rxe's largest CQ is smaller than what 4 GiB of buffers ask for. */
	KUNIT_EXPECT_EQ(test, ipoib_cm_nosrq_budget(4096 * MIB, BUF, 32767),
			32767U - IPOIB_CM_DRAIN_WRS);
	KUNIT_EXPECT_EQ(test, ipoib_cm_nosrq_budget(256 * MIB, BUF,
						    IPOIB_CM_DRAIN_WRS), 0U);
	KUNIT_EXPECT_EQ(test, ipoib_cm_nosrq_budget(256 * MIB, BUF, 0), 0U);
}

/*
 * The property the driver relies on: with every buffer of the budget
 * completed and the drain markers too, the receive CQ does not overflow,
 * and it is never larger than the device allows.
 */
static void cq_holds_every_buffer(struct kunit *test)
{
	static const u64 mems[] = { 0, BUF, 16 * MIB, 256 * MIB, 4096 * MIB,
				    U64_MAX };
	static const u32 cqes[] = { 0, 1, 2, 3, 255, 4096, 32767, 4194303,
				    U32_MAX };
	unsigned int i, j;
	u32 bufs, cqe;

	for (i = 0; i < ARRAY_SIZE(mems); i++) {
		for (j = 0; j < ARRAY_SIZE(cqes); j++) {
			bufs = ipoib_cm_nosrq_budget(mems[i], BUF, cqes[j]);
			cqe = ipoib_cm_recv_cqe(bufs, cqes[j]);
			KUNIT_EXPECT_LE(test, cqe, cqes[j]);
			if (bufs)
				KUNIT_EXPECT_GE(test, (u64)cqe,
						(u64)bufs + IPOIB_CM_DRAIN_WRS);
		}
	}
}

/* Growth leaves room for the first receives of new QPs; they may use it. */
static void reserve_for_new_qps(struct kunit *test)
{
	static const u32 budgets[] = { 0, 1, 16, 32, 512, 4096, 32765 };
	unsigned int i;
	u32 b, r;

	KUNIT_EXPECT_EQ(test, ipoib_cm_nosrq_reserve(4096),
			IPOIB_CM_NOSRQ_RESERVE_QPS * IPOIB_CM_NOSRQ_FIRST);
	KUNIT_EXPECT_EQ(test, ipoib_cm_nosrq_reserve(32), 8U);
	for (i = 0; i < ARRAY_SIZE(budgets); i++) {
		b = budgets[i];
		r = ipoib_cm_nosrq_reserve(b);
		KUNIT_EXPECT_LE(test, r, b / 4);
		/* Growth up to budget - reserve, not one buffer more. */
		if (b - r)
			KUNIT_EXPECT_TRUE(test,
					  ipoib_cm_nosrq_may_take(b, b - r, true));
		KUNIT_EXPECT_FALSE(test,
				   ipoib_cm_nosrq_may_take(b, b - r + 1, true));
		/* A QP's first receives: the whole budget, no more. */
		if (b)
			KUNIT_EXPECT_TRUE(test,
					  ipoib_cm_nosrq_may_take(b, b, false));
		KUNIT_EXPECT_FALSE(test, ipoib_cm_nosrq_may_take(b, b + 1, false));
	}
}

static void cq_of_an_srq(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, ipoib_cm_recv_cqe(256, 32767),
			256U + IPOIB_CM_DRAIN_WRS);
	KUNIT_EXPECT_EQ(test, ipoib_cm_recv_cqe(U32_MAX, U32_MAX), U32_MAX);
}

/* A ring's bookkeeping, in buffers' worth, rounded up. */
static void ring_bookkeeping(struct kunit *test)
{
	/* The default ring: 256 slots of 274 bytes, 68.5 KiB: two buffers. */
	KUNIT_EXPECT_EQ(test, ipoib_cm_nosrq_ring_units(256, 274, BUF), 2U);
	KUNIT_EXPECT_EQ(test, ipoib_cm_nosrq_ring_units(16, 274, BUF), 1U);
	KUNIT_EXPECT_EQ(test, ipoib_cm_nosrq_ring_units(8192, 274, BUF), 35U);
	KUNIT_EXPECT_EQ(test, ipoib_cm_nosrq_ring_units(0, 274, BUF), 0U);
	/* Exactly one buffer's worth is one, not two. */
	KUNIT_EXPECT_EQ(test, ipoib_cm_nosrq_ring_units(256, 256, BUF), 1U);
	/* No overflow in the product. */
	KUNIT_EXPECT_EQ(test, ipoib_cm_nosrq_ring_units(U32_MAX, U32_MAX, 1),
			U32_MAX);
}

/*
 * A ring grows once more than half of it is used in one busy spell, and
 * at most doubles in it.  The spell seen from the QP: each consumed
 * buffer is counted, and grows the ring by two when that is due.
 */
static u32 spell(u32 start, u32 packets)
{
	u32 alloc = start, burst;

	for (burst = 1; burst <= packets; burst++)
		if (ipoib_cm_nosrq_should_grow(burst, start, alloc))
			alloc += 2;
	return alloc;
}

static void growth_when_half_used(struct kunit *test)
{
	/* An opened QP's single buffer: its first packet grows it. */
	KUNIT_EXPECT_TRUE(test, ipoib_cm_nosrq_should_grow(1, 1, 1));
	KUNIT_EXPECT_EQ(test, spell(1, 1), 3U);
	/* An accepted QP's 16: a few packets leave it as it is. */
	KUNIT_EXPECT_FALSE(test, ipoib_cm_nosrq_should_grow(1, 16, 16));
	KUNIT_EXPECT_FALSE(test, ipoib_cm_nosrq_should_grow(8, 16, 16));
	KUNIT_EXPECT_TRUE(test, ipoib_cm_nosrq_should_grow(9, 16, 16));
	KUNIT_EXPECT_EQ(test, spell(16, 8), 16U);
	/* Its whole ring used at once: doubled, 9th to 16th packet. */
	KUNIT_EXPECT_EQ(test, spell(16, 9), 18U);
	KUNIT_EXPECT_EQ(test, spell(16, 16), 32U);
	/*
	 * A QP that receives now and then in a long spell kept by others:
	 * doubled at most, however many it counts.
	 */
	KUNIT_EXPECT_EQ(test, spell(16, 1000), 32U);
	KUNIT_EXPECT_FALSE(test, ipoib_cm_nosrq_should_grow(40, 16, 32));
	/* Odd sizes: more than half, rounded down. */
	KUNIT_EXPECT_FALSE(test, ipoib_cm_nosrq_should_grow(1, 3, 3));
	KUNIT_EXPECT_TRUE(test, ipoib_cm_nosrq_should_grow(2, 3, 3));
	KUNIT_EXPECT_TRUE(test, ipoib_cm_nosrq_should_grow(2, 3, 5));
	KUNIT_EXPECT_FALSE(test, ipoib_cm_nosrq_should_grow(2, 3, 6));
	/* The full default ring, from half of it; and the largest. */
	KUNIT_EXPECT_FALSE(test, ipoib_cm_nosrq_should_grow(64, 128, 128));
	KUNIT_EXPECT_TRUE(test, ipoib_cm_nosrq_should_grow(65, 128, 128));
	KUNIT_EXPECT_EQ(test, spell(128, 128), 256U);
	KUNIT_EXPECT_FALSE(test,
			   ipoib_cm_nosrq_should_grow(U32_MAX / 2, U32_MAX, U32_MAX));
	KUNIT_EXPECT_TRUE(test,
			  ipoib_cm_nosrq_should_grow(U32_MAX, U32_MAX, U32_MAX));
	KUNIT_EXPECT_FALSE(test,
			   ipoib_cm_nosrq_should_grow(U32_MAX, U32_MAX / 2, U32_MAX));
}

static struct kunit_case cm_size_cases[] = {
	KUNIT_CASE(budget_from_memory),
	KUNIT_CASE(budget_within_the_cq),
	KUNIT_CASE(cq_holds_every_buffer),
	KUNIT_CASE(reserve_for_new_qps),
	KUNIT_CASE(cq_of_an_srq),
	KUNIT_CASE(ring_bookkeeping),
	KUNIT_CASE(growth_when_half_used),
	{}
};

static struct kunit_suite cm_size_suite = {
	.name = "ipoib_cm_size",
	.test_cases = cm_size_cases,
};

kunit_test_suite(cm_size_suite);
