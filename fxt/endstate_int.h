/* The end state's writer side (endstate.c), private to fxt/: the places
 * the writer's caller hands it (fxt_writer_end_place(): the caller, who
 * knows each thread's open calls, says where a thread stands; the writer
 * adds its tables and tracks nothing per record), and the layout of what
 * the writer puts at the archive's end from them (include/fxt/endstate.h
 * says what it holds, docs/design.md "The end state"). */
#ifndef FXT_ENDSTATE_INT_H
#define FXT_ENDSTATE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fxt__es;
struct fxt_writer;
struct fxt_end_frame;

int fxt__es_new(struct fxt__es **es);
void fxt__es_free(struct fxt__es *es);
/* Bytes the caller did not place went into the archive (another
 * writer's), or the state cannot be said: none is written. */
void fxt__es_spoil(struct fxt__es *es);
/* A place of thread (pid, tid) at offset `at`, with the writer's current
 * tables: it becomes the thread's last, the one before kept. */
int fxt__es_place(struct fxt__es *es, const struct fxt_writer *w, uint64_t pid, uint64_t tid,
		  uint64_t at, const struct fxt_end_frame *f, size_t n, bool held, uint64_t max_ts,
		  uint64_t last_ns);
/* The thread's first and last times (ns) and the offset of its last
 * record; the head's end (the offset before the first thread's records). */
int fxt__es_thread_end(struct fxt__es *es, uint64_t pid, uint64_t tid, uint64_t first_ns,
		       uint64_t last_ns, uint64_t last_off);
void fxt__es_head(struct fxt__es *es, uint64_t off);
/* Takes the places and thread ends of `from` (another writer's, whose
 * records now lie `shift` bytes further in this archive); frees from. */
int fxt__es_adopt(struct fxt__es *es, struct fxt__es *from, uint64_t shift);
/* The state's payload (include/fxt/endstate.h's layout), malloc()ed:
 * 0, -ENOENT when the archive has none to give, or -ENOMEM. */
int fxt__es_payload(struct fxt__es *es, uint64_t tps, unsigned char **out, size_t *len);

/* The trailer's payload: FXT_END_TRAILER_WORDS words (format.h). */
void fxt__es_trailer(uint64_t *words, uint64_t state_off, uint64_t state_len, uint64_t zoff,
		     uint64_t zlen);

#endif /* FXT_ENDSTATE_INT_H */
