// SPDX-License-Identifier: GPL-2.0
/*
 * P_Key child interfaces and the rtnetlink link type "ipoib".
 *
 * A child is a full interface on its parent's port: its own UD QP, CQs,
 * link address, broadcast group (the MGID carries its P_Key) and
 * connected-mode state.  Children are made through the parent's
 * create_child file (named <parent>.<pkey>) or by iproute2 (ip link add
 * link ibN name NAME type ipoib pkey P mode M), and several may share a
 * P_Key.  The port's own interface carries the same link type, so that
 * "ip -d link show" describes it and "ip link set ... type ipoib mode M"
 * works on it too.
 *
 * A parent's list of children is changed under the RTNL only and read
 * under RCU by the device's event handler.  A child is unregistered by
 * rtnetlink, by delete_child, or by its parent's removal; its resources
 * are released by its priv_destructor once the core is done with it.  The
 * parent counts the children not yet released and waits for that count
 * to reach zero before it goes, so no child outlives its port.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <linux/wait_bit.h>
#include <net/rtnetlink.h>

#include "ipoib.h"
#include "ipoib_compat.h"

/* 0x0000 and 0x8000 are invalid P_Keys (IBA 10.9.1.2). */
bool ipoib_pkey_valid(u16 pkey)
{
	return pkey & 0x7fff;
}

static void ipoib_child_destructor(struct net_device *dev)
{
	struct ipoib_priv *priv = ipoib_priv(dev);
	struct ipoib_priv *ppriv = priv->parent;

	ipoib_netdev_uninit(dev);
	/* wake_up_var() does not touch the parent, which may be gone now. */
	if (atomic_dec_and_test(&ppriv->nr_children))
		wake_up_var(&ppriv->nr_children);
}

/*
 * Set up and register @dev as a child of @ppriv, under the RTNL.  On
 * failure @dev is left unregistered, for the caller to free.
 */
static int ipoib_child_add(struct ipoib_priv *ppriv, struct net_device *dev,
			   u16 pkey, bool connected, bool sysfs,
			   struct netlink_ext_ack *extack)
{
	struct ipoib_priv *priv = ipoib_priv(dev);
	struct ib_port_attr attr = {};
	int ret;

	ASSERT_RTNL();
	if (ppriv->no_children || ppriv->netdev->reg_state != NETREG_REGISTERED) {
		NL_SET_ERR_MSG(extack, "The parent interface is going away");
		return -ENODEV;
	}
	/*
	 * rdma_rxe takes the RTNL to answer ib_query_port(): the port as
	 * the parent knows it, and the child's carrier task queries it when
	 * the child comes up.  The UD MTU is the port's active MTU.
	 */
	attr.state = test_bit(IPOIB_FLAG_PORT_ACTIVE, &ppriv->flags) ?
		     IB_PORT_ACTIVE : IB_PORT_DOWN;
	attr.active_mtu = ib_mtu_int_to_enum(ppriv->ud_mtu + IPOIB_ENCAP_LEN);
	attr.max_mtu = ppriv->max_ib_mtu;
	ret = ipoib_netdev_init(dev, ppriv->port, pkey, connected, &attr);
	if (ret) {
		if (ret == -ENXIO)
			NL_SET_ERR_MSG(extack,
				       "P_Key not in the port's P_Key table");
		netdev_err(ppriv->netdev, "cannot create a child with P_Key 0x%04x: %pe\n",
			   pkey, ERR_PTR(ret));
		return ret;
	}
	priv->parent = ppriv;
	priv->sysfs_child = sysfs;
	ret = register_netdevice(dev);
	if (ret) {
		netdev_err(ppriv->netdev,
			   "child with P_Key 0x%04x not registered: %pe\n",
			   pkey, ERR_PTR(ret));
		ipoib_netdev_uninit(dev);
		return ret;
	}
	/* Set only now: a failed registration may or may not call it. */
	dev->priv_destructor = ipoib_child_destructor;
	dev->needs_free_netdev = true;
	atomic_inc(&ppriv->nr_children);
	list_add_tail_rcu(&priv->child_node, &ppriv->children);
	ipoib_cm_debugfs_add(priv);
	netdev_info(dev, "child of %s, P_Key 0x%04x, UD QPN 0x%06x, %s mode, MTU %u\n",
		    ppriv->netdev->name, pkey, priv->qp->qp_num,
		    priv->cm.admin ? "connected" : "datagram", dev->mtu);
	return 0;
}

/* Queue a child for unregistration, under the RTNL. */
static void ipoib_child_unlink(struct ipoib_priv *priv, struct list_head *kill)
{
	list_del_rcu(&priv->child_node);
	unregister_netdevice_queue(priv->netdev, kill);
}

/**
 * ipoib_child_create - create_child: a child named <parent>.<pkey>
 * @pdev: the port's interface
 * @pkey: valid, full-membership bit set
 *
 * Called under the RTNL.
 */
int ipoib_child_create(struct net_device *pdev, u16 pkey)
{
	struct ipoib_priv *ppriv = ipoib_priv(pdev);
	struct net_device *dev;
	char name[IFNAMSIZ];
	int ret;

	if (snprintf(name, sizeof(name), "%s.%04x", pdev->name, pkey) >=
	    sizeof(name)) {
		netdev_err(pdev, "%s.%04x is too long for an interface name: use ip link add link %s name NAME type ipoib pkey 0x%04x\n",
			   pdev->name, pkey, pdev->name, pkey);
		return -EINVAL;
	}
	if (__dev_get_by_name(dev_net(pdev), name)) {
		netdev_err(pdev, "%s exists; another child with P_Key 0x%04x: ip link add link %s name NAME type ipoib pkey 0x%04x\n",
			   name, pkey, pdev->name, pkey);
		return -EEXIST;
	}
	dev = alloc_netdev(sizeof(struct ipoib_priv), name, NET_NAME_USER,
			   ipoib_setup);
	if (!dev)
		return -ENOMEM;
	dev_net_set(dev, dev_net(pdev));
	ret = ipoib_child_add(ppriv, dev, pkey, ipoib_cm_default, true, NULL);
	if (ret)
		free_netdev(dev);
	return ret;
}

/**
 * ipoib_child_delete - delete_child: remove a child made by create_child
 * @pdev: the port's interface
 * @pkey: valid, full-membership bit set
 *
 * Called under the RTNL.  The child may have been renamed or moved to
 * another namespace since.
 */
int ipoib_child_delete(struct net_device *pdev, u16 pkey)
{
	struct ipoib_priv *ppriv = ipoib_priv(pdev);
	struct ipoib_priv *priv;
	LIST_HEAD(kill);

	list_for_each_entry(priv, &ppriv->children, child_node) {
		if (priv->sysfs_child && priv->pkey == pkey) {
			netdev_info(pdev, "deleting child %s\n",
				    priv->netdev->name);
			ipoib_child_unlink(priv, &kill);
			unregister_netdevice_many(&kill);
			return 0;
		}
	}
	netdev_err(pdev, "no child with P_Key 0x%04x made by create_child (ip link del removes the others)\n",
		   pkey);
	return -ENODEV;
}

/**
 * ipoib_port_close_all - begin closing the connections of a port's
 *	interface and of its children
 * @priv: the port's interface, about to go; RTNL held
 *
 * Their teardowns run side by side, each on its interface's reaper,
 * while the interfaces are unregistered one after another: removing a
 * port with many children takes the longest of them, not their sum.
 */
void ipoib_port_close_all(struct ipoib_priv *priv)
{
	struct ipoib_priv *child;

	ASSERT_RTNL();
	ipoib_cm_close_all(priv);
	list_for_each_entry(child, &priv->children, child_node)
		ipoib_cm_close_all(child);
}

/**
 * ipoib_children_remove - unregister every child of a port's interface
 * @priv: the port's interface, about to be unregistered
 *
 * Returns once every child has released its resources.
 */
void ipoib_children_remove(struct ipoib_priv *priv)
{
	struct ipoib_priv *child, *tmp;
	LIST_HEAD(kill);

	rtnl_lock();
	priv->no_children = true;
	list_for_each_entry_safe(child, tmp, &priv->children, child_node)
		ipoib_child_unlink(child, &kill);
	unregister_netdevice_many(&kill);
	rtnl_unlock();
	/* Children deleted just before by others may still be releasing. */
	wait_var_event(&priv->nr_children, !atomic_read(&priv->nr_children));
}

/* rtnetlink */

static const struct nla_policy ipoib_link_policy[IFLA_IPOIB_MAX + 1] = {
	[IFLA_IPOIB_PKEY]	= { .type = NLA_U16 },
	[IFLA_IPOIB_MODE]	= { .type = NLA_U16 },
	[IFLA_IPOIB_UMCAST]	= { .type = NLA_U16 },
};

/* Check the attributes that both newlink and changelink accept. */
static int ipoib_link_check(struct net_device *ref, struct nlattr *data[],
			    bool *connected, struct netlink_ext_ack *extack)
{
	u16 v;

	if (!data)
		return 0;
	if (data[IFLA_IPOIB_MODE]) {
		v = nla_get_u16(data[IFLA_IPOIB_MODE]);
		if (v != IPOIB_MODE_DATAGRAM && v != IPOIB_MODE_CONNECTED) {
			NL_SET_ERR_MSG_ATTR(extack, data[IFLA_IPOIB_MODE],
					    "mode must be datagram or connected");
			netdev_err(ref, "unknown IPoIB mode %u\n", v);
			return -EINVAL;
		}
		*connected = v == IPOIB_MODE_CONNECTED;
	}
	if (data[IFLA_IPOIB_UMCAST] && nla_get_u16(data[IFLA_IPOIB_UMCAST])) {
		NL_SET_ERR_MSG_ATTR(extack, data[IFLA_IPOIB_UMCAST],
				    "umcast is not supported by ipoib_cm");
		netdev_err(ref, "umcast is not supported\n");
		return -EOPNOTSUPP;
	}
	return 0;
}

/* rtnl_link_ops.newlink, through ipoib_newlink() (ipoib_compat.h). */
int ipoib_link_new(struct net *link_net, struct net_device *dev,
		   struct nlattr *tb[], struct nlattr *data[],
		   struct netlink_ext_ack *extack)
{
	bool connected = ipoib_cm_default;
	struct ipoib_priv *ppriv;
	struct net_device *pdev;
	u16 pkey;
	int ret;

	if (!tb[IFLA_LINK]) {
		NL_SET_ERR_MSG(extack,
			       "An IPoIB child needs a parent: ip link add link ibN ...");
		return -EINVAL;
	}
	pdev = __dev_get_by_index(link_net, nla_get_u32(tb[IFLA_LINK]));
	if (!pdev) {
		NL_SET_ERR_MSG(extack, "No such parent interface");
		return -ENODEV;
	}
	if (pdev->rtnl_link_ops != &ipoib_link_ops) {
		NL_SET_ERR_MSG(extack,
			       "The parent is not an ipoib_cm interface");
		return -EINVAL;
	}
	ppriv = ipoib_priv(pdev);
	if (ppriv->parent) {
		NL_SET_ERR_MSG(extack,
			       "The parent is a child itself: use the port's interface");
		netdev_err(pdev, "a child cannot have children\n");
		return -EINVAL;
	}
	/*
	 * The link address is the child's UD QPN and the port's GID, made
	 * once the QP exists: one asked for is ignored, as the in-kernel
	 * driver does.  systemd-networkd asks for one for every .netdev it
	 * creates, so refusing it would refuse networkd's children.
	 */
	if (tb[IFLA_ADDRESS]) {
		netdev_info(pdev, "a child's link address is its UD QPN and the port's GID: the address given for %s is ignored\n",
			    dev->name);
		dev->addr_assign_type = NET_ADDR_PERM;
	}

	pkey = ppriv->pkey;
	if (data && data[IFLA_IPOIB_PKEY]) {
		pkey = nla_get_u16(data[IFLA_IPOIB_PKEY]);
		if (!ipoib_pkey_valid(pkey)) {
			NL_SET_ERR_MSG_ATTR(extack, data[IFLA_IPOIB_PKEY],
					    "P_Keys 0x0000 and 0x8000 are invalid");
			netdev_err(pdev, "P_Key 0x%04x is invalid (0x0000 and 0x8000 are reserved)\n",
				   pkey);
			return -EINVAL;
		}
	}
	ret = ipoib_link_check(pdev, data, &connected, extack);
	if (ret)
		return ret;
	return ipoib_child_add(ppriv, dev, pkey | 0x8000, connected, false,
			       extack);
}

static int ipoib_changelink(struct net_device *dev, struct nlattr *tb[],
			    struct nlattr *data[],
			    struct netlink_ext_ack *extack)
{
	struct ipoib_priv *priv = ipoib_priv(dev);
	bool connected = priv->cm.admin;
	int ret;

	if (!data)
		return 0;
	if (data[IFLA_IPOIB_PKEY] &&
	    (nla_get_u16(data[IFLA_IPOIB_PKEY]) | 0x8000) != priv->pkey) {
		NL_SET_ERR_MSG_ATTR(extack, data[IFLA_IPOIB_PKEY],
				    "The P_Key of an interface cannot change");
		netdev_err(dev, "the P_Key cannot change: create another child\n");
		return -EOPNOTSUPP;
	}
	ret = ipoib_link_check(dev, data, &connected, extack);
	if (ret)
		return ret;
	return ipoib_set_mode(priv, connected);
}

static void ipoib_dellink(struct net_device *dev, struct list_head *head)
{
	struct ipoib_priv *priv = ipoib_priv(dev);

	if (!priv->parent) {
		netdev_warn(dev, "the interface of a port is not deleted: remove the RDMA device or unload ipoib_cm\n");
		return;
	}
	ipoib_child_unlink(priv, head);
}

static size_t ipoib_get_size(const struct net_device *dev)
{
	return nla_total_size(sizeof(u16)) +	/* IFLA_IPOIB_PKEY */
	       nla_total_size(sizeof(u16)) +	/* IFLA_IPOIB_MODE */
	       nla_total_size(sizeof(u16));	/* IFLA_IPOIB_UMCAST */
}

static int ipoib_fill_info(struct sk_buff *skb, const struct net_device *dev)
{
	struct ipoib_priv *priv = ipoib_priv(dev);
	u16 mode = READ_ONCE(priv->cm.admin) ? IPOIB_MODE_CONNECTED :
					       IPOIB_MODE_DATAGRAM;

	if (nla_put_u16(skb, IFLA_IPOIB_PKEY, priv->pkey) ||
	    nla_put_u16(skb, IFLA_IPOIB_MODE, mode) ||
	    nla_put_u16(skb, IFLA_IPOIB_UMCAST, 0))
		return -EMSGSIZE;
	return 0;
}

static struct net *ipoib_get_link_net(const struct net_device *dev)
{
	struct ipoib_priv *priv = ipoib_priv(dev);

	return dev_net(priv->parent ? priv->parent->netdev : dev);
}

struct rtnl_link_ops ipoib_link_ops __read_mostly = {
	.kind		= "ipoib",
	.priv_size	= sizeof(struct ipoib_priv),
	.setup		= ipoib_setup,
	/* A dying namespace gives ports' interfaces back to init_net. */
	.netns_refund	= true,
	.maxtype	= IFLA_IPOIB_MAX,
	.policy		= ipoib_link_policy,
	.newlink	= ipoib_newlink,
	.changelink	= ipoib_changelink,
	.dellink	= ipoib_dellink,
	.get_size	= ipoib_get_size,
	.fill_info	= ipoib_fill_info,
	.get_link_net	= ipoib_get_link_net,
};

int ipoib_link_register(void)
{
	int ret = rtnl_link_register(&ipoib_link_ops);

	if (ret == -EEXIST)
		pr_err("the link type \"ipoib\" is taken, most likely by ib_ipoib: unload it (modprobe -r ib_ipoib) and blacklist it (echo blacklist ib_ipoib > /etc/modprobe.d/ipoib_cm.conf) before loading ipoib_cm\n");
	else if (ret)
		pr_err("cannot register the link type \"ipoib\" (%d)\n", ret);
	return ret;
}

void ipoib_link_unregister(void)
{
	rtnl_link_unregister(&ipoib_link_ops);
}
