/* Binding a running process's GOT slots to the agent's wrappers, and
 * writing them back (agent/got.h).
 *
 * Each module's PT_DYNAMIC gives its relocations (DT_JMPREL, DT_RELA), its
 * symbols and their names; the slot of a JUMP_SLOT or GLOB_DAT relocation
 * is at the load bias plus r_offset.  The loader has made most of those
 * addresses absolute in place; a read-only dynamic section (the vDSO's)
 * keeps them relative to the bias: an address below the module's lowest
 * segment is taken as relative.
 *
 * A slot is written only when it holds what the program would call
 * without us (the default definition, or its own PLT for a lazy binding
 * not done yet): a module bound elsewhere (DT_SYMBOLIC, RTLD_DEEPBIND,
 * an older symbol version) keeps its binding.  A slot on a page that is
 * not writable (RELRO) is written between two mprotect() calls, the page
 * made writable and then given back the protection /proc/self/maps says
 * it had.  A store of a slot is one aligned 8-byte store: a thread calling
 * through it meanwhile gets the old or the new function, both of which
 * call the real one.
 *
 * The table of bound slots (address, old value, wrapper, the module's
 * PT_DYNAMIC to know it is still loaded) grows at START and DLOPENED and is
 * emptied at STOP.  Nothing here is on a hot path.
 */
#include <config.h>

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "agent/got.h"

struct slot {
	void **addr;
	void *old, *wrapper;
	uintptr_t dyn; /* its module's PT_DYNAMIC: the module, to know it is still loaded */
};

static struct {
	pthread_mutex_t lock;
	struct slot *v;
	size_t n, cap;
	bool closed; /* restored: a bind (a dlopen racing the detach) binds nothing */
} got = { PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0, false };

/* ------------------------------------------------------------ protections */

/* The mappings of /proc/self/maps: [lo, hi) and their PROT_* bits. */
struct maps {
	struct map {
		uintptr_t lo, hi;
		int prot;
	} *v;
	size_t n;
};

/* Reads /proc/self/maps (with read(): no stdio, whose calls may be ours).
 * 0 or -errno. */
static int maps_read(struct maps *m)
{
	size_t len = 0, cap = 1 << 16, n = 0;
	char *buf = malloc(cap), *p, *end;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC), err = 0;

	m->v = NULL;
	m->n = 0;
	if (!buf || fd < 0) {
		err = fd < 0 ? -errno : -ENOMEM;
		goto out;
	}
	for (;;) {
		ssize_t r;

		if (len == cap) {
			char *bigger = realloc(buf, cap * 2);

			if (!bigger) {
				err = -ENOMEM;
				goto out;
			}
			buf = bigger;
			cap *= 2;
		}
		r = read(fd, buf + len, cap - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = -errno;
			goto out;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	for (size_t i = 0; i < len; i++)
		n += buf[i] == '\n';
	m->v = malloc((n + 1) * sizeof(*m->v));
	if (!m->v) {
		err = -ENOMEM;
		goto out;
	}
	for (p = buf, end = buf + len; p < end;) {
		char *nl = memchr(p, '\n', (size_t)(end - p)), *q;
		struct map *e = &m->v[m->n];

		if (!nl)
			break;
		e->lo = (uintptr_t)strtoull(p, &q, 16);
		if (*q == '-') {
			e->hi = (uintptr_t)strtoull(q + 1, &q, 16);
			if (q + 4 <= nl && *q == ' ') {
				e->prot = (q[1] == 'r' ? PROT_READ : 0) |
					  (q[2] == 'w' ? PROT_WRITE : 0) |
					  (q[3] == 'x' ? PROT_EXEC : 0);
				m->n++;
			}
		}
		p = nl + 1;
	}
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return err;
}

/* The protection of the page at `a`, or -1 if it is not mapped. */
static int maps_prot(const struct maps *m, uintptr_t a)
{
	for (size_t i = 0; i < m->n; i++)
		if (a >= m->v[i].lo && a < m->v[i].hi)
			return m->v[i].prot;
	return -1;
}

/* The page made writable for a run of stores (slots of a module sit
 * together), and the protection it goes back to. */
struct window {
	const struct maps *maps;
	uintptr_t page; /* 0: none open */
	int prot;
};

static void window_close(struct window *w)
{
	if (w->page)
		mprotect((void *)w->page, (size_t)getpagesize(), w->prot);
	w->page = 0;
}

/* Stores `v` into the slot at `addr`: 0, or -errno (the page could not be
 * made writable, or is not mapped). */
static int store(struct window *w, void **addr, void *v)
{
	uintptr_t page = (uintptr_t)addr & ~((uintptr_t)getpagesize() - 1);

	if (page != w->page) {
		int prot;

		window_close(w);
		prot = maps_prot(w->maps, page);
		if (prot < 0)
			return -EFAULT;
		if (!(prot & PROT_WRITE)) {
			if (mprotect((void *)page, (size_t)getpagesize(), prot | PROT_WRITE) != 0)
				return -errno;
			w->page = page;
			w->prot = prot;
		}
	}
	__atomic_store_n(addr, v, __ATOMIC_RELEASE);
	return 0;
}

/* ------------------------------------------------------------ binding */

struct bind {
	agent_got_want *want;
	void *self; /* the agent's handle: its definitions */
	struct maps maps;
	struct agent_got_count c;
};

/* Never bound: the dynamic linker (whose calls are its own business, and
 * made with its locks held) and the vDSO.  The agent is told by address. */
static bool skipped_module(const char *path)
{
	static const char *const never[] = { "ld-linux*", "ld-*.so*", "linux-vdso*",
					     "linux-gate*" };
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	for (size_t i = 0; i < sizeof(never) / sizeof(never[0]); i++)
		if (fnmatch(never[i], base, 0) == 0)
			return true;
	return false;
}

static bool has_slot(void **addr)
{
	for (size_t i = 0; i < got.n; i++)
		if (got.v[i].addr == addr)
			return true;
	return false;
}

static int remember(void **addr, void *old, void *wrapper, uintptr_t dyn)
{
	if (got.n == got.cap) {
		size_t cap = got.cap ? got.cap * 2 : 256;
		struct slot *v = realloc(got.v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		got.v = v;
		got.cap = cap;
	}
	got.v[got.n++] = (struct slot){ addr, old, wrapper, dyn };
	return 0;
}

/* The agent's own definition of `name`, or NULL. */
static void *own_definition(void *self, const char *name)
{
	void *p = dlsym(self, name);
	Dl_info mine, its;

	if (!p || !dladdr((void *)&got, &mine) || !dladdr(p, &its) ||
	    its.dli_fbase != mine.dli_fbase)
		return NULL;
	return p;
}

/* One module's relocations of one table. */
struct module {
	uintptr_t bias, lo, hi, dyn;
	const ElfW(Sym) *symtab;
	const char *strtab;
	size_t strsz;
};

static void bind_relocs(struct bind *b, struct window *w, const struct module *m,
			const ElfW(Rela) *r, size_t size, size_t ent)
{
#if defined(__x86_64__)
	for (size_t off = 0; ent && off + sizeof(*r) <= size; off += ent) {
		const ElfW(Rela) *rel = (const ElfW(Rela) *)((const char *)r + off);
		unsigned type = (unsigned)ELF64_R_TYPE(rel->r_info);
		size_t sym = ELF64_R_SYM(rel->r_info);
		const char *name;
		void **addr, *cur, *mine, *dflt;
		int err;

		if ((type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) || !sym)
			continue;
		if (m->symtab[sym].st_name >= m->strsz)
			continue;
		name = m->strtab + m->symtab[sym].st_name;
		if (!name[0] || !b->want(name) || !(mine = own_definition(b->self, name)))
			continue;
		addr = (void **)(m->bias + rel->r_offset);
		cur = __atomic_load_n(addr, __ATOMIC_ACQUIRE);
		if (cur == mine || has_slot(addr))
			continue;
		dflt = dlsym(RTLD_DEFAULT, name);
		if (cur != dflt && !((uintptr_t)cur >= m->lo && (uintptr_t)cur < m->hi)) {
			b->c.skipped++;
			continue;
		}
		err = remember(addr, cur, mine, m->dyn);
		if (!err) {
			err = store(w, addr, mine);
			if (err)
				got.n--;
		}
		if (err) {
			if (!b->c.err)
				b->c.err = err;
			continue;
		}
		b->c.slots++;
	}
#else
	(void)b, (void)w, (void)m, (void)r, (void)size, (void)ent;
#endif
}

/* An address of the dynamic section: absolute as the loader left it, or
 * relative to the bias (see the top). */
static uintptr_t dyn_ptr(const struct module *m, ElfW(Addr) p)
{
	return p < m->lo ? m->bias + p : p;
}

static int bind_module(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct bind *b = arg;
	struct module m = { .bias = info->dlpi_addr, .lo = UINTPTR_MAX };
	uintptr_t self = (uintptr_t)&got, jmprel = 0, rela = 0;
	size_t pltrelsz = 0, relasz = 0, relaent = sizeof(ElfW(Rela));
	const ElfW(Dyn) *d = NULL;
	struct window w = { &b->maps, 0, 0 };

	(void)size;
	if (skipped_module(info->dlpi_name))
		return 0;
	for (unsigned i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_DYNAMIC)
			d = (const ElfW(Dyn) *)lo;
		if (ph->p_type != PT_LOAD)
			continue;
		if (self >= lo && self - lo < ph->p_memsz)
			return 0; /* the agent */
		if (lo < m.lo)
			m.lo = lo;
		if (lo + ph->p_memsz > m.hi)
			m.hi = lo + ph->p_memsz;
	}
	if (!d || m.lo == UINTPTR_MAX)
		return 0;
	m.dyn = (uintptr_t)d;
	for (; d->d_tag != DT_NULL; d++) {
		switch (d->d_tag) {
		case DT_SYMTAB:
			m.symtab = (const ElfW(Sym) *)dyn_ptr(&m, d->d_un.d_ptr);
			break;
		case DT_STRTAB:
			m.strtab = (const char *)dyn_ptr(&m, d->d_un.d_ptr);
			break;
		case DT_STRSZ:
			m.strsz = d->d_un.d_val;
			break;
		case DT_JMPREL:
			jmprel = dyn_ptr(&m, d->d_un.d_ptr);
			break;
		case DT_PLTRELSZ:
			pltrelsz = d->d_un.d_val;
			break;
		case DT_PLTREL:
			if (d->d_un.d_val != DT_RELA)
				pltrelsz = 0; /* REL: not on x86-64 */
			break;
		case DT_RELA:
			rela = dyn_ptr(&m, d->d_un.d_ptr);
			break;
		case DT_RELASZ:
			relasz = d->d_un.d_val;
			break;
		case DT_RELAENT:
			relaent = d->d_un.d_val;
			break;
		default:
			break;
		}
	}
	if (!m.symtab || !m.strtab)
		return 0;
	if (jmprel)
		bind_relocs(b, &w, &m, (const ElfW(Rela) *)jmprel, pltrelsz, sizeof(ElfW(Rela)));
	if (rela)
		bind_relocs(b, &w, &m, (const ElfW(Rela) *)rela, relasz, relaent);
	window_close(&w);
	return 0;
}

struct agent_got_count agent_got_bind(agent_got_want *want, bool start)
{
	struct bind b = { .want = want };
	Dl_info self;
	int err;

	if (!dladdr((void *)&got, &self) ||
	    !(b.self = dlopen(self.dli_fname, RTLD_LAZY | RTLD_NOLOAD))) {
		b.c.err = -ENOENT;
		return b.c;
	}
	pthread_mutex_lock(&got.lock);
	if (start)
		got.closed = false;
	err = got.closed ? 0 : maps_read(&b.maps);
	if (err)
		b.c.err = err;
	else if (!got.closed)
		dl_iterate_phdr(bind_module, &b);
	pthread_mutex_unlock(&got.lock);
	free(b.maps.v);
	dlclose(b.self);
	return b.c;
}

/* ------------------------------------------------------------ restoring */

struct restore {
	struct window w;
	struct agent_got_count c;
	unsigned char *done; /* per slot: its module was seen */
};

/* Writes back the slots of one module, inside dl_iterate_phdr(): the
 * loader cannot unload it meanwhile (a module leaves the list, under the
 * lock we hold, before it is unmapped). */
static int restore_module(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct restore *r = arg;
	uintptr_t dyn = 0;

	(void)size;
	for (unsigned i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
	if (!dyn)
		return 0;
	/* Backwards: of two slots at one address (not done: has_slot()),
	 * the first value would be written last. */
	for (size_t i = got.n; i-- > 0;) {
		struct slot *s = &got.v[i];
		int err;

		if (s->dyn != dyn || r->done[i])
			continue;
		r->done[i] = 1;
		if (__atomic_load_n(s->addr, __ATOMIC_ACQUIRE) != s->wrapper) {
			r->c.skipped++;
			continue;
		}
		err = store(&r->w, s->addr, s->old);
		if (err) {
			if (!r->c.err)
				r->c.err = err;
			continue;
		}
		r->c.slots++;
	}
	window_close(&r->w);
	return 0;
}

struct agent_got_count agent_got_restore(void)
{
	struct maps maps = { 0 };
	struct restore r = { .w = { &maps, 0, 0 } };
	int err;

	pthread_mutex_lock(&got.lock);
	got.closed = true;
	if (!got.n)
		goto out;
	err = maps_read(&maps);
	r.done = calloc(got.n, 1);
	if (err || !r.done) {
		/* The slots stay ours (the wrappers pass the calls on). */
		r.c.err = err ? err : -ENOMEM;
		goto out;
	}
	dl_iterate_phdr(restore_module, &r);
	for (size_t i = 0; i < got.n; i++)
		r.c.gone += !r.done[i];
	free(got.v);
	got.v = NULL;
	got.n = got.cap = 0;
out:
	free(r.done);
	free(maps.v);
	pthread_mutex_unlock(&got.lock);
	return r.c;
}
