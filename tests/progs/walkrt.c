/* libwalkrt: a library standing for a runtime that walks its own stack by
 * return address, as HotSpot's libjvm does (frame::sender), for
 * tests/e2e/patch-walkers.sh.  rt_run(d) calls itself d deep, then walks
 * the frame pointers back up, and each return address it finds there must
 * lie in its own text, where it can tell which of its functions the frame
 * is; one it cannot explain is fatal, as in a runtime.  Run-time patching
 * would put a trampoline there: fxt-run --patch leaves the library alone,
 * which it knows by the walker HotSpot exports for profilers,
 * AsyncGetCallTrace, exported here under that name.  Built -O2 with frame
 * pointers. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dl_iterate_phdr */
#endif
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "tests/progs/walkrt.h"

#define NOINLINE __attribute__((noinline, noclone))

static volatile int sink;

/* Its executable segment, [lo, hi). */
struct text {
	uintptr_t lo, hi;
};

static int find_text(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct text *t = arg;
	uintptr_t self = (uintptr_t)find_text;

	(void)size;
	for (unsigned i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && self >= lo &&
		    self < lo + ph->p_memsz) {
			t->lo = lo;
			t->hi = lo + ph->p_memsz;
			return 1;
		}
	}
	return 0;
}

/* Walks `depth` frames up from its caller's: the number of them whose
 * return address is in the library's text; aborts at one that is not. */
NOINLINE int AsyncGetCallTrace(int depth)
{
	struct text t = { 0, 0 };
	void **fp = __builtin_frame_address(0);
	int n = 0;

	dl_iterate_phdr(find_text, &t);
	for (; n < depth && fp; n++, fp = fp[0]) {
		uintptr_t ret = (uintptr_t)fp[1];
		if (ret < t.lo || ret >= t.hi) {
			fprintf(stderr, "walkrt: frame %d: return address %#lx outside its text\n",
				n, (unsigned long)ret);
			abort();
		}
	}
	return n;
}

NOINLINE int rt_run(int d)
{
	int n = d ? rt_run(d - 1) : AsyncGetCallTrace(4);
	sink++;
	return n;
}
