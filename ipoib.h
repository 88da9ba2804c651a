/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ipoib_cm: IP over InfiniBand (RFC 4391) with connected mode (RFC 4755).
 *
 * Shared types and the small interfaces between the files of the module.
 */

#ifndef _IPOIB_H
#define _IPOIB_H

#include <linux/types.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <rdma/ib_verbs.h>

#define DRV_NAME		"ipoib_cm"

/*
 * Link-layer address (RFC 4391 section 9.1.1, RFC 4755 section 3.1):
 * one flags octet, the 24-bit UD QPN, the 16-octet port GID.
 */
#define IPOIB_HWADDR_LEN	20
#define IPOIB_HWADDR_GID_OFF	4
#define IPOIB_FLAG_RC		0x80
#define IPOIB_FLAG_UC		0x40
#define IPOIB_FLAGS_KNOWN	(IPOIB_FLAG_RC | IPOIB_FLAG_UC)
#define IPOIB_QPN_MASK		0x00ffffff
#define IPOIB_MCAST_QPN		0x00ffffff

/* The 4-octet encapsulation header (RFC 4391 section 6). */
#define IPOIB_ENCAP_LEN		4

/* Default P_Key, full membership. */
#define IPOIB_DEFAULT_PKEY	0xffff

void ipoib_hwaddr_build(u8 *addr, u8 flags, u32 qpn, const union ib_gid *gid);
u8 ipoib_hwaddr_flags(const u8 *addr);
u32 ipoib_hwaddr_qpn(const u8 *addr);
void ipoib_hwaddr_gid(const u8 *addr, union ib_gid *gid);
int ipoib_hwaddr_cmp(const u8 *a, const u8 *b);
void ipoib_broadcast_build(u8 *addr, u8 scope, u16 pkey);
bool ipoib_mgid_valid(const union ib_gid *mgid, const u8 *broadcast);

/*
 * RFC 4755 wire formats: the 8 octets of private data carried in REQ, REP
 * and REJ (section 6), Service IDs (section 3.5) and the connection MTU
 * (section 5.1).
 */
#define IPOIB_CM_PDATA_LEN	8
#define IPOIB_CM_SID_OFED	0x1000000000000000ULL
#define IPOIB_CM_SID_IETF	0x0100000000000000ULL
#define IPOIB_CM_SID_MASK	0xffffffffff000000ULL
/* The smallest receive MTU accepted from a peer: IPv4's minimum + header. */
#define IPOIB_CM_MIN_RX_MTU	(68 + IPOIB_ENCAP_LEN)
/* The largest RFC 4755 message, 2^31 octets (section 5). */
#define IPOIB_CM_MAX_RX_MTU	0x80000000U

struct ipoib_cm_pdata {
	u32 qpn;	/* the sender's UD QPN */
	u32 rx_mtu;	/* largest message the sender receives, with header */
};

void ipoib_cm_pdata_pack(void *buf, const struct ipoib_cm_pdata *pd);
int ipoib_cm_pdata_unpack(const void *buf, size_t len,
			  struct ipoib_cm_pdata *pd);
__be64 ipoib_cm_service_id(u64 base, u32 qpn);
int ipoib_cm_service_id_qpn(__be64 sid, u32 *qpn);
u32 ipoib_cm_conn_mtu(u32 local_rx_mtu, u32 peer_rx_mtu);

/* One RDMA device that ipoib_cm is bound to. */
struct ipoib_dev {
	struct ib_device *ibdev;
	struct list_head ports;		/* struct ipoib_port */
};

/* One port of that device. */
struct ipoib_port {
	struct list_head node;
	struct ipoib_dev *dev;
	u32 port_num;
	bool roce;
};

#endif /* _IPOIB_H */
