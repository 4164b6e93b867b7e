/* Where functions are (FXT_SYM_FUNC_LOC), from the symbolizer's own
 * line-table decoder (symbolizer/linetab.c), against libdw's answer for
 * every function of: tests/progs/linetab/ built with DWARF 4 and DWARF 5
 * (a header in a folder of its own; cold code and main in sequences that
 * must be sorted), the C++ fixture library of tests/progs/symfix/, and this
 * program (the symbolizer's own units, with the test flags).
 */
#include "config.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolizer/symbolizer.h"
#include "tests/lib/tap.h"

/* "FILE:LINE" as the symbolizer showed it before linetab.c: libdw's row
 * at `addr` in the unit covering it, FILE relative to DW_AT_comp_dir when
 * under it; else FXT_SYM_NO_DEBUG_INFO. */
static void libdw_loc(Dwarf *dw, uint64_t addr, char *buf, size_t cap)
{
	Dwarf_Off off = 0, next;
	size_t hsize;

	snprintf(buf, cap, "%s", FXT_SYM_NO_DEBUG_INFO);
	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;
		Dwarf_Attribute at;
		Dwarf_Line *l;
		const char *file, *dir;
		size_t n;
		int line = 0;

		if (!dwarf_offdie(dw, off + hsize, &cu) || dwarf_haspc(&cu, addr) != 1) {
			off = next;
			continue;
		}
		l = dwarf_getsrc_die(&cu, addr);
		file = l ? dwarf_linesrc(l, NULL, NULL) : NULL;
		if (!file)
			return;
		dwarf_lineno(l, &line);
		dir = dwarf_attr(&cu, DW_AT_comp_dir, &at) ? dwarf_formstring(&at) : NULL;
		n = dir ? strlen(dir) : 0;
		while (n > 1 && dir[n - 1] == '/')
			n--;
		if (n && file[0] == '/' && strncmp(file, dir, n) == 0 && file[n] == '/' &&
		    file[n + 1])
			file += n + 1;
		snprintf(buf, cap, "%s:%d", file, line > 0 ? line : 0);
		return;
	}
}

struct cmp {
	struct fxt_sym *s;
	Dwarf *dw;
	unsigned compared, located, differ;
	char sample[512]; /* the first difference */
};

static int compare_one(void *ctx, const char *module, const char *symbol, const char *demangled,
		       uint64_t addr)
{
	struct cmp *c = ctx;
	const struct fxt_sym_info *info = fxt_sym_lookup(c->s, addr);
	char want[4096];
	size_t n;

	(void)module;
	(void)symbol;
	if (!info->loc || info->start != addr)
		return 0; /* an alias inside another function's symbol */
	libdw_loc(c->dw, addr, want, sizeof(want));
	n = strlen(info->loc);
	/* " (inlined)" is no line table's: the DIEs say it. */
	if (n > strlen(FXT_SYM_INLINED) &&
	    strcmp(info->loc + n - strlen(FXT_SYM_INLINED), FXT_SYM_INLINED) == 0)
		n -= strlen(FXT_SYM_INLINED);
	c->compared++;
	c->located += strcmp(want, FXT_SYM_NO_DEBUG_INFO) != 0;
	if (strlen(want) != n || strncmp(want, info->loc, n) != 0) {
		if (!c->differ++)
			snprintf(c->sample, sizeof(c->sample),
				 "%.100s: ours '%.180s', libdw '%.180s'", demangled, info->loc,
				 want);
	}
	return 0;
}

/* Every function of `path` loaded at 0 (its ELF addresses): ours against
 * libdw's; at least `min` located. */
static void check_file(const char *path, unsigned min)
{
	struct cmp c = { 0 };
	int fd = open(path, O_RDONLY);

	c.s = fxt_sym_new(FXT_SYM_FUNC_LOC);
	c.dw = fd >= 0 ? dwarf_begin(fd, DWARF_C_READ) : NULL;
	if (!c.s || !c.dw || fxt_sym_add_module(c.s, path, 0) < 0) {
		ok(0, "%s: loaded", path);
	} else {
		fxt_sym_functions(c.s, compare_one, &c);
		ok(c.differ == 0 && c.located >= min,
		   "%s: %u functions, %u located, as libdw has them", path, c.compared, c.located);
		if (c.differ)
			diag("%u differ, first %s", c.differ, c.sample);
	}
	if (c.dw)
		dwarf_end(c.dw);
	if (fd >= 0)
		close(fd);
	fxt_sym_free(c.s);
}

/* The location of function `name` of `path` (loaded at 0), or "". */
static const char *loc_of(struct fxt_sym *s, const char *path, const char *name)
{
	const struct fxt_sym_info *info;
	uint64_t addr;

	if (fxt_sym_find(s, strrchr(path, '/') + 1, name, &addr) < 0)
		return "";
	info = fxt_sym_lookup(s, addr);
	return info->loc ? info->loc : "";
}

/* Locations that need the sort (cold code, main) and the header's
 * directory entry, from the DWARF 4 and 5 builds. */
static void check_known(const char *path)
{
	struct fxt_sym *s = fxt_sym_new(FXT_SYM_FUNC_LOC);
	const char *rare, *hdr;

	if (!s || fxt_sym_add_module(s, path, 0) < 0)
		bail_out("cannot load a linetab fixture");
	rare = loc_of(s, path, "rare");
	hdr = loc_of(s, path, "from_header");
	ok(strstr(rare, "linetab.c:") != NULL, "%s: rare (in .text.unlikely) is located: %s", path,
	   rare);
	ok(strstr(hdr, "linetab/linetab.h:") != NULL, "%s: from_header is in linetab.h: %s", path,
	   hdr);
	fxt_sym_free(s);
}

int main(void)
{
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	check_file(LINETAB_DIR "/linetab_dw4", 4);
	check_file(LINETAB_DIR "/linetab_dw5", 4);
	check_known(LINETAB_DIR "/linetab_dw4");
	check_known(LINETAB_DIR "/linetab_dw5");
	check_file(SYMFIX_DIR "/.libs/libsymcxx.so", 10);
	if (n <= 0)
		bail_out("no /proc/self/exe");
	self[n] = '\0';
	check_file(self, 50);
	done_testing();
	return exit_status();
}
