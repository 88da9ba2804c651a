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
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>

#include "ipoib.h"
#include "ipoib_compat.h"

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
	/* Counted and re-armed by ipoib_cm_srq_limit_work(). */
	if (ib_modify_srq(priv->cm.srq, &limit, IB_SRQ_LIMIT))
		netdev_dbg(priv->netdev, "SRQ limit not supported\n");
	return 0;

err_ring:
	netdev_err(priv->netdev, "cannot fill the SRQ: %d\n", ret);
	ib_destroy_srq(priv->cm.srq);
	priv->cm.srq = NULL;
	ipoib_cm_srq_free_ring(priv);
	return ret;
err_srq:
	ib_destroy_srq(priv->cm.srq);
	priv->cm.srq = NULL;
	return ret;
}

/* Every QP is gone and the receive CQ drained: no completion is left. */
static void ipoib_cm_srq_stop(struct ipoib_priv *priv)
{
	if (!priv->cm.srq)
		return;
	ib_destroy_srq(priv->cm.srq);
	priv->cm.srq = NULL;
	ipoib_cm_srq_free_ring(priv);
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

static int ipoib_cm_srq_qp_ready(struct ipoib_cm_conn *conn)
{
	return 0;
}

/*
 * The QP is found by its number; teardown consumes a QP's completions
 * before destroying it (ipoib_cm_rx_barrier()), so wc->qp is valid here.
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

/* An SRQ's buffers belong to no QP: nothing to wait for per QP. */
static bool ipoib_cm_srq_drained(struct ipoib_cm_conn *conn)
{
	return true;
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
	.start		= ipoib_cm_srq_start,
	.stop		= ipoib_cm_srq_stop,
	.admit		= ipoib_cm_srq_admit,
	.qp_attr	= ipoib_cm_srq_qp_attr,
	.qp_ready	= ipoib_cm_srq_qp_ready,
	.conn_of	= ipoib_cm_srq_conn_of,
	.repost		= ipoib_cm_srq_repost,
	.drained	= ipoib_cm_srq_drained,
	.release	= ipoib_cm_srq_release,
	.show		= ipoib_cm_srq_show,
};
