// SPDX-License-Identifier: GPL-2.0
/*
 * Connected mode, the RC receive path, for both receive backends: the
 * buffers, their completions up to the stack, noticing the first receive
 * on a QP still waiting for the RTU, and the CM NAPI poll (which runs the
 * send completions too).  A peer's REQ is accepted in
 * ipoib_cm_handshake.c.
 *
 * A receive buffer is a set of pages; a completed one becomes an skb whose
 * first bytes are copied into its linear part and whose other pages are
 * attached as fragments and replaced before the buffer is posted again.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "ipoib.h"
#include "ipoib_cm_priv.h"
#include "ipoib_compat.h"

/* Bytes copied into the linear part: every header a router looks at. */
#define IPOIB_CM_COPYBREAK	256

/**
 * ipoib_cm_rx_buf_fill - give a receive buffer its pages
 * @priv: the interface
 * @buf: a buffer with no pages, or with some already there
 * @gfp: allocation context
 */
int ipoib_cm_rx_buf_fill(struct ipoib_priv *priv, struct ipoib_cm_rx_buf *buf,
			 gfp_t gfp)
{
	unsigned int i;

	for (i = 0; i < priv->cm.rx_frags; i++) {
		struct page *page;
		u64 dma;

		if (buf->pages[i])
			continue;
		page = alloc_page(gfp);
		if (!page)
			return -ENOMEM;
		dma = ib_dma_map_page(priv->ibdev, page, 0, PAGE_SIZE,
				      DMA_FROM_DEVICE);
		if (ib_dma_mapping_error(priv->ibdev, dma)) {
			__free_page(page);
			return -EIO;
		}
		buf->pages[i] = page;
		buf->dma[i] = dma;
	}
	return 0;
}

void ipoib_cm_rx_buf_free(struct ipoib_priv *priv, struct ipoib_cm_rx_buf *buf)
{
	unsigned int i;

	for (i = 0; i < priv->cm.rx_frags; i++) {
		if (!buf->pages[i])
			continue;
		ib_dma_unmap_page(priv->ibdev, buf->dma[i], PAGE_SIZE,
				  DMA_FROM_DEVICE);
		__free_page(buf->pages[i]);
		buf->pages[i] = NULL;
	}
}

/* The receive work request of a filled buffer; @sge has rx_frags slots. */
void ipoib_cm_rx_wr(struct ipoib_priv *priv, struct ipoib_cm_rx_buf *buf,
		    struct ib_recv_wr *wr, struct ib_sge *sge)
{
	unsigned int i;

	for (i = 0; i < priv->cm.rx_frags; i++) {
		sge[i].addr = buf->dma[i];
		sge[i].length = PAGE_SIZE;
		sge[i].lkey = priv->pd->local_dma_lkey;
	}
	wr->next = NULL;
	wr->wr_cqe = &buf->cqe;
	wr->sg_list = sge;
	wr->num_sge = priv->cm.rx_frags;
}

/*
 * Build an skb from a completed buffer: headers copied, the rest of the
 * data handed over as page fragments, each replaced in the buffer.  On
 * failure the buffer is left whole and NULL returned.
 */
static struct sk_buff *ipoib_cm_rx_skb(struct ipoib_priv *priv,
				       struct ipoib_cm_rx_buf *buf, u32 len)
{
	struct page *fresh[IPOIB_CM_MAX_FRAGS];
	u64 fresh_dma[IPOIB_CM_MAX_FRAGS];
	unsigned int hlen = min_t(u32, len, IPOIB_CM_COPYBREAK);
	unsigned int nfrags, i, off;
	struct sk_buff *skb;

	skb = napi_alloc_skb(&priv->cm.napi, IPOIB_PSEUDO_LEN + hlen);
	if (!skb)
		return NULL;
	skb_reserve(skb, IPOIB_PSEUDO_LEN);

	ib_dma_sync_single_for_cpu(priv->ibdev, buf->dma[0], hlen,
				   DMA_FROM_DEVICE);
	skb_put_data(skb, page_address(buf->pages[0]), hlen);
	ib_dma_sync_single_for_device(priv->ibdev, buf->dma[0], hlen,
				      DMA_FROM_DEVICE);
	if (len == hlen)
		return skb;

	/* Pages with data beyond the copy go to the skb: replace them. */
	nfrags = DIV_ROUND_UP(len, PAGE_SIZE);
	for (i = 0; i < nfrags; i++) {
		fresh[i] = alloc_page(GFP_ATOMIC);
		if (fresh[i])
			fresh_dma[i] = ib_dma_map_page(priv->ibdev, fresh[i], 0,
						       PAGE_SIZE,
						       DMA_FROM_DEVICE);
		if (!fresh[i] ||
		    ib_dma_mapping_error(priv->ibdev, fresh_dma[i])) {
			if (fresh[i])
				__free_page(fresh[i]);
			while (i--) {
				ib_dma_unmap_page(priv->ibdev, fresh_dma[i],
						  PAGE_SIZE, DMA_FROM_DEVICE);
				__free_page(fresh[i]);
			}
			dev_kfree_skb_any(skb);
			return NULL;
		}
	}
	for (i = 0, off = hlen; i < nfrags; i++, off = 0) {
		unsigned int end = min_t(u32, len, (i + 1) * PAGE_SIZE);
		unsigned int size = end - i * PAGE_SIZE - off;

		ib_dma_unmap_page(priv->ibdev, buf->dma[i], PAGE_SIZE,
				  DMA_FROM_DEVICE);
		skb_add_rx_frag(skb, skb_shinfo(skb)->nr_frags, buf->pages[i],
				off, size, PAGE_SIZE);
		buf->pages[i] = fresh[i];
		buf->dma[i] = fresh_dma[i];
	}
	return skb;
}

/* A packet received on a connection: to the stack, or dropped. */
static void ipoib_cm_rx_deliver(struct ipoib_priv *priv,
				struct ipoib_cm_conn *conn,
				struct sk_buff *skb)
{
	__be16 proto;

	if (unlikely(skb->len < IPOIB_ENCAP_LEN)) {
		ipoib_count_drop(priv, IPOIB_DROP_TRUNCATED);
		dev_kfree_skb_any(skb);
		return;
	}
	proto = *(__be16 *)skb->data;
	if (unlikely(!ipoib_proto_supported(proto))) {
		ipoib_count_drop(priv, IPOIB_DROP_ETHERTYPE);
		dev_kfree_skb_any(skb);
		return;
	}

	conn->rx_packets++;
	conn->rx_bytes += skb->len - IPOIB_ENCAP_LEN;
	WRITE_ONCE(conn->last_used, jiffies);
	ipoib_cm_count(priv, IPOIB_CM_ST_RX_PACKETS, 1);
	ipoib_cm_count(priv, IPOIB_CM_ST_RX_BYTES, skb->len - IPOIB_ENCAP_LEN);

	/* The sender's link address in front, as on the UD path. */
	memcpy(skb_push(skb, IPOIB_PSEUDO_LEN), conn->addr, IPOIB_HWADDR_LEN);
	skb_reset_mac_header(skb);
	skb_pull(skb, IPOIB_HARD_LEN);
	skb->protocol = proto;
	skb->pkt_type = PACKET_HOST;
	skb->dev = priv->netdev;
	skb_checksum_none_assert(skb);
	napi_gro_receive(&priv->cm.napi, skb);
}

/*
 * Data on a QP still in RTR: the RTU is late or lost, but the peer is
 * sending, so the connection is established.  The connection's event task
 * tells the CM (ib_cm_notify() is for process context), which answers
 * with IB_CM_USER_ESTABLISHED; ipoib_cm_establish() then moves the QP to
 * RTS and sends what waited.
 */
static void ipoib_cm_rx_in_rtr(struct ipoib_priv *priv,
			       struct ipoib_cm_conn *conn)
{
	bool notify = false;

	spin_lock(&priv->cm.lock);
	if (conn->state == IPOIB_CM_REP_SENT && !conn->est_notified) {
		conn->est_notified = true;
		notify = true;
	}
	spin_unlock(&priv->cm.lock);
	if (notify) {
		set_bit(IPOIB_CM_QP_COMM_EST, &conn->qp_events);
		queue_work(priv->cm.conn_wq, &conn->event_work);
	}
}

void ipoib_cm_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ipoib_priv *priv = cq->cq_context;
	const struct ipoib_cm_rx_ops *ops = priv->cm.ops;
	struct ipoib_cm_rx_buf *buf = container_of(wc->wr_cqe,
						   struct ipoib_cm_rx_buf, cqe);
	struct ipoib_cm_conn *conn;
	struct sk_buff *skb;

	conn = ops->conn_of(priv, buf, wc);
	if (unlikely(wc->status != IB_WC_SUCCESS)) {
		if (wc->status != IB_WC_WR_FLUSH_ERR) {
			netdev_dbg(priv->netdev, "RC receive failed: %s\n",
				   ib_wc_status_msg(wc->status));
			ipoib_count_drop(priv, IPOIB_DROP_RX_ERROR);
			if (conn)
				ipoib_cm_event(conn, IPOIB_CM_EV_ERROR);
		}
		ops->repost(priv, conn, buf, false);
		wake_up(&priv->cm.drain_wait);
		return;
	}
	if (unlikely(!conn)) {
		/* The QP was destroyed before we saw this completion. */
		ipoib_cm_count(priv, IPOIB_CM_ST_RX_NO_CONN, 1);
		ops->repost(priv, NULL, buf, false);
		return;
	}

	skb = ipoib_cm_rx_skb(priv, buf, wc->byte_len);
	ops->repost(priv, conn, buf, true);
	if (unlikely(!skb)) {
		ipoib_count_drop(priv, IPOIB_DROP_NO_MEM);
		return;
	}
	if (unlikely(READ_ONCE(conn->state) == IPOIB_CM_REP_SENT))
		ipoib_cm_rx_in_rtr(priv, conn);
	ipoib_cm_rx_deliver(priv, conn, skb);
}

/* The CM NAPI: RC send completions, then receives. */
int ipoib_cm_napi_poll(struct napi_struct *napi, int budget)
{
	struct ipoib_priv *priv = container_of(napi, struct ipoib_priv,
					       cm.napi);
	struct ib_wc *wc = priv->cm.wc;
	int n, i, done = 0;

	ipoib_cm_poll_tx(priv);
	while (done < budget) {
		n = ib_poll_cq(priv->cm.recv_cq,
			       min_t(int, ARRAY_SIZE(priv->cm.wc),
				     budget - done), wc);
		if (n <= 0) {
			/* The CQ is empty: a busy spell ends. */
			priv->cm.rx_spell++;
			break;
		}
		for (i = 0; i < n; i++)
			wc[i].wr_cqe->done(priv->cm.recv_cq, &wc[i]);
		done += n;
	}
	if (done < budget) {
		if (napi_complete_done(napi, done) &&
		    ib_req_notify_cq(priv->cm.recv_cq, IB_CQ_NEXT_COMP |
				     IB_CQ_REPORT_MISSED_EVENTS) > 0)
			napi_schedule(napi);
	}
	return done;
}
