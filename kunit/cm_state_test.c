// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the connection state machine.  Every event in every state is
 * checked against the rules below, written from the design (and RFC 4755)
 * rather than from the table, then the properties the driver relies on
 * are checked on their own.
 */

#include <kunit/test.h>

#include "../ipoib_cm_state.c"

#define X(s, a)	((struct ipoib_cm_transition){ .next = IPOIB_CM_##s, \
					       .action = IPOIB_CM_ACT_##a })

/* What each event must do in each state. */
static struct ipoib_cm_transition spec(enum ipoib_cm_state s,
				       enum ipoib_cm_event e)
{
	const struct ipoib_cm_transition same = {
		.next = s, .action = IPOIB_CM_ACT_NONE,
	};

	/* Being torn down: nothing else happens to it. */
	if (s == IPOIB_CM_CLOSING)
		return same;
	/* Mode switch, ifdown, removal: everything else closes. */
	if (e == IPOIB_CM_EV_SHUTDOWN)
		return X(CLOSING, CLOSE);

	switch (s) {
	case IPOIB_CM_NEW:
	case IPOIB_CM_REQ_SENT:
		if (s == IPOIB_CM_NEW && e == IPOIB_CM_EV_START)
			return X(REQ_SENT, CONNECT);
		if (s == IPOIB_CM_REQ_SENT && e == IPOIB_CM_EV_REP)
			return X(LIVE, ESTABLISH);
		/* A dial that fails leaves the peer to UD, for a while. */
		if (e == IPOIB_CM_EV_REJ || e == IPOIB_CM_EV_LOST ||
		    e == IPOIB_CM_EV_ERROR ||
		    (s == IPOIB_CM_REQ_SENT && e == IPOIB_CM_EV_DREQ))
			return X(FAILED, FALLBACK);
		/* RFC 4755 3.3: the peer's REQ won. */
		if (e == IPOIB_CM_EV_CROSSED)
			return X(CLOSING, YIELD);
		return same;
	case IPOIB_CM_REP_SENT:
		/* RTS on the RTU or on the first receive, whichever first. */
		if (e == IPOIB_CM_EV_RTU || e == IPOIB_CM_EV_COMM_EST)
			return X(LIVE, ESTABLISH);
		if (e == IPOIB_CM_EV_REJ || e == IPOIB_CM_EV_LOST ||
		    e == IPOIB_CM_EV_DREQ || e == IPOIB_CM_EV_ERROR ||
		    e == IPOIB_CM_EV_IDLE)
			return X(CLOSING, CLOSE);
		return same;
	case IPOIB_CM_LIVE:
		if (e == IPOIB_CM_EV_REJ || e == IPOIB_CM_EV_DREQ ||
		    e == IPOIB_CM_EV_ERROR || e == IPOIB_CM_EV_IDLE)
			return X(CLOSING, CLOSE);
		return same;
	case IPOIB_CM_FAILED:
		if (e == IPOIB_CM_EV_RETRY)
			return X(NEW, NONE);
		if (e == IPOIB_CM_EV_IDLE)
			return X(CLOSING, CLOSE);
		return same;
	default:
		return same;
	}
}

/* Every (state, event) pair, as state * IPOIB_CM_EV_MAX + event. */
static unsigned int fsm_pairs[IPOIB_CM_STATE_MAX * IPOIB_CM_EV_MAX];

static int fsm_suite_init(struct kunit_suite *suite)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(fsm_pairs); i++)
		fsm_pairs[i] = i;
	return 0;
}

static void fsm_pair_desc(unsigned int *p, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s+%s",
		 ipoib_cm_state_names[*p / IPOIB_CM_EV_MAX],
		 ipoib_cm_event_names[*p % IPOIB_CM_EV_MAX]);
}

KUNIT_ARRAY_PARAM(fsm, fsm_pairs, fsm_pair_desc);

static void fsm_every_pair(struct kunit *test)
{
	const unsigned int *p = test->param_value;
	enum ipoib_cm_state state = *p / IPOIB_CM_EV_MAX;
	enum ipoib_cm_event event = *p % IPOIB_CM_EV_MAX;
	struct ipoib_cm_transition got = ipoib_cm_fsm(state, event);
	struct ipoib_cm_transition want = spec(state, event);

	KUNIT_EXPECT_EQ_MSG(test, got.next, want.next, "%s on %s: next %s",
			    ipoib_cm_event_names[event],
			    ipoib_cm_state_names[state],
			    ipoib_cm_state_names[got.next]);
	KUNIT_EXPECT_EQ(test, got.action, want.action);
}

/* The driver's assumptions about actions and the states they lead to. */
static void fsm_actions_consistent(struct kunit *test)
{
	unsigned int s, e;

	for (s = 0; s < IPOIB_CM_STATE_MAX; s++) {
		for (e = 0; e < IPOIB_CM_EV_MAX; e++) {
			struct ipoib_cm_transition t = ipoib_cm_fsm(s, e);

			KUNIT_ASSERT_LT(test, t.next, IPOIB_CM_STATE_MAX);
			switch (t.action) {
			case IPOIB_CM_ACT_CONNECT:
				KUNIT_EXPECT_EQ(test, t.next, IPOIB_CM_REQ_SENT);
				break;
			case IPOIB_CM_ACT_ESTABLISH:
				KUNIT_EXPECT_EQ(test, t.next, IPOIB_CM_LIVE);
				break;
			case IPOIB_CM_ACT_FALLBACK:
				KUNIT_EXPECT_EQ(test, t.next, IPOIB_CM_FAILED);
				break;
			case IPOIB_CM_ACT_YIELD:
			case IPOIB_CM_ACT_CLOSE:
				KUNIT_EXPECT_EQ(test, t.next, IPOIB_CM_CLOSING);
				break;
			case IPOIB_CM_ACT_NONE:
				/* Ignored events change nothing, but a retry. */
				if (s != IPOIB_CM_FAILED || e != IPOIB_CM_EV_RETRY)
					KUNIT_EXPECT_EQ(test, t.next, s);
				break;
			default:
				KUNIT_FAIL(test, "unknown action %u", t.action);
			}
			/* Nothing leaves CLOSING; LIVE only by ESTABLISH. */
			if (s == IPOIB_CM_CLOSING)
				KUNIT_EXPECT_EQ(test, t.next, IPOIB_CM_CLOSING);
			if (t.next == IPOIB_CM_LIVE && s != IPOIB_CM_LIVE)
				KUNIT_EXPECT_EQ(test, t.action,
						IPOIB_CM_ACT_ESTABLISH);
		}
	}
}

/* A connection reaches LIVE on either path, and ends in CLOSING. */
static void fsm_lifecycles(struct kunit *test)
{
	static const enum ipoib_cm_event active[] = {
		IPOIB_CM_EV_START, IPOIB_CM_EV_REP, IPOIB_CM_EV_RTU,
		IPOIB_CM_EV_IDLE,
	};
	static const enum ipoib_cm_event lost_rtu[] = {
		IPOIB_CM_EV_COMM_EST, IPOIB_CM_EV_RTU, IPOIB_CM_EV_DREQ,
		IPOIB_CM_EV_DREQ,
	};
	static const enum ipoib_cm_event failing[] = {
		IPOIB_CM_EV_START, IPOIB_CM_EV_REJ, IPOIB_CM_EV_REP,
		IPOIB_CM_EV_RETRY, IPOIB_CM_EV_START, IPOIB_CM_EV_LOST,
		IPOIB_CM_EV_SHUTDOWN,
	};
	enum ipoib_cm_state s;
	unsigned int i;

	s = IPOIB_CM_NEW;
	for (i = 0; i < ARRAY_SIZE(active); i++)
		s = ipoib_cm_fsm(s, active[i]).next;
	KUNIT_EXPECT_EQ(test, s, IPOIB_CM_CLOSING);

	s = IPOIB_CM_REP_SENT;
	s = ipoib_cm_fsm(s, lost_rtu[0]).next;
	KUNIT_EXPECT_EQ(test, s, IPOIB_CM_LIVE);
	for (i = 1; i < ARRAY_SIZE(lost_rtu); i++)
		s = ipoib_cm_fsm(s, lost_rtu[i]).next;
	KUNIT_EXPECT_EQ(test, s, IPOIB_CM_CLOSING);

	s = IPOIB_CM_NEW;
	for (i = 0; i < ARRAY_SIZE(failing); i++) {
		s = ipoib_cm_fsm(s, failing[i]).next;
		/* A REP after the REJ must not bring it to life. */
		KUNIT_EXPECT_NE(test, s, IPOIB_CM_LIVE);
	}
	KUNIT_EXPECT_EQ(test, s, IPOIB_CM_CLOSING);
}

static void fsm_out_of_range(struct kunit *test)
{
	struct ipoib_cm_transition t;

	t = ipoib_cm_fsm(IPOIB_CM_STATE_MAX, IPOIB_CM_EV_START);
	KUNIT_EXPECT_EQ(test, t.next, IPOIB_CM_STATE_MAX);
	KUNIT_EXPECT_EQ(test, t.action, IPOIB_CM_ACT_NONE);
	t = ipoib_cm_fsm(IPOIB_CM_LIVE, IPOIB_CM_EV_MAX);
	KUNIT_EXPECT_EQ(test, t.next, IPOIB_CM_LIVE);
	KUNIT_EXPECT_EQ(test, t.action, IPOIB_CM_ACT_NONE);
	t = ipoib_cm_fsm(IPOIB_CM_LIVE, (enum ipoib_cm_event)-1);
	KUNIT_EXPECT_EQ(test, t.next, IPOIB_CM_LIVE);
	KUNIT_EXPECT_EQ(test, t.action, IPOIB_CM_ACT_NONE);
}

static void fsm_names(struct kunit *test)
{
	unsigned int i, j;

	for (i = 0; i < IPOIB_CM_STATE_MAX; i++) {
		KUNIT_ASSERT_NOT_NULL(test, ipoib_cm_state_names[i]);
		for (j = 0; j < i; j++)
			KUNIT_EXPECT_STRNEQ(test, ipoib_cm_state_names[i],
					    ipoib_cm_state_names[j]);
	}
	for (i = 0; i < IPOIB_CM_EV_MAX; i++) {
		KUNIT_ASSERT_NOT_NULL(test, ipoib_cm_event_names[i]);
		for (j = 0; j < i; j++)
			KUNIT_EXPECT_STRNEQ(test, ipoib_cm_event_names[i],
					    ipoib_cm_event_names[j]);
	}
	for (i = 0; i < IPOIB_CM_ST_MAX; i++) {
		KUNIT_ASSERT_NOT_NULL(test, ipoib_cm_stat_names[i]);
		for (j = 0; j < i; j++)
			KUNIT_EXPECT_STRNEQ(test, ipoib_cm_stat_names[i],
					    ipoib_cm_stat_names[j]);
	}
}

static struct kunit_case ipoib_cm_state_cases[] = {
	KUNIT_CASE_PARAM(fsm_every_pair, fsm_gen_params),
	KUNIT_CASE(fsm_actions_consistent),
	KUNIT_CASE(fsm_lifecycles),
	KUNIT_CASE(fsm_out_of_range),
	KUNIT_CASE(fsm_names),
	{}
};

static struct kunit_suite ipoib_cm_state_suite = {
	.name = "ipoib_cm_state",
	.suite_init = fsm_suite_init,
	.test_cases = ipoib_cm_state_cases,
};

kunit_test_suite(ipoib_cm_state_suite);
