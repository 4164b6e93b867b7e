/* Slices nested too deep for Perfetto (see depth.h). */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>

#include "fxt/depth.h"

int fxt__depth_warning(char *buf, size_t cap, uint64_t deeper, uint64_t max_depth, uint64_t pid,
		       uint64_t tid)
{
	return snprintf(buf, cap,
			"%" PRIu64 " slice%s nest deeper than %u levels (depth %" PRIu64
			" on pid %" PRIu64 " tid %" PRIu64
			"): Perfetto does not show them (its stat slice_max_depth_exceeded); "
			"fxt-report counts them, fxt-flame --max-depth draws them bounded",
			deeper, deeper == 1 ? "" : "s", FXT__SHOWN_DEPTH, max_depth, pid, tid);
}
