// SPDX-License-Identifier: GPL-2.0
/*
 * The network interface: one ibN per port, transmit dispatch (to a group
 * or a unicast path), MTU, statistics, carrier and port events.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/etherdevice.h>
#include <linux/if_arp.h>
#include <linux/if_infiniband.h>
#include <linux/rtnetlink.h>
#include <rdma/ib_cache.h>

#include "ipoib.h"
#include "ipoib_compat.h"

static netdev_tx_t ipoib_start_xmit(struct sk_buff *skb,
				    struct net_device *dev)
{
	struct ipoib_priv *priv = ipoib_priv(dev);
	const u8 *daddr;

	if (unlikely(skb->len < IPOIB_HARD_LEN)) {
		ipoib_count_drop(priv, IPOIB_DROP_BAD_ADDR);
		dev_kfree_skb_any(skb);
		return NETDEV_TX_OK;
	}
	daddr = skb->data;
	if (ipoib_hwaddr_qpn(daddr) == IPOIB_MCAST_QPN &&
	    daddr[IPOIB_HWADDR_GID_OFF] == 0xff)
		ipoib_mcast_xmit(priv, skb, daddr);
	else
		ipoib_path_xmit(priv, skb, daddr);
	return NETDEV_TX_OK;
}

/*
 * Set the carrier from the flags.  Whoever changes one of them calls this
 * afterwards; under carrier_lock the last call sees every change, where
 * an updater that read the flags before another's change could otherwise
 * undo the carrier that one had just set (seen: "carrier on" logged, the
 * carrier left off for good).
 */
void ipoib_update_carrier(struct ipoib_priv *priv)
{
	unsigned long flags;

	spin_lock_irqsave(&priv->carrier_lock, flags);
	if (test_bit(IPOIB_FLAG_OPEN, &priv->flags) &&
	    test_bit(IPOIB_FLAG_PORT_ACTIVE, &priv->flags) &&
	    test_bit(IPOIB_FLAG_BCAST_READY, &priv->flags)) {
		if (!netif_carrier_ok(priv->netdev))
			netdev_info(priv->netdev, "carrier on\n");
		netif_carrier_on(priv->netdev);
	} else {
		netif_carrier_off(priv->netdev);
	}
	spin_unlock_irqrestore(&priv->carrier_lock, flags);
}

static int ipoib_open(struct net_device *dev)
{
	struct ipoib_priv *priv = ipoib_priv(dev);
	int ret;

	netif_carrier_off(dev);
	mutex_lock(&priv->transport_lock);
	ret = ipoib_ud_start(priv);
	if (!ret) {
		ret = ipoib_cm_start(priv);
		if (ret)
			ipoib_ud_stop(priv);
	}
	mutex_unlock(&priv->transport_lock);
	if (ret)
		return ret;
	set_bit(IPOIB_FLAG_OPEN, &priv->flags);
	ipoib_mcast_kick(priv);
	schedule_work(&priv->carrier_work);
	queue_delayed_work(priv->wq, &priv->path_gc_work, 30 * HZ);
	return 0;
}

static int ipoib_stop(struct net_device *dev)
{
	struct ipoib_priv *priv = ipoib_priv(dev);

	clear_bit(IPOIB_FLAG_OPEN, &priv->flags);
	ipoib_update_carrier(priv);	/* off, after any update before */
	netif_tx_disable(dev);
	cancel_delayed_work_sync(&priv->path_gc_work);
	ipoib_mcast_stop(priv);
	mutex_lock(&priv->transport_lock);
	/* Connections first: their waiting packets may still go over UD. */
	ipoib_cm_stop(priv);
	mutex_unlock(&priv->transport_lock);
	ipoib_path_flush(priv);
	mutex_lock(&priv->transport_lock);
	ipoib_ud_stop(priv);
	mutex_unlock(&priv->transport_lock);
	/* Address handles released by the last sends. */
	flush_work(&priv->ah_reap_work);
	return 0;
}

static void ipoib_set_rx_mode(struct net_device *dev)
{
	ipoib_mcast_kick(ipoib_priv(dev));
}

static int ipoib_change_mtu(struct net_device *dev, int new_mtu)
{
	struct ipoib_priv *priv = ipoib_priv(dev);

	unsigned int limit = priv->cm.admin ? priv->cm.max_mtu : priv->ud_mtu;

	/* The core checks the range against dev->max_mtu already. */
	if (new_mtu > limit) {
		netdev_err(dev, "MTU %d exceeds %u, the largest in %s mode\n",
			   new_mtu, limit,
			   priv->cm.admin ? "connected" : "datagram");
		return -EINVAL;
	}
	WRITE_ONCE(dev->mtu, new_mtu);
	return 0;
}

static void ipoib_get_stats64(struct net_device *dev,
			      struct rtnl_link_stats64 *stats)
{
	struct ipoib_priv *priv = ipoib_priv(dev);
	unsigned int start;
	u64 d[IPOIB_DROP_MAX];
	int i;

	do {
		start = u64_stats_fetch_begin(&priv->stats.syncp);
		stats->rx_packets = u64_stats_read(&priv->stats.rx_packets);
		stats->rx_bytes = u64_stats_read(&priv->stats.rx_bytes);
		stats->tx_packets = u64_stats_read(&priv->stats.tx_packets);
		stats->tx_bytes = u64_stats_read(&priv->stats.tx_bytes);
		stats->multicast = u64_stats_read(&priv->stats.multicast);
	} while (u64_stats_fetch_retry(&priv->stats.syncp, start));

	/* Connected mode keeps its own counters. */
	stats->rx_packets += atomic64_read(&priv->cm.stats[IPOIB_CM_ST_RX_PACKETS]);
	stats->rx_bytes += atomic64_read(&priv->cm.stats[IPOIB_CM_ST_RX_BYTES]);
	stats->tx_packets += atomic64_read(&priv->cm.stats[IPOIB_CM_ST_TX_PACKETS]);
	stats->tx_bytes += atomic64_read(&priv->cm.stats[IPOIB_CM_ST_TX_BYTES]);

	for (i = 0; i < IPOIB_DROP_MAX; i++)
		d[i] = atomic64_read(&priv->drops[i]);

	stats->rx_length_errors = d[IPOIB_DROP_TRUNCATED];
	stats->rx_frame_errors = d[IPOIB_DROP_BAD_GRH];
	stats->rx_errors = d[IPOIB_DROP_TRUNCATED] + d[IPOIB_DROP_BAD_GRH] +
			   d[IPOIB_DROP_RX_ERROR];
	stats->rx_dropped = d[IPOIB_DROP_ETHERTYPE] + d[IPOIB_DROP_NO_MEM];
	stats->tx_errors = d[IPOIB_DROP_TX_ERROR] + d[IPOIB_DROP_BAD_ADDR];
	stats->tx_dropped = d[IPOIB_DROP_NO_PATH] + d[IPOIB_DROP_QUEUE_FULL] +
			    d[IPOIB_DROP_TOO_BIG] + d[IPOIB_DROP_NOT_READY] +
			    d[IPOIB_DROP_TX_ERROR] + d[IPOIB_DROP_BAD_ADDR] +
			    d[IPOIB_DROP_TX_NO_MEM];
}

static void ipoib_tx_timeout(struct net_device *dev, unsigned int txqueue)
{
	struct ipoib_priv *priv = ipoib_priv(dev);

	netdev_warn(dev, "transmit timeout: %u sends outstanding\n",
		    READ_ONCE(priv->tx_head) - READ_ONCE(priv->tx_tail));
	queue_work(priv->wq, &priv->restart_work);
}

/* A child's link is its parent, wherever each of them lives now. */
static int ipoib_get_iflink(const struct net_device *dev)
{
	struct ipoib_priv *priv = ipoib_priv(dev);

	if (priv->parent)
		return READ_ONCE(priv->parent->netdev->ifindex);
	return READ_ONCE(dev->ifindex);
}

static const struct net_device_ops ipoib_netdev_ops = {
	.ndo_open		= ipoib_open,
	.ndo_stop		= ipoib_stop,
	.ndo_start_xmit		= ipoib_start_xmit,
	.ndo_set_rx_mode	= ipoib_set_rx_mode,
	.ndo_change_mtu		= ipoib_change_mtu,
	.ndo_get_stats64	= ipoib_get_stats64,
	.ndo_tx_timeout		= ipoib_tx_timeout,
	.ndo_get_iflink		= ipoib_get_iflink,
};

/* Also the rtnl_link_ops setup of children that iproute2 creates. */
void ipoib_setup(struct net_device *dev)
{
	dev->netdev_ops = &ipoib_netdev_ops;
	dev->ethtool_ops = &ipoib_ethtool_ops;
	dev->header_ops = &ipoib_header_ops;
	dev->type = ARPHRD_INFINIBAND;
	dev->addr_len = IPOIB_HWADDR_LEN;
	dev->hard_header_len = IPOIB_HARD_LEN;
	dev->flags = IFF_BROADCAST | IFF_MULTICAST;
	dev->watchdog_timeo = 5 * HZ;
	/* Set here: a zero length now would make the device queue-less. */
	dev->tx_queue_len = ipoib_sendq_size * 2;
	dev->features = NETIF_F_VLAN_CHALLENGED | NETIF_F_HIGHDMA;
	dev->min_mtu = ETH_MIN_MTU;
	netif_keep_dst(dev);
}

/*
 * Port state and GID changes, in process context.  This runs on the system
 * workqueue, not priv->wq: it needs the RTNL (rxe even takes it to answer
 * ib_query_port()), and ndo_stop, called under the RTNL, waits for work
 * on priv->wq.
 */
static void ipoib_carrier_work(struct work_struct *work)
{
	struct ipoib_priv *priv = container_of(work, struct ipoib_priv,
					       carrier_work);
	struct ib_port_attr attr;
	union ib_gid gid;
	bool active;

	if (ib_query_port(priv->ibdev, priv->port_num, &attr))
		return;
	active = attr.state == IB_PORT_ACTIVE;

	if (!rdma_query_gid(priv->ibdev, priv->port_num, 0, &gid) &&
	    memcmp(gid.raw, priv->gid.raw, sizeof(gid.raw))) {
		const struct ib_gid_attr *sgid;
		u8 addr[IPOIB_HWADDR_LEN];

		sgid = rdma_get_gid_attr(priv->ibdev, priv->port_num, 0);
		if (!IS_ERR(sgid)) {
			netdev_info(priv->netdev, "port GID changed to %pI6\n",
				    gid.raw);
			rtnl_lock();
			rdma_put_gid_attr(priv->sgid_attr);
			priv->sgid_attr = sgid;
			priv->gid = sgid->gid;
			memcpy(addr, priv->netdev->dev_addr, sizeof(addr));
			ipoib_hwaddr_build(addr, ipoib_hwaddr_flags(addr),
					   priv->qp->qp_num, &priv->gid);
			dev_addr_set(priv->netdev, addr);
			call_netdevice_notifiers(NETDEV_CHANGEADDR,
						 priv->netdev);
			rtnl_unlock();
			ipoib_path_flush(priv);
			/* Groups were joined with the old GID: join again. */
			set_bit(IPOIB_FLAG_MCAST_REJOIN, &priv->flags);
			ipoib_mcast_kick(priv);
		}
	}

	if (active != test_bit(IPOIB_FLAG_PORT_ACTIVE, &priv->flags)) {
		netdev_info(priv->netdev, "port %u is %s\n", priv->port_num,
			    active ? "active" : "down");
		if (active)
			set_bit(IPOIB_FLAG_PORT_ACTIVE, &priv->flags);
		else
			clear_bit(IPOIB_FLAG_PORT_ACTIVE, &priv->flags);
		if (!active)
			ipoib_path_flush(priv);
		ipoib_mcast_kick(priv);
	}
	ipoib_update_carrier(priv);
}

/* Called from the device's event handler, in atomic context. */
void ipoib_netdev_event(struct net_device *netdev, enum ib_event_type type)
{
	struct ipoib_priv *priv = ipoib_priv(netdev);
	struct ipoib_priv *child;

	switch (type) {
	case IB_EVENT_PORT_ACTIVE:
	case IB_EVENT_PORT_ERR:
	case IB_EVENT_GID_CHANGE:
	case IB_EVENT_LID_CHANGE:
	case IB_EVENT_PKEY_CHANGE:
	case IB_EVENT_SM_CHANGE:
	case IB_EVENT_CLIENT_REREGISTER:
		schedule_work(&priv->carrier_work);
		/* The P_Key children share the port. */
		rcu_read_lock();
		list_for_each_entry_rcu(child, &priv->children, child_node)
			schedule_work(&child->carrier_work);
		rcu_read_unlock();
		break;
	default:
		break;
	}
}

static int ipoib_priv_init(struct ipoib_priv *priv, struct ipoib_port *port,
			   u16 pkey, const struct ib_port_attr *attr)
{
	struct ib_device *ibdev = port->dev->ibdev;
	int ret;

	priv->port = port;
	priv->ibdev = ibdev;
	priv->port_num = port->port_num;
	priv->roce = port->roce;
	spin_lock_init(&priv->lock);
	spin_lock_init(&priv->carrier_lock);
	mutex_init(&priv->transport_lock);
	hash_init(priv->paths);
	INIT_LIST_HEAD(&priv->mcasts);
	INIT_LIST_HEAD(&priv->dead_ahs);
	init_waitqueue_head(&priv->drain_wait);
	u64_stats_init(&priv->stats.syncp);
	INIT_DELAYED_WORK(&priv->mcast_work, ipoib_mcast_work);
	INIT_WORK(&priv->carrier_work, ipoib_carrier_work);
	INIT_WORK(&priv->restart_work, ipoib_ud_restart_work);
	INIT_WORK(&priv->ah_reap_work, ipoib_ah_reap_work);
	INIT_DELAYED_WORK(&priv->path_gc_work, ipoib_path_gc_work);
	INIT_LIST_HEAD(&priv->children);
	INIT_LIST_HEAD(&priv->child_node);

	/*
	 * Until an InfiniBand broadcast join says otherwise (RoCE has no SA),
	 * the link runs at the port's MTU.  The P_Key must be in the port's
	 * table now: the UD QP is bound to its index.
	 */
	priv->pkey = pkey;
	ret = ib_find_cached_pkey(ibdev, priv->port_num, priv->pkey,
				  &priv->pkey_index);
	if (ret) {
		dev_warn(&ibdev->dev, "port %u: P_Key 0x%04x is not in the port's P_Key table\n",
			 priv->port_num, pkey);
		return -ENXIO;
	}
	priv->qkey = ipoib_roce_qkey;
	priv->mcast_ib_mtu = attr->active_mtu;
	priv->max_ib_mtu = attr->max_mtu;
	priv->ud_mtu = ib_mtu_enum_to_int(attr->active_mtu) - IPOIB_ENCAP_LEN;
	if (attr->state == IB_PORT_ACTIVE)
		set_bit(IPOIB_FLAG_PORT_ACTIVE, &priv->flags);

	priv->sgid_attr = rdma_get_gid_attr(ibdev, priv->port_num, 0);
	if (IS_ERR(priv->sgid_attr)) {
		ret = PTR_ERR(priv->sgid_attr);
		priv->sgid_attr = NULL;
		return ret;
	}
	priv->gid = priv->sgid_attr->gid;

	priv->wq = alloc_ordered_workqueue("%s-%s-%u", WQ_MEM_RECLAIM, DRV_NAME,
					   dev_name(&ibdev->dev),
					   priv->port_num);
	if (!priv->wq) {
		rdma_put_gid_attr(priv->sgid_attr);
		return -ENOMEM;
	}
	return 0;
}

static void ipoib_priv_cleanup(struct ipoib_priv *priv)
{
	destroy_workqueue(priv->wq);
	rdma_put_gid_attr(priv->sgid_attr);
}

/**
 * ipoib_netdev_init - set up an allocated interface, before registration
 * @dev: from alloc_netdev() (or rtnetlink) with ipoib_setup()
 * @port: its port
 * @pkey: its P_Key, full-membership bit set
 * @connected: start in connected mode
 * @attr: the port's state, active and largest MTU
 *
 * Undone by ipoib_netdev_uninit(), also after a failed registration.
 * Makes no ib_query_port() call, which rdma_rxe answers under the RTNL:
 * children are created with the RTNL held.
 */
int ipoib_netdev_init(struct net_device *dev, struct ipoib_port *port,
		      u16 pkey, bool connected,
		      const struct ib_port_attr *attr)
{
	struct ib_device *ibdev = port->dev->ibdev;
	struct ipoib_priv *priv = ipoib_priv(dev);
	u8 addr[IPOIB_HWADDR_LEN];
	int ret;

	priv->netdev = dev;
	ret = ipoib_priv_init(priv, port, pkey, attr);
	if (ret)
		return ret;
	ret = ipoib_ud_init(priv);
	if (ret)
		goto err_priv;
	ret = ipoib_cm_init(priv);
	if (ret)
		goto err_ud;
	priv->cm.admin = connected;

	dev->max_mtu = priv->cm.admin ? priv->cm.max_mtu : priv->ud_mtu;
	/* rtnetlink may have set an MTU already. */
	if (!dev->mtu || dev->mtu > dev->max_mtu)
		dev->mtu = dev->max_mtu;
	if (priv->max_send_sge > 1)
		dev->features |= NETIF_F_SG;
	dev->hw_features = dev->features;
	dev->dev_port = priv->port_num - 1;
	/*
	 * The HCA is the parent, as for other network devices; not the RDMA
	 * device, whose sysfs directory is tagged with its network namespace
	 * and would hide ours once moved to another one.
	 */
	if (ibdev->dev.parent)
		SET_NETDEV_DEV(dev, ibdev->dev.parent);

	ipoib_hwaddr_build(addr, priv->cm.admin ? IPOIB_FLAG_RC : 0,
			   priv->qp->qp_num, &priv->gid);
	dev_addr_set(dev, addr);
	ipoib_broadcast_build(dev->broadcast, 2, priv->pkey);
	dev->sysfs_groups[0] = &ipoib_attr_group;
	dev->rtnl_link_ops = &ipoib_link_ops;
	return 0;

err_ud:
	ipoib_ud_cleanup(priv);
err_priv:
	ipoib_priv_cleanup(priv);
	return ret;
}

/**
 * ipoib_netdev_uninit - release what ipoib_netdev_init() set up
 * @dev: unregistered, or never registered
 */
void ipoib_netdev_uninit(struct net_device *dev)
{
	struct ipoib_priv *priv = ipoib_priv(dev);

	ipoib_cm_debugfs_del(priv);
	/* First the port task: it may kick the multicast task. */
	cancel_work_sync(&priv->carrier_work);
	cancel_delayed_work_sync(&priv->mcast_work);
	cancel_delayed_work_sync(&priv->path_gc_work);
	cancel_work_sync(&priv->restart_work);
	ipoib_path_wait_resolutions(priv);
	/* Address handles freed by the last resolutions and sends. */
	flush_workqueue(priv->wq);
	ipoib_cm_cleanup(priv);
	ipoib_ud_cleanup(priv);
	ipoib_priv_cleanup(priv);
}

/**
 * ipoib_netdev_create - create and register the interface of a port
 * @port: the port
 */
struct net_device *ipoib_netdev_create(struct ipoib_port *port)
{
	struct ib_device *ibdev = port->dev->ibdev;
	struct ib_port_attr attr;
	struct ipoib_priv *priv;
	struct net_device *dev;
	int ret;

	ret = ib_query_port(ibdev, port->port_num, &attr);
	if (ret)
		return ERR_PTR(ret);
	dev = alloc_netdev(sizeof(*priv), "ib%d", NET_NAME_UNKNOWN,
			   ipoib_setup);
	if (!dev)
		return ERR_PTR(-ENOMEM);
	priv = ipoib_priv(dev);

	ret = ipoib_netdev_init(dev, port, IPOIB_DEFAULT_PKEY,
				ipoib_cm_default, &attr);
	if (ret)
		goto err_free;

	ret = register_netdev(dev);
	if (ret)
		goto err_uninit;
	ipoib_cm_debugfs_add(priv);
	netdev_info(dev, "%s port %u, %s, UD QPN 0x%06x, MTU %u\n",
		    dev_name(&ibdev->dev), priv->port_num,
		    priv->roce ? "RoCE" : "InfiniBand", priv->qp->qp_num,
		    priv->ud_mtu);
	return dev;

err_uninit:
	ipoib_netdev_uninit(dev);
err_free:
	free_netdev(dev);
	return ERR_PTR(ret);
}

/* Unregister and free an interface and its children: the port goes away. */
void ipoib_netdev_destroy(struct net_device *dev)
{
	ipoib_children_remove(ipoib_priv(dev));
	ipoib_cm_debugfs_del(ipoib_priv(dev));
	unregister_netdev(dev);
	ipoib_netdev_uninit(dev);
	free_netdev(dev);
}
