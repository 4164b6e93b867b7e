/* Flame graphs and folded stacks.
 *
 * Private to tools/flame/ (fxt-flame).  The tree is flame.c's, its
 * loading flame-load.c's, the SVG flame-svg.c's.  A flame is a tree of call
 * paths: one node per distinct stack (root; optionally a process and a
 * thread frame; then the functions, outermost first), with the inclusive
 * time, the self time and the number of slices of that path.  It is built
 * from the slices that tools/profile/profile.c reconstructs: those of
 * calls, or (flame_set_samples()) those of stack samples, never the two
 * together.
 *
 * Event order.  profile.c hands out the ancestor path of a slice only when
 * the thread's complete events come parents first.  Threads whose complete
 * events come children first (an exit-time flusher, Fuchsia's scoped
 * duration macros) are therefore found in a first, cheap pass over the
 * archive (records only, no stacks), and for them alone the slices are
 * collected as (start, end, name) and nested by sorting, so memory there is
 * proportional to that thread's slices.  Every other thread streams into
 * the tree in memory proportional to the distinct paths.  Standard input
 * is spooled to a temporary file to allow the two passes.
 *
 * Depth.  A path holds at most max_depth function frames (default
 * FLAME_DEFAULT_MAX_DEPTH, see flame_set_limits()): the slices deeper than
 * that on a path become one marker frame "[deeper frames: N]" (N: how many
 * slices it stands for, its calls; its total is the time of the outermost
 * of them, its self time theirs).  Optionally, a function calling itself
 * directly stays one frame (merge_recursion), as flamegraph.pl's and
 * speedscope's recursion merging do.  So the tree, the folded output and
 * the SVG stay bounded whatever the depth: a 1,000,000-deep recursion is
 * max_depth + 1 frames (1 with merging), not a million paths of up to a
 * million names.  What does grow with depth is profile.c's open-slice
 * stack (a few words per level) and, for end-ordered threads, their slices.
 */
#ifndef FXT_TOOLS_FLAME_H
#define FXT_TOOLS_FLAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct tool_input; /* tools/front/common.h */

/* ------------------------------------------------------------ call paths */

enum flame_by {
	FLAME_BY_ALL,	  /* every thread merged under one root */
	FLAME_BY_PROCESS, /* root, then a frame per process */
	FLAME_BY_THREAD,  /* root, process, then a frame per thread */
};

enum flame_kind {
	FLAME_ROOT,
	FLAME_PROCESS, /* "NAME [pid]", or "pid N" without a process name */
	FLAME_THREAD,  /* "NAME [tid]", or "tid N" */
	FLAME_FUNCTION,
};

#define FLAME_NONE UINT32_MAX

struct flame_node {
	const char *name; /* NUL-terminated, owned by the flame */
	uint32_t parent;  /* FLAME_NONE for the root (node 0) */
	uint32_t depth;	  /* root = 0 */
	enum flame_kind kind;
	/* Functions: the sum of the durations of the slices on this path
	 * (recursion is a longer path, so nothing counts twice) and of their
	 * self times.  Root, process and thread frames: the sum of their
	 * children, self 0.  Frames still open at the end of the trace are
	 * counted up to its last timestamp, as fxt-report does. */
	uint64_t total_ns;
	uint64_t self_ns;
	uint64_t calls;
	/* Functions: where it is in the source, as the archive says
	 * (tools/front/srcloc.h), for the tooltip; NULL when it does not. */
	const char *loc;
};

struct flame;

int flame_new(struct flame **f, enum flame_by by);
void flame_free(struct flame *f);

/* The default depth limit, in function frames below the root, process and
 * thread frames. */
#define FLAME_DEFAULT_MAX_DEPTH 1024

/* Before flame_load(): keep at most max_depth function frames per path
 * (0: no limit, memory and output then grow with the deepest stack), the
 * deeper slices becoming a marker frame "[deeper frames: N]"; with
 * merge_recursion, a direct recursion (f calling f) is one frame of f whose
 * calls count every level, total the outermost frame's time, self every
 * level's self time.  Returns 0, or -EBUSY once loaded. */
int flame_set_limits(struct flame *f, unsigned max_depth, bool merge_recursion);

/* Before flame_load(): draw the stack samples (the slices of the sample
 * tracks, koid tid | FXT_SAMPLE_KOID_BIT: sampled time, an estimate of CPU
 * time) instead of the calls.  A sample track's thread frame shows the
 * sampled thread's tid.  Returns 0, or -EBUSY once loaded. */
int flame_set_samples(struct flame *f, bool samples);
/* Whether the flame is of stack samples (its nodes' calls are then frames
 * of the stack chart, not calls). */
bool flame_is_samples(const struct flame *f);
/* The slices of the kind not drawn: the samples', or with
 * flame_set_samples() the calls'. */
uint64_t flame_left_out(const struct flame *f);
/* The calls the tracer dropped and another writer's full buffers
 * (profile_dropped(), profile_buffer_full()) of the archive loaded. */
struct tool_losses;
const struct tool_losses *flame_losses(const struct flame *f);

/* Builds the tree from one archive (once per flame).  Returns 0 or a
 * negative errno with a one-line reason in err (see tool_read_records()). */
int flame_load(struct flame *f, const struct tool_input *in, char *err, size_t errlen);

/* Nodes, parents before children; node 0 is the root ("all").  They are
 * one array: flame_nodes() is its start, valid until flame_free(). */
size_t flame_nnodes(const struct flame *f);
const struct flame_node *flame_node(const struct flame *f, size_t i);
const struct flame_node *flame_nodes(const struct flame *f);
/* The node at the end of a path of names below the root, or NULL. */
const struct flame_node *flame_lookup(const struct flame *f, const char *const *names, size_t n);
/* Threads whose complete events came in end order (collected and sorted). */
uint64_t flame_end_ordered_threads(const struct flame *f);

/* Folded stacks, one line per path with self time: "a;b;c 1234\n", sorted
 * by the line's bytes, paths with no self time left out.  In names, ';'
 * becomes ':' and control characters '?', so lines always split right. */
int flame_write_folded(const struct flame *f, FILE *out);

struct flame_svg_opts {
	const char *title;	  /* heading (escaped); NULL for "Flame graph" */
	const char *subtitle;	  /* a second line, e.g. the archive; may be NULL */
	unsigned width;		  /* pixels; 0 for 1200 */
	const struct flame *base; /* non-NULL: a differential graph against it */
	bool normalize;		  /* diff: scale BASE to NEW's total time first */
};

/* A self-contained SVG: frames sized by inclusive time, children ordered
 * by name, a <title> per frame (name, times, calls; for stack samples
 * their sampled times only), labels cut to fit,
 * and a little script to zoom into a frame on click.  With opts->base,
 * frames are sized by this flame (NEW) and colored by the change of their
 * self time against the same path in base: red slower, blue faster,
 * white unchanged, saturated at +-100%; the root's title also tells how
 * many paths (and how much time) only base has.  Returns 0 or -errno (output). */
int flame_write_svg(const struct flame *f, const struct flame_svg_opts *opts, FILE *out);

#endif /* FXT_TOOLS_FLAME_H */
