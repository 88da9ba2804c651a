// SPDX-License-Identifier: GPL-2.0
/*
 * Connected-mode receive backend without a shared receive queue: every RC
 * QP has its own receive ring.
 *
 * An accepted QP gets its whole ring: the peer opened it to send.  The
 * first IPOIB_CM_NOSRQ_FIRST buffers are posted before the REP, the rest
 * by a task right after it (filling a ring of 64 KiB buffers takes long
 * enough to hold up the peer's REQ, and every REQ behind it).  An opened
 * QP gets one receive, because a peer may legally send back on a
 * connection it accepted (RFC 4755 3.2) and must not meet an empty queue.
 * On either, each receive consumed is replaced and two more are added
 * until the ring is full; a QP that never receives costs one buffer.
 * Buffers are added under conn->rx_lock: by the CM NAPI (growth) and by
 * the fill task.
 *
 * conn->rx_posted counts the buffers handed to the QP whose completion has
 * not been fully handled; it is decremented only after a completed buffer
 * was reposted or set aside, so teardown, which waits for it to reach
 * zero, never destroys a QP a repost is about to use.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/error-injection.h>
#include <linux/slab.h>

#include "ipoib.h"
#include "ipoib_cm_priv.h"
#include "ipoib_compat.h"

/* Receives added to a QP short of its ring per receive it consumes. */
#define IPOIB_CM_NOSRQ_GROW	2
/* Receives on an accepted QP before the REP. */
#define IPOIB_CM_NOSRQ_FIRST	16U

static int ipoib_cm_nosrq_post(struct ipoib_cm_conn *conn,
			       struct ipoib_cm_rx_buf *buf)
{
	struct ib_sge sge[IPOIB_CM_MAX_FRAGS];
	struct ib_recv_wr wr;

	ipoib_cm_rx_wr(conn->priv, buf, &wr, sge);
	return ib_post_recv(conn->qp, &wr, NULL);
}

/* Post the ring's next unused buffer, its pages in place. */
static int ipoib_cm_nosrq_push(struct ipoib_cm_conn *conn)
{
	struct ipoib_cm_rx_buf *buf = &conn->rx_ring[conn->rx_used];
	int ret;

	buf->conn = conn;
	buf->cqe.done = ipoib_cm_recv_done;
	ret = ipoib_cm_nosrq_post(conn, buf);
	if (ret)
		return ret;
	conn->rx_used++;
	WRITE_ONCE(conn->rx_posted, conn->rx_posted + 1);
	return 0;
}

/* Fill, and post, the ring's next unused buffer. */
static int ipoib_cm_nosrq_add(struct ipoib_cm_conn *conn, gfp_t gfp)
{
	struct ipoib_cm_rx_buf *buf = &conn->rx_ring[conn->rx_used];
	int ret;

	ret = ipoib_cm_rx_buf_fill(conn->priv, buf, gfp);
	if (!ret)
		ret = ipoib_cm_nosrq_push(conn);
	if (ret)
		ipoib_cm_rx_buf_free(conn->priv, buf);
	return ret;
}

static int ipoib_cm_nosrq_start(struct ipoib_priv *priv)
{
	atomic_set(&priv->cm.nosrq_conns, 0);
	return 0;
}

static void ipoib_cm_nosrq_stop(struct ipoib_priv *priv)
{
	WARN_ON(atomic_read(&priv->cm.nosrq_conns));
}

/* Accepted QPs are counted against cm_max_nosrq. */
static int ipoib_cm_nosrq_admit(struct ipoib_cm_conn *conn)
{
	struct ipoib_priv *priv = conn->priv;

	if (atomic_inc_return(&priv->cm.nosrq_conns) > ipoib_cm_max_nosrq) {
		atomic_dec(&priv->cm.nosrq_conns);
		net_info_ratelimited("%s: %u connections accepted without SRQ (cm_max_nosrq): REQ from %pI6 refused\n",
				     priv->netdev->name, ipoib_cm_max_nosrq,
				     conn->gid.raw);
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
 * The QP is in INIT, and nothing else adds to its ring yet: one receive
 * if we opened it, the first of the ring if we accept it.
 */
static noinline int ipoib_cm_nosrq_qp_ready(struct ipoib_cm_conn *conn)
{
	unsigned int want = conn->active ? 1 :
			    min(ipoib_recvq_size, IPOIB_CM_NOSRQ_FIRST);
	int ret;

	conn->rx_max = ipoib_recvq_size;
	conn->rx_ring = kvcalloc(conn->rx_max, sizeof(*conn->rx_ring),
				 GFP_KERNEL);
	if (!conn->rx_ring)
		return -ENOMEM;
	while (conn->rx_used < want) {
		ret = ipoib_cm_nosrq_add(conn, GFP_KERNEL);
		if (ret)
			return ret;
	}
	return 0;
}
ALLOW_ERROR_INJECTION(ipoib_cm_nosrq_qp_ready, ERRNO);

static bool ipoib_cm_nosrq_open(struct ipoib_cm_conn *conn)
{
	int state = READ_ONCE(conn->state);

	return state != IPOIB_CM_CLOSING && state != IPOIB_CM_FAILED &&
	       !READ_ONCE(conn->priv->cm.stopping);
}

/* Our REP is out: the rest of an accepted QP's ring, in process context. */
static void ipoib_cm_nosrq_fill(struct ipoib_cm_conn *conn)
{
	struct ipoib_priv *priv = conn->priv;
	struct ipoib_cm_rx_buf fresh;
	struct ipoib_cm_rx_buf *buf;
	bool posted;

	while (READ_ONCE(conn->rx_used) < conn->rx_max &&
	       ipoib_cm_nosrq_open(conn)) {
		memset(&fresh, 0, sizeof(fresh));
		if (ipoib_cm_rx_buf_fill(priv, &fresh, GFP_KERNEL)) {
			ipoib_cm_rx_buf_free(priv, &fresh);
			return;		/* consumption grows it later */
		}
		posted = false;
		spin_lock_bh(&conn->rx_lock);
		if (conn->rx_used < conn->rx_max && ipoib_cm_nosrq_open(conn)) {
			/* The pages stay @fresh's until posted. */
			buf = &conn->rx_ring[conn->rx_used];
			memcpy(buf->pages, fresh.pages, sizeof(buf->pages));
			memcpy(buf->dma, fresh.dma, sizeof(buf->dma));
			posted = !ipoib_cm_nosrq_push(conn);
			if (!posted)
				memset(buf->pages, 0, sizeof(buf->pages));
		}
		spin_unlock_bh(&conn->rx_lock);
		if (!posted) {
			ipoib_cm_rx_buf_free(priv, &fresh);
			return;
		}
		cond_resched();
	}
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
	unsigned int i, grown = 0;
	bool drained;

	if (!conn) {
		/* Orphaned by a teardown that timed out: just free it. */
		ipoib_cm_rx_buf_free(priv, buf);
		return;
	}
	spin_lock_bh(&conn->rx_lock);
	if (consumed && ipoib_cm_nosrq_open(conn) &&
	    ipoib_cm_nosrq_post(conn, buf) == 0) {
		/* Used: grow the ring so the peer finds room. */
		for (i = 0; i < IPOIB_CM_NOSRQ_GROW &&
		     conn->rx_used < conn->rx_max; i++) {
			if (ipoib_cm_nosrq_add(conn, GFP_ATOMIC))
				break;
			grown++;
		}
		spin_unlock_bh(&conn->rx_lock);
		if (grown)
			ipoib_cm_count(priv, IPOIB_CM_ST_RX_GROWN, grown);
		return;
	}
	/* Set aside (flushed, closing, or not postable): freed on release. */
	WRITE_ONCE(conn->rx_posted, conn->rx_posted - 1);
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
 * set aside.  At zero nothing of a QP is left in, or can come to, the
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

static void ipoib_cm_nosrq_release(struct ipoib_cm_conn *conn)
{
	struct ipoib_priv *priv = conn->priv;
	unsigned int i;

	if (conn->rx_ring) {
		if (ipoib_cm_nosrq_drained(conn)) {
			for (i = 0; i < conn->rx_used; i++)
				ipoib_cm_rx_buf_free(priv, &conn->rx_ring[i]);
			kvfree(conn->rx_ring);
		} else {
			/*
			 * Completions may still come: let them free their
			 * pages; the ring itself is leaked.
			 */
			netdev_warn(priv->netdev,
				    "RC QP 0x%06x: %u receives never completed\n",
				    conn->qp_num, conn->rx_posted);
			for (i = 0; i < conn->rx_used; i++)
				WRITE_ONCE(conn->rx_ring[i].conn, NULL);
		}
		conn->rx_ring = NULL;
		conn->rx_used = 0;
	}
	if (conn->rx_counted) {
		atomic_dec(&priv->cm.nosrq_conns);
		conn->rx_counted = false;
	}
}

static void ipoib_cm_nosrq_show(struct seq_file *m, struct ipoib_cm_conn *conn)
{
	seq_printf(m, " rx_posted %u rx_buf_bytes %lu",
		   READ_ONCE(conn->rx_posted),
		   (unsigned long)READ_ONCE(conn->rx_used) *
		   conn->priv->cm.rx_frags * PAGE_SIZE);
}

const struct ipoib_cm_rx_ops ipoib_cm_nosrq_ops = {
	.name		= "per-QP",
	.srq		= false,
	.start		= ipoib_cm_nosrq_start,
	.stop		= ipoib_cm_nosrq_stop,
	.admit		= ipoib_cm_nosrq_admit,
	.qp_attr	= ipoib_cm_nosrq_qp_attr,
	.qp_ready	= ipoib_cm_nosrq_qp_ready,
	.fill		= ipoib_cm_nosrq_fill,
	.conn_of	= ipoib_cm_nosrq_conn_of,
	.repost		= ipoib_cm_nosrq_repost,
	.drain		= ipoib_cm_nosrq_drain,
	.release	= ipoib_cm_nosrq_release,
	.show		= ipoib_cm_nosrq_show,
};
