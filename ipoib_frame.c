// SPDX-License-Identifier: GPL-2.0
/*
 * The frame format: building the headers of a packet to send, and parsing
 * the network and encapsulation headers of a received UD frame.  No device
 * state is touched here, so KUnit feeds it malformed frames.
 *
 * A packet handed to ndo_start_xmit starts with a 20-octet pseudo header
 * (the destination's link address) and the 4-octet encapsulation header;
 * transmit strips the pseudo header.  Received frames get the sender's
 * address in the same place, where packet captures show it.
 */

#include <linux/if_ether.h>
#include <linux/ipv6.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <net/ndisc.h>
#include <rdma/ib_verbs.h>

#include "ipoib.h"
#include "ipoib_compat.h"

const char *const ipoib_drop_names[IPOIB_DROP_MAX] = {
	[IPOIB_DROP_TRUNCATED]	= "truncated",
	[IPOIB_DROP_ETHERTYPE]	= "unknown_ethertype",
	[IPOIB_DROP_BAD_GRH]	= "bad_grh",
	[IPOIB_DROP_NO_PATH]	= "no_path",
	[IPOIB_DROP_QUEUE_FULL]	= "path_queue_full",
	[IPOIB_DROP_NO_MEM]	= "no_rx_buffer",
	[IPOIB_DROP_TX_NO_MEM]	= "tx_no_mem",
	[IPOIB_DROP_TOO_BIG]	= "too_big",
	[IPOIB_DROP_OWN]	= "own_multicast",
	[IPOIB_DROP_BAD_ADDR]	= "bad_address",
	[IPOIB_DROP_NOT_READY]	= "not_ready",
	[IPOIB_DROP_TX_ERROR]	= "tx_error",
	[IPOIB_DROP_RX_ERROR]	= "rx_error",
};

static int ipoib_hard_header(struct sk_buff *skb, struct net_device *dev,
			     unsigned short type, const void *daddr,
			     const void *saddr, unsigned int len)
{
	__be16 *encap = skb_push(skb, IPOIB_ENCAP_LEN);

	encap[0] = htons(type);
	encap[1] = 0;
	/* The destination travels in front, for ndo_start_xmit to read. */
	skb_push(skb, IPOIB_PSEUDO_LEN);
	if (!daddr) {
		memset(skb->data, 0, IPOIB_PSEUDO_LEN);
		return -IPOIB_HARD_LEN;
	}
	memcpy(skb->data, daddr, IPOIB_PSEUDO_LEN);
	return IPOIB_HARD_LEN;
}

const struct header_ops ipoib_header_ops = {
	.create	= ipoib_hard_header,
};

/* The ethertypes RFC 4391 section 6 carries. */
bool ipoib_proto_supported(__be16 proto)
{
	switch (proto) {
	case htons(ETH_P_IP):
	case htons(ETH_P_IPV6):
	case htons(ETH_P_ARP):
	case htons(ETH_P_RARP):
		return true;
	default:
		return false;
	}
}

/**
 * ipoib_frame_rc_eligible - may a packet travel over a connection?
 * @skb: a packet as ndo_start_xmit gets it (pseudo and encapsulation
 *	headers in front)
 *
 * Address resolution stays on the UD QP (RFC 4755 section 2.1): ARP and
 * RARP, and IPv6 neighbour discovery (router and neighbour solicitations
 * and advertisements, redirects).  Other IPv4 and IPv6 unicast may use RC.
 * A packet too short to tell goes over UD.
 */
bool ipoib_frame_rc_eligible(const struct sk_buff *skb)
{
	unsigned int off = IPOIB_PSEUDO_LEN;
	const struct ipv6hdr *ip6;
	struct ipv6hdr ip6_buf;
	const __be16 *encap;
	__be16 encap_buf[2];
	const u8 *type;
	u8 type_buf;

	encap = skb_header_pointer(skb, off, sizeof(encap_buf), encap_buf);
	if (!encap)
		return false;
	if (encap[0] == htons(ETH_P_IP))
		return true;
	if (encap[0] != htons(ETH_P_IPV6))
		return false;

	off += IPOIB_ENCAP_LEN;
	ip6 = skb_header_pointer(skb, off, sizeof(ip6_buf), &ip6_buf);
	if (!ip6)
		return false;
	if (ip6->nexthdr != IPPROTO_ICMPV6)
		return true;
	type = skb_header_pointer(skb, off + sizeof(*ip6), 1, &type_buf);
	if (!type)
		return false;
	return *type < NDISC_ROUTER_SOLICITATION || *type > NDISC_REDIRECT;
}

/*
 * The header must be what the completion says it is: an IB GRH or IPv6
 * header (IP version 6), or on RoCE an IPv4 header (version 4, no options)
 * after 20 unused octets.
 */
static bool ipoib_net_hdr_valid(const u8 *hdr, enum rdma_network_type type)
{
	switch (type) {
	case RDMA_NETWORK_IB:
	case RDMA_NETWORK_IPV6:
		return (hdr[0] >> 4) == 6;
	case RDMA_NETWORK_IPV4:
		return hdr[20] == 0x45;
	default:
		return false;
	}
}

/**
 * ipoib_frame_parse - check a received UD frame and find its addresses
 * @buf: the receive buffer: 40 octets of network header, then the frame
 * @len: octets received, network header included
 * @has_grh: the completion says a network header is present
 * @net_type: what that header is: RDMA_NETWORK_IB (a GRH), _IPV4 or _IPV6
 * @frame: filled with the sender's and destination's GIDs and the ethertype
 * @why: set to the reason when the frame must be dropped
 *
 * On RoCE every UD packet has a network header; on InfiniBand only global
 * and multicast traffic does, and the GIDs are left zero without one.
 * Returns 0, or -EINVAL with @why set.
 */
int ipoib_frame_parse(const void *buf, u32 len, bool has_grh,
		      enum rdma_network_type net_type,
		      struct ipoib_rx_frame *frame, enum ipoib_drop *why)
{
	const __be16 *encap = buf + IPOIB_GRH_LEN;

	memset(frame, 0, sizeof(*frame));
	if (len < IPOIB_GRH_LEN + IPOIB_ENCAP_LEN) {
		*why = IPOIB_DROP_TRUNCATED;
		return -EINVAL;
	}

	if (has_grh) {
		if (!ipoib_net_hdr_valid(buf, net_type) ||
		    ib_get_gids_from_rdma_hdr(buf, net_type, &frame->sgid,
					      &frame->dgid)) {
			*why = IPOIB_DROP_BAD_GRH;
			return -EINVAL;
		}
		frame->has_grh = true;
	} else if (net_type != RDMA_NETWORK_IB) {
		/* RoCE has no other way to tell who sent the packet. */
		*why = IPOIB_DROP_BAD_GRH;
		return -EINVAL;
	}

	frame->proto = encap[0];
	if (!ipoib_proto_supported(frame->proto)) {
		*why = IPOIB_DROP_ETHERTYPE;
		return -EINVAL;
	}
	return 0;
}
