# SPDX-License-Identifier: GPL-2.0
#
# Out-of-tree build of ipoib_cm.ko.
#
#   make                    build against the running kernel
#   make KDIR=/path/to/tree build against another configured kernel tree
#   make install            install into /lib/modules/<release>/updates
#   make check              the full test suite (see README.md)
#   make demo               boot the test VM and show the module working
#   make bench              benchmarks on the bench kernel (out/bench/)

KDIR ?= /lib/modules/$(shell uname -r)/build
PWD_ := $(CURDIR)

all: modules

modules:
	$(MAKE) -C $(KDIR) M=$(PWD_) modules

kunit:
	$(MAKE) -C $(KDIR) M=$(PWD_) IPOIB_CM_KUNIT=m modules

install: modules
	$(MAKE) -C $(KDIR) M=$(PWD_) INSTALL_MOD_DIR=updates modules_install
	depmod -a $(shell $(MAKE) -s -C $(KDIR) kernelrelease 2>/dev/null || uname -r)

clean:
	$(MAKE) -C $(KDIR) M=$(PWD_) IPOIB_CM_KUNIT=m clean

check:
	bash scripts/test.sh

demo:
	bash scripts/demo.sh

bench:
	bash scripts/bench.sh

.PHONY: all modules kunit install clean check demo bench
