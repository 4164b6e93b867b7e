/* The aggregated call tree of an archive: one node per call path, with the
 * calls, inclusive (total) and exclusive (self) time of the slices on that
 * path, recursion folded.  Private to tools/ (fxt-tree; the interactive
 * view will draw the same tree).
 *
 * Built on the profile engine (tools/profile/profile.h): it rebuilds each
 * thread's stacks from the duration slices (begin/end pairs, complete
 * events) and hands over every finished slice with the rows of its open
 * ancestors; calltree.c walks that path down the tree.  A per-thread copy
 * of the last path and of the nodes it led to makes a slice cost the
 * compare of its path and a lookup for the part that changed only (one
 * for a leaf after its sibling, none for a repeated call); lookups go by
 * (parent node, row) in an integer hash, never by name.
 *
 * Recursion: walking a path down, a row that is already on the path of
 * the current node (the function called itself, directly or through a
 * cycle) does not go one level deeper: the walk goes back to that node,
 * which is marked recursive.  So f -> f -> f ... is one node "f" whose
 * calls count every frame, whose self time is the sum of theirs, and whose
 * total counts only the outermost frame of each nest; a -> b -> a -> b ...
 * is "a" (marked) with the child "b".  The depth of the tree is thus
 * bounded by the number of distinct functions on a path.
 *
 * Group nodes: the roots of the tree are the children of one group node,
 * or with opts.by, of one group node per process or per thread (row
 * CALLTREE_GROUP, pid/tid set).  A group's total is the sum of its
 * top-level calls' durations: the traced time.
 *
 * Memory grows with the number of distinct call paths (after folding) and
 * threads, not with events; but for complete events in end order
 * (children before their parent, which other writers' exit-time flushers
 * write; fxtrace's own archives never do): a slice of such a thread comes
 * before its complete ancestors, so it is held (40 bytes) until the
 * archive is read, then the thread's slices are sorted by start and
 * nested by their intervals, as fxt-flame does. */
#ifndef FXT_TOOLS_CALLTREE_H
#define FXT_TOOLS_CALLTREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tools/front/common.h"
#include "tools/profile/profile.h"

#define CALLTREE_NONE  UINT32_MAX	  /* no node: a group's parent, no child */
#define CALLTREE_GROUP (UINT32_MAX - 1) /* the row of a group node */

struct calltree_node {
	uint32_t parent;       /* CALLTREE_NONE for a group */
	uint32_t row;	       /* profile row, or CALLTREE_GROUP */
	uint32_t first_child;  /* CALLTREE_NONE: a leaf */
	uint32_t next_sibling; /* in creation order; see calltree_children() */
	uint32_t depth;	       /* 0 for a group, 1 for a top-level call */
	bool recursive;	       /* a call of it was folded into it */
	uint64_t calls, total_ns, self_ns;
	uint64_t open;	   /* its frames that the trace never closed */
	uint64_t pid, tid; /* a group's (0 when not grouped that way) */
	/* calltree.c's: the lowest path index it was last seen at, and the
	 * thread that saw it there (outermost test of total_ns); the last
	 * steps taken from it (row + 1, node) to an odd and to an even row,
	 * tried before the lookup (a parent calling two functions in turn
	 * then misses less). */
	uint32_t mark_thr, mark_idx;
	uint32_t hint_row[2], hint_node[2];
};

struct calltree_opts {
	enum profile_by by;    /* groups: one, one per process, one per thread */
	struct tool_pick pick; /* only the slices of these threads */
	/* Optional: also given every slice the tree takes (of the picked
	 * threads, not stack samples) as the profile hands it over, before
	 * the tree counts it; rows name functions (calltree_row_name()).  For
	 * a view built in the same pass (fxt-view's timeline). */
	profile_slice_fn also;
	void *also_ctx;
};

struct calltree;

int calltree_new(struct calltree **t, const struct calltree_opts *opts);
void calltree_free(struct calltree *t);

/* Reads the archive at path ("-": standard input) into the tree.
 * Returns 0, or a negative errno with a one-line reason in err (the
 * profile engine's: not an archive, damage, an empty file). */
int calltree_load(struct calltree *t, const char *path, char *err, size_t errlen);

/* The nodes, groups first (node 0 is the first group); valid until the
 * tree is freed.  Node indices are stable. */
size_t calltree_nnodes(const struct calltree *t);
const struct calltree_node *calltree_node(const struct calltree *t, uint32_t i);

/* Indices of the groups (n of them). */
size_t calltree_groups(const struct calltree *t, const uint32_t **v);

/* A node's function and its category ("" for a group). */
const char *calltree_name(const struct calltree *t, const struct calltree_node *n);
const char *calltree_category(const struct calltree *t, const struct calltree_node *n);

/* Orders every node's children (first_child, next_sibling) by total time,
 * descending, then name, then category: call once the tree is complete
 * (calltree_load() and calltree_focus() do).  Returns 0 or -ENOMEM. */
int calltree_sort(struct calltree *t);

/* The function and category of a profile row (a node's row, a slice's
 * path entry). */
const char *calltree_row_name(const struct calltree *t, uint32_t row);
const char *calltree_row_category(const struct calltree *t, uint32_t row);

/* The first and last timestamps of the archive (ns); 0 before a load. */
uint64_t calltree_start_ns(const struct calltree *t);
uint64_t calltree_end_ns(const struct calltree *t);

/* Records the tracer could not write (profile_dropped(): the archive's
 * drop markers), and in *nthreads (may be NULL) the threads that dropped;
 * what a flight recorder overwrote (profile_overwritten()).  0: none. */
uint64_t calltree_dropped(const struct calltree *t, uint64_t *nthreads);
uint64_t calltree_overwritten(const struct calltree *t);
/* Events the kernel lost (profile_kernel_lost()): not calls. */
uint64_t calltree_kernel_lost(const struct calltree *t);
/* Another writer's "buffer full" provider events (profile_buffer_full()). */
uint64_t calltree_buffer_full(const struct calltree *t);

/* The traced time: the sum of the groups' totals (ns). */
uint64_t calltree_total_ns(const struct calltree *t);

/* Threads whose complete events came in end order (see above), and the
 * slices the tree holds. */
uint64_t calltree_end_ordered(const struct calltree *t);
uint64_t calltree_nslices(const struct calltree *t);
uint64_t calltree_nrecords(const struct calltree *t);

/* Focus on the function `name` (every category): *callees gets a tree
 * whose roots are the function (one per category and group), with the
 * calls it made below, merged over every path that reaches it; *callers
 * the inverted tree: the function at the root, its callers as children,
 * their callers below, each node with the numbers of the focused
 * function's calls through that chain.  Both share t's names (free them
 * before t).  Returns 0, -ENOENT when no call has that name, -ENOMEM. */
int calltree_focus(const struct calltree *t, const char *name, struct calltree **callers,
		   struct calltree **callees);

#endif /* FXT_TOOLS_CALLTREE_H */
