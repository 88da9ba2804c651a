// SPDX-License-Identifier: GPL-2.0
/*
 * The life of one RC connection, as a table: for every state and every
 * event, the next state and what to do.  Pure data, so the KUnit suite can
 * walk every pair; ipoib_cm_conn.c applies the result under priv->cm.lock.
 *
 * Active side:  NEW -START-> REQ_SENT -REP-> LIVE
 *               failures (REJ, no answer, transport error) -> FAILED, which
 *               serves the peer over UD until RETRY brings it back to NEW.
 * Passive side: created in REP_SENT (QP in RTR, REP out) -RTU or COMM_EST->
 *               LIVE.  Sends wait on the connection until LIVE (RTS).
 * Either side:  DREQ, errors, idleness and shutdown -> CLOSING, which
 *               absorbs everything until the connection is reaped.
 */

#include <linux/kernel.h>

#include "ipoib.h"
#include "ipoib_cm_priv.h"

#define T(s, a)	{ .next = IPOIB_CM_##s, .action = IPOIB_CM_ACT_##a }

static const struct ipoib_cm_transition
ipoib_cm_table[IPOIB_CM_STATE_MAX][IPOIB_CM_EV_MAX] = {
	[IPOIB_CM_NEW] = {
		[IPOIB_CM_EV_START]	= T(REQ_SENT, CONNECT),
		[IPOIB_CM_EV_REP]	= T(NEW, NONE),
		[IPOIB_CM_EV_RTU]	= T(NEW, NONE),
		[IPOIB_CM_EV_COMM_EST]	= T(NEW, NONE),
		/* The start task could not create the QP or send the REQ. */
		[IPOIB_CM_EV_REJ]	= T(FAILED, FALLBACK),
		[IPOIB_CM_EV_LOST]	= T(FAILED, FALLBACK),
		[IPOIB_CM_EV_CROSSED]	= T(CLOSING, YIELD),
		[IPOIB_CM_EV_DREQ]	= T(NEW, NONE),
		[IPOIB_CM_EV_ERROR]	= T(FAILED, FALLBACK),
		[IPOIB_CM_EV_IDLE]	= T(NEW, NONE),
		[IPOIB_CM_EV_RETRY]	= T(NEW, NONE),
		[IPOIB_CM_EV_SHUTDOWN]	= T(CLOSING, CLOSE),
	},
	[IPOIB_CM_REQ_SENT] = {
		[IPOIB_CM_EV_START]	= T(REQ_SENT, NONE),
		[IPOIB_CM_EV_REP]	= T(LIVE, ESTABLISH),
		[IPOIB_CM_EV_RTU]	= T(REQ_SENT, NONE),
		[IPOIB_CM_EV_COMM_EST]	= T(REQ_SENT, NONE),
		[IPOIB_CM_EV_REJ]	= T(FAILED, FALLBACK),
		[IPOIB_CM_EV_LOST]	= T(FAILED, FALLBACK),
		/* RFC 4755 3.3: the peer's REQ won; use its connection. */
		[IPOIB_CM_EV_CROSSED]	= T(CLOSING, YIELD),
		[IPOIB_CM_EV_DREQ]	= T(FAILED, FALLBACK),
		[IPOIB_CM_EV_ERROR]	= T(FAILED, FALLBACK),
		[IPOIB_CM_EV_IDLE]	= T(REQ_SENT, NONE),
		[IPOIB_CM_EV_RETRY]	= T(REQ_SENT, NONE),
		[IPOIB_CM_EV_SHUTDOWN]	= T(CLOSING, CLOSE),
	},
	[IPOIB_CM_REP_SENT] = {
		[IPOIB_CM_EV_START]	= T(REP_SENT, NONE),
		[IPOIB_CM_EV_REP]	= T(REP_SENT, NONE),
		[IPOIB_CM_EV_RTU]	= T(LIVE, ESTABLISH),
		[IPOIB_CM_EV_COMM_EST]	= T(LIVE, ESTABLISH),
		[IPOIB_CM_EV_REJ]	= T(CLOSING, CLOSE),
		[IPOIB_CM_EV_LOST]	= T(CLOSING, CLOSE),
		[IPOIB_CM_EV_CROSSED]	= T(REP_SENT, NONE),
		[IPOIB_CM_EV_DREQ]	= T(CLOSING, CLOSE),
		[IPOIB_CM_EV_ERROR]	= T(CLOSING, CLOSE),
		[IPOIB_CM_EV_IDLE]	= T(CLOSING, CLOSE),
		[IPOIB_CM_EV_RETRY]	= T(REP_SENT, NONE),
		[IPOIB_CM_EV_SHUTDOWN]	= T(CLOSING, CLOSE),
	},
	[IPOIB_CM_LIVE] = {
		[IPOIB_CM_EV_START]	= T(LIVE, NONE),
		[IPOIB_CM_EV_REP]	= T(LIVE, NONE),
		/* A late RTU after COMM_EST, or a duplicate. */
		[IPOIB_CM_EV_RTU]	= T(LIVE, NONE),
		[IPOIB_CM_EV_COMM_EST]	= T(LIVE, NONE),
		[IPOIB_CM_EV_REJ]	= T(CLOSING, CLOSE),
		[IPOIB_CM_EV_LOST]	= T(LIVE, NONE),
		[IPOIB_CM_EV_CROSSED]	= T(LIVE, NONE),
		[IPOIB_CM_EV_DREQ]	= T(CLOSING, CLOSE),
		[IPOIB_CM_EV_ERROR]	= T(CLOSING, CLOSE),
		[IPOIB_CM_EV_IDLE]	= T(CLOSING, CLOSE),
		[IPOIB_CM_EV_RETRY]	= T(LIVE, NONE),
		[IPOIB_CM_EV_SHUTDOWN]	= T(CLOSING, CLOSE),
	},
	[IPOIB_CM_FAILED] = {
		[IPOIB_CM_EV_START]	= T(FAILED, NONE),
		[IPOIB_CM_EV_REP]	= T(FAILED, NONE),
		[IPOIB_CM_EV_RTU]	= T(FAILED, NONE),
		[IPOIB_CM_EV_COMM_EST]	= T(FAILED, NONE),
		[IPOIB_CM_EV_REJ]	= T(FAILED, NONE),
		[IPOIB_CM_EV_LOST]	= T(FAILED, NONE),
		[IPOIB_CM_EV_CROSSED]	= T(FAILED, NONE),
		[IPOIB_CM_EV_DREQ]	= T(FAILED, NONE),
		[IPOIB_CM_EV_ERROR]	= T(FAILED, NONE),
		[IPOIB_CM_EV_IDLE]	= T(CLOSING, CLOSE),
		[IPOIB_CM_EV_RETRY]	= T(NEW, NONE),
		[IPOIB_CM_EV_SHUTDOWN]	= T(CLOSING, CLOSE),
	},
	[IPOIB_CM_CLOSING] = {
		[IPOIB_CM_EV_START]	= T(CLOSING, NONE),
		[IPOIB_CM_EV_REP]	= T(CLOSING, NONE),
		[IPOIB_CM_EV_RTU]	= T(CLOSING, NONE),
		[IPOIB_CM_EV_COMM_EST]	= T(CLOSING, NONE),
		[IPOIB_CM_EV_REJ]	= T(CLOSING, NONE),
		[IPOIB_CM_EV_LOST]	= T(CLOSING, NONE),
		[IPOIB_CM_EV_CROSSED]	= T(CLOSING, NONE),
		[IPOIB_CM_EV_DREQ]	= T(CLOSING, NONE),
		[IPOIB_CM_EV_ERROR]	= T(CLOSING, NONE),
		[IPOIB_CM_EV_IDLE]	= T(CLOSING, NONE),
		[IPOIB_CM_EV_RETRY]	= T(CLOSING, NONE),
		[IPOIB_CM_EV_SHUTDOWN]	= T(CLOSING, NONE),
	},
};

#undef T

/**
 * ipoib_cm_fsm - where an event takes a connection
 * @state: the connection's state
 * @event: what happened
 *
 * Out-of-range input leaves the state alone and does nothing.
 */
struct ipoib_cm_transition ipoib_cm_fsm(enum ipoib_cm_state state,
					enum ipoib_cm_event event)
{
	struct ipoib_cm_transition none = {
		.next = state, .action = IPOIB_CM_ACT_NONE,
	};

	if ((unsigned int)state >= IPOIB_CM_STATE_MAX ||
	    (unsigned int)event >= IPOIB_CM_EV_MAX)
		return none;
	return ipoib_cm_table[state][event];
}

const char *const ipoib_cm_state_names[IPOIB_CM_STATE_MAX] = {
	[IPOIB_CM_NEW]		= "new",
	[IPOIB_CM_REQ_SENT]	= "req-sent",
	[IPOIB_CM_REP_SENT]	= "rep-sent",
	[IPOIB_CM_LIVE]		= "live",
	[IPOIB_CM_FAILED]	= "failed",
	[IPOIB_CM_CLOSING]	= "closing",
};

const char *const ipoib_cm_event_names[IPOIB_CM_EV_MAX] = {
	[IPOIB_CM_EV_START]	= "start",
	[IPOIB_CM_EV_REP]	= "rep",
	[IPOIB_CM_EV_RTU]	= "rtu",
	[IPOIB_CM_EV_COMM_EST]	= "comm-est",
	[IPOIB_CM_EV_REJ]	= "rej",
	[IPOIB_CM_EV_LOST]	= "lost",
	[IPOIB_CM_EV_CROSSED]	= "crossed",
	[IPOIB_CM_EV_DREQ]	= "dreq",
	[IPOIB_CM_EV_ERROR]	= "error",
	[IPOIB_CM_EV_IDLE]	= "idle",
	[IPOIB_CM_EV_RETRY]	= "retry",
	[IPOIB_CM_EV_SHUTDOWN]	= "shutdown",
};

const char *const ipoib_cm_stat_names[IPOIB_CM_ST_MAX] = {
	[IPOIB_CM_ST_ACTIVE_UP]		= "conn_active_up",
	[IPOIB_CM_ST_PASSIVE_UP]	= "conn_passive_up",
	[IPOIB_CM_ST_REQ_REJECTED]	= "req_rejected",
	[IPOIB_CM_ST_BAD_REQ]		= "req_malformed",
	[IPOIB_CM_ST_NO_QP]		= "req_over_nosrq_cap",
	[IPOIB_CM_ST_PEER_CAP]		= "req_over_peer_cap",
	[IPOIB_CM_ST_NOSRQ_MEM]		= "req_over_nosrq_mem",
	[IPOIB_CM_ST_BAD_PKEY]		= "req_wrong_pkey",
	[IPOIB_CM_ST_FAILED]		= "conn_failed",
	[IPOIB_CM_ST_BAD_REP]		= "rep_malformed",
	[IPOIB_CM_ST_REJ_RCVD]		= "rej_received",
	[IPOIB_CM_ST_FALLBACK_TX]	= "fallback_tx_packets",
	[IPOIB_CM_ST_IETF_RETRY]	= "ietf_sid_retries",
	[IPOIB_CM_ST_CROSSED]		= "req_crossed",
	[IPOIB_CM_ST_REJ_CROSSED]	= "rej_crossed",
	[IPOIB_CM_ST_IDLE_REAPED]	= "conn_idle_reaped",
	[IPOIB_CM_ST_CLOSED]		= "conn_closed",
	[IPOIB_CM_ST_COMM_EST]		= "comm_est",
	[IPOIB_CM_ST_HELD]		= "held_before_rts",
	[IPOIB_CM_ST_FLUSHED]		= "held_flushed",
	[IPOIB_CM_ST_HOLD_DROPPED]	= "held_dropped",
	[IPOIB_CM_ST_TOO_BIG]		= "too_big_icmp",
	[IPOIB_CM_ST_TX_PACKETS]	= "rc_tx_packets",
	[IPOIB_CM_ST_TX_BYTES]		= "rc_tx_bytes",
	[IPOIB_CM_ST_RX_PACKETS]	= "rc_rx_packets",
	[IPOIB_CM_ST_RX_BYTES]		= "rc_rx_bytes",
	[IPOIB_CM_ST_TX_ERRORS]		= "rc_tx_errors",
	[IPOIB_CM_ST_RX_NO_CONN]	= "rc_rx_no_conn",
	[IPOIB_CM_ST_RX_GROWN]		= "nosrq_rx_grown",
	[IPOIB_CM_ST_RX_SHRUNK]		= "nosrq_rx_shrunk",
	[IPOIB_CM_ST_RX_RECLAIMED]	= "nosrq_rx_reclaimed",
	[IPOIB_CM_ST_RX_BUDGET]		= "nosrq_rx_budget_full",
	[IPOIB_CM_ST_SRQ_LIMIT]		= "srq_limit_events",
};
