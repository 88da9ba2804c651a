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
 * RFC 4755 wire formats: the 8 octets of private data carried in REQ, REP
 * and REJ (section 6), Service IDs (section 3.5) and the connection MTU
 * (section 5.1).
 */
#define IPOIB_CM_PDATA_LEN	8
#define IPOIB_CM_SID_OFED	0x1000000000000000ULL
#define IPOIB_CM_SID_IETF	0x0100000000000000ULL
#define IPOIB_CM_SID_MASK	0xffffffffff000000ULL
/*
 * The smallest receive MTU accepted from a peer: IPv6's minimum link MTU
 * plus the header.  A connection below it would be an IPv6 black hole
 * (IPv6 ignores a "too big" under 1280 and does not fragment below it):
 * such a peer is rejected, and reached over UD.
 */
#define IPOIB_CM_MIN_RX_MTU	(IPV6_MIN_MTU + IPOIB_ENCAP_LEN)
/* The largest RFC 4755 message, 2^31 octets (section 5). */
#define IPOIB_CM_MAX_RX_MTU	0x80000000U

struct ipoib_cm_pdata {
	u32 qpn;	/* the sender's UD QPN */
	u32 rx_mtu;	/* largest message the sender receives, with header */
};

void ipoib_cm_pdata_pack(void *buf, const struct ipoib_cm_pdata *pd);
int ipoib_cm_pdata_unpack(const void *buf, size_t len,
			  struct ipoib_cm_pdata *pd);
__be64 ipoib_cm_service_id(u64 base, u32 qpn);
int ipoib_cm_service_id_qpn(__be64 sid, u32 *qpn);
u32 ipoib_cm_conn_mtu(u32 local_rx_mtu, u32 peer_rx_mtu);

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

/* A multicast group, joined or send-only (ipoib_mcast.c). */
struct ipoib_mcast {
	struct list_head node;		/* in priv->mcasts, under priv->lock */
	union ib_gid mgid;
	struct ipoib_ah *ah;		/* to send to the group */
	bool wanted;			/* the stack (or broadcast) wants it */
	bool attached;			/* UD QP attached: we receive it */
	bool ip_joined;			/* RoCE: IPv6-level join done */
	struct net_device *ip_ndev;	/* RoCE: the netdev joined on */
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
 * Connected mode (RFC 4755): one RC connection per peer and direction, or
 * per peer with the bidirectional option.  The life of a connection is a
 * small state machine (ipoib_cm_state.c): events come from the CM, from
 * completions and from the driver's own tasks; each (state, event) pair
 * gives the next state and one action, carried out by ipoib_cm_conn.c.
 */
enum ipoib_cm_state {
	IPOIB_CM_NEW,		/* active: waiting for the start task */
	IPOIB_CM_REQ_SENT,	/* active: QP in INIT, REQ out */
	IPOIB_CM_REP_SENT,	/* passive: QP in RTR, REP out */
	IPOIB_CM_LIVE,		/* QP in RTS: packets flow */
	IPOIB_CM_FAILED,	/* active: setup failed, UD until retry_at */
	IPOIB_CM_CLOSING,	/* being torn down; absorbs every event */
	IPOIB_CM_STATE_MAX
};

enum ipoib_cm_event {
	IPOIB_CM_EV_START,	/* the start task sends the REQ */
	IPOIB_CM_EV_REP,	/* REP received (active side) */
	IPOIB_CM_EV_RTU,	/* RTU received (passive side) */
	IPOIB_CM_EV_COMM_EST,	/* the CM says established (receive in RTR) */
	IPOIB_CM_EV_REJ,	/* REJ received, or our own setup failed */
	IPOIB_CM_EV_LOST,	/* REQ or REP unanswered */
	IPOIB_CM_EV_CROSSED,	/* REQs crossed and the peer's REQ won */
	IPOIB_CM_EV_DREQ,	/* the peer disconnects */
	IPOIB_CM_EV_ERROR,	/* transport error: completion or QP event */
	IPOIB_CM_EV_IDLE,	/* unused for cm_idle_timeout */
	IPOIB_CM_EV_RETRY,	/* a packet for a failed peer, backoff over */
	IPOIB_CM_EV_SHUTDOWN,	/* mode switch, ifdown, device removal */
	IPOIB_CM_EV_MAX
};

enum ipoib_cm_action {
	IPOIB_CM_ACT_NONE,	/* unexpected here: ignored */
	IPOIB_CM_ACT_CONNECT,	/* REQ goes out */
	IPOIB_CM_ACT_ESTABLISH,	/* QP to RTS, send the held packets */
	IPOIB_CM_ACT_FALLBACK,	/* held packets to UD, retry later */
	IPOIB_CM_ACT_YIELD,	/* held packets to the peer's connection */
	IPOIB_CM_ACT_CLOSE,	/* tear down and forget */
};

struct ipoib_cm_transition {
	u8 next;		/* enum ipoib_cm_state */
	u8 action;		/* enum ipoib_cm_action */
};

struct ipoib_cm_transition ipoib_cm_fsm(enum ipoib_cm_state state,
					enum ipoib_cm_event event);
extern const char *const ipoib_cm_state_names[IPOIB_CM_STATE_MAX];
extern const char *const ipoib_cm_event_names[IPOIB_CM_EV_MAX];

/* Connected-mode counters (debugfs "stats"). */
enum ipoib_cm_stat {
	IPOIB_CM_ST_ACTIVE_UP,		/* connections we opened */
	IPOIB_CM_ST_PASSIVE_UP,		/* connections we accepted */
	IPOIB_CM_ST_REQ_REJECTED,	/* REQs we refused */
	IPOIB_CM_ST_BAD_REQ,		/* of which malformed */
	IPOIB_CM_ST_NO_QP,		/* of which over the no-SRQ cap */
	IPOIB_CM_ST_BAD_PKEY,		/* of which in another partition */
	IPOIB_CM_ST_FAILED,		/* our REQs that failed: UD fallback */
	IPOIB_CM_ST_BAD_REP,		/* of which for a malformed REP */
	IPOIB_CM_ST_REJ_RCVD,		/* REJs received for our REQs */
	IPOIB_CM_ST_FALLBACK_TX,	/* packets sent over UD meanwhile */
	IPOIB_CM_ST_IETF_RETRY,		/* REQs redialled on the RFC's ID */
	IPOIB_CM_ST_CROSSED,		/* crossing REQs resolved */
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
	IPOIB_CM_ST_SRQ_LIMIT,		/* SRQ limit events */
	IPOIB_CM_ST_MAX
};

extern const char *const ipoib_cm_stat_names[IPOIB_CM_ST_MAX];

/*
 * How long a peer waits after an RNR NAK before sending again.  The CM's
 * default (0) means 655 ms: far too long when the receive queue is only
 * short of a buffer for as long as the NAPI takes to repost one.
 */
#define IPOIB_CM_MIN_RNR_TIMER	IB_RNR_TIMER_001_28

/* How long teardown waits for a QP's completions before leaking it. */
#define IPOIB_CM_DRAIN_TIMEOUT	(5 * HZ)
/* Receive CQ entries kept for the SRQ teardown's drain markers. */
#define IPOIB_CM_DRAIN_WRS	2

/* A receive buffer of connected mode: page fragments, no linear part. */
#define IPOIB_CM_RX_MTU_MAX	(65520 + IPOIB_ENCAP_LEN)
#define IPOIB_CM_MAX_FRAGS	DIV_ROUND_UP(IPOIB_CM_RX_MTU_MAX, PAGE_SIZE)

struct ipoib_cm_conn;

struct ipoib_cm_rx_buf {
	struct ib_cqe cqe;
	struct ipoib_cm_conn *conn;	/* no-SRQ: the QP it is posted on */
	struct page *pages[IPOIB_CM_MAX_FRAGS];
	u64 dma[IPOIB_CM_MAX_FRAGS];
};

/* conn->qp_events: what the connection's event task has to do. */
enum {
	IPOIB_CM_QP_COMM_EST,	/* data in RTR: tell the CM */
	IPOIB_CM_QP_FATAL,	/* a fatal QP event */
	IPOIB_CM_QP_LAST_WQE,	/* SRQ: Last WQE Reached (teardown waits) */
};

/* One RC connection and its QP. */
struct ipoib_cm_conn {
	struct hlist_node node;		/* priv->cm.conns, under cm.lock */
	struct list_head poll_node;	/* priv->cm.poll_list, poll_lock */
	struct list_head reap_node;	/* priv->cm.reap_list */
	struct rcu_head rcu;
	struct ipoib_priv *priv;

	u8 addr[IPOIB_HWADDR_LEN];	/* the peer's link address */
	union ib_gid gid;		/* the peer's port GID */
	u32 qpn;			/* the peer's UD QPN */
	bool active;			/* we sent the REQ */
	enum ipoib_cm_state state;	/* under cm.lock */
	/*
	 * Under cm.lock.  Set when the connection is queued for the reaper,
	 * cleared only by the reaper, in the same cm.lock section where it
	 * reads the state to keep a FAILED connection in the table or take
	 * any other out of it (ipoib_cm_reap_finish()).  So a connection
	 * leaves the table only through the reaper, torn down exactly once,
	 * and a close that comes while it is being reaped is seen there.
	 */
	bool reaping;
	bool on_poll_list;		/* under cm.poll_lock */
	/*
	 * Under cm.poll_lock: the send CQ exists and the connection may be
	 * put on the poll list.  Cleared, and the connection taken off the
	 * list, before the send CQ is destroyed (ipoib_cm_tx_release()); a
	 * NAPI poll that still holds the connection then cannot put it back
	 * after the reaper is done with it.
	 */
	bool poll_open;
	bool ietf_sid;			/* dial the RFC's Service ID */
	bool est_notified;		/* ib_cm_notify() done */
	bool yield;			/* closing: packets to another conn */
	bool sendable;			/* QP in RTS with a send ring; lock */
	unsigned int backoff;		/* seconds before the next REQ */
	unsigned long retry_at;		/* FAILED: no REQ before this */
	unsigned long last_used;	/* jiffies of the last packet */
	unsigned long created;

	/*
	 * The CM id, set and cleared under cm.lock.  Whoever clears it owns
	 * its destruction: the reaper (ipoib_cm_teardown()), or the REQ
	 * handler taking it back on failure, which then returns non-zero so
	 * the CM destroys it.  A CM callback never reads this field: it uses
	 * the id it is called with, valid until it returns (the reaper's
	 * ib_destroy_cm_id() waits for it).  Tasks on cm.wq may read it
	 * under cm.lock: the reaper runs there too and cancels them first.
	 */
	struct ib_cm_id *id;
	struct ib_qp *qp;
	u32 qp_num;
	/*
	 * The QP reached RTR: from then on it may take receive buffers, and
	 * teardown must see every one of them come back.  Written before the
	 * QP can receive, read by the reaper once the CM id is gone.
	 */
	bool rtr;
	/*
	 * Teardown could not prove that no completion of the QP can still
	 * arrive: the QP, its send CQ and rings were left alone, and this
	 * structure, which they point to, is never freed.  Reaper only.
	 */
	bool leaked;
	struct ipoib_ah *ah;		/* active: the UD path, for fallback */
	struct sa_path_rec *path_rec;	/* active on InfiniBand: from the SA */
	u32 mtu;			/* IP MTU of the connection */

	/* The send side, under lock. */
	spinlock_t lock;
	struct ib_cq *send_cq;		/* armed only in RTS */
	struct ipoib_tx_buf *tx_ring;	/* NULL: this QP never sends */
	unsigned int tx_size;
	unsigned int tx_head;
	unsigned int tx_tail;
	unsigned int max_send_sge;
	struct sk_buff_head queue;	/* held before RTS, or ring full */

	/*
	 * The receive side (no-SRQ backend): the CM NAPI and the fill task
	 * add buffers under rx_lock.
	 */
	spinlock_t rx_lock;
	struct ipoib_cm_rx_buf *rx_ring;
	unsigned int rx_max;		/* ring depth */
	unsigned int rx_used;		/* buffers allocated so far */
	unsigned int rx_posted;		/* on the QP now */
	bool rx_counted;		/* counted against the no-SRQ cap */
	struct work_struct fill_work;	/* the rest of the ring, after REP */

	struct work_struct start_work;
	struct delayed_work cross_work;	/* crossed REQs: peer's REQ due */
	struct work_struct event_work;
	unsigned long qp_events;	/* IPOIB_CM_QP_* bits */

	/* Per-connection counters, shown in debugfs. */
	u64 tx_packets, tx_bytes, rx_packets, rx_bytes;
	u64 held, dropped;
};

/*
 * A receive backend: where the receive buffers of RC QPs live.  The SRQ
 * backend shares one SRQ among every QP; the no-SRQ backend gives each QP
 * its own ring, one buffer on opened QPs that grows as it is consumed.
 */
struct ipoib_cm_rx_ops {
	const char *name;
	int (*start)(struct ipoib_priv *priv);
	void (*stop)(struct ipoib_priv *priv);
	/* Admission of a new QP; a REQ over the limit is rejected. */
	int (*admit)(struct ipoib_cm_conn *conn);
	void (*qp_attr)(struct ipoib_cm_conn *conn,
			struct ib_qp_init_attr *attr);
	/* The QP is in INIT: post what it needs before the peer sends. */
	int (*qp_ready)(struct ipoib_cm_conn *conn);
	/* Optional: our REP went out; post the rest (process context). */
	void (*fill)(struct ipoib_cm_conn *conn);
	/* Which connection a completion belongs to (NULL if gone). */
	struct ipoib_cm_conn *(*conn_of)(struct ipoib_priv *priv,
					 struct ipoib_cm_rx_buf *buf,
					 struct ib_wc *wc);
	/* A buffer came back; give it (refilled) to the HCA again. */
	void (*repost)(struct ipoib_priv *priv, struct ipoib_cm_conn *conn,
		       struct ipoib_cm_rx_buf *buf, bool consumed);
	/*
	 * The QP is in ERR: wait until no completion of its receives can
	 * still arrive in, or wait in, the receive CQ.  0, or an error if
	 * that cannot be shown in time: then the QP must not be destroyed.
	 */
	int (*drain)(struct ipoib_cm_conn *conn);
	void (*release)(struct ipoib_cm_conn *conn);
	void (*show)(struct seq_file *m, struct ipoib_cm_conn *conn);
};

extern const struct ipoib_cm_rx_ops ipoib_cm_srq_ops;
extern const struct ipoib_cm_rx_ops ipoib_cm_nosrq_ops;

struct ipoib_cm_dev {
	bool admin;			/* mode is "connected" */
	bool running;			/* listening, receive backend up */
	bool stopping;
	const struct ipoib_cm_rx_ops *ops;
	unsigned int rx_mtu;		/* what a receive buffer holds */
	unsigned int rx_frags;		/* pages per receive buffer */
	unsigned int max_mtu;		/* interface MTU in connected mode */

	spinlock_t lock;		/* conns, states, ids */
	DECLARE_HASHTABLE(conns, 8);
	unsigned int nr_conns;
	struct xarray qpns;		/* QPN -> conn, for receives */
	struct ib_cm_id *listen[2];	/* OFED and IETF Service IDs */

	struct napi_struct napi;	/* RC receives and sends */
	struct ib_cq *recv_cq;		/* every RC QP's receive CQ */
	spinlock_t poll_lock;		/* any context, IRQ-safe */
	struct list_head poll_list;	/* conns whose send CQ fired */

	/* SRQ backend */
	struct ib_srq *srq;
	struct ipoib_cm_rx_buf *srq_ring;
	unsigned int srq_size;
	struct work_struct srq_limit_work;

	/* no-SRQ backend */
	atomic_t nosrq_conns;

	struct workqueue_struct *wq;	/* ordered: start, reap, idle */
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

/*
 * Schedule the CM NAPI from process context.  napi_schedule() only marks
 * the softirq pending; run with BH disabled, local_bh_enable() runs it
 * at once instead of whenever the next interrupt comes.  Not for IRQ
 * context or with interrupts disabled.
 */
static inline void ipoib_cm_napi_kick(struct ipoib_priv *priv)
{
	local_bh_disable();
	napi_schedule(&priv->cm.napi);
	local_bh_enable();
}

static inline void ipoib_cm_count(struct ipoib_priv *priv,
				  enum ipoib_cm_stat what, u64 n)
{
	atomic64_add(n, &priv->cm.stats[what]);
}

/* ipoib_trace.c: counted and traced */
void ipoib_count_drops(struct ipoib_priv *priv, enum ipoib_drop why,
		       unsigned int n);
void ipoib_cm_set_state(struct ipoib_cm_conn *conn, enum ipoib_cm_state next,
			enum ipoib_cm_event ev);

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
bool ipoib_mcast_is_broadcast(struct ipoib_priv *priv,
			      const union ib_gid *mgid);

/* ipoib_cm_conn.c */
int ipoib_cm_init(struct ipoib_priv *priv);
void ipoib_cm_cleanup(struct ipoib_priv *priv);
int ipoib_cm_start(struct ipoib_priv *priv);
void ipoib_cm_stop(struct ipoib_priv *priv);
int ipoib_set_mode(struct ipoib_priv *priv, bool connected);
struct ipoib_cm_transition ipoib_cm_event_locked(struct ipoib_cm_conn *conn,
						 enum ipoib_cm_event ev);
void ipoib_cm_id_event(struct ipoib_cm_conn *conn, struct ib_cm_id *id,
		       enum ipoib_cm_event ev);

/* An event from outside a CM callback: it never establishes. */
static inline void ipoib_cm_event(struct ipoib_cm_conn *conn,
				  enum ipoib_cm_event ev)
{
	ipoib_cm_id_event(conn, NULL, ev);
}

struct ipoib_cm_conn *ipoib_cm_conn_alloc(struct ipoib_priv *priv,
					  const union ib_gid *gid, u32 qpn,
					  bool active, gfp_t gfp);
void ipoib_cm_conn_insert(struct ipoib_cm_conn *conn);
struct ipoib_cm_conn *ipoib_cm_lookup(struct ipoib_priv *priv,
				      const union ib_gid *gid, u32 qpn,
				      bool active);
int ipoib_cm_create_qp(struct ipoib_cm_conn *conn);
int ipoib_cm_handler(struct ib_cm_id *id, const struct ib_cm_event *event);
void ipoib_cm_pdata_local(struct ipoib_priv *priv, u8 *buf);
bool ipoib_cm_enabled(struct ipoib_priv *priv);
void ipoib_cm_srq_event(struct ib_event *event, void *ctx);

/* ipoib_cm_tx.c */
bool ipoib_cm_xmit(struct ipoib_priv *priv, struct sk_buff *skb,
		   const u8 *daddr, struct ipoib_ah *ah);
void ipoib_cm_start_work(struct work_struct *work);
void ipoib_cm_cross_work(struct work_struct *work);
void ipoib_cm_fill_work(struct work_struct *work);
int ipoib_cm_rep_handler(struct ipoib_cm_conn *conn, struct ib_cm_id *id,
			 const struct ib_cm_event *event);
void ipoib_cm_rej_handler(struct ipoib_cm_conn *conn, struct ib_cm_id *id,
			  const struct ib_cm_event *event);
void ipoib_cm_tx_flush(struct ipoib_cm_conn *conn);
void ipoib_cm_tx_fallback(struct ipoib_cm_conn *conn,
			  struct sk_buff_head *waiting,
			  struct sk_buff_head *too_big);
void ipoib_cm_tx_yield(struct ipoib_cm_conn *conn,
		       struct sk_buff_head *waiting);
void ipoib_cm_tx_cq_event(struct ib_cq *cq, void *ctx);
void ipoib_cm_poll_open(struct ipoib_cm_conn *conn);
void ipoib_cm_poll_close(struct ipoib_cm_conn *conn);
void ipoib_cm_poll_tx(struct ipoib_priv *priv);
int ipoib_cm_tx_drain(struct ipoib_cm_conn *conn);
void ipoib_cm_tx_release(struct ipoib_cm_conn *conn);

/* ipoib_cm_rx.c */
int ipoib_cm_req_handler(struct ib_cm_id *id, const struct ib_cm_event *ev);
void ipoib_cm_establish(struct ipoib_cm_conn *conn, struct ib_cm_id *id);
void ipoib_cm_recv_done(struct ib_cq *cq, struct ib_wc *wc);
int ipoib_cm_rx_buf_fill(struct ipoib_priv *priv, struct ipoib_cm_rx_buf *buf,
			 gfp_t gfp);
void ipoib_cm_rx_buf_free(struct ipoib_priv *priv,
			  struct ipoib_cm_rx_buf *buf);
void ipoib_cm_rx_wr(struct ipoib_priv *priv, struct ipoib_cm_rx_buf *buf,
		    struct ib_recv_wr *wr, struct ib_sge *sge);
int ipoib_cm_napi_poll(struct napi_struct *napi, int budget);

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

/* ipoib_ud.c: shared with the RC send path */
int ipoib_tx_map(struct ipoib_priv *priv, struct ipoib_tx_buf *buf,
		 struct sk_buff *skb, struct ib_sge *sge);
void ipoib_tx_unmap(struct ipoib_priv *priv, struct ipoib_tx_buf *buf);
void ipoib_too_big(struct ipoib_priv *priv, struct sk_buff *skb,
		   unsigned int mtu);

extern struct ib_sa_client ipoib_sa_client;

#endif /* _IPOIB_H */
