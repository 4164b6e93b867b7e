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
#include "symbolizer/linetab.h"

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
	/* (Standard opcodes from the first an opcode_base leaves out are
	 * special ones.) */
	h.cls[DW_LNS_copy] = LT_COPY;
	h.cls[DW_LNS_set_column] = LT_COLUMN;
	h.cls[DW_LNS_negate_stmt] = LT_NEGATE;
	h.cls[DW_LNS_const_add_pc] = LT_CONST_ADD;
	h.cls[0] = LT_EXTENDED;
	h.cls[DW_LNS_advance_pc] = LT_ADVANCE_PC;
	for (unsigned op = h.opcode_base; op < 256; op++) {
		h.cls[op] = LT_SPECIAL;
		h.sp_ops[op] = (uint8_t)((op - h.opcode_base) / h.line_range);
		h.sp_lf[op] =
		    (uint64_t)(uint32_t)(h.line_base + (int)((op - h.opcode_base) % h.line_range))
		    << 32;
		h.sp_addr[op] = h.min_insn * h.sp_ops[op];
	}
	if (version >= 5) {
		err = v5_entries(r, s, dwarf64, false, t);
		if (err == 0)
			err = v5_entries(r, s, dwarf64, true, t);
	} else {
		err = v4_entries(r, t);
	}
	if (err == 0)
		err = fxt_sym__lineprog_run(&prog, &h, o);
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

/* The shown name of file `i` into *out (its length *len): its
 * directory's path joined to it, then relative to comp_dir when under it.
 * 0, -ENOENT for a file the table lacks, -ENOMEM. */
static int file_shown(struct line_table *t, uint32_t i, const char **out, size_t *len)
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
		*len = f->shown_len;
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
	f->shown_len = dn + fn - (size_t)(rel - joined);
	if (rel != joined)
		memmove(joined, rel, f->shown_len + 1);
	f->shown = joined;
	*out = joined;
	*len = f->shown_len;
	return 0;
}

int fxt_sym__linetab_find(struct line_table *t, uint64_t addr, const char **file, size_t *file_len,
			  unsigned *line)
{
	size_t i = t->hint;
	const struct lt_row *row;

	/* Functions come mostly in address order, and the rows kept are
	 * mostly one a function: the row after the last answer's. */
	if (!(i < t->nrows && t->rows[i].addr <= addr &&
	      (i + 1 == t->nrows || t->rows[i + 1].addr > addr)))
		i = t->nrows
			? fxt_sym__lt_above(&t->rows->addr, t->nrows, sizeof(*t->rows), addr, i)
			: 0;
	else
		i++;

	t->hint = i;
	if (i == 0)
		return -ENOENT;
	row = &t->rows[i - 1];
	if (row->file == LT_END)
		return -ENOENT;
	*line = (int32_t)row->line > 0 ? row->line : 0;
	return file_shown(t, row->file, file, file_len);
}
