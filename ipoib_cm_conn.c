// SPDX-License-Identifier: GPL-2.0
/*
 * Connected mode (RFC 4755): the connection object and its life: the
 * table, the QP and its events, the state machine's steps, teardown and
 * reaping.  The CM messages that set it up are ipoib_cm_handshake.c's.
 *
 * Locking:
 *   priv->cm.lock (BH)   the table (and its index of passive connections
 *                        by peer GID), every connection's state, cm_id
 *                        and reaping flag.
 *   conn->lock (BH)      a connection's send ring, queue, QP and send CQ;
 *                        nests inside cm.lock.
 *   priv->cm.poll_lock   connections whose send CQ fired (any context).
 * Ownership (details at the fields in ipoib_cm_priv.h):
 *   - a connection enters the table under cm.lock and leaves it only at
 *     the end of its reap (ipoib_cm_reap_finish()); only the reaper frees;
 *   - whoever clears conn->id under cm.lock destroys that CM id;
 *   - a connection joins the poll list only while its send CQ exists.
 * A connection is freed after an RCU grace period: the NAPI poll and the
 * QPN lookup of receive completions find it without taking cm.lock.
 *
 * Teardown destroys a QP only once no completion of it can arrive any
 * more: the QP goes to ERR, its flushed sends are polled from its own CQ,
 * and the receive backend waits for its receives (ops->drain: no-SRQ
 * counts its own flushed receives down, SRQ waits for Last WQE Reached
 * and then a drain marker).  If that cannot be shown in time, the QP and
 * everything it points to are leaked, with a warning, never destroyed.
 * The reaper tears down every connection queued so far as one batch:
 * each wait is paid once per batch.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/error-injection.h>
#include <linux/jhash.h>
#include <linux/kmemleak.h>
#include <linux/module.h>
#include <linux/rtnetlink.h>
#include <linux/slab.h>
#include <rdma/ib_cache.h>

#include "ipoib.h"
#include "ipoib_cm_priv.h"
#include "ipoib_compat.h"

/* Connections are found by the peer's GID and UD QPN, not its flags. */
static u32 ipoib_cm_hash(const union ib_gid *gid, u32 qpn)
{
	return jhash(gid->raw, sizeof(gid->raw), qpn);
}

/* Passive connections by the peer's GID alone: the per-peer cap. */
static u32 ipoib_cm_peer_hash(const union ib_gid *gid)
{
	return jhash(gid->raw, sizeof(gid->raw), 0);
}

/**
 * ipoib_cm_lookup - find a connection that can carry a packet to a peer
 * @priv: the interface; cm.lock held
 * @gid: the peer's GID
 * @qpn: the peer's UD QPN
 * @active: only a connection we opened
 *
 * Closing connections are skipped.  With @active false (the bidirectional
 * option) a live connection in either direction wins over one being set
 * up, and ours over the peer's.
 */
struct ipoib_cm_conn *ipoib_cm_lookup(struct ipoib_priv *priv,
				      const union ib_gid *gid, u32 qpn,
				      bool active)
{
	struct ipoib_cm_conn *conn, *best = NULL;
	int score, best_score = -1;

	lockdep_assert_held(&priv->cm.lock);
	hash_for_each_possible(priv->cm.conns, conn, node,
			       ipoib_cm_hash(gid, qpn)) {
		if (conn->qpn != qpn ||
		    memcmp(conn->gid.raw, gid->raw, sizeof(gid->raw)) ||
		    conn->state == IPOIB_CM_CLOSING)
			continue;
		if (active && !conn->active)
			continue;
		/* Live beats pending beats failed; ours beats the peer's. */
		score = conn->active;
		if (conn->state == IPOIB_CM_LIVE)
			score += 4;
		else if (conn->state != IPOIB_CM_FAILED)
			score += 2;
		if (score > best_score) {
			best = conn;
			best_score = score;
		}
	}
	return best;
}

static void ipoib_cm_qp_event_work(struct work_struct *work);

/**
 * ipoib_cm_conn_alloc - a new connection, not yet in the table
 * @priv: the interface
 * @gid: the peer's GID
 * @qpn: the peer's UD QPN
 * @active: we open it
 * @gfp: allocation context
 */
struct ipoib_cm_conn *ipoib_cm_conn_alloc(struct ipoib_priv *priv,
					  const union ib_gid *gid, u32 qpn,
					  bool active, gfp_t gfp)
{
	struct ipoib_cm_conn *conn;

	conn = kzalloc(sizeof(*conn), gfp);
	if (!conn)
		return NULL;
	conn->priv = priv;
	conn->gid = *gid;
	conn->qpn = qpn & IPOIB_QPN_MASK;
	ipoib_hwaddr_build(conn->addr, IPOIB_FLAG_RC, conn->qpn, gid);
	conn->active = active;
	conn->state = active ? IPOIB_CM_NEW : IPOIB_CM_REP_SENT;
	conn->created = jiffies;
	conn->last_used = jiffies;
	spin_lock_init(&conn->lock);
	spin_lock_init(&conn->rx_lock);
	skb_queue_head_init(&conn->queue);
	INIT_LIST_HEAD(&conn->poll_node);
	INIT_LIST_HEAD(&conn->reap_node);
	INIT_WORK(&conn->start_work, ipoib_cm_start_work);
	INIT_DELAYED_WORK(&conn->cross_work, ipoib_cm_cross_work);
	INIT_WORK(&conn->event_work, ipoib_cm_qp_event_work);
	return conn;
}

/* Add a connection to the table; cm.lock held. */
void ipoib_cm_conn_insert(struct ipoib_cm_conn *conn)
{
	struct ipoib_priv *priv = conn->priv;

	lockdep_assert_held(&priv->cm.lock);
	hash_add(priv->cm.conns, &conn->node,
		 ipoib_cm_hash(&conn->gid, conn->qpn));
	if (!conn->active)
		hash_add(priv->cm.passive, &conn->peer_node,
			 ipoib_cm_peer_hash(&conn->gid));
	priv->cm.nr_conns++;
}

/* Connections a peer port opened to us, closing ones too; cm.lock held. */
unsigned int ipoib_cm_peer_conns(struct ipoib_priv *priv,
				 const union ib_gid *gid)
{
	struct ipoib_cm_conn *conn;
	unsigned int n = 0;

	lockdep_assert_held(&priv->cm.lock);
	hash_for_each_possible(priv->cm.passive, conn, peer_node,
			       ipoib_cm_peer_hash(gid))
		if (!memcmp(conn->gid.raw, gid->raw, sizeof(gid->raw)))
			n++;
	return n;
}

/*
 * QP events, "data arrived in RTR" and a REQ to send again, in process
 * context, on cm.conn_wq.  The id read here stays valid until the task
 * returns: the reaper clears conn->id, then waits for this task, and only
 * then destroys the id.  So the CM is called without cm.lock (it takes
 * locks of its own that must not nest in a lock the NAPI takes).
 */
static void ipoib_cm_qp_event_work(struct work_struct *work)
{
	struct ipoib_cm_conn *conn = container_of(work, struct ipoib_cm_conn,
						  event_work);
	struct ipoib_priv *priv = conn->priv;
	struct ib_cm_id *id = NULL;

	if (test_and_clear_bit(IPOIB_CM_QP_COMM_EST, &conn->qp_events)) {
		spin_lock_bh(&priv->cm.lock);
		if (conn->state == IPOIB_CM_REP_SENT)
			id = conn->id;
		spin_unlock_bh(&priv->cm.lock);
		if (id && ib_cm_notify(id, IB_EVENT_COMM_EST))
			netdev_dbg(priv->netdev, "COMM_EST not taken by the CM\n");
	}
	/* A QP gone bad first: no REQ is sent again for it. */
	if (test_and_clear_bit(IPOIB_CM_QP_FATAL, &conn->qp_events))
		ipoib_cm_event(conn, IPOIB_CM_EV_ERROR);
	if (test_and_clear_bit(IPOIB_CM_REQ_AGAIN, &conn->qp_events))
		ipoib_cm_req_again(conn);
}

/* QP events arrive in any context: note them, act in process context. */
static void ipoib_cm_qp_event(struct ib_event *event, void *ctx)
{
	struct ipoib_cm_conn *conn = ctx;

	/* A leaked QP outlives its interface: nothing to tell. */
	if (READ_ONCE(conn->leaked))
		return;
	switch (event->event) {
	case IB_EVENT_COMM_EST:
		set_bit(IPOIB_CM_QP_COMM_EST, &conn->qp_events);
		break;
	case IB_EVENT_QP_FATAL:
	case IB_EVENT_QP_REQ_ERR:
	case IB_EVENT_QP_ACCESS_ERR:
	case IB_EVENT_PATH_MIG_ERR:
		set_bit(IPOIB_CM_QP_FATAL, &conn->qp_events);
		break;
	case IB_EVENT_QP_LAST_WQE_REACHED:
		/* The SRQ teardown waits for it (ipoib_cm_srq_drain()). */
		set_bit(IPOIB_CM_QP_LAST_WQE, &conn->qp_events);
		if (READ_ONCE(conn->priv->cm.no_last_wqe))
			WRITE_ONCE(conn->priv->cm.no_last_wqe, false);
		wake_up(&conn->priv->cm.drain_wait);
		return;
	default:
		return;
	}
	queue_work(conn->priv->cm.conn_wq, &conn->event_work);
}

/**
 * ipoib_cm_create_qp - the RC QP of a connection, with its send CQ
 * @conn: the connection; the receive backend decides on receives
 *
 * A connection that may send (ours, or any with the bidirectional option)
 * gets a send ring; others keep one send WR so the QP is well formed.
 */
int ipoib_cm_create_qp(struct ipoib_cm_conn *conn)
{
	struct ipoib_priv *priv = conn->priv;
	struct ib_cq_init_attr cq_attr = {};
	struct ib_qp_init_attr attr = {};
	bool sends = conn->active || ipoib_cm_bidirectional;
	unsigned int i;
	int ret;

	conn->tx_size = sends ? ipoib_sendq_size : 1;
	if (sends) {
		conn->tx_ring = kvcalloc(conn->tx_size, sizeof(*conn->tx_ring),
					 GFP_KERNEL);
		if (!conn->tx_ring)
			return -ENOMEM;
	}

	cq_attr.cqe = conn->tx_size;
	conn->send_cq = ib_create_cq(priv->ibdev, ipoib_cm_tx_cq_event, NULL,
				     conn, &cq_attr);
	if (IS_ERR(conn->send_cq)) {
		ret = PTR_ERR(conn->send_cq);
		conn->send_cq = NULL;
		goto err_ring;
	}

	attr.event_handler = ipoib_cm_qp_event;
	attr.qp_context = conn;
	attr.send_cq = conn->send_cq;
	attr.recv_cq = priv->cm.recv_cq;
	attr.cap.max_send_wr = conn->tx_size;
	attr.cap.max_send_sge = sends ?
		min_t(u32, priv->ibdev->attrs.max_send_sge,
		      MAX_SKB_FRAGS + 1) : 1;
	attr.sq_sig_type = IB_SIGNAL_ALL_WR;
	attr.qp_type = IB_QPT_RC;
	priv->cm.ops->qp_attr(conn, &attr);
	conn->qp = ib_create_qp(priv->pd, &attr);
	if (IS_ERR(conn->qp)) {
		ret = PTR_ERR(conn->qp);
		conn->qp = NULL;
		goto err_cq;
	}
	conn->qp_num = conn->qp->qp_num;
	conn->max_send_sge = attr.cap.max_send_sge;
	for (i = 0; conn->tx_ring && i < conn->tx_size; i++)
		conn->tx_ring[i].cqe.done = NULL;	/* set by the poller */

	ret = xa_insert_bh(&priv->cm.qpns, conn->qp_num, conn, GFP_KERNEL);
	if (ret)
		goto err_qp;
	ipoib_cm_poll_open(conn);
	return 0;

err_qp:
	ib_destroy_qp(conn->qp);
	conn->qp = NULL;
err_cq:
	ib_destroy_cq(conn->send_cq);
	conn->send_cq = NULL;
err_ring:
	kvfree(conn->tx_ring);
	conn->tx_ring = NULL;
	return ret;
}
ALLOW_ERROR_INJECTION(ipoib_cm_create_qp, ERRNO);

/*
 * Free what ipoib_cm_create_qp() and the receive backend's admit and
 * qp_ready made, whichever of them ran; the QP is in ERR and drained.
 */
static void ipoib_cm_destroy_qp(struct ipoib_cm_conn *conn)
{
	struct ipoib_priv *priv = conn->priv;
	struct ib_qp *qp;

	spin_lock_bh(&conn->lock);
	qp = conn->qp;
	conn->qp = NULL;
	spin_unlock_bh(&conn->lock);
	if (qp) {
		xa_erase_bh(&priv->cm.qpns, conn->qp_num);
		ib_destroy_qp(qp);
	}
	cancel_work_sync(&conn->event_work);
	conn->qp_events = 0;
	conn->rtr = false;
	ipoib_cm_tx_release(conn);
	priv->cm.ops->release(conn);
}

/*
 * Teardown could not show that the QP is done: destroying it, its send CQ
 * or its rings could let a late completion, or DMA, reach freed memory.
 * Leave them all, and the connection they point to, allocated for good;
 * only what nothing on the hardware side refers to is given back.
 */
static void ipoib_cm_leak_qp(struct ipoib_cm_conn *conn)
{
	struct ipoib_priv *priv = conn->priv;

	netdev_warn(priv->netdev, "RC QP 0x%06x: completions may still arrive: QP, CQ and buffers leaked\n",
		    conn->qp_num);
	WRITE_ONCE(conn->leaked, true);
	priv->cm.leaked_qps++;
	/*
	 * The QP's and CQ's handlers, and those of the receive CQ and SRQ
	 * leaked with them, are this module's code: it stays loaded.  (A
	 * leak inside the module's own exit cannot stop the unload.)
	 */
	__module_get(THIS_MODULE);
	ipoib_cm_poll_close(conn);
	/*
	 * Left on purpose, and no longer pointed to once the field is
	 * cleared: a send completion may still write to it.
	 */
	kmemleak_not_leak(conn->tx_ring);
	spin_lock_bh(&conn->lock);
	conn->qp = NULL;
	conn->send_cq = NULL;
	conn->tx_ring = NULL;
	conn->tx_head = 0;
	conn->tx_tail = 0;
	spin_unlock_bh(&conn->lock);
	/* SRQ completions of the QP now count as for a closed connection. */
	xa_erase_bh(&priv->cm.qpns, conn->qp_num);
	cancel_work_sync(&conn->event_work);
	/* No-SRQ: buffers still on the QP are left to their completions. */
	priv->cm.ops->release(conn);
}

static bool ipoib_cm_qp_in_reset(struct ib_qp *qp)
{
	struct ib_qp_init_attr init_attr;
	struct ib_qp_attr attr;

	return !ib_query_qp(qp, &attr, IB_QP_STATE, &init_attr) &&
	       attr.qp_state == IB_QPS_RESET;
}

/*
 * The first step of a teardown: nothing sends on the connection, its CM
 * id is gone (no callback can run for it any more), its QP is in ERR.
 */
static void ipoib_cm_teardown_begin(struct ipoib_cm_conn *conn)
{
	struct ipoib_priv *priv = conn->priv;
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	struct ib_cm_id *id;

	/* A start task still queued would find the QP gone. */
	cancel_work_sync(&conn->start_work);
	spin_lock_bh(&conn->lock);
	conn->sendable = false;
	spin_unlock_bh(&conn->lock);
	spin_lock_bh(&priv->cm.lock);
	id = conn->id;
	conn->id = NULL;
	spin_unlock_bh(&priv->cm.lock);
	/* An event task that read the id before us is done with it after. */
	cancel_work_sync(&conn->event_work);
	/*
	 * Sends a DREQ on an established connection, a REJ on a pending one,
	 * and waits for a callback still running on @id to return.
	 */
	if (id)
		ib_destroy_cm_id(id);
	/* Only a REJ callback arms it: none can run on this id any more. */
	cancel_delayed_work_sync(&conn->cross_work);
	conn->teardown_err = 0;
	conn->never_ready = false;
	if (!conn->qp)
		return;
	conn->teardown_err = ib_modify_qp(conn->qp, &attr, IB_QP_STATE);
	if (!conn->teardown_err)
		return;
	/* rxe, for one, refuses RESET to ERR, which the IB spec allows. */
	if (ipoib_cm_qp_in_reset(conn->qp)) {
		conn->teardown_err = 0;
		conn->never_ready = true;
		return;
	}
	netdev_warn(priv->netdev, "cannot move RC QP 0x%06x to ERR: %d\n",
		    conn->qp_num, conn->teardown_err);
}

/*
 * Consume the flushed sends of every QP of the batch, all within one
 * IPOIB_CM_DRAIN_TIMEOUT: flushing runs in the provider, for all the QPs
 * at once.
 */
static void ipoib_cm_teardown_sends(struct list_head *batch)
{
	unsigned long end = jiffies + IPOIB_CM_DRAIN_TIMEOUT;
	struct ipoib_cm_conn *conn;
	bool late, busy;

	do {
		late = time_after(jiffies, end);
		busy = false;
		list_for_each_entry(conn, batch, reap_node) {
			if (!ipoib_cm_draining(conn) ||
			    ipoib_cm_tx_drained(conn))
				continue;
			busy = true;
			if (!late)
				continue;
			conn->teardown_err = -ETIMEDOUT;
			netdev_warn(conn->priv->netdev,
				    "RC QP 0x%06x: sends not flushed in time\n",
				    conn->qp_num);
		}
		if (busy && !late)
			usleep_range(1000, 2000);
	} while (busy && !late);
}

/*
 * The last step: destroy what the connection holds, or leak it if its
 * completions could not be shown consumed.
 */
static void ipoib_cm_teardown_end(struct ipoib_cm_conn *conn)
{
	if (conn->teardown_err)
		ipoib_cm_leak_qp(conn);
	else
		ipoib_cm_destroy_qp(conn);	/* QP-less: what admit took */
}

/* The receive backend could not show @conn's receives drained. */
void ipoib_cm_drain_failed(struct ipoib_cm_conn *conn, int err)
{
	conn->teardown_err = err;
	netdev_warn(conn->priv->netdev, "RC QP 0x%06x: receives not drained: %d\n",
		    conn->qp_num, err);
}

static void ipoib_cm_free(struct ipoib_cm_conn *conn)
{
	ipoib_ah_put(conn->ah);
	conn->ah = NULL;
	kfree(conn->path_rec);
	conn->path_rec = NULL;
	/* A leaked QP, CQ or buffer still points here. */
	if (!conn->leaked)
		kfree_rcu(conn, rcu);
}

/*
 * A FAILED connection whose QP was leaked leaves the table, but not its
 * backoff: @heir, QP-less and FAILED since its creation, takes its place
 * and serves the peer over UD until the retry.  Without it the peer's
 * next packet would dial at once, and a fault that leaks a QP on every
 * failed setup would leak one per packet.  cm.lock held.
 */
static void ipoib_cm_failed_heir(struct ipoib_cm_conn *conn,
				 struct ipoib_cm_conn *heir)
{
	lockdep_assert_held(&conn->priv->cm.lock);
	heir->state = IPOIB_CM_FAILED;
	heir->backoff = conn->backoff;
	heir->retry_at = conn->retry_at;
	heir->ietf_sid = conn->ietf_sid;
	heir->last_used = conn->last_used;
	if (conn->ah)
		kref_get(&conn->ah->ref);
	heir->ah = conn->ah;
	ipoib_cm_conn_insert(heir);
}

/*
 * The end of a reap: keep a FAILED connection in the table, QP-less,
 * serving its peer over UD until its retry, or take any other out of it
 * (a FAILED one whose QP was leaked leaves @*heir in its place, and
 * *heir becomes NULL).  Decided in the cm.lock section that clears
 * conn->reaping, so a state change before it is seen here and one after
 * it queues a new reap.  Under the transmit lock, so that no new packet
 * to the peer overtakes the ones that waited.  Returns true if the
 * connection was kept.
 */
static bool ipoib_cm_reap_finish(struct ipoib_cm_conn *conn,
				 struct ipoib_cm_conn **heir)
{
	struct ipoib_priv *priv = conn->priv;
	struct sk_buff_head waiting, too_big;
	struct sk_buff *skb;
	unsigned int n = 0;
	bool failed, keep;

	__skb_queue_head_init(&waiting);
	__skb_queue_head_init(&too_big);
	netif_tx_lock_bh(priv->netdev);
	spin_lock(&priv->cm.lock);
	failed = conn->state == IPOIB_CM_FAILED;
	/*
	 * A connection whose QP was leaked is never used again; what waited
	 * on it still goes over UD.
	 */
	keep = failed && !conn->leaked;
	conn->reaping = false;
	if (!keep) {
		hash_del(&conn->node);
		if (!conn->active)
			hash_del(&conn->peer_node);
		priv->cm.nr_conns--;
	}
	if (failed && !keep && *heir) {
		ipoib_cm_failed_heir(conn, *heir);
		*heir = NULL;
	}
	spin_lock(&conn->lock);
	skb_queue_splice_init(&conn->queue, &waiting);
	spin_unlock(&conn->lock);
	spin_unlock(&priv->cm.lock);
	if (failed)
		ipoib_cm_tx_fallback(conn, &waiting, &too_big);
	netif_tx_unlock_bh(priv->netdev);

	while ((skb = __skb_dequeue(&too_big)))
		ipoib_too_big(priv, skb, priv->ud_mtu);
	while ((skb = __skb_dequeue(&waiting))) {
		dev_kfree_skb_any(skb);
		n++;
	}
	if (n) {
		ipoib_cm_count(priv, IPOIB_CM_ST_HOLD_DROPPED, n);
		ipoib_count_drops(priv, IPOIB_DROP_NOT_READY, n);
	}
	return keep;
}

/*
 * Free a connection the reaper took out of the table, after RCU.  Its
 * send CQ is gone, so ipoib_cm_tx_release() took it off the poll list
 * for good.
 */
static void ipoib_cm_forget(struct ipoib_cm_conn *conn)
{
	struct ipoib_priv *priv = conn->priv;

	WARN_ON_ONCE(conn->poll_open || conn->on_poll_list);
	wake_up(&priv->cm.drain_wait);
	ipoib_cm_free(conn);
}

/*
 * The reaper takes every connection queued so far as one batch, so that
 * the waits of a teardown (sends flushed, Last WQE Reached, the receive
 * CQ drained) are paid once per batch, not once per connection: closing
 * a thousand connections costs a thousand CM ids and QP transitions, and
 * a few waits.
 */
void ipoib_cm_reap_work(struct work_struct *work)
{
	struct ipoib_priv *priv = container_of(work, struct ipoib_priv,
					       cm.reap_work);
	struct ipoib_cm_conn *conn, *tmp, *heir;
	LIST_HEAD(batch);
	bool keep;

	spin_lock_bh(&priv->cm.lock);
	list_splice_init(&priv->cm.reap_list, &batch);
	spin_unlock_bh(&priv->cm.lock);
	if (list_empty(&batch))
		return;

	list_for_each_entry(conn, &batch, reap_node)
		ipoib_cm_teardown_begin(conn);
	ipoib_cm_teardown_sends(&batch);
	priv->cm.ops->drain(priv, &batch);

	list_for_each_entry_safe(conn, tmp, &batch, reap_node) {
		/* Off the batch first: a new close may queue it again. */
		list_del_init(&conn->reap_node);
		ipoib_cm_teardown_end(conn);
		/* Only a leak makes one; used only if the state is FAILED. */
		heir = NULL;
		if (conn->leaked && conn->active)
			heir = ipoib_cm_conn_alloc(priv, &conn->gid, conn->qpn,
						   true, GFP_KERNEL);
		keep = ipoib_cm_reap_finish(conn, &heir);
		kfree(heir);		/* not taken: the state was not FAILED */
		if (keep)
			continue;
		ipoib_cm_count(priv, IPOIB_CM_ST_CLOSED, 1);
		ipoib_cm_forget(conn);
	}
}

/* Queue a connection for the reaper; cm.lock held. */
void ipoib_cm_queue_reap(struct ipoib_cm_conn *conn)
{
	struct ipoib_priv *priv = conn->priv;

	lockdep_assert_held(&priv->cm.lock);
	if (conn->reaping)
		return;
	conn->reaping = true;
	list_add_tail(&conn->reap_node, &priv->cm.reap_list);
	queue_work(priv->cm.wq, &priv->cm.reap_work);
}

/**
 * ipoib_cm_event_locked - feed an event to a connection's state machine
 * @conn: the connection
 * @ev: what happened
 *
 * cm.lock held.  The transition is made and CLOSE, FALLBACK and YIELD are
 * handed to the reaper; ESTABLISH, which needs process context and the
 * CM id of the callback that saw the event, is left to the caller.
 */
struct ipoib_cm_transition ipoib_cm_event_locked(struct ipoib_cm_conn *conn,
						 enum ipoib_cm_event ev)
{
	struct ipoib_priv *priv = conn->priv;
	struct ipoib_cm_transition t;
	enum ipoib_cm_state old;

	lockdep_assert_held(&priv->cm.lock);
	old = conn->state;
	t = ipoib_cm_fsm(old, ev);
	ipoib_cm_set_state(conn, t.next, ev);
	switch (t.action) {
	case IPOIB_CM_ACT_FALLBACK:
		conn->backoff = clamp(conn->backoff * 2, 1U, 64U);
		conn->retry_at = jiffies + conn->backoff * HZ;
		ipoib_cm_count(priv, IPOIB_CM_ST_FAILED, 1);
		ipoib_cm_queue_reap(conn);
		break;
	case IPOIB_CM_ACT_YIELD:
		/* Its packets went over in the crossing REQ's handler. */
	case IPOIB_CM_ACT_CLOSE:
		ipoib_cm_queue_reap(conn);
		break;
	default:
		break;
	}
	if (old != t.next)
		netdev_dbg(priv->netdev, "%s connection to %pI6/0x%06x: %s -> %s on %s\n",
			   conn->active ? "active" : "passive", conn->gid.raw,
			   conn->qpn, ipoib_cm_state_names[old],
			   ipoib_cm_state_names[t.next],
			   ipoib_cm_event_names[ev]);
	return t;
}

/**
 * ipoib_cm_id_event - feed an event to a connection's state machine
 * @conn: the connection
 * @id: the CM id of the callback reporting the event, or NULL outside
 *	CM callbacks (then the event cannot establish the connection)
 * @ev: what happened
 *
 * Process or softirq context.  The transition is made under cm.lock; the
 * action is carried out here (ESTABLISH, in process context only) or by
 * the reaper (CLOSE, FALLBACK, YIELD).
 */
void ipoib_cm_id_event(struct ipoib_cm_conn *conn, struct ib_cm_id *id,
		       enum ipoib_cm_event ev)
{
	struct ipoib_priv *priv = conn->priv;
	struct ipoib_cm_transition t;

	spin_lock_bh(&priv->cm.lock);
	t = ipoib_cm_event_locked(conn, ev);
	spin_unlock_bh(&priv->cm.lock);

	if (t.action == IPOIB_CM_ACT_ESTABLISH)
		ipoib_cm_establish(conn, id);
}
