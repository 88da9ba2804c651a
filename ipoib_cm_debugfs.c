// SPDX-License-Identifier: GPL-2.0
/*
 * debugfs: <debugfs>/ipoib_cm/<ibdev>-<port>/ holds, per interface,
 *   connections   one line per RC connection
 *   stats         the counters (the same as ethtool -S)
 * Named after the port, not the interface, so a rename or a move to
 * another namespace does not move it; a P_Key child's adds its P_Key and
 * UD QPN (<ibdev>-<port>.<pkey>.<qpn>, hexadecimal).
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "ipoib.h"
#include "ipoib_cm_priv.h"

static struct dentry *ipoib_debugfs_root;

void ipoib_debugfs_init(void)
{
	ipoib_debugfs_root = debugfs_create_dir(DRV_NAME, NULL);
}

void ipoib_debugfs_exit(void)
{
	debugfs_remove_recursive(ipoib_debugfs_root);
	ipoib_debugfs_root = NULL;
}

static int ipoib_cm_conns_show(struct seq_file *m, void *unused)
{
	struct ipoib_priv *priv = m->private;
	struct ipoib_cm_conn *conn;
	int bkt;

	seq_printf(m, "# %s mode, %s receives, receive MTU %u, %u connections\n",
		   READ_ONCE(priv->cm.admin) ? "connected" : "datagram",
		   priv->cm.ops->name, priv->cm.rx_mtu, priv->cm.nr_conns);
	/* What teardown had to leave, and the no-SRQ budget in use. */
	seq_printf(m, "# leaked_qps %u nosrq_rx_bufs %d\n",
		   READ_ONCE(priv->cm.leaked_qps),
		   atomic_read(&priv->cm.nosrq_bufs));
	seq_puts(m, "# peer_gid peer_qpn dir state qpn mtu tx_packets tx_bytes rx_packets rx_bytes queued held dropped ...\n");
	spin_lock_bh(&priv->cm.lock);
	hash_for_each(priv->cm.conns, bkt, conn, node) {
		seq_printf(m, "%pI6 0x%06x %s %s 0x%06x %u %llu %llu %llu %llu %u %llu %llu",
			   conn->gid.raw, conn->qpn,
			   conn->active ? "active" : "passive",
			   ipoib_cm_state_names[conn->state], conn->qp_num,
			   conn->mtu, conn->tx_packets, conn->tx_bytes,
			   conn->rx_packets, conn->rx_bytes,
			   skb_queue_len(&conn->queue), conn->held,
			   conn->dropped);
		priv->cm.ops->show(m, conn);
		seq_putc(m, '\n');
	}
	spin_unlock_bh(&priv->cm.lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(ipoib_cm_conns);

static int ipoib_cm_stats_show(struct seq_file *m, void *unused)
{
	struct ipoib_priv *priv = m->private;
	const char *prefix, *name;
	unsigned int i;

	/* The same counters, in the same order, as ethtool -S. */
	for (i = 0; i < ipoib_nr_stats(); i++) {
		ipoib_stat_name(i, &prefix, &name);
		seq_printf(m, "%s%s %llu\n", prefix, name,
			   ipoib_stat_value(priv, i));
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(ipoib_cm_stats);

void ipoib_cm_debugfs_add(struct ipoib_priv *priv)
{
	char name[IB_DEVICE_NAME_MAX + 32];

	if (priv->parent)	/* a child: <ibdev>-<port>.<pkey>.<UD QPN> */
		snprintf(name, sizeof(name), "%s-%u.%04x.%06x",
			 dev_name(&priv->ibdev->dev), priv->port_num,
			 priv->pkey, priv->qp->qp_num);
	else
		snprintf(name, sizeof(name), "%s-%u",
			 dev_name(&priv->ibdev->dev), priv->port_num);
	priv->cm.debugfs = debugfs_create_dir(name, ipoib_debugfs_root);
	debugfs_create_file("connections", 0444, priv->cm.debugfs, priv,
			    &ipoib_cm_conns_fops);
	debugfs_create_file("stats", 0444, priv->cm.debugfs, priv,
			    &ipoib_cm_stats_fops);
}

void ipoib_cm_debugfs_del(struct ipoib_priv *priv)
{
	debugfs_remove_recursive(priv->cm.debugfs);
	priv->cm.debugfs = NULL;
}
