// SPDX-License-Identifier: GPL-2.0
/*
 * A test tool for the ipoib_cm scenarios: holds a CM callback on its CPU.
 *
 * A kprobe at the entry of @func, a CM event handler (an ib_cm_handler:
 * its second argument is the struct ib_cm_event), spins in the next
 * @count calls for one of the events in @event until @release is written
 * non-zero, or @ms milliseconds have passed.  The callback then goes on
 * as if it had been slow: whatever runs on the other CPU meanwhile (a
 * teardown taking the connection's CM id and waiting in
 * ib_destroy_cm_id(), a mode switch) meets it in that window every time,
 * not by chance.  With @event "any", @func may be any function (its
 * arguments are not read) and its next @count calls are held: a point
 * inside a callback, such as the REJ it sends.  @held counts the calls
 * caught so far, @released those that went on.  The driver is not
 * changed: the probe sits in front of it.
 *
 * The spin keeps preemption off on its CPU: no RCU grace period ends
 * while a callback is held, so nothing the test does meanwhile may wait
 * for one (ip netns exec does, unmounting /sys).  @ms stays below the
 * CM's own 10 s wait for the callbacks of an id being destroyed.
 */
#include <linux/delay.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/ptrace.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <rdma/ib_cm.h>

static char *func = "ipoib_cm_handler";
module_param(func, charp, 0444);
MODULE_PARM_DESC(func, "the CM handler to probe (ipoib_cm_handler)");

static char *event = "rep";
module_param(event, charp, 0444);
MODULE_PARM_DESC(event, "events to hold, comma-separated: req, rep, rtu, est, rej, dreq; or any call");

static int ms = 8000;
module_param(ms, int, 0644);
MODULE_PARM_DESC(ms, "longest a callback is held, in ms (1-8000)");

static int release;
module_param(release, int, 0644);
MODULE_PARM_DESC(release, "write non-zero to let a held callback go on");

static int count;
module_param(count, int, 0644);
MODULE_PARM_DESC(count, "callbacks still to hold; write to arm");

static int held;
module_param(held, int, 0444);
MODULE_PARM_DESC(held, "callbacks caught so far");

static int released;
module_param(released, int, 0444);
MODULE_PARM_DESC(released, "callbacks caught and let go so far");

static const struct {
	const char *name;
	enum ib_cm_event_type type;
} cm_hold_events[] = {
	{ "req", IB_CM_REQ_RECEIVED },
	{ "rep", IB_CM_REP_RECEIVED },
	{ "rtu", IB_CM_RTU_RECEIVED },
	{ "est", IB_CM_USER_ESTABLISHED },
	{ "rej", IB_CM_REJ_RECEIVED },
	{ "dreq", IB_CM_DREQ_RECEIVED },
};

/* Bit n: hold events of type n. */
static unsigned long cm_hold_types;
/* Hold any call of @func, whatever its arguments. */
static bool cm_hold_any;

/* No lock: a kprobe handler runs with preemption off, maybe from int3. */
static void cm_hold_bump(int *v)
{
	int n = READ_ONCE(*v);

	while (!try_cmpxchg(v, &n, n + 1))
		;
}

static int cm_hold_pre(struct kprobe *p, struct pt_regs *regs)
{
	const struct ib_cm_event *ev;
	int left = READ_ONCE(count);
	int waited, limit, type = -1;

	if (!cm_hold_any) {
		ev = (const struct ib_cm_event *)regs_get_kernel_argument(regs, 1);
		type = ev->event;
		if (type >= BITS_PER_LONG || !test_bit(type, &cm_hold_types))
			return 0;
	}
	do {
		if (left <= 0)
			return 0;
	} while (!try_cmpxchg(&count, &left, left - 1));
	limit = clamp(READ_ONCE(ms), 1, 8000);
	cm_hold_bump(&held);
	pr_info("cm_hold: %s call for event %d held\n", func, type);
	for (waited = 0; waited < limit && !READ_ONCE(release); waited += 10)
		mdelay(10);
	cm_hold_bump(&released);
	pr_info("cm_hold: %s call for event %d let go after %d ms\n",
		func, type, waited);
	return 0;
}

static struct kprobe cm_hold_probe = {
	.pre_handler	= cm_hold_pre,
};

static int __init cm_hold_init(void)
{
	char *list, *rest, *name;
	int i, ret = 0;

	list = kstrdup(event, GFP_KERNEL);
	if (!list)
		return -ENOMEM;
	rest = list;
	while ((name = strsep(&rest, ","))) {
		if (!strcmp(name, "any")) {
			cm_hold_any = true;
			continue;
		}
		for (i = 0; i < ARRAY_SIZE(cm_hold_events); i++)
			if (!strcmp(name, cm_hold_events[i].name))
				break;
		if (i == ARRAY_SIZE(cm_hold_events)) {
			pr_err("cm_hold: no event %s (req, rep, rtu, est, rej, dreq, any)\n",
			       name);
			ret = -EINVAL;
			break;
		}
		__set_bit(cm_hold_events[i].type, &cm_hold_types);
	}
	kfree(list);
	if (ret)
		return ret;
	cm_hold_probe.symbol_name = func;
	return register_kprobe(&cm_hold_probe);
}
module_init(cm_hold_init);

static void __exit cm_hold_exit(void)
{
	unregister_kprobe(&cm_hold_probe);
}
module_exit(cm_hold_exit);

MODULE_DESCRIPTION("ipoib_cm test tool: CM callbacks held at their start");
MODULE_LICENSE("GPL");
