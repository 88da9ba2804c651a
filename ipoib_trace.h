/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoints, under events/ipoib_cm/ in tracefs:
 *   ipoib_cm_state  a connection changed state (ipoib_cm_set_state())
 *   ipoib_drop      packets dropped and counted (ipoib_count_drops())
 * States, events and drop reasons are recorded by the names debugfs
 * shows, so perf and trace-cmd print them without knowing the enums.
 */

#undef TRACE_SYSTEM
#define TRACE_SYSTEM ipoib_cm

#if !defined(_IPOIB_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _IPOIB_TRACE_H

#include <linux/netdevice.h>
#include <linux/string.h>
#include <linux/tracepoint.h>

#include "ipoib.h"
#include "ipoib_cm_priv.h"

/* Room for the longest state, event and drop reason name. */
#define IPOIB_TRACE_NAME_LEN	20

TRACE_EVENT(ipoib_cm_state,
	    TP_PROTO(const struct ipoib_cm_conn *conn,
		     enum ipoib_cm_state old, enum ipoib_cm_state new,
		     enum ipoib_cm_event ev),
	    TP_ARGS(conn, old, new, ev),
	    TP_STRUCT__entry(__array(char, dev, IFNAMSIZ)
			     __array(u8, gid, 16)
			     __field(u32, peer_qpn)
			     __field(u32, qpn)
			     __field(bool, active)
			     __array(char, old_state, IPOIB_TRACE_NAME_LEN)
			     __array(char, new_state, IPOIB_TRACE_NAME_LEN)
			     __array(char, event, IPOIB_TRACE_NAME_LEN)),
	    TP_fast_assign(strscpy(__entry->dev, conn->priv->netdev->name,
				   IFNAMSIZ);
			   memcpy(__entry->gid, conn->gid.raw,
				  sizeof(__entry->gid));
			   __entry->peer_qpn = conn->qpn;
			   __entry->qpn = conn->qp_num;
			   __entry->active = conn->active;
			   strscpy(__entry->old_state,
				   ipoib_cm_state_names[old],
				   IPOIB_TRACE_NAME_LEN);
			   strscpy(__entry->new_state,
				   ipoib_cm_state_names[new],
				   IPOIB_TRACE_NAME_LEN);
			   strscpy(__entry->event, ipoib_cm_event_names[ev],
				   IPOIB_TRACE_NAME_LEN)),
	    TP_printk("%s peer %pI6 qpn 0x%06x %s rc_qpn 0x%06x: %s -> %s on %s",
		      __entry->dev, __entry->gid, __entry->peer_qpn,
		      __entry->active ? "active" : "passive", __entry->qpn,
		      __entry->old_state, __entry->new_state, __entry->event)
);

TRACE_EVENT(ipoib_drop,
	    TP_PROTO(const struct ipoib_priv *priv, enum ipoib_drop why,
		     unsigned int count),
	    TP_ARGS(priv, why, count),
	    TP_STRUCT__entry(__array(char, dev, IFNAMSIZ)
			     __array(char, reason, IPOIB_TRACE_NAME_LEN)
			     __field(unsigned int, count)),
	    TP_fast_assign(strscpy(__entry->dev, priv->netdev->name,
				   IFNAMSIZ);
			   strscpy(__entry->reason, ipoib_drop_names[why],
				   IPOIB_TRACE_NAME_LEN);
			   __entry->count = count),
	    TP_printk("%s: %u dropped: %s", __entry->dev, __entry->count,
		      __entry->reason)
);

#endif /* _IPOIB_TRACE_H */

/* This part must be outside the include guard. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE ipoib_trace
#include <trace/define_trace.h>
