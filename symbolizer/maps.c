/* fxt_sym_add_maps: the modules of a saved /proc/PID/maps text.
 *
 * The text is parsed whole first, so that a malformed one reports nothing.
 * Consecutive mappings of one file form a module; each with an executable
 * mapping is reported with the load bias that its lowest mapping and the
 * ELF program headers give.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolizer/internal.h"

/* One line of /proc/PID/maps:
 *   start-end perms offset major:minor inode   path */
struct maps_line {
	uint64_t start, end, offset, inode;
	bool exec;
	const char *path; /* not NUL-terminated: path_len bytes */
	size_t path_len;
};

static bool parse_hex(const char **p, const char *end, uint64_t *v)
{
	const char *q = *p;
	uint64_t x = 0;

	for (; q < end; q++) {
		int d;

		if (*q >= '0' && *q <= '9')
			d = *q - '0';
		else if (*q >= 'a' && *q <= 'f')
			d = *q - 'a' + 10;
		else if (*q >= 'A' && *q <= 'F')
			d = *q - 'A' + 10;
		else
			break;
		if (x >> 60)
			return false; /* overflow */
		x = x << 4 | (uint64_t)d;
	}
	if (q == *p)
		return false;
	*p = q;
	*v = x;
	return true;
}

static bool parse_char(const char **p, const char *end, char c)
{
	if (*p >= end || **p != c)
		return false;
	(*p)++;
	return true;
}

static void skip_spaces(const char **p, const char *end)
{
	while (*p < end && (**p == ' ' || **p == '\t'))
		(*p)++;
}

static bool parse_maps_line(const char *p, const char *end, struct maps_line *ml)
{
	uint64_t dev, inode = 0;

	if (!parse_hex(&p, end, &ml->start) || !parse_char(&p, end, '-') ||
	    !parse_hex(&p, end, &ml->end) || !parse_char(&p, end, ' ') || end - p < 5 ||
	    p[4] != ' ')
		return false;
	ml->exec = p[2] == 'x';
	p += 5;
	if (!parse_hex(&p, end, &ml->offset) || !parse_char(&p, end, ' ') ||
	    !parse_hex(&p, end, &dev) || !parse_char(&p, end, ':') || !parse_hex(&p, end, &dev) ||
	    !parse_char(&p, end, ' '))
		return false;
	for (; p < end && *p >= '0' && *p <= '9'; p++)
		inode = inode * 10 + (uint64_t)(*p - '0');
	ml->inode = inode;
	if (ml->end <= ml->start)
		return false;
	skip_spaces(&p, end);
	ml->path = p;
	ml->path_len = (size_t)(end - p);
	return true;
}

/* All mappings of one file, as consecutive maps lines show them. */
struct maps_group {
	char *path; /* malloc'd, without a " (deleted)" suffix */
	bool deleted, exec;
	uint64_t start, end, inode;
	uint64_t first_start, first_offset; /* the lowest mapping */
};

/* The load bias of `elf` mapped with file offset `offset` at `start`: the
 * loader maps each PT_LOAD so that file offset X of the segment lands at
 * bias + p_vaddr + (X - p_offset). */
static int elf_bias_from_mapping(Elf *elf, uint64_t start, uint64_t offset, uint64_t *bias)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	size_t phnum, i;

	if (elf_getphdrnum(elf, &phnum) != 0)
		return -ENOEXEC;
	for (i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if ((ph.p_offset & ~(page - 1)) <= offset && offset < ph.p_offset + ph.p_filesz) {
			*bias = start - offset - ph.p_vaddr + ph.p_offset;
			return 0;
		}
	}
	return -ENOEXEC;
}

/* Whether file-backed mappings [start, end) are what the loader maps of
 * `elf` at `bias`: from the page of the first PT_LOAD's start to the page
 * end of the last one's file contents (its .bss beyond is anonymous). */
static bool layout_fits(Elf *elf, uint64_t bias, uint64_t start, uint64_t end)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), lo = 0, hi = 0;
	size_t phnum, i;
	bool first = true;

	if (elf_getphdrnum(elf, &phnum) != 0)
		return false;
	for (i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (first)
			lo = ph.p_vaddr & ~(page - 1);
		first = false;
		if (ph.p_filesz)
			hi = (ph.p_vaddr + ph.p_filesz + page - 1) & ~(page - 1);
	}
	return !first && start == bias + lo && end == bias + hi;
}

static int report_group(struct fxt_sym *s, const struct maps_group *g)
{
	struct elf_file ef;
	uint64_t bias = 0;
	int err;

	/* Only code matters, and data files mapped by the program are not
	 * modules. */
	if (!g->exec)
		return 0;
	if (g->path[0] == '[') /* [vdso], [vsyscall] ... */
		return fxt_sym__report_bare(s, g->path, g->start, g->end, g->start);
	if (g->path[0] != '/')
		return 0;
	err = g->deleted ? -ENOENT : fxt_sym__elf_open(&ef, g->path);
	if (err == -ENOEXEC)
		return 0;
	if (err == 0) {
		err = elf_bias_from_mapping(ef.elf, g->first_start, g->first_offset, &bias);
		/* A file replaced since would give wrong names.  Its inode
		 * tells, except on overlayfs, where maps and stat(2) show
		 * different inode numbers: then the file must at least have
		 * the layout that was mapped. */
		if (err == 0 && (uint64_t)ef.st.st_ino != g->inode &&
		    !layout_fits(ef.elf, bias, g->start, g->end))
			err = -ESTALE;
		if (err < 0)
			fxt_sym__elf_close(&ef);
	}
	if (err < 0) {
		/* Gone: name its addresses by file offset, which is what the
		 * ELF virtual address of a shared library or PIE usually is. */
		return fxt_sym__report_bare(s, g->path, g->start, g->end,
					    g->first_start - g->first_offset);
	}
	return fxt_sym__report_elf(s, g->path, &ef, bias);
}

static void groups_free(struct maps_group *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i].path);
	free(v);
}

/* Parses the whole text into groups first, so that a malformed text reports
 * nothing at all. */
static int parse_maps(const char *text, struct maps_group **out, size_t *nout)
{
	static const char deleted[] = " (deleted)";
	const size_t dlen = sizeof(deleted) - 1;
	struct maps_group *v = NULL, *g = NULL;
	size_t n = 0, cap = 0;
	const char *p = text;

	while (*p) {
		const char *eol = strchr(p, '\n');
		const char *end = eol ? eol : p + strlen(p);
		struct maps_line ml;
		bool del = false;

		if (end == p) { /* an empty line */
			p = eol ? eol + 1 : end;
			continue;
		}
		if (!parse_maps_line(p, end, &ml))
			goto fail_inval;
		p = eol ? eol + 1 : end;
		if (ml.path_len > dlen &&
		    memcmp(ml.path + ml.path_len - dlen, deleted, dlen) == 0) {
			ml.path_len -= dlen;
			del = true;
		}
		if (ml.path_len == 0)
			continue; /* anonymous, e.g. .bss: does not end a group */
		if (g && g->inode == ml.inode && strlen(g->path) == ml.path_len &&
		    memcmp(g->path, ml.path, ml.path_len) == 0 && ml.start >= g->end) {
			g->end = ml.end;
			g->exec |= ml.exec;
			if (ml.offset < g->first_offset) {
				g->first_offset = ml.offset;
				g->first_start = ml.start;
			}
			continue;
		}
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 32;
			struct maps_group *nv = realloc(v, ncap * sizeof(*nv));

			if (!nv)
				goto fail_nomem;
			v = nv;
			cap = ncap;
		}
		g = &v[n];
		g->path = strndup(ml.path, ml.path_len);
		if (!g->path)
			goto fail_nomem;
		n++;
		g->deleted = del;
		g->exec = ml.exec;
		g->start = g->first_start = ml.start;
		g->end = ml.end;
		g->first_offset = ml.offset;
		g->inode = ml.inode;
	}
	*out = v;
	*nout = n;
	return 0;

fail_inval:
	groups_free(v, n);
	return -EINVAL;
fail_nomem:
	groups_free(v, n);
	return -ENOMEM;
}

int fxt_sym_add_maps(struct fxt_sym *s, const char *maps_text)
{
	struct maps_group *groups;
	size_t n, i;
	int err;

	if (!s || !maps_text)
		return -EINVAL;
	err = parse_maps(maps_text, &groups, &n);
	if (err < 0)
		return err;
	for (i = 0; i < n; i++) {
		int r = report_group(s, &groups[i]);

		/* As for add_self, overlaps keep the module reported first. */
		if (r == -ENOMEM) {
			err = r;
			break;
		}
	}
	groups_free(groups, n);
	return err;
}
