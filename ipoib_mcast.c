// SPDX-License-Identifier: GPL-2.0
/*
 * Multicast: the broadcast group and the IP groups the stack asks for.
 *
 * One task, run on the interface's ordered workqueue, brings the groups
 * in line with what is wanted: the broadcast group always, plus every
 * group in the netdev's multicast list, while the interface is up and the
 * port active.  Sending to a group we have not joined creates a send-only
 * entry that only needs an address handle.
 *   InfiniBand: the SA joins (FullMember, or SendOnlyNonMember) and gives
 *   the broadcast group's Q_Key, MTU and SL.
 *   RoCE: there is no SA.  Groups are local: the Q_Key is the roce_qkey
 *   parameter, the MTU the port's, and the QP is attached directly.  The
 *   group's MGID is also joined at the IPv6 level on the Ethernet device
 *   under the port, without which rdma_rxe never receives it.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/etherdevice.h>
#include <linux/slab.h>
#include <net/addrconf.h>
#include <net/if_inet6.h>
#include <rdma/ib_cache.h>

#include "ipoib.h"
#include "ipoib_compat.h"

#define IPOIB_MCAST_QUEUE_LEN	8
#define IPOIB_JOIN_TIMEOUT	(10 * HZ)
#define IPOIB_JOIN_MAX_BACKOFF	16	/* seconds */

/* mc->state */
enum {
	IPOIB_MC_IDLE,		/* nothing done yet */
	IPOIB_MC_SENDONLY,	/* address handle only */
	IPOIB_MC_JOINED,	/* address handle, QP attached */
	IPOIB_MC_FAILED,	/* join failed: retried on the next change */
};

struct ipoib_mcast_entry {
	struct ipoib_mcast mc;
	int state;
	bool sendonly;			/* created by a send, not the stack */
	struct sk_buff_head queue;	/* packets waiting for the AH */
	struct completion join_done;	/* InfiniBand: SA answered */
	int join_status;
	unsigned long retry_at;		/* after a failed join */
	unsigned int backoff;		/* seconds, doubles per failure */
	struct ib_sa_mcmember_rec rec;
	struct ipoib_priv *priv;
};

static struct ipoib_mcast_entry *to_entry(struct ipoib_mcast *mc)
{
	return container_of(mc, struct ipoib_mcast_entry, mc);
}

bool ipoib_mcast_is_broadcast(struct ipoib_priv *priv,
			      const union ib_gid *mgid)
{
	return !memcmp(mgid->raw, priv->netdev->broadcast + IPOIB_HWADDR_GID_OFF,
		       sizeof(mgid->raw));
}

static struct ipoib_mcast *ipoib_mcast_find(struct ipoib_priv *priv,
					    const union ib_gid *mgid)
{
	struct ipoib_mcast *mc;

	list_for_each_entry(mc, &priv->mcasts, node)
		if (!memcmp(mc->mgid.raw, mgid->raw, sizeof(mgid->raw)))
			return mc;
	return NULL;
}

static struct ipoib_mcast *ipoib_mcast_new(struct ipoib_priv *priv,
					   const union ib_gid *mgid, gfp_t gfp)
{
	struct ipoib_mcast_entry *e;

	e = kzalloc(sizeof(*e), gfp);
	if (!e)
		return NULL;
	e->mc.mgid = *mgid;
	e->priv = priv;
	skb_queue_head_init(&e->queue);
	init_completion(&e->join_done);
	list_add_tail(&e->mc.node, &priv->mcasts);
	return &e->mc;
}

/**
 * ipoib_mcast_xmit - send a packet to a multicast group over UD
 * @priv: the interface
 * @skb: starts with the pseudo header
 * @daddr: the group's link address (QPN 0xffffff and the MGID)
 *
 * Called from ndo_start_xmit.  Consumes @skb.
 */
void ipoib_mcast_xmit(struct ipoib_priv *priv, struct sk_buff *skb,
		      const u8 *daddr)
{
	struct ipoib_mcast_entry *e;
	struct ipoib_mcast *mc;
	struct ipoib_ah *ah;
	enum ipoib_drop why;
	union ib_gid mgid;

	ipoib_hwaddr_gid(daddr, &mgid);
	if (!ipoib_mgid_valid(&mgid, priv->netdev->broadcast)) {
		why = IPOIB_DROP_BAD_ADDR;
		goto drop_unlocked;
	}

	spin_lock(&priv->lock);
	mc = ipoib_mcast_find(priv, &mgid);
	if (mc && mc->ah) {
		ah = mc->ah;
		kref_get(&ah->ref);
		spin_unlock(&priv->lock);
		skb_pull(skb, IPOIB_PSEUDO_LEN);
		ipoib_ud_send(priv, skb, ah, IPOIB_MCAST_QPN);
		ipoib_ah_put(ah);
		return;
	}
	if (!mc) {
		mc = ipoib_mcast_new(priv, &mgid, GFP_ATOMIC);
		if (!mc) {
			why = IPOIB_DROP_TX_NO_MEM;
			goto drop;
		}
		to_entry(mc)->sendonly = true;
		ipoib_mcast_kick(priv);
	}
	e = to_entry(mc);
	if (e->state == IPOIB_MC_FAILED) {
		why = IPOIB_DROP_NO_PATH;
		goto drop;
	}
	if (skb_queue_len(&e->queue) >= IPOIB_MCAST_QUEUE_LEN) {
		why = IPOIB_DROP_QUEUE_FULL;
		goto drop;
	}
	__skb_queue_tail(&e->queue, skb);
	spin_unlock(&priv->lock);
	return;

drop:
	spin_unlock(&priv->lock);
drop_unlocked:
	ipoib_count_drop(priv, why);
	dev_kfree_skb_any(skb);
}

/*
 * RoCE: leaving a group at the IPv6 level.  Linux 6.1's ipv6_dev_mc_dec()
 * must run under the RTNL, which the multicast task cannot take: ndo_stop
 * holds it while it waits for that task.  So a leave is queued, with the
 * reference on the Ethernet device and the record made at the join, and
 * one module-wide task does it under the RTNL; ipoib_mcast_cleanup()
 * waits for it before the module goes.
 */
struct ipoib_ip6_leave {
	struct list_head node;
	struct net_device *ndev;	/* held until the leave is done */
	struct in6_addr addr;
};

static LIST_HEAD(ipoib_ip6_leaves);
static DEFINE_SPINLOCK(ipoib_ip6_lock);		/* ipoib_ip6_leaves */

static void ipoib_ip6_leave_work(struct work_struct *work)
{
	struct ipoib_ip6_leave *l, *tmp;
	LIST_HEAD(todo);

	spin_lock_bh(&ipoib_ip6_lock);
	list_splice_init(&ipoib_ip6_leaves, &todo);
	spin_unlock_bh(&ipoib_ip6_lock);
	if (list_empty(&todo))
		return;
	rtnl_lock();
	list_for_each_entry_safe(l, tmp, &todo, node) {
		ipv6_dev_mc_dec(l->ndev, &l->addr);
		dev_put(l->ndev);
		kfree(l);
	}
	rtnl_unlock();
}

static DECLARE_WORK(ipoib_ip6_work, ipoib_ip6_leave_work);

/* Every IPv6 leave queued so far is done; no interface is left. */
void ipoib_mcast_cleanup(void)
{
	flush_work(&ipoib_ip6_work);
}

/* RoCE: a local group.  Attach unless send-only, and join at the IP level. */
static int ipoib_mcast_join_roce(struct ipoib_priv *priv,
				 struct ipoib_mcast *mc, bool sendonly,
				 struct ipoib_ah **ahp)
{
	struct ipoib_ip6_leave *leave;
	struct rdma_ah_attr attr;
	struct net_device *ndev;
	struct ipoib_ah *ah;
	u8 mac[ETH_ALEN];
	int ret;

	ipv6_eth_mc_map((struct in6_addr *)mc->mgid.raw, mac);
	ipoib_roce_ah_attr(priv, &mc->mgid, mac, &attr);
	ah = ipoib_ah_create(priv, &attr);
	if (IS_ERR(ah))
		return PTR_ERR(ah);
	if (sendonly)
		goto out;

	ret = ib_attach_mcast(priv->qp, &mc->mgid, 0);
	if (ret) {
		ipoib_ah_put(ah);
		return ret;
	}
	mc->attached = true;

	/* Made now, so that leaving cannot fail for want of memory. */
	leave = kzalloc(sizeof(*leave), GFP_KERNEL);
	if (leave)
		memcpy(&leave->addr, mc->mgid.raw, sizeof(leave->addr));
	rcu_read_lock();
	ndev = rdma_read_gid_attr_ndev_rcu(priv->sgid_attr);
	if (!IS_ERR(ndev))
		dev_hold(ndev);
	rcu_read_unlock();
	if (!IS_ERR(ndev)) {
		ret = leave ? ipv6_dev_mc_inc(ndev, &leave->addr) : -ENOMEM;
		if (ret) {
			netdev_warn(priv->netdev,
				    "IPv6 join of %pI6 on %s failed: %d\n",
				    mc->mgid.raw, ndev->name, ret);
			dev_put(ndev);
			kfree(leave);
		} else {
			leave->ndev = ndev;
			mc->ip_leave = leave;
		}
	} else {
		kfree(leave);
	}
out:
	*ahp = ah;
	return 0;
}

/*
 * The SA's answer to a join, and later news about the membership (the
 * group was lost, the port reregistered): those make the next sync
 * join again.
 */
static int ipoib_mcast_sa_event(int status, struct ib_sa_multicast *sa)
{
	struct ipoib_mcast_entry *e = sa->context;

	if (!completion_done(&e->join_done)) {
		e->join_status = status;
		if (!status)
			e->rec = sa->rec;
		complete(&e->join_done);
	} else if (status) {
		WRITE_ONCE(e->state, IPOIB_MC_FAILED);
		ipoib_mcast_kick(e->priv);
	}
	return 0;
}

/* InfiniBand: join through the SA, then attach with the group's MLID. */
static int ipoib_mcast_join_ib(struct ipoib_priv *priv, struct ipoib_mcast *mc,
			       bool sendonly, struct ipoib_ah **ahp)
{
	struct ipoib_mcast_entry *e = to_entry(mc);
	struct ib_sa_mcmember_rec rec = {};
	struct rdma_ah_attr attr;
	struct ib_sa_multicast *sa;
	bool bcast = ipoib_mcast_is_broadcast(priv, &mc->mgid);
	struct ipoib_ah *ah;
	ib_sa_comp_mask mask;
	int ret;

	rec.mgid = mc->mgid;
	rec.port_gid = priv->gid;
	rec.pkey = cpu_to_be16(priv->pkey);
	rec.join_state = sendonly ? 8 : 1;	/* SendOnlyNonMember : Full */
	mask = IB_SA_MCMEMBER_REC_MGID | IB_SA_MCMEMBER_REC_PORT_GID |
	       IB_SA_MCMEMBER_REC_PKEY | IB_SA_MCMEMBER_REC_JOIN_STATE;
	if (!bcast) {
		/* Other groups are created like the broadcast group. */
		rec.qkey = cpu_to_be32(priv->qkey);
		rec.mtu_selector = IB_SA_EQ;
		rec.mtu = priv->mcast_ib_mtu;
		rec.sl = priv->sl;
		rec.rate_selector = IB_SA_EQ;
		rec.rate = IB_RATE_PORT_CURRENT;
		mask |= IB_SA_MCMEMBER_REC_QKEY | IB_SA_MCMEMBER_REC_MTU_SELECTOR |
			IB_SA_MCMEMBER_REC_MTU | IB_SA_MCMEMBER_REC_SL;
	}

	reinit_completion(&e->join_done);
	sa = ib_sa_join_multicast(&ipoib_sa_client, priv->ibdev,
				  priv->port_num, &rec, mask, GFP_KERNEL,
				  ipoib_mcast_sa_event, e);
	if (IS_ERR(sa))
		return PTR_ERR(sa);
	if (!wait_for_completion_timeout(&e->join_done, IPOIB_JOIN_TIMEOUT))
		e->join_status = -ETIMEDOUT;
	if (e->join_status) {
		ret = e->join_status;
		ib_sa_free_multicast(sa);
		return ret;
	}
	mc->sa = sa;
	mc->mlid = be16_to_cpu(e->rec.mlid);

	if (bcast) {
		/* Adopt the broadcast group's parameters (RFC 4391 §5). */
		priv->qkey = be32_to_cpu(e->rec.qkey);
		priv->mcast_ib_mtu = e->rec.mtu;
		priv->sl = e->rec.sl;
	}

	ret = ib_init_ah_from_mcmember(priv->ibdev, priv->port_num, &e->rec,
				       NULL, IB_GID_TYPE_IB, &attr);
	if (ret)
		goto err_free;
	ah = ipoib_ah_create(priv, &attr);
	if (IS_ERR(ah)) {
		ret = PTR_ERR(ah);
		goto err_free;
	}
	if (!sendonly) {
		ret = ib_attach_mcast(priv->qp, &mc->mgid, mc->mlid);
		if (ret) {
			ipoib_ah_put(ah);
			goto err_free;
		}
		mc->attached = true;
	}
	*ahp = ah;
	return 0;

err_free:
	ib_sa_free_multicast(sa);
	mc->sa = NULL;
	return ret;
}

static void ipoib_mcast_join(struct ipoib_priv *priv, struct ipoib_mcast *mc,
			     bool sendonly)
{
	struct ipoib_mcast_entry *e = to_entry(mc);
	struct sk_buff_head waiting;
	struct ipoib_ah *ah = NULL;
	struct sk_buff *skb;
	int ret;

	if (priv->roce)
		ret = ipoib_mcast_join_roce(priv, mc, sendonly, &ah);
	else
		ret = ipoib_mcast_join_ib(priv, mc, sendonly, &ah);
	if (ret) {
		netdev_warn(priv->netdev, "%s of %pI6 failed: %d\n",
			    sendonly ? "send-only join" : "join",
			    mc->mgid.raw, ret);
		e->backoff = clamp(e->backoff * 2, 1U,
				   (unsigned int)IPOIB_JOIN_MAX_BACKOFF);
		e->retry_at = jiffies + e->backoff * HZ;
	} else {
		e->backoff = 0;
	}

	__skb_queue_head_init(&waiting);
	spin_lock_bh(&priv->lock);
	mc->ah = ah;
	e->state = ret ? IPOIB_MC_FAILED :
		   sendonly ? IPOIB_MC_SENDONLY : IPOIB_MC_JOINED;
	skb_queue_splice_init(&e->queue, &waiting);
	spin_unlock_bh(&priv->lock);

	while ((skb = __skb_dequeue(&waiting))) {
		if (ret) {
			ipoib_count_drop(priv, IPOIB_DROP_NO_PATH);
			dev_kfree_skb_any(skb);
		} else {
			dev_queue_xmit(skb);
		}
	}
}

/* Undo a join; the entry stays, back in IDLE. */
static void ipoib_mcast_leave(struct ipoib_priv *priv, struct ipoib_mcast *mc)
{
	struct ipoib_mcast_entry *e = to_entry(mc);
	struct ipoib_ah *ah;

	if (mc->ip_leave) {
		spin_lock_bh(&ipoib_ip6_lock);
		list_add_tail(&mc->ip_leave->node, &ipoib_ip6_leaves);
		spin_unlock_bh(&ipoib_ip6_lock);
		schedule_work(&ipoib_ip6_work);
		mc->ip_leave = NULL;
	}
	if (mc->attached) {
		if (ib_detach_mcast(priv->qp, &mc->mgid, mc->mlid))
			netdev_warn(priv->netdev, "detach from %pI6 failed\n",
				    mc->mgid.raw);
		mc->attached = false;
	}
	if (mc->sa) {
		ib_sa_free_multicast(mc->sa);
		mc->sa = NULL;
	}
	spin_lock_bh(&priv->lock);
	ah = mc->ah;
	mc->ah = NULL;
	e->state = IPOIB_MC_IDLE;
	spin_unlock_bh(&priv->lock);
	ipoib_ah_put(ah);
}

static void ipoib_mcast_free(struct ipoib_priv *priv, struct ipoib_mcast *mc)
{
	struct ipoib_mcast_entry *e = to_entry(mc);

	ipoib_mcast_leave(priv, mc);
	spin_lock_bh(&priv->lock);
	list_del(&mc->node);
	spin_unlock_bh(&priv->lock);
	while (!skb_queue_empty(&e->queue)) {
		ipoib_count_drop(priv, IPOIB_DROP_NO_PATH);
		dev_kfree_skb_any(skb_dequeue(&e->queue));
	}
	kfree(e);
}

/* Mark what the stack wants now: the broadcast group and dev->mc. */
static void ipoib_mcast_mark_wanted(struct ipoib_priv *priv)
{
	struct net_device *dev = priv->netdev;
	struct netdev_hw_addr *ha;
	struct ipoib_mcast *mc;
	union ib_gid mgid;

	netif_addr_lock_bh(dev);
	spin_lock(&priv->lock);
	list_for_each_entry(mc, &priv->mcasts, node)
		mc->wanted = false;

	memcpy(mgid.raw, dev->broadcast + IPOIB_HWADDR_GID_OFF,
	       sizeof(mgid.raw));
	mc = ipoib_mcast_find(priv, &mgid) ?:
	     ipoib_mcast_new(priv, &mgid, GFP_ATOMIC);
	if (mc)
		mc->wanted = true;

	netdev_for_each_mc_addr(ha, dev) {
		memcpy(mgid.raw, ha->addr + IPOIB_HWADDR_GID_OFF,
		       sizeof(mgid.raw));
		if (!ipoib_mgid_valid(&mgid, dev->broadcast))
			continue;
		mc = ipoib_mcast_find(priv, &mgid) ?:
		     ipoib_mcast_new(priv, &mgid, GFP_ATOMIC);
		if (mc)
			mc->wanted = true;
	}
	spin_unlock(&priv->lock);
	netif_addr_unlock_bh(dev);
}

enum ipoib_mc_action { MC_NONE, MC_JOIN, MC_SENDONLY, MC_LEAVE, MC_FREE };

static enum ipoib_mc_action ipoib_mcast_action(struct ipoib_mcast *mc,
					       bool up)
{
	struct ipoib_mcast_entry *e = to_entry(mc);
	int state = READ_ONCE(e->state);

	if (!up)
		return MC_FREE;
	if (state == IPOIB_MC_FAILED) {
		if (!mc->wanted && !e->sendonly)
			return MC_FREE;
		/* Leaving returns it to IDLE, and the next pass joins. */
		return time_after_eq(jiffies, e->retry_at) ? MC_LEAVE : MC_NONE;
	}
	if (mc->wanted)
		return state == IPOIB_MC_JOINED ? MC_NONE :
		       state == IPOIB_MC_IDLE ? MC_JOIN : MC_LEAVE;
	if (e->sendonly)
		return state == IPOIB_MC_SENDONLY ? MC_NONE :
		       state == IPOIB_MC_IDLE ? MC_SENDONLY : MC_LEAVE;
	return MC_FREE;
}

/* Find one group that needs work, and what to do with it. */
static struct ipoib_mcast *ipoib_mcast_next(struct ipoib_priv *priv, bool up,
					    enum ipoib_mc_action *action)
{
	struct ipoib_mcast *mc;

	spin_lock_bh(&priv->lock);
	list_for_each_entry(mc, &priv->mcasts, node) {
		*action = ipoib_mcast_action(mc, up);
		if (*action != MC_NONE) {
			spin_unlock_bh(&priv->lock);
			return mc;
		}
	}
	spin_unlock_bh(&priv->lock);
	return NULL;
}

/*
 * One pass: work on every group that needs it.  With @up false every group
 * is left and freed.  Only this task removes groups, and it runs on an
 * ordered workqueue, so a group found under the lock stays valid while it
 * is worked on.  Returns the earliest time a failed join is due again, or
 * 0.
 */
static unsigned long ipoib_mcast_sync(struct ipoib_priv *priv, bool up)
{
	enum ipoib_mc_action action;
	struct ipoib_mcast *mc;
	unsigned long retry = 0;

	if (up)
		ipoib_mcast_mark_wanted(priv);

	while ((mc = ipoib_mcast_next(priv, up, &action))) {
		switch (action) {
		case MC_JOIN:
			ipoib_mcast_join(priv, mc, false);
			break;
		case MC_SENDONLY:
			ipoib_mcast_join(priv, mc, true);
			break;
		case MC_LEAVE:
			ipoib_mcast_leave(priv, mc);
			break;
		case MC_FREE:
			ipoib_mcast_free(priv, mc);
			break;
		case MC_NONE:
			break;
		}
	}

	spin_lock_bh(&priv->lock);
	list_for_each_entry(mc, &priv->mcasts, node) {
		struct ipoib_mcast_entry *e = to_entry(mc);

		if (e->state == IPOIB_MC_FAILED &&
		    (!retry || time_before(e->retry_at, retry)))
			retry = e->retry_at ?: 1;
	}
	spin_unlock_bh(&priv->lock);
	return retry;
}

/**
 * ipoib_mcast_work - bring the groups in line with what is wanted
 * @work: priv->mcast_work
 *
 * Wanted: the broadcast group and the netdev's multicast list while the
 * interface is up, the port active and the UD QP running; nothing
 * otherwise.  The carrier follows the broadcast group.
 */
void ipoib_mcast_work(struct work_struct *work)
{
	struct ipoib_priv *priv = container_of(to_delayed_work(work),
					       struct ipoib_priv, mcast_work);
	bool up = test_bit(IPOIB_FLAG_OPEN, &priv->flags) &&
		  test_bit(IPOIB_FLAG_PORT_ACTIVE, &priv->flags) &&
		  test_bit(IPOIB_FLAG_UD_UP, &priv->flags);
	struct ipoib_mcast *mc;
	unsigned long retry;
	union ib_gid bcast;
	bool ready = false;

	/* Memberships made with an old GID or before a reregister. */
	if (test_and_clear_bit(IPOIB_FLAG_MCAST_REJOIN, &priv->flags))
		ipoib_mcast_sync(priv, false);
	retry = ipoib_mcast_sync(priv, up);

	memcpy(bcast.raw, priv->netdev->broadcast + IPOIB_HWADDR_GID_OFF,
	       sizeof(bcast.raw));
	spin_lock_bh(&priv->lock);
	mc = ipoib_mcast_find(priv, &bcast);
	if (up && mc && to_entry(mc)->state == IPOIB_MC_JOINED)
		ready = true;
	spin_unlock_bh(&priv->lock);

	if (ready)
		set_bit(IPOIB_FLAG_BCAST_READY, &priv->flags);
	else
		clear_bit(IPOIB_FLAG_BCAST_READY, &priv->flags);
	ipoib_update_carrier(priv);

	if (up && retry)
		queue_delayed_work(priv->wq, &priv->mcast_work,
				   time_after(retry, jiffies) ?
				   retry - jiffies : 0);
}

/* Run the sync soon (after a change of dev->mc, a new send-only group...). */
void ipoib_mcast_kick(struct ipoib_priv *priv)
{
	mod_delayed_work(priv->wq, &priv->mcast_work, 0);
}

/*
 * Leave and forget every group: the interface is going down, so the sync
 * sees it is not wanted up any more.
 */
void ipoib_mcast_stop(struct ipoib_priv *priv)
{
	ipoib_mcast_kick(priv);
	flush_delayed_work(&priv->mcast_work);
}
