// SPDX-License-Identifier: GPL-2.0
/*
 * Connected-mode receive backend without a shared receive queue: every RC
 * QP has its own ring of up to recv_queue_size buffers (64 KiB each), and
 * its receive memory follows its traffic.
 *
 * - A QP starts small: one buffer if we opened it (a peer may legally
 *   send back on a connection it accepted, RFC 4755 3.2, and must not
 *   meet an empty queue), IPOIB_CM_NOSRQ_FIRST if we accept it (the peer
 *   opened it to send, and starts at once).  They are posted before the
 *   REQ or the REP goes out.
 * - Each buffer consumed is replaced.  Once the QP has used more than
 *   half of its ring within one busy spell of the CM NAPI (from when it
 *   found the receive CQ empty to the next time; ipoib_cm_napi_poll()
 *   counts the spells in cm.rx_spell), IPOIB_CM_NOSRQ_GROW more are added
 *   for each, up to the ring (ipoib_cm_nosrq_should_grow()): a peer that
 *   outruns the receiver doubles the posted window in a spell, one that
 *   does not (or a few packets now and then) leaves it as it began.  Not
 *   more than doubled: the spell is the interface's, and a QP receiving
 *   now and then while others keep the NAPI busy would count up without
 *   end.  What arrives while it is short waits in the peer's RNR retries
 *   (7: without end), never lost.
 * - A buffer consumed after a quiet spell (nothing received on the QP for
 *   IPOIB_CM_NOSRQ_QUIET) is given back instead, as long as the QP keeps
 *   the buffers it started with: a connection that only trickles shrinks
 *   back.  Posted receives cannot be taken back from a QP: one that grew
 *   and then carried nothing, either way, for IPOIB_CM_NOSRQ_RECLAIM is
 *   closed by the idle scan (ipoib_cm_nosrq_hoarding()), and the next
 *   packets dial a new, small one.
 * - Every buffer of every QP of the interface, accepted or opened, is
 *   taken from one budget, cm_nosrq_mem, before it is allocated; the
 *   budget also sizes the receive CQ (ipoib_cm_size.c), so no mix of
 *   connections can overflow it.  Growth leaves a reserve for the first
 *   receives of new QPs.  A ring's own bookkeeping counts too, in
 *   buffers' worth (ipoib_cm_nosrq_ring_units()).  A leaked QP's buffers
 *   stay counted until their completions come in (each still needs room
 *   in the CQ), its ring for good.  Peers are
 *   bounded by cm_max_nosrq accepted QPs per interface and
 *   cm_nosrq_per_peer per GID (ipoib_cm_req_handler()).
 *
 * Buffers are added and removed under conn->rx_lock, by the CM NAPI;
 * before that (qp_ready) and after teardown (release) the QP's owner has
 * them alone.  A ring slot is free (on the rx_free stack, no pages) or
 * holds a buffer: posted, or completed and in the NAPI's hands.
 *
 * conn->rx_posted counts the buffers handed to the QP whose completion has
 * not been fully handled; it is decremented only after a completed buffer
 * was reposted or given back, so teardown, which waits for it
 * to reach zero, never destroys a QP a repost is about to use.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/error-injection.h>
#include <linux/slab.h>

#include "ipoib.h"
#include "ipoib_cm_priv.h"
#include "ipoib_compat.h"

/* Receives added to a QP short of its ring per receive it consumes. */
#define IPOIB_CM_NOSRQ_GROW	2
/* No receive for this long: the next consumed buffer is given back. */
#define IPOIB_CM_NOSRQ_QUIET	HZ
/* No receive for this long with a grown ring: the connection is closed. */
#define IPOIB_CM_NOSRQ_RECLAIM	(30 * HZ)

/* @n buffers' worth of the interface's budget; growth leaves the reserve. */
static bool ipoib_cm_nosrq_take_n(struct ipoib_priv *priv, unsigned int n,
				  bool grow)
{
	u32 used = atomic_add_return(n, &priv->cm.nosrq_bufs);

	if (ipoib_cm_nosrq_may_take(priv->cm.nosrq_budget, used, grow))
		return true;
	atomic_sub(n, &priv->cm.nosrq_bufs);
	ipoib_cm_count(priv, IPOIB_CM_ST_RX_BUDGET, 1);
	return false;
}

static bool ipoib_cm_nosrq_take(struct ipoib_priv *priv, bool grow)
{
	return ipoib_cm_nosrq_take_n(priv, 1, grow);
}

/* The budget a ring of ipoib_recvq_size slots takes for its bookkeeping. */
static unsigned int ipoib_cm_nosrq_meta(struct ipoib_priv *priv)
{
	return ipoib_cm_nosrq_ring_units(ipoib_recvq_size,
					 sizeof(struct ipoib_cm_rx_buf) +
					 sizeof(u16),
					 priv->cm.rx_frags * PAGE_SIZE);
}

static void ipoib_cm_nosrq_give(struct ipoib_priv *priv, unsigned int n)
{
	atomic_sub(n, &priv->cm.nosrq_bufs);
}

static int ipoib_cm_nosrq_post(struct ipoib_cm_conn *conn,
			       struct ipoib_cm_rx_buf *buf)
{
	struct ib_sge sge[IPOIB_CM_MAX_FRAGS];
	struct ib_recv_wr wr;

	ipoib_cm_rx_wr(conn->priv, buf, &wr, sge);
	return ib_post_recv(conn->qp, &wr, NULL);
}

/* A new buffer in a free slot, from the budget, posted. */
static int ipoib_cm_nosrq_add(struct ipoib_cm_conn *conn, gfp_t gfp,
			      bool grow)
{
	struct ipoib_priv *priv = conn->priv;
	struct ipoib_cm_rx_buf *buf;
	int ret;

	if (!conn->rx_nfree)
		return -ENOSPC;
	if (!ipoib_cm_nosrq_take(priv, grow))
		return -ENOBUFS;
	buf = &conn->rx_ring[conn->rx_free[conn->rx_nfree - 1]];
	buf->conn = conn;
	buf->cqe.done = ipoib_cm_recv_done;
	ret = ipoib_cm_rx_buf_fill(priv, buf, gfp);
	if (!ret)
		ret = ipoib_cm_nosrq_post(conn, buf);
	if (ret) {
		ipoib_cm_rx_buf_free(priv, buf);
		ipoib_cm_nosrq_give(priv, 1);
		return ret;
	}
	conn->rx_nfree--;
	WRITE_ONCE(conn->rx_alloc, conn->rx_alloc + 1);
	WRITE_ONCE(conn->rx_posted, conn->rx_posted + 1);
	return 0;
}

/* Used: grow the ring so the peer finds room.  rx_lock held. */
static unsigned int ipoib_cm_nosrq_grow(struct ipoib_cm_conn *conn)
{
	unsigned int n;

	lockdep_assert_held(&conn->rx_lock);
	for (n = 0; n < IPOIB_CM_NOSRQ_GROW; n++)
		if (ipoib_cm_nosrq_add(conn, GFP_ATOMIC, true))
			break;
	return n;
}

/* A consumed buffer given back: its pages, its slot, its budget. */
static void ipoib_cm_nosrq_shrink(struct ipoib_cm_conn *conn,
				  struct ipoib_cm_rx_buf *buf)
{
	ipoib_cm_rx_buf_free(conn->priv, buf);
	conn->rx_free[conn->rx_nfree++] = buf - conn->rx_ring;
	WRITE_ONCE(conn->rx_alloc, conn->rx_alloc - 1);
	WRITE_ONCE(conn->rx_posted, conn->rx_posted - 1);
	ipoib_cm_nosrq_give(conn->priv, 1);
}

static int ipoib_cm_nosrq_start(struct ipoib_priv *priv)
{
	atomic_set(&priv->cm.nosrq_conns, 0);
	atomic_set(&priv->cm.nosrq_bufs, 0);
	return 0;
}

static void ipoib_cm_nosrq_stop(struct ipoib_priv *priv)
{
	WARN_ON(atomic_read(&priv->cm.nosrq_conns));
	/* Buffers of leaked QPs stay out for good. */
	WARN_ON(atomic_read(&priv->cm.nosrq_bufs) && !priv->cm.leaked_qps);
}

/*
 * An accepted QP needs its first receives from the budget, and counts
 * against cm_max_nosrq.  The REQ handler counts, and answers, a refusal.
 */
static int ipoib_cm_nosrq_admit(struct ipoib_cm_conn *conn)
{
	struct ipoib_priv *priv = conn->priv;
	unsigned int first = min(ipoib_recvq_size, IPOIB_CM_NOSRQ_FIRST) +
			     ipoib_cm_nosrq_meta(priv);

	if (atomic_read(&priv->cm.nosrq_bufs) + first >
	    priv->cm.nosrq_budget) {
		net_info_ratelimited("%s: receive memory without SRQ used up (cm_nosrq_mem %u MiB): REQ from %pI6 refused\n",
				     priv->netdev->name, ipoib_cm_nosrq_mem,
				     conn->gid.raw);
		ipoib_cm_count(priv, IPOIB_CM_ST_NOSRQ_MEM, 1);
		return -ENOBUFS;
	}
	if (atomic_inc_return(&priv->cm.nosrq_conns) > ipoib_cm_max_nosrq) {
		atomic_dec(&priv->cm.nosrq_conns);
		net_info_ratelimited("%s: %u connections accepted without SRQ (cm_max_nosrq): REQ from %pI6 refused\n",
				     priv->netdev->name, ipoib_cm_max_nosrq,
				     conn->gid.raw);
		ipoib_cm_count(priv, IPOIB_CM_ST_NO_QP, 1);
		return -ENOSPC;
	}
	conn->rx_counted = true;
	return 0;
}

static void ipoib_cm_nosrq_qp_attr(struct ipoib_cm_conn *conn,
				   struct ib_qp_init_attr *attr)
{
	attr->cap.max_recv_wr = ipoib_recvq_size;
	attr->cap.max_recv_sge = conn->priv->cm.rx_frags;
}

/*
 * The QP is in INIT, and nothing else adds to its ring yet: its first
 * receives, one if we opened it, IPOIB_CM_NOSRQ_FIRST if we accept it.
 */
static noinline int ipoib_cm_nosrq_qp_ready(struct ipoib_cm_conn *conn)
{
	unsigned int i, meta;
	int ret;

	conn->rx_max = ipoib_recvq_size;
	conn->rx_low = conn->active ? 1 : min(conn->rx_max,
					      IPOIB_CM_NOSRQ_FIRST);
	conn->rx_ring = kvcalloc(conn->rx_max, sizeof(*conn->rx_ring),
				 GFP_KERNEL);
	conn->rx_free = kvcalloc(conn->rx_max, sizeof(*conn->rx_free),
				 GFP_KERNEL);
	if (!conn->rx_ring || !conn->rx_free)
		return -ENOMEM;
	/* The ring is memory too: counted until it is freed. */
	meta = ipoib_cm_nosrq_meta(conn->priv);
	if (!ipoib_cm_nosrq_take_n(conn->priv, meta, false))
		return -ENOBUFS;
	conn->rx_meta = meta;
	/* Slot 0 on top. */
	for (i = 0; i < conn->rx_max; i++)
		conn->rx_free[i] = conn->rx_max - 1 - i;
	conn->rx_nfree = conn->rx_max;
	conn->rx_last = jiffies;
	while (conn->rx_alloc < conn->rx_low) {
		ret = ipoib_cm_nosrq_add(conn, GFP_KERNEL, false);
		if (ret)
			return ret;
	}
	/*
	 * rx_spell is 0: should the NAPI's count of spells still be 0 at the
	 * first packet, no new spell is seen there, and this is its start.
	 */
	conn->rx_spell_alloc = conn->rx_alloc;
	return 0;
}
ALLOW_ERROR_INJECTION(ipoib_cm_nosrq_qp_ready, ERRNO);

static bool ipoib_cm_nosrq_open(struct ipoib_cm_conn *conn)
{
	int state = READ_ONCE(conn->state);

	return state != IPOIB_CM_CLOSING && state != IPOIB_CM_FAILED &&
	       !READ_ONCE(conn->priv->cm.stopping);
}

static struct ipoib_cm_conn *ipoib_cm_nosrq_conn_of(struct ipoib_priv *priv,
						    struct ipoib_cm_rx_buf *buf,
						    struct ib_wc *wc)
{
	return READ_ONCE(buf->conn);
}

static void ipoib_cm_nosrq_repost(struct ipoib_priv *priv,
				  struct ipoib_cm_conn *conn,
				  struct ipoib_cm_rx_buf *buf, bool consumed)
{
	unsigned int grown;
	bool quiet, drained, grow;

	if (!conn) {
		/*
		 * Orphaned by a teardown that timed out: its completion is
		 * in, so it no longer needs room in the receive CQ.
		 */
		ipoib_cm_rx_buf_free(priv, buf);
		ipoib_cm_nosrq_give(priv, 1);
		return;
	}
	spin_lock_bh(&conn->rx_lock);
	if (consumed && ipoib_cm_nosrq_open(conn)) {
		quiet = time_after(jiffies,
				   conn->rx_last + IPOIB_CM_NOSRQ_QUIET);
		WRITE_ONCE(conn->rx_last, jiffies);
		/*
		 * Quiet: give it back, keeping what the QP started with
		 * (rx_posted counts this one: at least rx_low stay).
		 */
		if (quiet && conn->rx_posted > conn->rx_low) {
			ipoib_cm_nosrq_shrink(conn, buf);
			spin_unlock_bh(&conn->rx_lock);
			ipoib_cm_count(priv, IPOIB_CM_ST_RX_SHRUNK, 1);
			return;
		}
		/* Only the NAPI consumes: cm.rx_spell is its own. */
		if (conn->rx_spell != priv->cm.rx_spell) {
			conn->rx_spell = priv->cm.rx_spell;
			conn->rx_burst = 0;
			conn->rx_spell_alloc = conn->rx_alloc;
		}
		grow = ipoib_cm_nosrq_should_grow(++conn->rx_burst,
						  conn->rx_spell_alloc,
						  conn->rx_alloc);
		if (!ipoib_cm_nosrq_post(conn, buf)) {
			grown = grow ? ipoib_cm_nosrq_grow(conn) : 0;
			spin_unlock_bh(&conn->rx_lock);
			if (grown)
				ipoib_cm_count(priv, IPOIB_CM_ST_RX_GROWN,
					       grown);
			return;
		}
	}
	/* Flushed, closing, or not postable: given back at once. */
	ipoib_cm_nosrq_shrink(conn, buf);
	drained = !conn->rx_posted;
	spin_unlock_bh(&conn->rx_lock);
	if (drained)
		wake_up(&priv->cm.drain_wait);
}

static bool ipoib_cm_nosrq_drained(struct ipoib_cm_conn *conn)
{
	return !READ_ONCE(conn->rx_posted);
}

static bool ipoib_cm_nosrq_batch_drained(struct list_head *batch)
{
	struct ipoib_cm_conn *conn;

	list_for_each_entry(conn, batch, reap_node)
		if (ipoib_cm_draining(conn) && !ipoib_cm_nosrq_drained(conn))
			return false;
	return true;
}

/*
 * The batch's QPs are in ERR: every receive on them comes back flushed
 * (or filled) through the NAPI, which counts it off rx_posted once it is
 * given back.  At zero nothing of a QP is left in, or can come to, the
 * receive CQ.  One IPOIB_CM_DRAIN_TIMEOUT for the whole batch.
 */
static void ipoib_cm_nosrq_drain(struct ipoib_priv *priv,
				 struct list_head *batch)
{
	unsigned long end = jiffies + IPOIB_CM_DRAIN_TIMEOUT;
	struct ipoib_cm_conn *conn;

	while (!ipoib_cm_nosrq_batch_drained(batch)) {
		if (time_after(jiffies, end))
			break;
		ipoib_cm_napi_kick(priv);
		wait_event_timeout(priv->cm.drain_wait,
				   ipoib_cm_nosrq_batch_drained(batch),
				   HZ / 50 + 1);
	}
	list_for_each_entry(conn, batch, reap_node) {
		if (ipoib_cm_draining(conn) && !ipoib_cm_nosrq_drained(conn))
			ipoib_cm_drain_failed(conn, -ETIMEDOUT);
	}
}

/*
 * Receives may still complete on @conn's QP, which teardown leaks: every
 * buffer still on the QP is orphaned, and its completion frees it and
 * gives its budget back (ipoib_cm_nosrq_repost()).  A completion the NAPI
 * took before the orphaning is handled under rx_lock, taken here, and
 * still uses the ring and its free stack: both stay, leaked with @conn.
 */
static void ipoib_cm_nosrq_orphan(struct ipoib_cm_conn *conn)
{
	unsigned int i;

	spin_lock_bh(&conn->rx_lock);
	netdev_warn(conn->priv->netdev,
		    "RC QP 0x%06x: %u receives never completed\n",
		    conn->qp_num, conn->rx_posted);
	for (i = 0; i < conn->rx_max; i++)
		WRITE_ONCE(conn->rx_ring[i].conn, NULL);
	spin_unlock_bh(&conn->rx_lock);
}

static void ipoib_cm_nosrq_release(struct ipoib_cm_conn *conn)
{
	struct ipoib_priv *priv = conn->priv;
	unsigned int i;
	bool drained;

	if (conn->rx_counted) {
		atomic_dec(&priv->cm.nosrq_conns);
		conn->rx_counted = false;
	}
	/*
	 * Under rx_lock: a NAPI that gave the last buffer back is done with
	 * the ring, and what it wrote there is seen here.
	 */
	spin_lock_bh(&conn->rx_lock);
	drained = !conn->rx_posted;
	spin_unlock_bh(&conn->rx_lock);
	if (conn->rx_ring && !drained) {
		ipoib_cm_nosrq_orphan(conn);
		return;
	}
	if (conn->rx_ring) {
		for (i = 0; i < conn->rx_max; i++)
			ipoib_cm_rx_buf_free(priv, &conn->rx_ring[i]);
		kvfree(conn->rx_ring);
		conn->rx_ring = NULL;
		ipoib_cm_nosrq_give(priv, conn->rx_alloc + conn->rx_meta);
		WRITE_ONCE(conn->rx_alloc, 0);
		conn->rx_meta = 0;
	}
	kvfree(conn->rx_free);
	conn->rx_free = NULL;
	conn->rx_nfree = 0;
}

static void ipoib_cm_nosrq_show(struct seq_file *m, struct ipoib_cm_conn *conn)
{
	seq_printf(m, " rx_posted %u rx_buf_bytes %lu",
		   READ_ONCE(conn->rx_posted),
		   (unsigned long)READ_ONCE(conn->rx_alloc) *
		   conn->priv->cm.rx_frags * PAGE_SIZE);
}

/*
 * Grown beyond what it began with, and no packet either way for a while:
 * a connection that still sends (both ways over one, or a peer sending
 * back on what it accepted) is in use, whatever its receives do.
 * cm.lock held, so that its state is stable.
 */
static bool ipoib_cm_nosrq_hoarding(struct ipoib_cm_conn *conn)
{
	lockdep_assert_held(&conn->priv->cm.lock);
	return READ_ONCE(conn->rx_alloc) > conn->rx_low &&
	       time_after(jiffies,
			  READ_ONCE(conn->last_used) + IPOIB_CM_NOSRQ_RECLAIM);
}

const struct ipoib_cm_rx_ops ipoib_cm_nosrq_ops = {
	.name		= "per-QP",
	.srq		= false,
	.start		= ipoib_cm_nosrq_start,
	.stop		= ipoib_cm_nosrq_stop,
	.admit		= ipoib_cm_nosrq_admit,
	.qp_attr	= ipoib_cm_nosrq_qp_attr,
	.qp_ready	= ipoib_cm_nosrq_qp_ready,
	.conn_of	= ipoib_cm_nosrq_conn_of,
	.repost		= ipoib_cm_nosrq_repost,
	.drain		= ipoib_cm_nosrq_drain,
	.release	= ipoib_cm_nosrq_release,
	.show		= ipoib_cm_nosrq_show,
	.hoarding	= ipoib_cm_nosrq_hoarding,
};
