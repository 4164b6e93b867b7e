/* The heap counter: the COUNTER deltas of every thread (spool/records.h),
 * summed in time order into counter events "heap" (category "libc.mem",
 * argument "bytes_in_use") on the process's main thread.  Private to
 * convert/. */
#ifndef FXT_CONVERT_COUNTERS_H
#define FXT_CONVERT_COUNTERS_H

#include <stddef.h>
#include <stdint.h>

#include <fxt/writer.h>

#include "convert/timebase.h"

/* A change of the heap counter, from any thread. */
struct counter_delta {
	uint64_t ts;
	int64_t delta;
	uint64_t seq; /* stable order among equal timestamps */
};

struct heap_counter {
	struct counter_delta *v;
	size_t n, cap;
};

/* A delta of `delta` bytes at `ts`.  0 or -ENOMEM. */
int conv_heap_add(struct heap_counter *h, uint64_t ts, int64_t delta);

/* Writes the counter events of process `pid`, each timestamp in ns
 * (conv_tb_ns()), counting them in *events.  0 or the writer's error. */
int conv_heap_emit(struct heap_counter *h, struct fxt_writer *w, uint64_t pid,
		   const struct conv_tb *tb, uint64_t *events);

/* Appends the deltas of `from` (a thread's, converted early) to `h`,
 * after those already there, and empties `from`.  0 or -ENOMEM. */
int conv_heap_take(struct heap_counter *h, struct heap_counter *from);

void conv_heap_free(struct heap_counter *h);

#endif /* FXT_CONVERT_COUNTERS_H */
