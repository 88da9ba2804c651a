// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: RFC 4755 private data, Service IDs and connection MTU.
 */

#include "ipoib_kunit.h"

#include "../ipoib_cm_proto.c"

static void pdata_pack_layout(struct kunit *test)
{
	static const u8 want[IPOIB_CM_PDATA_LEN] = {
		0x00, 0x12, 0x34, 0x56, 0x00, 0x00, 0xff, 0xf4,
	};
	struct ipoib_cm_pdata pd = { .qpn = 0xff123456, .rx_mtu = 65524 };
	u8 buf[IPOIB_CM_PDATA_LEN];

	memset(buf, 0xaa, sizeof(buf));
	ipoib_cm_pdata_pack(buf, &pd);
	/* The reserved octet is zero even when the QPN has high bits. */
	KUNIT_EXPECT_MEMEQ(test, buf, want, sizeof(want));
}

static void pdata_roundtrip(struct kunit *test)
{
	struct ipoib_cm_pdata in = { .qpn = 0x000011, .rx_mtu = 2048 };
	struct ipoib_cm_pdata out = {};
	u8 buf[92] = {};	/* the CM hands over its whole REQ field */

	ipoib_cm_pdata_pack(buf, &in);
	KUNIT_ASSERT_EQ(test, ipoib_cm_pdata_unpack(buf, sizeof(buf), &out), 0);
	KUNIT_EXPECT_EQ(test, out.qpn, in.qpn);
	KUNIT_EXPECT_EQ(test, out.rx_mtu, in.rx_mtu);
}

static void pdata_reserved_ignored(struct kunit *test)
{
	static const u8 buf[IPOIB_CM_PDATA_LEN] = {
		0xee, 0x00, 0x00, 0x48, 0x00, 0x00, 0x10, 0x00,
	};
	struct ipoib_cm_pdata pd;

	KUNIT_ASSERT_EQ(test, ipoib_cm_pdata_unpack(buf, sizeof(buf), &pd), 0);
	KUNIT_EXPECT_EQ(test, pd.qpn, 0x48U);
	KUNIT_EXPECT_EQ(test, pd.rx_mtu, 4096U);
}

struct pdata_case {
	const char *name;
	u8 buf[IPOIB_CM_PDATA_LEN];
	size_t len;
	bool null;
	int ret;
	u32 mtu;
};

static const struct pdata_case pdata_cases[] = {
	{ "no private data", {}, 0, true, -EPROTO },
	{ "7 octets", { 0, 0, 0, 1, 0, 0, 0x10 }, 7, false, -EPROTO },
	{ "zero length", { 0, 0, 0, 1, 0, 0, 0x10, 0 }, 0, false, -EPROTO },
	{ "MTU 0", { 0, 0, 0, 1, 0, 0, 0, 0 }, 8, false, -ERANGE },
	{ "MTU 4 (header only)", { 0, 0, 0, 1, 0, 0, 0, 4 }, 8, false, -ERANGE },
	{ "MTU 72 (IPv4 minimum)", { 0, 0, 0, 1, 0, 0, 0, 72 }, 8, false,
	  -ERANGE },
	{ "MTU 1283", { 0, 0, 0, 1, 0, 0, 0x05, 0x03 }, 8, false, -ERANGE },
	{ "MTU 1284 (IPv6 minimum)", { 0, 0, 0, 1, 0, 0, 0x05, 0x04 }, 8, false,
	  0, 1284 },
	{ "MTU 2^31", { 0, 0, 0, 1, 0x80, 0, 0, 0 }, 8, false, 0, 0x80000000 },
	{ "MTU 2^31+1", { 0, 0, 0, 1, 0x80, 0, 0, 1 }, 8, false, -ERANGE },
	{ "MTU all ones", { 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff }, 8, false,
	  -ERANGE },
};

static void pdata_case_desc(const struct pdata_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(pdata, pdata_cases, pdata_case_desc);

static void pdata_unpack_validates(struct kunit *test)
{
	const struct pdata_case *c = test->param_value;
	struct ipoib_cm_pdata pd = { .qpn = 0xdead, .rx_mtu = 0xbeef };
	int ret;

	ret = ipoib_cm_pdata_unpack(c->null ? NULL : c->buf, c->len, &pd);
	KUNIT_EXPECT_EQ(test, ret, c->ret);
	if (ret) {
		/* Nothing is written on failure. */
		KUNIT_EXPECT_EQ(test, pd.qpn, 0xdeadU);
		KUNIT_EXPECT_EQ(test, pd.rx_mtu, 0xbeefU);
	} else {
		KUNIT_EXPECT_EQ(test, pd.qpn, 1U);
		KUNIT_EXPECT_EQ(test, pd.rx_mtu, c->mtu);
	}
}

/* Consumer Reject is kept for crossed REQs: refusals give their cause. */
static void pdata_reject_reason(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, ipoib_cm_pdata_reject(-ERANGE),
			IB_CM_REJ_INVALID_MTU);
	KUNIT_EXPECT_EQ(test, ipoib_cm_pdata_reject(-EPROTO),
			IB_CM_REJ_UNSUPPORTED);
	KUNIT_EXPECT_NE(test, ipoib_cm_pdata_reject(-EPROTO),
			IB_CM_REJ_CONSUMER_DEFINED);
}

static void rej_crossed(struct kunit *test)
{
	struct ipoib_cm_pdata pd = { .qpn = 0x0f0001, .rx_mtu = 65524 };
	u8 buf[IB_CM_REJ_PRIVATE_DATA_SIZE] = {};
	const size_t len = sizeof(buf);

	ipoib_cm_pdata_pack(buf, &pd);
	KUNIT_EXPECT_TRUE(test, ipoib_cm_rej_crossed(IB_CM_REJ_CONSUMER_DEFINED,
						     buf, len, 0x0f0001));
	/* Another reason, another QPN, or no private data: a refusal. */
	KUNIT_EXPECT_FALSE(test, ipoib_cm_rej_crossed(IB_CM_REJ_NO_RESOURCES,
						      buf, len, 0x0f0001));
	KUNIT_EXPECT_FALSE(test, ipoib_cm_rej_crossed(IB_CM_REJ_CONSUMER_DEFINED,
						      buf, len, 0x0f0002));
	KUNIT_EXPECT_FALSE(test, ipoib_cm_rej_crossed(IB_CM_REJ_CONSUMER_DEFINED,
						      NULL, 0, 0x0f0001));
	memset(buf, 0, sizeof(buf));
	KUNIT_EXPECT_FALSE(test, ipoib_cm_rej_crossed(IB_CM_REJ_CONSUMER_DEFINED,
						      buf, len, 0));
}

static void service_ids(struct kunit *test)
{
	u32 qpn = 0;

	KUNIT_EXPECT_EQ(test, be64_to_cpu(ipoib_cm_service_id(IPOIB_CM_SID_OFED,
							      0x123456)),
			0x1000000000123456ULL);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(ipoib_cm_service_id(IPOIB_CM_SID_IETF,
							      0xab123456)),
			0x0100000000123456ULL);

	KUNIT_EXPECT_EQ(test,
			ipoib_cm_service_id_qpn(cpu_to_be64(0x1000000000000011ULL),
						&qpn), 0);
	KUNIT_EXPECT_EQ(test, qpn, 0x11U);
	KUNIT_EXPECT_EQ(test,
			ipoib_cm_service_id_qpn(cpu_to_be64(0x0100000000fffffeULL),
						&qpn), 0);
	KUNIT_EXPECT_EQ(test, qpn, 0xfffffeU);

	/* rdma_cm's port-space IDs and anything with reserved bits set. */
	KUNIT_EXPECT_EQ(test,
			ipoib_cm_service_id_qpn(cpu_to_be64(0x0000000001060000ULL),
						&qpn), -EINVAL);
	KUNIT_EXPECT_EQ(test,
			ipoib_cm_service_id_qpn(cpu_to_be64(0x0101000000000011ULL),
						&qpn), -EINVAL);
	KUNIT_EXPECT_EQ(test,
			ipoib_cm_service_id_qpn(cpu_to_be64(0x1000000001000011ULL),
						&qpn), -EINVAL);
}

static void conn_mtu(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, ipoib_cm_conn_mtu(65524, 65524), 65520U);
	KUNIT_EXPECT_EQ(test, ipoib_cm_conn_mtu(65524, 2048), 2044U);
	KUNIT_EXPECT_EQ(test, ipoib_cm_conn_mtu(2048, 65524), 2044U);
	KUNIT_EXPECT_EQ(test, ipoib_cm_conn_mtu(4, 65524), 0U);
	KUNIT_EXPECT_EQ(test, ipoib_cm_conn_mtu(0x80000000, 0x80000000),
			0xffffU);
}

static struct kunit_case ipoib_cm_proto_cases[] = {
	KUNIT_CASE(pdata_pack_layout),
	KUNIT_CASE(pdata_roundtrip),
	KUNIT_CASE(pdata_reserved_ignored),
	KUNIT_CASE_PARAM(pdata_unpack_validates, pdata_gen_params),
	KUNIT_CASE(pdata_reject_reason),
	KUNIT_CASE(rej_crossed),
	KUNIT_CASE(service_ids),
	KUNIT_CASE(conn_mtu),
	{}
};

static struct kunit_suite ipoib_cm_proto_suite = {
	.name = "ipoib_cm_proto",
	.test_cases = ipoib_cm_proto_cases,
};

kunit_test_suite(ipoib_cm_proto_suite);
