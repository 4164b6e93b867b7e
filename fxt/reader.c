/* FXT reader (the contract: include/fxt/reader.h): streams records out of
 * a plain or gzip archive through a bounded window, keeping per-provider
 * string and thread tables.
 *
 * This file: opening and freeing a reader, the per-provider contexts
 * (string and thread tables), errors and diagnostics, and the getters.
 * The byte source and the window are source.c's; reading records is
 * decode.c's, their order order.c's; reader_int.h says who does what.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/hash.h"
#include "fxt/reader_int.h"

/* ----------------------------------------------------- errors, diagnostics */

void fxt__set_error(struct fxt_reader *r, uint64_t off, const char *fmt, ...)
{
	va_list ap;
	if (r->source_failed)
		return;
	va_start(ap, fmt);
	vsnprintf(r->err, sizeof(r->err), fmt, ap);
	va_end(ap);
	r->err_off = off;
	r->failed = true;
	if (!r->verifying) {
		r->verifying = 1;
		fxt__source_verify(r);
		r->verifying = 0;
	}
}

void fxt__diag(struct fxt_reader *r, enum fxt_diag_level level, uint64_t off, const char *fmt, ...)
{
	char msg[200];
	va_list ap;
	if (!r->diag_fn || r->order_again)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	r->diag_fn(r->diag_ctx, level, off, msg);
}

/* -------------------------------------------------------------- providers */

static struct provider *provider_new(uint32_t id)
{
	struct provider *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->id = id;
	p->ticks_per_second = NS_PER_SECOND;
	return p;
}

/* Keeps string buffer `data` of `cap` bytes for records given already
 * (fxt_reader_keep_strings()).  0, or -ENOMEM. */
static int keep_string(struct fxt_reader *r, char *data, size_t cap)
{
	if (r->nkept == r->capkept) {
		size_t n = r->capkept ? 2 * r->capkept : 64;
		struct fxt__kept *k = realloc(r->kept, n * sizeof(*k));

		if (!k)
			return -ENOMEM;
		r->kept = k;
		r->capkept = n;
	}
	r->kept[r->nkept++] = (struct fxt__kept){ data, cap };
	r->kept_bytes += cap;
	return 0;
}

int fxt__provider_clear(struct fxt_reader *r, struct provider *p)
{
	bool keep = r && r->keep;
	int err = 0;

	for (size_t i = 0; p->pages && i < STR_PAGES; i++) {
		if (!p->pages[i])
			continue;
		for (size_t k = 0; k < STR_PAGE_SIZE; k++) {
			struct str_entry *e = &p->pages[i]->e[k];

			if (keep && e->data) {
				/* Not kept, out of memory: left allocated all
				 * the same (records given may point to it), and
				 * the reader stops. */
				if (err || keep_string(r, e->data, e->cap) < 0)
					err = -ENOMEM;
				continue;
			}
			free(e->data);
		}
		free(p->pages[i]);
	}
	free(p->pages);
	p->pages = NULL;
	free(p->threads);
	p->threads = NULL;
	p->ticks_per_second = NS_PER_SECOND;
	return err;
}

static void provider_free(struct provider *p)
{
	if (!p)
		return;
	fxt__provider_clear(NULL, p);
	free(p);
}

static size_t provider_slot(const struct fxt_reader *r, uint32_t id)
{
	size_t mask = r->nslots - 1;
	size_t i = (size_t)fxt__hash_u64(id) & mask;
	while (r->slots[i] && r->slots[i]->id != id)
		i = (i + 1) & mask;
	return i;
}

/* The context of provider `id`, created if new.  NULL when out of memory. */
struct provider *fxt__provider_get(struct fxt_reader *r, uint32_t id, bool *created)
{
	*created = false;
	size_t i = provider_slot(r, id);
	if (r->slots[i])
		return r->slots[i];
	if ((r->nproviders + 1) * 2 > r->nslots) {
		size_t n = r->nslots * 2;
		struct provider **old = r->slots;
		size_t nold = r->nslots;
		struct provider **slots = calloc(n, sizeof(*slots));
		if (!slots)
			return NULL;
		r->slots = slots;
		r->nslots = n;
		for (size_t k = 0; k < nold; k++)
			if (old[k])
				r->slots[provider_slot(r, old[k]->id)] = old[k];
		free(old);
		i = provider_slot(r, id);
	}
	struct provider *p = provider_new(id);
	if (!p)
		return NULL;
	r->slots[i] = p;
	r->nproviders++;
	*created = true;
	return p;
}

const struct str_entry *fxt__string_lookup(const struct provider *p, unsigned index)
{
	if (!p->pages)
		return NULL;
	const struct str_page *pg = p->pages[index >> STR_PAGE_SHIFT];
	if (!pg)
		return NULL;
	const struct str_entry *e = &pg->e[index & (STR_PAGE_SIZE - 1)];
	return e->data ? e : NULL;
}

/* Registers (or replaces) string `index`.  Returns the entry or NULL when
 * out of memory. */
struct str_entry *fxt__string_set(struct fxt_reader *r, struct provider *p, unsigned index,
				  const char *s, uint32_t len)
{
	if (!p->pages && !(p->pages = calloc(STR_PAGES, sizeof(*p->pages))))
		return NULL;
	struct str_page **pg = &p->pages[index >> STR_PAGE_SHIFT];
	if (!*pg) {
		*pg = calloc(1, sizeof(**pg));
		if (!*pg)
			return NULL;
	}
	struct str_entry *e = &(*pg)->e[index & (STR_PAGE_SIZE - 1)];
	if (e->data && r && r->keep) {
		/* Records given already may point to it: a new buffer. */
		if (keep_string(r, e->data, e->cap) < 0)
			return NULL;
		e->data = NULL;
		e->cap = 0;
	}
	if (!e->data || e->cap < len + 1) {
		/* +1 so that an empty string still has a non-NULL buffer. */
		char *d = realloc(e->data, len + 1);
		if (!d)
			return NULL;
		e->data = d;
		e->cap = len + 1;
	}
	memcpy(e->data, s, len);
	e->data[len] = '\0';
	e->len = len;
	return e;
}

/* ------------------------------------------------------------ public API */

static int reader_new(struct fxt_reader **out, unsigned flags)
{
	struct fxt_reader *r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->flags = flags;
	r->fd = r->user_fd = r->copy_fd = -1;
	r->nslots = 8;
	r->slots = calloc(r->nslots, sizeof(*r->slots));
	bool created;
	if (!r->slots || !(r->cur = fxt__provider_get(r, 0, &created))) {
		fxt_reader_free(r);
		return -ENOMEM;
	}
	*out = r;
	return 0;
}

int fxt_reader_open_fd(struct fxt_reader **out, int fd, unsigned flags)
{
	struct fxt_reader *r;
	int err = reader_new(&r, flags);
	if (err)
		return err;
	r->user_fd = fd;
	if ((flags & FXT_READER_TIME_ORDER) && !(flags & FXT_READER_RAW))
		err = fxt__order_open(r, NULL, 0, fd);
	if (!err)
		err = fxt__source_open_fd(r, r->copy_fd >= 0 ? r->copy_fd : fd);
	if (err) {
		fxt_reader_free(r);
		return err;
	}
	*out = r;
	return 0;
}

int fxt_reader_open_path(struct fxt_reader **out, const char *path, unsigned flags)
{
	if (strcmp(path, "-") == 0)
		return fxt_reader_open_fd(out, STDIN_FILENO, flags);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int err = fxt_reader_open_fd(out, fd, flags);
	if (err) {
		close(fd);
		return err;
	}
	(*out)->own_fd = true;
	return 0;
}

int fxt_reader_open_mem(struct fxt_reader **out, const void *data, size_t len, unsigned flags)
{
	struct fxt_reader *r;
	int err = reader_new(&r, flags);
	if (err)
		return err;
	if ((flags & FXT_READER_TIME_ORDER) && !(flags & FXT_READER_RAW))
		err = fxt__order_open(r, data, len, -1);
	if (!err)
		err = fxt__source_open_mem(r, data, len);
	if (err) {
		fxt_reader_free(r);
		return err;
	}
	*out = r;
	return 0;
}

/* A deep copy of provider p (its strings and threads), or NULL. */
static struct provider *provider_copy(const struct provider *p)
{
	struct provider *c = provider_new(p->id);

	if (!c)
		return NULL;
	c->ticks_per_second = p->ticks_per_second;
	if (p->threads) {
		c->threads = malloc((FXT_MAX_THREAD_INDEX + 1) * sizeof(*c->threads));
		if (!c->threads)
			goto fail;
		memcpy(c->threads, p->threads, (FXT_MAX_THREAD_INDEX + 1) * sizeof(*c->threads));
	}
	for (size_t i = 0; p->pages && i < STR_PAGES; i++) {
		if (!p->pages[i])
			continue;
		for (size_t k = 0; k < STR_PAGE_SIZE; k++) {
			const struct str_entry *e = &p->pages[i]->e[k];

			if (e->data &&
			    !fxt__string_set(NULL, c, (unsigned)(i << STR_PAGE_SHIFT | k), e->data,
					     e->len))
				goto fail;
		}
	}
	return c;
fail:
	provider_free(c);
	return NULL;
}

int fxt_reader_clone_at(const struct fxt_reader *r, uint64_t offset, struct fxt_reader **out)
{
	bool plain_ok = r->src == SRC_MEM && offset >= r->win_off && offset - r->win_off <= r->end;
	struct fxt_reader *c;
	int err;

	if (r->failed || (r->codec == CODEC_NONE ? !plain_ok : !r->seek))
		return -EINVAL;
	err = reader_new(&c, r->flags);
	if (err)
		return err;
	/* reader_new()'s provider 0 goes: the copies take the same slots. */
	for (size_t i = 0; i < c->nslots; i++)
		provider_free(c->slots[i]);
	free(c->slots);
	c->cur = NULL;
	c->nproviders = r->nproviders;
	c->nslots = r->nslots;
	c->slots = calloc(c->nslots, sizeof(*c->slots));
	if (!c->slots) {
		c->nslots = 0;
		goto fail;
	}
	for (size_t i = 0; i < r->nslots; i++) {
		if (r->slots[i] && !(c->slots[i] = provider_copy(r->slots[i])))
			goto fail;
		if (r->slots[i] == r->cur)
			c->cur = c->slots[i];
	}
	if (!c->cur)
		goto fail;
	if (r->provider_name && !(c->provider_name = strdup(r->provider_name)))
		goto fail;
	if (r->codec != CODEC_NONE) {
		if (fxt__source_clone(r, c, offset) < 0)
			goto fail;
	} else {
		c->src = SRC_MEM;
		c->win = r->win;
		c->end = r->end;
		c->eof = true;
		c->win_off = r->win_off;
		c->pos = (size_t)(offset - r->win_off);
	}
	c->started = r->started;
	c->saw_magic = r->saw_magic;
	c->diag_fn = r->diag_fn;
	c->diag_ctx = r->diag_ctx;
	if (fxt__order_clone(r, c, offset) < 0)
		goto fail;
	*out = c;
	return 0;
fail:
	fxt_reader_free(c);
	return -ENOMEM;
}

size_t fxt_reader_tables_bytes(const struct fxt_reader *r)
{
	size_t n = sizeof(*r) + r->nslots * sizeof(*r->slots);

	for (size_t i = 0; i < r->nslots; i++) {
		const struct provider *p = r->slots[i];

		if (!p)
			continue;
		n += sizeof(*p);
		if (p->threads)
			n += (FXT_MAX_THREAD_INDEX + 1) * sizeof(*p->threads);
		for (size_t k = 0; p->pages && k < STR_PAGES; k++) {
			if (k == 0)
				n += STR_PAGES * sizeof(*p->pages);
			if (!p->pages[k])
				continue;
			n += sizeof(*p->pages[k]);
			for (size_t j = 0; j < STR_PAGE_SIZE; j++)
				n += p->pages[k]->e[j].cap;
		}
	}
	return n;
}

void fxt_reader_free(struct fxt_reader *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nslots; i++)
		provider_free(r->slots[i]);
	free(r->slots);
	fxt__source_close(r);
	free(r->provider_name);
	fxt_reader_release_strings(r, r->kept_base + r->nkept);
	free(r->kept);
	fxt__order_put(r->order);
	fxt__order_put(r->check);
	free(r->order_done);
	free(r->order_cur);
	free(r);
}

void fxt_reader_keep_strings(struct fxt_reader *r, bool on)
{
	r->keep = on;
}

uint64_t fxt_reader_kept_strings(const struct fxt_reader *r, size_t *bytes)
{
	if (bytes)
		*bytes = r->kept_bytes;
	return r->kept_base + r->nkept;
}

void fxt_reader_release_strings(struct fxt_reader *r, uint64_t upto)
{
	size_t n;

	if (upto <= r->kept_base)
		return;
	n = (size_t)(upto - r->kept_base);
	if (n > r->nkept)
		n = r->nkept;
	for (size_t i = 0; i < n; i++) {
		free(r->kept[i].data);
		r->kept_bytes -= r->kept[i].cap;
	}
	memmove(r->kept, r->kept + n, (r->nkept - n) * sizeof(*r->kept));
	r->nkept -= n;
	r->kept_base += n;
}

void fxt_reader_set_diag(struct fxt_reader *r, fxt_diag_fn fn, void *ctx)
{
	r->diag_fn = fn;
	r->diag_ctx = ctx;
}

const char *fxt_reader_error(const struct fxt_reader *r, uint64_t *offset)
{
	if (!r->failed)
		return NULL;
	if (offset)
		*offset = r->err_off;
	return r->err;
}

int fxt_reader_errno(const struct fxt_reader *r)
{
	return r->failed ? r->read_errno : 0;
}

const void *fxt_reader_record_bytes(const struct fxt_reader *r)
{
	return r->rec_bytes;
}

bool fxt_reader_saw_magic(const struct fxt_reader *r)
{
	return r->saw_magic;
}

uint64_t fxt_reader_ticks_per_second(const struct fxt_reader *r)
{
	return r->cur->ticks_per_second;
}

uint64_t fxt_reader_ticks_to_ns(const struct fxt_reader *r, uint64_t ticks)
{
	uint64_t tps = r->cur->ticks_per_second;
	if (tps == NS_PER_SECOND)
		return ticks;
	unsigned __int128 ns = (unsigned __int128)ticks * NS_PER_SECOND / tps;
	return ns > UINT64_MAX ? UINT64_MAX : (uint64_t)ns;
}

uint64_t fxt_reader_offset(const struct fxt_reader *r)
{
	return r->win_off + r->pos;
}
