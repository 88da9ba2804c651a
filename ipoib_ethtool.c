// SPDX-License-Identifier: GPL-2.0
/*
 * ethtool: driver information.  The bus address is the HCA's; a software
 * device (rxe) has none, so its RDMA device name stands there instead.
 */

#include <linux/ethtool.h>

#include "ipoib.h"

static void ipoib_get_drvinfo(struct net_device *dev,
			      struct ethtool_drvinfo *info)
{
	struct ipoib_priv *priv = ipoib_priv(dev);
	struct device *parent = priv->ibdev->dev.parent;

	strscpy(info->driver, DRV_NAME, sizeof(info->driver));
	ib_get_device_fw_str(priv->ibdev, info->fw_version);
	strscpy(info->bus_info,
		parent ? dev_name(parent) : dev_name(&priv->ibdev->dev),
		sizeof(info->bus_info));
}

const struct ethtool_ops ipoib_ethtool_ops = {
	.get_drvinfo	= ipoib_get_drvinfo,
	.get_link	= ethtool_op_get_link,
};
