/* calltree_fixture: writes, with the writer library, an archive whose
 * nesting is known, to test tests/helpers/fxt_calltree itself (the agent tests
 * rely on it to find overlaps, open slices and drops):
 *
 *   thread "main" (tid 101): complete events a [10, 20] > b [11, 16] >
 *     c [12, 13], c [14, 15], written children first (as at exit), and
 *     an end event "zz" that no begin matches;
 *   thread "worker" (tid 102): begin w @5 > begin x @6, end @7 > begin
 *     "open" @8 (never ended), a complete event ov [1, 6] that w starts
 *     inside of but outlives (an overlap), and an instant
 *     "fxt: 17 records dropped".
 *
 *	calltree_fixture FILE
 */
#include <stdio.h>
#include <string.h>

#include <fxt/writer.h>

static int event(struct fxt_writer *w, enum fxt_event_type type, uint64_t tid, const char *name,
		 uint64_t ts, uint64_t end)
{
	struct fxt_event e;

	memset(&e, 0, sizeof(e));
	e.type = type;
	e.ts = ts;
	e.extra = end;
	e.thread = fxt_writer_thread(w, 100, tid);
	e.category = fxt_writer_cstring(w, "test");
	e.name = fxt_writer_cstring(w, name);
	return fxt_writer_event(w, &e);
}

int main(int argc, char **argv)
{
	struct fxt_writer *w;
	int rc;

	if (argc != 2) {
		fputs("usage: calltree_fixture FILE\n", stderr);
		return 2;
	}
	rc = fxt_writer_open_path(&w, argv[1], 0);
	if (rc < 0) {
		fprintf(stderr, "calltree_fixture: %s: %s\n", argv[1], strerror(-rc));
		return 1;
	}
	rc = fxt_writer_magic(w);
	rc = rc ? rc : fxt_writer_provider(w, 1, "fixture");
	rc = rc ? rc : fxt_writer_initialization(w, 1000000000);
	rc = rc ? rc : fxt_writer_process_name(w, 100, "proc");
	rc = rc ? rc : fxt_writer_thread_name(w, 100, 101, "main");
	rc = rc ? rc : fxt_writer_thread_name(w, 100, 102, "worker");
	rc = rc ? rc : event(w, FXT_EVENT_DURATION_COMPLETE, 101, "c", 12, 13);
	rc = rc ? rc : event(w, FXT_EVENT_DURATION_COMPLETE, 101, "c", 14, 15);
	rc = rc ? rc : event(w, FXT_EVENT_DURATION_COMPLETE, 101, "b", 11, 16);
	rc = rc ? rc : event(w, FXT_EVENT_DURATION_COMPLETE, 101, "a", 10, 20);
	rc = rc ? rc : event(w, FXT_EVENT_DURATION_BEGIN, 102, "w", 5, 0);
	rc = rc ? rc : event(w, FXT_EVENT_DURATION_BEGIN, 102, "x", 6, 0);
	rc = rc ? rc : event(w, FXT_EVENT_DURATION_END, 102, "x", 7, 0);
	rc = rc ? rc : event(w, FXT_EVENT_DURATION_BEGIN, 102, "open", 8, 0);
	rc = rc ? rc : event(w, FXT_EVENT_DURATION_COMPLETE, 102, "ov", 1, 6);
	rc = rc ? rc : event(w, FXT_EVENT_INSTANT, 102, "fxt: 17 records dropped", 9, 0);
	rc = rc ? rc : event(w, FXT_EVENT_DURATION_END, 101, "zz", 30, 0);
	int rc2 = fxt_writer_close(w);
	if (rc == 0)
		rc = rc2;
	if (rc < 0) {
		fprintf(stderr, "calltree_fixture: %s: %s\n", argv[1], strerror(-rc));
		return 1;
	}
	return 0;
}
