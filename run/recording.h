/* What a traced process can be asked to record, as the agent (FXT_LIBC,
 * FXT_SAMPLE, FXT_MODE, FXT_BUFFER_SIZE ...), its spool header, the
 * converter and fxt-run's options all name it: the groups of libc calls,
 * the recording modes, the bound on the sampling rate, and the spelling of
 * sizes.  The one owner of those
 * names and of their parsers, which run inside the traced process too:
 * no malloc, no stdio, no locale. */
#ifndef FXT_RUN_RECORDING_H
#define FXT_RUN_RECORDING_H

#include <stdbool.h>
#include <stdint.h>

enum agent_group {
	AGENT_G_IO = 1u << 0,
	AGENT_G_MEM = 1u << 1,
	AGENT_G_THREAD = 1u << 2,
	AGENT_G_SYNC = 1u << 3,
	AGENT_G_PROC = 1u << 4,
	AGENT_G_SLEEP = 1u << 5,
	AGENT_G_LOG = 1u << 6,
	AGENT_G_ALL = (1u << 7) - 1,
	/* Internal frames (the thread's life, fork's child side): recorded
	 * when their group is; category "libc.thread" / "libc.proc". */
};

/* Each group's name, as FXT_LIBC and --libc spell it; the category of its
 * calls is "libc." and the name. */
#define AGENT_G_NAME_IO	    "io"
#define AGENT_G_NAME_MEM    "mem"
#define AGENT_G_NAME_THREAD "thread"
#define AGENT_G_NAME_SYNC   "sync"
#define AGENT_G_NAME_PROC   "proc"
#define AGENT_G_NAME_SLEEP  "sleep"
#define AGENT_G_NAME_LOG    "log"

/* The default of FXT_LIBC: everything but the two groups whose calls are
 * frequent and cheap (mem, sync), where recording would dominate. */
#define AGENT_G_DEFAULT (AGENT_G_IO | AGENT_G_THREAD | AGENT_G_PROC | AGENT_G_SLEEP | AGENT_G_LOG)

/* Recording modes (FXT_MODE, fxt-run --mode), each spool header says
 * which it was recorded in:
 *   stream    every call, written back to the spool as the buffers fill,
 *             until FXT_MAX_SIZE; FXT_BUFFER_SIZE bounds the buffers
 *             mapped at once in the whole process;
 *   oneshot   each thread records until it has filled FXT_BUFFER_SIZE,
 *             then stops: the start is kept, the rest counted as drops;
 *   circular  each thread keeps its newest FXT_BUFFER_SIZE (a flight
 *             recorder): a ring of chunks, the oldest overwritten, the
 *             calls overwritten counted. */
enum fxt_mode {
	FXT_MODE_STREAM = 0,
	FXT_MODE_ONESHOT = 1,
	FXT_MODE_CIRCULAR = 2,
};

#define FXT_MODE_NAMES "stream, oneshot, circular"

/* FXT_BUFFER_SIZE's default: per process in stream mode, per thread in
 * the other two; run_mode_default_buffer() chooses. */
#define FXT_DEFAULT_BUFFER_STREAM (64ull << 20)
#define FXT_DEFAULT_BUFFER_THREAD (16ull << 20)

/* Parses a mode's name.  0, or -EINVAL for anything else. */
int run_mode_parse(const char *s, enum fxt_mode *out);

/* A mode's name ("stream"); "?" for an unknown value. */
const char *run_mode_name(unsigned mode);

/* The mode a run records in, for fxt-run's checks and the agent's
 * loading alike: `mode` as asked for (given) or its default; snapshot
 * rules (has_rules) make it circular unless another mode was given.  *why
 * is then the reason the rules cannot apply ("the mode is not circular";
 * fxt-run refuses the run, the agent drops the rules), else NULL. */
enum fxt_mode run_mode_resolve(bool given, enum fxt_mode mode, bool has_rules, const char **why);

/* FXT_BUFFER_SIZE's default in a mode. */
uint64_t run_mode_default_buffer(enum fxt_mode mode);

/* FXT_SAMPLE's bound, in samples per second of a thread's CPU time. */
#define AGENT_MAX_SAMPLE_HZ 10000u

/* Parses "io,mem,...", "all", "none" (also "" = none) into group bits.
 * Returns -1 on an unknown name. */
int run_libc_parse(const char *s, unsigned *out);

/* Group name ("io") of one group bit. */
const char *run_libc_group_name(unsigned group_bit);

/* Parses a size, as FXT_BUFFER_SIZE, FXT_CHUNK_SIZE, FXT_MAX_SIZE and
 * fxt-run's --buffer-size and --max-size take it: a decimal number of
 * bytes, optionally followed by B ("4096", "4096B"), or by a multiplier
 * K, M or G, powers of 1024, itself optionally followed by B, i or iB
 * ("64k" = "64KB" = "64KiB" = 65536).  Letters in either case ("1gib");
 * no sign, space or fraction.  Returns 0, -EINVAL (not a size) or
 * -ERANGE (more than 2^64 - 1 bytes). */
int run_parse_size(const char *s, uint64_t *out);

/* Parses a duration, as FXT_MIN_DURATION and fxt-run's --min-duration take
 * it: a decimal number, optionally with a fraction, followed by a unit,
 * ns, us, ms or s, or by none (ns): "150", "2.5us", "10ms", "1s".
 * Returns 0 and nanoseconds, -EINVAL (not a duration) or -ERANGE. */
int run_parse_duration(const char *s, uint64_t *out);

/* The same for a window of time (fxt-run -p --duration): a bare number is
 * seconds ("10", "2.5"), a unit says otherwise ("500ms"). */
int run_parse_seconds(const char *s, uint64_t *out);

/* Snapshots (FXT_SNAPSHOT_IF, fxt-run --snapshot-if): a rule is
 * "NAME>DURATION", NAME a function's name or a glob on it (fnmatch(3):
 * "parse_*", "demo::Stack<int>::push"), or "libc.GROUP" for the calls of
 * a libc group ("libc.io"); DURATION as run_parse_duration() takes it.
 * The rule is split at its last '>'. */
#define FXT_SNAPSHOT_NAME_MAX	  128u /* bytes of NAME, its NUL included */
#define FXT_MAX_SNAPSHOT_RULES	  16u
#define FXT_DEFAULT_MAX_SNAPSHOTS 10u

/* A rule may instead test a value of a patched function's call (fxt-run
 * --patch, its registers read as for --args/--retval, run/argspec.h):
 * "NAME@retval<0", "NAME@arg2>=4096", "NAME@retval==NULL": the return
 * value or the N-th argument (from 1), an operator (< <= > >= == !=) and
 * an integer (decimal, or hexadecimal with 0x; a '-' before it) or NULL
 * (0).  The rule is then split at its last '@'; fxt-run works out where
 * the value is and how it compares (signed or not, its width). */
enum fxt_snap_op { FXT_OP_LT, FXT_OP_LE, FXT_OP_GT, FXT_OP_GE, FXT_OP_EQ, FXT_OP_NE };
#define FXT_SNAP_RETVAL 0xffu /* `value_of`: the return value */

struct fxt_snapshot_rule {
	char name[FXT_SNAPSHOT_NAME_MAX];
	unsigned libc_group; /* AGENT_G_* for "libc.GROUP"; 0: functions */
	uint64_t limit_ns;
	/* A value rule: what it tests, 0 for a duration rule; else the
	 * argument's number (1 ...) or FXT_SNAP_RETVAL. */
	unsigned value_of;
	enum fxt_snap_op op;
	uint64_t value; /* the integer, as 64 bits (two's complement if negative) */
	bool negative;	/* it was written with a '-' */
};

/* Parses the rule in s[0, len).  0, or -EINVAL: no '>', an empty or too
 * long NAME, "libc." and no group's name, or not a duration; for a value
 * rule, *pos (if not NULL) is then the offset in s of what is wrong and
 * *what (if not NULL) says what was expected there. */
int run_snapshot_rule_parse(const char *s, size_t len, struct fxt_snapshot_rule *out);
int run_snapshot_rule_parse_at(const char *s, size_t len, struct fxt_snapshot_rule *out,
			       size_t *pos, const char **what);

/* A pattern of FXT_INCLUDE (fxt-run --include, run/settings.def) may end
 * in the same test of an argument: "lookup@arg1==42" records lookup's
 * calls (and what they call) only when its first argument is 42, tested
 * at the entry of a patched call.  Splits s[0, len): 1 with *out filled
 * (out->name the pattern, out->value_of the argument) when it ends in a
 * test, 0 when it does not (a plain pattern), -EINVAL when the test is
 * wrong, with *pos and *what as run_snapshot_rule_parse_at() gives them:
 * a test of retval included, which the entry cannot make. */
int run_include_test_parse(const char *s, size_t len, struct fxt_snapshot_rule *out, size_t *pos,
			   const char **what);
#define FXT_MAX_INCLUDE_TESTS 16u /* patterns of FXT_INCLUDE with a test */

/* The rule as text ("parse>10000000ns", "open_db@retval<0") into buf. */
void run_snapshot_rule_format(const struct fxt_snapshot_rule *r, char *buf, size_t cap);

/* Whether raw, a value of `width` bytes (1, 2, 4, 8) that is signed or
 * not, passes the value rule r's test. */
bool run_snapshot_value_holds(const struct fxt_snapshot_rule *r, uint64_t raw, unsigned width,
			      bool is_signed);

#endif /* FXT_RUN_RECORDING_H */
