// SPDX-License-Identifier: GPL-2.0
/*
 * Sizes in connected mode that must hold for any mix of connections: how
 * many receive buffers an interface without SRQ may have, and the entries
 * of the RC receive CQ that all of them complete into.  Pure functions,
 * tested by the KUnit suite.
 *
 * The arithmetic.  A receive buffer is in one of three places: posted on
 * a QP, completed with its CQE still in the receive CQ, or in the NAPI's
 * hands (its CQE polled, not yet reposted or given back).  So a buffer
 * accounts for at most one CQE at any time, and a drain marker (SRQ
 * teardown) for one more.  The SRQ holds at most its size in buffers;
 * without SRQ every buffer of every QP, accepted or opened, is taken from
 * the interface's budget before it is allocated.  A receive CQ of budget
 * (or SRQ size) plus IPOIB_CM_DRAIN_WRS entries can therefore never
 * overflow, whatever the number of connections and their rings.
 */

#include <linux/math64.h>
#include <linux/minmax.h>

#include "ipoib.h"
#include "ipoib_cm_priv.h"

/**
 * ipoib_cm_nosrq_budget - receive buffers an interface may have without SRQ
 * @mem: the memory they may take, in bytes (cm_nosrq_mem)
 * @buf_bytes: the size of one buffer (non-zero)
 * @max_cqe: the largest CQ the device makes
 *
 * @mem / @buf_bytes, and no more than a receive CQ of the device holds
 * beside the drain markers.  0 means that no RC QP without SRQ can be
 * served at all.
 */
u32 ipoib_cm_nosrq_budget(u64 mem, u32 buf_bytes, u32 max_cqe)
{
	u64 bufs = div_u64(mem, buf_bytes);

	if (max_cqe <= IPOIB_CM_DRAIN_WRS)
		return 0;
	return min_t(u64, bufs, max_cqe - IPOIB_CM_DRAIN_WRS);
}

/**
 * ipoib_cm_nosrq_reserve - the part of the budget growth may not take
 * @budget: the no-SRQ budget, in buffers
 *
 * Room for the first receives of IPOIB_CM_NOSRQ_RESERVE_QPS new QPs
 * (accepted: IPOIB_CM_NOSRQ_FIRST each), at most a quarter of the budget:
 * busy connections growing their rings must not leave a new peer, or a
 * connection of ours, nothing to begin with.
 */
u32 ipoib_cm_nosrq_reserve(u32 budget)
{
	return min(budget / 4,
		   IPOIB_CM_NOSRQ_RESERVE_QPS * IPOIB_CM_NOSRQ_FIRST);
}

/**
 * ipoib_cm_nosrq_may_take - whether one more buffer fits the budget
 * @budget: the no-SRQ budget, in buffers
 * @used: the buffers there would be with this one
 * @grow: the buffer grows a ring (a QP's first ones may use the reserve)
 */
bool ipoib_cm_nosrq_may_take(u32 budget, u32 used, bool grow)
{
	return used <= budget - (grow ? ipoib_cm_nosrq_reserve(budget) : 0);
}

/**
 * ipoib_cm_nosrq_should_grow - whether a consumed buffer should bring more
 * @burst: buffers of the QP consumed since the receive CQ was last seen
 *	empty, this one included
 * @start: buffers the QP's ring held when that busy spell began
 * @alloc: buffers the QP's ring holds now
 *
 * Only once the peer used more than half of the ring within one busy spell
 * of the receiver: one that keeps up (or a few packets now and then)
 * leaves the ring as it is, one that falls behind gets more before the
 * peer meets an empty queue.  At most doubled in one spell: the spell is
 * the interface's, and a QP that receives now and then while others keep
 * the receiver busy for long adds up many packets in it without ever
 * having had more than one in hand.  A QP of one buffer grows on its
 * first packet.
 */
bool ipoib_cm_nosrq_should_grow(u32 burst, u32 start, u32 alloc)
{
	return burst > start / 2 && alloc / 2 < start;
}

/**
 * ipoib_cm_nosrq_ring_units - budget a no-SRQ QP's ring bookkeeping takes
 * @slots: the ring's depth
 * @slot_bytes: the bookkeeping of one slot (buffer descriptor, free stack)
 * @buf_bytes: the size of one buffer (non-zero)
 *
 * In buffers, rounded up: the budget counts buffers, and a thousand QPs'
 * rings are memory too (272 bytes a slot on x86-64, 256 slots by default:
 * two buffers' worth per QP).
 */
u32 ipoib_cm_nosrq_ring_units(u32 slots, u32 slot_bytes, u32 buf_bytes)
{
	return min_t(u64, DIV_ROUND_UP_ULL((u64)slots * slot_bytes, buf_bytes),
		     U32_MAX);
}

/**
 * ipoib_cm_recv_cqe - entries of the RC receive CQ
 * @bufs: the most receive buffers there can be: the SRQ's size, or the
 *	no-SRQ budget (at most @max_cqe - IPOIB_CM_DRAIN_WRS)
 * @max_cqe: the largest CQ the device makes
 */
u32 ipoib_cm_recv_cqe(u32 bufs, u32 max_cqe)
{
	return min_t(u64, (u64)bufs + IPOIB_CM_DRAIN_WRS, max_cqe);
}
