/* A unit's DWARF line table, decoded once, for where functions are
 * (FXT_SYM_FUNC_LOC, lines.c).
 *
 * libdw 0.188's dwarf_getsrclines() allocates every row on its own, then
 * sorts them all: for a unit of 10,000 functions most of what locations
 * cost a conversion (bench/srcline.sh).  Here the program runs once into
 * one array, in address order as compilers emit it (sorted when not), of
 * only the rows that answer for one of the addresses the caller will ask
 * about (its symbols'); a row is a search from the last one.  The answers
 * are libdw's (dwarf_getsrc_die(), dwarf_linesrc()), which the callers
 * ask when this declines a table (-EOPNOTSUPP: a compressed section,
 * another byte order, an encoding it does not know):
 * - by address, at one address a sequence's end first, else in program
 *   order; an address's row is the last one at or below it, none when
 *   that one ends a sequence;
 * - a file is its directory joined with "/" unless absolute; DWARF 2-4
 *   number files from 1 and their directory 0 is DW_AT_comp_dir (none:
 *   the name alone), DWARF 5 has entries 0 of its own.
 * Names are shown relative to DW_AT_comp_dir when under it (made once per
 * file, at its first use).
 */
#include "config.h"

#include <dwarf.h>
#include <errno.h>
#include <stdlib.h>

#include "common/grow.h"
#include "symbolizer/internal.h"

struct lt_row {
	uint64_t addr;
	uint32_t line;
	uint32_t file; /* LT_END: the end of a sequence */
};
#define LT_END UINT32_MAX

struct lt_file {
	const char *name; /* in the section, NUL-terminated */
	uint64_t dir;
	char *shown; /* made at first use: joined, relative to comp_dir */
};

struct line_table {
	struct lt_row *rows;
	size_t nrows;
	struct lt_file *files;
	size_t nfiles;
	const char **dirs;
	size_t ndirs;
	const char *comp_dir; /* NULL when the unit has none */
	size_t hint;	      /* the last answer's above() */
};

/* ------------------------------------------------------------ reading */

/* A bounded little-endian reader; `bad` once it ran past its end. */
struct rd {
	const unsigned char *p, *end;
	bool bad;
};

static uint64_t rd_fixed(struct rd *r, unsigned n)
{
	uint64_t v = 0;

	if ((size_t)(r->end - r->p) < n) {
		r->bad = true;
		r->p = r->end;
		return 0;
	}
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)r->p[i] << (8 * i);
	r->p += n;
	return v;
}

/* A LEB128, sign-extended when `is_signed`. */
static uint64_t rd_leb(struct rd *r, bool is_signed)
{
	uint64_t v = 0;
	unsigned shift = 0;

	while (r->p < r->end) {
		unsigned char b = *r->p++;

		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80)) {
			if (is_signed && shift < 64 && (b & 0x40))
				v |= ~(uint64_t)0 << shift;
			return v;
		}
	}
	r->bad = true;
	return 0;
}

static uint64_t rd_uleb(struct rd *r)
{
	return rd_leb(r, false);
}

static const char *rd_str(struct rd *r)
{
	const unsigned char *s = r->p;
	const unsigned char *nul = memchr(s, '\0', (size_t)(r->end - s));

	if (!nul) {
		r->bad = true;
		r->p = r->end;
		return NULL;
	}
	r->p = nul + 1;
	return (const char *)s;
}

static void rd_skip(struct rd *r, uint64_t n)
{
	if ((uint64_t)(r->end - r->p) < n) {
		r->bad = true;
		r->p = r->end;
		return;
	}
	r->p += n;
}

/* ------------------------------------------------------------ sections */

/* The bytes of section `name` of the file holding the DWARF, when present
 * and stored as they are (not compressed). */
static int section(Elf *elf, size_t shstrndx, const char *name, struct lt_bytes *out)
{
	Elf_Scn *scn = NULL;

	out->p = NULL;
	out->n = 0;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		const char *sn;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || !(sn = elf_strptr(elf, shstrndx, sh.sh_name)) ||
		    strcmp(sn, name) != 0)
			continue;
		if (sh.sh_type == SHT_NOBITS)
			return 0; /* a stripped file's placeholder */
		if (sh.sh_flags & SHF_COMPRESSED)
			return -EOPNOTSUPP;
		d = elf_rawdata(scn, NULL);
		if (!d || !d->d_buf)
			return -EOPNOTSUPP;
		out->p = d->d_buf;
		out->n = d->d_size;
		return 0;
	}
	return 0;
}

int fxt_sym__linetab_sections(Dwarf *dw, struct lt_sections *s)
{
	Elf *elf = dwarf_getelf(dw);
	size_t shstrndx;
	GElf_Ehdr eh;
	int err;

	if (!elf || !gelf_getehdr(elf, &eh) || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return -EOPNOTSUPP;
	if (eh.e_ident[EI_DATA] != ELFDATA2LSB || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__)
		return -EOPNOTSUPP;
	err = section(elf, shstrndx, ".debug_line", &s->line);
	if (err == 0)
		err = section(elf, shstrndx, ".debug_line_str", &s->line_str);
	if (err == 0)
		err = section(elf, shstrndx, ".debug_str", &s->str);
	return err;
}

/* ------------------------------------------------------------ the header */

static const char *str_at(const struct lt_bytes *b, uint64_t off)
{
	if (!b->p || off >= b->n || !memchr(b->p + off, '\0', b->n - off))
		return NULL;
	return (const char *)b->p + off;
}

/* One attribute of a DWARF 5 directory or file entry: a string (*str) or
 * a number (*num); an unknown form declines the table. */
static int entry_value(struct rd *r, const struct lt_sections *s, uint64_t form, bool dwarf64,
		       const char **str, uint64_t *num)
{
	unsigned osize = dwarf64 ? 8 : 4;

	*str = NULL;
	*num = 0;
	switch (form) {
	case DW_FORM_string:
		*str = rd_str(r);
		return 0;
	case DW_FORM_line_strp:
		*str = str_at(&s->line_str, rd_fixed(r, osize));
		return *str ? 0 : -EOPNOTSUPP;
	case DW_FORM_strp:
		*str = str_at(&s->str, rd_fixed(r, osize));
		return *str ? 0 : -EOPNOTSUPP;
	case DW_FORM_udata:
		*num = rd_uleb(r);
		return 0;
	case DW_FORM_data1:
		*num = rd_fixed(r, 1);
		return 0;
	case DW_FORM_data2:
		*num = rd_fixed(r, 2);
		return 0;
	case DW_FORM_data4:
		*num = rd_fixed(r, 4);
		return 0;
	case DW_FORM_data8:
		*num = rd_fixed(r, 8);
		return 0;
	case DW_FORM_data16:
		rd_skip(r, 16);
		return 0;
	case DW_FORM_block:
		rd_skip(r, rd_uleb(r));
		return 0;
	default:
		return -EOPNOTSUPP;
	}
}

/* DWARF 5's directory or file entries, as their format describes them:
 * the path and the directory index of each. */
static int v5_entries(struct rd *r, const struct lt_sections *s, bool dwarf64, bool files,
		      struct line_table *t)
{
	uint64_t fmt[2 * 16];
	unsigned nfmt = (unsigned)rd_fixed(r, 1);
	uint64_t n;

	if (nfmt > 16)
		return -EOPNOTSUPP;
	for (unsigned i = 0; i < 2 * nfmt; i++)
		fmt[i] = rd_uleb(r);
	n = rd_uleb(r);
	if (r->bad || n > (uint64_t)(r->end - r->p))
		return -EOPNOTSUPP;
	if (files) {
		t->files = calloc(n ? n : 1, sizeof(*t->files));
		if (!t->files)
			return -ENOMEM;
	} else {
		t->dirs = calloc(n ? n : 1, sizeof(*t->dirs));
		if (!t->dirs)
			return -ENOMEM;
	}
	for (uint64_t k = 0; k < n; k++) {
		const char *path = NULL;
		uint64_t dir = 0;

		for (unsigned i = 0; i < nfmt; i++) {
			const char *str;
			uint64_t num;
			int err = entry_value(r, s, fmt[2 * i + 1], dwarf64, &str, &num);

			if (err < 0)
				return err;
			if (fmt[2 * i] == DW_LNCT_path)
				path = str;
			else if (fmt[2 * i] == DW_LNCT_directory_index)
				dir = num;
		}
		if (!path || r->bad)
			return -EOPNOTSUPP;
		if (files) {
			t->files[k].name = path;
			t->files[k].dir = dir;
		} else {
			t->dirs[k] = path;
		}
	}
	if (files)
		t->nfiles = (size_t)n;
	else
		t->ndirs = (size_t)n;
	return 0;
}

/* DWARF 2-4's include_directories and file_names, each list ended by an
 * empty string; directory 0 is the unit's, file 0 none ("???"). */
static int v4_entries(struct rd *r, struct line_table *t)
{
	size_t cap = 0;
	const char *p;

	if (fxt__grow((void **)&t->dirs, &cap, 1, sizeof(*t->dirs)) < 0)
		return -ENOMEM;
	t->dirs[t->ndirs++] = t->comp_dir;
	while ((p = rd_str(r)) != NULL && *p) {
		if (fxt__grow((void **)&t->dirs, &cap, t->ndirs + 1, sizeof(*t->dirs)) < 0)
			return -ENOMEM;
		t->dirs[t->ndirs++] = p;
	}
	cap = 0;
	if (fxt__grow((void **)&t->files, &cap, 1, sizeof(*t->files)) < 0)
		return -ENOMEM;
	t->files[t->nfiles++] = (struct lt_file){ "???", 0, NULL };
	while (!r->bad && (p = rd_str(r)) != NULL && *p) {
		uint64_t dir = rd_uleb(r);

		rd_uleb(r); /* mtime */
		rd_uleb(r); /* length */
		if (fxt__grow((void **)&t->files, &cap, t->nfiles + 1, sizeof(*t->files)) < 0)
			return -ENOMEM;
		t->files[t->nfiles++] = (struct lt_file){ p, dir, NULL };
	}
	return r->bad ? -EOPNOTSUPP : 0;
}

/* ------------------------------------------------------------ the program */

struct lt_hdr {
	unsigned min_insn, max_ops;
	unsigned addr_size; /* DWARF 5's; 0: DW_LNE_set_address's length */
	int line_base;
	unsigned line_range, opcode_base;
	const unsigned char *std_len; /* opcode_base - 1 lengths */
	bool dwarf64;
	/* Each special opcode's operation and line advances: no division
	 * per row. */
	uint8_t sp_ops[256];
	int16_t sp_line[256];
};

/* The rows as the program makes them, kept in t->rows when they may be
 * an answer: a row answers (libdw's order) at most up to the next row of
 * its sequence, so it waits for that one, and is left out when no address
 * of `want` (sorted; NULL: all) lies in between, or the next one is at its
 * address.  Kept: the ends, and rows the next one does not bound (an end
 * at their address, which libdw puts first; an address going back). */
struct lt_out {
	struct line_table *t;
	size_t cap;
	const uint64_t *want;
	size_t nwant, hint; /* hint: want[hint] is next_want */
	uint64_t next_want; /* the first of want at or above row.addr */
	bool waiting;
	struct lt_row row; /* the row waiting */
};

/* The index of the first of n sorted addresses (`stride` bytes apart)
 * above x, searched outwards from `hint`, the last answer: rows and
 * functions come mostly in address order; a whole search missed the cache. */
static size_t above(const uint64_t *v, size_t n, size_t stride, uint64_t x, size_t hint)
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
		i = a ? above(o->want, o->nwant, sizeof(*o->want), a - 1, i) : 0;
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

/* A row of the program (file LT_END: the end of its sequence). */
static inline __attribute__((always_inline)) int row_out(struct lt_out *o, uint64_t addr,
							 uint32_t line, uint32_t file)
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

/* Advances the address by `adv` operations (op_index: VLIW's). */
static void advance(const struct lt_hdr *h, uint64_t *addr, uint64_t *op_index, uint64_t adv)
{
	if (h->max_ops <= 1) { /* not VLIW: no division */
		*addr += h->min_insn * adv;
		return;
	}
	*addr += h->min_insn * ((*op_index + adv) / h->max_ops);
	*op_index = (*op_index + adv) % h->max_ops;
}

/* A ULEB128 at p into *v: past it, or NULL when it runs past end. */
static inline const unsigned char *uleb_at(const unsigned char *p, const unsigned char *end,
					   uint64_t *v)
{
	struct rd r = { p, end, false };

	if (__builtin_expect(p < end && !(*p & 0x80), 1)) {
		*v = *p; /* one byte: nearly all of them */
		return p + 1;
	}
	*v = rd_uleb(&r);
	return r.bad ? NULL : r.p;
}

/* Runs the line number program in prog into o's table, in program
 * order.  Pointers in registers, not a struct rd: this loop is most of
 * what a unit's table costs. */
static int run_program(const struct rd *prog, const struct lt_hdr *h, struct lt_out *o)
{
	const unsigned char *p = prog->p, *end = prog->end;
	const unsigned base = h->opcode_base;
	uint64_t addr = 0, op_index = 0, v;
	uint32_t file = 1, line = 1;
	int err;

	/* Room for a row per 4 bytes of program (gcc's take 4 to 5) when
	 * all are kept: no copy as the array grows; pages never written cost
	 * nothing. */
	err = fxt__grow((void **)&o->t->rows, &o->cap, (size_t)(end - p) / 4 + 16,
			sizeof(*o->t->rows));
	while (p && p < end && err == 0) {
		unsigned op = *p++;

		if (op >= base) {
			advance(h, &addr, &op_index, h->sp_ops[op]);
			line += (uint32_t)h->sp_line[op];
			err = row_out(o, addr, line, file);
			continue;
		}
		switch (op) {
		case DW_LNS_set_column: /* the commonest, with negate_stmt */
			p = uleb_at(p, end, &v);
			break;
		case DW_LNS_negate_stmt:
			break;
		case DW_LNS_copy:
			err = row_out(o, addr, line, file);
			break;
		case 0: { /* extended */
			struct rd sub;

			p = uleb_at(p, end, &v);
			if (!p || v == 0 || v > (uint64_t)(end - p))
				return -EOPNOTSUPP;
			sub = (struct rd){ p + 1, p + v, false };
			switch (p[0]) {
			case DW_LNE_end_sequence:
				err = row_out(o, addr, line, LT_END);
				addr = 0;
				op_index = 0;
				file = 1;
				line = 1;
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
			advance(h, &addr, &op_index, v);
			break;
		case DW_LNS_advance_line: {
			struct rd r = { p, end, false };

			line += (uint32_t)rd_leb(&r, true);
			p = r.bad ? NULL : r.p;
			break;
		}
		case DW_LNS_set_file:
			p = uleb_at(p, end, &v);
			file = v >= LT_END ? LT_END - 1 : (uint32_t)v; /* LT_END - 1: lacking */
			break;
		case DW_LNS_const_add_pc:
			advance(h, &addr, &op_index, (255u - base) / h->line_range);
			break;
		case DW_LNS_fixed_advance_pc:
			if (end - p < 2)
				return -EOPNOTSUPP;
			addr += (uint64_t)p[0] | (uint64_t)p[1] << 8;
			p += 2;
			op_index = 0;
			break;
		default: /* the others' operands are ULEB128s */
			for (unsigned i = 0; p && i < h->std_len[op - 1]; i++)
				p = uleb_at(p, end, &v);
			break;
		}
	}
	return p ? err : -EOPNOTSUPP;
}

/* In libdw's order: by address, a sequence's end before a row at the same
 * address, else the program's order (the index: a stable sort). */
struct lt_sort {
	struct lt_row row;
	size_t index;
};

static int lt_sort_cmp(const void *a, const void *b)
{
	const struct lt_sort *x = a, *y = b;
	bool xe = x->row.file == LT_END, ye = y->row.file == LT_END;

	if (x->row.addr != y->row.addr)
		return x->row.addr < y->row.addr ? -1 : 1;
	if (xe != ye)
		return xe ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

static int sort_rows(struct line_table *t)
{
	struct lt_sort *v;
	size_t i;

	for (i = 1; i < t->nrows; i++) {
		const struct lt_row *a = &t->rows[i - 1], *b = &t->rows[i];

		if (a->addr > b->addr ||
		    (a->addr == b->addr && a->file != LT_END && b->file == LT_END))
			break;
	}
	if (i >= t->nrows)
		return 0; /* as compilers emit them */
	v = malloc(t->nrows * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < t->nrows; i++)
		v[i] = (struct lt_sort){ t->rows[i], i };
	qsort(v, t->nrows, sizeof(*v), lt_sort_cmp);
	for (i = 0; i < t->nrows; i++)
		t->rows[i] = v[i].row;
	free(v);
	return 0;
}

/* The header at r (after unit_length) and the program up to the unit's
 * end. */
static int decode(struct rd *r, const struct lt_sections *s, bool dwarf64, struct lt_out *o)
{
	struct line_table *t = o->t;
	struct lt_hdr h = { .dwarf64 = dwarf64 }; /* addr_size 0: 4 or 8 */
	unsigned version = (unsigned)rd_fixed(r, 2);
	uint64_t hlen;
	struct rd prog;
	int err;

	if (version < 2 || version > 5)
		return -EOPNOTSUPP;
	if (version >= 5) {
		h.addr_size = (unsigned)rd_fixed(r, 1);
		if (rd_fixed(r, 1) != 0 || (h.addr_size != 4 && h.addr_size != 8))
			return -EOPNOTSUPP; /* segment selectors */
	}
	hlen = rd_fixed(r, dwarf64 ? 8 : 4);
	if (r->bad || hlen > (uint64_t)(r->end - r->p))
		return -EOPNOTSUPP;
	prog = (struct rd){ r->p + hlen, r->end, false };
	h.min_insn = (unsigned)rd_fixed(r, 1);
	h.max_ops = version >= 4 ? (unsigned)rd_fixed(r, 1) : 1;
	rd_fixed(r, 1); /* default_is_stmt: every row counts */
	h.line_base = (int)(int8_t)rd_fixed(r, 1);
	h.line_range = (unsigned)rd_fixed(r, 1);
	h.opcode_base = (unsigned)rd_fixed(r, 1);
	if (r->bad || h.line_range == 0 || h.opcode_base == 0 ||
	    h.opcode_base - 1u > (size_t)(r->end - r->p))
		return -EOPNOTSUPP;
	h.std_len = r->p;
	r->p += h.opcode_base - 1;
	for (unsigned op = h.opcode_base; op < 256; op++) {
		h.sp_ops[op] = (uint8_t)((op - h.opcode_base) / h.line_range);
		h.sp_line[op] = (int16_t)(h.line_base + (int)((op - h.opcode_base) % h.line_range));
	}
	if (version >= 5) {
		err = v5_entries(r, s, dwarf64, false, t);
		if (err == 0)
			err = v5_entries(r, s, dwarf64, true, t);
	} else {
		err = v4_entries(r, t);
	}
	if (err == 0)
		err = run_program(&prog, &h, o);
	if (err == 0 && o->waiting) /* a program without its last end */
		err = settle(o, o->row.addr);
	return err;
}

/* ------------------------------------------------------------ tables */

void fxt_sym__linetab_free(struct line_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nfiles; i++)
		free(t->files[i].shown);
	free(t->files);
	free(t->dirs);
	free(t->rows);
	free(t);
}

int fxt_sym__linetab_build(const struct lt_sections *s, Dwarf_Die *cu, const uint64_t *want,
			   size_t nwant, struct line_table **out)
{
	struct lt_out o = { .want = want, .nwant = nwant };
	struct line_table *t;
	Dwarf_Attribute at;
	Dwarf_Word off;
	struct rd r;
	uint64_t len;
	bool dwarf64 = false;
	int err;

	*out = NULL;
	if (!dwarf_attr(cu, DW_AT_stmt_list, &at))
		return -ENOENT; /* no line table */
	if (dwarf_formudata(&at, &off) != 0 || !s->line.p || off >= s->line.n)
		return -EOPNOTSUPP;
	r = (struct rd){ s->line.p + off, s->line.p + s->line.n, false };
	len = rd_fixed(&r, 4);
	if (len == 0xffffffffu) {
		dwarf64 = true;
		len = rd_fixed(&r, 8);
	} else if (len >= 0xfffffff0u) {
		return -EOPNOTSUPP;
	}
	if (r.bad || len > (uint64_t)(r.end - r.p))
		return -EOPNOTSUPP;
	r.end = r.p + len;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->comp_dir = dwarf_attr(cu, DW_AT_comp_dir, &at) ? dwarf_formstring(&at) : NULL;
	o.t = t;
	err = decode(&r, s, dwarf64, &o);
	if (err == 0)
		err = sort_rows(t);
	if (err < 0) {
		fxt_sym__linetab_free(t);
		return err;
	}
	*out = t;
	return 0;
}

/* The shown name of file `i` into *out: its directory's path joined to
 * it, then relative to comp_dir when under it.  0, -ENOENT for a file the
 * table lacks, -ENOMEM. */
static int file_shown(struct line_table *t, uint32_t i, const char **out)
{
	struct lt_file *f;
	const char *dir = NULL, *rel;
	size_t dn, fn;
	char *joined;

	if (i >= t->nfiles)
		return -ENOENT;
	f = &t->files[i];
	if (f->shown) {
		*out = f->shown;
		return 0;
	}
	if (f->name[0] != '/') {
		if (f->dir >= t->ndirs)
			return -ENOENT;
		dir = t->dirs[f->dir];
	}
	dn = dir ? strlen(dir) : 0;
	fn = strlen(f->name);
	joined = malloc(dn + 1 + fn + 1);
	if (!joined)
		return -ENOMEM;
	if (dir) {
		memcpy(joined, dir, dn);
		joined[dn++] = '/';
	}
	memcpy(joined + dn, f->name, fn + 1);
	rel = fxt_sym__relative(t->comp_dir, joined);
	if (rel != joined)
		memmove(joined, rel, strlen(rel) + 1);
	f->shown = joined;
	*out = joined;
	return 0;
}

int fxt_sym__linetab_find(struct line_table *t, uint64_t addr, const char **file, unsigned *line)
{
	size_t i = t->nrows ? above(&t->rows->addr, t->nrows, sizeof(*t->rows), addr, t->hint) : 0;
	const struct lt_row *row;

	t->hint = i;
	if (i == 0)
		return -ENOENT;
	row = &t->rows[i - 1];
	if (row->file == LT_END)
		return -ENOENT;
	*line = (int32_t)row->line > 0 ? row->line : 0;
	return file_shown(t, row->file, file);
}
