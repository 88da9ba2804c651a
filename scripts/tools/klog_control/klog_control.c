// SPDX-License-Identifier: GPL-2.0
/*
 * Positive controls for the kernel-log checks of the VM runner: loaded with
 * what=leak it loses one allocation, which kmemleak must report; with
 * what=warn it raises one WARNING.  A test tool only: never loaded beside
 * the driver in a scenario that must pass.
 */
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>

static char *what = "leak";
module_param(what, charp, 0444);
MODULE_PARM_DESC(what, "leak (lose 256 bytes) or warn (one WARNING)");

static void *klog_control_lost;

static int __init klog_control_init(void)
{
	if (!strcmp(what, "warn")) {
		WARN(1, "klog_control: the WARNING asked for\n");
		return 0;
	}
	if (strcmp(what, "leak"))
		return -EINVAL;
	klog_control_lost = kmalloc(256, GFP_KERNEL);
	if (!klog_control_lost)
		return -ENOMEM;
	memset(klog_control_lost, 0x5a, 256);
	/* Forget the only reference: kmemleak must find the object. */
	WRITE_ONCE(klog_control_lost, NULL);
	return 0;
}
module_init(klog_control_init);

static void __exit klog_control_exit(void)
{
}
module_exit(klog_control_exit);

MODULE_DESCRIPTION("ipoib_cm test tool: kernel-log check controls");
MODULE_LICENSE("GPL");
