// SPDX-License-Identifier: GPL-2.0
/*
 * The IPoIB link-layer address and multicast GIDs (RFC 4391, RFC 4755).
 *
 * Pure functions on byte strings: no device state, so the KUnit suite can
 * test every one of them directly.
 */

#include <linux/string.h>

#include "ipoib.h"
#include "ipoib_compat.h"

/* Offsets within a multicast GID (RFC 4391 section 4). */
#define MGID_SCOPE	1	/* low nibble: scope; high nibble: flags (T) */
#define MGID_SIG	2	/* 0x401b for IPv4, 0x601b for IPv6 */
#define MGID_PKEY	4
#define MGID_SIG_IPV4	0x401b
#define MGID_SIG_IPV6	0x601b

/**
 * ipoib_hwaddr_build - fill a 20-octet IPoIB link-layer address
 * @addr: the address to fill
 * @flags: connected-mode capability flags (IPOIB_FLAG_RC, IPOIB_FLAG_UC)
 * @qpn: the interface's UD QP number
 * @gid: the port GID
 *
 * Flag bits that RFC 4755 does not define are sent as zero.
 */
void ipoib_hwaddr_build(u8 *addr, u8 flags, u32 qpn, const union ib_gid *gid)
{
	put_unaligned_be32(qpn & IPOIB_QPN_MASK, addr);
	addr[0] = flags & IPOIB_FLAGS_KNOWN;
	memcpy(addr + IPOIB_HWADDR_GID_OFF, gid->raw, sizeof(gid->raw));
}

/* The capability flags of an address; undefined bits are ignored. */
u8 ipoib_hwaddr_flags(const u8 *addr)
{
	return addr[0] & IPOIB_FLAGS_KNOWN;
}

u32 ipoib_hwaddr_qpn(const u8 *addr)
{
	return get_unaligned_be32(addr) & IPOIB_QPN_MASK;
}

void ipoib_hwaddr_gid(const u8 *addr, union ib_gid *gid)
{
	memcpy(gid->raw, addr + IPOIB_HWADDR_GID_OFF, sizeof(gid->raw));
}

/**
 * ipoib_hwaddr_cmp - order two link-layer addresses as RFC 4755 §3.3 does
 * @a: one address
 * @b: the other
 *
 * The flags octet is treated as zero and the remaining octets are compared
 * from the most significant one.  Returns <0, 0 or >0 like memcmp().
 */
int ipoib_hwaddr_cmp(const u8 *a, const u8 *b)
{
	return memcmp(a + 1, b + 1, IPOIB_HWADDR_LEN - 1);
}

/**
 * ipoib_broadcast_build - the broadcast address of an IPoIB link
 * @addr: the 20-octet address to fill
 * @scope: the multicast scope (2, link-local, is RFC 4391's default)
 * @pkey: the link's P_Key; the full-membership bit is always set
 *
 * QPN 0xffffff and the MGID ff1<scope>:401b:<pkey>::ffff:ffff.  The network
 * stack derives every IPv4 and IPv6 multicast address of the link from
 * this template (ip_ib_mc_map() and ipv6_ib_mc_map()).
 */
void ipoib_broadcast_build(u8 *addr, u8 scope, u16 pkey)
{
	u8 *mgid = addr + IPOIB_HWADDR_GID_OFF;

	memset(addr, 0, IPOIB_HWADDR_LEN);
	put_unaligned_be32(IPOIB_MCAST_QPN, addr);
	mgid[0] = 0xff;
	mgid[MGID_SCOPE] = 0x10 | (scope & 0x0f);
	put_unaligned_be16(MGID_SIG_IPV4, mgid + MGID_SIG);
	put_unaligned_be16(pkey | 0x8000, mgid + MGID_PKEY);
	put_unaligned_be32(0xffffffff, mgid + 12);
}

/**
 * ipoib_mgid_valid - is @mgid an IPoIB multicast GID of this link?
 * @mgid: the GID to check
 * @broadcast: the link's broadcast address
 *
 * True for IPv4 and IPv6 IPoIB MGIDs with the link's scope and P_Key.
 * Anything else (another prefix, another partition) is not ours to join.
 */
bool ipoib_mgid_valid(const union ib_gid *mgid, const u8 *broadcast)
{
	const u8 *bc = broadcast + IPOIB_HWADDR_GID_OFF;
	u16 sig = get_unaligned_be16(mgid->raw + MGID_SIG);

	if (mgid->raw[0] != 0xff || mgid->raw[MGID_SCOPE] != bc[MGID_SCOPE])
		return false;
	if (sig != MGID_SIG_IPV4 && sig != MGID_SIG_IPV6)
		return false;
	return !memcmp(mgid->raw + MGID_PKEY, bc + MGID_PKEY, 2);
}
