/* Run-time patching, the patcher (see patch.h): which modules (those that
 * walk their own stack, or whose file cannot be read, left alone and
 * said why), which functions, their stubs, the jumps at their entries,
 * and the report.  One job from a module's list of functions to its
 * patched text (and back, at a detach), hence one file past 800 lines; the planner that reads
 * instructions is plan.c, the run time that follows calls is rt.c, and
 * patching while threads run is live.c. */
#include <config.h>

#include <dlfcn.h>
#include <elf.h>
#include <fnmatch.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/elfsyms.h"
#include "agent/feature.h"
#include "agent/log.h"
#include "agent/modules.h"
#include "agent/patch/patch.h"
#include "agent/patterns.h"
#include "agent/patch/plan.h"
#include "agent/patch/tramp.h"
#include "common/hooksym.h"
#include "run/argspec.h"

void agent_patch_activate(void); /* rt.c */

#if defined(__x86_64__)

/* A stub: the function's address (8 bytes, data: the trampoline reads it
 * before its return address); its entry, call *slot(%rip) (6), to the
 * enter trampoline (for a function whose arguments or return value are
 * read, call *slot+16(%rip), to its full way, which the fast path then
 * need not test), which returns past the return address (`ret $8`);
 * call BODY (5), which puts the stub's exit in the return address's
 * slot, the real one being in the shadow stack; the exit, jmp *slot+8(%rip) (6), to the exit
 * trampoline; BODY: the relocated code, jmp back (5).  Rounded up to 16
 * bytes.  No register carries the address (with -fipa-ra, a caller may
 * keep values in any register its callee is known not to use); the
 * trampoline returns where it was called from, and the function returns
 * where BODY was called from, to the stub's exit, then the exit
 * trampoline to where the function was called from: every return is to
 * the address the processor's return stack predicts (one it would move
 * is mispredicted, some 20 cycles).  A call the enter trampoline did not
 * push (no shadow stack) goes from it straight to BODY. */
#define STUB_ENTRY	    PATCH_STUB_ENTRY
#define STUB_HEAD	    PATCH_STUB_HEAD
#define STUB_CALL	    STUB_HEAD
#define STUB_CODE	    (PATCH_STUB_EXIT + 6)
#define STUB_SIZE(code_len) ((STUB_CODE + (code_len) + 5 + 15) & ~(size_t)15)
_Static_assert(STUB_CODE - STUB_HEAD == STUB_BODY_PAST_CALL &&
		   PATCH_STUB_EXIT - STUB_HEAD == STUB_EXIT_PAST_CALL,
	       "agent/patch/tramp.h: the stub");

/* A module to patch: the main program, or a library FXT_PATCH_MODULE
 * names, loaded before main(). */
struct module {
	char path[4096]; /* its file: an absolute path */
	/* The loader's name for it when that is not path (relative to the
	 * folder the process was in: an rpath or LD_LIBRARY_PATH of "."),
	 * else NULL: what it is known by (is_patched(), still_loaded()). */
	char *name;
	const char *why; /* why it cannot be patched at all, else NULL */
	uint64_t bias;
	uint64_t entry; /* the main program's entry point, else 0 */
	/* Its loaded segments: the executable ones are its text; all are
	 * what the planner may read (jump tables). */
	struct patch_region seg[16];
	unsigned nseg;
	bool live; /* loaded by dlopen(): other threads may be running */
};

/* A module patched: the libraries loaded by dlopen() are patched once,
 * and forgotten when they are unloaded. */
struct patched {
	char *path;
	uint64_t bias;
	void *area; /* its stubs */
	size_t area_size;
	struct agent_live_sites *sites; /* what agent_patch_live() wrote */
	bool main;			/* the main program: never unloaded */
};

/* What patching after start-up needs, set by agent_patch_init(). */
static struct {
	pthread_mutex_t lock;
	fxt_patch_plan_fn *plan;
	struct agent_patterns pat;
	struct patched *v;
	size_t n, cap;
} state = { .lock = PTHREAD_MUTEX_INITIALIZER };

static bool is_patched(const char *path, uint64_t bias)
{
	for (size_t i = 0; i < state.n; i++)
		if (state.v[i].bias == bias && strcmp(state.v[i].path, path) == 0)
			return true;
	return false;
}

/* An area of stubs: its slots (the enter trampoline, the exit
 * trampoline, the enter trampoline's full way, 8 bytes each), then its
 * stubs, each on 16 bytes. */
#define AREA_HEAD 32

/* The stubs' areas again, for the sampler, which reads them in a signal
 * handler (agent_patch_stub()): a fixed table, each entry's end written
 * before its start and its start cleared before its end; changed under
 * state.lock (or before main()).  An area that finds no room in it is
 * not known to the sampler (a sample there is walked as code without
 * unwind information). */
#define AREAS_MAX 64
static struct {
	uint64_t lo, hi;
} areas[AREAS_MAX];

static void area_add(void *area, size_t size)
{
	for (size_t i = 0; area && i < AREAS_MAX; i++)
		if (!__atomic_load_n(&areas[i].lo, __ATOMIC_RELAXED)) {
			uint64_t lo = (uint64_t)(uintptr_t)area;
			__atomic_store_n(&areas[i].hi, lo + size, __ATOMIC_RELAXED);
			__atomic_store_n(&areas[i].lo, lo, __ATOMIC_RELEASE);
			return;
		}
}

static void area_remove(void *area)
{
	for (size_t i = 0; area && i < AREAS_MAX; i++)
		if (__atomic_load_n(&areas[i].lo, __ATOMIC_RELAXED) == (uint64_t)(uintptr_t)area) {
			__atomic_store_n(&areas[i].lo, 0, __ATOMIC_RELEASE);
			__atomic_store_n(&areas[i].hi, 0, __ATOMIC_RELEASE);
			return;
		}
}

uint64_t agent_patch_stub(uint64_t pc)
{
	for (size_t i = 0; i < AREAS_MAX; i++) {
		uint64_t lo = __atomic_load_n(&areas[i].lo, __ATOMIC_ACQUIRE);
		uint64_t hi = __atomic_load_n(&areas[i].hi, __ATOMIC_ACQUIRE);
		if (!lo || pc < lo + AREA_HEAD || pc >= hi)
			continue;
		/* The stubs start AREA_HEAD bytes in, each on 16 bytes: its
		 * head is the first one back whose call is of one of the
		 * area's enter slots (lo, lo + 16), which no relocated
		 * instruction calls. */
		for (uint64_t at = pc & ~(uint64_t)15;
		     at >= lo + AREA_HEAD && pc - at < STUB_SIZE(PATCH_CODE_MAX); at -= 16) {
			const uint8_t *p = (const uint8_t *)(uintptr_t)at;
			int32_t rel;
			memcpy(&rel, p + STUB_ENTRY + 2, 4);
			uint64_t to = at + STUB_HEAD + (uint64_t)(int64_t)rel;
			if (p[STUB_ENTRY] == 0xff && p[STUB_ENTRY + 1] == 0x15 &&
			    (to == lo || to == lo + 16))
				return pc >= at + STUB_ENTRY ? at : 0;
		}
		return 0;
	}
	return 0;
}

/* Remembers module m as patched (its stubs in area, its live sites). */
static void remember(const struct module *m, void *area, size_t area_size,
		     struct agent_live_sites *sites)
{
	char *path;

	area_add(area, area_size);

	if (state.n == state.cap) {
		size_t cap = state.cap ? 2 * state.cap : 16;
		struct patched *v = realloc(state.v, cap * sizeof(*v));
		if (!v)
			return; /* patched anyway, but may be patched twice: not worse */
		state.v = v;
		state.cap = cap;
	}
	if (!(path = strdup(m->name ? m->name : m->path)))
		return;
	state.v[state.n++] =
	    (struct patched){ path, m->bias, area, area_size, sites, m->entry != 0 };
}

/* A function the patterns name. */
struct cand {
	uint64_t addr, size;
	char *name;
	struct patch_plan plan;
	uint64_t stub;
	uint64_t caps; /* what to read at its entry and return, its test (args.c) */
};

struct cands {
	struct cand *v;
	size_t n, cap;
	const struct agent_patterns *pat;
	const struct module *m;
	bool own_raise, own_throw; /* it links in the unwinder, C++'s throw */
	bool hooked;		   /* it calls the -finstrument-functions hooks */
	bool unwinds;		   /* it throws or cleans up C++ exceptions */
	const char *walker;	   /* it walks its own stack: why (walker_sign()) */
};

static bool in_exec(const struct module *m, uint64_t addr, uint64_t size)
{
	for (unsigned i = 0; i < m->nseg; i++)
		if (m->seg[i].exec && addr >= m->seg[i].addr &&
		    addr + size <= m->seg[i].addr + m->seg[i].size)
			return true;
	return false;
}

/* Whether a function is the unwinder's own, linked into the module
 * (libgcc's, -static-libgcc): it reads its callers' return addresses, and
 * so is never patched. */
static bool unwinder_function(const char *name, const char *file)
{
	static const char *const prefixes[] = { "_Unwind_", "__register_frame",
						"__deregister_frame", "__frame_state_for",
						"__gcc_personality" };
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0)
			return true;
	return file && strncmp(file, "unwind-", 7) == 0; /* unwind-dw2.c ... */
}

/* What tells a module whose code walks its own stack by return address,
 * as a runtime does to find its frames (HotSpot's frame::sender, the Go
 * runtime's traceback, V8's, a sanitizer's unwinder, a program stepping
 * with libunwind): it would meet the return trampoline where a return
 * address should be, and take it for a frame it cannot explain (HotSpot
 * crashes).  A symbol the module defines or refers to, whole or, ending
 * in '*', its start; the reason the module is left alone.  (The C
 * library's backtrace(), _Unwind_Backtrace and unw_backtrace are the
 * agent's, which put the real return addresses back: no sign.) */
#define WALKS(who) "walks its own stack (" who ")"
static const struct {
	const char *sym, *why;
} walker_signs[] = {
	/* HotSpot's libjvm: its walker, which it exports for profilers. */
	{ "AsyncGetCallTrace", WALKS("HotSpot") },
	{ "_ZN2v88internal*", WALKS("V8") },
	/* runtime.morestack, or since Go 1.17 runtime.morestack.abi0 (its
	 * assembly functions are named with their ABI). */
	{ "runtime.morestack*", WALKS("the Go runtime") },
	/* Built with a sanitizer, or its run-time library. */
	{ "__asan_init", WALKS("a sanitizer's") },
	{ "__hwasan_init", WALKS("a sanitizer's") },
	{ "__msan_init", WALKS("a sanitizer's") },
	{ "__tsan_init", WALKS("a sanitizer's") },
	{ "__ubsan_handle_*", WALKS("a sanitizer's") },
	{ "__sanitizer_print_stack_trace", WALKS("a sanitizer's") },
	/* unw_init_local(), then unw_step(). */
	{ "_ULx86_64_init_local*", WALKS("libunwind") },
	/* The linker defines these only for a module that reads them: the
	 * bounds of its text, which a walker checks return addresses
	 * against (gprof's mcount too). */
	{ "__executable_start", WALKS("it reads the bounds of its text") },
	{ "etext", WALKS("it reads the bounds of its text") },
	{ "_etext", WALKS("it reads the bounds of its text") },
	{ "__etext", WALKS("it reads the bounds of its text") },
};
#undef WALKS

static const char *walker_sign(const char *name)
{
	for (size_t i = 0; i < sizeof(walker_signs) / sizeof(walker_signs[0]); i++) {
		const char *w = walker_signs[i].sym;
		size_t len = strlen(w);
		if (w[len - 1] == '*' ? strncmp(name, w, len - 1) == 0 : strcmp(name, w) == 0)
			return walker_signs[i].why;
	}
	return NULL;
}

/* Whether a symbol's name is `want`, with or without a version (the
 * symbol table names a reference "__cxa_throw@CXXABI_1.3"). */
static bool names(const char *name, const char *want)
{
	size_t n = strlen(want);

	return strncmp(name, want, n) == 0 && (name[n] == '\0' || name[n] == '@');
}

/* A symbol not a function's: what the module refers to, its bounds. */
static void on_other(void *ctx, const char *name)
{
	struct cands *c = ctx;

	if (!c->walker)
		c->walker = walker_sign(name);
	if (fxt__hook_symbol(name))
		c->hooked = true;
	if (names(name, "__gxx_personality_v0") || names(name, "_Unwind_Resume") ||
	    names(name, "__cxa_throw"))
		c->unwinds = true;
}

static void on_symbol(void *ctx, const char *name, uint64_t value, uint64_t size, const char *file)
{
	struct cands *c = ctx;
	uint64_t addr = c->m->bias + value;
	char *dm;
	bool match;

	on_other(ctx, name);
	if (!in_exec(c->m, addr, size ? size : 1))
		return;
	/* An unwinder of its own (-static-libgcc) and C++'s throw too
	 * (-static-libstdc++): its throws never go through the agent's entry
	 * points, which give the unwinder the real return addresses.  With
	 * only the unwinder, libstdc++'s throw comes to the agent's. */
	if (strcmp(name, "_Unwind_RaiseException") == 0)
		c->own_raise = true;
	if (strcmp(name, "__cxa_throw") == 0)
		c->own_throw = true;
	/* Never patched, nor counted: the entry point has no caller to return
	 * to (the kernel jumps to it with argc where a return address would
	 * be); _init and _fini are the loader's, run around everything else. */
	if (addr == c->m->entry || strcmp(name, "_start") == 0 || strcmp(name, "_init") == 0 ||
	    strcmp(name, "_fini") == 0)
		return;
	/* gcc's cold parts (NAME.cold, NAME.cold.N) are symbols of their own,
	 * but the hot part jumps there: no call, no return address. */
	const char *cold = strstr(name, ".cold");
	if (cold && (cold[5] == '\0' || cold[5] == '.'))
		return;
	dm = agent_demangle(name);
	/* Or, in a -finstrument-functions build, named by --args/--retval
	 * (FXT_CAP_HOOKED: patched for its values). */
	uint64_t caps = agent_patch_args_spec(c->m->path, name);
	match = agent_patterns_match(c->pat, dm ? dm : name) || (caps & FXT_CAP_HOOKED);
	if (!match) {
		free(dm);
		return;
	}
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 256;
		struct cand *v = realloc(c->v, cap * sizeof(*v));
		if (!v) {
			free(dm);
			return;
		}
		c->v = v;
		c->cap = cap;
	}
	c->v[c->n++] = (struct cand){
		.addr = addr,
		.size = size,
		.name = dm ? dm : strdup(name),
		.caps = caps,
		.plan.why =
		    unwinder_function(name, file) ? "the unwinder's own (-static-libgcc)" : NULL,
	};
}

static int by_addr(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

struct modules {
	struct module v[64];
	unsigned n;
	bool first;
	bool live;	/* other threads may run: patch as live.c does */
	bool libs_only; /* after dlopen(): the libraries not patched yet */
};

/* The file mapped at addr, by /proc/self/maps, into buf: the real path of
 * a library the loader found by a relative one, which the process's
 * folder may no longer resolve.  NULL, or why not. */
static const char *mapped_file(uint64_t addr, char *buf, size_t size)
{
	FILE *f = fopen("/proc/self/maps", "re");
	const char *why = "it is not in /proc/self/maps";
	char *line = NULL;
	size_t cap = 0;

	if (!f)
		return "/proc/self/maps cannot be read, which says where its file is";
	while (getline(&line, &cap, f) > 0) {
		unsigned long lo, hi;
		int at = 0;

		if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %n", &lo, &hi, &at) < 2 || !at ||
		    addr < lo || addr >= hi)
			continue;
		line[strcspn(line, "\n")] = '\0';
		size_t len = strlen(line + at);
		if (line[at] != '/')
			why = "no file is mapped where it was loaded";
		else if (len > 10 && strcmp(line + at + len - 10, " (deleted)") == 0)
			why = "its file was deleted or replaced after it was loaded";
		else if (len >= size)
			why = "the path of its file is too long";
		else {
			memcpy(buf, line + at, len + 1);
			why = NULL;
		}
		break;
	}
	free(line);
	fclose(f);
	return why;
}

static int collect(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct modules *ms = arg;
	bool first = ms->first;
	struct module *m;

	(void)size;
	ms->first = false;
	if (ms->n == sizeof(ms->v) / sizeof(ms->v[0]))
		return 1;
	m = &ms->v[ms->n];
	memset(m, 0, sizeof(*m));
	if (first) {
		if (ms->libs_only || !agent_exe_path()[0])
			return 0;
		snprintf(m->path, sizeof(m->path), "%s", agent_exe_path());
		m->entry = getauxval(AT_ENTRY);
	} else {
		if (!info->dlpi_name || !info->dlpi_name[0] ||
		    !agent_module_patched(info->dlpi_name) ||
		    is_patched(info->dlpi_name, info->dlpi_addr))
			return 0;
		snprintf(m->path, sizeof(m->path), "%s", info->dlpi_name);
		if (info->dlpi_name[0] != '/' && !(m->name = strdup(info->dlpi_name)))
			return 0;
	}
	m->bias = info->dlpi_addr;
	m->live = ms->live;
	bool text = false;
	for (unsigned i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & (PF_R | PF_X)) ||
		    m->nseg == sizeof(m->seg) / sizeof(m->seg[0]))
			continue;
		uint64_t lo = info->dlpi_addr + ph->p_vaddr;
		m->seg[m->nseg++] =
		    (struct patch_region){ lo, ph->p_memsz, (const uint8_t *)(uintptr_t)lo,
					   !!(ph->p_flags & PF_X) };
		text |= (ph->p_flags & PF_X) != 0;
	}
	if (m->name && m->nseg)
		m->why = mapped_file(m->seg[0].addr, m->path, sizeof(m->path));
	if (text)
		ms->n++;
	else {
		free(m->name);
		m->name = NULL;
	}
	return 0;
}

/* Pages for `size` bytes of stubs within reach (rel32) of [lo, hi):
 * tried above hi, then below lo, a megabyte at a time.  Read-write. */
static void *near_pages(uint64_t lo, uint64_t hi, size_t size)
{
	const uint64_t step = 1u << 20, reach = (1u << 31) - (1u << 24);
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);

	for (uint64_t d = step; d < reach - (hi - lo) - size; d += step) {
		uint64_t at[2] = { ((hi + d) & ~(page - 1)),
				   lo > d + size ? ((lo - d - size) & ~(page - 1)) : 0 };
		for (int k = 0; k < 2; k++) {
			if (!at[k])
				continue;
			void *p = mmap((void *)(uintptr_t)at[k], size, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
			if (p == MAP_FAILED)
				continue;
			if ((uint64_t)(uintptr_t)p == at[k])
				return p;
			munmap(p, size); /* an old kernel that took the hint as a hint */
		}
	}
	return NULL;
}

static void put32(uint8_t *p, int64_t v)
{
	int32_t x = (int32_t)v;
	memcpy(p, &x, 4);
}

/* Writes the stub of c at its address (in the writable mapping at `w`,
 * whose executable address is `x`), the enter slot at `slot`. */
static void write_stub(const struct cand *c, uint8_t *w, uint64_t x, uint64_t slot)
{
	uint64_t at = c->stub - STUB_ENTRY;
	uint8_t *p = w + (at - x);
	uint64_t fn = c->addr;
	uint64_t back = c->addr + c->plan.keep + c->plan.len;

	if (c->caps) {
		/* run/argspec.h's bits, the test's index */
		uint64_t spec = c->caps & ~(uint64_t)FXT_CAP_HOOKED;

		memcpy(p - PATCH_STUB_SPEC, &spec, 8);
		memset(p - PATCH_STUB_SPEC + 8, 0,
		       8); /* never a stub's call (agent_patch_stub()) */
		fn |= PATCH_FN_ARGS;
	}
	memcpy(p, &fn, 8);
	p[8] = 0xff; /* call *slot(%rip), or *slot+16(%rip): the full way */
	p[9] = 0x15;
	put32(p + 10, (int64_t)(slot + (c->caps ? 16 : 0) - (at + STUB_HEAD)));
	p[STUB_CALL] = 0xe8; /* call BODY */
	put32(p + STUB_CALL + 1, STUB_CODE - PATCH_STUB_EXIT);
	p[PATCH_STUB_EXIT] = 0xff; /* jmp *slot+8(%rip) */
	p[PATCH_STUB_EXIT + 1] = 0x25;
	put32(p + PATCH_STUB_EXIT + 2, (int64_t)(slot + 8 - (at + STUB_CODE)));
	memcpy(p + STUB_CODE, c->plan.code, c->plan.code_len);
	uint8_t *j = p + STUB_CODE + c->plan.code_len;
	j[0] = 0xe9;
	put32(j + 1, (int64_t)(back - (at + STUB_CODE + c->plan.code_len + 5)));
}

/* Makes the executable segments writable and not executable, or back. */
static int text_prot(const struct module *m, bool writable)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);

	for (unsigned i = 0; i < m->nseg; i++) {
		if (!m->seg[i].exec)
			continue;
		uint64_t a = m->seg[i].addr & ~(page - 1);
		uint64_t b = (m->seg[i].addr + m->seg[i].size + page - 1) & ~(page - 1);
		if (mprotect((void *)(uintptr_t)a, b - a,
			     writable ? PROT_READ | PROT_WRITE : PROT_READ | PROT_EXEC) != 0)
			return -errno;
	}
	return 0;
}

/* The report (patch.h), when FXT_PATCH_REPORT names a folder: opened
 * once, a section a module. */
static FILE *report_open(bool append)
{
	char path[4096];
	FILE *f;
	int fd;

	if (!agent_cfg.patch_report)
		return NULL;
	agent_fmt(path, sizeof(path), "%s/patch.%ld", agent_cfg.patch_report, (long)getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC), 0644);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		if (fd >= 0)
			close(fd);
		agent_dbg("patch report %s: cannot write", path);
		return NULL;
	}
	return f;
}

static void report(FILE *f, const struct cands *c, const char *exe,
		   const struct agent_elf_from *from)
{
	if (!f)
		return;
	fprintf(f, "exe %s\n", exe);
	if (from->table == AGENT_ELF_EXPORTS)
		fprintf(f, "symbols exports\n");
	else if (from->table == AGENT_ELF_DEBUG_FILE)
		fprintf(f, "symbols debug %s\n", from->debug);
	for (size_t i = 0; i < c->n; i++) {
		if (c->v[i].plan.why)
			fprintf(f, "skipped %s\t%s\n", c->v[i].name, c->v[i].plan.why);
		else
			fprintf(f, "patched %s\n", c->v[i].name);
	}
}

/* Writes the jumps of the functions of c that have a stub, in a running
 * program (live.c); *sites gets what was written. */
static int write_live(const struct cands *c, size_t npatch, struct agent_live_sites **sites)
{
	struct agent_patch_site *v = calloc(npatch, sizeof(*v));
	size_t n = 0;
	int err;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < c->n; i++) {
		const struct cand *f = &c->v[i];
		if (f->plan.why)
			continue;
		v[n].site = f->addr + f->plan.keep;
		v[n].stub = f->stub;
		v[n].len = f->plan.len;
		memcpy(v[n].orig, (const void *)(uintptr_t)v[n].site, f->plan.len);
		n++;
	}
	err = agent_patch_live(v, n, sites);
	free(v);
	return err;
}

/* The functions of c patched in a module that calls the
 * -finstrument-functions hooks: their hooks' records give way to the
 * patched entry's and return's (one slice a call, with its values), from
 * now on.  (Patched while threads run, a call under way then may lose its
 * end or have two slices.) */
static void yield_hooks(const struct cands *c)
{
	uint64_t *fn = malloc(c->n * sizeof(*fn));
	size_t n = 0;

	for (size_t i = 0; fn && i < c->n; i++)
		if (c->v[i].stub)
			fn[n++] = c->v[i].addr;
	if (!fn || agent_filter_yield(fn, n) < 0)
		agent_err("FXT_PATCH: %s: out of memory: the calls of its %zu patched functions "
			  "have two slices each",
			  c->m->path, n);
	free(fn);
}

/* Patches the functions of module m that pat names, and reports them. */
static int patch_module(fxt_patch_plan_fn *plan, const struct agent_patterns *pat,
			const struct module *m, FILE *rep)
{
	struct cands c = { .pat = pat, .m = m };
	const char *exe = m->path;
	uint64_t text_lo = UINT64_MAX, text_hi = 0;
	size_t npatch = 0, nplan = 0, nspec = 0, kept_size = 0;
	struct agent_live_sites *sites = NULL;
	struct agent_elf_from from = { .table = AGENT_ELF_SYMTAB };
	void *kept = NULL;
	int err = 0;

	if (m->why) {
		/* Known as patched, said once. */
		remember(m, NULL, 0, NULL);
		if (rep)
			fprintf(rep, "exe %s\nunpatched %s\n", exe, m->why);
		agent_dbg("FXT_PATCH: %s not patched: %s", exe, m->why);
		return 0;
	}

	for (unsigned i = 0; i < m->nseg; i++) {
		if (!m->seg[i].exec)
			continue;
		if (m->seg[i].addr < text_lo)
			text_lo = m->seg[i].addr;
		if (m->seg[i].addr + m->seg[i].size > text_hi)
			text_hi = m->seg[i].addr + m->seg[i].size;
	}
	long nsym = agent_elf_all_functions(exe, on_symbol, on_other, &c, &from);
	if (nsym < 0) {
		agent_dbg("FXT_PATCH: cannot read the symbols of %s", exe);
		return (int)nsym;
	}
	qsort(c.v, c.n, sizeof(*c.v), by_addr);
	if (c.own_raise && c.own_throw) {
		for (size_t i = 0; i < c.n; i++)
			c.v[i].plan.why = "it throws with an unwinder of its own (-static-libgcc "
					  "-static-libstdc++)";
		goto done;
	}
	/* Attached, the unwinder was bound before the agent came: a throw
	 * through a patched frame would meet its stub's exit, with no unwind
	 * information, and end in std::terminate. */
	if (c.unwinds && !agent_patch_unwinder_ours()) {
		for (size_t i = 0; i < c.n; i++)
			c.v[i].plan.why = "it unwinds C++ exceptions, and the unwinder was bound "
					  "before the agent came (attached)";
		goto done;
	}
	if (c.walker) {
		for (size_t i = 0; i < c.n; i++)
			c.v[i].plan.why = c.walker;
		goto done;
	}
	/* fxt-run gives FXT_CAP_HOOKED only to functions of a module that
	 * calls the hooks: this one's file has changed since? */
	for (size_t i = 0; !c.hooked && i < c.n; i++)
		if (c.v[i].caps & FXT_CAP_HOOKED)
			c.v[i].plan.why = "not built with -finstrument-functions, and --patch does "
					  "not name it";

	/* Aliases (one address, several names) are patched once; overlapping
	 * symbols are left alone. */
	for (size_t i = 0; i < c.n; i++) {
		struct cand *f = &c.v[i];
		if (i && f->addr == c.v[i - 1].addr) {
			f->plan.why = "an alias of another name, patched under it";
			for (size_t k = i; k-- > 0 && c.v[k].addr == f->addr;)
				if (!c.v[k].caps || !f->caps)
					c.v[k].caps |= f->caps; /* the first one's, patched */
		} else if (i + 1 < c.n && f->addr + f->size > c.v[i + 1].addr &&
			   c.v[i + 1].addr != f->addr)
			f->plan.why = "overlaps another function";
		else if (!f->plan.why)
			nplan++, nspec += f->caps != 0;
	}
	/* Room for the largest stub of each function to plan, so that each
	 * is planned once, where its stub will be; the pages left unused
	 * are given back. */
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	size_t size =
	    (AREA_HEAD + nplan * STUB_SIZE(PATCH_CODE_MAX) + nspec * PATCH_STUB_SPEC + page - 1) &
	    ~(page - 1);
	uint8_t *area = nplan ? near_pages(text_lo, text_hi, size) : NULL;
	if (!area) {
		for (size_t i = 0; i < c.n; i++)
			if (!c.v[i].plan.why)
				c.v[i].plan.why = "no memory within reach for its trampoline";
		goto done;
	}
	uint64_t x = (uint64_t)(uintptr_t)area, slot = x, at = x + AREA_HEAD;
	const struct patch_mem mem = { m->seg, m->nseg };
	uint64_t fnptr = (uint64_t)(uintptr_t)fxt__patch_enter_tramp;
	memcpy(area, &fnptr, 8);
	fnptr = (uint64_t)(uintptr_t)fxt__patch_exit_tramp;
	memcpy(area + 8, &fnptr, 8);
	fnptr = (uint64_t)(uintptr_t)fxt__patch_enter_full;
	memcpy(area + 16, &fnptr, 8);
	for (size_t i = 0; i < c.n; i++) {
		struct cand *f = &c.v[i];
		if (f->plan.why)
			continue;
		if (f->caps)
			at += PATCH_STUB_SPEC; /* what to read, before the stub */
		if (plan((const uint8_t *)(uintptr_t)f->addr, f->size, f->addr, at + STUB_CODE,
			 &mem, &f->plan) < 0) {
			err = -EINVAL;
			goto out;
		}
		if (f->plan.why) {
			if (f->caps)
				at -= PATCH_STUB_SPEC;
			continue;
		}
		f->stub = at + STUB_ENTRY;
		write_stub(f, area, x, slot);
		at += STUB_SIZE(f->plan.code_len);
		npatch++;
	}
	size_t used = (size_t)((at - x + page - 1) & ~(page - 1));
	if (used < size)
		munmap(area + used, size - used);
	if (mprotect(area, used, PROT_READ | PROT_EXEC) != 0) {
		err = -errno;
		goto out;
	}
	kept = area;
	kept_size = used;
	if (npatch && m->live) {
		agent_patch_activate();
		if ((err = write_live(&c, npatch, &sites)) < 0) {
			/* Nothing changed; the stubs stay (a trap may be on
			 * its way to one). */
			agent_dbg("FXT_PATCH: %s: cannot patch it while it runs: %s", exe,
				  strerror(-err));
			for (size_t i = 0; i < c.n; i++)
				if (c.v[i].stub) {
					c.v[i].plan.why =
					    "its text cannot be rewritten while the program runs";
					c.v[i].stub = 0;
				}
			npatch = 0;
			kept = NULL;
			err = 0;
		}
	} else if (npatch) {
		agent_patch_activate();
		if ((err = text_prot(m, true)) < 0)
			goto out;
		for (size_t i = 0; i < c.n; i++) {
			struct cand *f = &c.v[i];
			if (f->plan.why)
				continue;
			uint8_t *p = (uint8_t *)(uintptr_t)(f->addr + f->plan.keep);
			p[0] = 0xe9;
			put32(p + 1, (int64_t)(f->stub - (f->addr + f->plan.keep + 5)));
			memset(p + 5, 0x90, f->plan.len - 5); /* never reached: nops */
		}
		err = text_prot(m, false);
	}
	if (npatch && c.hooked && !err)
		yield_hooks(&c);
done:
	remember(m, kept, kept_size, sites);
	report(rep, &c, exe, &from);
	agent_dbg("FXT_PATCH: patched %zu of %zu functions of %s", npatch, c.n, exe);
out:
	for (size_t i = 0; i < c.n; i++)
		free(c.v[i].name);
	free(c.v);
	return err;
}

/* Patches the modules that dl_iterate_phdr() lists and ms takes: at
 * start-up, the main program and the libraries FXT_PATCH_MODULE names;
 * after dlopen(), those of them not patched yet. */
static int patch_modules(struct modules *ms)
{
	FILE *rep;
	int err = 0;

	dl_iterate_phdr(collect, ms);
	if (!ms->n)
		return 0;
	rep = report_open(ms->libs_only);
	for (unsigned i = 0; i < ms->n; i++) {
		int e = patch_module(state.plan, &state.pat, &ms->v[i], rep);
		if (e < 0 && !err)
			err = e;
		free(ms->v[i].name);
	}
	if (rep)
		fclose(rep);
	return err;
}

int agent_patch_init(bool live)
{
	struct modules *ms;
	void *lib;
	int err;

	if (!agent_cfg.patch && !agent_patch_args_hooked(agent_exe_path()))
		return 0;
	err = agent_patterns_compile(agent_cfg.patch, &state.pat, "FXT_PATCH");
	if (err)
		return err;
	lib = agent_load_sibling("libfxt-patch.so");
	if (!lib)
		return -ENOENT;
	*(void **)&state.plan = dlsym(lib, "fxt_patch_plan");
	if (!state.plan)
		return -ENOENT;
	ms = calloc(1, sizeof(*ms));
	if (!ms)
		return -ENOMEM;
	ms->first = true;
	ms->live = live;
	pthread_mutex_lock(&state.lock);
	err = patch_modules(ms);
	pthread_mutex_unlock(&state.lock);
	free(ms);
	if (!live)
		agent_patch_probe_setup();
	return err;
}

int agent_patch_unpatch(void)
{
	int err = 0;

	pthread_mutex_lock(&state.lock);
	for (size_t i = 0; i < state.n; i++) {
		int e = state.v[i].sites ? agent_patch_unlive(state.v[i].sites) : 0;

		if (e < 0 && !err)
			err = e;
		/* Forgotten, for the next attach window to patch again.  The
		 * stubs stay mapped for good (and known to the sampler): a
		 * thread inside a patched function returns through its stub. */
		agent_patch_live_forget(state.v[i].sites);
		free(state.v[i].path);
	}
	state.n = 0;
	agent_patterns_free(&state.pat);
	agent_patch_args_forget();
	if (!err)
		agent_patch_live_end();
	pthread_mutex_unlock(&state.lock);
	agent_dbg("FXT_PATCH: entries written back%s", err ? " but for some" : "");
	return err;
}

void agent_patch_dlopened(void)
{
	struct modules *ms;

	if (!state.plan || !agent_cfg.patch_modules)
		return;
	ms = calloc(1, sizeof(*ms));
	if (!ms)
		return;
	ms->first = true;
	ms->live = true;
	ms->libs_only = true;
	pthread_mutex_lock(&state.lock);
	if (patch_modules(ms) < 0)
		agent_err("FXT_PATCH: a library loaded by dlopen() was not patched (FXT_DEBUG=1 "
			  "says why)");
	pthread_mutex_unlock(&state.lock);
	free(ms);
}

/* dl_iterate_phdr(): marks the patched modules still loaded. */
static int still_loaded(struct dl_phdr_info *info, size_t size, void *arg)
{
	bool *seen = arg;

	(void)size;
	for (size_t i = 0; i < state.n; i++)
		if (state.v[i].bias == info->dlpi_addr && info->dlpi_name &&
		    strcmp(state.v[i].path, info->dlpi_name) == 0)
			seen[i] = true;
	return 0;
}

void agent_patch_dlclosed(void)
{
	bool *seen;
	size_t k = 0;

	if (!state.plan || !agent_cfg.patch_modules)
		return;
	pthread_mutex_lock(&state.lock);
	seen = calloc(state.n ? state.n : 1, sizeof(*seen));
	if (!seen)
		goto out;
	dl_iterate_phdr(still_loaded, seen);
	for (size_t i = 0; i < state.n; i++) {
		struct patched *p = &state.v[i];
		if (seen[i] || p->main) {
			state.v[k++] = *p;
			continue;
		}
		agent_patch_live_forget(p->sites);
		area_remove(p->area);
		if (p->area)
			munmap(p->area, p->area_size);
		agent_dbg("FXT_PATCH: %s unloaded", p->path);
		free(p->path);
	}
	state.n = k;
	free(seen);
out:
	pthread_mutex_unlock(&state.lock);
}

#else /* !__x86_64__ */

uint64_t agent_patch_stub(uint64_t pc)
{
	(void)pc;
	return 0;
}

void agent_patch_dlopened(void)
{
}

void agent_patch_dlclosed(void)
{
}

int agent_patch_unpatch(void)
{
	return 0;
}

int agent_patch_init(bool live)
{
	(void)live;
	if (agent_cfg.patch)
		agent_err("FXT_PATCH: run-time patching is for x86-64 only");
	return agent_cfg.patch ? -ENOTSUP : 0;
}

#endif

/* ------------------------------------------------------------ feature */

/* Run-time patching (agent/feature.h), when FXT_PATCH is set, or fxt-run
 * --args/--retval name functions of a -finstrument-functions build. */
static bool patch_wanted(void)
{
	return agent_cfg.patch != NULL || agent_patch_args_hooked(agent_exe_path());
}

/* Before main(), while the process has one thread; or attached, while
 * its threads run (patch.h). */
static void patch_start(const struct agent_event *ev)
{
	if (agent_patch_init(ev && ev->start.attached) < 0)
		agent_err("FXT_PATCH: nothing patched (FXT_DEBUG=1 says why)");
}

/* Detach: the entries written back. */
static void patch_stop(const struct agent_event *ev)
{
	(void)ev;
	if (agent_patch_unpatch() < 0)
		agent_err("FXT_PATCH: some entries could not be written back (FXT_DEBUG=1 says "
			  "which)");
}

static void patch_dlopened(const struct agent_event *ev)
{
	(void)ev;
	agent_patch_dlopened();
}

static void patch_dlclosed(const struct agent_event *ev)
{
	(void)ev;
	if (!agent.disabled)
		agent_patch_dlclosed();
}

static void patch_fork_child(const struct agent_event *ev)
{
	(void)ev;
	agent_patch_probe_fork_child();
}

static void patch_thread_unwind(const struct agent_event *ev)
{
	(void)ev;
	agent_patch_thread_unwinds();
}

static void patch_thread_gone(const struct agent_event *ev)
{
	(void)ev;
	agent_patch_thread_end();
}

const struct agent_feature agent_feature_patch = {
	.name = "patch",
	.on = patch_wanted,
	.at = {
		[AGENT_EV_START] = patch_start,
		[AGENT_EV_DLOPENED] = patch_dlopened,
		[AGENT_EV_FORK_CHILD] = patch_fork_child,
		[AGENT_EV_THREAD_UNWIND] = patch_thread_unwind,
		[AGENT_EV_THREAD_GONE] = patch_thread_gone,
		[AGENT_EV_DLCLOSED] = patch_dlclosed,
		[AGENT_EV_STOP] = patch_stop,
	},
};
