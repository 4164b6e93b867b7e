/* The line number program of a unit's line table, run into the rows
 * that may answer for the addresses asked about (linetab.h, struct
 * lt_out): the loop that most of what a table costs is (bench/srcline.sh).
 */
#include "config.h"

#include <dwarf.h>
#include <errno.h>
#include <stdlib.h>

#include "common/grow.h"
#include "symbolizer/linetab.h"

/* The index of the first of n sorted addresses (`stride` bytes apart)
 * above x, searched outwards from `hint`, the last answer: rows and
 * functions come mostly in address order; a whole search missed the cache. */
size_t fxt_sym__lt_above(const uint64_t *v, size_t n, size_t stride, uint64_t x, size_t hint)
{
	const char *base = (const char *)v;
	size_t lo = 0, hi = n, step = 1;

#define AT(i) (*(const uint64_t *)(base + (i)*stride))
	/* Invariant: [0, lo) are at or below x, [hi, n) above. */
	if (hint > n)
		hint = n;
	if (hint == 0 || AT(hint - 1) <= x) {
		if (hint == n || AT(hint) > x)
			return hint; /* the last answer's */
		for (lo = hint; lo + step <= n && AT(lo + step - 1) <= x; step *= 2)
			lo += step;
		if (lo + step <= n)
			hi = lo + step - 1;
	} else {
		for (hi = hint - 1; hi > 0; step *= 2) {
			size_t p = hi > step ? hi - step : 0;

			if (AT(p) <= x) {
				lo = p + 1;
				break;
			}
			hi = p;
		}
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (AT(mid) <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
#undef AT
	return lo;
}

/* Makes next_want the first address of `want` at or above a, the next
 * row's: one step or none when rows come in address order. */
static inline void aim(struct lt_out *o, uint64_t a)
{
	size_t i = o->hint;

	if (!o->want) {
		o->next_want = a; /* every row answers */
		return;
	}
	if (i < o->nwant && o->want[i] < a)
		i++;
	if (!((i == o->nwant || o->want[i] >= a) && (i == 0 || o->want[i - 1] < a)))
		i = a ? fxt_sym__lt_above(o->want, o->nwant, sizeof(*o->want), a - 1, i) : 0;
	o->hint = i;
	o->next_want = i < o->nwant ? o->want[i] : UINT64_MAX;
}

static int keep(struct lt_out *o, const struct lt_row *r)
{
	struct line_table *t = o->t;

	if (__builtin_expect(t->nrows == o->cap, 0) &&
	    fxt__grow((void **)&t->rows, &o->cap, t->nrows + 1, sizeof(*t->rows)) < 0)
		return -ENOMEM;
	t->rows[t->nrows++] = *r;
	return 0;
}

/* The row waiting, now that the next one of its sequence is at `next`:
 * kept when next_want lies in between. */
static inline int settle(struct lt_out *o, uint64_t next)
{
	int err = 0;

	if (o->waiting && (next <= o->row.addr || o->next_want < next))
		err = keep(o, &o->row);
	o->waiting = false;
	return err;
}

/* A row of the program (file LT_END: the end of its sequence), in the
 * general case: row() takes the common one. */
static __attribute__((noinline)) int row_out(struct lt_out *o, uint64_t addr, uint32_t line,
					     uint32_t file)
{
	bool in_order = o->waiting && o->row.addr <= addr;
	int err = 0;

	if (file == LT_END) {
		err = settle(o, addr);
		return err ? err : keep(o, &(struct lt_row){ addr, line, LT_END });
	}
	/* At the address of the one waiting: the one after it in libdw's
	 * order, which the one waiting never answers for. */
	if (o->waiting && o->row.addr != addr)
		err = settle(o, addr);
	if (!in_order || o->next_want < addr)
		aim(o, addr);
	o->row = (struct lt_row){ addr, line, file };
	o->waiting = true;
	return err;
}

/* A row's line and file as run_program() holds them in one register:
 * the line in the upper half (a line advance, shifted, leaves the file
 * as it is), the file in the lower. */
#define LF(line, file) ((uint64_t)(uint32_t)(line) << 32 | (uint32_t)(file))
#define LF_LINE(lf)    ((uint32_t)((lf) >> 32))
#define LF_FILE(lf)    ((uint32_t)(lf))

/* The general case of a row (row_out()) with the row waiting as
 * run_program() holds it in registers (addr lo, line and file wlf). */
static __attribute__((noinline)) int row_slow(struct lt_out *o, uint64_t lo, uint64_t wlf,
					      uint64_t addr, uint64_t lf)
{
	if (o->waiting)
		o->row = (struct lt_row){ lo, LF_LINE(wlf), LF_FILE(wlf) };
	return row_out(o, addr, LF_LINE(lf), LF_FILE(lf));
}

/* The common case of a row past the one waiting (rows in address order):
 * the one waiting is the last at or below next_want, which lies before
 * addr, so it is kept and the new one waits; row_slow() when none waits
 * or the table must grow. */
static __attribute__((noinline)) int row_past(struct lt_out *o, uint64_t lo, uint64_t wlf,
					      uint64_t addr, uint64_t lf)
{
	struct line_table *t = o->t;

	if (!o->waiting || t->nrows == o->cap || o->next_want >= addr || lo >= addr)
		return row_slow(o, lo, wlf, addr, lf);
	t->rows[t->nrows++] = (struct lt_row){ lo, LF_LINE(wlf), LF_FILE(wlf) };
	aim(o, addr);
	o->row = (struct lt_row){ addr, LF_LINE(lf), LF_FILE(lf) };
	return 0;
}

/* Advances the address by `adv` operations of a VLIW machine (op_index). */
static void advance_vliw(const struct lt_hdr *h, uint64_t *addr, uint64_t *op_index, uint64_t adv)
{
	*addr += h->min_insn * ((*op_index + adv) / h->max_ops);
	*op_index = (*op_index + adv) % h->max_ops;
}

/* A ULEB128 at p into *v: past it, or NULL when it runs past end. */
static __attribute__((noinline)) const unsigned char *
uleb_long(const unsigned char *p, const unsigned char *end, uint64_t *v)
{
	struct rd r = { p, end, false };

	*v = rd_uleb(&r);
	return r.bad ? NULL : r.p;
}

static inline const unsigned char *uleb_at(const unsigned char *p, const unsigned char *end,
					   uint64_t *v)
{
	if (__builtin_expect(p < end && !(*p & 0x80), 1)) {
		*v = *p; /* one byte: nearly all of them */
		return p + 1;
	}
	return uleb_long(p, end, v);
}

/* Runs the line number program in prog into o's table, in program
 * order: this loop is most of what a unit's table costs (a 10,000-function
 * unit: 500 KB, 330,000 opcodes, 120,000 rows).  The row waiting (o->row)
 * stays in registers while rows come one after the other: in [lo, hi], a
 * row only replaces it, since it is no answer (the new row is the last at
 * or below any address up to o->next_want); else row_past() decides, and
 * lo > hi when none waits.  Each opcode goes to its code through at[]
 * (labels as values, a GNU C extension): one indirect jump an opcode
 * rather than a chain of tests, and the VLIW machines' (op_index) apart. */
static int run_program(const struct rd *prog, const struct lt_hdr *h, struct lt_out *o)
{
	const unsigned char *p = prog->p, *const end = prog->end;
	const bool vliw = h->max_ops > 1;
	uint64_t addr = 0, op_index = 0, v, lo, hi;
	uint64_t lf = LF(1, 1), wlf; /* the row's line and file, the waiting one's */
	size_t rows;
	int err;

#define LT_WIN_GET()                                        \
	do {                                                \
		lo = o->waiting ? o->row.addr : UINT64_MAX; \
		hi = o->waiting ? o->next_want : 0;         \
		wlf = LF(o->row.line, o->row.file);         \
	} while (0)
#define LT_ROW()                                                     \
	do {                                                         \
		if (__builtin_expect(lo <= addr && addr <= hi, 1)) { \
			lo = addr;                                   \
			wlf = lf;                                    \
		} else {                                             \
			err = row_past(o, lo, wlf, addr, lf);        \
			LT_WIN_GET();                                \
			if (err < 0)                                 \
				return err;                          \
		}                                                    \
	} while (0)

	/* Room for the rows kept: one per 4 bytes of program when all are
	 * kept (gcc's take 4 to 5), at most about one an address asked
	 * about otherwise (and a sequence's end).  A 2 MB block for the
	 * 10,000 rows of bench/srcline.sh's unit, freed at once, moved
	 * glibc's mmap threshold: the conversions after it in the process
	 * took more page faults (in srcline_bench, names only 1,847 -> 1,586
	 * a conversion, with source lines 2,226 -> 1,761). */
	rows = (size_t)(end - p) / 4 + 16;
	if (o->want && o->nwant + o->nwant / 8 + 64 < rows)
		rows = o->nwant + o->nwant / 8 + 64;
	err = fxt__grow((void **)&o->t->rows, &o->cap, rows, sizeof(*o->t->rows));
	if (err < 0)
		return err;
	LT_WIN_GET();
	/* Threaded: each opcode's code goes on to the next one's by its
	 * class (lt_hdr.cls), no chain of tests: gcc's, by how often they
	 * come, special opcodes, set_column and negate_stmt (a quarter
	 * each), copy and set_discriminator (a tenth each), advance_pc,
	 * const_add_pc. */
	const void *const go[LT_NCLS] = {
		[LT_OTHER] = &&other,	    [LT_SPECIAL] = vliw ? &&special_vliw : &&special,
		[LT_COLUMN] = &&column,	    [LT_NEGATE] = &&next,
		[LT_COPY] = &&copy,	    [LT_CONST_ADD] = vliw ? &&const_add_vliw : &&const_add,
		[LT_EXTENDED] = &&extended, [LT_ADVANCE_PC] = vliw ? &&other : &&advance_pc,
	};
	const void *at[256]; /* each opcode's code */
	/* (A size_t, read before p moves on: gcc 12 then dispatches in 5
	 * instructions, not 7 with copies of p and op.) */
	size_t op;

	for (op = 0; op < h->opcode_base; op++)
		at[op] = go[h->cls[op]];
	for (; op < 256; op++) /* stores of one value: a unit's tables are many */
		at[op] = go[LT_SPECIAL];
#define LT_NEXT()                                  \
	do {                                       \
		if (__builtin_expect(p >= end, 0)) \
			goto done;                 \
		op = p[0];                         \
		p++;                               \
		goto *at[op];                      \
	} while (0)
next:
	LT_NEXT();
special:
	addr += h->sp_addr[op];
	lf += h->sp_lf[op];
	LT_ROW();
	LT_NEXT();
special_vliw:
	advance_vliw(h, &addr, &op_index, h->sp_ops[op]);
	lf += h->sp_lf[op];
	LT_ROW();
	LT_NEXT();
column:
	if (p < end && !(*p & 0x80)) {
		p++;
		LT_NEXT();
	}
	goto other; /* a longer operand */
copy:
	LT_ROW();
	LT_NEXT();
const_add:
	addr += h->sp_addr[255];
	LT_NEXT();
const_add_vliw:
	advance_vliw(h, &addr, &op_index, h->sp_ops[255]);
	LT_NEXT();
extended: /* gcc's set_discriminator (a tenth of the opcodes), else other */
	if (end - p >= 3 && p[0] == 2 && p[1] == DW_LNE_set_discriminator && !(p[2] & 0x80)) {
		p += 3;
		LT_NEXT();
	}
	goto other;
advance_pc: /* not VLIW's */
	if (p < end && !(*p & 0x80)) {
		addr += h->min_insn * *p++;
		LT_NEXT();
	}
	goto other; /* a longer operand */
other:
	switch (op) {
	case 0: { /* extended */
		struct rd sub;

		p = uleb_at(p, end, &v);
		if (!p || v == 0 || v > (uint64_t)(end - p))
			return -EOPNOTSUPP;
		sub = (struct rd){ p + 1, p + v, false };
		switch (p[0]) {
		case DW_LNE_end_sequence:
			err = row_slow(o, lo, wlf, addr, LF(LF_LINE(lf), LT_END));
			LT_WIN_GET();
			if (err < 0)
				return err;
			addr = 0;
			op_index = 0;
			lf = LF(1, 1);
			break;
		case DW_LNE_set_address:
			if (v - 1 != (h->addr_size ? h->addr_size : 4) &&
			    v - 1 != (h->addr_size ? h->addr_size : 8))
				return -EOPNOTSUPP;
			addr = rd_fixed(&sub, (unsigned)(v - 1));
			op_index = 0;
			break;
		case DW_LNE_define_file:
			return -EOPNOTSUPP; /* DWARF 2-4, unused by compilers */
		default:
			break; /* set_discriminator, vendors' */
		}
		p += v;
		break;
	}
	case DW_LNS_advance_pc:
		p = uleb_at(p, end, &v);
		if (!vliw)
			addr += h->min_insn * v;
		else
			advance_vliw(h, &addr, &op_index, v);
		break;
	case DW_LNS_advance_line: {
		struct rd r = { p, end, false };

		lf += (uint64_t)(uint32_t)rd_leb(&r, true) << 32;
		p = r.bad ? NULL : r.p;
		break;
	}
	case DW_LNS_set_file:
		p = uleb_at(p, end, &v);
		/* LT_END - 1: lacking */
		lf = LF(LF_LINE(lf), v >= LT_END ? LT_END - 1 : (uint32_t)v);
		break;
	case DW_LNS_fixed_advance_pc:
		if (end - p < 2)
			return -EOPNOTSUPP;
		addr += (uint64_t)p[0] | (uint64_t)p[1] << 8;
		p += 2;
		op_index = 0;
		break;
	default: /* set_column's long operand, the others' ULEB128s */
		for (unsigned i = 0; p && i < (op == DW_LNS_set_column ? 1u : h->std_len[op - 1]);
		     i++)
			p = uleb_at(p, end, &v);
		break;
	}
	if (!p)
		return -EOPNOTSUPP;
	LT_NEXT();
done:
	if (o->waiting)
		o->row = (struct lt_row){ lo, LF_LINE(wlf), LF_FILE(wlf) };
	return 0;
#undef LT_NEXT
#undef LT_ROW
#undef LT_WIN_GET
}

int fxt_sym__lineprog_run(const struct rd *prog, const struct lt_hdr *h, struct lt_out *o)
{
	int err = run_program(prog, h, o);

	if (err == 0 && o->waiting) /* a program without its last end */
		err = settle(o, o->row.addr);
	return err;
}
