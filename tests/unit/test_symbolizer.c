/* Unit tests of the symbolizer (symbolizer/symbolizer.h).
 *
 * Fixtures live in tests/progs/symfix/ (built by make check, see
 * tests/progs.mk): a C++ library with namespaces, templates, overloads
 * and a lambda, a stripped copy of it and a copy with separate debuginfo, a
 * C plugin that is dlclose'd before the lookups, and a non-PIE program whose
 * maps are symbolized after it exited.
 */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <link.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolizer/store.h"
#include "symbolizer/symbolizer.h"
#include "tests/lib/tap.h"
#include "tests/progs/symfix/symfix.h"

/* ------------------------------------------------------------ helpers */

static uint64_t fn_addr(void (*fn)(void))
{
	return (uint64_t)(uintptr_t)fn;
}

#define ADDR(fn) fn_addr((void (*)(void))(fn))

static const char *basename_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	size_t len = 0, cap = 4096, n;
	char *buf = malloc(cap);

	if (!f || !buf)
		bail_out("cannot read a file");
	while ((n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
		len += n;
		if (cap - len < 1024) {
			cap *= 2;
			buf = realloc(buf, cap);
			if (!buf)
				bail_out("out of memory");
		}
	}
	buf[len] = '\0';
	fclose(f);
	return buf;
}

/* A loaded fixture library: its file, load bias and handle. */
struct loaded {
	void *handle;
	char path[4096];
	uint64_t bias;
};

static void load(struct loaded *l, const char *file)
{
	struct link_map *lm = NULL;

	snprintf(l->path, sizeof(l->path), "%s/%s", SYMFIX_DIR, file);
	l->handle = dlopen(l->path, RTLD_NOW | RTLD_LOCAL);
	if (!l->handle || dlinfo(l->handle, RTLD_DI_LINKMAP, &lm) != 0 || !lm) {
		diag("dlopen %s: %s", l->path, dlerror());
		bail_out("cannot load a fixture");
	}
	l->bias = (uint64_t)lm->l_addr;
}

static void *must_sym(void *handle, const char *name)
{
	void *p = dlsym(handle, name);

	if (!p)
		bail_out("fixture symbol missing");
	return p;
}

static int first_bias(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	*(uint64_t *)arg = info->dlpi_addr;
	return 1;
}

/* The load bias of the program: dl_iterate_phdr reports it first. */
static uint64_t self_bias(void)
{
	uint64_t bias = 0;

	dl_iterate_phdr(first_bias, &bias);
	return bias;
}

/* ------------------------------------------------------ the test program */

/* Functions of this (PIE) program.  Distinct bodies: no folding.  The
 * whole of local_c_function on one line: which line the entry address gets
 * (declarator, brace, first statement) depends on compiler and -O level. */
static unsigned local_line = __LINE__ + 2;
/* clang-format off */
__attribute__((noinline)) static int local_c_function(int x) { return x * 17 + 3; }
/* clang-format on */

int main(void);
int global_c_function(int x);
__attribute__((noinline)) int global_c_function(int x)
{
	return local_c_function(x) ^ 0x77;
}

static void test_self(void)
{
	struct fxt_sym *s = fxt_sym_new(FXT_SYM_LINES);
	const struct fxt_sym_info *a, *b, *c;
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	exe[n > 0 ? n : 0] = '\0';
	ok(s != NULL, "fxt_sym_new");
	ASSERT_EQ_I64(fxt_sym_add_self(s), 0, "add_self");

	a = fxt_sym_lookup(s, ADDR(local_c_function));
	ASSERT_STR_EQ(a->name, "local_c_function", "static C function of the program");
	ASSERT_STR_EQ(a->module, basename_of(exe), "its module is the program");
	ASSERT_STR_EQ(a->file ? basename_of(a->file) : NULL, "test_symbolizer.c",
		      "its source file");
	ASSERT_EQ_U64(a->line, local_line, "its line");

	b = fxt_sym_lookup(s, ADDR(global_c_function));
	ASSERT_STR_EQ(b->name, "global_c_function", "global C function");
	ASSERT_STR_EQ(fxt_sym_lookup(s, ADDR(main))->name, "main", "main");

	/* The cache: one result per address, one string per name. */
	ok(fxt_sym_lookup(s, ADDR(local_c_function)) == a, "same address, same result pointer");
	c = fxt_sym_lookup(s, ADDR(local_c_function) + 1);
	ok(c != a && c->name == a->name, "another address in the function shares the name");
	ASSERT_EQ_U64(a->start, ADDR(local_c_function), "start of a function: its entry");
	ASSERT_EQ_U64(c->start, ADDR(local_c_function), "start of an address inside it: the entry");

	/* Outside every module. */
	a = fxt_sym_lookup(s, 0x10);
	ASSERT_STR_EQ(a->name, "0x10", "address in no module");
	ASSERT_STR_EQ(a->module, "", "  has no module");
	ASSERT_EQ_U64(a->start, 0x10, "  its start is the address itself");
	ok(a->file == NULL && a->line == 0, "  nor a line");

	/* add_self again, and add_module of the program: nothing new. */
	ASSERT_EQ_I64(fxt_sym_add_self(s), 0, "add_self twice");
	ASSERT_EQ_I64(fxt_sym_add_module(s, exe, self_bias()), 0, "add_module of the program");
	ok(fxt_sym_lookup(s, ADDR(global_c_function)) == b, "  changed nothing");
	fxt_sym_free(s);
}

/* libc through the dynamic loader's view: dladdr names exported symbols. */
static void test_libc(void)
{
	struct fxt_sym *s = fxt_sym_new(0);
	uint64_t addr = (uint64_t)(uintptr_t)dlsym(RTLD_DEFAULT, "div");
	const struct fxt_sym_info *info;
	Dl_info dl;

	fxt_sym_add_self(s);
	info = fxt_sym_lookup(s, addr);
	if (dladdr((void *)(uintptr_t)addr, &dl) == 0)
		bail_out("dladdr");
	ASSERT_STR_EQ(info->name, "div", "libc function");
	ASSERT_STR_EQ(info->module, basename_of(dl.dli_fname), "  in libc");
	fxt_sym_free(s);
}

/* ----------------------------------------------------------- C++ names */

static const char *const cxx_names[FXSYM_COUNT] = {
	[FXSYM_BOX_GET] = "fxsym::inner::Box<int>::get(int) const",
	[FXSYM_BOX_GET_LONG] = "fxsym::inner::Box<long>::get(long) const",
	[FXSYM_OVER_INT] = "fxsym::over(int)",
	[FXSYM_OVER_DOUBLE] = "fxsym::over(double)",
	[FXSYM_OVER_STR] = "fxsym::over(char const*)",
	[FXSYM_TWICE] = "long fxsym::twice<long>(long)",
	[FXSYM_LAMBDA] =
	    "fxsym::with_lambda(int, unsigned long*)::{lambda(int)#1}::operator()(int) const",
	[FXSYM_STATIC] = "hidden_helper(int)",
	[FXSYM_C] = "fxsym_plain_c",
};

/* Whether loc is "[...]/FILE:LINE", LINE > 0 (fxt_sym_info.loc). */
static bool loc_in(const char *loc, const char *file)
{
	const char *colon = loc ? strrchr(loc, ':') : NULL;
	size_t n = strlen(file);

	return colon && colon - loc >= (ptrdiff_t)n && !memcmp(colon - n, file, n) &&
	       (colon - loc == (ptrdiff_t)n || colon[-(ptrdiff_t)n - 1] == '/') &&
	       strtoul(colon + 1, NULL, 10) > 0;
}

/* Whether info's location parts (loc_file, loc_line) say what its text
 * does: "FILE:LINE" or with FXT_SYM_INLINED, FILE loc_file's bytes; none
 * said for FXT_SYM_NO_DEBUG_INFO or no location. */
static bool loc_parts_ok(const struct fxt_sym_info *info)
{
	uint32_t n = info->loc_file & ~FXT_SYM_LOC_INL;
	char text[600];

	if (!info->loc || !strcmp(info->loc, FXT_SYM_NO_DEBUG_INFO))
		return info->loc_file == 0;
	if (!n || n >= 512)
		return false;
	snprintf(text, sizeof(text), "%.*s:%u%s", (int)n, info->loc, (unsigned)info->loc_line,
		 info->loc_file & FXT_SYM_LOC_INL ? FXT_SYM_INLINED : "");
	return strcmp(text, info->loc) == 0;
}

/* Loads one copy of the C++ fixture and symbolizes its addresses. */
static void check_cxx_copy(const char *relpath, unsigned flags, bool has_static, bool has_lines)
{
	const char *file = basename_of(relpath);
	struct loaded l;
	uintptr_t addrs[FXSYM_COUNT];
	struct fxt_sym *s = fxt_sym_new(flags);
	int i;

	load(&l, relpath);
	((fxsym_cxx_addrs_fn *)must_sym(l.handle, "fxsym_cxx_addrs"))(addrs);
	ASSERT_EQ_I64(fxt_sym_add_self(s), 0, "%s: add_self", file);
	for (i = 0; i < FXSYM_COUNT; i++) {
		const struct fxt_sym_info *info = fxt_sym_lookup(s, addrs[i]);
		char want[512];

		if (i == FXSYM_STATIC && !has_static)
			snprintf(want, sizeof(want), "%s+0x%" PRIx64, file,
				 (uint64_t)addrs[i] - l.bias);
		else
			snprintf(want, sizeof(want), "%s", cxx_names[i]);
		ASSERT_STR_EQ(info->name, want, "%s: %s", file, cxx_names[i]);
		ASSERT_STR_EQ(info->module, file, "  module");
		if (has_lines)
			ASSERT_STR_EQ(info->file ? basename_of(info->file) : NULL, "cxx.cc",
				      "  source file");
		else
			ok(info->file == NULL, "  no source file");
		if (flags & FXT_SYM_FUNC_LOC) {
			/* The fixtures with their symbols have their lines. */
			ok(has_static ? loc_in(info->loc, "cxx.cc")
				      : info->loc && !strcmp(info->loc, FXT_SYM_NO_DEBUG_INFO),
			   "  its location: %s", info->loc ? info->loc : "NULL");
			ok(loc_parts_ok(info), "  its location's parts: %" PRIu32 ", %" PRIu32,
			   info->loc_file, info->loc_line);
		} else
			ok(info->loc == NULL, "  no location asked: none");
	}
	fxt_sym_free(s);
	dlclose(l.handle);
}

static void test_cxx(void)
{
	check_cxx_copy(".libs/libsymcxx.so", FXT_SYM_LINES, true, true);
	check_cxx_copy(".libs/libsymcxx.so", 0, true, false);
	/* Each function's location (the line at its entry). */
	check_cxx_copy(".libs/libsymcxx.so", FXT_SYM_FUNC_LOC, true, false);
	/* .dynsym only: exported names survive, the static function becomes
	 * module+0xOFFSET. */
	check_cxx_copy("libsymcxx-stripped.so", FXT_SYM_LINES | FXT_SYM_FUNC_LOC, false, false);
	/* Stripped too, but .gnu_debuglink leads to the symbols and lines. */
	check_cxx_copy("libsymcxx-dbglink.so", FXT_SYM_LINES | FXT_SYM_FUNC_LOC, true, true);
	/* The debug file in the .debug/ subdirectory of the library's. */
	check_cxx_copy("libsymcxx-dbgsub.so", FXT_SYM_LINES, true, true);
	/* A debug file whose CRC32 is not the debuglink's is not used. */
	check_cxx_copy("libsymcxx-badcrc.so", FXT_SYM_LINES, false, false);
}

/* --------------------------------------------------- a dlclose'd plugin */

static int find_path(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	return strcmp(info->dlpi_name, (const char *)arg) == 0;
}

static void test_dlclosed(void)
{
	struct loaded l;
	uintptr_t addrs[FXSYM_PLUG_COUNT];
	struct fxt_sym *s;
	const struct fxt_sym_info *info;

	load(&l, ".libs/libsymplug.so");
	((fxsym_plug_addrs_fn *)must_sym(l.handle, "fxsym_plug_addrs"))(addrs);
	dlclose(l.handle);
	ok(dl_iterate_phdr(find_path, l.path) == 0, "plugin unloaded by dlclose");

	/* Looked up before the plugin is reported, then after. */
	s = fxt_sym_new(0);
	ASSERT_EQ_I64(fxt_sym_add_self(s), 0, "add_self");
	info = fxt_sym_lookup(s, addrs[FXSYM_PLUG_ENTRY]);
	ok(strcmp(info->module, "libsymplug.so") != 0, "before add_module: not the plugin (%s)",
	   info->name);
	ASSERT_EQ_I64(fxt_sym_add_module(s, l.path, l.bias), 0, "add_module after dlclose");
	ASSERT_EQ_I64(fxt_sym_add_module(s, l.path, l.bias), 0, "  again: no-op");
	info = fxt_sym_lookup(s, addrs[FXSYM_PLUG_ENTRY]);
	ASSERT_STR_EQ(info->name, "fxsym_plug_entry", "  then the new module names it");
	fxt_sym_free(s);

	s = fxt_sym_new(0);
	ASSERT_EQ_I64(fxt_sym_add_module(s, l.path, l.bias), 0, "add_module first");
	ASSERT_EQ_I64(fxt_sym_add_self(s), 0, "  then add_self");
	info = fxt_sym_lookup(s, addrs[FXSYM_PLUG_ENTRY]);
	ASSERT_STR_EQ(info->name, "fxsym_plug_entry", "dlclose'd plugin: exported function");
	ASSERT_STR_EQ(info->module, "libsymplug.so", "  module");
	ASSERT_STR_EQ(fxt_sym_lookup(s, addrs[FXSYM_PLUG_STATIC])->name, "plug_static",
		      "dlclose'd plugin: static function");
	ASSERT_STR_EQ(fxt_sym_lookup(s, addrs[FXSYM_PLUG_VER1])->name, "fxsym_plug_ver",
		      "versioned symbol (fxsym_plug_ver@VERS_1): no version");
	ASSERT_STR_EQ(fxt_sym_lookup(s, addrs[FXSYM_PLUG_VER2])->name, "fxsym_plug_ver",
		      "default version (fxsym_plug_ver@@VERS_2): no version");
	fxt_sym_free(s);
}

/* ------------------------------------------------------ saved maps texts */

static void test_maps_self(void)
{
	char *maps = read_file("/proc/self/maps");
	struct fxt_sym *s = fxt_sym_new(FXT_SYM_LINES);
	const struct fxt_sym_info *info;

	ASSERT_EQ_I64(fxt_sym_add_maps(s, maps), 0, "add_maps of /proc/self/maps");
	info = fxt_sym_lookup(s, ADDR(local_c_function));
	ASSERT_STR_EQ(info->name, "local_c_function", "maps: PIE program function");
	ASSERT_EQ_U64(info->line, local_line, "  its line");
	ASSERT_STR_EQ(fxt_sym_lookup(s, (uint64_t)(uintptr_t)dlsym(RTLD_DEFAULT, "div"))->name,
		      "div", "maps: shared library function");
	/* add_self after add_maps: the same modules, nothing to add. */
	ASSERT_EQ_I64(fxt_sym_add_self(s), 0, "add_self after add_maps");
	fxt_sym_free(s);
	free(maps);
}

/* `maps` with every inode number replaced by `inode`, as overlayfs shows
 * numbers that stat(2) does not give, and as a replaced file would. */
static char *maps_with_inode(const char *maps, unsigned inode)
{
	char *out = malloc(strlen(maps) * 2 + 64), *o = out;
	const char *p = maps;

	if (!out)
		bail_out("out of memory");
	while (*p) {
		const char *eol = strchr(p, '\n');
		int field = 0;

		if (!eol)
			eol = p + strlen(p);
		/* Fields: range perms offset dev inode path. */
		while (p < eol && field < 4) {
			while (p < eol && *p != ' ')
				*o++ = *p++;
			while (p < eol && *p == ' ')
				*o++ = *p++;
			field++;
		}
		while (p < eol && *p >= '0' && *p <= '9')
			p++;
		o += sprintf(o, "%u", inode);
		while (p < eol)
			*o++ = *p++;
		if (*p)
			*o++ = *p++;
	}
	*o = '\0';
	return out;
}

/* The non-PIE child prints "fn ADDR NAME" lines, then "maps" and its maps. */
static void test_maps_nopie(void)
{
	FILE *p = popen(SYMFIX_DIR "/nopie", "r");
	char line[1024], *maps = NULL;
	uint64_t addrs[2];
	char names[2][64];
	int nfn = 0, i;
	size_t len = 0;
	struct fxt_sym *s, *s2;
	char *other, *pos, want[64];
	uint64_t start, offset;

	if (!p)
		bail_out("cannot run tests/progs/symfix/nopie");
	while (fgets(line, sizeof(line), p) && strcmp(line, "maps\n") != 0)
		if (nfn < 2 && sscanf(line, "fn %" SCNx64 " %63s", &addrs[nfn], names[nfn]) == 2)
			nfn++;
	while (fgets(line, sizeof(line), p)) {
		size_t n = strlen(line);

		maps = realloc(maps, len + n + 1);
		if (!maps)
			bail_out("out of memory");
		memcpy(maps + len, line, n + 1);
		len += n;
	}
	ASSERT_EQ_I64(pclose(p), 0, "nopie child ran");
	ASSERT_EQ_I64(nfn, 2, "  and printed its functions");
	if (nfn != 2 || !maps)
		bail_out("no output from tests/progs/symfix/nopie");

	s = fxt_sym_new(0);
	s2 = fxt_sym_new(0); /* two at once: no shared state */
	ASSERT_EQ_I64(fxt_sym_add_maps(s, maps), 0, "add_maps of a gone process");
	ASSERT_EQ_I64(fxt_sym_add_module(s2, SYMFIX_DIR "/nopie", 0), 0, "add_module non-PIE");
	for (i = 0; i < 2; i++) {
		ASSERT_STR_EQ(fxt_sym_lookup(s, addrs[i])->name, names[i], "non-PIE via maps: %s",
			      names[i]);
		ASSERT_STR_EQ(fxt_sym_lookup(s, addrs[i])->module, "nopie", "  module");
		ASSERT_STR_EQ(fxt_sym_lookup(s2, addrs[i])->name, names[i],
			      "non-PIE via add_module: %s", names[i]);
	}
	fxt_sym_free(s2);
	fxt_sym_free(s);

	/* Other inode numbers, same file: trusted, its layout fits (overlayfs). */
	other = maps_with_inode(maps, 1);
	s = fxt_sym_new(0);
	ASSERT_EQ_I64(fxt_sym_add_maps(s, other), 0, "add_maps, other inode numbers");
	ASSERT_STR_EQ(fxt_sym_lookup(s, addrs[0])->name, names[0], "  the layout fits: named");
	fxt_sym_free(s);
	free(other);

	/* The program "replaced" by another ELF file (this test program,
	 * under a name as long as the child's): another layout.  (Small
	 * programs and libraries often share one.) */
	if (sscanf(maps, "%" SCNx64 "-%*x %*s %" SCNx64, &start, &offset) != 2)
		bail_out("cannot parse the child's maps");
	while ((pos = strstr(maps, SYMFIX_DIR "/nopie")) != NULL)
		memcpy(pos, SYMFIX_DIR "/other", strlen(SYMFIX_DIR "/other"));
	other = maps_with_inode(maps, 1);
	unlink(SYMFIX_DIR "/other");
	if (symlink("../../unit/test_symbolizer", SYMFIX_DIR "/other") < 0)
		bail_out("symlink");
	s = fxt_sym_new(0);
	ASSERT_EQ_I64(fxt_sym_add_maps(s, other), 0, "add_maps, replaced file");
	snprintf(want, sizeof(want), "other+0x%" PRIx64, addrs[0] - (start - offset));
	ASSERT_STR_EQ(fxt_sym_lookup(s, addrs[0])->name, want, "  named by file offset");
	fxt_sym_free(s);
	unlink(SYMFIX_DIR "/other");
	free(other);
	free(maps);
}

/* Files that are gone, and the vDSO, still name their addresses. */
static void test_maps_gone(void)
{
	static const char text[] =
	    "7f0000000000-7f0000001000 r--p 00000000 fe:01 4242   /nonexistent/libgone.so\n"
	    "7f0000001000-7f0000003000 r-xp 00001000 fe:01 4242   /nonexistent/libgone.so\n"
	    "7f0000003000-7f0000004000 rw-p 00000000 00:00 0 \n"
	    "7f0000010000-7f0000012000 r-xp 00000000 fe:01 77 /tmp/x.so (deleted)\n"
	    "7ffd00000000-7ffd00002000 r-xp 00000000 00:00 0                  [vdso]\n"
	    "7ffd00100000-7ffd00101000 rw-p 00000000 00:00 0                  [stack]\n";
	struct fxt_sym *s = fxt_sym_new(FXT_SYM_LINES);
	const struct fxt_sym_info *info;

	ASSERT_EQ_I64(fxt_sym_add_maps(s, text), 0, "add_maps with missing files");
	info = fxt_sym_lookup(s, 0x7f0000001234);
	ASSERT_STR_EQ(info->name, "libgone.so+0x1234", "missing file: name by file offset");
	ASSERT_STR_EQ(info->module, "libgone.so", "  module");
	ok(info->file == NULL && info->line == 0, "  no line");
	ASSERT_STR_EQ(fxt_sym_lookup(s, 0x7f0000010010)->name, "x.so+0x10", "deleted file");
	ASSERT_STR_EQ(fxt_sym_lookup(s, 0x7ffd00000040)->name, "[vdso]+0x40", "vdso");
	ASSERT_STR_EQ(fxt_sym_lookup(s, 0x7ffd00100000)->name, "0x7ffd00100000",
		      "data mappings are no modules");
	fxt_sym_free(s);
}

/* Adding a module forgets the cached results in its range, and only those. */
static void test_cache_drop(void)
{
	enum { N = 6000 };
	static const struct fxt_sym_info *before[N];
	const uint64_t base = 0x500000000000, lo = base + 1000 * 16, hi = base + 3000 * 16;
	struct fxt_sym *s = fxt_sym_new(0);
	char text[128], want[64];
	int i, stale = 0, moved = 0, kept = 0;

	for (i = 0; i < N; i++)
		before[i] = fxt_sym_lookup(s, base + (uint64_t)i * 16);
	snprintf(text, sizeof(text), "%" PRIx64 "-%" PRIx64 " r-xp 00000000 00:00 0 [vdso]\n", lo,
		 hi);
	ASSERT_EQ_I64(fxt_sym_add_maps(s, text), 0, "a module over cached addresses");
	for (i = 0; i < N; i++) {
		uint64_t addr = base + (uint64_t)i * 16;
		const struct fxt_sym_info *now = fxt_sym_lookup(s, addr);

		if (addr >= lo && addr < hi) {
			snprintf(want, sizeof(want), "[vdso]+0x%" PRIx64, addr - lo);
			moved += strcmp(now->name, want) == 0;
			stale += now == before[i];
		} else {
			kept += now == before[i];
		}
	}
	ASSERT_EQ_I64(moved, 2000, "addresses in the module: named by it");
	ASSERT_EQ_I64(stale, 0, "  none stale");
	ASSERT_EQ_I64(kept, N - 2000, "others: the same cached results");
	fxt_sym_free(s);
}

/* The storage underneath (symbolizer/store.h), directly. */
static void test_store(void)
{
	struct arena a = { 0 };
	struct strset set = { 0 };
	char name[32], *big;
	const char *first[600];
	int i, same = 0, aligned = 0;
	void *p;

	for (i = 0; i < 600; i++) {
		snprintf(name, sizeof(name), "fn_%d", i);
		first[i] = fxt_sym__intern(&set, &a, name, strlen(name));
	}
	for (i = 0; i < 600; i++) {
		snprintf(name, sizeof(name), "fn_%d@VERS", i);
		same += fxt_sym__intern(&set, &a, name, strlen(name) - 5) == first[i];
	}
	ASSERT_EQ_I64(same, 600, "intern: equal strings, one pointer (past two rehashes)");
	ASSERT_STR_EQ(first[599], "fn_599", "  the copy is terminated");
	ok(fxt_sym__intern(&set, &a, "fn_5", 3) != first[5], "  a prefix is another string");
	for (i = 0; i < 100; i++) {
		p = fxt_sym__arena_alloc(&a, (size_t)i % 7 + 1, 1);
		p = fxt_sym__arena_alloc(&a, 24, 8);
		aligned += p && (uintptr_t)p % 8 == 0;
	}
	ASSERT_EQ_I64(aligned, 100, "arena: alignment kept among odd sizes");
	big = fxt_sym__arena_alloc(&a, 100000, 1);
	p = fxt_sym__arena_alloc(&a, 8, 8);
	ok(big && p && ((char *)p < big || (char *)p >= big + 100000),
	   "arena: a large block apart");
	if (big)
		memset(big, 'x', 100000); /* ASan checks the bounds */
	free(set.slots);
	fxt_sym__arena_free(&a);
}

/* ------------------------------------------------------------- errors */

static void test_errors(void)
{
	struct fxt_sym *s = fxt_sym_new(0);
	struct loaded l;
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	const struct fxt_sym_info *info;

	exe[n > 0 ? n : 0] = '\0';
	ASSERT_EQ_I64(fxt_sym_add_module(s, "/nonexistent/lib.so", 0x1000), -ENOENT,
		      "add_module: missing file");
	ASSERT_EQ_I64(fxt_sym_add_module(s, SYMFIX_DIR "/../../../config.status", 0x1000), -ENOEXEC,
		      "add_module: not ELF");
	ASSERT_EQ_I64(fxt_sym_add_module(s, "", 0), -EINVAL, "add_module: empty path");
	ASSERT_EQ_I64(fxt_sym_add_maps(s, "not a maps line\n"), -EINVAL, "add_maps: garbage");
	ASSERT_EQ_I64(fxt_sym_add_maps(s, "1000-2000 r-xp 00000000 fe:01 5 /x\nbad\n"), -EINVAL,
		      "add_maps: one bad line refuses all");
	ASSERT_STR_EQ(fxt_sym_lookup(s, 0x1000)->name, "0x1000", "  and reported nothing");
	ASSERT_EQ_I64(fxt_sym_add_maps(s, ""), 0, "add_maps: empty text");

	/* The plugin at the program's load address overlaps it. */
	load(&l, ".libs/libsymplug.so");
	ASSERT_EQ_I64(fxt_sym_add_self(s), 0, "add_self");
	info = fxt_sym_lookup(s, ADDR(local_c_function));
	ASSERT_EQ_I64(fxt_sym_add_module(s, l.path, ADDR(local_c_function) & ~0xfffull), -EEXIST,
		      "add_module over another module");
	ASSERT_EQ_I64(fxt_sym_add_module(s, l.path, l.bias), 0, "add_module of a loaded library");
	ok(fxt_sym_lookup(s, ADDR(local_c_function)) == info, "  first module kept");
	dlclose(l.handle);
	fxt_sym_free(s);
	fxt_sym_free(NULL);
}

int main(void)
{
	test_self();
	test_libc();
	test_cxx();
	test_dlclosed();
	test_maps_self();
	test_maps_nopie();
	test_maps_gone();
	test_cache_drop();
	test_store();
	test_errors();
	done_testing();
	return exit_status();
}
