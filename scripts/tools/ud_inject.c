// SPDX-License-Identifier: GPL-2.0
/*
 * ud_inject: send hand-made UD frames to an IPoIB interface, to test how
 * it copes with malformed ones.  Runs inside the test VM.
 *
 *   ud_inject DEVICE QPN GID QKEY KIND COUNT
 *
 * KIND: "short" (2 octets: half an encapsulation header), "ethertype"
 * (ethertype 0x1234 and a few octets of payload) or "ipv4" (a well-formed
 * header with nothing behind it).  GID is the destination's port GID.
 */

#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void die(const char *what)
{
	perror(what);
	exit(1);
}

int main(int argc, char **argv)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 16, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.sq_sig_all = 1,
	};
	struct ibv_qp_attr attr = { 0 };
	struct ibv_ah_attr ah_attr = { 0 };
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	unsigned char buf[64] = { 0 };
	unsigned int len, i, count;
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	struct ibv_wc wc;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_qp *qp;
	struct ibv_ah *ah;
	unsigned long qpn, qkey;
	int n;

	if (argc != 7) {
		fprintf(stderr, "usage: ud_inject DEVICE QPN GID QKEY KIND COUNT\n");
		return 2;
	}
	qpn = strtoul(argv[2], NULL, 0);
	qkey = strtoul(argv[4], NULL, 0);
	count = strtoul(argv[6], NULL, 0);
	if (inet_pton(AF_INET6, argv[3], &ah_attr.grh.dgid) != 1) {
		fprintf(stderr, "bad GID %s\n", argv[3]);
		return 2;
	}
	if (!strcmp(argv[5], "short")) {
		len = 2;
		buf[0] = 0x08;
	} else if (!strcmp(argv[5], "ethertype")) {
		len = 16;
		buf[0] = 0x12;
		buf[1] = 0x34;
	} else if (!strcmp(argv[5], "ipv4")) {
		len = 4;
		buf[0] = 0x08;
	} else {
		fprintf(stderr, "unknown kind %s\n", argv[5]);
		return 2;
	}

	list = ibv_get_device_list(NULL);
	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), argv[1]))
			ctx = ibv_open_device(list[i]);
	if (!ctx)
		die("open device");
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	if (!pd || !cq)
		die("pd/cq");
	mr = ibv_reg_mr(pd, buf, sizeof(buf), 0);
	if (!mr)
		die("reg_mr");
	init.send_cq = cq;
	init.recv_cq = cq;
	qp = ibv_create_qp(pd, &init);
	if (!qp)
		die("create_qp");

	attr.qp_state = IBV_QPS_INIT;
	attr.port_num = 1;
	attr.qkey = qkey;
	if (ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_QKEY))
		die("INIT");
	attr.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &attr, IBV_QP_STATE))
		die("RTR");
	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = 0;
	if (ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN))
		die("RTS");

	ah_attr.is_global = 1;
	ah_attr.grh.hop_limit = 64;
	ah_attr.grh.sgid_index = 0;
	ah_attr.port_num = 1;
	ah = ibv_create_ah(pd, &ah_attr);
	if (!ah)
		die("create_ah");

	for (i = 0; i < count; i++) {
		memset(&wr, 0, sizeof(wr));
		sge.addr = (uintptr_t)buf;
		sge.length = len;
		sge.lkey = mr->lkey;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = IBV_WR_SEND;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = qpn;
		wr.wr.ud.remote_qkey = qkey;
		if (ibv_post_send(qp, &wr, &bad))
			die("post_send");
		do
			n = ibv_poll_cq(cq, 1, &wc);
		while (n == 0);
		if (n < 0 || wc.status != IBV_WC_SUCCESS) {
			fprintf(stderr, "send failed: %s\n",
				ibv_wc_status_str(wc.status));
			return 1;
		}
	}
	printf("sent %u %s frames of %u octets to QPN 0x%lx\n", count,
	       argv[5], len, qpn);
	ibv_destroy_ah(ah);
	ibv_destroy_qp(qp);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return 0;
}
