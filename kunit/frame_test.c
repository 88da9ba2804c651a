// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the encapsulation header and the parsing of received UD frames,
 * malformed ones included.
 */

#include "ipoib_kunit.h"
#include <linux/icmpv6.h>
#include <linux/if_ether.h>

#include "../ipoib_frame.c"

#define FRAME_LEN	(IPOIB_GRH_LEN + IPOIB_ENCAP_LEN + 8)

static const u8 peer_gid[16] = {
	0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x02, 0x11, 0x22, 0xff, 0xfe, 0x33, 0x44, 0x55,
};

static const u8 group_gid[16] = {
	0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff,
};

/* A RoCEv2 UD frame as rxe hands it over: an IPv6 header first. */
static void build_ipv6_frame(u8 *buf, __be16 proto)
{
	memset(buf, 0, FRAME_LEN);
	buf[0] = 0x60;
	memcpy(buf + 8, peer_gid, 16);
	memcpy(buf + 24, group_gid, 16);
	*(__be16 *)(buf + IPOIB_GRH_LEN) = proto;
}

/* An IPv4 RoCEv2 frame: 20 unused octets, then the IPv4 header. */
static void build_ipv4_frame(u8 *buf, __be16 proto)
{
	memset(buf, 0, FRAME_LEN);
	buf[20] = 0x45;
	buf[20 + 12] = 192;
	buf[20 + 13] = 0;
	buf[20 + 14] = 2;
	buf[20 + 15] = 1;
	buf[20 + 16] = 192;
	buf[20 + 17] = 0;
	buf[20 + 18] = 2;
	buf[20 + 19] = 2;
	*(__be16 *)(buf + IPOIB_GRH_LEN) = proto;
}

static void frame_ipv6_ok(struct kunit *test)
{
	struct ipoib_rx_frame f;
	enum ipoib_drop why = IPOIB_DROP_MAX;
	u8 buf[FRAME_LEN];

	build_ipv6_frame(buf, htons(ETH_P_ARP));
	KUNIT_ASSERT_EQ(test, ipoib_frame_parse(buf, sizeof(buf), true,
						RDMA_NETWORK_IPV6, &f, &why), 0);
	KUNIT_EXPECT_TRUE(test, f.has_grh);
	KUNIT_EXPECT_EQ(test, be16_to_cpu(f.proto), ETH_P_ARP);
	KUNIT_EXPECT_MEMEQ(test, f.sgid.raw, peer_gid, 16);
	KUNIT_EXPECT_MEMEQ(test, f.dgid.raw, group_gid, 16);
	KUNIT_EXPECT_EQ(test, why, IPOIB_DROP_MAX);
}

static void frame_ipv4_ok(struct kunit *test)
{
	static const u8 want_sgid[16] = {
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 0, 2, 1,
	};
	struct ipoib_rx_frame f;
	enum ipoib_drop why;
	u8 buf[FRAME_LEN];

	build_ipv4_frame(buf, htons(ETH_P_IP));
	KUNIT_ASSERT_EQ(test, ipoib_frame_parse(buf, sizeof(buf), true,
						RDMA_NETWORK_IPV4, &f, &why), 0);
	KUNIT_EXPECT_MEMEQ(test, f.sgid.raw, want_sgid, 16);
	KUNIT_EXPECT_EQ(test, f.dgid.raw[15], 2);
}

static void frame_ib_without_grh(struct kunit *test)
{
	struct ipoib_rx_frame f;
	enum ipoib_drop why;
	u8 buf[FRAME_LEN] = {};

	/* InfiniBand unicast has no GRH: the 40 octets are unused. */
	*(__be16 *)(buf + IPOIB_GRH_LEN) = htons(ETH_P_IPV6);
	KUNIT_ASSERT_EQ(test, ipoib_frame_parse(buf, sizeof(buf), false,
						RDMA_NETWORK_IB, &f, &why), 0);
	KUNIT_EXPECT_FALSE(test, f.has_grh);
	KUNIT_EXPECT_EQ(test, be16_to_cpu(f.proto), ETH_P_IPV6);
}

struct bad_frame {
	const char *name;
	void (*build)(u8 *buf, __be16 proto);
	u32 len;
	bool has_grh;
	enum rdma_network_type type;
	__be16 proto;
	u8 poke_at;
	u8 poke;
	enum ipoib_drop why;
};

static const struct bad_frame bad_frames[] = {
	{ "empty", build_ipv6_frame, 0, true, RDMA_NETWORK_IPV6,
	  htons(ETH_P_IP), 0, 0x60, IPOIB_DROP_TRUNCATED },
	{ "GRH only", build_ipv6_frame, IPOIB_GRH_LEN, true, RDMA_NETWORK_IPV6,
	  htons(ETH_P_IP), 0, 0x60, IPOIB_DROP_TRUNCATED },
	{ "half an encap header", build_ipv6_frame, IPOIB_GRH_LEN + 2, true,
	  RDMA_NETWORK_IPV6, htons(ETH_P_IP), 0, 0x60, IPOIB_DROP_TRUNCATED },
	{ "unknown ethertype", build_ipv6_frame, FRAME_LEN, true,
	  RDMA_NETWORK_IPV6, htons(0x1234), 0, 0x60, IPOIB_DROP_ETHERTYPE },
	{ "ethertype 0", build_ipv6_frame, FRAME_LEN, true, RDMA_NETWORK_IPV6,
	  0, 0, 0x60, IPOIB_DROP_ETHERTYPE },
	{ "IPv6 header with version 4", build_ipv6_frame, FRAME_LEN, true,
	  RDMA_NETWORK_IPV6, htons(ETH_P_IP), 0, 0x40, IPOIB_DROP_BAD_GRH },
	{ "GRH with version 0", build_ipv6_frame, FRAME_LEN, true,
	  RDMA_NETWORK_IB, htons(ETH_P_IP), 0, 0x00, IPOIB_DROP_BAD_GRH },
	{ "IPv4 header with options", build_ipv4_frame, FRAME_LEN, true,
	  RDMA_NETWORK_IPV4, htons(ETH_P_IP), 20, 0x46, IPOIB_DROP_BAD_GRH },
	{ "IPv4 type, IPv6 header", build_ipv6_frame, FRAME_LEN, true,
	  RDMA_NETWORK_IPV4, htons(ETH_P_IP), 0, 0x60, IPOIB_DROP_BAD_GRH },
	{ "RoCE without a network header", build_ipv6_frame, FRAME_LEN, false,
	  RDMA_NETWORK_IPV6, htons(ETH_P_IP), 0, 0x60, IPOIB_DROP_BAD_GRH },
	{ "RoCEv1 header type", build_ipv6_frame, FRAME_LEN, true,
	  RDMA_NETWORK_ROCE_V1, htons(ETH_P_IP), 0, 0x60, IPOIB_DROP_BAD_GRH },
};

static void bad_frame_desc(const struct bad_frame *b, char *desc)
{
	strscpy(desc, b->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(bad_frame, bad_frames, bad_frame_desc);

static void frame_malformed_dropped(struct kunit *test)
{
	const struct bad_frame *b = test->param_value;
	enum ipoib_drop why = IPOIB_DROP_MAX;
	struct ipoib_rx_frame f;
	u8 buf[FRAME_LEN];

	b->build(buf, b->proto);
	buf[b->poke_at] = b->poke;
	KUNIT_EXPECT_EQ(test, ipoib_frame_parse(buf, b->len, b->has_grh,
						b->type, &f, &why), -EINVAL);
	KUNIT_EXPECT_EQ(test, why, b->why);
}

static void frame_supported_protocols(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, ipoib_proto_supported(htons(ETH_P_IP)));
	KUNIT_EXPECT_TRUE(test, ipoib_proto_supported(htons(ETH_P_IPV6)));
	KUNIT_EXPECT_TRUE(test, ipoib_proto_supported(htons(ETH_P_ARP)));
	KUNIT_EXPECT_TRUE(test, ipoib_proto_supported(htons(ETH_P_RARP)));
	KUNIT_EXPECT_FALSE(test, ipoib_proto_supported(htons(ETH_P_8021Q)));
	KUNIT_EXPECT_FALSE(test, ipoib_proto_supported(htons(ETH_P_TIPC)));
}

static void encap_header_layout(struct kunit *test)
{
	static const u8 daddr[IPOIB_HWADDR_LEN] = {
		0x80, 0x00, 0x00, 0x11, 0xfe, 0x80, 0, 0, 0, 0, 0, 0,
		0x02, 0x11, 0x22, 0xff, 0xfe, 0x33, 0x44, 0x55,
	};
	struct sk_buff *skb;
	u8 *payload;

	skb = alloc_skb(128, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	skb_reserve(skb, 64);
	payload = skb_put(skb, 20);
	memset(payload, 0x5a, 20);

	KUNIT_EXPECT_EQ(test, ipoib_header_ops.create(skb, NULL, ETH_P_IPV6,
						      daddr, NULL, 20),
			IPOIB_HARD_LEN);
	KUNIT_EXPECT_EQ(test, skb->len, 20U + IPOIB_HARD_LEN);
	KUNIT_EXPECT_MEMEQ(test, skb->data, daddr, IPOIB_HWADDR_LEN);
	/* Ethertype, then 16 reserved bits sent as zero. */
	KUNIT_EXPECT_EQ(test, skb->data[20], 0x86);
	KUNIT_EXPECT_EQ(test, skb->data[21], 0xdd);
	KUNIT_EXPECT_EQ(test, skb->data[22], 0);
	KUNIT_EXPECT_EQ(test, skb->data[23], 0);
	KUNIT_EXPECT_PTR_EQ(test, skb->data + IPOIB_HARD_LEN, payload);
	kfree_skb(skb);
}

static void encap_header_unresolved(struct kunit *test)
{
	struct sk_buff *skb = alloc_skb(128, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, skb);
	skb_reserve(skb, 64);
	/* No destination yet: the neighbour layer fills it in later. */
	KUNIT_EXPECT_EQ(test, ipoib_header_ops.create(skb, NULL, ETH_P_ARP,
						      NULL, NULL, 0),
			-IPOIB_HARD_LEN);
	KUNIT_EXPECT_EQ(test, skb->len, (unsigned int)IPOIB_HARD_LEN);
	kfree_skb(skb);
}

/* A packet as ndo_start_xmit sees it: pseudo header, encap, payload. */
static struct sk_buff *xmit_skb(struct kunit *test, u16 proto,
				const u8 *payload, unsigned int len)
{
	static const u8 daddr[IPOIB_HWADDR_LEN] = { 0x80, 0x00, 0x00, 0x11 };
	struct sk_buff *skb = alloc_skb(128 + len, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, skb);
	skb_reserve(skb, 64);
	skb_put_data(skb, payload, len);
	ipoib_header_ops.create(skb, NULL, proto, daddr, NULL, len);
	return skb;
}

struct rc_case {
	const char *name;
	u16 proto;
	u8 nexthdr;		/* IPv6 only */
	u8 icmp_type;		/* IPv6 ICMP only */
	unsigned int len;	/* payload octets */
	bool rc;
};

static const struct rc_case rc_cases[] = {
	{ "IPv4", ETH_P_IP, 0, 0, 48, true },
	{ "IPv6 TCP", ETH_P_IPV6, IPPROTO_TCP, 0, 48, true },
	{ "IPv6 echo request", ETH_P_IPV6, IPPROTO_ICMPV6, ICMPV6_ECHO_REQUEST, 48, true },
	{ "IPv6 packet too big", ETH_P_IPV6, IPPROTO_ICMPV6, ICMPV6_PKT_TOOBIG, 48, true },
	{ "router solicitation", ETH_P_IPV6, IPPROTO_ICMPV6, NDISC_ROUTER_SOLICITATION, 48, false },
	{ "router advertisement", ETH_P_IPV6, IPPROTO_ICMPV6,
	  NDISC_ROUTER_ADVERTISEMENT, 48, false },
	{ "neighbour solicitation", ETH_P_IPV6, IPPROTO_ICMPV6,
	  NDISC_NEIGHBOUR_SOLICITATION, 48, false },
	{ "neighbour advertisement", ETH_P_IPV6, IPPROTO_ICMPV6,
	  NDISC_NEIGHBOUR_ADVERTISEMENT, 48, false },
	{ "redirect", ETH_P_IPV6, IPPROTO_ICMPV6, NDISC_REDIRECT, 48, false },
	{ "IPv6 ICMP cut before its type", ETH_P_IPV6, IPPROTO_ICMPV6, 0, 40, false },
	{ "IPv6 header cut short", ETH_P_IPV6, IPPROTO_TCP, 0, 20, false },
	{ "ARP", ETH_P_ARP, 0, 0, 48, false },
	{ "RARP", ETH_P_RARP, 0, 0, 48, false },
};

static void rc_case_desc(const struct rc_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(rc_case, rc_cases, rc_case_desc);

static void frame_rc_eligible(struct kunit *test)
{
	const struct rc_case *c = test->param_value;
	struct sk_buff *skb;
	u8 payload[48] = {};

	if (c->proto == ETH_P_IPV6) {
		payload[0] = 0x60;
		payload[6] = c->nexthdr;
		payload[40] = c->icmp_type;
	}
	skb = xmit_skb(test, c->proto, payload, c->len);
	KUNIT_EXPECT_EQ(test, ipoib_frame_rc_eligible(skb), c->rc);
	kfree_skb(skb);
}

static struct kunit_case ipoib_frame_cases[] = {
	KUNIT_CASE(frame_ipv6_ok),
	KUNIT_CASE(frame_ipv4_ok),
	KUNIT_CASE(frame_ib_without_grh),
	KUNIT_CASE_PARAM(frame_malformed_dropped, bad_frame_gen_params),
	KUNIT_CASE(frame_supported_protocols),
	KUNIT_CASE(encap_header_layout),
	KUNIT_CASE(encap_header_unresolved),
	KUNIT_CASE_PARAM(frame_rc_eligible, rc_case_gen_params),
	{}
};

static struct kunit_suite ipoib_frame_suite = {
	.name = "ipoib_cm_frame",
	.test_cases = ipoib_frame_cases,
};

kunit_test_suite(ipoib_frame_suite);
