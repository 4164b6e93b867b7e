/* Private to tools/flame*.c: the flame graph's tree as its three files
 * share it.  flame.c owns the tables and the bounds, flame-load.c fills
 * them from an archive, flame-svg.c only reads the public accessors. */
#ifndef FXT_TOOLS_FLAME_TREE_H
#define FXT_TOOLS_FLAME_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tools/front/common.h"
#include "tools/flame/flame.h"
#include "tools/profile/profile.h"

#define GROW(v, cap, need) TOOL_GROW(v, cap, need)

/* The name interned for the marker frame of the slices past the depth
 * limit; finish_groups() renames its nodes "[deeper frames: N]". */
#define DEEPER_KEY "[deeper frames]"

/* A slice of an end-ordered thread, waiting for the sort. */
struct eslice {
	struct profile_span span; /* first: profile_span_cmp() */
	uint32_t label;
};

/* A thread, or with tid = PROC_TID the stand-in for a process (its entry
 * index names the process frame). */
#define PROC_TID UINT64_MAX

struct fthread {
	uint64_t pid, tid;
	uint32_t group; /* the node the thread's stacks hang from; FLAME_NONE = not yet */

	/* Pass 1: end-order detection.  bstack holds the starts of open
	 * begin events, to know the ends of begin/end frames. */
	uint64_t last_start, min_end;
	uint64_t *bstack;
	size_t nb, capb;
	bool seen, end_ordered;

	/* Pass 2, start order: the last path resolved (rows and nodes). */
	uint32_t *crow, *cnode;
	size_t ncache, capcache;

	/* Pass 2, end order. */
	struct eslice *es;
	size_t nes, capes;
};

struct kname {
	unsigned type; /* FXT_OBJ_PROCESS or FXT_OBJ_THREAD */
	uint64_t koid;
	uint64_t seq;
	uint32_t label;
};

struct flame {
	enum flame_by by;
	bool loaded;

	/* Interned, sanitized names.  */
	char **labels;
	size_t nlabels, caplabels;
	uint32_t *labtab; /* label + 1 */
	size_t labmask;

	struct flame_node *nodes;
	uint32_t *nkey; /* per node: label (functions) or thread entry (groups) */
	size_t nnodes, capnodes;
	uint32_t *nodetab; /* node + 1 */
	size_t nodemask;

	struct fthread *thr;
	size_t nthr, capthr;
	uint32_t *thrtab; /* entry + 1 */
	size_t thrmask;
	size_t last_thr;

	struct kname *kn;
	size_t nkn, capkn;

	/* During loading. */
	struct profile *prof; /* only inside flame_load() */
	uint32_t *row_label;  /* profile row -> label + 1 */
	size_t caprl;
	int err;
	uint64_t end_ordered;

	/* Bounds (flame_set_limits()): function frames kept per stack, and
	 * whether a function calling itself stays one frame.  deeper is the
	 * label of the marker frame that stands for the frames past the
	 * limit (FLAME_NONE: no limit). */
	unsigned max_depth;
	bool merge_recursion;
	uint32_t deeper;

	/* flame_set_samples(): the sample tracks' slices are drawn, not the
	 * calls'; left_out counts the slices of the other kind. */
	bool samples;
	uint64_t left_out;

	/* The records lost (the profile's count, flame_losses()). */
	struct tool_losses losses;
};

/* Returns the label of a name (interning a copy cleaned by
 * tool_clean_str()), or -ENOMEM. */
int64_t flame__label_get(struct flame *f, const char *s, size_t len);

/* The entry of (pid, tid), created if needed; its index or -ENOMEM.
 * Entries move when the table grows: hold indices, not pointers. */
int64_t flame__thread_find(struct flame *f, uint64_t pid, uint64_t tid);

/* flame__thread_find(), with the thread of the last call first: a thread's
 * events usually come in runs. */
static inline int64_t flame__thread_get(struct flame *f, uint64_t pid, uint64_t tid)
{
	if (f->nthr && f->thr[f->last_thr].pid == pid && f->thr[f->last_thr].tid == tid)
		return (int64_t)f->last_thr;
	return flame__thread_find(f, pid, tid);
}

/* The node a thread's stacks hang from, per --by (the root, its process's
 * frame, or its own frame under that); created if needed, or -ENOMEM. */
int64_t flame__thread_group(struct flame *f, size_t ti);

/* The frame of function `label` called from node `parent` (a function,
 * or the thread's group node `group`), with the bounds applied: a function
 * calling itself stays in its frame when merging recursion, everything
 * below a marker frame is the marker, and a function past the depth limit
 * becomes the marker.  Returns the node (parent itself when merged) or
 * -ENOMEM. */
int64_t flame__frame_child(struct flame *f, uint32_t parent, uint32_t group, uint32_t label);

/* Frees what only loading needs (per-thread stacks, caches, slices). */
void flame__threads_release(struct flame *f);

#endif /* FXT_TOOLS_FLAME_TREE_H */
