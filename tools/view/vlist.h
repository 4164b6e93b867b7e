/* fxt-view's replay list, its state: shared by the list (vlist.c: the
 * lines held, reading, drawing, keys) and its index and searches
 * (vindex.c).  Private to tools/view/. */
#ifndef FXT_TOOLS_VIEW_VLIST_H
#define FXT_TOOLS_VIEW_VLIST_H

#include <pthread.h>
#include <regex.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tools/calls/callmerge.h"
#include "tools/calls/callstream.h"

#define VLIST_KEEP 4096
#define VLIST_INDEX_BYTES (32u << 20)
#define VLIST_FIRST_STEP  8192
#define VLIST_SLICE_S	  0.03 /* a search's work between two keys */
/* The names in a stretch between two marks, as bits of their hashes; the
 * distinct names, at most VLIST_NAMES (else no stretch is skipped). */
#define VLIST_BITS	  512
#define VLIST_NAMES	  65536
#define VLIST_NAME_BYTES  (4u << 20)

struct vmark {
	uint64_t item; /* the index of the item the merge gives next */
	uint64_t ts;   /* the time of the item before it (ns) */
	struct callmerge_mark *mk;
	uint64_t bits[VLIST_BITS / 64]; /* the names from item to the next mark */
};

/* The distinct names of the items (open addressing on their hashes). */
struct vnames {
	uint64_t *h;	/* 0: empty (a hash of 0 is taken as 1) */
	uint32_t *off;	/* into text, NUL-terminated */
	uint32_t mask, n;
	char *text;
	size_t ntext, captext;
	bool full;	/* more than VLIST_NAMES: not all are here */
	uint64_t cache[16]; /* hashes met last */
};

struct vline {
	char *text;  /* the line, without its newline */
	char *name;  /* the call's name, NUL-terminated, for the search */
};

struct vlist {
	const char *path;
	bool opened;
	/* The merge's pass runs on a thread of its own from the start, so
	 * that the view answers keys meanwhile: `ready` is set (release)
	 * when pm, prc and perr are final. */
	pthread_t worker;
	bool started;
	atomic_bool ready;
	struct callmerge *pm;
	int prc;
	char perr[256];
	/* The index, made by the same thread on its own fork of the merge
	 * (idx); `lock` guards the marks (the worker adds and thins them,
	 * the view resumes from them).  `indexed` is set (release) when
	 * total is the number of items; idx_failed when it cannot be. */
	struct callmerge *idx;
	pthread_mutex_t lock;
	struct vmark *marks;
	size_t nmarks, capmarks, mark_bytes;
	uint64_t step;
	atomic_bool indexed, idx_failed, stop;
	atomic_uint progress; /* per mille, by time */
	uint64_t total;
	uint64_t bits0[VLIST_BITS / 64]; /* the names before the first mark */
	struct vnames names;
	bool want_end;	   /* End pressed before the index was complete */
	double want_end_s; /* when (view_now_s()) */
	double end_waited; /* seconds from it to the end shown (0: none) */
	/* ':' asked before the merge's pass ended: done when it ends */
	bool want_go;
	struct callstream_when want_w;
	/* a search past the lines held, on sm (a fork of m): the item sm
	 * gives next is sidx; forward, the first match from sfrom on;
	 * backward, the last one in [slo, shi) (slast), stretch by stretch.
	 * With the index complete, `filter`: the stretches whose names have
	 * none of the bits `want` (the matching names') are skipped; send
	 * ends the stretch read forward. */
	struct callmerge *sm;
	bool searching, sback, filter;
	bool sgo;	/* not a name: the first item at sgo_ts or later */
	uint64_t sgo_ts;
	uint64_t sidx, sfrom, slo, shi, slast, send;
	uint64_t want[VLIST_BITS / 64];
	uint64_t sts; /* the time of the item read last (forward: progress) */
	const regex_t *sre;
	struct callmerge *m;	/* time order; else archive order: */
	struct fxt_reader *r;
	struct callstream *cs;
	const char *order;	/* what the header says of the order */
	bool eof;
	char err[256];
	uint64_t seen;	   /* items given by the stream so far */
	uint64_t base;	   /* the index of line[0] */
	uint64_t skip_to;  /* items before it are counted only */
	/* counting: items are only counted, and with `find` matched: the
	 * first match from find_from on (or with back, the last before it)
	 * goes to found */
	bool counting, back;
	const regex_t *find;
	uint64_t find_from, found;
	char *name;
	size_t capname;
	struct vline *line;
	size_t n;
	uint64_t top, sel; /* indices of items */
};


/* vindex.c: the thread that makes the merge (its first pass), then the
 * index; freeing what the index holds (after the thread is joined). */
void *vindex_worker(void *l);
void vindex_free(struct vlist *l);

/* The last mark at item `at` or before (NULL: none), with the lock held;
 * and merge x put there (at the first item when none): the index of the
 * item x gives next, or -errno. */
const struct vmark *vindex_mark_before(const struct vlist *l, uint64_t at);
int64_t vindex_resume_before(struct vlist *l, struct callmerge *x, uint64_t at);

/* A search past the lines held: started (false: nothing to read, no
 * match), then a slice of at most VLIST_SLICE_S: UINT64_MAX while it goes
 * on, else the match (UINT64_MAX - 1: none). */
bool vindex_search_start(struct vlist *l, const regex_t *re, bool back, uint64_t from);
/* The same, for the first item at time ts (ns) or later, from the last
 * mark before that time (the merge is in time order). */
bool vindex_goto_start(struct vlist *l, uint64_t ts);
uint64_t vindex_search_slice(struct vlist *l);

#endif /* FXT_TOOLS_VIEW_VLIST_H */
