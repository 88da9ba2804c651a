// SPDX-License-Identifier: GPL-2.0
/*
 * ethtool: driver information, ring sizes and counters.  The bus address
 * is the HCA's; a software device (rxe) has none, so its RDMA device name
 * stands there instead.
 *
 * The counters are numbered once, here, for both ethtool -S and the
 * debugfs "stats" file: first the UD datapath's (ipoib_ud_stats below),
 * then connected mode's (enum ipoib_cm_stat, ipoib_cm_stat_names), then
 * the drops by reason (enum ipoib_drop, ipoib_drop_names, "drop_" prefix).
 */

#include <linux/ethtool.h>
#include <linux/stddef.h>

#include "ipoib.h"

static const struct {
	const char *name;
	size_t off;		/* in struct ipoib_stats */
} ipoib_ud_stats[] = {
	{ "ud_rx_packets",	offsetof(struct ipoib_stats, rx_packets) },
	{ "ud_rx_bytes",	offsetof(struct ipoib_stats, rx_bytes) },
	{ "ud_rx_multicast",	offsetof(struct ipoib_stats, multicast) },
	{ "ud_tx_packets",	offsetof(struct ipoib_stats, tx_packets) },
	{ "ud_tx_bytes",	offsetof(struct ipoib_stats, tx_bytes) },
};

#define IPOIB_UD_ST_MAX		ARRAY_SIZE(ipoib_ud_stats)
#define IPOIB_CM_ST_FIRST	IPOIB_UD_ST_MAX
#define IPOIB_DROP_FIRST	(IPOIB_CM_ST_FIRST + IPOIB_CM_ST_MAX)
#define IPOIB_NR_STATS		(IPOIB_DROP_FIRST + IPOIB_DROP_MAX)

/* How many counters there are. */
unsigned int ipoib_nr_stats(void)
{
	return IPOIB_NR_STATS;
}

/**
 * ipoib_stat_name - the name of a counter
 * @i: its number, below ipoib_nr_stats()
 * @prefix: set to what goes in front of @name ("" or "drop_")
 * @name: set to the rest of the name
 */
void ipoib_stat_name(unsigned int i, const char **prefix, const char **name)
{
	*prefix = "";
	if (i < IPOIB_CM_ST_FIRST) {
		*name = ipoib_ud_stats[i].name;
	} else if (i < IPOIB_DROP_FIRST) {
		*name = ipoib_cm_stat_names[i - IPOIB_CM_ST_FIRST];
	} else {
		*prefix = "drop_";
		*name = ipoib_drop_names[i - IPOIB_DROP_FIRST];
	}
}

/**
 * ipoib_stat_value - the value of a counter
 * @priv: the interface
 * @i: the counter's number, below ipoib_nr_stats()
 */
u64 ipoib_stat_value(struct ipoib_priv *priv, unsigned int i)
{
	const u64_stats_t *c;
	unsigned int start;
	u64 v;

	if (i >= IPOIB_DROP_FIRST)
		return atomic64_read(&priv->drops[i - IPOIB_DROP_FIRST]);
	if (i >= IPOIB_CM_ST_FIRST)
		return atomic64_read(&priv->cm.stats[i - IPOIB_CM_ST_FIRST]);

	c = (const u64_stats_t *)((const char *)&priv->stats +
				  ipoib_ud_stats[i].off);
	do {
		start = u64_stats_fetch_begin(&priv->stats.syncp);
		v = u64_stats_read(c);
	} while (u64_stats_fetch_retry(&priv->stats.syncp, start));
	return v;
}

static int ipoib_get_sset_count(struct net_device *dev, int sset)
{
	if (sset == ETH_SS_STATS)
		return IPOIB_NR_STATS;
	return -EOPNOTSUPP;
}

static void ipoib_get_strings(struct net_device *dev, u32 sset, u8 *data)
{
	const char *prefix, *name;
	unsigned int i;

	if (sset != ETH_SS_STATS)
		return;
	for (i = 0; i < IPOIB_NR_STATS; i++) {
		ipoib_stat_name(i, &prefix, &name);
		ethtool_sprintf(&data, "%s%s", prefix, name);
	}
}

static void ipoib_get_ethtool_stats(struct net_device *dev,
				    struct ethtool_stats *stats, u64 *data)
{
	struct ipoib_priv *priv = ipoib_priv(dev);
	unsigned int i;

	for (i = 0; i < IPOIB_NR_STATS; i++)
		data[i] = ipoib_stat_value(priv, i);
}

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

/*
 * The ring sizes are the module parameters, fixed when the module loads:
 * RX and TX are the UD receive and send rings, RX Jumbo the connected-mode
 * receive ring of 64 KiB buffers (the SRQ, or each accepted QP's own ring
 * without SRQ).  Each RC connection that sends has a send ring of the UD
 * send ring's size.  There is no set_ringparam: the rings of a running
 * interface (and of connections) are not resized.
 */
static void ipoib_get_ringparam(struct net_device *dev,
				struct ethtool_ringparam *ring,
				struct kernel_ethtool_ringparam *kring,
				struct netlink_ext_ack *extack)
{
	ring->rx_max_pending = IPOIB_RING_MAX;
	ring->rx_jumbo_max_pending = IPOIB_RING_MAX;
	ring->tx_max_pending = IPOIB_RING_MAX;
	ring->rx_pending = ipoib_recvq_size;
	ring->rx_jumbo_pending = ipoib_recvq_size;
	ring->tx_pending = ipoib_sendq_size;
}

const struct ethtool_ops ipoib_ethtool_ops = {
	.get_drvinfo		= ipoib_get_drvinfo,
	.get_link		= ethtool_op_get_link,
	.get_ringparam		= ipoib_get_ringparam,
	.get_sset_count		= ipoib_get_sset_count,
	.get_strings		= ipoib_get_strings,
	.get_ethtool_stats	= ipoib_get_ethtool_stats,
};
