// SPDX-License-Identifier: GPL-2.0
/*
 * The tracepoints (ipoib_trace.h) and the places that fire them: every
 * state change of a connection and every counted drop goes through here.
 */

#include "ipoib.h"
#include "ipoib_cm_priv.h"

#define CREATE_TRACE_POINTS
#include "ipoib_trace.h"

/**
 * ipoib_cm_set_state - move a connection to a state
 * @conn: the connection; priv->cm.lock held
 * @next: its new state
 * @ev: the event that moved it
 */
void ipoib_cm_set_state(struct ipoib_cm_conn *conn, enum ipoib_cm_state next,
			enum ipoib_cm_event ev)
{
	lockdep_assert_held(&conn->priv->cm.lock);
	if (conn->state != next)
		trace_ipoib_cm_state(conn, conn->state, next, ev);
	conn->state = next;
}

/**
 * ipoib_count_drops - count dropped packets
 * @priv: the interface
 * @why: the reason
 * @n: how many
 */
void ipoib_count_drops(struct ipoib_priv *priv, enum ipoib_drop why,
		       unsigned int n)
{
	atomic64_add(n, &priv->drops[why]);
	trace_ipoib_drop(priv, why, n);
}
