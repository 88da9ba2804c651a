// SPDX-License-Identifier: GPL-2.0
/*
 * sysfs: /sys/class/net/<if>/mode, "datagram" or "connected", the file
 * that NetworkManager, systemd-networkd and admins' scripts write.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/rtnetlink.h>
#include <linux/sysfs.h>

#include "ipoib.h"

static ssize_t mode_show(struct device *d, struct device_attribute *attr,
			 char *buf)
{
	struct ipoib_priv *priv = ipoib_priv(to_net_dev(d));

	return sysfs_emit(buf, "%s\n",
			  READ_ONCE(priv->cm.admin) ? "connected" : "datagram");
}

static ssize_t mode_store(struct device *d, struct device_attribute *attr,
			  const char *buf, size_t count)
{
	struct net_device *dev = to_net_dev(d);
	bool connected;
	int ret;

	if (sysfs_streq(buf, "connected")) {
		connected = true;
	} else if (sysfs_streq(buf, "datagram")) {
		connected = false;
	} else {
		netdev_err(dev, "mode must be \"datagram\" or \"connected\", not \"%.*s\"\n",
			   (int)min_t(size_t, strcspn(buf, "\n"), 32), buf);
		return -EINVAL;
	}

	/* A writer waiting for the RTNL would deadlock against unregister. */
	if (!rtnl_trylock())
		return restart_syscall();
	if (dev->reg_state != NETREG_REGISTERED)
		ret = -ENODEV;
	else
		ret = ipoib_set_mode(ipoib_priv(dev), connected);
	rtnl_unlock();
	return ret ? ret : count;
}
static DEVICE_ATTR_RW(mode);

static struct attribute *ipoib_attrs[] = {
	&dev_attr_mode.attr,
	NULL,
};

const struct attribute_group ipoib_attr_group = {
	.attrs = ipoib_attrs,
};
