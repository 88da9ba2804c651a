// SPDX-License-Identifier: GPL-2.0
/*
 * A test tool for the ipoib_cm scenarios: makes the next @count moves of
 * an RC QP of device @dev to the ERR state report failure (-EIO) to their
 * caller, through a kretprobe on ib_modify_qp().  The QP itself does move
 * to ERR: only the caller is told otherwise.  That is how teardown meets
 * a QP it cannot show drained, and has to leak it, from outside the
 * driver.  @fired counts the failures reported.  Never loaded in a
 * scenario that does not expect leak warnings.
 */
#include <linux/atomic.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/ptrace.h>
#include <linux/string.h>
#include <rdma/ib_verbs.h>

static char *dev = "rxe0";
module_param(dev, charp, 0444);
MODULE_PARM_DESC(dev, "RDMA device whose RC QPs are affected (rxe0)");

static int count;
module_param(count, int, 0644);
MODULE_PARM_DESC(count, "moves to ERR still to fail; write to arm");

static int fired;
module_param(fired, int, 0444);
MODULE_PARM_DESC(fired, "moves to ERR failed so far");

/*
 * Whether this call is one to fail: the return handler then runs.  No
 * lock: a kprobe may run from an int3, whose context is NMI-like.
 */
static int qp_err_fail_entry(struct kretprobe_instance *ri,
			     struct pt_regs *regs)
{
	struct ib_qp *qp = (struct ib_qp *)regs_get_kernel_argument(regs, 0);
	struct ib_qp_attr *attr =
		(struct ib_qp_attr *)regs_get_kernel_argument(regs, 1);
	int mask = regs_get_kernel_argument(regs, 2);
	int left = READ_ONCE(count);

	if (!(mask & IB_QP_STATE) || attr->qp_state != IB_QPS_ERR ||
	    qp->qp_type != IB_QPT_RC || strcmp(dev_name(&qp->device->dev), dev))
		return 1;
	do {
		if (left <= 0)
			return 1;
	} while (!try_cmpxchg(&count, &left, left - 1));
	return 0;
}

static int qp_err_fail_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	int n = READ_ONCE(fired);

	regs_set_return_value(regs, -EIO);
	while (!try_cmpxchg(&fired, &n, n + 1))
		;
	pr_info("qp_err_fail: a move to ERR on %s reported as failed\n", dev);
	return 0;
}

static struct kretprobe qp_err_fail_probe = {
	.kp.symbol_name	= "ib_modify_qp",
	.entry_handler	= qp_err_fail_entry,
	.handler	= qp_err_fail_ret,
	.maxactive	= 16,
};

static int __init qp_err_fail_init(void)
{
	return register_kretprobe(&qp_err_fail_probe);
}
module_init(qp_err_fail_init);

static void __exit qp_err_fail_exit(void)
{
	unregister_kretprobe(&qp_err_fail_probe);
}
module_exit(qp_err_fail_exit);

MODULE_DESCRIPTION("ipoib_cm test tool: moves of RC QPs to ERR reported as failed");
MODULE_LICENSE("GPL");
