/* fxt-run --args/--retval: which registers the agent reads at the entry
 * and return of each patched function they name (run/argspec.h), worked
 * out before the program runs, or before attaching, from each function's
 * DWARF (symbolizer/signature.h), or from the registers the user names
 * ("parse@arg1,arg2/s"), and written into the run's report folder, where
 * the agent finds it as it patches.
 *
 * The modules are those --patch patches: the program, and the libraries
 * it loads with it that --patch-module names (as the loader finds them:
 * it is asked, LD_TRACE_LOADED_OBJECTS, as ldd does); attached, those the
 * process has mapped.  A library loaded later by dlopen() has no entry:
 * its functions are patched without their arguments (said in the man page).
 *
 * At a launch, "the program" is also each one its command line runs by
 * exec, as far as the files and the words say without running anything
 * (exec_chain()): a script's interpreter (its "#!" line, env's program
 * there), env's program past its assignments, a shell's -c command's
 * first word ("sh -c 'X=1 exec ./app'"); chain.c.  A program chosen at run time
 * (pyenv's shim picking a python, a shell script's own commands) is not
 * known before it runs: its functions are patched without their values,
 * and the warning of a pattern that matched nothing names the programs
 * that were planned for.  Planning then, as each process executes, would
 * have the agent wait for fxt-run's DWARF reading at each exec of every
 * program the run starts; not done.
 *
 * A function of a module built with -finstrument-functions that --patch
 * does not name (or no --patch at all) is patched all the same, for its
 * values only: its line has FXT_CAP_HOOKED, the agent patches it, and its
 * hooks' records give way to the patched ones (agent/patch/patch.h), so
 * that each call has one slice, with its values.  Its hooks run after
 * the prologue, when the argument registers are gone.
 *
 * A --snapshot-if rule on a value ("open_db@retval<0", run/recording.h)
 * is worked out the same way: the functions its glob names get the
 * register read, and the test (which register, its width, signed or not)
 * in their line; the agent tests each call.  So is an --include
 * pattern's test of an argument ("lookup@arg1==42"), for the functions
 * its regular expression names: the agent tests it at each entry, and
 * the call is recorded, with what it calls, when it holds.
 *
 * Said on the standard error, once each: a pattern that names no function
 * of those modules, the functions it names that have no DWARF (their
 * arguments are not read; their return value is rax as it is), and those
 * --patch does not name in a module not built with -finstrument-functions
 * (nothing is read of them).
 */
#include <config.h>

#include <errno.h>
#include <fnmatch.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "launcher/launcher.h"
#include "run/argspec.h"
#include "run/recording.h"
#include "run/settings.h"
#include "symbolizer/signature.h"
#include "symbolizer/symbolizer.h"

/* One --args or --retval pattern. */
struct rule {
	char *text; /* as given */
	regex_t re;
	bool ret;      /* --retval */
	uint32_t caps; /* the registers named after '@', else 0: by DWARF */
	unsigned hits;
};

/* A --snapshot-if rule on a value, or an --include pattern's test of an
 * argument (its name a regular expression then, compiled in re). */
struct value_rule {
	struct fxt_snapshot_rule r;
	unsigned index; /* among --snapshot-if's rules, or --include's patterns */
	unsigned hits;
	regex_t re;
};

/* Functions to name in a warning: the first few, and how many. */
struct names {
	char list[160];
	unsigned n;
};

/* The most programs planned for at a launch: the one run and those its
 * command line runs by exec (exec_chain()). */
#define FXT_ARGS_CHAIN_MAX 5

struct plan {
	struct rule *v;
	size_t n;
	struct value_rule tests[FXT_MAX_SNAPSHOT_RULES];
	size_t ntests;
	struct value_rule incl[FXT_MAX_INCLUDE_TESTS];
	size_t nincl;
	regex_t *patch; /* --patch's patterns */
	size_t npatch;
	/* The programs planned for: the one run, and those its command
	 * line runs by exec (exec_chain()), by their real paths. */
	char *exes[FXT_ARGS_CHAIN_MAX];
	size_t nexes;
	const char *modules; /* --patch-module's globs, one a line, or NULL */
	struct fxt_sym *sym;
	/* The module on_function() saw last, and whether it calls the
	 * -finstrument-functions hooks. */
	char *hooked_path;
	bool hooked;
	FILE *out;
	unsigned written;
	/* Functions named without DWARF, named but not patched, whose
	 * value a --snapshot-if rule cannot test, and whose argument an
	 * --include pattern cannot test or --patch does not patch. */
	struct names nodwarf, unpatched, untestable, incl_untestable, incl_unpatched;
};

/* The programs planned for (real paths), kept for the patch summary
 * (args_unplanned()). */
static char *planned[FXT_ARGS_CHAIN_MAX];
static size_t nplanned;

/* "arg1,arg2/s" (integer argument registers 1..6, /s: a string) or, for
 * --retval, "retval" / "retval/s" into caps; false if it is not that. */
static bool parse_regs(const char *s, bool ret, uint32_t *caps)
{
	*caps = 0;
	while (*s) {
		bool str = false;

		if (ret && strncmp(s, "retval", 6) == 0) {
			s += 6;
			if (strncmp(s, "/s", 2) == 0)
				s += 2, str = true;
			*caps |= FXT_CAP_RAX | (str ? FXT_CAP_RET_STR : 0);
		} else if (!ret && strncmp(s, "arg", 3) == 0 && s[3] >= '1' && s[3] <= '6') {
			unsigned i = (unsigned)(s[3] - '1');

			s += 4;
			if (strncmp(s, "/s", 2) == 0)
				s += 2, str = true;
			*caps |= FXT_CAP_GPR(i) | (str ? FXT_CAP_STR(i) : 0);
		} else {
			return false;
		}
		if (*s == ',')
			s++;
		else if (*s)
			return false;
	}
	return *caps != 0;
}

static void compile(struct plan *p, const char *list, bool ret)
{
	const char *what = ret ? "--retval" : "--args";

	for (const char *l = list; l && *l;) {
		size_t len = strcspn(l, "\n");
		char *text = strndup(l, len), *at;
		struct rule *r;
		int rc;

		if (!text)
			die(EXIT_USAGE, "out of memory");
		r = realloc(p->v, (p->n + 1) * sizeof(*p->v));
		if (!r)
			die(EXIT_USAGE, "out of memory");
		p->v = r;
		r = &p->v[p->n];
		memset(r, 0, sizeof(*r));
		r->text = text;
		r->ret = ret;
		/* The registers named after the last '@', if that is what
		 * follows it. */
		at = strrchr(text, '@');
		if (at && parse_regs(at + 1, ret, &r->caps))
			*at = '\0';
		else if (at &&
			 (strncmp(at + 1, "arg", 3) == 0 || strncmp(at + 1, "retval", 6) == 0))
			die(EXIT_USAGE, "%s '%s': after '@', name the registers as %s", what, text,
			    ret ? "retval, or retval/s for a string"
				: "arg1 to arg6, /s for a string ('parse@arg1,arg2/s')");
		rc = regcomp(&r->re, text, REG_EXTENDED | REG_NOSUB);
		if (rc != 0)
			die(EXIT_USAGE, "%s: invalid regular expression '%s'", what, text);
		if (at && r->caps)
			*at = '@'; /* the text as given, for messages */
		p->n++;
		l += len;
		if (*l == '\n')
			l++;
	}
}

static void compile_patch(struct plan *p, const char *list)
{
	for (const char *l = list; l && *l;) {
		size_t len = strcspn(l, "\n");
		char *text = strndup(l, len);
		regex_t *v = realloc(p->patch, (p->npatch + 1) * sizeof(*v));

		if (!text || !v)
			die(EXIT_USAGE, "out of memory");
		p->patch = v;
		if (regcomp(&p->patch[p->npatch], text, REG_EXTENDED | REG_NOSUB) == 0)
			p->npatch++;
		free(text);
		l += len;
		if (*l == '\n')
			l++;
	}
}

static bool patched(const struct plan *p, const char *name)
{
	for (size_t i = 0; i < p->npatch; i++)
		if (regexec(&p->patch[i], name, 0, NULL, 0) == 0)
			return true;
	return false;
}

/* Whether the module at path is one --patch patches. */
static bool patched_module(const struct plan *p, const char *path)
{
	const char *base = strrchr(path, '/');

	for (size_t i = 0; i < p->nexes; i++)
		if (strcmp(path, p->exes[i]) == 0)
			return true;
	base = base ? base + 1 : path;
	for (const char *l = p->modules; l && *l;) {
		size_t len = strcspn(l, "\n");
		char glob[512];

		snprintf(glob, sizeof(glob), "%.*s", (int)len, l);
		if (fnmatch(glob, base, 0) == 0)
			return true;
		l += len;
		if (*l == '\n')
			l++;
	}
	return false;
}

static void note(struct names *l, const char *name)
{
	size_t used = strlen(l->list);

	if (l->n++ < 4 && used + strlen(name) + 3 < sizeof(l->list))
		snprintf(l->list + used, sizeof(l->list) - used, "%s%s", used ? ", " : "", name);
}

/* "fxt-run: warning: LEAD NAMES (N functions)TAIL", when l has any. */
static void warn_names(const char *lead, const struct names *l, const char *tail)
{
	if (l->n)
		fprintf(stderr, "fxt-run: warning: %s%s%s (%u function%s)%s\n", lead, l->list,
			l->n > 4 ? ", ..." : "", l->n, l->n == 1 ? "" : "s", tail);
}

/* The register of kind loc numbered reg (the return value's: 0 rax, 1
 * rdx; 0 xmm0, 1 xmm1), as a capture bit. */
static uint32_t cap_of(enum fxt_vloc loc, unsigned reg, bool ret)
{
	if (loc == FXT_LOC_GPR)
		return ret ? (reg == 0	 ? FXT_CAP_RAX
			      : reg == 1 ? FXT_CAP_RDX
					 : 0)
			   : (reg < FXT_ARG_GPRS ? FXT_CAP_GPR(reg) : 0);
	if (loc == FXT_LOC_XMM)
		return ret ? (reg == 0	 ? FXT_CAP_XMM0
			      : reg == 1 ? FXT_CAP_XMM1
					 : 0)
			   : (reg < FXT_ARG_XMMS ? FXT_CAP_XMM(reg) : 0);
	return 0;
}

/* The registers that hold the value d describes (a 9..16-byte one: two,
 * of one kind or, a struct {long; double}, of both). */
static uint32_t caps_of(const struct fxt_value_desc *d, bool ret)
{
	uint32_t c = cap_of(d->loc, d->reg, ret);

	if (d->two_regs)
		c |= cap_of(d->loc2, d->reg2, ret);
	if (d->kind == FXT_VK_STR && d->loc == FXT_LOC_GPR)
		c |= ret ? FXT_CAP_RET_STR : (d->reg < FXT_ARG_GPRS ? FXT_CAP_STR(d->reg) : 0);
	return c;
}

/* Where the value rule t tests a call (sig: the function's signature, or
 * NULL without DWARF: the registers as they are): *cond, and the
 * register read into *caps.  0, or -EINVAL for a value that is no
 * integer or pointer in a register. */
static int test_of(const struct value_rule *t, const struct fxt_signature *sig,
		   struct fxt_argspec_cond *cond, uint32_t *caps)
{
	const struct fxt_value_desc *d;
	bool ret = t->r.value_of == FXT_SNAP_RETVAL;

	if (!sig) { /* rax, or the N-th integer register, 64 bits signed */
		if (!ret && t->r.value_of > FXT_ARG_GPRS)
			return -EINVAL;
		*cond = (struct fxt_argspec_cond){
			t->index, ret ? FXT_REG_RAX : FXT_REG_GPR0 + t->r.value_of - 1, 8, true
		};
		*caps |= ret ? FXT_CAP_RAX : FXT_CAP_GPR(t->r.value_of - 1);
		return 0;
	}
	if (ret && sig->ret_in_memory)
		return -EINVAL;
	if (!ret && t->r.value_of > sig->nparams)
		return -EINVAL;
	d = ret ? &sig->ret : &sig->params[t->r.value_of - 1];
	if (d->loc != FXT_LOC_GPR || d->size > 8 || d->two_regs)
		return -EINVAL;
	switch (d->kind) {
	case FXT_VK_INT:
	case FXT_VK_UINT:
	case FXT_VK_BOOL:
	case FXT_VK_CHAR:
	case FXT_VK_ENUM:
	case FXT_VK_PTR:
	case FXT_VK_STR:
		break;
	default:
		return -EINVAL;
	}
	*cond = (struct fxt_argspec_cond){ t->index, ret ? FXT_REG_RAX : FXT_REG_GPR0 + d->reg,
					   d->size ? d->size : 8,
					   d->kind == FXT_VK_INT || d->kind == FXT_VK_ENUM ||
					       (d->kind == FXT_VK_CHAR && (char)-1 < 0) };
	*caps |= ret ? FXT_CAP_RAX : FXT_CAP_GPR(d->reg);
	return 0;
}

/* Whether the module at path was built with -finstrument-functions. */
static bool instrumented(const char *path)
{
	struct fxt_sym_layout l;

	return fxt_sym_elf_layout(path, &l) == 0 && l.instrumented;
}

/* ... module_path's answer, asked once a module (functions come a module
 * at a time). */
static bool hooked_module(struct plan *p, const char *module_path)
{
	if (!p->hooked_path || strcmp(p->hooked_path, module_path) != 0) {
		free(p->hooked_path);
		p->hooked_path = strdup(module_path);
		if (!p->hooked_path)
			die(EXIT_USAGE, "out of memory");
		p->hooked = instrumented(module_path);
	}
	return p->hooked;
}

/* A function's signature, looked up the first time it is needed. */
struct sig_of {
	struct fxt_sym *sym;
	uint64_t addr;
	const struct fxt_signature *sig; /* NULL: none (no DWARF) */
	bool looked;
};

static const struct fxt_signature *signature(struct sig_of *s)
{
	if (!s->looked) {
		s->looked = true;
		if (fxt_sym_signature(s->sym, s->addr, &s->sig) != 0)
			s->sig = NULL;
	}
	return s->sig;
}

/* The first of the n value rules v that names the function `demangled`
 * (by the glob of its name, or by_regex by its compiled re: --include's):
 * its test into *cond and the register it reads into *caps, or, when it
 * cannot be tested, the function noted in *untestable.  Whether one
 * names it. */
static bool first_test(struct value_rule *v, size_t n, bool by_regex, const char *demangled,
		       struct sig_of *s, struct fxt_argspec_cond *cond, uint32_t *caps,
		       struct names *untestable)
{
	for (size_t i = 0; i < n; i++) {
		struct value_rule *t = &v[i];

		if (by_regex ? regexec(&t->re, demangled, 0, NULL, 0) != 0
			     : fnmatch(t->r.name, demangled, 0) != 0)
			continue;
		t->hits++;
		if (test_of(t, signature(s), cond, caps) != 0) {
			note(untestable, demangled);
			cond->rule = FXT_ARGSPEC_NO_RULE;
			continue;
		}
		return true;
	}
	return false;
}

static int on_function(void *ctx, const char *module_path, const char *symbol,
		       const char *demangled, uint64_t addr)
{
	struct plan *p = ctx;
	struct sig_of s = { p->sym, addr, NULL, false };
	const struct fxt_signature *sig = NULL;
	bool looked = false, dwarf = false;
	uint32_t caps = 0;
	char line[8192];
	int len;

	if (!patched_module(p, module_path))
		return 0;
	for (size_t i = 0; i < p->n; i++) {
		struct rule *r = &p->v[i];

		if (regexec(&r->re, demangled, 0, NULL, 0) != 0)
			continue;
		r->hits++;
		if (r->caps) {
			caps |= r->caps;
			continue;
		}
		if (!looked) {
			looked = true;
			sig = signature(&s);
			dwarf = sig != NULL;
		}
		if (!dwarf) {
			if (r->ret)
				caps |= FXT_CAP_RAX; /* as it is */
			continue;
		}
		if (r->ret) {
			caps |= sig->ret_in_memory ? FXT_CAP_RAX : caps_of(&sig->ret, true);
		} else {
			for (size_t k = 0; k < sig->nparams; k++)
				caps |= caps_of(&sig->params[k], false);
		}
	}
	struct fxt_argspec_cond cond = { FXT_ARGSPEC_NO_RULE, 0, 0, false };
	struct fxt_argspec_cond incl = cond;

	first_test(p->tests, p->ntests, false, demangled, &s, &cond, &caps, &p->untestable);
	/* The first --include pattern with a test that names it. */
	if (first_test(p->incl, p->nincl, true, demangled, &s, &incl, &caps, &p->incl_untestable) &&
	    !patched(p, demangled))
		note(&p->incl_unpatched, demangled);
	looked |= s.looked;
	dwarf = s.sig != NULL;
	if (looked && !dwarf)
		note(&p->nodwarf, demangled);
	if (!caps)
		return 0;
	if (!patched(p, demangled)) {
		if (!hooked_module(p, module_path)) {
			note(&p->unpatched, demangled);
			return 0;
		}
		caps |= FXT_CAP_HOOKED;
	}
	const char *base = strrchr(module_path, '/');
	len = run_argspec_format(line, sizeof(line), base ? base + 1 : module_path, symbol, caps,
				 &cond, &incl);
	if (len > 0 && fwrite(line, 1, (size_t)len, p->out) == (size_t)len)
		p->written++;
	return 0;
}

/* The libraries the loader would load with program, into s at biases of
 * their own; false when it cannot say. */
static bool add_loaded_libraries(struct fxt_sym *s, const char *program, unsigned *k)
{
	struct fxt_sym_layout l;
	char cmd_line[8192];
	int fd[2];
	pid_t pid;
	FILE *f;

	if (fxt_sym_elf_layout(program, &l) != 0 || !l.interp || pipe(fd) != 0)
		return false;
	pid = fork();
	if (pid < 0) {
		close(fd[0]);
		close(fd[1]);
		return false;
	}
	if (pid == 0) {
		/* The loader lists what it loads and stops, as for ldd. */
		dup2(fd[1], 1);
		close(fd[0]);
		close(fd[1]);
		setenv("LD_TRACE_LOADED_OBJECTS", "1", 1);
		unsetenv("LD_PRELOAD");
		execl(program, program, (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	f = fdopen(fd[0], "r");
	while (f && fgets(cmd_line, sizeof(cmd_line), f)) {
		char *arrow = strstr(cmd_line, "=> "), *end;

		if (!arrow || arrow[3] != '/')
			continue;
		end = strstr(arrow + 3, " (");
		if (end)
			*end = '\0';
		else
			arrow[3 + strcspn(arrow + 3, "\n")] = '\0';
		/* Apart from each other and from a program at its own place. */
		fxt_sym_add_module(s, arrow + 3, (uint64_t)++ * k << 36);
	}
	if (f)
		fclose(f);
	else
		close(fd[0]);
	waitpid(pid, NULL, 0);
	return true;
}

/* "fxt-run: warning: OPT 'TEXT' matched no function of the patched
 * modules (PROGRAMS...)": which programs were planned for, and that
 * another one they run is not. */
static void warn_no_match(const struct plan *p, const char *opt, const char *text)
{
	char names[512] = "";
	size_t used = 0;

	for (size_t i = 0; i < p->nexes && used < sizeof(names); i++) {
		const char *base = strrchr(p->exes[i], '/');

		used += (size_t)snprintf(names + used, sizeof(names) - used, "%s%s", i ? ", " : "",
					 base ? base + 1 : p->exes[i]);
	}
	fprintf(stderr,
		"fxt-run: warning: %s '%s' matched no function of the patched modules (%s%s; "
		"a program run that fxt-run's command line does not name has no values)\n",
		opt, text, names, p->modules ? " and the libraries --patch-module names" : "");
}

/* The warning above for each of the n value rules v that named none. */
static void warn_unmatched(const struct plan *p, const char *opt, const struct value_rule *v,
			   size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!v[i].hits) {
			char text[256];

			run_snapshot_rule_format(&v[i].r, text, sizeof(text));
			warn_no_match(p, opt, text);
		}
}

/* Works out and writes the argspec file, then says what it must. */
static void plan_run(struct plan *p, const struct options *o, const char *dir)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, FXT_ARGSPEC_FILE);
	p->out = fopen(path, "we");
	if (!p->out)
		die(EXIT_USAGE, "cannot write %s: %s", path, strerror(errno));
	if (fxt_sym_functions(p->sym, on_function, p) < 0)
		die(EXIT_USAGE, "out of memory");
	if (fclose(p->out) != 0)
		die(EXIT_USAGE, "cannot write %s: %s", path, strerror(errno));
	if (o->quiet)
		return;
	for (size_t i = 0; i < p->n; i++)
		if (!p->v[i].hits)
			warn_no_match(p, p->v[i].ret ? "--retval" : "--args", p->v[i].text);
	warn_unmatched(p, "--snapshot-if", p->tests, p->ntests);
	warn_unmatched(p, "--include", p->incl, p->nincl);
	warn_names("--include: ", &p->incl_untestable,
		   ": the argument is no integer or pointer in a register (nor one it has): "
		   "their calls are not recorded");
	warn_names("--include names ", &p->incl_unpatched,
		   " that --patch does not: their argument is not tested, their calls are not "
		   "recorded");
	warn_names("--snapshot-if: ", &p->untestable,
		   ": the value is no integer or pointer in a register (nor an argument it "
		   "has): not tested");
	warn_names("--args/--retval: no DWARF for ", &p->nodwarf,
		   ": arguments not recorded, return values as rax holds them (build with -g, "
		   "install its -dbgsym package, or name the registers: --args "
		   "'NAME@arg1,arg2/s')");
	warn_names("--args/--retval name ", &p->unpatched,
		   " that --patch does not, in a module not built with -finstrument-functions: "
		   "nothing is recorded of them");
}

/* --snapshot-if's rules on a value, with their index among all. */
static void value_rules(struct plan *p, const struct options *o)
{
	const char *l = o->set.given[FXT_S_SNAPSHOT_IF] ? o->set.v[FXT_S_SNAPSHOT_IF].s : NULL;

	for (unsigned i = 0; l && *l && i < FXT_MAX_SNAPSHOT_RULES; i++) {
		size_t len = strcspn(l, "\n");
		struct value_rule *t = &p->tests[p->ntests];

		if (run_snapshot_rule_parse(l, len, &t->r) == 0 && t->r.value_of) {
			t->index = i;
			t->hits = 0;
			p->ntests++;
		}
		l += len;
		if (*l == '\n')
			l++;
	}
}

/* --include's patterns with a test of an argument, with their index
 * among its patterns (the agent's, agent/keep/filter.c). */
static void include_tests(struct plan *p, const struct options *o)
{
	const char *l = o->set.given[FXT_S_INCLUDE] ? o->set.v[FXT_S_INCLUDE].s : NULL;

	for (unsigned i = 0; l && *l && p->nincl < FXT_MAX_INCLUDE_TESTS; i++) {
		size_t len = strcspn(l, "\n"), pos;
		struct value_rule *t = &p->incl[p->nincl];
		const char *what;

		if (run_include_test_parse(l, len, &t->r, &pos, &what) == 1 &&
		    regcomp(&t->re, t->r.name, REG_EXTENDED | REG_NOSUB) == 0) {
			t->index = i;
			t->hits = 0;
			p->nincl++;
		}
		l += len;
		if (*l == '\n')
			l++;
	}
}

static void plan_init(struct plan *p, const struct options *o)
{
	memset(p, 0, sizeof(*p));
	compile(p, o->set.given[FXT_S_ARGS] ? o->set.v[FXT_S_ARGS].s : NULL, false);
	compile(p, o->set.given[FXT_S_RETVAL] ? o->set.v[FXT_S_RETVAL].s : NULL, true);
	compile_patch(p, o->set.v[FXT_S_PATCH].s);
	value_rules(p, o);
	include_tests(p, o);
	p->modules = o->set.given[FXT_S_PATCH_MODULE] ? o->set.v[FXT_S_PATCH_MODULE].s : NULL;
	p->sym = fxt_sym_new(0);
	if (!p->sym)
		die(EXIT_USAGE, "out of memory");
}

static void plan_free(struct plan *p)
{
	for (size_t i = 0; i < p->n; i++) {
		regfree(&p->v[i].re);
		free(p->v[i].text);
	}
	free(p->v);
	for (size_t i = 0; i < p->npatch; i++)
		regfree(&p->patch[i]);
	free(p->patch);
	free(p->hooked_path);
	/* Kept (and freed at exit with the process). */
	for (size_t i = 0; i < p->nexes && nplanned < FXT_ARGS_CHAIN_MAX; i++)
		planned[nplanned++] = p->exes[i];
	for (size_t i = 0; i < p->nincl; i++)
		regfree(&p->incl[i].re);
	fxt_sym_free(p->sym);
}

bool args_wanted(const struct options *o)
{
	return o->set.given[FXT_S_ARGS] || o->set.given[FXT_S_RETVAL] ||
	       (o->set.given[FXT_S_SNAPSHOT_IF] && strchr(o->set.v[FXT_S_SNAPSHOT_IF].s, '@')) ||
	       (o->set.given[FXT_S_PATCH] && o->set.given[FXT_S_INCLUDE] &&
		strchr(o->set.v[FXT_S_INCLUDE].s, '@'));
}

void args_check_launch(const struct options *o, const char *program)
{
	const char *what = o->set.given[FXT_S_ARGS]	? "--args"
			   : o->set.given[FXT_S_RETVAL] ? "--retval"
							: "--snapshot-if";

	char *chain[FXT_ARGS_CHAIN_MAX];
	size_t n = exec_chain(program, o->argv, chain, FXT_ARGS_CHAIN_MAX);
	bool some = false;

	/* The program, or one its command line runs by exec ("sh -c ./app"). */
	for (size_t i = 0; i < n; i++) {
		some |= instrumented(chain[i]);
		free(chain[i]);
	}
	if (!some)
		die(EXIT_USAGE,
		    "%s: values are read at patched calls, and %s was not built with "
		    "-finstrument-functions: say what to patch with --patch (see --help)",
		    what, program);
}

void args_plan_launch(const struct options *o, const char *program, const char *dir)
{
	struct plan p;
	unsigned k = 0;

	plan_init(&p, o);
	/* By their real names, as the agent knows the module
	 * (/proc/self/exe): `python3`, a link to python3.11, is python3.11
	 * there. */
	p.nexes = exec_chain(program, o->argv, p.exes, FXT_ARGS_CHAIN_MAX);
	if (!p.nexes)
		die(EXIT_USAGE, "--args/--retval: cannot read %s", program);
	/* Each at a place of its own. */
	for (size_t i = 0; i < p.nexes; i++)
		if (fxt_sym_add_module(p.sym, p.exes[i], (uint64_t)i << 44) < 0)
			die(EXIT_USAGE, "--args/--retval: cannot read %s", p.exes[i]);
	for (size_t i = 0; p.modules && i < p.nexes; i++)
		if (!add_loaded_libraries(p.sym, p.exes[i], &k) && !o->quiet)
			fprintf(stderr,
				"fxt-run: warning: --args/--retval: cannot list the libraries "
				"%s loads: only its own functions' arguments are recorded\n",
				p.exes[i]);
	plan_run(&p, o, dir);
	plan_free(&p);
}

void args_plan_attach(const struct options *o, long pid, const char *dir)
{
	struct plan p;
	char path[64], exe[4096], *maps = NULL;
	size_t cap = 0;
	ssize_t n;
	FILE *f;

	plan_init(&p, o);
	snprintf(path, sizeof(path), "/proc/%ld/exe", pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	p.exes[0] = strdup(exe);
	if (!p.exes[0])
		die(EXIT_USAGE, "out of memory");
	p.nexes = 1;
	snprintf(path, sizeof(path), "/proc/%ld/maps", pid);
	f = fopen(path, "re");
	if (!f || getdelim(&maps, &cap, '\0', f) < 0 || fxt_sym_add_maps(p.sym, maps) < 0)
		die(EXIT_USAGE, "--args/--retval: cannot read process %ld's modules", pid);
	fclose(f);
	free(maps);
	plan_run(&p, o, dir);
	plan_free(&p);
}

bool args_unplanned(const char *path)
{
	struct fxt_sym_layout l;
	char *real;
	bool known = false;

	if (!nplanned || fxt_sym_elf_layout(path, &l) != 0 || !l.interp)
		return false; /* nothing planned, or a library */
	real = realpath(path, NULL);
	for (size_t i = 0; i < nplanned; i++)
		known |= strcmp(planned[i], real ? real : path) == 0;
	free(real);
	return !known;
}
