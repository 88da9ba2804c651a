/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ipoib_cm: the inside of connected mode (RFC 4755), shared by the
 * ipoib_cm_*.c files and by nothing else in the driver.  It holds the
 * connection object, the receive buffers and the receive backend
 * interface, the connection state machine, the RFC 4755 wire formats and,
 * grouped by the file that defines them, the functions these files call
 * in each other.  What the rest of the driver may use is in ipoib.h.
 */

#ifndef _IPOIB_CM_PRIV_H
#define _IPOIB_CM_PRIV_H

#include "ipoib.h"

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

/*
 * Connected mode (RFC 4755): one RC connection per peer and direction, or
 * per peer with the bidirectional option.  The life of a connection is a
 * small state machine (ipoib_cm_state.c): events come from the CM, from
 * completions and from the driver's own tasks; each (state, event) pair
 * gives the next state and one action.  ipoib_cm_conn.c takes the step;
 * its reaper closes and falls back, ipoib_cm_handshake.c connects,
 * establishes and hands a yielding connection's packets over.
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
	IPOIB_CM_REQ_AGAIN,	/* REJ, Invalid Service ID: REQ to RFC 4755's */
};

/* One RC connection and its QP. */
struct ipoib_cm_conn {
	struct hlist_node node;		/* priv->cm.conns, under cm.lock */
	struct hlist_node peer_node;	/* passive: cm.passive, cm.lock */
	struct list_head poll_node;	/* priv->cm.poll_list, poll_lock */
	struct list_head reap_node;	/* cm.reap_list, then a reap batch */
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
	bool sendable;			/* QP in RTS with a send ring; lock */
	unsigned int backoff;		/* seconds before the next REQ */
	unsigned long retry_at;		/* FAILED: no REQ before this */
	unsigned long last_used;	/* jiffies of the last packet */
	unsigned long created;

	/*
	 * The CM id, set and cleared under cm.lock.  Whoever clears it owns
	 * its destruction: the reaper (ipoib_cm_teardown_begin()), or the REQ
	 * handler taking it back on failure, which then returns non-zero so
	 * the CM destroys it.  A CM callback never uses this field: it uses
	 * the id it is called with, valid until it returns (the reaper's
	 * ib_destroy_cm_id() waits for it), and compares it with this field
	 * at most, to learn whether teardown has begun (the REJ handler
	 * before it queues a REQ again).  The start task publishes it
	 * and the event task reads it, each under cm.lock, and both use the
	 * id after: the reaper waits for the start task before it clears the
	 * field, and for the event task between clearing it and destroying
	 * the id.
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
	 * structure, which they point to, is never freed.  Set by the
	 * reaper; the QP and send CQ handlers read it (READ_ONCE) and do
	 * nothing once it is set, as the interface may be gone.
	 */
	bool leaked;
	/*
	 * Reaper only: the QP could not be moved to ERR or shown drained
	 * during this teardown; it is leaked, not destroyed.
	 */
	int teardown_err;
	/*
	 * Reaper only: the QP never left RESET (a setup step failed before
	 * its first transition), so no work request was ever posted to it
	 * and nothing can complete: it is destroyed without a drain.
	 */
	bool never_ready;
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
	 * The receive side (no-SRQ backend, ipoib_cm_nosrq.c): the CM NAPI
	 * adds and removes buffers under rx_lock; before the QP is shared
	 * (qp_ready) and after it is drained (release), its owner alone.
	 */
	spinlock_t rx_lock;
	struct ipoib_cm_rx_buf *rx_ring;	/* rx_max slots */
	u16 *rx_free;			/* free slots of rx_ring: a stack */
	unsigned int rx_nfree;
	unsigned int rx_max;		/* ring depth */
	unsigned int rx_alloc;		/* slots with a buffer */
	unsigned int rx_low;		/* buffers kept through quiet spells */
	unsigned int rx_meta;		/* budget the ring's bookkeeping took */
	unsigned int rx_posted;		/* on the QP, or back and in hand */
	u32 rx_spell;			/* the NAPI busy spell of rx_burst */
	unsigned int rx_burst;		/* receives consumed in that spell */
	unsigned int rx_spell_alloc;	/* rx_alloc when that spell began */
	unsigned long rx_last;		/* jiffies of the last receive */
	bool rx_counted;		/* counted against the no-SRQ cap */

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
	/*
	 * The QPs take their receives from the shared SRQ: said in our REQs
	 * and REPs, a buffer has at most max_srq_sge pages, and the receive
	 * CQ needs room for the SRQ alone, not a ring per QP.
	 */
	bool srq;
	int (*start)(struct ipoib_priv *priv);
	void (*stop)(struct ipoib_priv *priv);
	/* Admission of a new QP; a REQ over the limit is rejected. */
	int (*admit)(struct ipoib_cm_conn *conn);
	void (*qp_attr)(struct ipoib_cm_conn *conn,
			struct ib_qp_init_attr *attr);
	/* The QP is in INIT: post what it needs before the peer sends. */
	int (*qp_ready)(struct ipoib_cm_conn *conn);
	/* Which connection a completion belongs to (NULL if gone). */
	struct ipoib_cm_conn *(*conn_of)(struct ipoib_priv *priv,
					 struct ipoib_cm_rx_buf *buf,
					 struct ib_wc *wc);
	/* A buffer came back; give it (refilled) to the HCA again. */
	void (*repost)(struct ipoib_priv *priv, struct ipoib_cm_conn *conn,
		       struct ipoib_cm_rx_buf *buf, bool consumed);
	/*
	 * The QPs of the reaper's batch (linked by reap_node) are in ERR:
	 * wait until no completion of the receives of any of them that
	 * ipoib_cm_draining() names can still arrive in, or wait in, the
	 * receive CQ.  One that cannot be shown drained in time gets its
	 * teardown_err set: its QP must not be destroyed.
	 */
	void (*drain)(struct ipoib_priv *priv, struct list_head *batch);
	void (*release)(struct ipoib_cm_conn *conn);
	void (*show)(struct seq_file *m, struct ipoib_cm_conn *conn);
	/*
	 * Optional: @conn holds receive memory for traffic that has stopped,
	 * and closing it is the only way to give that back (the idle scan
	 * does, under cm.lock).
	 */
	bool (*hoarding)(struct ipoib_cm_conn *conn);
};

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

/*
 * During a reap: the connection's QP exists, is in ERR, and its
 * completions are still to be shown consumed.
 */
static inline bool ipoib_cm_draining(const struct ipoib_cm_conn *conn)
{
	return conn->qp && !conn->teardown_err && !conn->never_ready;
}

/* Jiffies left until @end, 0 once it has passed. */
static inline unsigned long ipoib_cm_until(unsigned long end)
{
	return time_before(jiffies, end) ? end - jiffies : 0;
}

static inline void ipoib_cm_count(struct ipoib_priv *priv,
				  enum ipoib_cm_stat what, u64 n)
{
	atomic64_add(n, &priv->cm.stats[what]);
}

/* ipoib_cm_proto.c: RFC 4755 wire formats, pure functions */
void ipoib_cm_pdata_pack(void *buf, const struct ipoib_cm_pdata *pd);
int ipoib_cm_pdata_unpack(const void *buf, size_t len,
			  struct ipoib_cm_pdata *pd);
enum ib_cm_rej_reason ipoib_cm_pdata_reject(int err);
bool ipoib_cm_rej_crossed(int reason, const void *buf, size_t len,
			  u32 dialled);
__be64 ipoib_cm_service_id(u64 base, u32 qpn);
int ipoib_cm_service_id_qpn(__be64 sid, u32 *qpn);
u32 ipoib_cm_conn_mtu(u32 local_rx_mtu, u32 peer_rx_mtu);

/* ipoib_cm_size.c */
/* Receives on an accepted no-SRQ QP before the REP. */
#define IPOIB_CM_NOSRQ_FIRST		16U
/* New QPs whose first receives growth leaves room for. */
#define IPOIB_CM_NOSRQ_RESERVE_QPS	8U
u32 ipoib_cm_nosrq_budget(u64 mem, u32 buf_bytes, u32 max_cqe);
u32 ipoib_cm_nosrq_reserve(u32 budget);
bool ipoib_cm_nosrq_may_take(u32 budget, u32 used, bool grow);
bool ipoib_cm_nosrq_should_grow(u32 burst, u32 start, u32 alloc);
u32 ipoib_cm_nosrq_ring_units(u32 slots, u32 slot_bytes, u32 buf_bytes);
u32 ipoib_cm_recv_cqe(u32 bufs, u32 max_cqe);

/* ipoib_cm_state.c: the state machine as a table, and its names */
struct ipoib_cm_transition ipoib_cm_fsm(enum ipoib_cm_state state,
					enum ipoib_cm_event event);
extern const char *const ipoib_cm_state_names[IPOIB_CM_STATE_MAX];
extern const char *const ipoib_cm_event_names[IPOIB_CM_EV_MAX];

/* ipoib_trace.c: every state change after creation, traced */
void ipoib_cm_set_state(struct ipoib_cm_conn *conn, enum ipoib_cm_state next,
			enum ipoib_cm_event ev);

/* ipoib_cm_conn.c: the connection object, its table and its life */
struct ipoib_cm_conn *ipoib_cm_conn_alloc(struct ipoib_priv *priv,
					  const union ib_gid *gid, u32 qpn,
					  bool active, gfp_t gfp);
void ipoib_cm_conn_insert(struct ipoib_cm_conn *conn);
unsigned int ipoib_cm_peer_conns(struct ipoib_priv *priv,
				 const union ib_gid *gid);
struct ipoib_cm_conn *ipoib_cm_lookup(struct ipoib_priv *priv,
				      const union ib_gid *gid, u32 qpn,
				      bool active);
int ipoib_cm_create_qp(struct ipoib_cm_conn *conn);
void ipoib_cm_queue_reap(struct ipoib_cm_conn *conn);
void ipoib_cm_drain_failed(struct ipoib_cm_conn *conn, int err);
void ipoib_cm_reap_work(struct work_struct *work);
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

/* ipoib_cm_handshake.c: the CM messages that set a connection up */
int ipoib_cm_listen(struct ipoib_priv *priv);
void ipoib_cm_start_work(struct work_struct *work);
void ipoib_cm_cross_work(struct work_struct *work);
void ipoib_cm_req_again(struct ipoib_cm_conn *conn);
void ipoib_cm_establish(struct ipoib_cm_conn *conn, struct ib_cm_id *id);

/* ipoib_cm_mode.c: connected mode of an interface (see also ipoib.h) */
void ipoib_cm_srq_event(struct ib_event *event, void *ctx);

/* ipoib_cm_tx.c: the RC send path */
void ipoib_cm_tx_flush(struct ipoib_cm_conn *conn);
void ipoib_cm_tx_fallback(struct ipoib_cm_conn *conn,
			  struct sk_buff_head *waiting,
			  struct sk_buff_head *too_big);
void ipoib_cm_tx_hand_over(struct ipoib_cm_conn *from,
			   struct ipoib_cm_conn *to);
void ipoib_cm_tx_push_waiting(struct ipoib_cm_conn *conn);
void ipoib_cm_tx_cq_event(struct ib_cq *cq, void *ctx);
void ipoib_cm_poll_open(struct ipoib_cm_conn *conn);
void ipoib_cm_poll_close(struct ipoib_cm_conn *conn);
void ipoib_cm_poll_tx(struct ipoib_priv *priv);
bool ipoib_cm_tx_drained(struct ipoib_cm_conn *conn);
void ipoib_cm_tx_release(struct ipoib_cm_conn *conn);

/* ipoib_cm_rx.c: the RC receive path, for both receive backends */
int ipoib_cm_rx_buf_fill(struct ipoib_priv *priv, struct ipoib_cm_rx_buf *buf,
			 gfp_t gfp);
void ipoib_cm_rx_buf_free(struct ipoib_priv *priv,
			  struct ipoib_cm_rx_buf *buf);
void ipoib_cm_rx_wr(struct ipoib_priv *priv, struct ipoib_cm_rx_buf *buf,
		    struct ib_recv_wr *wr, struct ib_sge *sge);
void ipoib_cm_recv_done(struct ib_cq *cq, struct ib_wc *wc);
int ipoib_cm_napi_poll(struct napi_struct *napi, int budget);

/* ipoib_cm_srq.c, ipoib_cm_nosrq.c: the two receive backends */
extern const struct ipoib_cm_rx_ops ipoib_cm_srq_ops;
extern const struct ipoib_cm_rx_ops ipoib_cm_nosrq_ops;

#endif /* _IPOIB_CM_PRIV_H */
