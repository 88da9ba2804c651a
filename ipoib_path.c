// SPDX-License-Identifier: GPL-2.0
/*
 * Unicast address resolution: from a peer's GID to an address handle.
 *
 * Paths are cached per destination GID.  The first packet to a new GID
 * starts a resolution on the interface's workqueue and waits, with a few
 * others, on the path; when the address handle exists they are sent again
 * through the queueing layer.
 *   InfiniBand: an SA PathRecord query.
 *   RoCE: the peer's MAC, from its link-local GID (EUI-64).
 * Address handles are reference counted: a send in flight keeps its own
 * reference, and the last one queues the handle for destruction in process
 * context.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/etherdevice.h>
#include <linux/jhash.h>
#include <linux/slab.h>
#include <net/addrconf.h>
#include <rdma/ib_cache.h>

#include "ipoib.h"
#include "ipoib_compat.h"

#define IPOIB_PATH_QUEUE_LEN	8	/* packets per destination QPN */
#define IPOIB_PATH_QUEUE_MAX	256	/* packets per path */
#define IPOIB_PATH_MAX_BACKOFF	16	/* seconds */
#define IPOIB_PATH_IDLE		(60 * HZ)
#define IPOIB_PATH_GC_PERIOD	(30 * HZ)
#define IPOIB_RESOLVE_TIMEOUT	2000	/* ms */
#define IPOIB_RESOLVE_WAIT	(10 * HZ)

/* Address handles */

/**
 * ipoib_ah_create - create a reference-counted address handle
 * @priv: the interface
 * @attr: its attributes, whose references (the GID attribute) are
 *	  released here, whatever the outcome
 */
struct ipoib_ah *ipoib_ah_create(struct ipoib_priv *priv,
				 struct rdma_ah_attr *attr)
{
	struct ipoib_ah *ah;
	int ret;

	ah = kzalloc(sizeof(*ah), GFP_KERNEL);
	if (!ah) {
		ret = -ENOMEM;
		goto out;
	}
	ah->ah = rdma_create_ah(priv->pd, attr, RDMA_CREATE_AH_SLEEPABLE);
	if (IS_ERR(ah->ah)) {
		ret = PTR_ERR(ah->ah);
		kfree(ah);
		goto out;
	}
	kref_init(&ah->ref);
	ah->priv = priv;
	rdma_destroy_ah_attr(attr);
	return ah;
out:
	rdma_destroy_ah_attr(attr);
	return ERR_PTR(ret);
}

static void ipoib_ah_release(struct kref *ref)
{
	struct ipoib_ah *ah = container_of(ref, struct ipoib_ah, ref);
	struct ipoib_priv *priv = ah->priv;

	spin_lock_bh(&priv->lock);
	list_add_tail(&ah->reap_node, &priv->dead_ahs);
	spin_unlock_bh(&priv->lock);
	queue_work(priv->wq, &priv->ah_reap_work);
}

/* Drop a reference; the handle is destroyed later, in process context. */
void ipoib_ah_put(struct ipoib_ah *ah)
{
	if (ah)
		kref_put(&ah->ref, ipoib_ah_release);
}

void ipoib_ah_reap_work(struct work_struct *work)
{
	struct ipoib_priv *priv = container_of(work, struct ipoib_priv,
					       ah_reap_work);
	struct ipoib_ah *ah, *tmp;
	LIST_HEAD(dead);

	spin_lock_bh(&priv->lock);
	list_splice_init(&priv->dead_ahs, &dead);
	spin_unlock_bh(&priv->lock);

	list_for_each_entry_safe(ah, tmp, &dead, reap_node) {
		rdma_destroy_ah(ah->ah, RDMA_DESTROY_AH_SLEEPABLE);
		kfree(ah);
	}
}

/**
 * ipoib_roce_ah_attr - address handle attributes for a RoCE destination
 * @priv: the interface
 * @dgid: the destination GID (unicast or multicast)
 * @dmac: the destination MAC
 * @attr: filled; ipoib_ah_create() releases it
 */
int ipoib_roce_ah_attr(struct ipoib_priv *priv, const union ib_gid *dgid,
		       const u8 *dmac, struct rdma_ah_attr *attr)
{
	union ib_gid gid = *dgid;

	memset(attr, 0, sizeof(*attr));
	attr->type = rdma_ah_find_type(priv->ibdev, priv->port_num);
	rdma_ah_set_port_num(attr, priv->port_num);
	rdma_ah_set_sl(attr, priv->sl);
	rdma_hold_gid_attr(priv->sgid_attr);
	/* Hop limit 0 would keep the packet on this host: use a real one. */
	rdma_move_grh_sgid_attr(attr, &gid, 0, 64, 0, priv->sgid_attr);
	memcpy(attr->roce.dmac, dmac, ETH_ALEN);
	return 0;
}

/* Paths */

static u32 ipoib_path_hash(const union ib_gid *gid)
{
	return jhash(gid->raw, sizeof(gid->raw), 0);
}

static struct ipoib_path *ipoib_path_find(struct ipoib_priv *priv,
					  const union ib_gid *gid)
{
	struct ipoib_path *path;

	hash_for_each_possible(priv->paths, path, node, ipoib_path_hash(gid))
		if (!memcmp(path->dgid.raw, gid->raw, sizeof(gid->raw)))
			return path;
	return NULL;
}

static void ipoib_path_free(struct kref *ref)
{
	struct ipoib_path *path = container_of(ref, struct ipoib_path, ref);

	ipoib_ah_put(path->ah);
	kfree(path->rec);
	kfree(path);
}

static void ipoib_path_put(struct ipoib_path *path)
{
	kref_put(&path->ref, ipoib_path_free);
}

/*
 * Resolution is over: keep the address handle (or the failure), and send
 * again whatever waited for it.
 */
static void ipoib_path_done(struct ipoib_path *path, struct ipoib_ah *ah,
			    int status)
{
	struct ipoib_priv *priv = path->priv;
	struct sk_buff_head waiting;
	struct ipoib_ah *old = NULL;
	struct sk_buff *skb;

	__skb_queue_head_init(&waiting);
	/*
	 * The transmit lock keeps order: from the moment the handle is
	 * published, a new packet would go straight out, so it must not get
	 * there before the ones that waited.  They are sent here, before
	 * ndo_start_xmit can run again.
	 */
	netif_tx_lock_bh(priv->netdev);
	spin_lock(&priv->lock);
	path->resolving = false;
	if (!path->dead && ah) {
		old = path->ah;
		path->ah = ah;
		ah = NULL;
		path->backoff = 0;
	} else if (!ah) {
		path->backoff = clamp(path->backoff * 2, 1U,
				      (unsigned int)IPOIB_PATH_MAX_BACKOFF);
		path->retry_at = jiffies + path->backoff * HZ;
	}
	skb_queue_splice_init(&path->queue, &waiting);
	spin_unlock(&priv->lock);

	while ((skb = __skb_dequeue(&waiting))) {
		if (status || path->dead) {
			ipoib_count_drop(priv, IPOIB_DROP_NO_PATH);
			dev_kfree_skb_any(skb);
		} else {
			ipoib_path_xmit(priv, skb, skb->data);
		}
	}
	netif_tx_unlock_bh(priv->netdev);

	ipoib_ah_put(old);
	ipoib_ah_put(ah);	/* the path died meanwhile */
	if (status)
		netdev_dbg(priv->netdev, "path to %pI6 not resolved: %d\n",
			   path->dgid.raw, status);
	ipoib_path_put(path);
	if (atomic_dec_and_test(&priv->resolving))
		wake_up(&priv->drain_wait);
}

/* fe80::/64 with an EUI-64 interface ID gives the MAC directly. */
bool ipoib_gid_to_mac(const union ib_gid *gid, u8 *mac)
{
	const u8 *g = gid->raw;

	if (g[0] != 0xfe || (g[1] & 0xc0) != 0x80 || g[11] != 0xff ||
	    g[12] != 0xfe)
		return false;
	mac[0] = g[8] ^ 2;
	mac[1] = g[9];
	mac[2] = g[10];
	mac[3] = g[13];
	mac[4] = g[14];
	mac[5] = g[15];
	return true;
}

/* Resolution succeeded: make the address handle and finish the path. */
static void ipoib_path_finish(struct ipoib_path *path,
			      struct rdma_ah_attr *attr)
{
	struct ipoib_ah *ah = ipoib_ah_create(path->priv, attr);

	if (IS_ERR(ah))
		ipoib_path_done(path, NULL, PTR_ERR(ah));
	else
		ipoib_path_done(path, ah, 0);
}

/*
 * RoCE: the GID in an IPoIB link address is the peer's GID index 0, which
 * the RDMA core always builds from the MAC (fe80::/64 and the EUI-64), so
 * the MAC comes straight out of it.
 */
static void ipoib_path_resolve_roce(struct ipoib_path *path)
{
	struct rdma_ah_attr attr;
	u8 mac[ETH_ALEN];

	if (!ipoib_gid_to_mac(&path->dgid, mac)) {
		ipoib_path_done(path, NULL, -EADDRNOTAVAIL);
		return;
	}
	ipoib_roce_ah_attr(path->priv, &path->dgid, mac, &attr);
	ipoib_path_finish(path, &attr);
}

static void ipoib_path_rec_done(int status, struct sa_path_rec *rec,
				IPOIB_SA_NUM_PRS num, void *ctx)
{
	struct ipoib_path *path = ctx;
	struct ipoib_priv *priv = path->priv;
	struct sa_path_rec *copy;
	struct rdma_ah_attr attr;

	spin_lock_bh(&priv->lock);
	path->query = NULL;
	spin_unlock_bh(&priv->lock);
	if (status || !rec || !num) {
		ipoib_path_done(path, NULL, status ?: -EHOSTUNREACH);
		return;
	}
	status = ib_init_ah_attr_from_path(priv->ibdev, priv->port_num, rec,
					   &attr, priv->sgid_attr);
	if (status) {
		ipoib_path_done(path, NULL, status);
		return;
	}
	/* Connected mode dials the peer along the same path. */
	copy = kmemdup(rec, sizeof(*rec), GFP_ATOMIC);
	spin_lock_bh(&priv->lock);
	swap(path->rec, copy);
	spin_unlock_bh(&priv->lock);
	kfree(copy);
	ipoib_path_finish(path, &attr);
}

static void ipoib_path_resolve_ib(struct ipoib_path *path)
{
	struct ipoib_priv *priv = path->priv;
	struct sa_path_rec rec = {};
	int ret;

	rec.rec_type = SA_PATH_REC_TYPE_IB;
	rec.dgid = path->dgid;
	rec.sgid = priv->gid;
	rec.numb_path = 1;
	rec.pkey = cpu_to_be16(priv->pkey);
	ret = ib_sa_path_rec_get(&ipoib_sa_client, priv->ibdev, priv->port_num,
				 &rec,
				 IB_SA_PATH_REC_DGID | IB_SA_PATH_REC_SGID |
				 IB_SA_PATH_REC_NUMB_PATH | IB_SA_PATH_REC_PKEY,
				 IPOIB_RESOLVE_TIMEOUT, GFP_KERNEL,
				 ipoib_path_rec_done, path, &path->query);
	if (ret < 0)
		ipoib_path_done(path, NULL, ret);
	else
		path->query_id = ret;
}

static void ipoib_path_resolve_work(struct work_struct *work)
{
	struct ipoib_path *path = container_of(work, struct ipoib_path,
					       resolve_work);

	if (path->dead)
		ipoib_path_done(path, NULL, -ENETDOWN);
	else if (path->priv->roce)
		ipoib_path_resolve_roce(path);
	else
		ipoib_path_resolve_ib(path);
}

static struct ipoib_path *ipoib_path_new(struct ipoib_priv *priv,
					 const union ib_gid *gid)
{
	struct ipoib_path *path;

	path = kzalloc(sizeof(*path), GFP_ATOMIC);
	if (!path)
		return NULL;
	kref_init(&path->ref);		/* the table's reference */
	path->priv = priv;
	path->dgid = *gid;
	path->retry_at = jiffies;
	skb_queue_head_init(&path->queue);
	INIT_WORK(&path->resolve_work, ipoib_path_resolve_work);
	hash_add(priv->paths, &path->node, ipoib_path_hash(gid));
	return path;
}

/*
 * Whether a path's queue takes no more packets for @qpn.  Every interface
 * behind one GID (a port's own, its P_Key children) shares the path, so
 * the limit is per destination: the first packets to many of them at once
 * all wait for the one resolution.  Queued packets start with the pseudo
 * header, their destination's link address.
 */
static bool ipoib_path_queue_full(struct sk_buff_head *queue, u32 qpn)
{
	struct sk_buff *skb;
	unsigned int n = 0;

	if (skb_queue_len(queue) >= IPOIB_PATH_QUEUE_MAX)
		return true;
	skb_queue_walk(queue, skb)
		if (ipoib_hwaddr_qpn(skb->data) == qpn &&
		    ++n >= IPOIB_PATH_QUEUE_LEN)
			return true;
	return false;
}

/**
 * ipoib_path_xmit - send a unicast packet through its path
 * @priv: the interface
 * @skb: starts with the pseudo header
 * @daddr: the destination link address (inside the pseudo header)
 *
 * Called from ndo_start_xmit.  Consumes @skb.
 */
void ipoib_path_xmit(struct ipoib_priv *priv, struct sk_buff *skb,
		     const u8 *daddr)
{
	u32 qpn = ipoib_hwaddr_qpn(daddr);
	struct ipoib_path *path;
	struct ipoib_ah *ah;
	enum ipoib_drop why;
	union ib_gid gid;

	ipoib_hwaddr_gid(daddr, &gid);
	spin_lock(&priv->lock);
	path = ipoib_path_find(priv, &gid);
	if (!path) {
		path = ipoib_path_new(priv, &gid);
		if (!path) {
			why = IPOIB_DROP_TX_NO_MEM;
			goto drop;
		}
	}
	path->used = jiffies;

	ah = path->ah;
	if (ah) {
		kref_get(&ah->ref);
		spin_unlock(&priv->lock);
		if (!(ipoib_hwaddr_flags(daddr) & IPOIB_FLAG_RC) ||
		    !ipoib_cm_enabled(priv) ||
		    !ipoib_frame_rc_eligible(skb) ||
		    !ipoib_cm_xmit(priv, skb, daddr, ah)) {
			skb_pull(skb, IPOIB_PSEUDO_LEN);
			ipoib_ud_send(priv, skb, ah, qpn);
		}
		ipoib_ah_put(ah);
		return;
	}

	if (!path->resolving && time_after_eq(jiffies, path->retry_at)) {
		path->resolving = true;
		kref_get(&path->ref);
		atomic_inc(&priv->resolving);
		queue_work(priv->wq, &path->resolve_work);
	}
	if (!path->resolving) {
		why = IPOIB_DROP_NO_PATH;
		goto drop;
	}
	if (ipoib_path_queue_full(&path->queue, qpn)) {
		why = IPOIB_DROP_QUEUE_FULL;
		goto drop;
	}
	__skb_queue_tail(&path->queue, skb);
	spin_unlock(&priv->lock);
	return;

drop:
	spin_unlock(&priv->lock);
	ipoib_count_drop(priv, why);
	dev_kfree_skb_any(skb);
}

/**
 * ipoib_path_get_rec - the SA path record to a peer (InfiniBand)
 * @priv: the interface
 * @gid: the peer's GID
 * @rec: filled on success
 *
 * Returns 0, or -EHOSTUNREACH when no resolved path is cached.
 */
int ipoib_path_get_rec(struct ipoib_priv *priv, const union ib_gid *gid,
		       struct sa_path_rec *rec)
{
	struct ipoib_path *path;
	int ret = -EHOSTUNREACH;

	spin_lock_bh(&priv->lock);
	path = ipoib_path_find(priv, gid);
	if (path && path->rec) {
		*rec = *path->rec;
		ret = 0;
	}
	spin_unlock_bh(&priv->lock);
	return ret;
}

/*
 * Remove a path from the table, called with priv->lock held.  Its waiting
 * packets go to @drops and the table's reference to @dead, both to be
 * released by ipoib_path_release_all() once the lock is dropped.
 */
static void ipoib_path_unlink(struct ipoib_priv *priv, struct ipoib_path *path,
			      struct sk_buff_head *drops, struct list_head *dead)
{
	hash_del(&path->node);
	path->dead = true;
	skb_queue_splice_init(&path->queue, drops);
	if (path->resolving && path->query)
		ib_sa_cancel_query(path->query_id, path->query);
	list_add_tail(&path->dead_node, dead);
}

static void ipoib_path_release_all(struct ipoib_priv *priv,
				   struct sk_buff_head *drops,
				   struct list_head *dead)
{
	struct ipoib_path *path, *tmp;
	struct sk_buff *skb;

	while ((skb = __skb_dequeue(drops))) {
		ipoib_count_drop(priv, IPOIB_DROP_NO_PATH);
		dev_kfree_skb_any(skb);
	}
	list_for_each_entry_safe(path, tmp, dead, dead_node) {
		list_del(&path->dead_node);
		ipoib_path_put(path);
	}
}

/* Forget every path, or only those idle for IPOIB_PATH_IDLE. */
static void ipoib_path_prune(struct ipoib_priv *priv, bool all)
{
	struct sk_buff_head drops;
	struct ipoib_path *path;
	struct hlist_node *tmp;
	LIST_HEAD(dead);
	int bkt;

	__skb_queue_head_init(&drops);
	spin_lock_bh(&priv->lock);
	hash_for_each_safe(priv->paths, bkt, tmp, path, node)
		if (all || (!path->resolving &&
			    time_after(jiffies, path->used + IPOIB_PATH_IDLE)))
			ipoib_path_unlink(priv, path, &drops, &dead);
	spin_unlock_bh(&priv->lock);
	ipoib_path_release_all(priv, &drops, &dead);
}

/**
 * ipoib_path_flush - forget every path
 * @priv: the interface
 *
 * On ifdown and whenever what a path was built from may have changed:
 * port state, our GID, the P_Key.  Resolutions in flight finish on dead
 * paths and throw their result away.
 */
void ipoib_path_flush(struct ipoib_priv *priv)
{
	ipoib_path_prune(priv, true);
}

/* Wait until no resolution is in flight (the interface is going away). */
void ipoib_path_wait_resolutions(struct ipoib_priv *priv)
{
	ipoib_path_flush(priv);
	if (!wait_event_timeout(priv->drain_wait,
				!atomic_read(&priv->resolving),
				IPOIB_RESOLVE_WAIT))
		netdev_warn(priv->netdev, "path resolutions still in flight\n");
}

/* Forget paths nobody used for a while; the neighbour cache re-creates them. */
void ipoib_path_gc_work(struct work_struct *work)
{
	struct ipoib_priv *priv = container_of(to_delayed_work(work),
					       struct ipoib_priv, path_gc_work);

	ipoib_path_prune(priv, false);
	queue_delayed_work(priv->wq, &priv->path_gc_work, IPOIB_PATH_GC_PERIOD);
}
