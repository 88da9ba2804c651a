// SPDX-License-Identifier: GPL-2.0
/*
 * Module entry points and the RDMA client: which devices and ports
 * ipoib_cm binds to.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt
#define dev_fmt(fmt) pr_fmt(fmt)

#include <linux/module.h>
#include <linux/slab.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

#include "ipoib.h"
#include "ipoib_compat.h"

static struct ib_client ipoib_client;

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

static void ipoib_free_dev(struct ipoib_dev *idev)
{
	struct ipoib_port *p, *tmp;

	list_for_each_entry_safe(p, tmp, &idev->ports, node) {
		list_del(&p->node);
		kfree(p);
	}
	kfree(idev);
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
	}

	if (list_empty(&idev->ports)) {
		kfree(idev);
		return -EOPNOTSUPP;
	}
	ib_set_client_data(ibdev, &ipoib_client, idev);
	return 0;
}

static void ipoib_remove_one(struct ib_device *ibdev, void *client_data)
{
	struct ipoib_dev *idev = client_data;

	dev_info(&ibdev->dev, "device removed\n");
	ipoib_free_dev(idev);
}

static struct ib_client ipoib_client = {
	.name	= DRV_NAME,
	.add	= ipoib_add_one,
	.remove	= ipoib_remove_one,
};

static int __init ipoib_init(void)
{
	int ret;

	ret = ib_register_client(&ipoib_client);
	if (ret)
		pr_err("cannot register the RDMA client (%d)\n", ret);
	return ret;
}

static void __exit ipoib_exit(void)
{
	ib_unregister_client(&ipoib_client);
}

module_init(ipoib_init);
module_exit(ipoib_exit);

MODULE_AUTHOR("The ipoib_cm developers");
MODULE_DESCRIPTION("IP over InfiniBand and RoCE with connected mode (RFC 4391, RFC 4755)");
MODULE_LICENSE("GPL");
