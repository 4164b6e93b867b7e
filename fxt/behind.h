/* Writing behind (behind.c), private to fxt/: a plain file writer's full
 * buffers written by a thread of their own, in order, while the caller
 * fills the next.  What it is for: the page cache's first touch of a new
 * page is most of a write() here (a fresh large folio: the host gives its
 * memory back, bench/README.md "The tail after the exit"), and after the
 * traced program's exit a core is idle beside the converting thread. */
#ifndef FXT_BEHIND_H
#define FXT_BEHIND_H

#include <stddef.h>

struct fxt__behind;

/* A thread writing to fd (with write(), at its offset), with `buf` (cap
 * bytes, malloc'd: the behind owns it from now on) the first of the
 * buffers it hands out, each write after fxt__ahead_write(ahead) (the
 * writer's, which writes nothing itself while the thread has anything
 * to write).  0 or -errno (then buf is still the caller's). */
struct fxt__ahead;
int fxt__behind_open(struct fxt__behind **b, int fd, void *buf, size_t cap,
		     struct fxt__ahead *ahead);
/* The buffer to fill after the one being filled (waits until it is
 * written, if need be).  Its first bytes may be set before the one being
 * filled is submitted. */
void *fxt__behind_next(struct fxt__behind *b);
/* The buffer being filled goes out: its first `len` bytes, after every
 * one submitted before; the next one (fxt__behind_next()) is filled from
 * now on.  0 or the first write error (sticky). */
int fxt__behind_submit(struct fxt__behind *b, size_t len);
/* Waits until every byte submitted is in the file.  0 or the first error. */
int fxt__behind_sync(struct fxt__behind *b);
/* The descriptor it writes to, from now on (nothing submitted may be
 * left: call fxt__behind_sync() first). */
void fxt__behind_set_fd(struct fxt__behind *b, int fd);
/* Writes what is left, stops the thread, frees every buffer. */
void fxt__behind_free(struct fxt__behind *b);

#endif
