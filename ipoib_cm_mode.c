// SPDX-License-Identifier: GPL-2.0
/*
 * Connected mode (RFC 4755) as a property of an interface: the receive CQ
 * and the NAPI context that every RC connection shares, the receive
 * backend chosen for the device, listening while connected mode runs,
 * the switch between datagram and connected mode, and the periodic tasks
 * that are not tied to one connection (the idle scan, the SRQ limit).
 * The connections themselves are ipoib_cm_conn.c's.
 *
 * Starting and stopping run under the RTNL and priv->transport_lock.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/rtnetlink.h>

#include "ipoib.h"
#include "ipoib_cm_priv.h"

/* Connected mode is on and the interface is up: RC may be used. */
bool ipoib_cm_enabled(struct ipoib_priv *priv)
{
	return READ_ONCE(priv->cm.running);
}

void ipoib_cm_srq_event(struct ib_event *event, void *ctx)
{
	struct ipoib_priv *priv = ctx;

	if (event->event == IB_EVENT_SRQ_LIMIT_REACHED) {
		ipoib_cm_count(priv, IPOIB_CM_ST_SRQ_LIMIT, 1);
		queue_work(priv->cm.conn_wq, &priv->cm.srq_limit_work);
	}
}

static void ipoib_cm_recv_cq_event(struct ib_cq *cq, void *ctx)
{
	struct ipoib_priv *priv = ctx;

	napi_schedule(&priv->cm.napi);
}

/**
 * ipoib_cm_start - connected mode on a running interface
 * @priv: the interface; RTNL and transport_lock held
 *
 * Creates the RC receive CQ and the receive backend, then listens.
 */
int ipoib_cm_start(struct ipoib_priv *priv)
{
	u32 max_cqe = priv->ibdev->attrs.max_cqe;
	struct ib_cq_init_attr cq_attr = {};
	u32 bufs;
	int ret;

	lockdep_assert_held(&priv->transport_lock);
	if (priv->cm.running || !priv->cm.admin)
		return 0;
	/* A stop begun for a removal that did not happen: finish it. */
	ipoib_cm_stop(priv);

	/*
	 * Every receive buffer there can be, and the SRQ teardown's drain
	 * markers, fit in the receive CQ (the arithmetic: ipoib_cm_size.c).
	 */
	bufs = ipoib_recvq_size;
	if (!priv->cm.ops->srq) {
		bufs = ipoib_cm_nosrq_budget((u64)ipoib_cm_nosrq_mem << 20,
					     priv->cm.rx_frags * PAGE_SIZE,
					     max_cqe);
		if (!bufs) {
			netdev_err(priv->netdev, "cm_nosrq_mem (%u MiB) holds no receive buffer\n",
				   ipoib_cm_nosrq_mem);
			ret = -EINVAL;
			goto err;
		}
		priv->cm.nosrq_budget = bufs;
	} else if ((u64)bufs + IPOIB_CM_DRAIN_WRS > max_cqe) {
		netdev_err(priv->netdev, "recv_queue_size (%u) and the drain need more entries than a CQ of %s holds (%u)\n",
			   bufs, dev_name(&priv->ibdev->dev), max_cqe);
		ret = -EINVAL;
		goto err;
	}
	cq_attr.cqe = ipoib_cm_recv_cqe(bufs, max_cqe);
	priv->cm.recv_cq = ib_create_cq(priv->ibdev, ipoib_cm_recv_cq_event,
					NULL, priv, &cq_attr);
	if (IS_ERR(priv->cm.recv_cq)) {
		ret = PTR_ERR(priv->cm.recv_cq);
		priv->cm.recv_cq = NULL;
		goto err;
	}

	priv->cm.stopping = false;
	ret = priv->cm.ops->start(priv);
	if (ret)
		goto err_cq;

	napi_enable(&priv->cm.napi);
	ib_req_notify_cq(priv->cm.recv_cq, IB_CQ_NEXT_COMP);

	ret = ipoib_cm_listen(priv);
	if (ret)
		goto err_napi;
	WRITE_ONCE(priv->cm.running, true);
	queue_delayed_work(priv->cm.wq, &priv->cm.idle_work, HZ);
	netdev_info(priv->netdev,
		    "connected mode: %s receives, receive MTU %u, listening on 0x%016llx and 0x%016llx\n",
		    priv->cm.ops->name, priv->cm.rx_mtu,
		    IPOIB_CM_SID_OFED | priv->qp->qp_num,
		    IPOIB_CM_SID_IETF | priv->qp->qp_num);
	return 0;

err_napi:
	napi_disable(&priv->cm.napi);
	priv->cm.stopping = true;
	priv->cm.ops->stop(priv);
err_cq:
	ib_destroy_cq(priv->cm.recv_cq);
	priv->cm.recv_cq = NULL;
err:
	netdev_err(priv->netdev, "cannot start connected mode: %d\n", ret);
	return ret;
}

/* Consume what is left in the receive CQ; the NAPI context is disabled. */
static void ipoib_cm_drain_recv_cq(struct ipoib_priv *priv)
{
	int n, i;

	local_bh_disable();
	while ((n = ib_poll_cq(priv->cm.recv_cq, ARRAY_SIZE(priv->cm.wc),
			       priv->cm.wc)) > 0)
		for (i = 0; i < n; i++)
			priv->cm.wc[i].wr_cqe->done(priv->cm.recv_cq,
						    &priv->cm.wc[i]);
	local_bh_enable();
}

/**
 * ipoib_cm_stop_begin - the first half of leaving connected mode
 * @priv: the interface; transport_lock held
 *
 * Stops listening and queues every connection for the reaper (DREQs to
 * established peers go out as it runs), without waiting: the teardowns
 * of several interfaces being removed together then overlap.
 * ipoib_cm_stop() waits for them.  Safe to call again.
 */
static void ipoib_cm_stop_begin(struct ipoib_priv *priv)
{
	struct ipoib_cm_conn *conn;
	struct hlist_node *tmp;
	unsigned int i, n = 0;
	int bkt;

	lockdep_assert_held(&priv->transport_lock);
	if (!priv->cm.running)
		return;
	WRITE_ONCE(priv->cm.running, false);
	priv->cm.stop_start = jiffies;

	for (i = 0; i < ARRAY_SIZE(priv->cm.listen); i++) {
		ib_destroy_cm_id(priv->cm.listen[i]);
		priv->cm.listen[i] = NULL;
	}
	cancel_delayed_work_sync(&priv->cm.idle_work);

	/* Nothing new is created now: close what there is. */
	spin_lock_bh(&priv->cm.lock);
	priv->cm.stopping = true;
	hash_for_each_safe(priv->cm.conns, bkt, tmp, conn, node) {
		/* Being reaped already: the reaper sees CLOSING at its end. */
		ipoib_cm_event_locked(conn, IPOIB_CM_EV_SHUTDOWN);
		ipoib_cm_queue_reap(conn);
		n++;
	}
	spin_unlock_bh(&priv->cm.lock);
	priv->cm.stop_closed = n;
}

/**
 * ipoib_cm_stop - leave connected mode on a running interface
 * @priv: the interface; RTNL and transport_lock held
 *
 * Stops listening, closes every connection (DREQ to established peers),
 * waits for the reaper, then frees the receive backend.  Finishes a stop
 * ipoib_cm_stop_begin() began.
 */
void ipoib_cm_stop(struct ipoib_priv *priv)
{
	lockdep_assert_held(&priv->transport_lock);
	ipoib_cm_stop_begin(priv);
	/* Never started, or stopped already. */
	if (!priv->cm.recv_cq)
		return;
	flush_workqueue(priv->cm.wq);
	/*
	 * The reaper cancelled every connection's tasks; a queued SRQ limit
	 * task runs now, while the NAPI it kicks is still enabled.
	 */
	flush_workqueue(priv->cm.conn_wq);
	if (priv->cm.nr_conns)
		netdev_warn(priv->netdev, "%u connections left after stop\n",
			    priv->cm.nr_conns);

	napi_disable(&priv->cm.napi);
	ipoib_cm_drain_recv_cq(priv);
	cancel_work_sync(&priv->cm.srq_limit_work);
	priv->cm.ops->stop(priv);
	if (priv->cm.leaked_qps) {
		/* QPs teardown had to leave still complete into it. */
		netdev_warn(priv->netdev, "%u RC QPs were leaked: their receive CQ is leaked too\n",
			    priv->cm.leaked_qps);
		priv->cm.leaked_qps = 0;
	} else {
		ib_destroy_cq(priv->cm.recv_cq);
	}
	priv->cm.recv_cq = NULL;
	netdev_info(priv->netdev, "connected mode stopped: %u connections closed in %u ms\n",
		    priv->cm.stop_closed,
		    jiffies_to_msecs(jiffies - priv->cm.stop_start));
}

/**
 * ipoib_cm_close_all - begin closing an interface's connections
 * @priv: the interface, about to be unregistered; RTNL held
 */
void ipoib_cm_close_all(struct ipoib_priv *priv)
{
	ASSERT_RTNL();
	mutex_lock(&priv->transport_lock);
	ipoib_cm_stop_begin(priv);
	mutex_unlock(&priv->transport_lock);
}

/*
 * cm_idle_timeout is writable at run time: a value over a week is taken
 * as a week, which keeps it in jiffies well inside what time_after()
 * compares correctly, on 32-bit as well.
 */
#define IPOIB_CM_IDLE_MAX	(7U * 24 * 3600)
/* How often a backend's hoarding connections are looked for. */
#define IPOIB_CM_HOARD_SCAN	(5UL * HZ)

/*
 * Close connections nobody used for cm_idle_timeout seconds, and those
 * the receive backend finds holding memory for traffic that has stopped
 * (a no-SRQ ring grown and then quiet).  Choosing a connection and
 * closing it happen in one cm.lock section, so it cannot be used or
 * change state in between.  cm_idle_timeout 0 closes neither.
 */
static void ipoib_cm_idle_work(struct work_struct *work)
{
	struct ipoib_priv *priv = container_of(to_delayed_work(work),
					       struct ipoib_priv,
					       cm.idle_work);
	bool (*hoarding)(struct ipoib_cm_conn *conn) = priv->cm.ops->hoarding;
	unsigned int timeout = min(READ_ONCE(ipoib_cm_idle_timeout),
				   IPOIB_CM_IDLE_MAX);
	unsigned long idle = (unsigned long)timeout * HZ;
	unsigned long period = 60 * HZ;
	unsigned int n = 0, reclaimed = 0;
	struct ipoib_cm_transition t;
	struct ipoib_cm_conn *conn;
	int bkt;

	if (timeout) {
		spin_lock_bh(&priv->cm.lock);
		hash_for_each(priv->cm.conns, bkt, conn, node) {
			if (conn->reaping)
				continue;
			if (time_after(jiffies,
				       READ_ONCE(conn->last_used) + idle)) {
				/* Pending ones are left to the CM's timers. */
				if (conn->state != IPOIB_CM_LIVE &&
				    conn->state != IPOIB_CM_REP_SENT &&
				    conn->state != IPOIB_CM_FAILED)
					continue;
				t = ipoib_cm_event_locked(conn,
							  IPOIB_CM_EV_IDLE);
				if (t.action == IPOIB_CM_ACT_CLOSE)
					n++;
			} else if (hoarding && conn->state == IPOIB_CM_LIVE &&
				   hoarding(conn)) {
				t = ipoib_cm_event_locked(conn,
							  IPOIB_CM_EV_IDLE);
				if (t.action == IPOIB_CM_ACT_CLOSE)
					reclaimed++;
			}
		}
		spin_unlock_bh(&priv->cm.lock);
		if (n || reclaimed)
			netdev_dbg(priv->netdev,
				   "closing %u idle connections, %u holding receive memory\n",
				   n, reclaimed);
		if (n)
			ipoib_cm_count(priv, IPOIB_CM_ST_IDLE_REAPED, n);
		if (reclaimed)
			ipoib_cm_count(priv, IPOIB_CM_ST_RX_RECLAIMED,
				       reclaimed);
		period = clamp(idle / 4, (unsigned long)HZ, 60UL * HZ);
		if (hoarding)
			period = min(period, IPOIB_CM_HOARD_SCAN);
	}
	queue_delayed_work(priv->cm.wq, &priv->cm.idle_work, period);
}

static void ipoib_cm_srq_limit_work(struct work_struct *work)
{
	struct ipoib_priv *priv = container_of(work, struct ipoib_priv,
					       cm.srq_limit_work);
	struct ib_srq_attr attr = { .srq_limit = priv->cm.srq_size / 4 };

	/* The limit event is one-shot on rxe: arm it again. */
	if (priv->cm.srq && ib_modify_srq(priv->cm.srq, &attr, IB_SRQ_LIMIT))
		netdev_dbg(priv->netdev, "cannot re-arm the SRQ limit\n");
	ipoib_cm_napi_kick(priv);
}

static void ipoib_cm_set_rc_flag(struct ipoib_priv *priv, bool on)
{
	struct net_device *dev = priv->netdev;
	u8 addr[IPOIB_HWADDR_LEN];

	memcpy(addr, dev->dev_addr, sizeof(addr));
	addr[0] = on ? IPOIB_FLAG_RC : 0;
	dev_addr_set(dev, addr);
	if (dev->reg_state == NETREG_REGISTERED)
		call_netdevice_notifiers(NETDEV_CHANGEADDR, dev);
}

/**
 * ipoib_set_mode - switch between datagram and connected mode
 * @priv: the interface; RTNL held
 * @connected: the wanted mode
 *
 * Connected mode raises the MTU to what RC receive buffers hold (65520),
 * datagram mode brings it back to the UD MTU.  Packets in flight on the
 * connections being closed are lost; nothing else is.
 */
int ipoib_set_mode(struct ipoib_priv *priv, bool connected)
{
	struct net_device *dev = priv->netdev;
	int ret = 0;

	ASSERT_RTNL();
	if (priv->cm.admin == connected)
		return 0;

	mutex_lock(&priv->transport_lock);
	priv->cm.admin = connected;
	if (connected) {
		if (netif_running(dev))
			ret = ipoib_cm_start(priv);
		if (ret)
			priv->cm.admin = false;
	} else {
		ipoib_cm_stop(priv);
	}
	mutex_unlock(&priv->transport_lock);
	if (ret)
		return ret;

	ipoib_cm_set_rc_flag(priv, connected);
	if (connected) {
		dev->max_mtu = priv->cm.max_mtu;
		dev_set_mtu(dev, priv->cm.max_mtu);
	} else {
		dev->max_mtu = priv->ud_mtu;
		if (dev->mtu > priv->ud_mtu)
			dev_set_mtu(dev, priv->ud_mtu);
	}
	/* Routes learnt a path MTU under the other mode. */
	ipoib_path_flush(priv);
	netdev_info(dev, "mode %s, MTU %u\n",
		    connected ? "connected" : "datagram", dev->mtu);
	return 0;
}

/**
 * ipoib_cm_init - connected-mode state of a new interface
 * @priv: the interface, its UD QP created, not registered yet
 */
int ipoib_cm_init(struct ipoib_priv *priv)
{
	struct ipoib_cm_dev *cm = &priv->cm;
	const struct ib_device_attr *a = &priv->ibdev->attrs;
	unsigned int frags;

	spin_lock_init(&cm->lock);
	spin_lock_init(&cm->poll_lock);
	hash_init(cm->conns);
	hash_init(cm->passive);
	xa_init_flags(&cm->qpns, XA_FLAGS_LOCK_BH);
	INIT_LIST_HEAD(&cm->poll_list);
	INIT_LIST_HEAD(&cm->reap_list);
	INIT_WORK(&cm->reap_work, ipoib_cm_reap_work);
	INIT_WORK(&cm->srq_limit_work, ipoib_cm_srq_limit_work);
	INIT_DELAYED_WORK(&cm->idle_work, ipoib_cm_idle_work);
	init_waitqueue_head(&cm->drain_wait);

	/* Without an SRQ (or when told so), each QP has its own ring. */
	cm->ops = ipoib_cm_use_srq && a->max_srq ? &ipoib_cm_srq_ops :
						   &ipoib_cm_nosrq_ops;
	frags = IPOIB_CM_MAX_FRAGS;
	if (cm->ops->srq)
		frags = min_t(u32, frags, a->max_srq_sge);
	else
		frags = min_t(u32, frags, a->max_recv_sge);
	cm->rx_frags = frags;
	cm->rx_mtu = min_t(u32, frags * PAGE_SIZE, IPOIB_CM_RX_MTU_MAX);
	cm->max_mtu = cm->rx_mtu - IPOIB_ENCAP_LEN;
	if (cm->max_mtu < priv->ud_mtu) {
		netdev_warn(priv->netdev, "RC receive buffers too small: datagram mode only\n");
		cm->max_mtu = priv->ud_mtu;
	}

	cm->wq = alloc_ordered_workqueue("%s-cm-%s-%u", WQ_MEM_RECLAIM,
					 DRV_NAME, dev_name(&priv->ibdev->dev),
					 priv->port_num);
	if (!cm->wq)
		return -ENOMEM;
	/*
	 * Unbound: a start task, which allocates and posts its QP's first
	 * receives, must not keep another peer's waiting on its CPU.
	 */
	cm->conn_wq = alloc_workqueue("%s-cmc-%s-%u",
				      WQ_UNBOUND | WQ_MEM_RECLAIM, 0,
				      DRV_NAME, dev_name(&priv->ibdev->dev),
				      priv->port_num);
	if (!cm->conn_wq) {
		destroy_workqueue(cm->wq);
		cm->wq = NULL;
		return -ENOMEM;
	}
	netif_napi_add(priv->netdev, &cm->napi, ipoib_cm_napi_poll);
	cm->admin = ipoib_cm_default;
	return 0;
}

void ipoib_cm_cleanup(struct ipoib_priv *priv)
{
	netif_napi_del(&priv->cm.napi);
	/* The reaper cancels work on conn_wq: it goes first. */
	destroy_workqueue(priv->cm.wq);
	destroy_workqueue(priv->cm.conn_wq);
	xa_destroy(&priv->cm.qpns);
}
