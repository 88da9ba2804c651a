// SPDX-License-Identifier: GPL-2.0
/*
 * RFC 4755 wire formats: connection private data, Service IDs and the
 * connection MTU.  Pure functions, tested by the KUnit suite.
 */

#include <linux/errno.h>
#include <linux/minmax.h>
#include <linux/string.h>

#include "ipoib.h"
#include "ipoib_cm_priv.h"
#include "ipoib_compat.h"

/**
 * ipoib_cm_pdata_pack - write the 8 octets of RFC 4755 private data
 * @buf: at least IPOIB_CM_PDATA_LEN octets
 * @pd: the values to send
 *
 * Octet 0 is reserved and sent as zero, octets 1-3 carry the UD QPN and
 * octets 4-7 the receive MTU, both big-endian.
 */
void ipoib_cm_pdata_pack(void *buf, const struct ipoib_cm_pdata *pd)
{
	put_unaligned_be32(pd->qpn & IPOIB_QPN_MASK, buf);
	put_unaligned_be32(pd->rx_mtu, buf + 4);
}

/**
 * ipoib_cm_pdata_unpack - parse and validate received private data
 * @buf: the private data of a REQ, REP or REJ (may be NULL)
 * @len: its length
 * @pd: filled on success
 *
 * The reserved octet is ignored.  Returns 0, -EPROTO when there is too
 * little private data, or -ERANGE when the receive MTU cannot carry an
 * IPv6 packet of the minimum link MTU (1280) or exceeds RFC 4755's 2^31
 * octets.
 */
int ipoib_cm_pdata_unpack(const void *buf, size_t len,
			  struct ipoib_cm_pdata *pd)
{
	u32 mtu;

	if (!buf || len < IPOIB_CM_PDATA_LEN)
		return -EPROTO;
	mtu = get_unaligned_be32(buf + 4);
	if (mtu < IPOIB_CM_MIN_RX_MTU || mtu > IPOIB_CM_MAX_RX_MTU)
		return -ERANGE;
	pd->qpn = get_unaligned_be32(buf) & IPOIB_QPN_MASK;
	pd->rx_mtu = mtu;
	return 0;
}

/**
 * ipoib_cm_pdata_reject - the REJ reason for private data that is refused
 * @err: what ipoib_cm_pdata_unpack() returned
 *
 * A receive MTU out of range is "invalid MTU", anything else
 * "unsupported".  Consumer Reject is not used: it means crossed REQs
 * (see ipoib_cm_rej_crossed()).
 */
enum ib_cm_rej_reason ipoib_cm_pdata_reject(int err)
{
	return err == -ERANGE ? IB_CM_REJ_INVALID_MTU : IB_CM_REJ_UNSUPPORTED;
}

/**
 * ipoib_cm_rej_crossed - whether a REJ of our REQ says the REQs crossed
 * @reason: the REJ's reason
 * @buf: its private data (may be NULL)
 * @len: the private data's length
 * @dialled: the UD QPN we dialled
 *
 * RFC 4755 section 3.3: of two crossing REQs, the peer with the larger
 * address refuses the other's with a Consumer Reject, and every REJ
 * carries its sender's UD QPN.  Only that reason with private data naming
 * the QPN we dialled is taken for a crossing; ipoib_cm sends Consumer
 * Reject for nothing else.  The caller compares the addresses.
 */
bool ipoib_cm_rej_crossed(int reason, const void *buf, size_t len,
			  u32 dialled)
{
	struct ipoib_cm_pdata pd;

	return reason == IB_CM_REJ_CONSUMER_DEFINED &&
	       !ipoib_cm_pdata_unpack(buf, len, &pd) && pd.qpn == dialled;
}

/**
 * ipoib_cm_service_id - the Service ID of a peer's listener
 * @base: IPOIB_CM_SID_OFED (what Linux, FreeBSD and WinOFED use) or
 *	  IPOIB_CM_SID_IETF (RFC 4755 section 3.5)
 * @qpn: the peer's UD QPN
 */
__be64 ipoib_cm_service_id(u64 base, u32 qpn)
{
	return cpu_to_be64(base | (qpn & IPOIB_QPN_MASK));
}

/**
 * ipoib_cm_service_id_qpn - the UD QPN in one of the two IPoIB Service IDs
 * @sid: a Service ID
 * @qpn: filled with the QPN
 *
 * Returns 0, or -EINVAL if @sid is in neither IPoIB range.
 */
int ipoib_cm_service_id_qpn(__be64 sid, u32 *qpn)
{
	u64 v = be64_to_cpu(sid);
	u64 base = v & IPOIB_CM_SID_MASK;

	if (base != IPOIB_CM_SID_OFED && base != IPOIB_CM_SID_IETF)
		return -EINVAL;
	*qpn = v & IPOIB_QPN_MASK;
	return 0;
}

/**
 * ipoib_cm_conn_mtu - the IP MTU of a connection (RFC 4755 section 5.1)
 * @local_rx_mtu: what our receive buffers hold, header included
 * @peer_rx_mtu: what the peer advertised, header included
 *
 * The smaller receive MTU less the encapsulation header, capped at what an
 * IP packet can be (0xffff for IPv4, and what the netdev MTU field holds).
 */
u32 ipoib_cm_conn_mtu(u32 local_rx_mtu, u32 peer_rx_mtu)
{
	u32 mtu = min(local_rx_mtu, peer_rx_mtu);

	if (mtu <= IPOIB_ENCAP_LEN)
		return 0;
	return min_t(u32, mtu - IPOIB_ENCAP_LEN, 0xffff);
}
