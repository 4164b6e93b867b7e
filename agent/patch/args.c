/* Which patched functions have their arguments or return value read
 * (fxt-run --args/--retval): the argspec file fxt-run writes into the
 * run's report folder (run/argspec.h), loaded once and asked per
 * function as it is patched.  Off the hot path.  The reading itself is
 * rt.c's (agent_patch_args_enter/exit). */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/cfg.h"
#include "agent/gates.h"
#include "agent/log.h"
#include "agent/patch/patch.h"
#include "run/argspec.h"

struct spec {
	char *module, *symbol;
	uint64_t spec; /* caps | cond << PATCH_COND_SHIFT */
};

struct agent_patch_cond agent_patch_conds[PATCH_CONDS_MAX];
static unsigned nconds; /* used: 1 .. nconds */

static struct {
	struct spec *v;
	size_t n;
	bool loaded;
} specs;

static int by_symbol(const void *a, const void *b)
{
	const struct spec *x = a, *y = b;
	int c = strcmp(x->symbol, y->symbol);

	return c ? c : strcmp(x->module, y->module);
}

static void specs_load(void)
{
	char path[4096], *line = NULL;
	size_t cap = 0, room = 0;
	ssize_t len;
	FILE *f;

	specs.loaded = true;
	if (!agent_cfg.patch_report)
		return;
	snprintf(path, sizeof(path), "%s/%s", agent_cfg.patch_report, FXT_ARGSPEC_FILE);
	f = fopen(path, "re");
	if (!f)
		return;
	while ((len = getline(&line, &cap, f)) > 0) {
		const char *module, *symbol;
		struct fxt_argspec_cond cond, incl;
		uint64_t spec;
		uint32_t caps;
		unsigned t;

		if (line[len - 1] == '\n')
			line[len - 1] = '\0';
		if (run_argspec_parse(line, &module, &symbol, &caps, &cond, &incl) != 0)
			continue;
		spec = caps;
		if (cond.rule != FXT_ARGSPEC_NO_RULE && cond.rule < agent_cfg.nsnap_rules &&
		    nconds + 1 < PATCH_COND_APART) {
			agent_patch_conds[++nconds] =
			    (struct agent_patch_cond){ (uint8_t)cond.rule, (uint8_t)cond.reg,
						       (uint8_t)cond.width, cond.is_signed };
			spec |= (uint64_t)nconds << PATCH_COND_SHIFT;
		}
		/* The --include pattern's: its test, by the pattern's line. */
		for (t = 0; t < agent_ninclude_tests && agent_include_tests[t].line != incl.rule; t++)
			;
		if (incl.rule != FXT_ARGSPEC_NO_RULE && t < agent_ninclude_tests &&
		    nconds + 1 < PATCH_COND_APART) {
			agent_patch_conds[++nconds] =
			    (struct agent_patch_cond){ (uint8_t)t, (uint8_t)incl.reg,
						       (uint8_t)incl.width, incl.is_signed };
			spec |= (uint64_t)nconds << PATCH_INCL_SHIFT;
		}
		if (specs.n == room) {
			size_t r = room ? 2 * room : 64;
			struct spec *v = realloc(specs.v, r * sizeof(*v));
			if (!v)
				break;
			specs.v = v;
			room = r;
		}
		specs.v[specs.n].module = strdup(module);
		specs.v[specs.n].symbol = strdup(symbol);
		specs.v[specs.n].spec = spec;
		if (!specs.v[specs.n].module || !specs.v[specs.n].symbol) {
			free(specs.v[specs.n].module);
			free(specs.v[specs.n].symbol);
			break;
		}
		specs.n++;
	}
	free(line);
	fclose(f);
	if (specs.n)
		qsort(specs.v, specs.n, sizeof(*specs.v), by_symbol);
	agent_dbg("FXT_PATCH: arguments or return values of %zu functions to read", specs.n);
}

uint64_t agent_patch_args_spec(const char *module_path, const char *symbol)
{
	const char *base = strrchr(module_path, '/');
	struct spec key = { (char *)(base ? base + 1 : module_path), (char *)symbol, 0 };
	const struct spec *s;

	if (!specs.loaded)
		specs_load();
	if (!specs.n)
		return 0;
	s = bsearch(&key, specs.v, specs.n, sizeof(*specs.v), by_symbol);
	return s ? s->spec : 0;
}

/* Whether some function's spec has one of `bits`. */
static bool any_spec(uint32_t bits)
{
	if (!specs.loaded)
		specs_load();
	for (size_t i = 0; i < specs.n; i++)
		if ((uint32_t)specs.v[i].spec & bits)
			return true;
	return false;
}

bool agent_patch_args_hooked(const char *exe_path)
{
	const char *base = strrchr(exe_path, '/');

	base = base ? base + 1 : exe_path;
	if (!specs.loaded)
		specs_load();
	for (size_t i = 0; i < specs.n; i++)
		if (((uint32_t)specs.v[i].spec & FXT_CAP_HOOKED) && strcmp(specs.v[i].module, base) == 0)
			return true;
	return false;
}

bool agent_patch_args_strings(void)
{
	/* every STR bit */
	return any_spec((FXT_CAP_STR(FXT_ARG_GPRS) - FXT_CAP_STR(0)) | FXT_CAP_RET_STR);
}

void agent_patch_args_forget(void)
{
	for (size_t i = 0; i < specs.n; i++) {
		free(specs.v[i].module);
		free(specs.v[i].symbol);
	}
	free(specs.v);
	specs.v = NULL;
	specs.n = 0;
	specs.loaded = false;
	nconds = 0; /* a thread still in an old stub may test a new window's rule: harmless */
}
