/* Where the functions of an archive are in the source: the records
 * fxt-run writes once per function (include/fxt/format.h,
 * FXT_OBJ_FUNCTION), kept by (category, name), the key of the function's
 * slices, for the tools that show them (fxt-report --srcline, fxt-flame's
 * tooltips, fxt-export's arguments).  An archive without them has no
 * location: tool_srcloc_find() says NULL.  When processes disagree (two
 * builds of one module), the first record read wins. */
#ifndef FXT_TOOLS_SRCLOC_H
#define FXT_TOOLS_SRCLOC_H

#include <stddef.h>
#include <stdint.h>

struct fxt_record;
struct fxt_string;

struct tool_srcloc_ent {
	uint64_t hash;
	char *cat, *name, *loc; /* NUL-terminated copies */
	size_t cat_len, name_len;
};

struct tool_srcloc {
	struct tool_srcloc_ent *v;
	size_t n, cap; /* cap is 0 or a power of two; half full at most */
};

/* The location `rec`, a function's record (FXT_OBJ_FUNCTION), says, as
 * text ("src/a.c:12", "src/b.c:3 (inlined)", "(no debug info)"), in a
 * string malloc'd: of either form (include/fxt/format.h); NULL when it
 * says none (errno 0) or on ENOMEM (errno ENOMEM). */
char *tool_srcloc_text(const struct fxt_record *rec);

/* Notes `rec` when it is a function's location: 1, else 0; -ENOMEM. */
int tool_srcloc_see(struct tool_srcloc *l, const struct fxt_record *rec);

/* Whether `rec` is a function's record (0: not), and one that names its
 * module (2, with its key in *cat and *name) or not (1). */
int tool_srcloc_key(const struct fxt_record *rec, const struct fxt_string **cat,
		    const struct fxt_string **name);

/* Notes the key (cat, name) alone (its location ""): a set of functions,
 * asked with tool_srcloc_find().  0, or -ENOMEM. */
int tool_srcloc_note(struct tool_srcloc *l, const char *cat, size_t cat_len, const char *name,
		     size_t name_len);

/* The location of the function `name` of category `cat` ("src/a.c:12",
 * "(no debug info)"), or NULL when the archive did not say. */
const char *tool_srcloc_find(const struct tool_srcloc *l, const char *cat, size_t cat_len,
			     const char *name, size_t name_len);

void tool_srcloc_free(struct tool_srcloc *l);

#endif /* FXT_TOOLS_SRCLOC_H */
