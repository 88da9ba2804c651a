/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Differences between the kernels ipoib_cm builds against (6.1, 6.12, 7.2
 * and what lies between).  Kbuild probes the kernel tree for each feature
 * (see "compat probes" there) instead of trusting version numbers, which
 * stable and distribution backports make unreliable; this header is the
 * only place that uses the results.
 */

#ifndef _IPOIB_COMPAT_H
#define _IPOIB_COMPAT_H

/* 6.12 moved the unaligned accessors out of asm/. */
#ifdef IPOIB_HAVE_LINUX_UNALIGNED_H
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

/* 6.3 made the path record count of the SA path query callback unsigned. */
#ifdef IPOIB_SA_NUM_PRS_UNSIGNED
#define IPOIB_SA_NUM_PRS	unsigned int
#else
#define IPOIB_SA_NUM_PRS	int
#endif

/*
 * 6.15 passed the arguments of rtnl_link_ops.newlink in a structure.
 * ipoib_newlink() is the callback for this kernel; it calls
 * ipoib_link_new() (ipoib_child.c) with link_net, the namespace in which
 * IFLA_LINK names the parent.
 */
#include <net/rtnetlink.h>

int ipoib_link_new(struct net *link_net, struct net_device *dev,
		   struct nlattr *tb[], struct nlattr *data[],
		   struct netlink_ext_ack *extack);

#ifdef IPOIB_HAVE_RTNL_NEWLINK_PARAMS
static inline int ipoib_newlink(struct net_device *dev,
				struct rtnl_newlink_params *params,
				struct netlink_ext_ack *extack)
{
	return ipoib_link_new(rtnl_newlink_link_net(params), dev, params->tb,
			      params->data, extack);
}
#else
static inline int ipoib_newlink(struct net *src_net, struct net_device *dev,
				struct nlattr *tb[], struct nlattr *data[],
				struct netlink_ext_ack *extack)
{
	return ipoib_link_new(src_net, dev, tb, data, extack);
}
#endif

#endif /* _IPOIB_COMPAT_H */
