// SPDX-License-Identifier: GPL-2.0
/*
 * sysfs: /sys/class/net/<if>/mode, "datagram" or "connected", the file
 * that NetworkManager, systemd-networkd and admins' scripts write; pkey;
 * and on a port's own interface create_child and delete_child, which
 * take a P_Key.
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

static ssize_t pkey_show(struct device *d, struct device_attribute *attr,
			 char *buf)
{
	return sysfs_emit(buf, "0x%04x\n", ipoib_priv(to_net_dev(d))->pkey);
}
static DEVICE_ATTR_RO(pkey);

/* A P_Key as written to create_child or delete_child. */
static int ipoib_pkey_parse(struct net_device *dev, const char *buf,
			    u16 *pkey)
{
	if (kstrtou16(buf, 0, pkey)) {
		netdev_err(dev, "a P_Key is a number from 0x0001 to 0xffff, not \"%.*s\"\n",
			   (int)min_t(size_t, strcspn(buf, "\n"), 32), buf);
		return -EINVAL;
	}
	if (!ipoib_pkey_valid(*pkey)) {
		netdev_err(dev, "P_Key 0x%04x is invalid (0x0000 and 0x8000 are reserved)\n",
			   *pkey);
		return -EINVAL;
	}
	*pkey |= 0x8000;
	return 0;
}

static ssize_t ipoib_child_store(struct device *d, const char *buf,
				 size_t count, bool create)
{
	struct net_device *dev = to_net_dev(d);
	u16 pkey;
	int ret;

	ret = ipoib_pkey_parse(dev, buf, &pkey);
	if (ret)
		return ret;
	/* As for mode: a writer waiting for the RTNL would deadlock. */
	if (!rtnl_trylock())
		return restart_syscall();
	if (dev->reg_state != NETREG_REGISTERED)
		ret = -ENODEV;
	else if (create)
		ret = ipoib_child_create(dev, pkey);
	else
		ret = ipoib_child_delete(dev, pkey);
	rtnl_unlock();
	return ret ? ret : count;
}

static ssize_t create_child_store(struct device *d,
				  struct device_attribute *attr,
				  const char *buf, size_t count)
{
	return ipoib_child_store(d, buf, count, true);
}
static DEVICE_ATTR_WO(create_child);

static ssize_t delete_child_store(struct device *d,
				  struct device_attribute *attr,
				  const char *buf, size_t count)
{
	return ipoib_child_store(d, buf, count, false);
}
static DEVICE_ATTR_WO(delete_child);

static struct attribute *ipoib_attrs[] = {
	&dev_attr_mode.attr,
	&dev_attr_pkey.attr,
	&dev_attr_create_child.attr,
	&dev_attr_delete_child.attr,
	NULL,
};

/* create_child and delete_child only on a port's interface. */
static umode_t ipoib_attr_visible(struct kobject *kobj, struct attribute *a,
				  int n)
{
	struct ipoib_priv *priv = ipoib_priv(to_net_dev(kobj_to_dev(kobj)));

	if (priv->parent && (a == &dev_attr_create_child.attr ||
			     a == &dev_attr_delete_child.attr))
		return 0;
	return a->mode;
}

const struct attribute_group ipoib_attr_group = {
	.attrs = ipoib_attrs,
	.is_visible = ipoib_attr_visible,
};
