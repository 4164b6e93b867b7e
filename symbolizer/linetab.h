/* The shared parts of the line-table reader: the table (linetab.c builds
 * and asks it), the bounded reader of the sections, and the program's
 * state as lineprog.c runs it.  Internal to symbolizer/. */
#ifndef FXT_SYMBOLIZER_LINETAB_H
#define FXT_SYMBOLIZER_LINETAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

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
	size_t shown_len;
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

static inline uint64_t rd_fixed(struct rd *r, unsigned n)
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
static inline uint64_t rd_leb(struct rd *r, bool is_signed)
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

static inline uint64_t rd_uleb(struct rd *r)
{
	return rd_leb(r, false);
}

static inline const char *rd_str(struct rd *r)
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

static inline void rd_skip(struct rd *r, uint64_t n)
{
	if ((uint64_t)(r->end - r->p) < n) {
		r->bad = true;
		r->p = r->end;
		return;
	}
	r->p += n;
}

/* ------------------------------------------------------------ the program */

/* What lineprog.c does with an opcode (lt_hdr.cls): the common ones on
 * their own, the others through one switch. */
enum lt_cls {
	LT_OTHER,
	LT_SPECIAL,
	LT_COLUMN,
	LT_NEGATE,
	LT_COPY,
	LT_CONST_ADD,
	LT_EXTENDED,
	LT_ADVANCE_PC,
	LT_NCLS
};

struct lt_hdr {
	unsigned min_insn, max_ops;
	unsigned addr_size; /* DWARF 5's; 0: DW_LNE_set_address's length */
	int line_base;
	unsigned line_range, opcode_base;
	const unsigned char *std_len; /* opcode_base - 1 lengths */
	bool dwarf64;
	/* Each special opcode's operation and line advances: no division
	 * per row; the line's shifted as lineprog.c holds it (LF()). */
	uint8_t sp_ops[256];
	uint64_t sp_lf[256];
	uint32_t sp_addr[256]; /* min_insn * sp_ops: not VLIW's */
	uint8_t cls[256];      /* enum lt_cls of each opcode */
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

/* Runs the line number program in prog (the unit's, after its header h)
 * into o's table, in program order, the last row settled: 0, -ENOMEM,
 * -EOPNOTSUPP (an opcode it cannot read). */
int fxt_sym__lineprog_run(const struct rd *prog, const struct lt_hdr *h, struct lt_out *o);

/* The index of the first of n sorted addresses (`stride` bytes apart)
 * above x, searched outwards from `hint` (lineprog.c). */
size_t fxt_sym__lt_above(const uint64_t *v, size_t n, size_t stride, uint64_t x, size_t hint);

#endif /* FXT_SYMBOLIZER_LINETAB_H */
