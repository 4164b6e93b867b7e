/* Which calls the hooks record (see filter.h). */
#include <config.h>

#include <dlfcn.h>
#include <errno.h>
#include <fnmatch.h>
#include <link.h>
#include <pthread.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"
#include "agent/elfsyms.h"
#include "agent/feature.h"
#include "agent/keep/filter.h"
#include "agent/modules.h"
#include "agent/patterns.h"
#include "agent/log.h"
#include "agent/cfg.h"
#include "agent/keep/snapshot.h"
#include "run/recording.h"

#define F_INCLUDE 1u
#define F_EXCLUDE 2u
#define F_SKIP	  4u
/* An FXT_INCLUDE pattern with a test of an argument names it: an include
 * function for the calls whose hook has AGENT_FILTER_HELD. */
#define F_INCLUDE_IF 16u
/* A snapshot rule watches the function (agent/keep/snapshot.h): the rule's
 * index in the bits above F_RULE_SHIFT. */
#define F_WATCH	     8u
/* Patched in a -finstrument-functions build: its hooks record nothing
 * (agent_filter_yield()). */
#define F_YIELD	     16u
#define F_RULE_SHIFT 8u

/* Modules left out by FXT_MODULE, at most this many. */
#define MAX_SKIP 64u

unsigned char agent_filter_on;

/* The tests of FXT_INCLUDE's patterns (filter.h): parsed by
 * agent_filter_init(), read by run-time patching as it patches. */
static struct fxt_snapshot_rule include_rules[FXT_MAX_INCLUDE_TESTS];
struct agent_include_test agent_include_tests[FXT_MAX_INCLUDE_TESTS];
unsigned agent_ninclude_tests;

/* The published table: functions with flags, modules skipped. */
struct ftable {
	uint64_t mask; /* capacity - 1; entries are empty when addr is 0 */
	size_t n;
	unsigned nskip;
	struct {
		uint64_t lo, hi;
	} skip[MAX_SKIP];
	struct fentry {
		uint64_t addr;
		uint64_t flags;
	} v[];
};

/* Patterns: one compiled expression each (a list per option). */

static struct {
	pthread_mutex_t lock; /* builders of tables */
	struct agent_patterns include, exclude;
	struct agent_patterns include_if; /* the names of FXT_INCLUDE's patterns with a test */
	unsigned nwatch; /* snapshot rules on functions */
	char **modules;	 /* FXT_MODULE's globs */
	size_t nmodules;
	struct ftable *table; /* published; old ones are kept (readers) */
	unsigned matched_include, matched_exclude;
} F = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* Not fxt__hash_mix (common/hash.h), the hash of every other table: this
 * one is looked up by the hooks, twice a call, and one multiply of the
 * address (functions are 16-byte aligned: the low bits say nothing) is
 * enough for it; the finalizer's three made a filtered-out call of
 * bench/fib 34 about 0.4 ns slower (7 interleaved runs, 202.7 against
 * 216.3 ms). */
static inline uint64_t slot_of(uint64_t addr, uint64_t mask)
{
	return ((addr >> 4) * 0x9e3779b97f4a7c15ull >> 20) & mask;
}

static inline unsigned flags_of(const struct ftable *t, uint64_t fn)
{
	for (unsigned i = 0; i < t->nskip; i++)
		if (fn - t->skip[i].lo < t->skip[i].hi - t->skip[i].lo)
			return F_SKIP;
	if (!t->n)
		return 0;
	for (uint64_t h = slot_of(fn, t->mask); t->v[h].addr; h = (h + 1) & t->mask)
		if (t->v[h].addr == fn)
			return (unsigned)t->v[h].flags;
	return 0;
}

/* ------------------------------------------------------------ the hook */

/* Whether a call with flags f passes the include, exclude and module
 * filters, the counters being those after its enter. */
static inline bool passes(const struct tstate *t, unsigned f)
{
	return (!(F.include.n || F.include_if.n) || t->f_inc) && !t->f_exc && !(f & F_SKIP);
}

/* A watched function's call begins: its start, on the thread's stack of
 * watched calls (those past its depth are not timed). */
static void watch_enter(struct tstate *t, uint64_t fn)
{
	if (t->w_n < AGENT_WATCH_DEPTH) {
		t->w_fn[t->w_n] = fn;
		t->w_t0[t->w_n++] = agent_mono_ns();
	} else {
		t->w_over++;
	}
}

/* ... and ends (after its exit record): a snapshot when it took longer
 * than its rule says.  An exit that longjmp() skipped leaves its entry
 * on the stack, under the one this exit is for. */
static void watch_exit(struct tstate *t, uint64_t fn, unsigned f)
{
	unsigned rule = f >> F_RULE_SHIFT, i = t->w_n;
	uint64_t dur;

	if (t->w_over) {
		t->w_over--;
		return;
	}
	while (i > 0 && t->w_fn[i - 1] != fn)
		i--;
	if (!i)
		return;
	t->w_n = i - 1;
	dur = agent_mono_ns() - t->w_t0[i - 1];
	if (rule < agent_cfg.nsnap_rules && dur > agent_cfg.snap_rules[rule].limit_ns)
		agent_snapshot_fn(t, fn, rule, dur);
}

/* A call's entry or exit (SPOOL_EXIT_BIT) through the filters; `hook`:
 * by the -finstrument-functions hooks, which leave a yielding function's
 * to its patched entry and return. */
static inline __attribute__((always_inline)) void filter(struct tstate *t, uint64_t addr,
							 bool hook)
{
	const struct ftable *tab = __atomic_load_n(&F.table, __ATOMIC_ACQUIRE);
	uint64_t fn = addr & ~(SPOOL_EXIT_BIT | AGENT_FILTER_HELD);
	unsigned f = tab ? flags_of(tab, fn) : 0, depth = agent_cfg.depth;
	bool rec = false;

	if (hook && __builtin_expect(f & F_YIELD, 0))
		return;
	/* Its test held at its entry: an include function for this call. */
	if (__builtin_expect(f & F_INCLUDE_IF, 0) && (addr & AGENT_FILTER_HELD))
		f |= F_INCLUDE;
	addr &= ~AGENT_FILTER_HELD;

	if (__builtin_expect(f & F_WATCH, 0) && !(addr & SPOOL_EXIT_BIT))
		watch_enter(t, fn);

	if (!(addr & SPOOL_EXIT_BIT)) {
		t->f_inc += (f & F_INCLUDE) != 0;
		t->f_exc += (f & F_EXCLUDE) != 0;
		if (passes(t, f))
			rec = ++t->f_depth <= depth || !depth;
	} else {
		if (passes(t, f)) {
			rec = t->f_depth <= depth || !depth;
			t->f_depth -= t->f_depth != 0;
		}
		t->f_inc -= (f & F_INCLUDE) && t->f_inc;
		t->f_exc -= (f & F_EXCLUDE) && t->f_exc;
	}
	if (rec)
		agent_record(t, addr);
	if (__builtin_expect(f & F_WATCH, 0) && (addr & SPOOL_EXIT_BIT) && !t->busy)
		watch_exit(t, fn, f);
}

void agent_filter_hook(struct tstate *t, uint64_t addr)
{
	filter(t, addr, true);
}

void agent_filter_patched(struct tstate *t, uint64_t addr)
{
	filter(t, addr, false);
}

/* What an earlier agent_filter_init() set up (a new attach window): the
 * tables published stay allocated, for readers still in them. */
static void filter_reset(void)
{
	__atomic_store_n(&agent_filter_on, 0, __ATOMIC_RELEASE);
	agent_snap_libc = 0;
	pthread_mutex_lock(&F.lock);
	agent_patterns_free(&F.include);
	agent_patterns_free(&F.include_if);
	agent_patterns_free(&F.exclude);
	agent_ninclude_tests = 0;
	for (size_t i = 0; i < F.nmodules; i++)
		free(F.modules[i]);
	free(F.modules);
	F.modules = NULL;
	F.nmodules = 0;
	F.nwatch = 0;
	F.matched_include = F.matched_exclude = 0;
	__atomic_store_n(&F.table, NULL, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&F.lock);
}

/* FXT_INCLUDE's patterns: those with a test of an argument ("lookup@arg1==42",
 * run/recording.h) into F.include_if, their tests into
 * agent_include_tests; the others into F.include. */
static int include_compile(void)
{
	unsigned line = 0;
	int err = 0;

	for (const char *l = agent_cfg.include; !err && l && *l; line++) {
		size_t len = strcspn(l, "\n"), pos;
		struct fxt_snapshot_rule r;
		const char *what;
		char *one = strndup(l, len);
		int rc = run_include_test_parse(l, len, &r, &pos, &what);

		if (!one)
			return -ENOMEM;
		if (rc == 1 && agent_ninclude_tests < FXT_MAX_INCLUDE_TESTS) {
			unsigned i = agent_ninclude_tests++;

			include_rules[i] = r;
			agent_include_tests[i] = (struct agent_include_test){ line, &include_rules[i] };
			err = agent_patterns_compile(r.name, &F.include_if, "FXT_INCLUDE");
		} else if (rc == 0) {
			err = agent_patterns_compile(one, &F.include, "FXT_INCLUDE");
		} else if (rc == 1) {
			agent_dbg("FXT_INCLUDE: more than %u patterns with a test", FXT_MAX_INCLUDE_TESTS);
			err = -EINVAL;
		} else {
			agent_dbg("FXT_INCLUDE: '%s': at column %zu, %s expected", one, pos + 1, what);
			err = -EINVAL;
		}
		free(one);
		l += len + (l[len] == '\n');
	}
	return err;
}

int agent_filter_init(void)
{
	int err;

	filter_reset();
	err = include_compile();

	if (!err)
		err = agent_patterns_compile(agent_cfg.exclude, &F.exclude, "FXT_EXCLUDE");
	for (const char *s = agent_cfg.modules; !err && s && *s;) {
		size_t len = strcspn(s, "\n");

		if (len) {
			char **v = realloc(F.modules, (F.nmodules + 1) * sizeof(*v));
			if (!v) {
				err = -ENOMEM;
				break;
			}
			F.modules = v;
			v[F.nmodules] = strndup(s, len);
			if (!v[F.nmodules]) {
				err = -ENOMEM;
				break;
			}
			F.nmodules++;
		}
		s += len + (s[len] == '\n');
	}
	if (err) {
		F.include.n = F.include_if.n = F.exclude.n = F.nmodules = 0;
		agent_ninclude_tests = 0;
		return err;
	}
	for (unsigned i = 0; i < agent_cfg.nsnap_rules; i++) {
		if (agent_cfg.snap_rules[i].libc_group)
			agent_snap_libc |= agent_cfg.snap_rules[i].libc_group;
		else if (!agent_cfg.snap_rules[i].value_of) /* value rules: patch/rt.c */
			F.nwatch++;
	}
	if (F.include.n || F.include_if.n || F.exclude.n || F.nmodules || agent_cfg.depth ||
	    F.nwatch)
		__atomic_store_n(&agent_filter_on, 1, __ATOMIC_RELEASE);
	return 0;
}

/* ------------------------------------------------------------ tables */

struct found {
	struct fentry *v;
	size_t n, cap;
	uint64_t bias;
};

/* F_WATCH and the first snapshot rule whose glob matches `name`. */
static unsigned watched(const char *name)
{
	for (unsigned i = 0; F.nwatch && i < agent_cfg.nsnap_rules; i++) {
		const struct fxt_snapshot_rule *r = &agent_cfg.snap_rules[i];

		if (!r->libc_group && !r->value_of && fnmatch(r->name, name, 0) == 0)
			return F_WATCH | i << F_RULE_SHIFT;
	}
	return 0;
}

static void on_function(void *ctx, const char *name, uint64_t value)
{
	struct found *f = ctx;
	char *dm = agent_demangler_found() ? agent_demangle(name) : NULL;
	unsigned flags;

	flags = (agent_patterns_match(&F.include, dm ? dm : name) ? F_INCLUDE : 0) |
		(agent_patterns_match(&F.include_if, dm ? dm : name) ? F_INCLUDE_IF : 0) |
		(agent_patterns_match(&F.exclude, dm ? dm : name) ? F_EXCLUDE : 0) |
		watched(dm ? dm : name);
	free(dm);
	if (!flags)
		return;
	if (f->n == f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 64;
		struct fentry *v = realloc(f->v, cap * sizeof(*v));
		if (!v)
			return; /* fewer functions filtered: logged by the caller */
		f->v = v;
		f->cap = cap;
	}
	f->v[f->n++] = (struct fentry){ f->bias + value, flags };
}

static void insert(struct ftable *t, uint64_t addr, uint64_t flags)
{
	uint64_t h = slot_of(addr, t->mask);

	while (t->v[h].addr && t->v[h].addr != addr)
		h = (h + 1) & t->mask;
	if (!t->v[h].addr)
		t->n++;
	t->v[h].addr = addr;
	t->v[h].flags |= flags;
}

/* A new table: the old one's entries and ranges, plus `add` and a range. */
static struct ftable *rebuild(const struct ftable *old, const struct found *add, bool skip,
			      uint64_t lo, uint64_t hi)
{
	size_t n = (old ? old->n : 0) + add->n, cap = 16;
	struct ftable *t;

	while (cap < 2 * n)
		cap *= 2;
	t = calloc(1, sizeof(*t) + cap * sizeof(t->v[0]));
	if (!t)
		return NULL;
	t->mask = cap - 1;
	if (old) {
		t->nskip = old->nskip;
		memcpy(t->skip, old->skip, sizeof(t->skip));
		for (uint64_t i = 0; old->n && i <= old->mask; i++)
			if (old->v[i].addr)
				insert(t, old->v[i].addr, old->v[i].flags);
	}
	for (size_t i = 0; i < add->n; i++)
		insert(t, add->v[i].addr, add->v[i].flags);
	if (skip && t->nskip < MAX_SKIP) {
		t->skip[t->nskip].lo = lo;
		t->skip[t->nskip].hi = hi;
		t->nskip++;
	}
	return t;
}

/* Whether FXT_MODULE keeps the module at `path` (its file name). */
static bool module_kept(const char *path)
{
	const char *base = strrchr(path, '/');

	if (!F.nmodules)
		return true;
	base = base ? base + 1 : path;
	for (size_t i = 0; i < F.nmodules; i++)
		if (fnmatch(F.modules[i], base, 0) == 0)
			return true;
	return false;
}

static void on_function_sized(void *ctx, const char *name, uint64_t value, uint64_t size,
			      const char *file)
{
	(void)size;
	(void)file;
	on_function(ctx, name, value);
}

void agent_filter_module(const char *path, uint64_t bias, uint64_t lo, uint64_t hi)
{
	struct found add = { .bias = bias };
	struct ftable *t;
	bool instrumented = false, skip;
	long n = 0;

	if (!__atomic_load_n(&agent_filter_on, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&F.lock);
	if (!agent_demangler_found())
		agent_demangler_find();
	skip = !module_kept(path);
	if (agent_module_patched(path)) {
		/* Its calls are recorded by run-time patching (patch.h):
		 * filtered as an instrumented module's are. */
		instrumented = true;
		if (F.include.n || F.include_if.n || F.exclude.n || F.nwatch)
			n = agent_elf_all_functions(path, on_function_sized, NULL, &add, NULL);
	} else if (F.include.n || F.include_if.n || F.exclude.n || F.nwatch) {
		n = agent_elf_functions(path, on_function, &add, &instrumented);
	} else {
		n = agent_elf_functions(path, NULL, NULL, &instrumented);
	}
	if (n < 0 || !instrumented) {
		pthread_mutex_unlock(&F.lock);
		free(add.v);
		return;
	}
	for (size_t i = 0; i < add.n; i++) {
		F.matched_include += (add.v[i].flags & (F_INCLUDE | F_INCLUDE_IF)) != 0;
		F.matched_exclude += (add.v[i].flags & F_EXCLUDE) != 0;
	}
	if (add.n || skip) {
		t = rebuild(F.table, &add, skip, lo, hi);
		if (t)
			__atomic_store_n(&F.table, t, __ATOMIC_RELEASE);
		else
			agent_dbg("filters: out of memory; %s is not filtered", path);
	}
	agent_dbg("filters: %s: %ld functions, %zu matched%s", path, n, add.n,
		  skip ? ", module left out" : "");
	spool_set_filter_counts(&agent.spool, F.matched_include, F.matched_exclude);
	pthread_mutex_unlock(&F.lock);
	free(add.v);
}

int agent_filter_yield(const uint64_t *fn, size_t n)
{
	struct found add = { .n = n };
	struct ftable *t;

	if (!n)
		return 0;
	add.v = malloc(n * sizeof(*add.v));
	if (!add.v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		add.v[i] = (struct fentry){ fn[i], F_YIELD };
	pthread_mutex_lock(&F.lock);
	t = rebuild(__atomic_load_n(&F.table, __ATOMIC_ACQUIRE), &add, false, 0, 0);
	if (t) {
		__atomic_store_n(&F.table, t, __ATOMIC_RELEASE);
		__atomic_store_n(&agent_filter_on, 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&F.lock);
	free(add.v);
	agent_dbg("filters: the hooks of %zu patched functions yield to their patches", n);
	return t ? 0 : -ENOMEM;
}

/* ------------------------------------------------------------ feature */

/* The filters, and the snapshots their rules take (agent/feature.h):
 * always in the table, they do nothing when no setting asks for them. */
static void keep_configure(const struct agent_event *ev)
{
	(void)ev;
	if (agent_filter_init() < 0)
		agent_dbg("filters off: a pattern is not valid");
}

static void keep_module_loaded(const struct agent_event *ev)
{
	agent_filter_module(ev->module.path, ev->module.bias, ev->module.lo, ev->module.hi);
}

/* The snapshots this process took that nobody converted, with the
 * converter's entry for them (NULL: none loaded). */
static void keep_self_convert(const struct agent_event *ev)
{
	agent_snapshot_convert_fn *snap = NULL;

	if (ev->convert.converter)
		*(void **)&snap = dlsym(ev->convert.converter, "fxt_convert_snapshot_self");
	agent_snapshot_convert_own(snap, ev->convert.session);
}

const struct agent_feature agent_feature_keep = {
	.name = "keep",
	.at = {
		[AGENT_EV_CONFIGURE] = keep_configure,
		[AGENT_EV_MODULE_LOADED] = keep_module_loaded,
		[AGENT_EV_SELF_CONVERT] = keep_self_convert,
	},
};
