// SPDX-License-Identifier: GPL-2.0
/*
 * Module entry points and the RDMA client: which devices and ports
 * ipoib_cm binds to.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt
#define dev_fmt(fmt) pr_fmt(fmt)

#include <linux/log2.h>
#include <linux/module.h>
#include <linux/rtnetlink.h>
#include <linux/slab.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

#include "ipoib.h"
#include "ipoib_compat.h"

static struct ib_client ipoib_client;
struct ib_sa_client ipoib_sa_client;

unsigned int ipoib_sendq_size = 256;
unsigned int ipoib_recvq_size = 256;
unsigned int ipoib_roce_qkey = 0x0000000b;

static int ipoib_param_ring_set(const char *val, const struct kernel_param *kp)
{
	unsigned int n;
	int ret;

	ret = kstrtouint(val, 0, &n);
	if (ret)
		return ret;
	if (n < IPOIB_RING_MIN || n > IPOIB_RING_MAX) {
		pr_err("%s must be between %u and %u, not %u\n",
		       kp->name, IPOIB_RING_MIN, IPOIB_RING_MAX, n);
		return -EINVAL;
	}
	*(unsigned int *)kp->arg = roundup_pow_of_two(n);
	return 0;
}

static const struct kernel_param_ops ipoib_param_ring_ops = {
	.set = ipoib_param_ring_set,
	.get = param_get_uint,
};

module_param_cb(send_queue_size, &ipoib_param_ring_ops, &ipoib_sendq_size,
		0444);
__MODULE_PARM_TYPE(send_queue_size, "uint");
MODULE_PARM_DESC(send_queue_size,
		 "Send ring size in entries, per interface (UD) and per sending RC connection: 16-8192, rounded up to a power of two (default 256)");
module_param_cb(recv_queue_size, &ipoib_param_ring_ops, &ipoib_recvq_size,
		0444);
__MODULE_PARM_TYPE(recv_queue_size, "uint");
MODULE_PARM_DESC(recv_queue_size,
		 "Receive ring size in buffers, per interface (UD, one IB MTU each) and for connected mode (64 KiB each, the SRQ or each accepted QP): 16-8192, rounded up to a power of two (default 256)");
module_param_named(roce_qkey, ipoib_roce_qkey, uint, 0444);
MODULE_PARM_DESC(roce_qkey,
		 "Q_Key (32-bit) of IPoIB links on RoCE ports, which have no SA to supply one; the same on every host of the link (default 0x0000000b)");

bool ipoib_cm_default;
bool ipoib_cm_use_srq = true;
bool ipoib_cm_bidirectional;
unsigned int ipoib_cm_max_nosrq = 128;
unsigned int ipoib_cm_nosrq_per_peer = 8;
unsigned int ipoib_cm_nosrq_mem = 256;
unsigned int ipoib_cm_idle_timeout = 300;

static int ipoib_param_mode_set(const char *val, const struct kernel_param *kp)
{
	if (sysfs_streq(val, "connected")) {
		ipoib_cm_default = true;
	} else if (sysfs_streq(val, "datagram")) {
		ipoib_cm_default = false;
	} else {
		pr_err("default_mode must be \"datagram\" or \"connected\"\n");
		return -EINVAL;
	}
	return 0;
}

static int ipoib_param_mode_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n",
			  ipoib_cm_default ? "connected" : "datagram");
}

static const struct kernel_param_ops ipoib_param_mode_ops = {
	.set = ipoib_param_mode_set,
	.get = ipoib_param_mode_get,
};

module_param_cb(default_mode, &ipoib_param_mode_ops, NULL, 0444);
__MODULE_PARM_TYPE(default_mode, "string");
MODULE_PARM_DESC(default_mode,
		 "Mode of new interfaces: \"datagram\" or \"connected\" (default datagram)");
module_param_named(cm_srq, ipoib_cm_use_srq, bool, 0444);
MODULE_PARM_DESC(cm_srq,
		 "Connected mode: 1 shares one receive queue (SRQ) among the RC QPs of an interface if the device has SRQs, 0 gives every RC QP its own receive ring (default 1)");
module_param_named(cm_bidirectional, ipoib_cm_bidirectional, bool, 0444);
MODULE_PARM_DESC(cm_bidirectional,
		 "Connected mode: 1 also sends over connections the peer opened (one connection per peer), 0 only over our own (default 0)");
module_param_named(cm_max_nosrq, ipoib_cm_max_nosrq, uint, 0444);
MODULE_PARM_DESC(cm_max_nosrq,
		 "Connected mode without SRQ: the most connections peers may open to one interface, in connections; more are rejected and served over UD (default 128)");
module_param_named(cm_nosrq_per_peer, ipoib_cm_nosrq_per_peer, uint, 0444);
MODULE_PARM_DESC(cm_nosrq_per_peer,
		 "Connected mode without SRQ: the most connections one peer (GID) may open to one interface; more are rejected and served over UD (default 8)");
/*
 * A budget of no receive buffer would make every switch to connected mode
 * without SRQ, and every ifup in it, fail: refused at load instead.  One
 * MiB holds more than a dozen buffers of the largest size.
 */
static int ipoib_param_mib_set(const char *val, const struct kernel_param *kp)
{
	unsigned int n;
	int ret;

	ret = kstrtouint(val, 0, &n);
	if (ret)
		return ret;
	if (!n) {
		pr_err("%s must be at least 1 (MiB)\n", kp->name);
		return -EINVAL;
	}
	*(unsigned int *)kp->arg = n;
	return 0;
}

static const struct kernel_param_ops ipoib_param_mib_ops = {
	.set = ipoib_param_mib_set,
	.get = param_get_uint,
};

module_param_cb(cm_nosrq_mem, &ipoib_param_mib_ops, &ipoib_cm_nosrq_mem,
		0444);
__MODULE_PARM_TYPE(cm_nosrq_mem, "uint");
MODULE_PARM_DESC(cm_nosrq_mem,
		 "Connected mode without SRQ: the receive buffers of all RC QPs of one interface, opened and accepted, in MiB: 1 or more (default 256)");
module_param_named(cm_idle_timeout, ipoib_cm_idle_timeout, uint, 0644);
MODULE_PARM_DESC(cm_idle_timeout,
		 "Connected mode: seconds without traffic before a connection is closed, 0 never; writable at run time (default 300)");

static const char *ipoib_port_state_name(enum ib_port_state state)
{
	static const char *const names[] = {
		[IB_PORT_NOP]		= "NOP",
		[IB_PORT_DOWN]		= "DOWN",
		[IB_PORT_INIT]		= "INIT",
		[IB_PORT_ARMED]		= "ARMED",
		[IB_PORT_ACTIVE]	= "ACTIVE",
		[IB_PORT_ACTIVE_DEFER]	= "ACTIVE_DEFER",
	};

	if (state < ARRAY_SIZE(names) && names[state])
		return names[state];
	return "UNKNOWN";
}

static const char *ipoib_port_kind(struct ib_device *ibdev, u32 port)
{
	if (rdma_protocol_ib(ibdev, port))
		return "InfiniBand";
	if (rdma_protocol_roce(ibdev, port))
		return "RoCE";
	return NULL;
}

/*
 * IPoIB needs a UD QP and, for connected mode, the IB CM: InfiniBand and
 * RoCE ports have both, iWARP and OPA-only ports do not.
 */
static bool ipoib_port_usable(struct ib_device *ibdev, u32 port)
{
	return ipoib_port_kind(ibdev, port) && rdma_cap_ib_cm(ibdev, port);
}

static void ipoib_report_port(struct ipoib_port *p)
{
	struct ib_device *ibdev = p->dev->ibdev;
	struct ib_port_attr attr;
	union ib_gid gid = {};
	int ret;

	ret = ib_query_port(ibdev, p->port_num, &attr);
	if (ret) {
		dev_warn(&ibdev->dev, "port %u: query failed (%d)\n",
			 p->port_num, ret);
		return;
	}
	if (rdma_query_gid(ibdev, p->port_num, 0, &gid))
		memset(&gid, 0, sizeof(gid));
	dev_info(&ibdev->dev,
		 "port %u: %s, state %s, active MTU %d, GID[0] %pI6\n",
		 p->port_num, ipoib_port_kind(ibdev, p->port_num),
		 ipoib_port_state_name(attr.state),
		 ib_mtu_enum_to_int(attr.active_mtu), gid.raw);
}

/* Every device with interfaces of ours, for ipoib_exit(). */
static LIST_HEAD(ipoib_devs);
static DEFINE_MUTEX(ipoib_devs_lock);	/* taken inside the RTNL */

/* Begin closing the connections of every interface of a device; RTNL. */
static void ipoib_dev_close_all(struct ipoib_dev *idev)
{
	struct ipoib_port *p;

	list_for_each_entry(p, &idev->ports, node)
		if (p->netdev)
			ipoib_port_close_all(ipoib_priv(p->netdev));
}

static void ipoib_free_dev(struct ipoib_dev *idev)
{
	struct ipoib_port *p, *tmp;

	list_for_each_entry_safe(p, tmp, &idev->ports, node) {
		if (p->netdev)
			ipoib_netdev_destroy(p->netdev);
		list_del(&p->node);
		kfree(p);
	}
	kfree(idev);
}

/* Device events arrive in atomic context; the interface defers them. */
static void ipoib_event(struct ib_event_handler *handler, struct ib_event *event)
{
	struct ipoib_dev *idev = container_of(handler, struct ipoib_dev,
					      event_handler);
	struct ipoib_port *p;

	list_for_each_entry(p, &idev->ports, node)
		if (p->netdev && p->port_num == event->element.port_num)
			ipoib_netdev_event(p->netdev, event->event);
}

static int ipoib_add_one(struct ib_device *ibdev)
{
	struct ipoib_dev *idev;
	struct ipoib_port *p;
	u32 port;

	idev = kzalloc(sizeof(*idev), GFP_KERNEL);
	if (!idev)
		return -ENOMEM;
	idev->ibdev = ibdev;
	INIT_LIST_HEAD(&idev->ports);

	rdma_for_each_port(ibdev, port) {
		if (!ipoib_port_usable(ibdev, port)) {
			dev_info(&ibdev->dev,
				 "port %u: no UD/CM transport, skipped\n", port);
			continue;
		}
		p = kzalloc(sizeof(*p), GFP_KERNEL);
		if (!p) {
			ipoib_free_dev(idev);
			return -ENOMEM;
		}
		p->dev = idev;
		p->port_num = port;
		p->roce = rdma_protocol_roce(ibdev, port);
		list_add_tail(&p->node, &idev->ports);
		ipoib_report_port(p);

		p->netdev = ipoib_netdev_create(p);
		if (IS_ERR(p->netdev)) {
			dev_err(&ibdev->dev, "port %u: no interface (%ld)\n",
				port, PTR_ERR(p->netdev));
			p->netdev = NULL;
		}
	}

	if (list_empty(&idev->ports)) {
		kfree(idev);
		return -EOPNOTSUPP;
	}
	INIT_IB_EVENT_HANDLER(&idev->event_handler, ibdev, ipoib_event);
	ib_register_event_handler(&idev->event_handler);
	ib_set_client_data(ibdev, &ipoib_client, idev);
	mutex_lock(&ipoib_devs_lock);
	list_add_tail(&idev->node, &ipoib_devs);
	mutex_unlock(&ipoib_devs_lock);
	return 0;
}

static void ipoib_remove_one(struct ib_device *ibdev, void *client_data)
{
	struct ipoib_dev *idev = client_data;

	ib_unregister_event_handler(&idev->event_handler);
	mutex_lock(&ipoib_devs_lock);
	list_del(&idev->node);
	mutex_unlock(&ipoib_devs_lock);
	/* The interfaces' teardowns overlap while they are unregistered. */
	rtnl_lock();
	ipoib_dev_close_all(idev);
	rtnl_unlock();
	ipoib_free_dev(idev);
	dev_info(&ibdev->dev, "device removed\n");
}

static struct ib_client ipoib_client = {
	.name	= DRV_NAME,
	.add	= ipoib_add_one,
	.remove	= ipoib_remove_one,
};

static int __init ipoib_init(void)
{
	int ret;

	/* First: it fails if ib_ipoib is loaded, and says so. */
	ret = ipoib_link_register();
	if (ret)
		return ret;
	ipoib_debugfs_init();
	ib_sa_register_client(&ipoib_sa_client);
	ret = ib_register_client(&ipoib_client);
	if (ret) {
		pr_err("cannot register the RDMA client (%d)\n", ret);
		ib_sa_unregister_client(&ipoib_sa_client);
		ipoib_debugfs_exit();
		ipoib_link_unregister();
		ipoib_mcast_cleanup();
	}
	return ret;
}

static void __exit ipoib_exit(void)
{
	struct ipoib_dev *idev;

	/*
	 * The devices are removed one after another: first let every
	 * interface of every device begin closing its connections.
	 */
	rtnl_lock();
	mutex_lock(&ipoib_devs_lock);
	list_for_each_entry(idev, &ipoib_devs, node)
		ipoib_dev_close_all(idev);
	mutex_unlock(&ipoib_devs_lock);
	rtnl_unlock();
	ib_unregister_client(&ipoib_client);
	/* Also waits for children still being released. */
	ipoib_link_unregister();
	ipoib_mcast_cleanup();
	ib_sa_unregister_client(&ipoib_sa_client);
	ipoib_debugfs_exit();
}

module_init(ipoib_init);
module_exit(ipoib_exit);

MODULE_AUTHOR("The ipoib_cm developers");
MODULE_DESCRIPTION("IP over InfiniBand and RoCE with connected mode (RFC 4391, RFC 4755)");
MODULE_LICENSE("GPL");
