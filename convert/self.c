/* The entry point of libfxt-convert.so: the converter as a library of its
 * own, which the agent loads (dlopen) only when a process converts its own
 * spool -- without fxt-run, or once fxt-run is gone.  Under fxt-run no
 * traced process loads it, nor libdw and what libdw loads. */
#include "config.h"

#include "convert/convert.h"
#include "symbolizer/symbolizer.h"

#define EXPORT __attribute__((visibility("default")))

EXPORT int fxt_convert_spool_self(const char *spool_path, const char *output, long pid, unsigned n,
				  const char *session, char *path, size_t cap, uint64_t *events,
				  uint64_t *threads, uint64_t *dropped, uint64_t *bytes);

/* convert_spool_named() for the agent, with plain types across the
 * dlopen boundary. */
int fxt_convert_spool_self(const char *spool_path, const char *output, long pid, unsigned n,
			   const char *session, char *path, size_t cap, uint64_t *events,
			   uint64_t *threads, uint64_t *dropped, uint64_t *bytes)
{
	/* Consumed: a process killed after its archive got its name leaves
	 * a spool that says so, converted once (convert.h). */
	struct convert_opts o = { .session = session, .consume = true, .serial = true };
	struct convert_result res;
	int err;

	/* In the traced program: nothing written to the user's cache. */
	fxt_sym_loccache_keep(false);
	err = convert_spool_named(spool_path, output, pid, n, &o, &res, path, cap, NULL);

	*events = res.events;
	*threads = res.threads;
	*dropped = res.dropped;
	*bytes = res.bytes;
	convert_result_free(&res);
	return err;
}

EXPORT int fxt_convert_snapshot_self(const char *spool_path, const char *archive_path,
				     const char *session);

/* convert_spool() of a snapshot's spool (agent/snapshot.h) into its
 * archive, for the agent. */
int fxt_convert_snapshot_self(const char *spool_path, const char *archive_path, const char *session)
{
	struct convert_opts o = { .session = session, .serial = true };
	struct convert_result res;
	int err = convert_spool(spool_path, archive_path, &o, &res);

	convert_result_free(&res);
	return err;
}
