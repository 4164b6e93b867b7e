/* Unit tests of the conversion's name table (convert/symnames.c): an
 * entry found or made stays where it is while the table grows, as the
 * converter holds several at once (a call and its caller, a stack's
 * frames); every address keeps its own name. */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include "convert/symnames.h"
#include "symbolizer/symbolizer.h"
#include "tests/lib/tap.h"

#define N 5000 /* entries: the table grows from 1024 slots four times */

static char names[N][16];

/* A lookup naming address 16 * (i + 1) "fn<i>". */
static const struct fxt_sym_info *lookup(void *ctx, uint64_t addr)
{
	static struct fxt_sym_info info;
	size_t i = (size_t)(addr / 16) - 1;

	(void)ctx;
	memset(&info, 0, sizeof(info));
	info.name = names[i];
	info.module = "prog";
	info.start = addr;
	return &info;
}

int main(void)
{
	struct sym_table t;
	struct sym_entry *first, *held[N];
	size_t moved = 0, wrong = 0;

	plan(4);
	for (size_t i = 0; i < N; i++)
		snprintf(names[i], sizeof(names[i]), "fn%zu", i);
	conv_names_init(&t, lookup, NULL, NULL);
	first = conv_names_get(&t, 16);
	ok(first && strcmp(first->name, "fn0") == 0, "the first entry is named");
	for (size_t i = 0; i < N; i++)
		held[i] = conv_names_get(&t, 16 * (i + 1));
	/* Held across the growth: each still the table's entry, with its
	 * name (the old code moved them, and freed where they were). */
	for (size_t i = 0; i < N; i++) {
		struct sym_entry *e = conv_names_get(&t, 16 * (i + 1));

		moved += e != held[i];
		wrong += !e || e->addr != 16 * (i + 1) || strcmp(e->name, names[i]) != 0;
	}
	ok(held[0] == first && strcmp(first->name, "fn0") == 0 && first->addr == 16,
	   "an entry held while the table grew is still good");
	ok(moved == 0, "no entry moved (%zu did)", moved);
	ok(wrong == 0 && t.used == N, "%zu entries, each with its own name (%zu wrong)", t.used,
	   wrong);
	conv_names_free(&t);
	return exit_status();
}
