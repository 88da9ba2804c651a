// SPDX-License-Identifier: GPL-2.0
/*
 * Connected mode, the RC send path: choosing a connection for a packet,
 * the per-connection send ring and its completions, and where the packets
 * of a connection go when it fails (UD) or yields to the peer's.  The
 * connection is opened in ipoib_cm_handshake.c.
 *
 * Packets for a connection that is not in RTS yet are held on it, in
 * order, and sent when it gets there; its send CQ is neither armed nor
 * polled until then.  A connection whose ring is full queues on its own,
 * so one slow peer never stops the interface's queue.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/slab.h>

#include "ipoib.h"
#include "ipoib_cm_priv.h"
#include "ipoib_compat.h"

/* Packets waiting on one connection: held before RTS, or ring full. */
#define IPOIB_CM_QUEUE_LEN	256
#define IPOIB_CM_WC_BATCH	8

static void ipoib_cm_send_done(struct ib_cq *cq, struct ib_wc *wc);

/*
 * Post one packet (pseudo header still in front); conn->lock held.
 *
 * A ring slot holds an skb only while its send is on the QP: the slot is
 * filled by ipoib_tx_map() and emptied again here if the post fails, so
 * ipoib_cm_tx_release() never meets an skb this function has freed.
 */
static int ipoib_cm_post(struct ipoib_cm_conn *conn, struct sk_buff *skb)
{
	struct ipoib_priv *priv = conn->priv;
	struct ib_sge sge[MAX_SKB_FRAGS + 1];
	enum ipoib_drop why = IPOIB_DROP_TX_NO_MEM;
	struct ib_send_wr wr = {};
	struct ipoib_tx_buf *buf;
	int ret;

	lockdep_assert_held(&conn->lock);
	skb_pull(skb, IPOIB_PSEUDO_LEN);
	if (skb_shinfo(skb)->nr_frags >= conn->max_send_sge &&
	    skb_linearize(skb))
		goto drop;
	buf = &conn->tx_ring[conn->tx_head & (conn->tx_size - 1)];
	buf->cqe.done = ipoib_cm_send_done;
	if (ipoib_tx_map(priv, buf, skb, sge))
		goto drop;		/* the slot is left empty */
	wr.wr_cqe = &buf->cqe;
	wr.sg_list = sge;
	wr.num_sge = buf->nr_dma;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = IB_SEND_SIGNALED;
	ret = ib_post_send(conn->qp, &wr, NULL);
	if (unlikely(ret)) {
		netdev_dbg(priv->netdev, "RC post_send failed: %d\n", ret);
		ipoib_tx_unmap(priv, buf);
		buf->skb = NULL;
		why = IPOIB_DROP_TX_ERROR;
		goto drop;
	}
	conn->tx_head++;
	return 0;

drop:
	ipoib_count_drop(priv, why);
	conn->dropped++;
	dev_kfree_skb_any(skb);
	return -EIO;
}

static bool ipoib_cm_too_big(struct ipoib_cm_conn *conn, struct sk_buff *skb)
{
	return skb->len > conn->mtu + IPOIB_HARD_LEN;
}

/*
 * Send what waits on the connection, as far as the ring allows; packets
 * over the connection's MTU go to @too_big for an ICMP error once the
 * lock is dropped.  conn->lock held.
 */
static void ipoib_cm_push(struct ipoib_cm_conn *conn,
			  struct sk_buff_head *too_big)
{
	struct sk_buff *skb;

	lockdep_assert_held(&conn->lock);
	if (!conn->sendable)
		return;
	while (conn->tx_head - conn->tx_tail < conn->tx_size &&
	       (skb = __skb_dequeue(&conn->queue))) {
		if (ipoib_cm_too_big(conn, skb))
			__skb_queue_tail(too_big, skb);
		else
			ipoib_cm_post(conn, skb);
	}
}

/* Answer packets over a connection's MTU with ICMP, outside any lock. */
static void ipoib_cm_icmp(struct ipoib_cm_conn *conn,
			  struct sk_buff_head *too_big)
{
	struct sk_buff *skb;

	while ((skb = __skb_dequeue(too_big))) {
		ipoib_cm_count(conn->priv, IPOIB_CM_ST_TOO_BIG, 1);
		skb_pull(skb, IPOIB_PSEUDO_LEN);
		ipoib_too_big(conn->priv, skb, conn->mtu);
	}
}

/*
 * A packet for a connection; conn->lock held.  Sent at once when the
 * connection is in RTS and nothing waits before it, else queued.
 */
static void ipoib_cm_send_locked(struct ipoib_cm_conn *conn,
				 struct sk_buff *skb,
				 struct sk_buff_head *too_big)
{
	struct ipoib_priv *priv = conn->priv;
	bool ready = conn->sendable;

	lockdep_assert_held(&conn->lock);
	if (ready && skb_queue_empty(&conn->queue) &&
	    conn->tx_head - conn->tx_tail < conn->tx_size) {
		if (ipoib_cm_too_big(conn, skb))
			__skb_queue_tail(too_big, skb);
		else
			ipoib_cm_post(conn, skb);
		return;
	}
	if (skb_queue_len(&conn->queue) >= IPOIB_CM_QUEUE_LEN) {
		conn->dropped++;
		if (!ready)
			ipoib_cm_count(priv, IPOIB_CM_ST_HOLD_DROPPED, 1);
		ipoib_count_drop(priv, IPOIB_DROP_QUEUE_FULL);
		dev_kfree_skb_any(skb);
		return;
	}
	if (!ready) {
		conn->held++;
		ipoib_cm_count(priv, IPOIB_CM_ST_HELD, 1);
	}
	__skb_queue_tail(&conn->queue, skb);
}

/**
 * ipoib_cm_xmit - send a unicast packet over RC if the peer allows it
 * @priv: the interface, in connected mode
 * @skb: starts with the pseudo header
 * @daddr: the destination link address, RC flag set
 * @ah: the UD address handle of the path (kept for fallback)
 *
 * Called from ndo_start_xmit.  Returns true if @skb was consumed (sent,
 * held or dropped), false if it should go over UD: the peer's connection
 * failed and its retry time has not come, or no memory for a new one.
 */
bool ipoib_cm_xmit(struct ipoib_priv *priv, struct sk_buff *skb,
		   const u8 *daddr, struct ipoib_ah *ah)
{
	struct ipoib_cm_transition t;
	struct sk_buff_head too_big;
	struct ipoib_cm_conn *conn;
	u32 qpn = ipoib_hwaddr_qpn(daddr);
	union ib_gid gid;

	ipoib_hwaddr_gid(daddr, &gid);
	spin_lock(&priv->cm.lock);
	if (unlikely(!priv->cm.running || priv->cm.stopping)) {
		spin_unlock(&priv->cm.lock);
		return false;
	}
	conn = ipoib_cm_lookup(priv, &gid, qpn, !ipoib_cm_bidirectional);
	if (!conn) {
		conn = ipoib_cm_conn_alloc(priv, &gid, qpn, true, GFP_ATOMIC);
		if (!conn) {
			spin_unlock(&priv->cm.lock);
			return false;
		}
		kref_get(&ah->ref);
		conn->ah = ah;
		ipoib_cm_conn_insert(conn);
		queue_work(priv->cm.conn_wq, &conn->start_work);
	} else if (conn->state == IPOIB_CM_FAILED && !conn->reaping) {
		if (time_before(jiffies, conn->retry_at)) {
			spin_unlock(&priv->cm.lock);
			ipoib_cm_count(priv, IPOIB_CM_ST_FALLBACK_TX, 1);
			return false;
		}
		/* Backoff over: try again, with today's address handle. */
		t = ipoib_cm_fsm(conn->state, IPOIB_CM_EV_RETRY);
		ipoib_cm_set_state(conn, t.next, IPOIB_CM_EV_RETRY);
		kref_get(&ah->ref);
		ipoib_ah_put(conn->ah);
		conn->ah = ah;
		queue_work(priv->cm.conn_wq, &conn->start_work);
	}
	/* A failed connection still being reaped holds, to keep order. */
	WRITE_ONCE(conn->last_used, jiffies);
	__skb_queue_head_init(&too_big);
	spin_lock(&conn->lock);
	spin_unlock(&priv->cm.lock);
	ipoib_cm_send_locked(conn, skb, &too_big);
	spin_unlock(&conn->lock);
	ipoib_cm_icmp(conn, &too_big);
	return true;
}

/*
 * A send completed in error.  A flushed one is expected once teardown has
 * moved the QP to ERR (it makes the connection not sendable first); on a
 * sendable connection it means the provider moved the QP to ERR itself:
 * rxe does so when the network stack refuses one of its packets, and its
 * completer then reports that send, like every other, as flushed, with no
 * QP event.  Either way the connection is dead.  conn->lock held.
 */
static bool ipoib_cm_send_failed(const struct ipoib_cm_conn *conn,
				 const struct ib_wc *wc)
{
	return wc->status != IB_WC_SUCCESS &&
	       (wc->status != IB_WC_WR_FLUSH_ERR || conn->sendable);
}

/* Consume send completions; conn->lock held.  Returns how many. */
static int ipoib_cm_poll_send(struct ipoib_cm_conn *conn, bool *error)
{
	struct ib_wc wc[IPOIB_CM_WC_BATCH];
	int n, i, total = 0;

	lockdep_assert_held(&conn->lock);
	while (conn->send_cq &&
	       (n = ib_poll_cq(conn->send_cq, ARRAY_SIZE(wc), wc)) > 0) {
		for (i = 0; i < n; i++) {
			if (ipoib_cm_send_failed(conn, &wc[i]))
				*error = true;
			wc[i].wr_cqe->done(conn->send_cq, &wc[i]);
		}
		total += n;
		if (total >= (int)conn->tx_size)
			break;
	}
	return total;
}

static void ipoib_cm_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ipoib_cm_conn *conn = cq->cq_context;
	struct ipoib_priv *priv = conn->priv;
	struct ipoib_tx_buf *buf = container_of(wc->wr_cqe,
						struct ipoib_tx_buf, cqe);
	struct sk_buff *skb = buf->skb;

	ipoib_tx_unmap(priv, buf);
	if (likely(wc->status == IB_WC_SUCCESS)) {
		conn->tx_packets++;
		conn->tx_bytes += skb->len;
		ipoib_cm_count(priv, IPOIB_CM_ST_TX_PACKETS, 1);
		ipoib_cm_count(priv, IPOIB_CM_ST_TX_BYTES, skb->len);
		dev_consume_skb_any(skb);
	} else {
		if (ipoib_cm_send_failed(conn, wc)) {
			netdev_dbg(priv->netdev, "RC send to QP 0x%06x failed: %s\n",
				   conn->qpn, ib_wc_status_msg(wc->status));
			ipoib_cm_count(priv, IPOIB_CM_ST_TX_ERRORS, 1);
		}
		conn->dropped++;
		ipoib_count_drop(priv, IPOIB_DROP_TX_ERROR);
		dev_kfree_skb_any(skb);
	}
	buf->skb = NULL;
	conn->tx_tail++;
}

/*
 * Put a connection on the poll list unless its send CQ is going away.
 * Returns true if it is on the list.  Any context.
 */
static bool ipoib_cm_poll_add(struct ipoib_cm_conn *conn)
{
	struct ipoib_priv *priv = conn->priv;
	unsigned long flags;
	bool on;

	spin_lock_irqsave(&priv->cm.poll_lock, flags);
	if (conn->poll_open && !conn->on_poll_list) {
		conn->on_poll_list = true;
		list_add_tail(&conn->poll_node, &priv->cm.poll_list);
	}
	on = conn->on_poll_list;
	spin_unlock_irqrestore(&priv->cm.poll_lock, flags);
	return on;
}

/* The send CQ exists: completions may put the connection on the list. */
void ipoib_cm_poll_open(struct ipoib_cm_conn *conn)
{
	struct ipoib_priv *priv = conn->priv;

	spin_lock_irq(&priv->cm.poll_lock);
	conn->poll_open = true;
	spin_unlock_irq(&priv->cm.poll_lock);
}

/* Before the send CQ goes: off the list, and never on it again. */
void ipoib_cm_poll_close(struct ipoib_cm_conn *conn)
{
	struct ipoib_priv *priv = conn->priv;

	spin_lock_irq(&priv->cm.poll_lock);
	conn->poll_open = false;
	if (conn->on_poll_list) {
		list_del_init(&conn->poll_node);
		conn->on_poll_list = false;
	}
	spin_unlock_irq(&priv->cm.poll_lock);
}

/* A connection's send CQ fired (CQ callback, any context): poll it. */
void ipoib_cm_tx_cq_event(struct ib_cq *cq, void *ctx)
{
	struct ipoib_cm_conn *conn = ctx;

	/* A leaked send CQ outlives its interface: nothing to poll. */
	if (READ_ONCE(conn->leaked))
		return;
	if (ipoib_cm_poll_add(conn))
		napi_schedule(&conn->priv->cm.napi);
}

/*
 * From the CM NAPI: poll the send CQs that fired, refill their rings from
 * their queues and re-arm them.  Returns true if work is left.
 */
void ipoib_cm_poll_tx(struct ipoib_priv *priv)
{
	struct ipoib_cm_conn *conn;
	struct sk_buff_head too_big;
	unsigned int budget = 64;
	bool error, again;

	while (budget--) {
		spin_lock_irq(&priv->cm.poll_lock);
		conn = list_first_entry_or_null(&priv->cm.poll_list,
						struct ipoib_cm_conn, poll_node);
		if (conn) {
			list_del_init(&conn->poll_node);
			conn->on_poll_list = false;
		}
		spin_unlock_irq(&priv->cm.poll_lock);
		if (!conn)
			return;

		/* Freed only after an RCU grace period: NAPI is a reader. */
		error = false;
		again = false;
		__skb_queue_head_init(&too_big);
		spin_lock(&conn->lock);
		if (conn->send_cq) {
			ipoib_cm_poll_send(conn, &error);
			ipoib_cm_push(conn, &too_big);
			again = ib_req_notify_cq(conn->send_cq,
						 IB_CQ_NEXT_COMP |
						 IB_CQ_REPORT_MISSED_EVENTS) > 0;
		}
		spin_unlock(&conn->lock);
		ipoib_cm_icmp(conn, &too_big);
		/* Refused once the reaper has closed the list to it. */
		if (again)
			ipoib_cm_poll_add(conn);
		if (error)
			ipoib_cm_event(conn, IPOIB_CM_EV_ERROR);
	}
	napi_schedule(&priv->cm.napi);
}

/**
 * ipoib_cm_tx_drained - consume the flushed sends of a QP in ERR
 * @conn: the connection, being torn down
 *
 * Polls the connection's own CQ (the NAPI may do some of it too; the
 * lock keeps them apart).  Returns true once every send has come back.
 */
bool ipoib_cm_tx_drained(struct ipoib_cm_conn *conn)
{
	bool error = false, done;

	spin_lock_bh(&conn->lock);
	ipoib_cm_poll_send(conn, &error);
	done = conn->tx_head == conn->tx_tail;
	spin_unlock_bh(&conn->lock);
	return done;
}

/* Free the send side; the QP is destroyed. */
void ipoib_cm_tx_release(struct ipoib_cm_conn *conn)
{
	struct ipoib_priv *priv = conn->priv;
	struct ipoib_tx_buf *ring;
	struct ib_cq *cq;
	unsigned int i;

	ipoib_cm_poll_close(conn);
	spin_lock_bh(&conn->lock);
	cq = conn->send_cq;
	conn->send_cq = NULL;
	ring = conn->tx_ring;
	conn->tx_ring = NULL;
	spin_unlock_bh(&conn->lock);

	if (cq)
		ib_destroy_cq(cq);
	for (i = 0; ring && i < conn->tx_size; i++) {
		if (!ring[i].skb)
			continue;
		ipoib_tx_unmap(priv, &ring[i]);
		dev_kfree_skb_any(ring[i].skb);
		ipoib_count_drop(priv, IPOIB_DROP_TX_ERROR);
	}
	kvfree(ring);
	conn->tx_head = 0;
	conn->tx_tail = 0;
}

/**
 * ipoib_cm_tx_fallback - a connection failed: its packets go over UD
 * @conn: the connection, FAILED, its QP gone
 * @waiting: the packets that waited on it, in order
 * @too_big: gets those over the UD MTU, for an ICMP error outside the lock
 *
 * Under the transmit lock, so no new packet for the peer overtakes the
 * ones that waited.  From now until retry_at, ipoib_cm_xmit() sends the
 * peer's packets over UD.
 */
void ipoib_cm_tx_fallback(struct ipoib_cm_conn *conn,
			  struct sk_buff_head *waiting,
			  struct sk_buff_head *too_big)
{
	struct ipoib_priv *priv = conn->priv;
	struct sk_buff *skb;

	lockdep_assert_held(&priv->netdev->tx_global_lock);
	while ((skb = __skb_dequeue(waiting))) {
		ipoib_cm_count(priv, IPOIB_CM_ST_FALLBACK_TX, 1);
		skb_pull(skb, IPOIB_PSEUDO_LEN);
		if (skb->len > priv->ud_mtu + IPOIB_ENCAP_LEN)
			__skb_queue_tail(too_big, skb);
		else
			ipoib_ud_send(priv, skb, conn->ah, conn->qpn);
	}
	netdev_dbg(priv->netdev, "connection to %pI6/0x%06x failed: UD for %u s\n",
		   conn->gid.raw, conn->qpn, conn->backoff);
}

/**
 * ipoib_cm_tx_hand_over - a yielding connection's held packets go first
 * @from: the connection giving way; just made CLOSING
 * @to: the connection that carries the peer's packets from now on
 *
 * cm.lock held, in the section that made @from CLOSING: every packet held
 * on @from was sent before any that the lookup gives @to from now on, so
 * they go in front of @to's queue and leave with it.  If @to may be in
 * RTS already, ipoib_cm_tx_push_waiting() follows, outside cm.lock.
 */
void ipoib_cm_tx_hand_over(struct ipoib_cm_conn *from,
			   struct ipoib_cm_conn *to)
{
	struct sk_buff_head moved;

	lockdep_assert_held(&from->priv->cm.lock);
	__skb_queue_head_init(&moved);
	spin_lock(&from->lock);
	skb_queue_splice_init(&from->queue, &moved);
	spin_unlock(&from->lock);
	spin_lock(&to->lock);
	skb_queue_splice(&moved, &to->queue);
	spin_unlock(&to->lock);
}

/*
 * Send what waits on a connection that may have reached RTS meanwhile
 * (after ipoib_cm_tx_hand_over(), outside cm.lock).
 */
void ipoib_cm_tx_push_waiting(struct ipoib_cm_conn *conn)
{
	struct sk_buff_head too_big;

	__skb_queue_head_init(&too_big);
	spin_lock_bh(&conn->lock);
	ipoib_cm_push(conn, &too_big);
	spin_unlock_bh(&conn->lock);
	ipoib_cm_icmp(conn, &too_big);
}

/**
 * ipoib_cm_tx_flush - the connection reached RTS: send what waited
 * @conn: the connection
 */
void ipoib_cm_tx_flush(struct ipoib_cm_conn *conn)
{
	struct ipoib_priv *priv = conn->priv;
	struct sk_buff_head too_big;
	unsigned int n;

	__skb_queue_head_init(&too_big);
	spin_lock_bh(&conn->lock);
	if (conn->qp && conn->tx_ring)
		conn->sendable = true;
	n = skb_queue_len(&conn->queue);
	ipoib_cm_push(conn, &too_big);
	n -= skb_queue_len(&conn->queue);
	if (conn->send_cq)
		ib_req_notify_cq(conn->send_cq, IB_CQ_NEXT_COMP);
	spin_unlock_bh(&conn->lock);
	if (n)
		ipoib_cm_count(priv, IPOIB_CM_ST_FLUSHED, n);
	ipoib_cm_icmp(conn, &too_big);
	/* Completions may have come before the CQ was armed. */
	if (ipoib_cm_poll_add(conn))
		ipoib_cm_napi_kick(priv);
}
