// SPDX-License-Identifier: GPL-2.0
/*
 * Connected mode (RFC 4755): setting connections up, one CM message at a
 * time.  Every message ipoib_cm sends or receives is handled in this
 * file:
 *
 *   REQ out        ipoib_cm_start_work(), the active side's start task,
 *                  through ipoib_cm_send_req(); again, on RFC 4755's
 *                  Service ID, ipoib_cm_req_again()
 *   REQ in         ipoib_cm_req_handler(), the handler of the listening
 *                  CM ids that ipoib_cm_listen() creates
 *   REP out        ipoib_cm_send_rep(), once the REQ is accepted
 *   REP in         ipoib_cm_rep_handler(), which answers with the RTU
 *   RTU in         ipoib_cm_establish(), through ipoib_cm_id_event()
 *   COMM_EST       the same, when data arrives before the RTU
 *   REJ out        the REQ and REP handlers, when they refuse
 *   REJ in         ipoib_cm_rej_handler(); after crossed REQs the peer's
 *                  REQ is awaited, ipoib_cm_cross_work() gives up on it
 *   crossed REQs   ipoib_cm_req_loses() decides which REQ wins
 *   timeouts       ipoib_cm_handler(): the REQ or REP got no answer
 *   DREQ in        ipoib_cm_handler() sends the DREP
 *   DREP, MRA      ignored, in ipoib_cm_handler()
 *
 * ipoib_cm_handler() dispatches the events of a connection's own CM id;
 * REQs come to the listening ids instead.  DREQs go out when teardown
 * destroys the CM id (ipoib_cm_conn.c).  Both sides carry our private
 * data, ipoib_cm_pdata_local().  The QP follows the exchange:
 * ipoib_cm_qp_init() and ipoib_cm_modify() on the active side,
 * ipoib_cm_rx_modify() on the passive side (which also sets the PSN
 * announced in the REP), and RTS on the passive side in
 * ipoib_cm_establish().
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/error-injection.h>
#include <linux/random.h>
#include <linux/slab.h>

#include "ipoib.h"
#include "ipoib_cm_priv.h"

#define IPOIB_CM_PLT		18	/* packet lifetime, as rdma_cm on RoCE */
#define IPOIB_CM_RESPONSE	18	/* CM response timeout, ~1 s */
#define IPOIB_CM_MAX_RETRIES	6
/* RFC 4755 7.1: keep RC retransmission short next to TCP's timers. */
#define IPOIB_CM_RETRY_COUNT	3
#define IPOIB_CM_RNR_RETRY	7	/* forever: ride out a receive shortfall */
/* How long the peer's REQ may take after it rejected our crossing one. */
#define IPOIB_CM_CROSS_WAIT	(4 * HZ)

/* Our private data: UD QPN and the receive MTU our buffers hold. */
static void ipoib_cm_pdata_local(struct ipoib_priv *priv, u8 *buf)
{
	struct ipoib_cm_pdata pd = {
		.qpn = priv->qp->qp_num,
		.rx_mtu = priv->cm.rx_mtu,
	};

	ipoib_cm_pdata_pack(buf, &pd);
}

static noinline int ipoib_cm_qp_init(struct ipoib_cm_conn *conn)
{
	struct ipoib_priv *priv = conn->priv;
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_INIT,
		.pkey_index = priv->pkey_index,
		.port_num = priv->port_num,
		.qp_access_flags = 0,
	};

	return ib_modify_qp(conn->qp, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
			    IB_QP_PORT | IB_QP_ACCESS_FLAGS);
}
ALLOW_ERROR_INJECTION(ipoib_cm_qp_init, ERRNO);

static noinline int ipoib_cm_modify(struct ipoib_cm_conn *conn,
				    struct ib_cm_id *id,
				    enum ib_qp_state state)
{
	struct ib_qp_attr attr = { .qp_state = state };
	int mask, ret;

	ret = ib_cm_init_qp_attr(id, &attr, &mask);
	if (!ret && state == IB_QPS_RTR)
		attr.min_rnr_timer = IPOIB_CM_MIN_RNR_TIMER;
	if (!ret)
		ret = ib_modify_qp(conn->qp, &attr, mask);
	if (ret)
		netdev_warn(conn->priv->netdev, "RC QP 0x%06x to %s failed: %d\n",
			    conn->qp_num, state == IB_QPS_RTS ? "RTS" :
			    state == IB_QPS_RTR ? "RTR" : "INIT", ret);
	return ret;
}
ALLOW_ERROR_INJECTION(ipoib_cm_modify, ERRNO);

/*
 * The CM learns the PSN we expect only when the REP goes out, after RTR:
 * @psn is that PSN, given to the QP here and to the peer in the REP.
 */
static noinline int ipoib_cm_rx_modify(struct ipoib_cm_conn *conn,
				       struct ib_cm_id *id,
				       enum ib_qp_state state, u32 psn)
{
	struct ib_qp_attr attr = { .qp_state = state };
	int mask, ret;

	ret = ib_cm_init_qp_attr(id, &attr, &mask);
	if (ret)
		return ret;
	if (state == IB_QPS_RTR) {
		attr.rq_psn = psn;
		attr.min_rnr_timer = IPOIB_CM_MIN_RNR_TIMER;
	}
	return ib_modify_qp(conn->qp, &attr, mask);
}
ALLOW_ERROR_INJECTION(ipoib_cm_rx_modify, ERRNO);

static int ipoib_cm_handler(struct ib_cm_id *id,
			    const struct ib_cm_event *event);

/* Path record of a RoCE peer: built here, RoCE has no SA. */
static int ipoib_cm_roce_path(struct ipoib_priv *priv,
			      const union ib_gid *dgid,
			      struct sa_path_rec *rec)
{
	u8 mac[ETH_ALEN];

	if (!ipoib_gid_to_mac(dgid, mac))
		return -EADDRNOTAVAIL;
	memset(rec, 0, sizeof(*rec));
	rec->rec_type = sa_conv_gid_to_pathrec_type(priv->sgid_attr->gid_type);
	rec->sgid = priv->gid;
	rec->dgid = *dgid;
	sa_path_set_dmac(rec, mac);
	rec->roce.route_resolved = true;
	rec->hop_limit = 64;
	rec->pkey = cpu_to_be16(priv->pkey);
	rec->mtu_selector = IB_SA_EQ;
	rec->mtu = priv->mcast_ib_mtu;
	rec->rate_selector = IB_SA_EQ;
	rec->rate = IB_RATE_PORT_CURRENT;
	rec->packet_life_time_selector = IB_SA_EQ;
	rec->packet_life_time = IPOIB_CM_PLT;
	rec->reversible = 1;
	rec->numb_path = 1;
	rec->sl = priv->sl;
	return 0;
}

/* Send our REQ on @id, the connection's CM id. */
static noinline int ipoib_cm_send_req(struct ipoib_cm_conn *conn,
				      struct ib_cm_id *id)
{
	struct ipoib_priv *priv = conn->priv;
	struct ib_cm_req_param req = {};
	u8 pdata[IPOIB_CM_PDATA_LEN];

	ipoib_cm_pdata_local(priv, pdata);
	req.primary_path = conn->path_rec;
	req.ppath_sgid_attr = priv->sgid_attr;
	req.service_id = ipoib_cm_service_id(conn->ietf_sid ? IPOIB_CM_SID_IETF :
					     IPOIB_CM_SID_OFED, conn->qpn);
	req.qp_num = conn->qp_num;
	req.qp_type = IB_QPT_RC;
	req.starting_psn = get_random_u32() & 0xffffff;
	req.private_data = pdata;
	req.private_data_len = sizeof(pdata);
	req.remote_cm_response_timeout = IPOIB_CM_RESPONSE;
	req.local_cm_response_timeout = IPOIB_CM_RESPONSE;
	req.retry_count = IPOIB_CM_RETRY_COUNT;
	req.rnr_retry_count = IPOIB_CM_RNR_RETRY;
	req.max_cm_retries = IPOIB_CM_MAX_RETRIES;
	req.srq = priv->cm.ops->srq;
	return ib_send_cm_req(id, &req);
}
ALLOW_ERROR_INJECTION(ipoib_cm_send_req, ERRNO);

/* Open a connection: path, QP in INIT with receives posted, REQ. */
void ipoib_cm_start_work(struct work_struct *work)
{
	struct ipoib_cm_conn *conn = container_of(work, struct ipoib_cm_conn,
						  start_work);
	struct ipoib_priv *priv = conn->priv;
	struct ipoib_cm_transition t;
	struct ib_cm_id *id;
	int ret;

	spin_lock_bh(&priv->cm.lock);
	ret = conn->state == IPOIB_CM_NEW && !conn->reaping ? 0 : -ESHUTDOWN;
	spin_unlock_bh(&priv->cm.lock);
	if (ret)
		return;

	if (!conn->path_rec) {
		conn->path_rec = kzalloc(sizeof(*conn->path_rec), GFP_KERNEL);
		if (!conn->path_rec) {
			ret = -ENOMEM;
			goto fail;
		}
	}
	if (priv->roce)
		ret = ipoib_cm_roce_path(priv, &conn->gid, conn->path_rec);
	else
		ret = ipoib_path_get_rec(priv, &conn->gid, conn->path_rec);
	if (ret)
		goto fail;

	ret = ipoib_cm_create_qp(conn);
	if (ret)
		goto fail;
	ret = ipoib_cm_qp_init(conn);
	if (!ret)
		ret = priv->cm.ops->qp_ready(conn);
	if (ret)
		goto fail;

	id = ib_create_cm_id(priv->ibdev, ipoib_cm_handler, conn);
	if (IS_ERR(id)) {
		ret = PTR_ERR(id);
		goto fail;
	}
	spin_lock_bh(&priv->cm.lock);
	t = ipoib_cm_fsm(conn->state, IPOIB_CM_EV_START);
	if (t.action == IPOIB_CM_ACT_CONNECT) {
		ipoib_cm_set_state(conn, t.next, IPOIB_CM_EV_START);
		conn->id = id;
	}
	spin_unlock_bh(&priv->cm.lock);
	if (t.action != IPOIB_CM_ACT_CONNECT) {
		/* Closed meanwhile: the reaper frees the QP. */
		ib_destroy_cm_id(id);
		return;
	}
	/*
	 * The id is the reaper's now, but the reaper cancels this task,
	 * waiting for it, before it looks at conn->id: the id stays valid
	 * for this task.
	 */
	ret = ipoib_cm_send_req(conn, id);
	if (ret)
		goto fail;
	return;

fail:
	netdev_dbg(priv->netdev, "cannot connect to %pI6/0x%06x: %d\n",
		   conn->gid.raw, conn->qpn, ret);
	ipoib_cm_event(conn, IPOIB_CM_EV_REJ);
}

/* Our REQ to the same peer is pending: RFC 4755 3.3 decides. */
static bool ipoib_cm_req_loses(struct ipoib_priv *priv,
			       struct ipoib_cm_conn *conn,
			       struct ipoib_cm_conn **mine)
{
	struct ipoib_cm_conn *ours;

	*mine = NULL;
	if (!ipoib_cm_bidirectional)
		return false;
	ours = ipoib_cm_lookup(priv, &conn->gid, conn->qpn, true);
	if (!ours || (ours->state != IPOIB_CM_NEW &&
		      ours->state != IPOIB_CM_REQ_SENT))
		return false;
	/* The smaller address accepts; flags do not take part. */
	if (ipoib_hwaddr_cmp(priv->netdev->dev_addr, conn->addr) > 0)
		return true;
	*mine = ours;
	return false;
}

/*
 * A REQ belongs to this interface only if it is for the interface's
 * partition: the low 15 bits of the P_Key name the partition, the top
 * bit is the sender's membership type, which may be limited (a full
 * member, as we are, talks to limited members).  The REQ's Service ID
 * names our UD QPN; a peer in another partition that dials it must not
 * get a connection across partitions.
 */
static bool ipoib_cm_req_pkey_ok(struct ipoib_priv *priv,
				 const struct ib_cm_req_event_param *req)
{
	u16 pkey = be16_to_cpu(req->primary_path->pkey);

	return (pkey & 0x7fff) == (priv->pkey & 0x7fff);
}

/*
 * Without SRQ every accepted QP holds receive memory: one peer (GID) may
 * have at most cm_nosrq_per_peer of them open to us, closing ones
 * included (their memory is not back yet).  cm.lock held.
 */
static bool ipoib_cm_peer_full(struct ipoib_priv *priv,
			       const union ib_gid *gid)
{
	if (priv->cm.ops->srq)
		return false;
	return ipoib_cm_peer_conns(priv, gid) >= ipoib_cm_nosrq_per_peer;
}

static noinline int ipoib_cm_send_rep(struct ipoib_cm_conn *conn,
				      struct ib_cm_id *id, u32 psn)
{
	struct ipoib_priv *priv = conn->priv;
	struct ib_cm_rep_param rep = {};
	u8 pdata[IPOIB_CM_PDATA_LEN];

	ipoib_cm_pdata_local(priv, pdata);
	rep.qp_num = conn->qp_num;
	rep.starting_psn = psn;
	rep.private_data = pdata;
	rep.private_data_len = sizeof(pdata);
	/* The peer's sends wait out a short receive shortfall here. */
	rep.rnr_retry_count = 7;
	rep.srq = priv->cm.ops->srq;
	return ib_send_cm_rep(id, &rep);
}
ALLOW_ERROR_INJECTION(ipoib_cm_send_rep, ERRNO);

/**
 * ipoib_cm_req_handler - a peer asks for a connection
 * @id: the new CM id (its context is still the interface)
 * @ev: the REQ
 *
 * Malformed REQs, REQs over the no-SRQ cap and the losing half of
 * crossing REQs are rejected with a reason and our private data; the CM
 * then destroys @id.  Otherwise the connection and @id go into the table
 * together, under cm.lock and only while connected mode is not stopping,
 * before anything that can fail: from then on the reaper cleans up after
 * every failure, and owns @id unless we take it back (see conn->id).
 * Then: QP in RTR with receives posted, REP out; RTS comes with the RTU
 * or the first receive.
 */
static int ipoib_cm_req_handler(struct ib_cm_id *id,
				const struct ib_cm_event *ev)
{
	struct ipoib_priv *priv = id->context;
	const struct ib_cm_req_event_param *req = &ev->param.req_rcvd;
	enum ib_cm_rej_reason reason;
	struct ipoib_cm_conn *conn, *mine = NULL;
	u8 pdata[IPOIB_CM_PDATA_LEN];
	struct ipoib_cm_pdata pd;
	bool crossed, own_id;
	u32 psn;
	int ret;

	if (ev->event != IB_CM_REQ_RECEIVED)
		return 0;
	ipoib_cm_pdata_local(priv, pdata);

	ret = ipoib_cm_pdata_unpack(ev->private_data,
				    IB_CM_REQ_PRIVATE_DATA_SIZE, &pd);
	if (ret || req->qp_type != IB_QPT_RC) {
		net_warn_ratelimited("%s: malformed REQ from %pI6 rejected (%s)\n",
				     priv->netdev->name,
				     req->primary_path->dgid.raw,
				     ret == -ERANGE ? "receive MTU out of range" :
				     ret ? "private data too short" :
				     "not an RC QP");
		ipoib_cm_count(priv, IPOIB_CM_ST_BAD_REQ, 1);
		reason = ret ? ipoib_cm_pdata_reject(ret) :
			 IB_CM_REJ_INVALID_TRANSPORT_TYPE;
		goto reject;
	}
	if (!ipoib_cm_req_pkey_ok(priv, req)) {
		net_info_ratelimited("%s: REQ from %pI6 for P_Key 0x%04x rejected: interface P_Key is 0x%04x\n",
				     priv->netdev->name,
				     req->primary_path->dgid.raw,
				     be16_to_cpu(req->primary_path->pkey),
				     priv->pkey);
		ipoib_cm_count(priv, IPOIB_CM_ST_BAD_PKEY, 1);
		reason = IB_CM_REJ_UNSUPPORTED;
		goto reject;
	}
	if (!READ_ONCE(priv->cm.running)) {
		reason = IB_CM_REJ_NO_RESOURCES;
		goto reject;
	}

	conn = ipoib_cm_conn_alloc(priv, &req->primary_path->dgid, pd.qpn,
				   false, GFP_KERNEL);
	if (!conn) {
		reason = IB_CM_REJ_NO_RESOURCES;
		goto reject;
	}
	conn->mtu = ipoib_cm_conn_mtu(priv->cm.rx_mtu, pd.rx_mtu);

	/* The backend counts and logs why. */
	ret = priv->cm.ops->admit(conn);
	if (ret) {
		kfree(conn);
		reason = IB_CM_REJ_NO_QP;
		goto reject;
	}

	spin_lock_bh(&priv->cm.lock);
	if (!priv->cm.stopping && ipoib_cm_peer_full(priv, &conn->gid)) {
		spin_unlock_bh(&priv->cm.lock);
		net_info_ratelimited("%s: %u connections from %pI6 without SRQ (cm_nosrq_per_peer): REQ refused\n",
				     priv->netdev->name,
				     ipoib_cm_nosrq_per_peer, conn->gid.raw);
		ipoib_cm_count(priv, IPOIB_CM_ST_PEER_CAP, 1);
		priv->cm.ops->release(conn);
		kfree(conn);
		reason = IB_CM_REJ_NO_QP;
		goto reject;
	}
	if (priv->cm.stopping || ipoib_cm_req_loses(priv, conn, &mine)) {
		crossed = !priv->cm.stopping;
		spin_unlock_bh(&priv->cm.lock);
		if (crossed) {
			ipoib_cm_count(priv, IPOIB_CM_ST_CROSSED, 1);
			reason = IB_CM_REJ_CONSUMER_DEFINED;
		} else {
			reason = IB_CM_REJ_NO_RESOURCES;
		}
		priv->cm.ops->release(conn);
		kfree(conn);
		goto reject;
	}
	crossed = mine;		/* looked up again once our REP is out */
	ipoib_cm_conn_insert(conn);
	id->context = conn;
	id->cm_handler = ipoib_cm_handler;
	conn->id = id;
	spin_unlock_bh(&priv->cm.lock);

	/* The reaper cannot free @conn before we return: it needs @id. */
	ret = ipoib_cm_create_qp(conn);
	psn = get_random_u32() & 0xffffff;
	if (!ret)
		ret = ipoib_cm_rx_modify(conn, id, IB_QPS_INIT, psn);
	if (!ret)
		ret = priv->cm.ops->qp_ready(conn);
	if (!ret) {
		conn->rtr = true;	/* may take buffers from now on */
		ret = ipoib_cm_rx_modify(conn, id, IB_QPS_RTR, psn);
	}
	if (!ret)
		ret = ipoib_cm_send_rep(conn, id, psn);
	if (ret) {
		netdev_warn(priv->netdev, "cannot accept %pI6/0x%06x: %d\n",
			    conn->gid.raw, conn->qpn, ret);
		goto fail;
	}

	if (crossed) {
		/* We accepted theirs: our REQ will be refused. */
		spin_lock_bh(&priv->cm.lock);
		mine = ipoib_cm_lookup(priv, &conn->gid, conn->qpn, true);
		if (mine && (mine->state == IPOIB_CM_NEW ||
			     mine->state == IPOIB_CM_REQ_SENT)) {
			ipoib_cm_count(priv, IPOIB_CM_ST_CROSSED, 1);
			ipoib_cm_event_locked(mine, IPOIB_CM_EV_CROSSED);
			/* Its packets before any the lookup now gives @conn. */
			ipoib_cm_tx_hand_over(mine, conn);
		}
		spin_unlock_bh(&priv->cm.lock);
		ipoib_cm_tx_push_waiting(conn);
	}
	return 0;

fail:
	/*
	 * Take @id back unless the reaper has it already (it then waits in
	 * ib_destroy_cm_id() for us to return 0).  If we took it, the CM
	 * destroys it when we return non-zero, and nothing else will.  The
	 * error is fed in the same section: once @id is ours the reaper
	 * does not wait for us, and @conn may be freed as soon as the lock
	 * is dropped (a stop may have queued its reap already).
	 */
	spin_lock_bh(&priv->cm.lock);
	own_id = conn->id == id;
	if (own_id)
		conn->id = NULL;
	ipoib_cm_event_locked(conn, IPOIB_CM_EV_ERROR);
	spin_unlock_bh(&priv->cm.lock);
	ib_send_cm_rej(id, IB_CM_REJ_NO_RESOURCES, NULL, 0, pdata,
		       sizeof(pdata));
	ipoib_cm_count(priv, IPOIB_CM_ST_REQ_REJECTED, 1);
	return own_id ? -EINVAL : 0;

reject:
	ib_send_cm_rej(id, reason, NULL, 0, pdata, sizeof(pdata));
	ipoib_cm_count(priv, IPOIB_CM_ST_REQ_REJECTED, 1);
	return -EINVAL;
}

int ipoib_cm_listen(struct ipoib_priv *priv)
{
	static const u64 bases[] = { IPOIB_CM_SID_OFED, IPOIB_CM_SID_IETF };
	unsigned int i;
	int ret;

	for (i = 0; i < ARRAY_SIZE(bases); i++) {
		struct ib_cm_id *id;

		id = ib_create_cm_id(priv->ibdev, ipoib_cm_req_handler, priv);
		if (IS_ERR(id)) {
			ret = PTR_ERR(id);
			goto err;
		}
		ret = ib_cm_listen(id, ipoib_cm_service_id(bases[i],
							   priv->qp->qp_num));
		if (ret) {
			ib_destroy_cm_id(id);
			netdev_err(priv->netdev,
				   "cannot listen on Service ID 0x%016llx: %d\n",
				   bases[i] | priv->qp->qp_num, ret);
			goto err;
		}
		priv->cm.listen[i] = id;
	}
	return 0;
err:
	while (i--) {
		ib_destroy_cm_id(priv->cm.listen[i]);
		priv->cm.listen[i] = NULL;
	}
	return ret;
}

/**
 * ipoib_cm_rep_handler - the peer accepted our REQ
 * @conn: the connection
 * @id: the CM id the REP came on (conn->id may be gone already)
 * @event: the REP
 *
 * QP to RTR and RTS, RTU out, held packets sent.  A malformed REP is
 * answered with a REJ and the peer served over UD.  Returns 0: the id is
 * the reaper's to destroy.
 */
static int ipoib_cm_rep_handler(struct ipoib_cm_conn *conn,
				struct ib_cm_id *id,
				const struct ib_cm_event *event)
{
	struct ipoib_priv *priv = conn->priv;
	enum ib_cm_rej_reason reason;
	u8 pdata[IPOIB_CM_PDATA_LEN];
	struct ipoib_cm_pdata pd;
	int ret;

	ipoib_cm_pdata_local(priv, pdata);
	ret = ipoib_cm_pdata_unpack(event->private_data,
				    IB_CM_REP_PRIVATE_DATA_SIZE, &pd);
	if (ret) {
		net_warn_ratelimited("%s: malformed REP from %pI6: %s\n",
				     priv->netdev->name, conn->gid.raw,
				     ret == -ERANGE ?
				     "receive MTU out of range" :
				     "private data too short");
		reason = ipoib_cm_pdata_reject(ret);
		goto malformed;
	}
	/*
	 * RFC 4755 section 6: the private data carries the sender's UD QPN
	 * (not the RC QPN the REP announces in its own field).  The peer we
	 * dialled is the one whose UD QPN is in the Service ID: a REP that
	 * names another is not from it, or is garbled.
	 */
	if (pd.qpn != conn->qpn) {
		net_warn_ratelimited("%s: REP from %pI6 names UD QPN 0x%06x, we dialled 0x%06x: rejected\n",
				     priv->netdev->name, conn->gid.raw,
				     pd.qpn, conn->qpn);
		reason = IB_CM_REJ_UNSUPPORTED;
		goto malformed;
	}
	conn->mtu = ipoib_cm_conn_mtu(priv->cm.rx_mtu, pd.rx_mtu);
	conn->rtr = true;	/* may take buffers from now on */
	ret = ipoib_cm_modify(conn, id, IB_QPS_RTR);
	if (!ret)
		ret = ipoib_cm_modify(conn, id, IB_QPS_RTS);
	if (ret) {
		reason = IB_CM_REJ_NO_RESOURCES;
		goto reject;
	}

	ib_send_cm_rtu(id, NULL, 0);
	ipoib_cm_id_event(conn, id, IPOIB_CM_EV_REP);
	return 0;

malformed:
	ipoib_cm_count(priv, IPOIB_CM_ST_BAD_REP, 1);
reject:
	ib_send_cm_rej(id, reason, NULL, 0, pdata, sizeof(pdata));
	ipoib_cm_event(conn, IPOIB_CM_EV_REJ);
	return 0;
}

/**
 * ipoib_cm_establish - a connection reached "established"
 * @conn: the connection (RTU, COMM_EST, or our REP handled)
 * @id: the CM id of the callback that reported it
 *
 * The passive QP goes from RTR to RTS only now; then the packets held on
 * the connection go out, in order, and its send CQ is armed.
 */
void ipoib_cm_establish(struct ipoib_cm_conn *conn, struct ib_cm_id *id)
{
	struct ipoib_priv *priv = conn->priv;
	struct ib_qp_attr attr = { .qp_state = IB_QPS_RTS };
	int mask, ret;

	if (!conn->active) {
		ret = WARN_ON_ONCE(!id) ? -EINVAL :
		      ib_cm_init_qp_attr(id, &attr, &mask);
		if (!ret)
			ret = ib_modify_qp(conn->qp, &attr, mask);
		if (ret) {
			netdev_warn(priv->netdev, "RC QP 0x%06x to RTS failed: %d\n",
				    conn->qp_num, ret);
			ipoib_cm_event(conn, IPOIB_CM_EV_ERROR);
			return;
		}
	}
	ipoib_cm_count(priv, conn->active ? IPOIB_CM_ST_ACTIVE_UP :
		       IPOIB_CM_ST_PASSIVE_UP, 1);
	conn->backoff = 0;
	ipoib_cm_tx_flush(conn);
}

/**
 * ipoib_cm_req_again - dial again, on RFC 4755's Service ID
 * @conn: an active connection whose REQ was refused with Invalid Service ID
 *
 * From the connection's event task (ipoib_cm_rej_handler() queues it).
 * The id is read under cm.lock; teardown clears conn->id under it and
 * then waits for this task, so a REQ sent here is out before teardown's
 * ib_destroy_cm_id(), which cancels it.
 */
void ipoib_cm_req_again(struct ipoib_cm_conn *conn)
{
	struct ipoib_priv *priv = conn->priv;
	struct ib_cm_id *id = NULL;

	spin_lock_bh(&priv->cm.lock);
	if (conn->state == IPOIB_CM_REQ_SENT)
		id = conn->id;
	spin_unlock_bh(&priv->cm.lock);
	if (!id)
		return;
	ipoib_cm_count(priv, IPOIB_CM_ST_IETF_RETRY, 1);
	if (ipoib_cm_send_req(conn, id))
		ipoib_cm_event(conn, IPOIB_CM_EV_REJ);
}

/* Crossed REQs: the peer's REQ, which was to replace ours, never came. */
void ipoib_cm_cross_work(struct work_struct *work)
{
	struct ipoib_cm_conn *conn = container_of(to_delayed_work(work),
						  struct ipoib_cm_conn,
						  cross_work);

	ipoib_cm_event(conn, IPOIB_CM_EV_LOST);
}

/**
 * ipoib_cm_rej_handler - a REJ for a connection
 * @conn: the connection
 * @id: the CM id the REJ came on (conn->id may be gone already)
 * @event: the REJ
 *
 * A peer that does not know the Service ID Linux uses is dialled again
 * on RFC 4755's own, by the event task (ipoib_cm_req_again()).  With the
 * bidirectional option, a Consumer Reject
 * naming the QPN we dialled, from a peer whose address is larger, is
 * RFC 4755 3.3 at work (ipoib_cm_rej_crossed()): our REQs crossed, the
 * larger address rejects, and the peer's own REQ, already on its way,
 * brings the connection.  Ours keeps its packets until that REQ arrives
 * (ipoib_cm_req_handler() then yields it), or gives up.
 */
static void ipoib_cm_rej_handler(struct ipoib_cm_conn *conn,
				 struct ib_cm_id *id,
				 const struct ib_cm_event *event)
{
	struct ipoib_priv *priv = conn->priv;
	int reason = event->param.rej_rcvd.reason;
	struct ipoib_cm_pdata pd;

	ipoib_cm_count(priv, IPOIB_CM_ST_REJ_RCVD, 1);
	if (!ipoib_cm_pdata_unpack(event->private_data,
				   IB_CM_REJ_PRIVATE_DATA_SIZE, &pd))
		net_info_ratelimited("%s: REJ from %pI6/0x%06x: reason %d (%s), peer UD QPN 0x%06x, receive MTU %u\n",
				     priv->netdev->name, conn->gid.raw,
				     conn->qpn, reason, ibcm_reject_msg(reason),
				     pd.qpn, pd.rx_mtu);
	else
		net_info_ratelimited("%s: REJ from %pI6/0x%06x: reason %d (%s), no IPoIB private data\n",
				     priv->netdev->name, conn->gid.raw,
				     conn->qpn, reason, ibcm_reject_msg(reason));
	if (conn->active && reason == IB_CM_REJ_INVALID_SERVICE_ID &&
	    !conn->ietf_sid) {
		bool again;

		conn->ietf_sid = true;
		/*
		 * Not from here: teardown may have taken @id already and be
		 * waiting for us in ib_destroy_cm_id(), past the point where
		 * it cancels a REQ.  The event task sends it, and teardown
		 * waits for that task before it destroys the id.  Queued
		 * under cm.lock while the id is still the connection's, so
		 * never after teardown's wait.
		 */
		spin_lock_bh(&priv->cm.lock);
		again = conn->id == id;
		if (again) {
			set_bit(IPOIB_CM_REQ_AGAIN, &conn->qp_events);
			queue_work(priv->cm.conn_wq, &conn->event_work);
		}
		spin_unlock_bh(&priv->cm.lock);
		if (again)
			return;
	}
	if (conn->active && ipoib_cm_bidirectional &&
	    ipoib_cm_rej_crossed(reason, event->private_data,
				 IB_CM_REJ_PRIVATE_DATA_SIZE, conn->qpn) &&
	    ipoib_hwaddr_cmp(priv->netdev->dev_addr, conn->addr) < 0) {
		ipoib_cm_count(priv, IPOIB_CM_ST_REJ_CROSSED, 1);
		queue_delayed_work(priv->cm.conn_wq, &conn->cross_work,
				   IPOIB_CM_CROSS_WAIT);
		return;
	}
	ipoib_cm_event(conn, IPOIB_CM_EV_REJ);
}

/*
 * The CM events of one connection (REQs go to ipoib_cm_req_handler).
 * @id is valid for the whole callback; conn->id may already be NULL (the
 * reaper took it and waits in ib_destroy_cm_id() for us to return), so
 * nothing called from here uses conn->id (the REJ handler compares it
 * with @id, under cm.lock).  Returns 0: the id is the reaper's to
 * destroy.
 */
static int ipoib_cm_handler(struct ib_cm_id *id,
			    const struct ib_cm_event *event)
{
	struct ipoib_cm_conn *conn = id->context;

	switch (event->event) {
	case IB_CM_REP_RECEIVED:
		return ipoib_cm_rep_handler(conn, id, event);
	case IB_CM_RTU_RECEIVED:
		ipoib_cm_id_event(conn, id, IPOIB_CM_EV_RTU);
		break;
	case IB_CM_USER_ESTABLISHED:
		ipoib_cm_count(conn->priv, IPOIB_CM_ST_COMM_EST, 1);
		ipoib_cm_id_event(conn, id, IPOIB_CM_EV_COMM_EST);
		break;
	case IB_CM_REJ_RECEIVED:
		ipoib_cm_rej_handler(conn, id, event);
		break;
	case IB_CM_REQ_ERROR:
	case IB_CM_REP_ERROR:
		ipoib_cm_event(conn, IPOIB_CM_EV_LOST);
		break;
	case IB_CM_DREQ_RECEIVED:
		ib_send_cm_drep(id, NULL, 0);
		ipoib_cm_event(conn, IPOIB_CM_EV_DREQ);
		break;
	default:
		/* DREP, DREQ_ERROR, TIMEWAIT_EXIT, MRA: nothing to do. */
		break;
	}
	return 0;
}
