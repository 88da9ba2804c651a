// SPDX-License-Identifier: GPL-2.0
/*
 * Connected mode, the receiving side: REQs from peers (validation, the
 * crossing-REQ rule, admission, REP), the RTR -> RTS step on the RTU or on
 * the first receive, and RC receive completions for both backends.
 *
 * A receive buffer is a set of pages; a completed one becomes an skb whose
 * first bytes are copied into its linear part and whose other pages are
 * attached as fragments and replaced before the buffer is posted again.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/random.h>

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
		queue_work(priv->cm.wq, &conn->event_work);
	}
}

/*
 * The receive backend posts the rest of an accepted QP's receives once
 * the REP is out: the peer waits for the REP, not for them.  Teardown
 * cancels the task after the state says closing, so it is queued only
 * before that.
 */
static void ipoib_cm_fill_later(struct ipoib_cm_conn *conn)
{
	struct ipoib_priv *priv = conn->priv;

	spin_lock_bh(&priv->cm.lock);
	if (conn->state == IPOIB_CM_REP_SENT || conn->state == IPOIB_CM_LIVE)
		queue_work(priv->cm.wq, &conn->fill_work);
	spin_unlock_bh(&priv->cm.lock);
}

void ipoib_cm_fill_work(struct work_struct *work)
{
	struct ipoib_cm_conn *conn = container_of(work, struct ipoib_cm_conn,
						  fill_work);

	conn->priv->cm.ops->fill(conn);
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
		if (n <= 0)
			break;
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

/**
 * ipoib_cm_establish - a connection reached "established"
 * @conn: the connection (RTU, COMM_EST, or our REP handled)
 * @id: the CM id of the callback that reported it
 *
 * The passive QP goes from RTR to RTS only now; then the packets held on
 * the connection go out, in order, and its send CQ is armed.
 */
void ipoib_cm_establish(struct ipoib_cm_conn *conn, struct ib_cm_id *id)
{
	struct ipoib_priv *priv = conn->priv;
	struct ib_qp_attr attr = { .qp_state = IB_QPS_RTS };
	int mask, ret;

	if (!conn->active) {
		ret = WARN_ON_ONCE(!id) ? -EINVAL :
		      ib_cm_init_qp_attr(id, &attr, &mask);
		if (!ret)
			ret = ib_modify_qp(conn->qp, &attr, mask);
		if (ret) {
			netdev_warn(priv->netdev, "RC QP 0x%06x to RTS failed: %d\n",
				    conn->qp_num, ret);
			ipoib_cm_event(conn, IPOIB_CM_EV_ERROR);
			return;
		}
	}
	ipoib_cm_count(priv, conn->active ? IPOIB_CM_ST_ACTIVE_UP :
		       IPOIB_CM_ST_PASSIVE_UP, 1);
	conn->backoff = 0;
	ipoib_cm_tx_flush(conn);
}

/* Our REQ to the same peer is pending: RFC 4755 3.3 decides. */
static bool ipoib_cm_req_loses(struct ipoib_priv *priv,
			       struct ipoib_cm_conn *conn,
			       struct ipoib_cm_conn **mine)
{
	struct ipoib_cm_conn *ours;

	*mine = NULL;
	if (!ipoib_cm_bidirectional)
		return false;
	ours = ipoib_cm_lookup(priv, &conn->gid, conn->qpn, true);
	if (!ours || (ours->state != IPOIB_CM_NEW &&
		      ours->state != IPOIB_CM_REQ_SENT))
		return false;
	/* The smaller address accepts; flags do not take part. */
	if (ipoib_hwaddr_cmp(priv->netdev->dev_addr, conn->addr) > 0)
		return true;
	*mine = ours;
	return false;
}

/*
 * A REQ belongs to this interface only if it is for the interface's
 * partition: the low 15 bits of the P_Key name the partition, the top
 * bit is the sender's membership type, which may be limited (a full
 * member, as we are, talks to limited members).  The REQ's Service ID
 * names our UD QPN; a peer in another partition that dials it must not
 * get a connection across partitions.
 */
static bool ipoib_cm_req_pkey_ok(struct ipoib_priv *priv,
				 const struct ib_cm_req_event_param *req)
{
	u16 pkey = be16_to_cpu(req->primary_path->pkey);

	return (pkey & 0x7fff) == (priv->pkey & 0x7fff);
}

/*
 * The CM learns the PSN we expect only when the REP goes out, after RTR:
 * @psn is that PSN, given to the QP here and to the peer in the REP.
 */
static int ipoib_cm_rx_modify(struct ipoib_cm_conn *conn, struct ib_cm_id *id,
			      enum ib_qp_state state, u32 psn)
{
	struct ib_qp_attr attr = { .qp_state = state };
	int mask, ret;

	ret = ib_cm_init_qp_attr(id, &attr, &mask);
	if (ret)
		return ret;
	if (state == IB_QPS_RTR) {
		attr.rq_psn = psn;
		attr.min_rnr_timer = IPOIB_CM_MIN_RNR_TIMER;
	}
	return ib_modify_qp(conn->qp, &attr, mask);
}

static int ipoib_cm_send_rep(struct ipoib_cm_conn *conn, struct ib_cm_id *id,
			     u32 psn)
{
	struct ipoib_priv *priv = conn->priv;
	struct ib_cm_rep_param rep = {};
	u8 pdata[IPOIB_CM_PDATA_LEN];

	ipoib_cm_pdata_local(priv, pdata);
	rep.qp_num = conn->qp_num;
	rep.starting_psn = psn;
	rep.private_data = pdata;
	rep.private_data_len = sizeof(pdata);
	/* The peer's sends wait out a short receive shortfall here. */
	rep.rnr_retry_count = 7;
	rep.srq = priv->cm.ops == &ipoib_cm_srq_ops;
	return ib_send_cm_rep(id, &rep);
}

/**
 * ipoib_cm_req_handler - a peer asks for a connection
 * @id: the new CM id (its context is still the interface)
 * @ev: the REQ
 *
 * Malformed REQs, REQs over the no-SRQ cap and the losing half of
 * crossing REQs are rejected with a reason and our private data; the CM
 * then destroys @id.  Otherwise the connection and @id go into the table
 * together, under cm.lock and only while connected mode is not stopping,
 * before anything that can fail: from then on the reaper cleans up after
 * every failure, and owns @id unless we take it back (see conn->id).
 * Then: QP in RTR with receives posted, REP out; RTS comes with the RTU
 * or the first receive.
 */
int ipoib_cm_req_handler(struct ib_cm_id *id, const struct ib_cm_event *ev)
{
	struct ipoib_priv *priv = id->context;
	const struct ib_cm_req_event_param *req = &ev->param.req_rcvd;
	enum ib_cm_rej_reason reason = IB_CM_REJ_CONSUMER_DEFINED;
	struct ipoib_cm_conn *conn, *mine = NULL;
	u8 pdata[IPOIB_CM_PDATA_LEN];
	struct ipoib_cm_pdata pd;
	bool crossed, own_id;
	u32 psn;
	int ret;

	if (ev->event != IB_CM_REQ_RECEIVED)
		return 0;
	ipoib_cm_pdata_local(priv, pdata);

	ret = ipoib_cm_pdata_unpack(ev->private_data,
				    IB_CM_REQ_PRIVATE_DATA_SIZE, &pd);
	if (ret || req->qp_type != IB_QPT_RC) {
		net_warn_ratelimited("%s: malformed REQ from %pI6 rejected (%s)\n",
				     priv->netdev->name,
				     req->primary_path->dgid.raw,
				     ret == -ERANGE ? "receive MTU out of range" :
				     ret ? "private data too short" :
				     "not an RC QP");
		ipoib_cm_count(priv, IPOIB_CM_ST_BAD_REQ, 1);
		if (ret == -ERANGE)
			reason = IB_CM_REJ_INVALID_MTU;
		goto reject;
	}
	if (!ipoib_cm_req_pkey_ok(priv, req)) {
		net_info_ratelimited("%s: REQ from %pI6 for P_Key 0x%04x rejected: interface P_Key is 0x%04x\n",
				     priv->netdev->name,
				     req->primary_path->dgid.raw,
				     be16_to_cpu(req->primary_path->pkey),
				     priv->pkey);
		ipoib_cm_count(priv, IPOIB_CM_ST_BAD_PKEY, 1);
		reason = IB_CM_REJ_UNSUPPORTED;
		goto reject;
	}
	if (!READ_ONCE(priv->cm.running)) {
		reason = IB_CM_REJ_NO_RESOURCES;
		goto reject;
	}

	conn = ipoib_cm_conn_alloc(priv, &req->primary_path->dgid, pd.qpn,
				   false, GFP_KERNEL);
	if (!conn) {
		reason = IB_CM_REJ_NO_RESOURCES;
		goto reject;
	}
	conn->mtu = ipoib_cm_conn_mtu(priv->cm.rx_mtu, pd.rx_mtu);

	ret = priv->cm.ops->admit(conn);
	if (ret) {
		ipoib_cm_count(priv, IPOIB_CM_ST_NO_QP, 1);
		kfree(conn);
		reason = IB_CM_REJ_NO_QP;
		goto reject;
	}

	spin_lock_bh(&priv->cm.lock);
	if (priv->cm.stopping || ipoib_cm_req_loses(priv, conn, &mine)) {
		crossed = !priv->cm.stopping;
		spin_unlock_bh(&priv->cm.lock);
		if (crossed)
			ipoib_cm_count(priv, IPOIB_CM_ST_CROSSED, 1);
		else
			reason = IB_CM_REJ_NO_RESOURCES;
		priv->cm.ops->release(conn);
		kfree(conn);
		goto reject;
	}
	crossed = mine;		/* looked up again once our REP is out */
	ipoib_cm_conn_insert(conn);
	id->context = conn;
	id->cm_handler = ipoib_cm_handler;
	conn->id = id;
	spin_unlock_bh(&priv->cm.lock);

	/* The reaper cannot free @conn before we return: it needs @id. */
	ret = ipoib_cm_create_qp(conn);
	psn = get_random_u32() & 0xffffff;
	if (!ret)
		ret = ipoib_cm_rx_modify(conn, id, IB_QPS_INIT, psn);
	if (!ret)
		ret = priv->cm.ops->qp_ready(conn);
	if (!ret) {
		conn->rtr = true;	/* may take buffers from now on */
		ret = ipoib_cm_rx_modify(conn, id, IB_QPS_RTR, psn);
	}
	if (!ret)
		ret = ipoib_cm_send_rep(conn, id, psn);
	if (ret) {
		netdev_warn(priv->netdev, "cannot accept %pI6/0x%06x: %d\n",
			    conn->gid.raw, conn->qpn, ret);
		goto fail;
	}
	if (priv->cm.ops->fill)
		ipoib_cm_fill_later(conn);

	if (crossed) {
		/* We accepted theirs: our REQ will be refused. */
		spin_lock_bh(&priv->cm.lock);
		mine = ipoib_cm_lookup(priv, &conn->gid, conn->qpn, true);
		if (mine && (mine->state == IPOIB_CM_NEW ||
			     mine->state == IPOIB_CM_REQ_SENT)) {
			ipoib_cm_count(priv, IPOIB_CM_ST_CROSSED, 1);
			ipoib_cm_event_locked(mine, IPOIB_CM_EV_CROSSED);
		}
		spin_unlock_bh(&priv->cm.lock);
	}
	return 0;

fail:
	/*
	 * Take @id back unless the reaper has it already (it then waits in
	 * ib_destroy_cm_id() for us to return 0).  If we took it, the CM
	 * destroys it when we return non-zero, and nothing else will; @conn
	 * may be freed as soon as the reaper sees the error.
	 */
	spin_lock_bh(&priv->cm.lock);
	own_id = conn->id == id;
	if (own_id)
		conn->id = NULL;
	spin_unlock_bh(&priv->cm.lock);
	ib_send_cm_rej(id, IB_CM_REJ_CONSUMER_DEFINED, NULL, 0, pdata,
		       sizeof(pdata));
	ipoib_cm_count(priv, IPOIB_CM_ST_REQ_REJECTED, 1);
	ipoib_cm_event(conn, IPOIB_CM_EV_ERROR);
	return own_id ? -EINVAL : 0;

reject:
	ib_send_cm_rej(id, reason, NULL, 0, pdata, sizeof(pdata));
	ipoib_cm_count(priv, IPOIB_CM_ST_REQ_REJECTED, 1);
	return -EINVAL;
}
