/* Where a module's separate debug file may be (see debugpath.h). */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include "common/debugpath.h"

/* snprintf into buf: whether it fitted. */
#define FITS(n, size) ((n) > 0 && (size_t)(n) < (size))

/* ROOT/.build-id/xx/yyyy.debug */
static enum fxt_debug_via by_build_id(const char *root, const unsigned char *id, size_t len,
				      char *buf, size_t size)
{
	int n = snprintf(buf, size, "%s/.build-id/", root);

	if (!FITS(n, size) || (size_t)n + 2 * len + 8 > size)
		return FXT_DEBUG_SKIP;
	for (size_t i = 0; i < len; i++) {
		n += sprintf(buf + n, "%02x", id[i]);
		if (i == 0)
			buf[n++] = '/';
	}
	strcpy(buf + n, ".debug");
	return FXT_DEBUG_BUILD_ID;
}

/* The debuglink's place `which` (0: DIR/NAME, 1: DIR/.debug/NAME, 2:
 * ROOT/DIR/NAME) for the module's path `file`. */
static enum fxt_debug_via by_link(const char *root, const char *file, const char *link,
				  unsigned which, char *buf, size_t size)
{
	const char *slash = strrchr(file, '/');
	/* DIR: "." for a bare name, "" for "/" (its files are "/NAME") */
	int dirlen = slash ? (int)(slash - file) : 1;
	const char *dir = slash ? file : ".";
	int n;

	if (which == 0)
		n = snprintf(buf, size, "%.*s/%s", dirlen, dir, link);
	else if (which == 1)
		n = snprintf(buf, size, "%.*s/.debug/%s", dirlen, dir, link);
	else if (dir[0] != '/')
		return FXT_DEBUG_SKIP; /* only an absolute folder has a mirror under ROOT */
	else
		n = snprintf(buf, size, "%s%.*s/%s", root, dirlen, dir, link);
	return FITS(n, size) ? FXT_DEBUG_LINK : FXT_DEBUG_SKIP;
}

enum fxt_debug_via fxt_debug_candidate(const struct fxt_debug_key *key, unsigned k, char *buf,
				       size_t size)
{
	const char *root = key->root && key->root[0] ? key->root : FXT_DEBUG_ROOT_DEFAULT;
	const char *file = k <= 3 ? key->file : key->real;

	if (k == 0)
		return key->build_id && key->build_id_len >= 2
			   ? by_build_id(root, key->build_id, key->build_id_len, buf, size)
			   : FXT_DEBUG_SKIP;
	if (k >= FXT_DEBUG_CANDIDATES || !file || !key->link || !key->link[0] ||
	    (k > 3 && key->file && strcmp(key->real, key->file) == 0))
		return FXT_DEBUG_SKIP;
	return by_link(root, file, key->link, (k - 1) % 3, buf, size);
}
