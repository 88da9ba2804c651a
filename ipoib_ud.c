// SPDX-License-Identifier: GPL-2.0
/*
 * The UD transport: the interface's UD QP, its completion queues, NAPI,
 * the receive ring and the send ring (RFC 4391 datagram mode).
 *
 * The QP lives as long as the interface, so its QPN (part of our link
 * address) is stable across ifdown/ifup.  Starting moves it RESET -> RTS
 * and posts the receive ring; stopping moves it to ERR, lets NAPI consume
 * every flushed work request, and returns it to RESET.  A QP that the
 * provider puts in ERR by itself (rxe does so when a UD send fails) is
 * restarted the same way without taking the interface down.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/error-injection.h>
#include <linux/etherdevice.h>
#include <linux/icmpv6.h>
#include <linux/ipv6.h>
#include <net/icmp.h>
#include <net/ip.h>
#include <net/ipv6.h>

#include "ipoib.h"
#include "ipoib_compat.h"

#define IPOIB_WC_BATCH		16
#define IPOIB_DRAIN_TIMEOUT	(5 * HZ)

static unsigned int ipoib_rx_buf_size(struct ipoib_priv *priv)
{
	return IPOIB_GRH_LEN + ib_mtu_enum_to_int(priv->max_ib_mtu);
}

static void ipoib_ud_cq_event(struct ib_cq *cq, void *ctx)
{
	struct ipoib_priv *priv = ctx;

	napi_schedule(&priv->napi);
}

static void ipoib_ud_qp_event(struct ib_event *event, void *ctx)
{
	struct ipoib_priv *priv = ctx;

	netdev_warn(priv->netdev, "UD QP event %s; restarting the QP\n",
		    ib_event_msg(event->event));
	queue_work(priv->wq, &priv->restart_work);
}

/*
 * A work request completed in error, or flushed while the interface is
 * not stopping the QP: the provider may have moved the QP to ERR itself.
 * rxe does when the network stack refuses one of its packets, and then
 * reports every work request, the refused one included, as flushed, with
 * no QP event.  The restart task looks at the QP's state first.
 */
static void ipoib_ud_check_qp(struct ipoib_priv *priv)
{
	if (!test_bit(IPOIB_FLAG_STOPPING, &priv->flags))
		queue_work(priv->wq, &priv->restart_work);
}

static int ipoib_ud_post_recv(struct ipoib_priv *priv, struct ipoib_rx_buf *buf)
{
	struct ib_sge sge = {
		.addr	= buf->dma,
		.length	= ipoib_rx_buf_size(priv),
		.lkey	= priv->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = {
		.wr_cqe		= &buf->cqe,
		.sg_list	= &sge,
		.num_sge	= 1,
	};
	int ret;

	ret = ib_post_recv(priv->qp, &wr, NULL);
	if (!ret)
		priv->rx_posted++;
	return ret;
}

static struct sk_buff *ipoib_ud_alloc_rx(struct ipoib_priv *priv, u64 *dma,
					 bool in_napi)
{
	unsigned int size = ipoib_rx_buf_size(priv);
	struct sk_buff *skb;

	skb = in_napi ? napi_alloc_skb(&priv->napi, size) :
			netdev_alloc_skb(priv->netdev, size);
	if (!skb)
		return NULL;
	*dma = ib_dma_map_single(priv->ibdev, skb->data, size,
				 DMA_FROM_DEVICE);
	if (ib_dma_mapping_error(priv->ibdev, *dma)) {
		dev_kfree_skb_any(skb);
		return NULL;
	}
	return skb;
}

static void ipoib_ud_free_rx(struct ipoib_priv *priv, struct ipoib_rx_buf *buf)
{
	if (!buf->skb)
		return;
	ib_dma_unmap_single(priv->ibdev, buf->dma, ipoib_rx_buf_size(priv),
			    DMA_FROM_DEVICE);
	dev_kfree_skb_any(buf->skb);
	buf->skb = NULL;
}

void ipoib_tx_unmap(struct ipoib_priv *priv, struct ipoib_tx_buf *buf)
{
	struct sk_buff *skb = buf->skb;
	unsigned int i;

	ib_dma_unmap_single(priv->ibdev, buf->dma[0], skb_headlen(skb),
			    DMA_TO_DEVICE);
	for (i = 1; i < buf->nr_dma; i++)
		ib_dma_unmap_page(priv->ibdev, buf->dma[i],
				  skb_frag_size(&skb_shinfo(skb)->frags[i - 1]),
				  DMA_TO_DEVICE);
}

static void ipoib_ud_free_tx(struct ipoib_priv *priv, struct ipoib_tx_buf *buf)
{
	ipoib_tx_unmap(priv, buf);
	dev_kfree_skb_any(buf->skb);
	buf->skb = NULL;
	ipoib_ah_put(buf->ah);
	buf->ah = NULL;
}

static u8 ipoib_ud_pkt_type(struct ipoib_priv *priv,
			    const struct ipoib_rx_frame *frame)
{
	if (!frame->has_grh || frame->dgid.raw[0] != 0xff)
		return PACKET_HOST;
	if (ipoib_mcast_is_broadcast(priv, &frame->dgid))
		return PACKET_BROADCAST;
	return PACKET_MULTICAST;
}

/* Hand a received frame to the stack, or drop and count it. */
static void ipoib_ud_deliver(struct ipoib_priv *priv, struct sk_buff *skb,
			     struct ib_wc *wc)
{
	struct net_device *dev = priv->netdev;
	enum rdma_network_type net_type;
	struct ipoib_rx_frame frame;
	enum ipoib_drop why;

	if (wc->wc_flags & IB_WC_WITH_NETWORK_HDR_TYPE)
		net_type = wc->network_hdr_type;
	else
		net_type = priv->roce ? RDMA_NETWORK_IPV6 : RDMA_NETWORK_IB;

	skb_put(skb, wc->byte_len);
	if (ipoib_frame_parse(skb->data, wc->byte_len, wc->wc_flags & IB_WC_GRH,
			      net_type, &frame, &why)) {
		ipoib_count_drop(priv, why);
		dev_kfree_skb_any(skb);
		return;
	}

	/* Our own multicast comes back to us: the GID tells, not the LID. */
	if (frame.has_grh && wc->src_qp == priv->qp->qp_num &&
	    !memcmp(frame.sgid.raw, priv->gid.raw, sizeof(frame.sgid.raw))) {
		ipoib_count_drop(priv, IPOIB_DROP_OWN);
		dev_kfree_skb_any(skb);
		return;
	}

	skb->pkt_type = ipoib_ud_pkt_type(priv, &frame);

	/*
	 * Replace the network header with the pseudo header: the sender's
	 * link address, as packet sockets and header_ops->parse expect.
	 */
	skb_pull(skb, IPOIB_GRH_LEN - IPOIB_PSEUDO_LEN);
	ipoib_hwaddr_build(skb->data, 0, wc->src_qp, &frame.sgid);
	skb_reset_mac_header(skb);
	skb_pull(skb, IPOIB_HARD_LEN);
	skb->protocol = frame.proto;
	skb->dev = dev;
	skb_checksum_none_assert(skb);

	u64_stats_update_begin(&priv->stats.syncp);
	u64_stats_inc(&priv->stats.rx_packets);
	u64_stats_add(&priv->stats.rx_bytes, skb->len);
	if (skb->pkt_type != PACKET_HOST)
		u64_stats_inc(&priv->stats.multicast);
	u64_stats_update_end(&priv->stats.syncp);

	napi_gro_receive(&priv->napi, skb);
}

static void ipoib_ud_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ipoib_priv *priv = cq->cq_context;
	struct ipoib_rx_buf *buf = container_of(wc->wr_cqe,
						struct ipoib_rx_buf, cqe);
	struct sk_buff *skb = buf->skb, *fresh;
	u64 dma = buf->dma, fresh_dma;

	priv->rx_posted--;
	if (unlikely(wc->status != IB_WC_SUCCESS ||
		     test_bit(IPOIB_FLAG_STOPPING, &priv->flags))) {
		if (wc->status != IB_WC_SUCCESS &&
		    wc->status != IB_WC_WR_FLUSH_ERR) {
			netdev_dbg(priv->netdev, "UD receive failed: %s\n",
				   ib_wc_status_msg(wc->status));
			ipoib_count_drop(priv, IPOIB_DROP_RX_ERROR);
		}
		if (wc->status != IB_WC_SUCCESS)
			ipoib_ud_check_qp(priv);
		ipoib_ud_free_rx(priv, buf);
		wake_up(&priv->drain_wait);
		return;
	}

	/* Replace the buffer first; without memory, drop and reuse it. */
	fresh = ipoib_ud_alloc_rx(priv, &fresh_dma, true);
	if (unlikely(!fresh)) {
		ipoib_count_drop(priv, IPOIB_DROP_NO_MEM);
		if (ipoib_ud_post_recv(priv, buf))
			ipoib_ud_free_rx(priv, buf);
		return;
	}
	ib_dma_unmap_single(priv->ibdev, dma, ipoib_rx_buf_size(priv),
			    DMA_FROM_DEVICE);
	buf->skb = fresh;
	buf->dma = fresh_dma;
	if (unlikely(ipoib_ud_post_recv(priv, buf))) {
		netdev_warn(priv->netdev, "cannot repost a UD receive\n");
		ipoib_ud_free_rx(priv, buf);
	}

	ipoib_ud_deliver(priv, skb, wc);
}

static void ipoib_ud_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ipoib_priv *priv = cq->cq_context;
	struct ipoib_tx_buf *buf = container_of(wc->wr_cqe,
						struct ipoib_tx_buf, cqe);
	struct net_device *dev = priv->netdev;

	if (likely(wc->status == IB_WC_SUCCESS)) {
		u64_stats_update_begin(&priv->stats.syncp);
		u64_stats_inc(&priv->stats.tx_packets);
		u64_stats_add(&priv->stats.tx_bytes, buf->skb->len);
		u64_stats_update_end(&priv->stats.syncp);
	} else {
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			netdev_dbg(dev, "UD send failed: %s\n",
				   ib_wc_status_msg(wc->status));
		ipoib_count_drop(priv, IPOIB_DROP_TX_ERROR);
		ipoib_ud_check_qp(priv);
	}
	ipoib_ud_free_tx(priv, buf);

	/* Publish the freed slot (read by ipoib_ud_send() and the drain). */
	smp_store_release(&priv->tx_tail, priv->tx_tail + 1);
	/* Then look at the queue state: pairs with ipoib_ud_send(). */
	smp_mb();
	if (unlikely(netif_queue_stopped(dev)) &&
	    test_bit(IPOIB_FLAG_UD_UP, &priv->flags) &&
	    priv->tx_head - priv->tx_tail <= ipoib_sendq_size / 2)
		netif_wake_queue(dev);
	if (unlikely(test_bit(IPOIB_FLAG_STOPPING, &priv->flags)))
		wake_up(&priv->drain_wait);
}

/*
 * Map @skb for a send from ring slot @buf.  On failure nothing stays
 * mapped and the slot is left empty (buf->skb NULL): the caller still
 * owns @skb, and whoever walks the ring later finds nothing to free.
 */
int ipoib_tx_map(struct ipoib_priv *priv, struct ipoib_tx_buf *buf,
		 struct sk_buff *skb, struct ib_sge *sge)
{
	struct ib_device *ibdev = priv->ibdev;
	unsigned int i;

	buf->skb = skb;
	buf->nr_dma = 0;
	buf->dma[0] = ib_dma_map_single(ibdev, skb->data, skb_headlen(skb),
					DMA_TO_DEVICE);
	if (ib_dma_mapping_error(ibdev, buf->dma[0])) {
		buf->skb = NULL;
		return -EIO;
	}
	sge[0].addr = buf->dma[0];
	sge[0].length = skb_headlen(skb);
	sge[0].lkey = priv->pd->local_dma_lkey;
	buf->nr_dma = 1;

	for (i = 0; i < skb_shinfo(skb)->nr_frags; i++) {
		const skb_frag_t *frag = &skb_shinfo(skb)->frags[i];
		u64 addr = ib_dma_map_page(ibdev, skb_frag_page(frag),
					   skb_frag_off(frag),
					   skb_frag_size(frag), DMA_TO_DEVICE);

		if (ib_dma_mapping_error(ibdev, addr)) {
			ipoib_tx_unmap(priv, buf);
			buf->skb = NULL;
			return -EIO;
		}
		buf->dma[buf->nr_dma++] = addr;
		sge[i + 1].addr = addr;
		sge[i + 1].length = skb_frag_size(frag);
		sge[i + 1].lkey = priv->pd->local_dma_lkey;
	}
	return 0;
}

/* A provider with virtual DMA (rxe) never fails a mapping: tests do. */
ALLOW_ERROR_INJECTION(ipoib_tx_map, ERRNO);

/**
 * ipoib_too_big - refuse a packet larger than the path can carry
 * @priv: the interface
 * @skb: starts with the encapsulation header; consumed
 * @mtu: the IP MTU the packet must fit
 *
 * The sender learns the MTU the IP way: the route's path MTU is lowered
 * and a local ICMP "fragmentation needed" (IPv4) or "packet too big"
 * (IPv6) reaches the socket.  Counted as a drop.
 */
void ipoib_too_big(struct ipoib_priv *priv, struct sk_buff *skb,
		   unsigned int mtu)
{
	ipoib_count_drop(priv, IPOIB_DROP_TOO_BIG);
	switch (skb->protocol) {
	case htons(ETH_P_IP):
		skb_pull(skb, IPOIB_ENCAP_LEN);
		skb_dst_update_pmtu_no_confirm(skb, mtu);
		icmp_ndo_send(skb, ICMP_DEST_UNREACH, ICMP_FRAG_NEEDED,
			      htonl(mtu));
		break;
	case htons(ETH_P_IPV6):
		skb_pull(skb, IPOIB_ENCAP_LEN);
		skb_dst_update_pmtu_no_confirm(skb, mtu);
		icmpv6_ndo_send(skb, ICMPV6_PKT_TOOBIG, 0, mtu);
		break;
	default:
		break;
	}
	dev_kfree_skb_any(skb);
}

/**
 * ipoib_ud_send - post one packet on the UD QP
 * @priv: the interface
 * @skb: starts with the encapsulation header
 * @ah: the address handle; the send takes its own reference
 * @dqpn: the destination QPN (IPOIB_MCAST_QPN for a group)
 *
 * Called with the netdev's transmit lock held.  Consumes @skb: on failure
 * it is dropped and counted.  Returns 0 or a negative errno.
 */
int ipoib_ud_send(struct ipoib_priv *priv, struct sk_buff *skb,
		  struct ipoib_ah *ah, u32 dqpn)
{
	struct net_device *dev = priv->netdev;
	struct ib_sge sge[MAX_SKB_FRAGS + 1];
	struct ipoib_tx_buf *buf;
	struct ib_ud_wr wr = {};
	int ret;

	if (unlikely(!test_bit(IPOIB_FLAG_UD_UP, &priv->flags))) {
		ipoib_count_drop(priv, IPOIB_DROP_NOT_READY);
		goto drop;
	}
	if (unlikely(skb->len > priv->ud_mtu + IPOIB_ENCAP_LEN)) {
		/* A connected-mode MTU met a peer reached over UD. */
		ipoib_too_big(priv, skb, priv->ud_mtu);
		return -EMSGSIZE;
	}
	if (skb_shinfo(skb)->nr_frags >= priv->max_send_sge &&
	    skb_linearize(skb)) {
		ipoib_count_drop(priv, IPOIB_DROP_TX_NO_MEM);
		goto drop;
	}
	if (unlikely(priv->tx_head - priv->tx_tail >= ipoib_sendq_size)) {
		/* The queue is stopped before this can happen. */
		netif_stop_queue(dev);
		ipoib_count_drop(priv, IPOIB_DROP_QUEUE_FULL);
		goto drop;
	}

	buf = &priv->tx_ring[priv->tx_head & (ipoib_sendq_size - 1)];
	if (ipoib_tx_map(priv, buf, skb, sge)) {
		ipoib_count_drop(priv, IPOIB_DROP_TX_NO_MEM);
		goto drop;
	}

	wr.wr.wr_cqe = &buf->cqe;
	wr.wr.sg_list = sge;
	wr.wr.num_sge = buf->nr_dma;
	wr.wr.opcode = IB_WR_SEND;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	wr.ah = ah->ah;
	wr.remote_qpn = dqpn;
	wr.remote_qkey = priv->qkey;

	kref_get(&ah->ref);
	buf->ah = ah;
	skb_orphan(skb);
	ret = ib_post_send(priv->qp, &wr.wr, NULL);
	if (unlikely(ret)) {
		netdev_dbg(dev, "UD post_send failed: %d\n", ret);
		ipoib_tx_unmap(priv, buf);
		ipoib_ah_put(ah);
		buf->ah = NULL;
		buf->skb = NULL;
		ipoib_count_drop(priv, IPOIB_DROP_TX_ERROR);
		goto drop;
	}

	priv->tx_head++;
	if (priv->tx_head - READ_ONCE(priv->tx_tail) >= ipoib_sendq_size) {
		netif_stop_queue(dev);
		/*
		 * Stop before re-reading the tail: a completion that freed a
		 * slot meanwhile either sees the queue stopped and wakes it,
		 * or we see its slot here.  Pairs with ipoib_ud_send_done().
		 */
		smp_mb();
		/* Pairs with the release in ipoib_ud_send_done(). */
		if (priv->tx_head - smp_load_acquire(&priv->tx_tail) <
		    ipoib_sendq_size)
			netif_start_queue(dev);
	}
	return 0;

drop:
	dev_kfree_skb_any(skb);
	return -EIO;
}

static int ipoib_poll_cq(struct ipoib_priv *priv, struct ib_cq *cq, int max)
{
	int n, i, done = 0;

	while (done < max) {
		n = ib_poll_cq(cq, min_t(int, ARRAY_SIZE(priv->wc), max - done),
			       priv->wc);
		if (n <= 0)
			break;
		for (i = 0; i < n; i++)
			priv->wc[i].wr_cqe->done(cq, &priv->wc[i]);
		done += n;
	}
	return done;
}

/* One NAPI context serves both CQs: send completions first, then receives. */
static int ipoib_napi_poll(struct napi_struct *napi, int budget)
{
	struct ipoib_priv *priv = container_of(napi, struct ipoib_priv, napi);
	int done;

	ipoib_poll_cq(priv, priv->send_cq, ipoib_sendq_size);
	done = ipoib_poll_cq(priv, priv->recv_cq, budget);

	if (done < budget && napi_complete_done(napi, done)) {
		int flags = IB_CQ_NEXT_COMP | IB_CQ_REPORT_MISSED_EVENTS;

		if (ib_req_notify_cq(priv->recv_cq, flags) > 0 ||
		    ib_req_notify_cq(priv->send_cq, flags) > 0)
			napi_schedule(napi);
	}
	return done;
}

static int ipoib_ud_modify(struct ipoib_priv *priv, enum ib_qp_state state)
{
	struct ib_qp_attr attr = { .qp_state = state };
	int mask = IB_QP_STATE;

	switch (state) {
	case IB_QPS_INIT:
		attr.pkey_index = priv->pkey_index;
		attr.port_num = priv->port_num;
		attr.qkey = priv->qkey;
		mask |= IB_QP_PKEY_INDEX | IB_QP_PORT | IB_QP_QKEY;
		break;
	case IB_QPS_RTS:
		attr.sq_psn = 0;
		mask |= IB_QP_SQ_PSN;
		break;
	default:
		break;
	}
	return ib_modify_qp(priv->qp, &attr, mask);
}

/**
 * ipoib_ud_init - create the interface's PD, CQs, UD QP and rings
 * @priv: the interface, with port, P_Key and MTU known
 */
int ipoib_ud_init(struct ipoib_priv *priv)
{
	struct ib_cq_init_attr cq_attr = {};
	struct ib_qp_init_attr qp_attr = {};
	unsigned int i;
	int ret;

	priv->rx_ring = kcalloc(ipoib_recvq_size, sizeof(*priv->rx_ring),
				GFP_KERNEL);
	priv->tx_ring = kcalloc(ipoib_sendq_size, sizeof(*priv->tx_ring),
				GFP_KERNEL);
	if (!priv->rx_ring || !priv->tx_ring) {
		ret = -ENOMEM;
		goto err_rings;
	}
	for (i = 0; i < ipoib_recvq_size; i++)
		priv->rx_ring[i].cqe.done = ipoib_ud_recv_done;
	for (i = 0; i < ipoib_sendq_size; i++)
		priv->tx_ring[i].cqe.done = ipoib_ud_send_done;

	priv->pd = ib_alloc_pd(priv->ibdev, 0);
	if (IS_ERR(priv->pd)) {
		ret = PTR_ERR(priv->pd);
		goto err_rings;
	}

	cq_attr.cqe = ipoib_recvq_size;
	priv->recv_cq = ib_create_cq(priv->ibdev, ipoib_ud_cq_event, NULL,
				     priv, &cq_attr);
	if (IS_ERR(priv->recv_cq)) {
		ret = PTR_ERR(priv->recv_cq);
		goto err_pd;
	}
	cq_attr.cqe = ipoib_sendq_size;
	priv->send_cq = ib_create_cq(priv->ibdev, ipoib_ud_cq_event, NULL,
				     priv, &cq_attr);
	if (IS_ERR(priv->send_cq)) {
		ret = PTR_ERR(priv->send_cq);
		goto err_recv_cq;
	}

	qp_attr.event_handler = ipoib_ud_qp_event;
	qp_attr.qp_context = priv;
	qp_attr.send_cq = priv->send_cq;
	qp_attr.recv_cq = priv->recv_cq;
	qp_attr.cap.max_send_wr = ipoib_sendq_size;
	qp_attr.cap.max_recv_wr = ipoib_recvq_size;
	qp_attr.cap.max_send_sge = min_t(u32, priv->ibdev->attrs.max_send_sge,
					 MAX_SKB_FRAGS + 1);
	qp_attr.cap.max_recv_sge = 1;
	qp_attr.sq_sig_type = IB_SIGNAL_ALL_WR;
	qp_attr.qp_type = IB_QPT_UD;
	priv->qp = ib_create_qp(priv->pd, &qp_attr);
	if (IS_ERR(priv->qp)) {
		ret = PTR_ERR(priv->qp);
		goto err_send_cq;
	}

	priv->max_send_sge = qp_attr.cap.max_send_sge;
	netif_napi_add(priv->netdev, &priv->napi, ipoib_napi_poll);
	return 0;

err_send_cq:
	ib_destroy_cq(priv->send_cq);
err_recv_cq:
	ib_destroy_cq(priv->recv_cq);
err_pd:
	ib_dealloc_pd(priv->pd);
err_rings:
	kfree(priv->tx_ring);
	kfree(priv->rx_ring);
	priv->qp = NULL;
	return ret;
}

void ipoib_ud_cleanup(struct ipoib_priv *priv)
{
	netif_napi_del(&priv->napi);
	ib_destroy_qp(priv->qp);
	ib_destroy_cq(priv->send_cq);
	ib_destroy_cq(priv->recv_cq);
	ib_dealloc_pd(priv->pd);
	kfree(priv->tx_ring);
	kfree(priv->rx_ring);
	priv->qp = NULL;
}

/* Free what the QP no longer owns: it is in RESET or destroyed. */
static void ipoib_ud_free_rings(struct ipoib_priv *priv)
{
	unsigned int i;

	for (i = 0; i < ipoib_recvq_size; i++)
		ipoib_ud_free_rx(priv, &priv->rx_ring[i]);
	for (; priv->tx_tail != priv->tx_head; priv->tx_tail++) {
		struct ipoib_tx_buf *buf;

		buf = &priv->tx_ring[priv->tx_tail & (ipoib_sendq_size - 1)];
		if (buf->skb)
			ipoib_ud_free_tx(priv, buf);
	}
	priv->rx_posted = 0;
	priv->tx_head = 0;
	priv->tx_tail = 0;
}

/**
 * ipoib_ud_start - bring the UD QP to RTS and post the receive ring
 * @priv: the interface; called with transport_lock held
 */
int ipoib_ud_start(struct ipoib_priv *priv)
{
	unsigned int i;
	int ret;

	lockdep_assert_held(&priv->transport_lock);
	if (test_bit(IPOIB_FLAG_UD_UP, &priv->flags))
		return 0;

	ret = ipoib_ud_modify(priv, IB_QPS_RESET);
	if (!ret)
		ret = ipoib_ud_modify(priv, IB_QPS_INIT);
	if (!ret)
		ret = ipoib_ud_modify(priv, IB_QPS_RTR);
	if (!ret)
		ret = ipoib_ud_modify(priv, IB_QPS_RTS);
	if (ret) {
		netdev_err(priv->netdev, "cannot bring the UD QP to RTS: %d\n",
			   ret);
		return ret;
	}

	clear_bit(IPOIB_FLAG_STOPPING, &priv->flags);
	for (i = 0; i < ipoib_recvq_size; i++) {
		struct ipoib_rx_buf *buf = &priv->rx_ring[i];

		buf->skb = ipoib_ud_alloc_rx(priv, &buf->dma, false);
		if (!buf->skb) {
			ret = -ENOMEM;
			break;
		}
		ret = ipoib_ud_post_recv(priv, buf);
		if (ret)
			break;
	}
	if (ret) {
		netdev_err(priv->netdev, "cannot post UD receives: %d\n", ret);
		ipoib_ud_modify(priv, IB_QPS_RESET);
		ipoib_ud_free_rings(priv);
		return ret;
	}

	napi_enable(&priv->napi);
	set_bit(IPOIB_FLAG_UD_UP, &priv->flags);
	ib_req_notify_cq(priv->recv_cq, IB_CQ_NEXT_COMP);
	ib_req_notify_cq(priv->send_cq, IB_CQ_NEXT_COMP);
	/* Completions may have arrived before the CQs were armed. */
	napi_schedule(&priv->napi);
	netif_wake_queue(priv->netdev);
	return 0;
}

static bool ipoib_ud_drained(struct ipoib_priv *priv)
{
	return !READ_ONCE(priv->rx_posted) &&
	       /* Pairs with the release in ipoib_ud_send_done(). */
	       READ_ONCE(priv->tx_head) == smp_load_acquire(&priv->tx_tail);
}

/**
 * ipoib_ud_stop - flush the UD QP and return it to RESET
 * @priv: the interface; called with transport_lock held
 *
 * NAPI consumes the flushed work requests; whatever has not completed
 * after IPOIB_DRAIN_TIMEOUT is freed once the QP is back in RESET.
 */
void ipoib_ud_stop(struct ipoib_priv *priv)
{
	lockdep_assert_held(&priv->transport_lock);
	if (!test_and_clear_bit(IPOIB_FLAG_UD_UP, &priv->flags))
		return;

	netif_tx_disable(priv->netdev);
	set_bit(IPOIB_FLAG_STOPPING, &priv->flags);
	if (ipoib_ud_modify(priv, IB_QPS_ERR))
		netdev_warn(priv->netdev, "cannot move the UD QP to ERR\n");
	napi_schedule(&priv->napi);
	if (!wait_event_timeout(priv->drain_wait, ipoib_ud_drained(priv),
				IPOIB_DRAIN_TIMEOUT))
		netdev_warn(priv->netdev,
			    "UD QP not drained in time: %u receives, %u sends left\n",
			    priv->rx_posted, priv->tx_head - priv->tx_tail);
	napi_disable(&priv->napi);
	ipoib_ud_modify(priv, IB_QPS_RESET);
	ipoib_ud_free_rings(priv);
}

/* The provider moved the QP to ERR (or reported a fatal event): restart. */
void ipoib_ud_restart_work(struct work_struct *work)
{
	struct ipoib_priv *priv = container_of(work, struct ipoib_priv,
					       restart_work);
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;

	mutex_lock(&priv->transport_lock);
	if (!test_bit(IPOIB_FLAG_UD_UP, &priv->flags))
		goto out;
	if (!ib_query_qp(priv->qp, &attr, IB_QP_STATE, &init) &&
	    attr.qp_state != IB_QPS_ERR && attr.qp_state != IB_QPS_SQE)
		goto out;

	netdev_info(priv->netdev, "UD QP in error: restarting it\n");
	ipoib_ud_stop(priv);
	if (ipoib_ud_start(priv))
		netdev_err(priv->netdev, "UD QP restart failed\n");
out:
	mutex_unlock(&priv->transport_lock);
}
