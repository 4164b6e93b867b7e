/* A plain file writer's buffers written by a thread of their own (the
 * contract: behind.h).  BEHIND_BUFS buffers in a ring: one being filled,
 * the others written in the order they were submitted. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "fxt/ahead.h"
#include "fxt/behind.h"

#define BEHIND_BUFS 3
#define IO_CHUNK    (1u << 30) /* per write() */

struct fxt__behind {
	int fd;
	struct fxt__ahead *ahead;
	void *buf[BEHIND_BUFS];
	size_t len[BEHIND_BUFS];
	/* Buffer `n % BEHIND_BUFS` is the n-th submitted; those before
	 * `written` are in the file, buffer `submitted` is being filled. */
	uint64_t submitted, written;
	int err;
	bool stop;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t th;
};

static int write_all(struct fxt__ahead *ahead, int fd, const unsigned char *p, size_t len)
{
	fxt__ahead_write(ahead, fd, len);
	while (len) {
		ssize_t r = write(fd, p, len < IO_CHUNK ? len : IO_CHUNK);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) /* 0 cannot happen for len > 0; never spin on it */
			return r < 0 ? -errno : -EIO;
		p += r;
		len -= (size_t)r;
	}
	return 0;
}

static void *behind_thread(void *arg)
{
	struct fxt__behind *b = arg;

	pthread_mutex_lock(&b->mu);
	for (;;) {
		while (b->written == b->submitted && !b->stop)
			pthread_cond_wait(&b->cv, &b->mu);
		if (b->written == b->submitted)
			break;
		unsigned i = (unsigned)(b->written % BEHIND_BUFS);
		int fd = b->fd, err = b->err;
		pthread_mutex_unlock(&b->mu);
		if (!err)
			err = write_all(b->ahead, fd, b->buf[i], b->len[i]);
		pthread_mutex_lock(&b->mu);
		if (err && !b->err)
			b->err = err;
		b->written++;
		pthread_cond_broadcast(&b->cv);
	}
	pthread_mutex_unlock(&b->mu);
	return NULL;
}

int fxt__behind_open(struct fxt__behind **out, int fd, void *buf, size_t cap,
		     struct fxt__ahead *ahead)
{
	struct fxt__behind *b = calloc(1, sizeof(*b));
	sigset_t all, old;
	int err = -ENOMEM;

	*out = NULL;
	if (!b)
		return -ENOMEM;
	for (unsigned i = 1; i < BEHIND_BUFS; i++)
		if (!(b->buf[i] = malloc(cap)))
			goto fail;
	b->fd = fd;
	b->ahead = ahead;
	pthread_mutex_init(&b->mu, NULL);
	pthread_cond_init(&b->cv, NULL);
	/* Signals are for the caller's thread. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = -pthread_create(&b->th, NULL, behind_thread, b);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		pthread_mutex_destroy(&b->mu);
		pthread_cond_destroy(&b->cv);
		goto fail;
	}
	b->buf[0] = buf;
	*out = b;
	return 0;
fail:
	for (unsigned i = 1; i < BEHIND_BUFS; i++)
		free(b->buf[i]);
	free(b);
	return err;
}

void *fxt__behind_next(struct fxt__behind *b)
{
	/* Buffer submitted + 1 is free once fewer than BEHIND_BUFS - 1
	 * are waiting to be written. */
	pthread_mutex_lock(&b->mu);
	while (b->submitted - b->written >= BEHIND_BUFS - 1)
		pthread_cond_wait(&b->cv, &b->mu);
	pthread_mutex_unlock(&b->mu);
	return b->buf[(b->submitted + 1) % BEHIND_BUFS];
}

int fxt__behind_submit(struct fxt__behind *b, size_t len)
{
	int err;

	pthread_mutex_lock(&b->mu);
	while (b->submitted - b->written >= BEHIND_BUFS - 1) /* as fxt__behind_next() */
		pthread_cond_wait(&b->cv, &b->mu);
	b->len[b->submitted % BEHIND_BUFS] = len;
	b->submitted++;
	pthread_cond_broadcast(&b->cv);
	err = b->err;
	pthread_mutex_unlock(&b->mu);
	return err;
}

int fxt__behind_sync(struct fxt__behind *b)
{
	int err;

	pthread_mutex_lock(&b->mu);
	while (b->written != b->submitted)
		pthread_cond_wait(&b->cv, &b->mu);
	err = b->err;
	pthread_mutex_unlock(&b->mu);
	return err;
}

void fxt__behind_set_fd(struct fxt__behind *b, int fd)
{
	pthread_mutex_lock(&b->mu);
	b->fd = fd;
	pthread_mutex_unlock(&b->mu);
}

void fxt__behind_free(struct fxt__behind *b)
{
	if (!b)
		return;
	pthread_mutex_lock(&b->mu);
	b->stop = true;
	pthread_cond_broadcast(&b->cv);
	pthread_mutex_unlock(&b->mu);
	pthread_join(b->th, NULL);
	pthread_mutex_destroy(&b->mu);
	pthread_cond_destroy(&b->cv);
	for (unsigned i = 0; i < BEHIND_BUFS; i++)
		free(b->buf[i]);
	free(b);
}
