/* Log line assembly (see loglines.h). */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "convert/entries.h"
#include "common/grow.h"
#include "convert/loglines.h"

#define LOG_LINE_MAX MESSAGE_MAX /* a longer run without '\n' is split */

void conv_log_init(struct log_lines *ll, struct recon *r)
{
	memset(ll, 0, sizeof(*ll));
	ll->r = r;
}

/* A line of `stream`: queued for its mark, which places it among the
 * thread's frames. */
static int log_line(struct log_lines *ll, unsigned stream, const char *s, size_t len)
{
	struct log_line *l;
	int err;

	err = fxt__grow((void **)&ll->q, &ll->cap, ll->tail + 1, sizeof(*ll->q));
	if (err < 0)
		return err;
	err = fxt__grow((void **)&ll->text, &ll->text_cap, ll->text_len + len + 1, 1);
	if (err < 0)
		return err;
	l = &ll->q[ll->tail];
	memcpy(ll->text + ll->text_len, s, len);
	l->off = ll->text_len;
	l->text = NULL;
	ll->text_len += len;
	l->len = len;
	l->stream = stream;
	l->prio = ll->streams[stream].prio;
	l->ts = ll->streams[stream].ts;
	ll->tail++;
	return recon_mark(ll->r, l->ts, MARK_LOG);
}

int conv_log_bytes(struct log_lines *ll, unsigned stream, unsigned prio, uint64_t ts, const char *s,
		   size_t len)
{
	struct log_stream *ls = &ll->streams[stream];
	int err = 0;

	ls->ts = ts;
	ls->prio = prio;
	while (len && !err) {
		const char *nl = memchr(s, '\n', len);
		size_t k = nl ? (size_t)(nl - s) : len;

		if (nl && !ls->len && k <= LOG_LINE_MAX) {
			/* A whole line: queued from the record's bytes. */
			err = log_line(ll, stream, s, k);
			s += k + 1;
			len -= k + 1;
			continue;
		}
		if (ls->len + k > LOG_LINE_MAX)
			k = LOG_LINE_MAX - ls->len;
		err = fxt__grow((void **)&ls->buf, &ls->cap, ls->len + k + 1, 1);
		if (err < 0)
			break;
		memcpy(ls->buf + ls->len, s, k);
		ls->len += k;
		s += k;
		len -= k;
		if (len && *s == '\n') {
			s++;
			len--;
		} else if (ls->len < LOG_LINE_MAX) {
			break; /* the line goes on in a later record */
		}
		err = log_line(ll, stream, ls->buf, ls->len);
		ls->len = 0;
	}
	return err;
}

int conv_log_end(struct log_lines *ll, unsigned stream)
{
	struct log_stream *ls = &ll->streams[stream];
	int err = 0;

	if (ls->len)
		err = log_line(ll, stream, ls->buf, ls->len);
	ls->len = 0;
	return err;
}

int conv_log_finish(struct log_lines *ll)
{
	int err = 0;

	/* Lines not ended by a newline, at the time of their last bytes. */
	for (unsigned s = EV_LOG_STDOUT; s <= EV_LOG_SYSLOG && !err; s++)
		err = conv_log_end(ll, s);
	return err;
}

bool conv_log_pop(struct log_lines *ll, struct log_line *out)
{
	if (ll->head == ll->tail)
		return false;
	*out = ll->q[ll->head++];
	out->text = ll->text + out->off;
	if (ll->head == ll->tail)
		ll->head = ll->tail = ll->text_len = 0;
	return true;
}

void conv_log_free(struct log_lines *ll)
{
	free(ll->text);
	free(ll->q);
	for (unsigned s = 0; s < 4; s++)
		free(ll->streams[s].buf);
}
