// SPDX-License-Identifier: GPL-2.0
/*
 * Connected-mode receive backend with a shared receive queue: one SRQ per
 * interface, and every RC QP attached to it, opened and accepted alike
 * (RFC 4755 3.2 lets a peer send on either).  Memory does not grow with
 * the number of connections.
 *
 * Buffers never leave the ring: a completed one is refilled (its pages
 * that went up the stack replaced) and posted again at once; one whose
 * pages cannot be replaced keeps them and its packet is dropped.
 *
 * Tearing down a QP on the SRQ (IBA 10.3.1): in ERR it stops taking SRQ
 * buffers, and says so with the Last WQE Reached event; its completions
 * are then in the receive CQ or on their way.  A marker posted after the
 * event to a QP that flushes it into the same CQ lands behind them: once
 * the NAPI has consumed the marker, nothing in the CQ refers to the QP
 * and it can be destroyed.  (The kernel's ib_drain_qp() cannot do this
 * here: it polls the CQ itself, which our NAPI owns.)  rxe before 6.5
 * never raises the event: when it does not come in IPOIB_CM_LAST_WQE_WAIT
 * the interface stops waiting for it and relies on the marker alone.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/error-injection.h>
#include <linux/kmemleak.h>
#include <linux/slab.h>

#include "ipoib.h"
#include "ipoib_cm_priv.h"
#include "ipoib_compat.h"

/* How long the first teardown waits for Last WQE Reached. */
#define IPOIB_CM_LAST_WQE_WAIT	(2 * HZ)

static int ipoib_cm_srq_post(struct ipoib_priv *priv,
			     struct ipoib_cm_rx_buf *buf)
{
	struct ib_sge sge[IPOIB_CM_MAX_FRAGS];
	struct ib_recv_wr wr;

	ipoib_cm_rx_wr(priv, buf, &wr, sge);
	return ib_post_srq_recv(priv->cm.srq, &wr, NULL);
}

static void ipoib_cm_srq_free_ring(struct ipoib_priv *priv)
{
	unsigned int i;

	for (i = 0; i < priv->cm.srq_size; i++)
		ipoib_cm_rx_buf_free(priv, &priv->cm.srq_ring[i]);
	kvfree(priv->cm.srq_ring);
	priv->cm.srq_ring = NULL;
}

/* A drain marker came out of the receive CQ (NAPI context). */
static void ipoib_cm_srq_marker_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ipoib_priv *priv = cq->cq_context;

	WRITE_ONCE(priv->cm.drain_done, priv->cm.drain_done + 1);
	wake_up(&priv->cm.drain_wait);
}

/*
 * The marker QP: not on the SRQ, both queues on the receive CQ, moved to
 * ERR at once, so each receive posted to it completes (flushed) in the
 * receive CQ straight away.
 */
static int ipoib_cm_srq_marker_qp(struct ipoib_priv *priv)
{
	struct ib_qp_init_attr init = {
		.send_cq = priv->cm.recv_cq,
		.recv_cq = priv->cm.recv_cq,
		.cap = {
			.max_send_wr = 1,
			.max_recv_wr = IPOIB_CM_DRAIN_WRS,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.qp_type = IB_QPT_RC,
	};
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_INIT,
		.pkey_index = priv->pkey_index,
		.port_num = priv->port_num,
	};
	struct ib_qp *qp;
	int ret;

	qp = ib_create_qp(priv->pd, &init);
	if (IS_ERR(qp))
		return PTR_ERR(qp);
	ret = ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	if (!ret) {
		attr.qp_state = IB_QPS_ERR;
		ret = ib_modify_qp(qp, &attr, IB_QP_STATE);
	}
	if (ret) {
		ib_destroy_qp(qp);
		return ret;
	}
	priv->cm.drain_cqe.done = ipoib_cm_srq_marker_done;
	priv->cm.drain_posted = 0;
	priv->cm.drain_done = 0;
	priv->cm.drain_qp = qp;
	return 0;
}

/*
 * Post a marker and wait until the NAPI has consumed it: everything that
 * was in the receive CQ before it has been consumed too.  Reaper only.
 */
static int ipoib_cm_srq_marker(struct ipoib_priv *priv)
{
	struct ib_recv_wr wr = { .wr_cqe = &priv->cm.drain_cqe };
	unsigned long end = jiffies + IPOIB_CM_DRAIN_TIMEOUT;
	unsigned long want;
	int ret;

	/* A marker still out holds its CQ entry: never more than one. */
	if (READ_ONCE(priv->cm.drain_done) != priv->cm.drain_posted)
		return -EBUSY;
	ret = ib_post_recv(priv->cm.drain_qp, &wr, NULL);
	if (ret)
		return ret;
	want = ++priv->cm.drain_posted;
	while (READ_ONCE(priv->cm.drain_done) != want) {
		if (time_after(jiffies, end))
			return -ETIMEDOUT;
		ipoib_cm_napi_kick(priv);
		wait_event_timeout(priv->cm.drain_wait,
				   READ_ONCE(priv->cm.drain_done) == want,
				   HZ / 50 + 1);
	}
	return 0;
}

static int ipoib_cm_srq_start(struct ipoib_priv *priv)
{
	struct ib_srq_init_attr init = {
		.event_handler = ipoib_cm_srq_event,
		.srq_context = priv,
		.srq_type = IB_SRQT_BASIC,
		.attr = {
			.max_wr = ipoib_recvq_size,
			.max_sge = priv->cm.rx_frags,
		},
	};
	struct ib_srq_attr limit = { .srq_limit = ipoib_recvq_size / 4 };
	struct ipoib_cm_rx_buf *buf;
	unsigned int i;
	int ret;

	priv->cm.srq = ib_create_srq(priv->pd, &init);
	if (IS_ERR(priv->cm.srq)) {
		ret = PTR_ERR(priv->cm.srq);
		priv->cm.srq = NULL;
		netdev_err(priv->netdev, "cannot create the SRQ: %d\n", ret);
		return ret;
	}
	priv->cm.srq_size = ipoib_recvq_size;
	priv->cm.srq_ring = kvcalloc(priv->cm.srq_size,
				     sizeof(*priv->cm.srq_ring), GFP_KERNEL);
	if (!priv->cm.srq_ring) {
		ret = -ENOMEM;
		goto err_srq;
	}
	for (i = 0; i < priv->cm.srq_size; i++) {
		buf = &priv->cm.srq_ring[i];
		buf->cqe.done = ipoib_cm_recv_done;
		ret = ipoib_cm_rx_buf_fill(priv, buf, GFP_KERNEL);
		if (!ret)
			ret = ipoib_cm_srq_post(priv, buf);
		if (ret)
			goto err_ring;
	}
	ret = ipoib_cm_srq_marker_qp(priv);
	if (ret) {
		netdev_err(priv->netdev, "cannot create the drain QP: %d\n",
			   ret);
		goto err_ring_posted;
	}
	/* Counted and re-armed by ipoib_cm_srq_limit_work(). */
	if (ib_modify_srq(priv->cm.srq, &limit, IB_SRQ_LIMIT))
		netdev_dbg(priv->netdev, "SRQ limit not supported\n");
	return 0;

err_ring:
	netdev_err(priv->netdev, "cannot fill the SRQ: %d\n", ret);
err_ring_posted:
	ib_destroy_srq(priv->cm.srq);
	priv->cm.srq = NULL;
	ipoib_cm_srq_free_ring(priv);
	return ret;
err_srq:
	ib_destroy_srq(priv->cm.srq);
	priv->cm.srq = NULL;
	return ret;
}

/*
 * Every connection is reaped and the receive CQ drained: no completion is
 * left, unless teardown had to leak QPs, which still use the SRQ.
 */
static void ipoib_cm_srq_stop(struct ipoib_priv *priv)
{
	if (priv->cm.drain_qp) {
		ib_destroy_qp(priv->cm.drain_qp);
		priv->cm.drain_qp = NULL;
	}
	if (!priv->cm.srq)
		return;
	if (priv->cm.leaked_qps) {
		/* Its buffers may still be written to: leave them, on purpose. */
		kmemleak_not_leak(priv->cm.srq_ring);
		netdev_warn(priv->netdev, "SRQ still used by %u leaked QPs: SRQ and its buffers leaked\n",
			    priv->cm.leaked_qps);
		priv->cm.srq_ring = NULL;
	} else {
		ib_destroy_srq(priv->cm.srq);
		ipoib_cm_srq_free_ring(priv);
	}
	priv->cm.srq = NULL;
}

static int ipoib_cm_srq_admit(struct ipoib_cm_conn *conn)
{
	return 0;
}

static void ipoib_cm_srq_qp_attr(struct ipoib_cm_conn *conn,
				 struct ib_qp_init_attr *attr)
{
	attr->srq = conn->priv->cm.srq;
}

static noinline int ipoib_cm_srq_qp_ready(struct ipoib_cm_conn *conn)
{
	return 0;
}
ALLOW_ERROR_INJECTION(ipoib_cm_srq_qp_ready, ERRNO);

/*
 * The QP is found by its number; teardown consumes a QP's completions
 * before destroying it (ipoib_cm_srq_drain()), so wc->qp is valid here.
 */
static struct ipoib_cm_conn *ipoib_cm_srq_conn_of(struct ipoib_priv *priv,
						  struct ipoib_cm_rx_buf *buf,
						  struct ib_wc *wc)
{
	return xa_load(&priv->cm.qpns, wc->qp->qp_num);
}

static void ipoib_cm_srq_repost(struct ipoib_priv *priv,
				struct ipoib_cm_conn *conn,
				struct ipoib_cm_rx_buf *buf, bool consumed)
{
	int ret = ipoib_cm_srq_post(priv, buf);

	if (unlikely(ret))
		netdev_warn_once(priv->netdev,
				 "cannot repost to the SRQ: %d\n", ret);
}

/* Before RTR a QP takes nothing from the SRQ: nothing to wait for. */
static bool ipoib_cm_srq_draining(const struct ipoib_cm_conn *conn)
{
	return ipoib_cm_draining(conn) && conn->rtr;
}

/*
 * The batch's QPs are in ERR: wait for Last WQE Reached from each (unless
 * this provider is known not to raise it), all within one
 * IPOIB_CM_LAST_WQE_WAIT, then for one marker behind all their
 * completions.
 */
static void ipoib_cm_srq_drain(struct ipoib_priv *priv,
			       struct list_head *batch)
{
	unsigned long end = jiffies + IPOIB_CM_LAST_WQE_WAIT;
	struct ipoib_cm_conn *conn;
	bool any = false;
	int ret;

	list_for_each_entry(conn, batch, reap_node) {
		if (!ipoib_cm_srq_draining(conn))
			continue;
		any = true;
		if (READ_ONCE(priv->cm.no_last_wqe) ||
		    wait_event_timeout(priv->cm.drain_wait,
				       test_bit(IPOIB_CM_QP_LAST_WQE,
						&conn->qp_events),
				       ipoib_cm_until(end)))
			continue;
		WRITE_ONCE(priv->cm.no_last_wqe, true);
		netdev_warn(priv->netdev, "RC QP 0x%06x: no Last WQE Reached event in %u ms: relying on drain markers alone\n",
			    conn->qp_num,
			    jiffies_to_msecs(IPOIB_CM_LAST_WQE_WAIT));
	}
	if (!any)
		return;
	ret = ipoib_cm_srq_marker(priv);
	if (!ret)
		return;
	list_for_each_entry(conn, batch, reap_node)
		if (ipoib_cm_srq_draining(conn))
			ipoib_cm_drain_failed(conn, ret);
}

static void ipoib_cm_srq_release(struct ipoib_cm_conn *conn)
{
}

static void ipoib_cm_srq_show(struct seq_file *m, struct ipoib_cm_conn *conn)
{
	seq_puts(m, " rx srq");
}

const struct ipoib_cm_rx_ops ipoib_cm_srq_ops = {
	.name		= "SRQ",
	.srq		= true,
	.start		= ipoib_cm_srq_start,
	.stop		= ipoib_cm_srq_stop,
	.admit		= ipoib_cm_srq_admit,
	.qp_attr	= ipoib_cm_srq_qp_attr,
	.qp_ready	= ipoib_cm_srq_qp_ready,
	.conn_of	= ipoib_cm_srq_conn_of,
	.repost		= ipoib_cm_srq_repost,
	.drain		= ipoib_cm_srq_drain,
	.release	= ipoib_cm_srq_release,
	.show		= ipoib_cm_srq_show,
};
