/* Unit tests of function signatures from DWARF (symbolizer/signature.h).
 *
 * Fixtures in tests/progs/sigfix/ (tests/progs.mk): a C program built at
 * -O0 and at -O2 (the same answers expected from both: -O2's out-of-line
 * copies describe themselves through DW_AT_abstract_origin) and a C++ one.
 * They are loaded into a symbolizer, not run.  Every field of a signature
 * is rendered into one line (render()) and compared whole.  The symbolizer
 * fixtures (tests/progs/symfix/) give a stripped module (no DWARF) and one
 * whose DWARF is in a separate file found through .gnu_debuglink.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "symbolizer/signature.h"
#include "symbolizer/symbolizer.h"
#include "tests/lib/tap.h"

/* ------------------------------------------------------------ helpers */

static const char *const kinds[] = {
	[FXT_VK_INT] = "int",	    [FXT_VK_UINT] = "uint",	  [FXT_VK_BOOL] = "bool",
	[FXT_VK_CHAR] = "char",	    [FXT_VK_ENUM] = "enum",	  [FXT_VK_PTR] = "ptr",
	[FXT_VK_STR] = "str",	    [FXT_VK_FLOAT] = "float",	  [FXT_VK_DOUBLE] = "double",
	[FXT_VK_STRUCT] = "struct", [FXT_VK_UNKNOWN] = "unknown", [FXT_VK_VOID] = "void",
};

static void put(char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void put(char *buf, size_t cap, const char *fmt, ...)
{
	size_t len = strlen(buf);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf + len, cap - len, fmt, ap);
	va_end(ap);
}

static void put_reg(char *buf, size_t cap, enum fxt_vloc loc, unsigned reg, bool ret)
{
	static const char *const gpr[] = { "rdi", "rsi", "rdx", "rcx", "r8", "r9" };
	static const char *const rgpr[] = { "rax", "rdx" };

	if (loc == FXT_LOC_GPR && !ret && reg < 6)
		put(buf, cap, "%s", gpr[reg]);
	else if (loc == FXT_LOC_GPR && ret && reg < 2)
		put(buf, cap, "%s", rgpr[reg]);
	else if (loc == FXT_LOC_XMM && reg < (ret ? 2u : 8u))
		put(buf, cap, "xmm%u", reg);
	else
		put(buf, cap, "?loc%d/%u", (int)loc, reg);
}

/* "name:type:kind/size[s]@where[{enumerators}]" */
static void render_value(char *buf, size_t cap, const struct fxt_value_desc *d, bool ret)
{
	size_t i;

	if (d->name)
		put(buf, cap, "%s:", d->name);
	put(buf, cap, "%s:%s/%u%s@", d->type, d->kind <= FXT_VK_VOID ? kinds[d->kind] : "?",
	    d->size, d->is_signed ? "s" : "");
	switch (d->loc) {
	case FXT_LOC_NONE:
		put(buf, cap, "-");
		break;
	case FXT_LOC_MEMORY:
		put(buf, cap, "mem");
		break;
	default:
		put_reg(buf, cap, d->loc, d->reg, ret);
		if (d->two_regs) {
			put(buf, cap, "+");
			put_reg(buf, cap, d->loc2, d->reg2, ret);
		}
	}
	if (!d->two_regs && (d->reg2 != d->reg || d->loc2 != d->loc))
		put(buf, cap, "!reg2");
	if (d->nenums) {
		put(buf, cap, "{");
		for (i = 0; i < d->nenums; i++)
			put(buf, cap, "%s%s=%" PRId64, i ? "," : "", d->enums[i].name,
			    d->enums[i].value);
		put(buf, cap, "}");
	}
	if (d->kind != FXT_VK_ENUM && (d->nenums || d->enums))
		put(buf, cap, "!enums");
}

/* "function(p1; p2) -> ret [...] [retmem]" */
static void render(char *buf, size_t cap, const struct fxt_signature *sig)
{
	size_t i;

	buf[0] = '\0';
	put(buf, cap, "%s(", sig->function);
	for (i = 0; i < sig->nparams; i++) {
		put(buf, cap, "%s", i ? "; " : "");
		render_value(buf, cap, &sig->params[i], false);
	}
	put(buf, cap, ") -> ");
	if (sig->ret.name)
		put(buf, cap, "!named ");
	render_value(buf, cap, &sig->ret, true);
	if (sig->variadic)
		put(buf, cap, " [...]");
	if (sig->ret_in_memory)
		put(buf, cap, " [retmem]");
}

/* Checks the signature of `fn` (a symbol of module `mod`) against `want`. */
static void check_sig(struct fxt_sym *s, const char *mod, const char *fn, const char *want)
{
	const struct fxt_signature *sig = NULL, *again = NULL;
	char got[2048];
	uint64_t addr = 0;
	int err;

	if (fxt_sym_find(s, mod, fn, &addr) != 0) {
		ok(0, "%s: %s found", mod, fn);
		return;
	}
	err = fxt_sym_signature(s, addr, &sig);
	if (err != 0 || !sig) {
		ok(0, "%s: signature of %s: %d", mod, fn, err);
		return;
	}
	render(got, sizeof(got), sig);
	ASSERT_STR_EQ(got, want, "%s: %s", mod, fn);
	ok(fxt_sym_signature(s, addr, &again) == 0 && again == sig, "  cached");
}

/* ---------------------------------------------------- the C fixtures */

struct expect {
	const char *fn, *sig;
};

static const struct expect c_expect[] = {
	{ "sig_ints", "sig_ints(a:int8_t:int/1s@rdi; b:uint8_t:uint/1@rsi; c:int16_t:int/2s@rdx; "
		      "d:uint16_t:uint/2@rcx; e:int32_t:int/4s@r8; f:uint32_t:uint/4@r9) -> "
		      "int:int/4s@rax" },
	{ "sig_ints64",
	  "sig_ints64(a:int64_t:int/8s@rdi; b:uint64_t:uint/8@rsi; c:_Bool:bool/1@rdx; "
	  "d:char:char/1s@rcx; e:enum color:enum/4s@r8{RED=0,GREEN=5,BLUE=-2}; "
	  "f:enum big:enum/4@r9{BIG_LO=1,BIG_HI=4294967295}) -> long int:int/8s@rax" },
	{ "sig_ptrs",
	  "sig_ptrs(p:void *:ptr/8@rdi; s:const char *:str/8@rsi; t:cstr:str/8@rdx; "
	  "u:unsigned char *:str/8@rcx; pp:int **:ptr/8@r8; bytes:const uint8_t *:ptr/8@r9) -> "
	  "void *:ptr/8@rax" },
	{ "sig_floats",
	  "sig_floats(f:float:float/4@xmm0; d:double:double/8@xmm1) -> double:double/8@xmm0" },
	{ "sig_structs",
	  "sig_structs(p:struct point:struct/8@rdi; dp:struct dpair:struct/16@xmm0+xmm1; "
	  "b:struct big24:struct/24@mem; m:struct mixed:struct/16@rsi+xmm2) -> int:int/4s@rax" },
	{ "sig_interleave",
	  "sig_interleave(a:int:int/4s@rdi; b:double:double/8@xmm0; c:long int:int/8s@rsi; "
	  "d:float:float/4@xmm1; e:char:char/1s@rdx; f:double:double/8@xmm2) -> "
	  "double:double/8@xmm0" },
	{ "sig_seven",
	  "sig_seven(a:long int:int/8s@rdi; b:long int:int/8s@rsi; c:long int:int/8s@rdx; "
	  "d:long int:int/8s@rcx; e:long int:int/8s@r8; f:long int:int/8s@r9; "
	  "g:long int:int/8s@mem) -> long int:int/8s@rax" },
	{ "sig_nine",
	  "sig_nine(a:double:double/8@xmm0; b:double:double/8@xmm1; c:double:double/8@xmm2; "
	  "d:double:double/8@xmm3; e:double:double/8@xmm4; f:double:double/8@xmm5; "
	  "g:double:double/8@xmm6; h:double:double/8@xmm7; i:double:double/8@mem) -> "
	  "double:double/8@xmm0" },
	{ "sig_retmem",
	  "sig_retmem(a:int:int/4s@rsi; b:double:double/8@xmm0) -> struct big24:struct/24@mem "
	  "[retmem]" },
	{ "sig_variadic", "sig_variadic(fmt:const char *:str/8@rdi) -> int:int/4s@rax [...]" },
	{ "sig_i128", "sig_i128(a:int:int/4s@rdi; b:__int128:int/16s@rsi+rdx; "
		      "c:__int128 unsigned:uint/16@rcx+r8) -> __int128:int/16s@rax+rdx" },
	{ "sig_retmixed",
	  "sig_retmixed(l:long int:int/8s@rdi) -> struct mixed:struct/16@rax+xmm0" },
	{ "sig_retdpair",
	  "sig_retdpair(x:double:double/8@xmm0) -> struct dpair:struct/16@xmm0+xmm1" },
	{ "sig_retpoint", "sig_retpoint(x:int:int/4s@rdi) -> struct point:struct/8@rax" },
	{ "sig_ld",
	  "sig_ld(x:long double:unknown/16@mem; a:int:int/4s@rdi) -> long double:unknown/16@-" },
	{ "sig_cplx",
	  "sig_cplx(cf:complex float:unknown/8@xmm0; cd:complex double:unknown/16@xmm1+xmm2) -> "
	  "complex double:unknown/16@xmm0+xmm1" },
	{ "sig_regsout",
	  "sig_regsout(a:long int:int/8s@rdi; b:long int:int/8s@rsi; c:long int:int/8s@rdx; "
	  "d:long int:int/8s@rcx; e:long int:int/8s@r8; p:struct point:struct/8@r9; "
	  "f:long int:int/8s@mem) -> long int:int/8s@rax" },
	{ "sig_regsout2",
	  "sig_regsout2(a:long int:int/8s@rdi; b:long int:int/8s@rsi; c:long int:int/8s@rdx; "
	  "d:long int:int/8s@rcx; e:long int:int/8s@r8; q:struct lpair:struct/16@mem; "
	  "f:long int:int/8s@r9) -> long int:int/8s@rax" },
	{ "sig_aggr", "sig_aggr(u:union num:struct/4@rdi; fp:struct fpair:struct/8@xmm0; "
		      "p:struct pk:struct/5@mem) -> int:int/4s@rax" },
	{ "sig_void", "sig_void() -> void:void/0@-" },
	{ "sig_bits", "sig_bits(b:struct bits:struct/16@rdi+xmm0; w:union wide:struct/8@rsi; "
		      "c:color_t:enum/4s@rdx{RED=0,GREEN=5,BLUE=-2}) -> int:int/4s@rax" },
	{ "sig_f128", "sig_f128(q:_Float128:unknown/16@xmm0; d:double:double/8@xmm1) -> "
		      "_Float128:unknown/16@xmm0" },
	{ "sig_ushort", "sig_ushort(s:short int:int/2s@rdi) -> short unsigned int:uint/2@rax" },
};

static void test_c(const char *file)
{
	struct fxt_sym *s = fxt_sym_new(0);
	char path[4096];
	const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
	size_t i;

	snprintf(path, sizeof(path), "%s/%s", SIGFIX_DIR, file);
	ASSERT_EQ_I64(fxt_sym_add_module(s, path, 0), 0, "add_module %s", file);
	for (i = 0; i < sizeof(c_expect) / sizeof(c_expect[0]); i++)
		check_sig(s, base, c_expect[i].fn, c_expect[i].sig);
	fxt_sym_free(s);
}

/* -------------------------------------------------- the C++ fixture */

static void test_cxx(void)
{
	struct fxt_sym *s = fxt_sym_new(0);

	ASSERT_EQ_I64(fxt_sym_add_module(s, SIGFIX_DIR "/sigcxx", 0), 0, "add_module sigcxx");
	check_sig(
	    s, "sigcxx", "_ZN6sigfix3Acc3addEid",
	    "sigfix::Acc::add(int, double)(this:sigfix::Acc *const:ptr/8@rdi; x:int:int/4s@rsi; "
	    "w:double:double/8@xmm0) -> int:int/4s@rax");
	check_sig(s, "sigcxx", "_ZN6sigfix8by_valueENS_7CountedEi",
		  "sigfix::by_value(sigfix::Counted, int)(c:sigfix::Counted &:ptr/8@rdi; "
		  "k:int:int/4s@rsi) -> int:int/4s@rax");
	check_sig(
	    s, "sigcxx", "_ZN6sigfix12make_countedEi",
	    "sigfix::make_counted(int)(v:int:int/4s@rsi) -> sigfix::Counted:struct/4@mem [retmem]");
	check_sig(s, "sigcxx", "_ZN6sigfix7by_kindENS_5PlainENS_4PolyENS_6HolderEl",
		  "sigfix::by_kind(sigfix::Plain, sigfix::Poly, sigfix::Holder, long)("
		  "p:sigfix::Plain:struct/4@rdi; q:sigfix::Poly &:ptr/8@rsi; h:sigfix::Holder "
		  "&:ptr/8@rdx; "
		  "n:long int:int/8s@rcx) -> long int:int/8s@rax");
	check_sig(
	    s, "sigcxx", "_ZN6sigfix10by_nothingENS_5EmptyEDni",
	    "sigfix::by_nothing(sigfix::Empty, decltype(nullptr), int)(e:sigfix::Empty:struct/1@-; "
	    "n:decltype(nullptr):ptr/8@rdi; x:int:int/4s@rsi) -> int:int/4s@rax");
	check_sig(
	    s, "sigcxx", "_ZN6sigfix6by_refERKNS_3AccEOS0_",
	    "sigfix::by_ref(sigfix::Acc const&, sigfix::Acc&&)(a:const sigfix::Acc &:ptr/8@rdi; "
	    "b:sigfix::Acc &&:ptr/8@rsi) -> long int:int/8s@rax");
	check_sig(s, "sigcxx", "_ZN6sigfix11call_memberEMNS_3AccEFiidEPS0_",
		  "sigfix::call_member(int (sigfix::Acc::*)(int, double), sigfix::Acc*)("
		  "f:int (sigfix::Acc::*)(int, double):struct/16@rdi+rsi; "
		  "a:sigfix::Acc *:ptr/8@rdx) -> int:int/4s@rax");
	fxt_sym_free(s);
}

/* ---------------------------------------- DWARF elsewhere, or nowhere */

static void test_debug_files(void)
{
	struct fxt_sym *s = fxt_sym_new(0);
	const struct fxt_signature *sig = (const void *)1;
	uint64_t addr = 0;

	/* Stripped: .dynsym names the function, nothing describes it. */
	ASSERT_EQ_I64(fxt_sym_add_module(s, SYMFIX_DIR "/libsymcxx-stripped.so", 0x100000), 0,
		      "add_module of a stripped library");
	ASSERT_EQ_I64(fxt_sym_find(s, "libsymcxx-stripped.so", "fxsym_plain_c", &addr), 0,
		      "  its function");
	ASSERT_EQ_I64(fxt_sym_signature(s, addr, &sig), -ENOENT, "  no DWARF: -ENOENT");
	ok(sig == NULL, "  and no signature");
	ASSERT_EQ_I64(fxt_sym_signature(s, addr, &sig), -ENOENT, "  again (cached)");
	ASSERT_EQ_I64(fxt_sym_signature(s, 0x10, &sig), -ENOENT, "an address in no module");
	ASSERT_EQ_I64(fxt_sym_signature(s, addr + 1, &sig), -ENOENT, "not a function's entry");

	/* The DWARF of a separate debug file, through .gnu_debuglink. */
	ASSERT_EQ_I64(fxt_sym_add_module(s, SYMFIX_DIR "/libsymcxx-dbglink.so", 0x40000000), 0,
		      "add_module of a library with a debuglink");
	check_sig(s, "libsymcxx-dbglink.so", "fxsym_plain_c",
		  "fxsym_plain_c(x:int:int/4s@rdi) -> int:int/4s@rax");
	fxt_sym_free(s);
}

/* ------------------------------------------------------- fxt_sig_show */

static void show_is(const struct fxt_value_desc *d, uint64_t lo, uint64_t hi, const char *want,
		    const char *what)
{
	char buf[64];
	struct fxt_shown sh;

	memset(buf, 0x55, sizeof(buf));
	fxt_sig_show(d, lo, hi, buf, sizeof(buf), &sh);
	ok(sh.type == FXT_SHOWN_STR, "%s: text", what);
	if (sh.type == FXT_SHOWN_STR)
		ASSERT_MEM_STR(sh.str, sh.len, want, "  %s", what);
}

static void test_show(void)
{
	static const struct fxt_enumerator colors[] = { { "RED", 0 },
							{ "GREEN", 5 },
							{ "BLUE", -2 } };
	struct fxt_value_desc d = { .name = "x", .type = "int8_t", .kind = FXT_VK_INT, .size = 1 };
	struct fxt_shown sh;
	char buf[64], small[4];
	float f = 1.5f;
	double dbl = -2.25;
	uint32_t fbits;
	uint64_t dbits;

	d.is_signed = true;
	fxt_sig_show(&d, 0xabcdefff, 0, buf, sizeof(buf), &sh);
	ok(sh.type == FXT_SHOWN_I64 && sh.v.i64 == -1, "int8 0xff (upper bits garbage): -1");
	d.size = 2;
	fxt_sig_show(&d, 0x18000, 0, buf, sizeof(buf), &sh);
	ok(sh.type == FXT_SHOWN_I64 && sh.v.i64 == -32768, "int16 0x8000: -32768");
	d.size = 4;
	fxt_sig_show(&d, 0xffffffff00000005ull, 0, buf, sizeof(buf), &sh);
	ok(sh.type == FXT_SHOWN_I64 && sh.v.i64 == 5, "int32 cut to 32 bits");
	d.size = 8;
	fxt_sig_show(&d, (uint64_t)INT64_MIN, 0, buf, sizeof(buf), &sh);
	ok(sh.type == FXT_SHOWN_I64 && sh.v.i64 == INT64_MIN, "int64");
	d.kind = FXT_VK_UINT;
	d.is_signed = false;
	d.size = 1;
	fxt_sig_show(&d, 0x1ff, 0, buf, sizeof(buf), &sh);
	ok(sh.type == FXT_SHOWN_U64 && sh.v.u64 == 255, "uint8 0x1ff: 255");
	d.size = 4;
	fxt_sig_show(&d, 0x1ffffffffull, 0, buf, sizeof(buf), &sh);
	ok(sh.type == FXT_SHOWN_U64 && sh.v.u64 == 0xffffffffu, "uint32");

	/* __int128: 64 bits when it fits, else decimal text. */
	d.kind = FXT_VK_INT;
	d.is_signed = true;
	d.size = 16;
	fxt_sig_show(&d, (uint64_t)-7, ~0ull, buf, sizeof(buf), &sh);
	ok(sh.type == FXT_SHOWN_I64 && sh.v.i64 == -7, "int128 -7: int64");
	show_is(&d, 0, 1, "18446744073709551616", "int128 2^64");
	show_is(&d, 0, ~0ull, "-18446744073709551616", "int128 -2^64");
	d.kind = FXT_VK_UINT;
	d.is_signed = false;
	show_is(&d, ~0ull, ~0ull, "340282366920938463463374607431768211455", "uint128 max");
	fxt_sig_show(&d, 42, 0, buf, sizeof(buf), &sh);
	ok(sh.type == FXT_SHOWN_U64 && sh.v.u64 == 42, "uint128 42: uint64");

	d.kind = FXT_VK_BOOL;
	d.size = 1;
	fxt_sig_show(&d, 0x100, 0, buf, sizeof(buf), &sh);
	ok(sh.type == FXT_SHOWN_BOOL && !sh.v.b, "bool: its low byte (0x100: false)");
	fxt_sig_show(&d, 1, 0, buf, sizeof(buf), &sh);
	ok(sh.type == FXT_SHOWN_BOOL && sh.v.b, "bool 1: true");

	d.kind = FXT_VK_CHAR;
	d.is_signed = true;
	show_is(&d, 0x7761, 0, "'a'", "char 'a'");
	show_is(&d, 1, 0, "'\\x01'", "char 1");
	show_is(&d, 0xff, 0, "'\\xff'", "char 0xff");
	show_is(&d, '\'', 0, "'\\''", "char quote");
	show_is(&d, '\\', 0, "'\\\\'", "char backslash");

	d.kind = FXT_VK_ENUM;
	d.type = "enum color";
	d.size = 4;
	d.enums = colors;
	d.nenums = 3;
	show_is(&d, 0xdead00000005ull, 0, "GREEN", "enum GREEN (upper bits garbage)");
	show_is(&d, 0xfffffffe, 0, "BLUE", "enum BLUE (-2)");
	show_is(&d, 0xfffffff0, 0, "-16", "signed enum without an enumerator: decimal");
	d.is_signed = false;
	show_is(&d, 0xfffffff0, 0, "4294967280", "unsigned enum without an enumerator");
	fxt_sig_show(&d, 0, 0, small, sizeof(small), &sh);
	ok(sh.type == FXT_SHOWN_STR && sh.len == 3 && memcmp(sh.str, "RED", 3) == 0,
	   "enumerator in a small buffer");
	fxt_sig_show(&d, 5, 0, small, sizeof(small), &sh);
	ok(sh.type == FXT_SHOWN_STR && sh.len == 3 && memcmp(sh.str, "GRE", 3) == 0,
	   "enumerator cut to the buffer");
	d.enums = NULL;
	d.nenums = 0;

	d.kind = FXT_VK_PTR;
	d.size = 8;
	fxt_sig_show(&d, 0x7ffd1234, 0, buf, sizeof(buf), &sh);
	ok(sh.type == FXT_SHOWN_PTR && sh.v.ptr == 0x7ffd1234, "pointer");
	d.kind = FXT_VK_STR;
	fxt_sig_show(&d, 0x4000, 0, buf, sizeof(buf), &sh);
	ok(sh.type == FXT_SHOWN_PTR && sh.v.ptr == 0x4000, "string: its address");

	d.kind = FXT_VK_FLOAT;
	d.size = 4;
	memcpy(&fbits, &f, sizeof(fbits));
	fxt_sig_show(&d, 0xdeadbeef00000000ull | fbits, 0, buf, sizeof(buf), &sh);
	ok(sh.type == FXT_SHOWN_DOUBLE && sh.v.d == 1.5, "float 1.5 from its bits");
	d.kind = FXT_VK_DOUBLE;
	d.size = 8;
	memcpy(&dbits, &dbl, sizeof(dbits));
	fxt_sig_show(&d, dbits, 0, buf, sizeof(buf), &sh);
	ok(sh.type == FXT_SHOWN_DOUBLE && sh.v.d == -2.25, "double -2.25 from its bits");

	d.kind = FXT_VK_STRUCT;
	d.type = "struct point";
	show_is(&d, 1, 2, "{...} (8 bytes)", "struct");
	d.kind = FXT_VK_UNKNOWN;
	d.type = "long double";
	d.size = 16;
	show_is(&d, 0, 0, "(long double)", "unknown");
	d.kind = FXT_VK_VOID;
	d.type = "void";
	d.size = 0;
	show_is(&d, 0, 0, "(void)", "void");
	fxt_sig_show(&d, 0, 0, small, 0, &sh);
	ok(sh.type == FXT_SHOWN_STR && sh.len == 0, "no buffer: empty text");
}

int main(void)
{
	test_c("sigc_O0");
	test_c("sigc_O2");
	test_cxx();
	test_debug_files();
	test_show();
	done_testing();
	return exit_status();
}
