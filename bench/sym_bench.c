/* Symbolizer speed over libc, run by hand (not part of make check):
 *
 *	bench/sym_bench [STEP [lines]]
 *
 * Looks up every STEP-th byte (default 16) of libc's code (with file:line
 * too when "lines" is given), the way return
 * addresses spread over a library: cold (a new symbolizer: symbol tables
 * read, index built, every address new), then warm (all cached), then the
 * same addresses straight through dwfl_module_addrinfo for comparison.
 */
#include "config.h"

#include <elfutils/libdwfl.h>
#include <inttypes.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "symbolizer/symbolizer.h"

struct range {
	const char *path;
	uint64_t bias, lo, hi;
};

static int find_libc(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct range *r = arg;
	int i;

	(void)size;
	if (!strstr(info->dlpi_name, "/libc.so"))
		return 0;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			r->path = info->dlpi_name;
			r->bias = info->dlpi_addr;
			r->lo = info->dlpi_addr + ph->p_vaddr;
			r->hi = r->lo + ph->p_memsz;
			return 1;
		}
	}
	return 0;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static char *debuginfo_path;
static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.debuginfo_path = &debuginfo_path,
};

int main(int argc, char **argv)
{
	struct range r = { 0 };
	uint64_t step = argc > 1 ? strtoull(argv[1], NULL, 0) : 16, a, n = 0, named = 0;
	struct fxt_sym *s;
	double t0, t1, t2, t3;
	Dwfl *dwfl;
	Dwfl_Module *mod;
	uint64_t direct_n = 0, direct_max = 2000, with_line = 0, differ = 0;
	int verbose = getenv("VERBOSE") != NULL, all = getenv("ALL") != NULL;

	if (!step || !dl_iterate_phdr(find_libc, &r)) {
		fprintf(stderr, "sym_bench: libc not found\n");
		return 1;
	}
	t0 = now();
	s = fxt_sym_new(argc > 2 && strcmp(argv[2], "lines") == 0 ? FXT_SYM_LINES : 0);
	if (!s || fxt_sym_add_self(s) < 0)
		return 1;
	for (a = r.lo; a < r.hi; a += step, n++) {
		const struct fxt_sym_info *info = fxt_sym_lookup(s, a);

		named += strchr(info->name, '+') == NULL;
		with_line += info->line != 0;
	}
	t1 = now();
	for (a = r.lo; a < r.hi; a += step)
		(void)fxt_sym_lookup(s, a);
	t2 = now();
	printf("%s: %" PRIu64 " addresses, %" PRIu64 " named by a symbol, %" PRIu64
	       " with a line\n",
	       r.path, n, named, with_line);
	printf("cold: %.3f s, %.0f lookups/s (add_self and index build included)\n", t1 - t0,
	       (double)n / (t1 - t0));
	printf("warm: %.4f s, %.0f lookups/s\n", t2 - t1, (double)n / (t2 - t1));
	fxt_sym_free(s);

	/* The plain libdwfl way, on the first direct_max addresses only. */
	dwfl = dwfl_begin(&callbacks);
	mod = dwfl ? dwfl_report_elf(dwfl, r.path, r.path, -1, r.bias, true) : NULL;
	if (!mod)
		return 1;
	dwfl_report_end(dwfl, NULL, NULL);
	(void)dwfl_module_getsymtab(mod); /* load outside the timing */
	t2 = now();
	for (a = r.lo; a < r.hi && direct_n < direct_max; a += step, direct_n++) {
		GElf_Off off;
		GElf_Sym sym;
		(void)dwfl_module_addrinfo(mod, a, &off, &sym, NULL, NULL, NULL);
	}
	t3 = now();
	/* Do both name the same function?  (Not timed.)  Aliases may differ. */
	s = fxt_sym_new(0);
	if (!s || fxt_sym_add_self(s) < 0)
		return 1;
	for (a = r.lo; a < r.hi; a += step) {
		GElf_Off off;
		GElf_Sym sym;
		const char *dn = dwfl_module_addrinfo(mod, a, &off, &sym, NULL, NULL, NULL);
		const char *mine = fxt_sym_lookup(s, a)->name;

		if ((all || a - r.lo < direct_max * step) &&
		    (dn ? strcmp(dn, mine) : !strchr(mine, '+'))) {
			if (verbose)
				printf("  0x%" PRIx64 ": dwfl %s, ours %s\n", a - r.bias,
				       dn ? dn : "(none)", mine);
			differ++;
		}
	}
	fxt_sym_free(s);
	printf("dwfl_module_addrinfo: %.0f lookups/s (%" PRIu64 " addresses, %d symbols), "
	       "%" PRIu64 " named otherwise\n",
	       (double)direct_n / (t3 - t2), direct_n, dwfl_module_getsymtab(mod), differ);
	dwfl_end(dwfl);
	return 0;
}
