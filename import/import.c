/* What the importers share (import.h): messages, providers and their
 * clocks, the formats' magic numbers. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "import/import.h"

int import_fail(struct import_ctx *ic, int rc, uint64_t off, const char *fmt, ...)
{
	char msg[384];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(ic->err, sizeof(ic->err), "%s: offset %llu: %s", ic->path, (unsigned long long)off,
		 msg);
	return rc < 0 ? rc : -EINVAL;
}

int import_provider(struct import_ctx *ic, const char *name, const char *clock, uint32_t *id)
{
	char full[256];
	int err;

	snprintf(full, sizeof(full), "%s " IMPORT_CLOCK_TAG "%s]", name, clock);
	*id = ic->next_provider++;
	err = fxt_writer_provider(ic->w, *id, full);
	if (err == 0)
		err = fxt_writer_initialization(ic->w, 1000000000u);
	if (err == 0 && ic->st.providers++ == 0)
		snprintf(ic->st.clock, sizeof(ic->st.clock), "%s", clock);
	return err;
}

bool import_clock_of_provider(const char *name, size_t len, char *buf, size_t cap)
{
	static const char tag[] = IMPORT_CLOCK_TAG;
	const size_t tl = sizeof(tag) - 1;

	/* The tag ends the name: "... [clock=NAME]". */
	if (len < tl + 2 || name[len - 1] != ']')
		return false;
	for (size_t i = len - 1; i-- > 0;) {
		if (i + tl <= len && memcmp(name + i, tag, tl) == 0) {
			size_t n = len - 1 - (i + tl);
			if (n == 0 || n >= cap)
				return false;
			memcpy(buf, name + i + tl, n);
			buf[n] = '\0';
			return true;
		}
	}
	return false;
}

enum import_format import_sniff(const void *head, size_t len)
{
	static const unsigned char tracedat[] = { 0x17, 0x08, 0x44, 't', 'r',
						  'a',	'c',  'i',  'n', 'g' };
	static const unsigned char fxt[] = { 0x10, 0x00, 0x04, 0x46, 0x78, 0x54, 0x16, 0x00 };
	static const unsigned char ktrace[] = { 0x00, 0x03, 0xaa, 0x55 }; /* 0x55aa0300, LE */
	const unsigned char *p = head;

	if (len >= sizeof(tracedat) && memcmp(p, tracedat, sizeof(tracedat)) == 0)
		return IMPORT_TRACEDAT;
	if (len >= sizeof(fxt) && memcmp(p, fxt, sizeof(fxt)) == 0)
		return IMPORT_FXT;
	if (len >= sizeof(ktrace) && memcmp(p, ktrace, sizeof(ktrace)) == 0)
		return IMPORT_KTRACE;
	return IMPORT_UNKNOWN;
}
