/* The entry point of libfxt-convert.so: the converter as a library of its
 * own, which the agent loads (dlopen) only when a process converts its own
 * spool -- without fxt-run, or once fxt-run is gone.  Under fxt-run no
 * traced process loads it, nor libdw and what libdw loads. */
#include "config.h"

#include "convert/convert.h"

#define EXPORT __attribute__((visibility("default")))

EXPORT int fxt_convert_spool_self(const char *spool_path, const char *archive_path,
				  const char *session, int no_clobber, uint64_t *events,
				  uint64_t *threads, uint64_t *dropped, uint64_t *bytes);

int fxt_convert_spool_self(const char *spool_path, const char *archive_path, const char *session,
			   int no_clobber, uint64_t *events, uint64_t *threads, uint64_t *dropped,
			   uint64_t *bytes)
{
	struct convert_opts o = { .session = session, .no_clobber = no_clobber != 0 };
	struct convert_result res;
	int err = convert_spool(spool_path, archive_path, &o, &res);

	*events = res.events;
	*threads = res.threads;
	*dropped = res.dropped;
	*bytes = res.bytes;
	return err;
}
