// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the 20-octet IPoIB link-layer address and multicast GIDs.
 */

#include "ipoib_kunit.h"
#include <net/addrconf.h>
#include <net/ip.h>

#include "../ipoib_addr.c"

static const union ib_gid test_gid = {
	.raw = { 0xfe, 0x80, 0, 0, 0, 0, 0, 0,
		 0x02, 0x11, 0x22, 0xff, 0xfe, 0x33, 0x44, 0x55 },
};

static void hwaddr_build_layout(struct kunit *test)
{
	static const u8 want[IPOIB_HWADDR_LEN] = {
		0x80, 0x12, 0x34, 0x56,
		0xfe, 0x80, 0, 0, 0, 0, 0, 0,
		0x02, 0x11, 0x22, 0xff, 0xfe, 0x33, 0x44, 0x55,
	};
	u8 addr[IPOIB_HWADDR_LEN];

	ipoib_hwaddr_build(addr, IPOIB_FLAG_RC, 0x123456, &test_gid);
	KUNIT_EXPECT_MEMEQ(test, addr, want, sizeof(want));
}

static void hwaddr_build_masks(struct kunit *test)
{
	u8 addr[IPOIB_HWADDR_LEN];

	/* Undefined flag bits go out as zero, the QPN is 24 bits. */
	ipoib_hwaddr_build(addr, 0xff, 0xab123456, &test_gid);
	KUNIT_EXPECT_EQ(test, addr[0], IPOIB_FLAG_RC | IPOIB_FLAG_UC);
	KUNIT_EXPECT_EQ(test, ipoib_hwaddr_qpn(addr), 0x123456U);
}

static void hwaddr_parse(struct kunit *test)
{
	u8 addr[IPOIB_HWADDR_LEN] = {
		0x3f, 0x00, 0x00, 0x11,
		0xfe, 0x80, 0, 0, 0, 0, 0, 0,
		0x02, 0x11, 0x22, 0xff, 0xfe, 0x33, 0x44, 0x55,
	};
	union ib_gid gid;

	/* Undefined flag bits are ignored on receive. */
	KUNIT_EXPECT_EQ(test, ipoib_hwaddr_flags(addr), 0);
	addr[0] = 0xc1;
	KUNIT_EXPECT_EQ(test, ipoib_hwaddr_flags(addr),
			IPOIB_FLAG_RC | IPOIB_FLAG_UC);
	KUNIT_EXPECT_EQ(test, ipoib_hwaddr_qpn(addr), 0x11U);
	ipoib_hwaddr_gid(addr, &gid);
	KUNIT_EXPECT_MEMEQ(test, gid.raw, test_gid.raw, sizeof(gid.raw));
}

static void hwaddr_cmp_ignores_flags(struct kunit *test)
{
	u8 a[IPOIB_HWADDR_LEN], b[IPOIB_HWADDR_LEN];

	ipoib_hwaddr_build(a, IPOIB_FLAG_RC, 0x11, &test_gid);
	ipoib_hwaddr_build(b, 0, 0x11, &test_gid);
	KUNIT_EXPECT_EQ(test, ipoib_hwaddr_cmp(a, b), 0);

	/* The QPN is more significant than the GID. */
	ipoib_hwaddr_build(b, 0, 0x12, &test_gid);
	b[IPOIB_HWADDR_LEN - 1] = 0;
	KUNIT_EXPECT_LT(test, ipoib_hwaddr_cmp(a, b), 0);
	KUNIT_EXPECT_GT(test, ipoib_hwaddr_cmp(b, a), 0);

	/* Same QPN: the GID decides, from its most significant octet. */
	ipoib_hwaddr_build(b, IPOIB_FLAG_RC, 0x11, &test_gid);
	b[IPOIB_HWADDR_LEN - 1] = 0x56;
	KUNIT_EXPECT_LT(test, ipoib_hwaddr_cmp(a, b), 0);
}

static void broadcast_default(struct kunit *test)
{
	static const u8 want[IPOIB_HWADDR_LEN] = {
		0x00, 0xff, 0xff, 0xff,
		0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0, 0,
		0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff,
	};
	u8 addr[IPOIB_HWADDR_LEN];

	ipoib_broadcast_build(addr, 2, IPOIB_DEFAULT_PKEY);
	KUNIT_EXPECT_MEMEQ(test, addr, want, sizeof(want));
}

static void broadcast_pkey_and_scope(struct kunit *test)
{
	u8 addr[IPOIB_HWADDR_LEN];

	/* Limited-member P_Key 0x0001 becomes full member 0x8001. */
	ipoib_broadcast_build(addr, 5, 0x0001);
	KUNIT_EXPECT_EQ(test, addr[5], 0x15);
	KUNIT_EXPECT_EQ(test, addr[8], 0x80);
	KUNIT_EXPECT_EQ(test, addr[9], 0x01);
	KUNIT_EXPECT_EQ(test, ipoib_hwaddr_qpn(addr), IPOIB_MCAST_QPN);
}

/* The network stack maps IP groups with our broadcast address as template. */
static void mgid_ipv4_mapping(struct kunit *test)
{
	static const u8 want[16] = {
		0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0, 0,
		0, 0, 0, 0, 0x00, 0x00, 0x00, 0x01,
	};
	u8 bc[IPOIB_HWADDR_LEN], mc[IPOIB_HWADDR_LEN];
	union ib_gid mgid;

	ipoib_broadcast_build(bc, 2, IPOIB_DEFAULT_PKEY);
	/* 224.0.0.1: the low 28 bits of the group. */
	ip_ib_mc_map(htonl(0xe0000001), bc, mc);
	ipoib_hwaddr_gid(mc, &mgid);
	KUNIT_EXPECT_MEMEQ(test, mgid.raw, want, sizeof(want));
	KUNIT_EXPECT_EQ(test, ipoib_hwaddr_qpn(mc), IPOIB_MCAST_QPN);
	KUNIT_EXPECT_TRUE(test, ipoib_mgid_valid(&mgid, bc));
}

static void mgid_ipv6_mapping(struct kunit *test)
{
	static const u8 want[16] = {
		0xff, 0x12, 0x60, 0x1b, 0xff, 0xff, 0, 0,
		0, 0, 0, 0, 0, 0, 0, 0x01,
	};
	struct in6_addr all_nodes = IN6ADDR_LINKLOCAL_ALLNODES_INIT;
	u8 bc[IPOIB_HWADDR_LEN], mc[IPOIB_HWADDR_LEN];
	union ib_gid mgid;

	ipoib_broadcast_build(bc, 2, IPOIB_DEFAULT_PKEY);
	ipv6_ib_mc_map(&all_nodes, bc, mc);
	ipoib_hwaddr_gid(mc, &mgid);
	KUNIT_EXPECT_MEMEQ(test, mgid.raw, want, sizeof(want));
	KUNIT_EXPECT_TRUE(test, ipoib_mgid_valid(&mgid, bc));
}

static void mgid_foreign_rejected(struct kunit *test)
{
	u8 bc[IPOIB_HWADDR_LEN], other[IPOIB_HWADDR_LEN];
	union ib_gid mgid;

	ipoib_broadcast_build(bc, 2, IPOIB_DEFAULT_PKEY);

	ipoib_broadcast_build(other, 2, 0x8001);	/* another partition */
	ipoib_hwaddr_gid(other, &mgid);
	KUNIT_EXPECT_FALSE(test, ipoib_mgid_valid(&mgid, bc));

	ipoib_broadcast_build(other, 5, IPOIB_DEFAULT_PKEY); /* another scope */
	ipoib_hwaddr_gid(other, &mgid);
	KUNIT_EXPECT_FALSE(test, ipoib_mgid_valid(&mgid, bc));

	ipoib_hwaddr_gid(bc, &mgid);
	mgid.raw[2] = 0x50;				/* another signature */
	KUNIT_EXPECT_FALSE(test, ipoib_mgid_valid(&mgid, bc));

	KUNIT_EXPECT_FALSE(test, ipoib_mgid_valid(&test_gid, bc)); /* unicast */
}

static struct kunit_case ipoib_addr_cases[] = {
	KUNIT_CASE(hwaddr_build_layout),
	KUNIT_CASE(hwaddr_build_masks),
	KUNIT_CASE(hwaddr_parse),
	KUNIT_CASE(hwaddr_cmp_ignores_flags),
	KUNIT_CASE(broadcast_default),
	KUNIT_CASE(broadcast_pkey_and_scope),
	KUNIT_CASE(mgid_ipv4_mapping),
	KUNIT_CASE(mgid_ipv6_mapping),
	KUNIT_CASE(mgid_foreign_rejected),
	{}
};

static struct kunit_suite ipoib_addr_suite = {
	.name = "ipoib_cm_addr",
	.test_cases = ipoib_addr_cases,
};

kunit_test_suite(ipoib_addr_suite);
