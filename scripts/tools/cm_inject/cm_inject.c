// SPDX-License-Identifier: GPL-2.0
/*
 * cm_inject: a test tool that speaks the InfiniBand CM to an IPoIB
 * interface with hand-made RFC 4755 private data, so that the VM
 * scenarios can drive the driver's negative paths from outside it.  Never
 * part of the driver; loaded only by scripts/vm/tests/cm-negative.sh.
 *
 * mode=req: send one REQ from device @dev to @dgid on Service ID @sid,
 * with a UD QPN of @pd_qpn and a receive MTU of @pd_mtu in the first
 * @pd_len octets of private data, for a QP of type @qp_type.  A REP is
 * answered with an RTU; the connection is closed when the module goes.
 *
 * mode=listen: listen on @sid of @dev and answer every REQ with a REP
 * (answer=rep, private data as above) or a REJ (answer=rej, with the
 * private data when @pd_len is not 0).
 *
 * Everything received is logged on one line starting "cm_inject: got",
 * with the private data decoded as RFC 4755's (UD QPN, receive MTU) and
 * its length, for the scenario to read.
 *
 * @dev is found as an ib_client: the core offers the tool every
 * registered device and it keeps the first one of that name (no lookup
 * by name is exported on every kernel the project supports).  Should the
 * device go while the tool is loaded, its remove callback undoes what the
 * tool set up on it.
 */
#include <linux/inet.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/random.h>
#ifdef HAVE_LINUX_UNALIGNED_H
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif
#include <rdma/ib_cache.h>
#include <rdma/ib_cm.h>
#include <rdma/ib_sa.h>
#include <rdma/ib_verbs.h>

static char *dev = "rxe1";
module_param(dev, charp, 0444);
MODULE_PARM_DESC(dev, "RDMA device to speak from (port 1, GID index 0)");
static char *mode = "req";
module_param(mode, charp, 0444);
MODULE_PARM_DESC(mode, "req (send one REQ) or listen (answer REQs)");
static char *dgid = "";
module_param(dgid, charp, 0444);
MODULE_PARM_DESC(dgid, "mode=req: the destination port GID, IPv6 notation");
static unsigned long long sid;
module_param(sid, ullong, 0444);
MODULE_PARM_DESC(sid, "Service ID to send the REQ to, or to listen on");
static uint pd_qpn = 0x00c0de;
module_param(pd_qpn, uint, 0444);
MODULE_PARM_DESC(pd_qpn, "UD QPN in our private data (24 bits)");
static uint pd_mtu = 65524;
module_param(pd_mtu, uint, 0444);
MODULE_PARM_DESC(pd_mtu, "receive MTU in our private data");
static uint pd_len = 8;
module_param(pd_len, uint, 0444);
MODULE_PARM_DESC(pd_len, "octets of private data sent (0-8)");
static char *qp_type = "rc";
module_param(qp_type, charp, 0444);
MODULE_PARM_DESC(qp_type, "mode=req: rc or uc");
static char *answer = "rep";
module_param(answer, charp, 0444);
MODULE_PARM_DESC(answer, "mode=listen: rep or rej");

#define CMI_PASSIVE_MAX	8

static DEFINE_MUTEX(cmi_dev_lock);	/* protects the next three */
static struct ib_device *cmi_dev;
static const struct ib_gid_attr *cmi_sgid;
static struct ib_cm_id *cmi_id;		/* the REQ's, or the listener */
static struct sa_path_rec cmi_path;
static DEFINE_MUTEX(cmi_lock);		/* protects cmi_passive[] */
static struct ib_cm_id *cmi_passive[CMI_PASSIVE_MAX];

static const char *cmi_event_name(enum ib_cm_event_type e)
{
	switch (e) {
	case IB_CM_REQ_RECEIVED: return "REQ";
	case IB_CM_REP_RECEIVED: return "REP";
	case IB_CM_RTU_RECEIVED: return "RTU";
	case IB_CM_REJ_RECEIVED: return "REJ";
	case IB_CM_DREQ_RECEIVED: return "DREQ";
	case IB_CM_DREP_RECEIVED: return "DREP";
	case IB_CM_REQ_ERROR: return "REQ-timeout";
	case IB_CM_REP_ERROR: return "REP-timeout";
	case IB_CM_DREQ_ERROR: return "DREQ-timeout";
	case IB_CM_TIMEWAIT_EXIT: return "timewait-exit";
	default: return "other";
	}
}

static void cmi_log(const struct ib_cm_event *ev, size_t pdata_size)
{
	const u8 *pd = ev->private_data;

	if (ev->event == IB_CM_REJ_RECEIVED) {
		int reason = ev->param.rej_rcvd.reason;

		pr_info("cm_inject: got REJ reason %d (%s) pdata %s qpn 0x%06x mtu %u\n",
			reason, ibcm_reject_msg(reason),
			pd && memchr_inv(pd, 0, pdata_size) ? "yes" : "none",
			pd ? get_unaligned_be32(pd) & 0xffffff : 0,
			pd ? get_unaligned_be32(pd + 4) : 0);
		return;
	}
	if (pd && pdata_size)
		pr_info("cm_inject: got %s pdata qpn 0x%06x mtu %u\n",
			cmi_event_name(ev->event),
			get_unaligned_be32(pd) & 0xffffff,
			get_unaligned_be32(pd + 4));
	else
		pr_info("cm_inject: got %s\n", cmi_event_name(ev->event));
}

static size_t cmi_pdata_size(enum ib_cm_event_type e)
{
	switch (e) {
	case IB_CM_REQ_RECEIVED: return IB_CM_REQ_PRIVATE_DATA_SIZE;
	case IB_CM_REP_RECEIVED: return IB_CM_REP_PRIVATE_DATA_SIZE;
	case IB_CM_REJ_RECEIVED: return IB_CM_REJ_PRIVATE_DATA_SIZE;
	default: return 0;
	}
}

static void cmi_pdata(u8 *buf)
{
	memset(buf, 0, 8);
	put_unaligned_be32(pd_qpn & 0xffffff, buf);
	put_unaligned_be32(pd_mtu, buf + 4);
}

/* The active side's handler: log, answer a REP with an RTU. */
static int cmi_req_handler(struct ib_cm_id *id, const struct ib_cm_event *ev)
{
	cmi_log(ev, cmi_pdata_size(ev->event));
	if (ev->event == IB_CM_REP_RECEIVED && ib_send_cm_rtu(id, NULL, 0))
		pr_info("cm_inject: RTU not sent\n");
	return 0;
}

static bool cmi_passive_forget(struct ib_cm_id *id)
{
	bool found = false;
	int i;

	mutex_lock(&cmi_lock);
	for (i = 0; i < CMI_PASSIVE_MAX; i++) {
		if (cmi_passive[i] == id) {
			cmi_passive[i] = NULL;
			found = true;
		}
	}
	mutex_unlock(&cmi_lock);
	return found;
}

static bool cmi_passive_keep(struct ib_cm_id *id)
{
	int i;

	mutex_lock(&cmi_lock);
	for (i = 0; i < CMI_PASSIVE_MAX && cmi_passive[i]; i++)
		;
	if (i < CMI_PASSIVE_MAX)
		cmi_passive[i] = id;
	mutex_unlock(&cmi_lock);
	return i < CMI_PASSIVE_MAX;
}

/*
 * The passive side: every REQ is answered as @answer says.  An id we
 * keep is destroyed by the CM when an end event returns non-zero, or by
 * module exit, whichever takes it out of cmi_passive[] first.
 */
static int cmi_listen_handler(struct ib_cm_id *id, const struct ib_cm_event *ev)
{
	struct ib_cm_rep_param rep = {};
	u8 pdata[8];

	cmi_log(ev, cmi_pdata_size(ev->event));
	if (ev->event != IB_CM_REQ_RECEIVED) {
		if (ev->event == IB_CM_RTU_RECEIVED)
			return 0;
		return cmi_passive_forget(id) ? 1 : 0;
	}

	cmi_pdata(pdata);
	if (!strcmp(answer, "rej")) {
		ib_send_cm_rej(id, IB_CM_REJ_CONSUMER_DEFINED, NULL, 0,
			       pd_len ? pdata : NULL, min(pd_len, 8U));
		pr_info("cm_inject: sent REJ with %u octets of private data\n",
			min(pd_len, 8U));
		return 1;
	}
	if (!cmi_passive_keep(id)) {
		ib_send_cm_rej(id, IB_CM_REJ_NO_RESOURCES, NULL, 0, NULL, 0);
		return 1;
	}
	rep.qp_num = 0x00beef;
	rep.starting_psn = get_random_u32() & 0xffffff;
	rep.private_data = pdata;
	rep.private_data_len = min(pd_len, 8U);
	rep.rnr_retry_count = 7;
	rep.srq = 1;
	if (ib_send_cm_rep(id, &rep)) {
		pr_info("cm_inject: REP not sent\n");
		return cmi_passive_forget(id) ? 1 : 0;
	}
	pr_info("cm_inject: sent REP qpn 0x%06x mtu %u in %u octets\n",
		pd_qpn & 0xffffff, pd_mtu, rep.private_data_len);
	return 0;
}

/* A RoCE path to @gid: the MAC is the one in its link-local EUI-64. */
static int cmi_make_path(const union ib_gid *gid)
{
	u8 mac[ETH_ALEN];

	if (gid->raw[0] != 0xfe || (gid->raw[1] & 0xc0) != 0x80 ||
	    gid->raw[11] != 0xff || gid->raw[12] != 0xfe)
		return -EADDRNOTAVAIL;
	mac[0] = gid->raw[8] ^ 2;
	mac[1] = gid->raw[9];
	mac[2] = gid->raw[10];
	memcpy(mac + 3, gid->raw + 13, 3);

	cmi_path.rec_type = sa_conv_gid_to_pathrec_type(cmi_sgid->gid_type);
	cmi_path.sgid = cmi_sgid->gid;
	cmi_path.dgid = *gid;
	sa_path_set_dmac(&cmi_path, mac);
	cmi_path.roce.route_resolved = true;
	cmi_path.hop_limit = 64;
	cmi_path.pkey = cpu_to_be16(0xffff);
	cmi_path.mtu_selector = IB_SA_EQ;
	cmi_path.mtu = IB_MTU_1024;
	cmi_path.rate_selector = IB_SA_EQ;
	cmi_path.rate = IB_RATE_PORT_CURRENT;
	cmi_path.packet_life_time_selector = IB_SA_EQ;
	cmi_path.packet_life_time = 14;
	cmi_path.reversible = 1;
	cmi_path.numb_path = 1;
	return 0;
}

static int cmi_send_req(void)
{
	struct ib_cm_req_param req = {};
	union ib_gid gid;
	u8 pdata[8];
	int ret;

	if (!in6_pton(dgid, -1, gid.raw, -1, NULL))
		return -EINVAL;
	ret = cmi_make_path(&gid);
	if (ret)
		return ret;
	cmi_pdata(pdata);
	req.primary_path = &cmi_path;
	req.ppath_sgid_attr = cmi_sgid;
	req.service_id = cpu_to_be64(sid);
	req.qp_num = 0x00feed;
	req.qp_type = strcmp(qp_type, "uc") ? IB_QPT_RC : IB_QPT_UC;
	req.starting_psn = get_random_u32() & 0xffffff;
	req.private_data = pd_len ? pdata : NULL;
	req.private_data_len = min(pd_len, 8U);
	req.remote_cm_response_timeout = 20;
	req.local_cm_response_timeout = 20;
	req.retry_count = 7;
	req.rnr_retry_count = 7;
	req.max_cm_retries = 3;
	req.srq = 1;
	ret = ib_send_cm_req(cmi_id, &req);
	if (!ret)
		pr_info("cm_inject: sent REQ to %pI6 sid 0x%016llx qpn 0x%06x mtu %u in %u octets, %s\n",
			gid.raw, sid, pd_qpn & 0xffffff, pd_mtu,
			req.private_data_len, req.qp_type == IB_QPT_RC ?
			"RC" : "UC");
	return ret;
}

/* Destroys the CM ids and drops the GID; under cmi_dev_lock. */
static void cmi_teardown(void)
{
	struct ib_cm_id *ids[CMI_PASSIVE_MAX];
	int i;

	if (cmi_id)
		ib_destroy_cm_id(cmi_id);
	cmi_id = NULL;
	mutex_lock(&cmi_lock);
	memcpy(ids, cmi_passive, sizeof(ids));
	memset(cmi_passive, 0, sizeof(cmi_passive));
	mutex_unlock(&cmi_lock);
	for (i = 0; i < CMI_PASSIVE_MAX; i++)
		if (ids[i])
			ib_destroy_cm_id(ids[i]);
	if (cmi_sgid)
		rdma_put_gid_attr(cmi_sgid);
	cmi_sgid = NULL;
}

/* Sends the REQ or starts listening on cmi_dev; under cmi_dev_lock. */
static int cmi_setup(bool listen)
{
	const struct ib_gid_attr *sgid;
	int ret;

	sgid = rdma_get_gid_attr(cmi_dev, 1, 0);
	if (IS_ERR(sgid))
		return PTR_ERR(sgid);
	cmi_sgid = sgid;
	cmi_id = ib_create_cm_id(cmi_dev, listen ? cmi_listen_handler :
				 cmi_req_handler, NULL);
	if (IS_ERR(cmi_id)) {
		ret = PTR_ERR(cmi_id);
		cmi_id = NULL;
		cmi_teardown();
		return ret;
	}
	ret = listen ? ib_cm_listen(cmi_id, cpu_to_be64(sid)) : cmi_send_req();
	if (ret)
		cmi_teardown();
	return ret;
}

/* Every registered device is offered: keep the first one named @dev. */
static int cmi_add_one(struct ib_device *ibdev)
{
	int ret = -EOPNOTSUPP;

	mutex_lock(&cmi_dev_lock);
	if (!cmi_dev && !strcmp(dev_name(&ibdev->dev), dev)) {
		cmi_dev = ibdev;
		ret = 0;
	}
	mutex_unlock(&cmi_dev_lock);
	return ret;
}

/* Called only for the device add kept: the device or the tool goes. */
static void cmi_remove_one(struct ib_device *ibdev, void *client_data)
{
	mutex_lock(&cmi_dev_lock);
	if (ibdev == cmi_dev) {
		cmi_teardown();
		cmi_dev = NULL;
	}
	mutex_unlock(&cmi_dev_lock);
}

static struct ib_client cmi_client = {
	.name = "cm_inject",
	.add = cmi_add_one,
	.remove = cmi_remove_one,
};

static int __init cm_inject_init(void)
{
	bool listen = !strcmp(mode, "listen");
	int ret;

	if (!listen && strcmp(mode, "req"))
		return -EINVAL;
	ret = ib_register_client(&cmi_client);
	if (ret)
		return ret;
	mutex_lock(&cmi_dev_lock);
	ret = cmi_dev ? cmi_setup(listen) : -ENODEV;
	mutex_unlock(&cmi_dev_lock);
	if (ret) {
		ib_unregister_client(&cmi_client);
		pr_info("cm_inject: %s failed: %d\n", mode, ret);
		return ret;
	}
	if (listen)
		pr_info("cm_inject: listening on %s sid 0x%016llx\n", dev, sid);
	return 0;
}

static void __exit cm_inject_exit(void)
{
	/* The device's remove callback, if it is still there, tears down. */
	ib_unregister_client(&cmi_client);
}

module_init(cm_inject_init);
module_exit(cm_inject_exit);
MODULE_DESCRIPTION("ipoib_cm test tool: hand-made CM messages");
MODULE_LICENSE("GPL");
