/* wordfreq: a small multi-threaded word counter, traced by
 * tests/real/real-wordfreq.sh.  Not a fixture of hand-made calls: it reads
 * its input, splits the work over threads, loads a plug-in and writes a
 * report, as a real program does; the test knows how often each of the
 * functions below runs for a given input. */
#ifndef FXT_TESTS_REAL_WF_H
#define FXT_TESTS_REAL_WF_H

#include <stddef.h>

/* Out of line and not cloned, so the call counts hold at every -O level. */
#if defined(__clang__)
#define WF_NOINLINE __attribute__((noinline))
#else
#define WF_NOINLINE __attribute__((noinline, noipa))
#endif

struct wf_entry {
	char *word;
	unsigned long count;
};

/* An open-addressing hash table of words to counts. */
struct wf_table {
	struct wf_entry *slots;
	size_t cap; /* a power of two */
	size_t len;
};

/* The plug-in's one function: rewrites WORD in place (e.g. lower case). */
typedef void wf_normalize_fn(char *word);
#define WF_PLUGIN_SYMBOL "wf_plugin_normalize"

void wf_table_init(struct wf_table *t);
void wf_table_free(struct wf_table *t);
/* Adds N to WORD's count (copying WORD when it is new).  0 or -ENOMEM. */
int wf_table_add(struct wf_table *t, const char *word, unsigned long n);
/* Adds every count of SRC to DST.  0 or -ENOMEM. */
int wf_table_merge(struct wf_table *dst, const struct wf_table *src);
/* The entries, most frequent first (ties by word); NULL on ENOMEM.  The
 * array belongs to the caller; the words to the table. */
struct wf_entry *wf_table_sorted(const struct wf_table *t);

#endif /* FXT_TESTS_REAL_WF_H */
