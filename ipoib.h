/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ipoib_cm: IP over InfiniBand (RFC 4391) with connected mode (RFC 4755).
 *
 * Shared types and the small interfaces between the files of the module.
 */

#ifndef _IPOIB_H
#define _IPOIB_H

#include <linux/hashtable.h>
#include <linux/ipv6.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/seq_file.h>
#include <linux/skbuff.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/u64_stats_sync.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <rdma/ib_cm.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_sa.h>
#include <rdma/ib_verbs.h>

#define DRV_NAME		"ipoib_cm"

/*
 * Link-layer address (RFC 4391 section 9.1.1, RFC 4755 section 3.1):
 * one flags octet, the 24-bit UD QPN, the 16-octet port GID.
 */
#define IPOIB_HWADDR_LEN	20
#define IPOIB_HWADDR_GID_OFF	4
#define IPOIB_FLAG_RC		0x80
#define IPOIB_FLAG_UC		0x40
#define IPOIB_FLAGS_KNOWN	(IPOIB_FLAG_RC | IPOIB_FLAG_UC)
#define IPOIB_QPN_MASK		0x00ffffff
#define IPOIB_MCAST_QPN		0x00ffffff

/* The 4-octet encapsulation header (RFC 4391 section 6). */
#define IPOIB_ENCAP_LEN		4

/* Default P_Key, full membership. */
#define IPOIB_DEFAULT_PKEY	0xffff

void ipoib_hwaddr_build(u8 *addr, u8 flags, u32 qpn, const union ib_gid *gid);
u8 ipoib_hwaddr_flags(const u8 *addr);
u32 ipoib_hwaddr_qpn(const u8 *addr);
void ipoib_hwaddr_gid(const u8 *addr, union ib_gid *gid);
int ipoib_hwaddr_cmp(const u8 *a, const u8 *b);
void ipoib_broadcast_build(u8 *addr, u8 scope, u16 pkey);
bool ipoib_mgid_valid(const union ib_gid *mgid, const u8 *broadcast);

/*
 * Receive parsing (ipoib_frame.c).  A UD receive buffer starts with 40
 * octets of network header (an IB GRH, or on RoCE an IPv6 header, or 20
 * unused octets and an IPv4 header), then the encapsulation header.
 */
#define IPOIB_GRH_LEN		40
/* The pseudo header: the peer's address, in front of the encapsulation. */
#define IPOIB_PSEUDO_LEN	IPOIB_HWADDR_LEN
#define IPOIB_HARD_LEN		(IPOIB_PSEUDO_LEN + IPOIB_ENCAP_LEN)

enum ipoib_drop {
	IPOIB_DROP_TRUNCATED,	/* shorter than GRH + encapsulation header */
	IPOIB_DROP_ETHERTYPE,	/* not IPv4, IPv6, ARP or RARP */
	IPOIB_DROP_BAD_GRH,	/* missing or unparsable network header */
	IPOIB_DROP_NO_PATH,	/* no address handle for the destination */
	IPOIB_DROP_QUEUE_FULL,	/* too many packets waiting for a path */
	IPOIB_DROP_NO_MEM,	/* no receive buffer to replace a full one */
	IPOIB_DROP_TX_NO_MEM,	/* no memory to send: linearize, map, path */
	IPOIB_DROP_TOO_BIG,	/* larger than the path MTU */
	IPOIB_DROP_OWN,		/* our own multicast, looped back */
	IPOIB_DROP_BAD_ADDR,	/* malformed destination address */
	IPOIB_DROP_NOT_READY,	/* interface or transport not up */
	IPOIB_DROP_TX_ERROR,	/* send completed with an error */
	IPOIB_DROP_RX_ERROR,	/* receive completed with an error */
	IPOIB_DROP_MAX
};

extern const char *const ipoib_drop_names[IPOIB_DROP_MAX];

struct ipoib_rx_frame {
	union ib_gid sgid;	/* the sender's GID, from the network header */
	union ib_gid dgid;	/* where it was sent: our GID or a group */
	__be16 proto;		/* the encapsulated ethertype */
	bool has_grh;
};

int ipoib_frame_parse(const void *buf, u32 len, bool has_grh,
		      enum rdma_network_type net_type,
		      struct ipoib_rx_frame *frame, enum ipoib_drop *why);
bool ipoib_proto_supported(__be16 proto);
bool ipoib_frame_rc_eligible(const struct sk_buff *skb);
extern const struct header_ops ipoib_header_ops;

/* One RDMA device that ipoib_cm is bound to. */
struct ipoib_dev {
	struct list_head node;		/* every device, ipoib_main.c */
	struct ib_device *ibdev;
	struct list_head ports;		/* struct ipoib_port */
	struct ib_event_handler event_handler;
};

/* One port of that device, and the interface on it. */
struct ipoib_port {
	struct list_head node;
	struct ipoib_dev *dev;
	u32 port_num;
	bool roce;
	struct net_device *netdev;	/* NULL if registration failed */
};

/* Module parameters (ipoib_main.c). */
#define IPOIB_RING_MIN		16
#define IPOIB_RING_MAX		8192
extern unsigned int ipoib_sendq_size;
extern unsigned int ipoib_recvq_size;
extern unsigned int ipoib_roce_qkey;

/* An address handle, shared by its owner and every send still using it. */
struct ipoib_ah {
	struct kref ref;
	struct ib_ah *ah;
	struct ipoib_priv *priv;
	struct list_head reap_node;
};

/* The way to one destination GID (ipoib_path.c). */
struct ipoib_path {
	struct hlist_node node;		/* in priv->paths, under priv->lock */
	struct list_head dead_node;	/* on a local list once unlinked */
	struct kref ref;
	struct ipoib_priv *priv;
	union ib_gid dgid;
	struct ipoib_ah *ah;		/* NULL until resolved */
	struct sk_buff_head queue;	/* packets waiting for the AH */
	bool resolving;
	bool dead;			/* removed from the table */
	unsigned long retry_at;		/* no new attempt before this */
	unsigned int backoff;		/* seconds, doubles per failure */
	unsigned long used;		/* jiffies of the last send */
	struct work_struct resolve_work;
	struct sa_path_rec *rec;	/* InfiniBand: what the SA answered */
	struct ib_sa_query *query;	/* InfiniBand: SA path query */
	int query_id;
};

struct ipoib_ip6_leave;

/* A multicast group, joined or send-only (ipoib_mcast.c). */
struct ipoib_mcast {
	struct list_head node;		/* in priv->mcasts, under priv->lock */
	union ib_gid mgid;
	struct ipoib_ah *ah;		/* to send to the group */
	bool wanted;			/* the stack (or broadcast) wants it */
	bool attached;			/* UD QP attached: we receive it */
	/* RoCE: the IPv6-level join done, and what undoing it needs. */
	struct ipoib_ip6_leave *ip_leave;
	struct ib_sa_multicast *sa;	/* InfiniBand: the SA membership */
	u16 mlid;
};

struct ipoib_rx_buf {
	struct ib_cqe cqe;
	struct sk_buff *skb;
	u64 dma;
};

struct ipoib_tx_buf {
	struct ib_cqe cqe;
	/*
	 * Set only while a send from this slot is on the QP: a failed map
	 * or post leaves it NULL, the completion clears it.
	 */
	struct sk_buff *skb;
	struct ipoib_ah *ah;
	u64 dma[MAX_SKB_FRAGS + 1];
	unsigned int nr_dma;
};

struct ipoib_stats {
	struct u64_stats_sync syncp;
	u64_stats_t rx_packets;
	u64_stats_t rx_bytes;
	u64_stats_t tx_packets;
	u64_stats_t tx_bytes;
	u64_stats_t multicast;
};

/* priv->flags */
enum {
	IPOIB_FLAG_OPEN,		/* the interface is administratively up */
	IPOIB_FLAG_UD_UP,		/* UD QP in RTS, receives posted */
	IPOIB_FLAG_PORT_ACTIVE,		/* the port is ACTIVE */
	IPOIB_FLAG_BCAST_READY,		/* broadcast group joined */
	IPOIB_FLAG_STOPPING,		/* don't repost, we're draining */
	IPOIB_FLAG_MCAST_REJOIN,	/* leave every group, then join again */
};

/*
 * Connected mode (RFC 4755).  The rest of the driver sees only what is
 * here: the per-interface state embedded in struct ipoib_priv, the
 * counters ethtool and debugfs show, the module parameters and the entry
 * points below.  Everything else of connected mode is private to its
 * files: ipoib_cm_priv.h.
 */
struct ipoib_cm_conn;
struct ipoib_cm_rx_buf;
struct ipoib_cm_rx_ops;

/* Connected-mode counters (debugfs "stats"). */
enum ipoib_cm_stat {
	IPOIB_CM_ST_ACTIVE_UP,		/* connections we opened */
	IPOIB_CM_ST_PASSIVE_UP,		/* connections we accepted */
	IPOIB_CM_ST_REQ_REJECTED,	/* REQs we refused */
	IPOIB_CM_ST_BAD_REQ,		/* of which malformed */
	IPOIB_CM_ST_NO_QP,		/* of which over the no-SRQ cap */
	IPOIB_CM_ST_PEER_CAP,		/* of which over the per-peer cap */
	IPOIB_CM_ST_NOSRQ_MEM,		/* of which over the no-SRQ memory */
	IPOIB_CM_ST_BAD_PKEY,		/* of which in another partition */
	IPOIB_CM_ST_FAILED,		/* our REQs that failed: UD fallback */
	IPOIB_CM_ST_BAD_REP,		/* of which for a malformed REP */
	IPOIB_CM_ST_REJ_RCVD,		/* REJs received for our REQs */
	IPOIB_CM_ST_FALLBACK_TX,	/* packets sent over UD meanwhile */
	IPOIB_CM_ST_IETF_RETRY,		/* REQs redialled on the RFC's ID */
	IPOIB_CM_ST_CROSSED,		/* crossing REQs resolved */
	IPOIB_CM_ST_REJ_CROSSED,	/* REJs taken for crossed REQs */
	IPOIB_CM_ST_IDLE_REAPED,	/* connections closed for idleness */
	IPOIB_CM_ST_CLOSED,		/* connections torn down, any reason */
	IPOIB_CM_ST_COMM_EST,		/* RTS reached before the RTU */
	IPOIB_CM_ST_HELD,		/* packets held until RTS */
	IPOIB_CM_ST_FLUSHED,		/* held packets sent on RTS */
	IPOIB_CM_ST_HOLD_DROPPED,	/* held packets dropped */
	IPOIB_CM_ST_TOO_BIG,		/* ICMP "too big" sent */
	IPOIB_CM_ST_TX_PACKETS,		/* sent over RC */
	IPOIB_CM_ST_TX_BYTES,
	IPOIB_CM_ST_RX_PACKETS,		/* received over RC */
	IPOIB_CM_ST_RX_BYTES,
	IPOIB_CM_ST_TX_ERRORS,		/* RC sends completed in error */
	IPOIB_CM_ST_RX_NO_CONN,		/* receives for a closed connection */
	IPOIB_CM_ST_RX_GROWN,		/* no-SRQ: receives added on use */
	IPOIB_CM_ST_RX_SHRUNK,		/* no-SRQ: given back when quiet */
	IPOIB_CM_ST_RX_RECLAIMED,	/* no-SRQ: grown, quiet, closed */
	IPOIB_CM_ST_RX_BUDGET,		/* no-SRQ: not added, memory used up */
	IPOIB_CM_ST_SRQ_LIMIT,		/* SRQ limit events */
	IPOIB_CM_ST_MAX
};

extern const char *const ipoib_cm_stat_names[IPOIB_CM_ST_MAX];

struct ipoib_cm_dev {
	bool admin;			/* mode is "connected" */
	bool running;			/* listening, receive backend up */
	bool stopping;
	unsigned int stop_closed;	/* connections the last stop closed */
	unsigned long stop_start;	/* when it began, in jiffies */
	const struct ipoib_cm_rx_ops *ops;
	unsigned int rx_mtu;		/* what a receive buffer holds */
	unsigned int rx_frags;		/* pages per receive buffer */
	unsigned int max_mtu;		/* interface MTU in connected mode */

	spinlock_t lock;		/* conns, states, ids */
	DECLARE_HASHTABLE(conns, 8);
	DECLARE_HASHTABLE(passive, 6);	/* the passive ones by peer GID */
	unsigned int nr_conns;
	struct xarray qpns;		/* QPN -> conn, for receives */
	struct ib_cm_id *listen[2];	/* OFED and IETF Service IDs */

	struct napi_struct napi;	/* RC receives and sends */
	struct ib_cq *recv_cq;		/* every RC QP's receive CQ */
	u32 rx_spell;			/* times the NAPI found it empty */
	spinlock_t poll_lock;		/* any context, IRQ-safe */
	struct list_head poll_list;	/* conns whose send CQ fired */

	/* SRQ backend */
	struct ib_srq *srq;
	struct ipoib_cm_rx_buf *srq_ring;
	unsigned int srq_size;
	struct work_struct srq_limit_work;

	/* no-SRQ backend (ipoib_cm_nosrq.c, ipoib_cm_size.c) */
	atomic_t nosrq_conns;		/* accepted QPs */
	atomic_t nosrq_bufs;		/* receive buffers, every QP */
	u32 nosrq_budget;		/* the most nosrq_bufs may be */

	/*
	 * Two queues, so that no peer's setup waits behind a teardown: wq,
	 * ordered, runs the reaper and the idle scan; conn_wq, unordered,
	 * each connection's tasks (start, event, crossing timer) and
	 * the SRQ limit task.  The reaper cancels a connection's tasks
	 * before it destroys what they use (ipoib_cm_teardown_begin()).
	 */
	struct workqueue_struct *wq;
	struct workqueue_struct *conn_wq;
	struct list_head reap_list;	/* under lock */
	struct work_struct reap_work;
	struct delayed_work idle_work;
	wait_queue_head_t drain_wait;

	/*
	 * SRQ teardown (ipoib_cm_srq.c): a QP kept in ERR whose receive
	 * queue flushes each marker posted to it into recv_cq at once, after
	 * whatever is in recv_cq already.  drain_posted is the reaper's,
	 * drain_done the NAPI's (markers consumed).
	 */
	struct ib_qp *drain_qp;
	struct ib_cqe drain_cqe;
	unsigned long drain_posted;
	unsigned long drain_done;
	/* The provider did not raise Last WQE Reached in time (rxe, 6.1). */
	bool no_last_wqe;
	unsigned int leaked_qps;	/* reaper; QPs teardown had to leave */

	struct dentry *debugfs;
	struct ib_wc wc[16];
	atomic64_t stats[IPOIB_CM_ST_MAX];
};

/* Module parameters (ipoib_main.c). */
extern bool ipoib_cm_default;
extern bool ipoib_cm_use_srq;
extern bool ipoib_cm_bidirectional;
extern unsigned int ipoib_cm_max_nosrq;
extern unsigned int ipoib_cm_nosrq_per_peer;
extern unsigned int ipoib_cm_nosrq_mem;
extern unsigned int ipoib_cm_idle_timeout;

/* The state of one IPoIB interface (netdev_priv()). */
struct ipoib_priv {
	struct net_device *netdev;
	struct ipoib_port *port;
	struct ib_device *ibdev;
	u32 port_num;
	bool roce;
	unsigned long flags;

	u16 pkey;
	u16 pkey_index;
	u32 qkey;
	const struct ib_gid_attr *sgid_attr;	/* GID index 0, held */
	union ib_gid gid;
	unsigned int ud_mtu;		/* IP MTU over UD */
	enum ib_mtu mcast_ib_mtu;	/* broadcast group's IB MTU */
	enum ib_mtu max_ib_mtu;		/* the port's largest: RX buffers */
	u8 sl;

	struct ib_pd *pd;
	struct ib_cq *recv_cq;
	struct ib_cq *send_cq;
	struct ib_qp *qp;
	unsigned int max_send_sge;
	struct napi_struct napi;
	struct ipoib_rx_buf *rx_ring;
	struct ipoib_tx_buf *tx_ring;
	unsigned int rx_posted;		/* receives on the QP (NAPI) */
	unsigned int tx_head;		/* sends posted (xmit) */
	unsigned int tx_tail;		/* sends completed (NAPI) */
	atomic_t resolving;		/* path resolutions in flight */
	wait_queue_head_t drain_wait;

	spinlock_t lock;		/* paths, mcasts, dead_ahs */
	DECLARE_HASHTABLE(paths, 7);
	struct list_head mcasts;
	struct list_head dead_ahs;

	struct mutex transport_lock;	/* UD start, stop and restart */
	struct work_struct carrier_work;	/* system_wq: takes the RTNL */
	/*
	 * Makes ipoib_update_carrier() one step: the flags read and the
	 * carrier set together, so that of two updaters racing (the
	 * multicast and the carrier task) the later one decides.
	 */
	spinlock_t carrier_lock;
	struct workqueue_struct *wq;	/* ordered: the tasks below */
	struct delayed_work mcast_work;
	struct work_struct restart_work;
	struct work_struct ah_reap_work;
	struct delayed_work path_gc_work;

	struct ib_wc wc[16];		/* NAPI's completion batch */
	struct ipoib_cm_dev cm;
	struct ipoib_stats stats;
	atomic64_t drops[IPOIB_DROP_MAX];

	/* P_Key child interfaces (ipoib_child.c). */
	struct ipoib_priv *parent;	/* NULL: the port's own interface */
	struct list_head children;	/* RTNL; RCU for the event handler */
	struct list_head child_node;	/* in the parent's children */
	atomic_t nr_children;		/* children not freed yet */
	bool no_children;		/* RTNL: the parent is going away */
	bool sysfs_child;		/* made by create_child */
};

static inline struct ipoib_priv *ipoib_priv(const struct net_device *dev)
{
	return netdev_priv(dev);
}

/* ipoib_trace.c: counted and traced */
void ipoib_count_drops(struct ipoib_priv *priv, enum ipoib_drop why,
		       unsigned int n);

static inline void ipoib_count_drop(struct ipoib_priv *priv,
				    enum ipoib_drop why)
{
	ipoib_count_drops(priv, why, 1);
}

/* ipoib_netdev.c */
void ipoib_setup(struct net_device *dev);
int ipoib_netdev_init(struct net_device *dev, struct ipoib_port *port,
		      u16 pkey, bool connected,
		      const struct ib_port_attr *attr);
void ipoib_netdev_uninit(struct net_device *dev);
struct net_device *ipoib_netdev_create(struct ipoib_port *port);
void ipoib_netdev_destroy(struct net_device *netdev);
void ipoib_netdev_event(struct net_device *netdev, enum ib_event_type type);
void ipoib_update_carrier(struct ipoib_priv *priv);

/* ipoib_ud.c */
int ipoib_ud_init(struct ipoib_priv *priv);
void ipoib_ud_cleanup(struct ipoib_priv *priv);
int ipoib_ud_start(struct ipoib_priv *priv);
void ipoib_ud_stop(struct ipoib_priv *priv);
void ipoib_ud_restart_work(struct work_struct *work);
int ipoib_ud_send(struct ipoib_priv *priv, struct sk_buff *skb,
		  struct ipoib_ah *ah, u32 dqpn);

/* ipoib_path.c */
struct ipoib_ah *ipoib_ah_create(struct ipoib_priv *priv,
				 struct rdma_ah_attr *attr);
void ipoib_ah_put(struct ipoib_ah *ah);
void ipoib_ah_reap_work(struct work_struct *work);
int ipoib_roce_ah_attr(struct ipoib_priv *priv, const union ib_gid *dgid,
		       const u8 *dmac, struct rdma_ah_attr *attr);
void ipoib_path_xmit(struct ipoib_priv *priv, struct sk_buff *skb,
		     const u8 *daddr);
void ipoib_path_flush(struct ipoib_priv *priv);
void ipoib_path_wait_resolutions(struct ipoib_priv *priv);
void ipoib_path_gc_work(struct work_struct *work);
bool ipoib_gid_to_mac(const union ib_gid *gid, u8 *mac);
int ipoib_path_get_rec(struct ipoib_priv *priv, const union ib_gid *gid,
		       struct sa_path_rec *rec);

/* ipoib_mcast.c */
void ipoib_mcast_xmit(struct ipoib_priv *priv, struct sk_buff *skb,
		      const u8 *daddr);
void ipoib_mcast_work(struct work_struct *work);
void ipoib_mcast_stop(struct ipoib_priv *priv);
void ipoib_mcast_kick(struct ipoib_priv *priv);
void ipoib_mcast_cleanup(void);
bool ipoib_mcast_is_broadcast(struct ipoib_priv *priv,
			      const union ib_gid *mgid);

/* ipoib_cm_mode.c: connected mode's entry points */
int ipoib_cm_init(struct ipoib_priv *priv);
void ipoib_cm_cleanup(struct ipoib_priv *priv);
int ipoib_cm_start(struct ipoib_priv *priv);
void ipoib_cm_stop(struct ipoib_priv *priv);
void ipoib_cm_close_all(struct ipoib_priv *priv);
int ipoib_set_mode(struct ipoib_priv *priv, bool connected);
bool ipoib_cm_enabled(struct ipoib_priv *priv);

/* ipoib_cm_tx.c */
bool ipoib_cm_xmit(struct ipoib_priv *priv, struct sk_buff *skb,
		   const u8 *daddr, struct ipoib_ah *ah);

/* ipoib_cm_debugfs.c */
void ipoib_debugfs_init(void);
void ipoib_debugfs_exit(void);
void ipoib_cm_debugfs_add(struct ipoib_priv *priv);
void ipoib_cm_debugfs_del(struct ipoib_priv *priv);

/* ipoib_ethtool.c */
extern const struct ethtool_ops ipoib_ethtool_ops;
unsigned int ipoib_nr_stats(void);
void ipoib_stat_name(unsigned int i, const char **prefix, const char **name);
u64 ipoib_stat_value(struct ipoib_priv *priv, unsigned int i);

/* ipoib_sysfs.c */
extern const struct attribute_group ipoib_attr_group;

/* ipoib_child.c */
extern struct rtnl_link_ops ipoib_link_ops;
int ipoib_link_register(void);
void ipoib_link_unregister(void);
bool ipoib_pkey_valid(u16 pkey);
int ipoib_child_create(struct net_device *pdev, u16 pkey);
int ipoib_child_delete(struct net_device *pdev, u16 pkey);
void ipoib_children_remove(struct ipoib_priv *priv);
void ipoib_port_close_all(struct ipoib_priv *priv);

/* ipoib_ud.c: shared with the RC send path */
int ipoib_tx_map(struct ipoib_priv *priv, struct ipoib_tx_buf *buf,
		 struct sk_buff *skb, struct ib_sge *sge);
void ipoib_tx_unmap(struct ipoib_priv *priv, struct ipoib_tx_buf *buf);
void ipoib_too_big(struct ipoib_priv *priv, struct sk_buff *skb,
		   unsigned int mtu);

extern struct ib_sa_client ipoib_sa_client;

#endif /* _IPOIB_H */
