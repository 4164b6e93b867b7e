/* The flame graph's SVG writer: lays the tree out (frame widths from
 * inclusive times, children in name order), colors it (by name, or by the
 * change against a base graph) and writes one self-contained SVG with a
 * little script to zoom on click.  It reads the tree through flame.h's
 * accessors only. */
#include "config.h"

#include "tools/flame/flame.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "tools/front/common.h"
#include "tools/front/escape.h"
#include "tools/profile/profile.h"

/* ------------------------------------------------------------------ SVG */

/* Children of every node, ordered by name (then kind, then index), in
 * compressed rows: the children of i are child[first[i] .. first[i + 1]). */
struct kids {
	uint32_t *first, *child;
};

static int cmp_kid(const void *a, const void *b, void *ctx)
{
	const struct flame_node *nodes = ctx;
	const struct flame_node *x = &nodes[*(const uint32_t *)a];
	const struct flame_node *y = &nodes[*(const uint32_t *)b];
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static int kids_build(const struct flame *f, struct kids *k)
{
	const struct flame_node *nodes = flame_nodes(f);
	size_t n = flame_nnodes(f), i;
	uint32_t *fill;

	k->first = calloc(n + 1, sizeof(*k->first));
	k->child = malloc((n ? n : 1) * sizeof(*k->child));
	fill = calloc(n + 1, sizeof(*fill));
	if (!k->first || !k->child || !fill) {
		free(fill);
		return -ENOMEM;
	}
	for (i = 1; i < n; i++)
		k->first[nodes[i].parent + 1]++;
	for (i = 0; i < n; i++)
		k->first[i + 1] += k->first[i];
	for (i = 1; i < n; i++) {
		uint32_t p = nodes[i].parent;
		k->child[k->first[p] + fill[p]++] = (uint32_t)i;
	}
	free(fill);
	for (i = 0; i < n; i++)
		qsort_r(k->child + k->first[i], k->first[i + 1] - k->first[i], sizeof(*k->child),
			cmp_kid, (void *)nodes);
	return 0;
}

static void kids_free(struct kids *k)
{
	free(k->first);
	free(k->child);
}

/* The child of node p named `name` (any kind), or FLAME_NONE. */
static uint32_t kids_find(const struct flame *f, const struct kids *k, uint32_t p, const char *name)
{
	const struct flame_node *nodes = flame_nodes(f);
	size_t lo = k->first[p], hi = k->first[p + 1];

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(nodes[k->child[mid]].name, name);
		if (c == 0) {
			/* the first of equal names */
			while (mid > k->first[p] &&
			       strcmp(nodes[k->child[mid - 1]].name, name) == 0)
				mid--;
			return k->child[mid];
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return FLAME_NONE;
}

#define SVG_FRAME_H 16	 /* row pitch */
#define SVG_FONT    12	 /* px */
#define SVG_CHAR_W  7.08 /* average glyph width at SVG_FONT (0.59 em) */
#define SVG_PAD	    10
#define SVG_TOP	    56
#define SVG_BOTTOM  28
#define SVG_MIN_PX  0.1 /* narrower frames (and their children) are left out */

/* Writes s escaped for XML character data (names are valid UTF-8 with no
 * control characters: tool_clean_str() saw to it). */
static void put_xml(FILE *out, const char *s, size_t len)
{
	for (size_t i = 0; i < len && s[i]; i++) {
		switch (s[i]) {
		case '&':
			fputs("&amp;", out);
			break;
		case '<':
			fputs("&lt;", out);
			break;
		case '>':
			fputs("&gt;", out);
			break;
		case '"':
			fputs("&quot;", out);
			break;
		default:
			fputc(s[i], out);
		}
	}
}

/* Same as put_xml(), for text of any origin (titles from the command line). */
static void put_xml_any(FILE *out, const char *s)
{
	size_t len = strlen(s);
	char *clean = malloc(len + 1);

	if (clean)
		put_xml(out, clean, tool_clean_str(clean, s, len));
	free(clean);
}

/* The label shown in a frame `w` px wide: the name, or its first
 * characters and "..", or nothing.  The script in the SVG does the same
 * when zooming (JavaScript counts UTF-16 units, this code points: only
 * names outside the BMP can differ, by a character). */
static void put_label(FILE *out, const char *name, double w)
{
	double room = (w - 6) / SVG_CHAR_W;
	size_t fit = room < 0 ? 0 : (size_t)room, chars = 0, i, cut = 0;

	if (fit < 3)
		return;
	for (i = 0; name[i]; i++) {
		if (((unsigned char)name[i] & 0xc0) == 0x80)
			continue;
		if (chars == fit - 2)
			cut = i;
		chars++;
	}
	if (chars <= fit) {
		put_xml(out, name, i);
		return;
	}
	put_xml(out, name, cut);
	fputs("..", out);
}

static void fmt_change(char *buf, size_t len, double base, double now)
{
	char d[32];

	tool_fmt_ns(d, sizeof(d), now - base);
	if (base > 0)
		snprintf(buf, len, "%s%s, %+.1f%%", now >= base ? "+" : "", d,
			 100.0 * (now - base) / base);
	else if (now > 0)
		snprintf(buf, len, "+%s, new", d);
	else
		snprintf(buf, len, "unchanged");
}

/* A warm color from the name's hash: same name, same color (common/hash.h:
 * stable within a build, not across versions). */
static void color_of(const struct flame_node *n, int rgb[3])
{
	uint64_t h;

	switch (n->kind) {
	case FLAME_ROOT:
		rgb[0] = rgb[1] = rgb[2] = 200;
		return;
	case FLAME_PROCESS:
		rgb[0] = 150, rgb[1] = 180, rgb[2] = 225;
		return;
	case FLAME_THREAD:
		rgb[0] = 175, rgb[1] = 205, rgb[2] = 235;
		return;
	case FLAME_FUNCTION:
		break;
	}
	h = fxt__hash_bytes(n->name, strlen(n->name));
	rgb[0] = 205 + (int)(h % 50);
	rgb[1] = (int)((h >> 8) % 230);
	rgb[2] = (int)((h >> 16) % 55);
}

/* Red when `now` is above `base`, blue below, white when equal; the
 * relative change sets the saturation, full at 100%. */
static void color_diff(double base, double now, int rgb[3])
{
	double rel = base > 0 ? (now - base) / base : (now > 0 ? 1 : 0);
	double a = fabs(rel) > 1 ? 1 : fabs(rel);
	int fade = (int)lround(255 * (1 - a));

	if (rel > 0)
		rgb[0] = 255, rgb[1] = fade, rgb[2] = fade;
	else if (rel < 0)
		rgb[0] = fade, rgb[1] = fade, rgb[2] = 255;
	else
		rgb[0] = rgb[1] = rgb[2] = 255;
}

static const char svg_script[] =
    "<script type=\"text/ecmascript\"><![CDATA[\n"
    "var fg = [], fgDetails;\n"
    "function fgInit(evt) {\n"
    "  var gs = document.getElementsByClassName('f');\n"
    "  fgDetails = document.getElementById('details').firstChild;\n"
    "  for (var i = 0; i < gs.length; i++) {\n"
    "    var g = gs[i], r = g.getElementsByTagName('rect')[0];\n"
    "    var fr = { g: g, r: r, t: g.getElementsByTagName('text')[0],\n"
    "      info: g.getElementsByTagName('title')[0].textContent,\n"
    "      x: +r.getAttribute('x'), w: +r.getAttribute('width'), y: +r.getAttribute('y') };\n"
    "    fr.name = fr.info.split('\\n')[0];\n"
    "    fg.push(fr);\n"
    "    g.onclick = fgZoom.bind(null, fr);\n"
    "    g.onmouseover = fgShow.bind(null, fr);\n"
    "    g.onmouseout = fgShow.bind(null, null);\n"
    "  }\n"
    "}\n"
    "function fgShow(fr) {\n"
    "  fgDetails.nodeValue = fr ? fr.info.replace(/\\n/g, ', ') : ' ';\n"
    "}\n"
    "function fgPlace(fr, x, w) {\n"
    "  var m = Math.floor((w - 6) / CHAR_W), n = fr.name;\n"
    "  fr.r.setAttribute('x', x.toFixed(2));\n"
    "  fr.r.setAttribute('width', w.toFixed(2));\n"
    "  fr.t.setAttribute('x', (x + 3).toFixed(2));\n"
    "  fr.t.textContent = m < 3 ? '' : n.length <= m ? n : n.substring(0, m - 2) + '..';\n"
    "  fr.g.style.display = '';\n"
    "}\n"
    "/* Zoom: the frame and its descendants fill the width, its ancestors\n"
    "   span it, the rest hides.  Zooming on the root resets. */\n"
    "function fgZoom(z) {\n"
    "  var k = WIDTH / z.w, e = 0.005;\n"
    "  for (var i = 0; i < fg.length; i++) {\n"
    "    var fr = fg[i];\n"
    "    if (fr.y > z.y && fr.x <= z.x + e && fr.x + fr.w >= z.x + z.w - e)\n"
    "      fgPlace(fr, PAD, WIDTH);\n"
    "    else if (fr.y <= z.y && fr.x >= z.x - e && fr.x + fr.w <= z.x + z.w + e)\n"
    "      fgPlace(fr, PAD + (fr.x - z.x) * k, fr.w * k);\n"
    "    else\n"
    "      fr.g.style.display = 'none';\n"
    "  }\n"
    "}\n"
    "]]></script>\n";

/* The paths of base that f does not have: how many subtrees and the
 * time at their tops (a diff draws only f's paths, so it says so). */
static int gone_paths(const struct flame *f, const struct kids *k, const struct flame *base,
		      uint64_t *gone_ns, uint64_t *ngone)
{
	const struct flame_node *bn = flame_nodes(base);
	uint32_t *m = malloc(flame_nnodes(base) * sizeof(*m));

	if (!m)
		return -ENOMEM;
	m[0] = 0;
	for (size_t i = 1; i < flame_nnodes(base); i++) {
		uint32_t pm = m[bn[i].parent];

		m[i] = pm == FLAME_NONE ? FLAME_NONE : kids_find(f, k, pm, bn[i].name);
		if (m[i] == FLAME_NONE && pm != FLAME_NONE) {
			*gone_ns += bn[i].total_ns;
			(*ngone)++;
		}
	}
	free(m);
	return 0;
}

int flame_write_svg(const struct flame *f, const struct flame_svg_opts *o, FILE *out)
{
	const struct flame *base = o->base;
	const struct flame_node *nodes = flame_nodes(f), *bn = base ? flame_nodes(base) : NULL;
	unsigned width = o->width ? o->width : 1200;
	double inner = (double)width - 2 * SVG_PAD, bscale = 1;
	struct kids k = { 0 }, bk = { 0 };
	uint32_t *stack = NULL, *bmatch = NULL, maxdepth = 0;
	uint64_t gone_ns = 0, ngone = 0;
	double *x = NULL, *w = NULL;
	size_t sp = 0, i, n = flame_nnodes(f);
	unsigned height;
	int rc;

	rc = kids_build(f, &k);
	if (rc == 0 && base)
		rc = kids_build(base, &bk);
	x = calloc(n, sizeof(*x));
	w = calloc(n, sizeof(*w));
	stack = malloc(n * sizeof(*stack));
	bmatch = malloc(n * sizeof(*bmatch));
	if (rc < 0 || !x || !w || !stack || !bmatch) {
		rc = -ENOMEM;
		goto out;
	}
	if (base && o->normalize && bn[0].total_ns)
		bscale = (double)nodes[0].total_ns / (double)bn[0].total_ns;
	if (base) {
		rc = gone_paths(f, &k, base, &gone_ns, &ngone);
		if (rc < 0)
			goto out;
	}

	/* Layout, parents first: x and w in pixels.  Children wider than
	 * their parent (partly overlapping slices) are squeezed into it. */
	x[0] = SVG_PAD;
	w[0] = inner;
	for (i = 0; i < n; i++) {
		const struct flame_node *p = &nodes[i];
		uint64_t sum = 0;
		double kx, at = x[i];

		if (i && w[i] < SVG_MIN_PX)
			continue;
		if (p->depth > maxdepth)
			maxdepth = p->depth;
		for (uint32_t c = k.first[i]; c < k.first[i + 1]; c++)
			sum += nodes[k.child[c]].total_ns;
		if (sum < p->total_ns)
			sum = p->total_ns;
		kx = sum ? w[i] / (double)sum : 0; /* px per ns, w[i] == total * scale */
		for (uint32_t c = k.first[i]; c < k.first[i + 1]; c++) {
			uint32_t ci = k.child[c];
			x[ci] = at;
			w[ci] = (double)nodes[ci].total_ns * kx;
			at += w[ci];
		}
	}
	if (!nodes[0].total_ns)
		w[0] = inner; /* an empty graph still shows its root */
	height = SVG_TOP + (maxdepth + 1) * SVG_FRAME_H + SVG_BOTTOM;

	fprintf(
	    out,
	    "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
	    "<svg version=\"1.1\" width=\"%u\" height=\"%u\" viewBox=\"0 0 %u %u\" "
	    "xmlns=\"http://www.w3.org/2000/svg\" onload=\"fgInit(evt)\">\n"
	    "<style type=\"text/css\">\n"
	    "text { font-family: Verdana, sans-serif; font-size: %dpx; fill: #000; }\n"
	    "g.f { cursor: pointer; }\n"
	    "g.f:hover rect { stroke: #000; stroke-width: 0.5; }\n"
	    "text.h { font-size: 17px; }\n"
	    "</style>\n"
	    "<script type=\"text/ecmascript\">var WIDTH = %.2f, PAD = %d, CHAR_W = %.2f;</script>\n"
	    "%s"
	    "<rect x=\"0\" y=\"0\" width=\"%u\" height=\"%u\" fill=\"#f8f8f4\"/>\n"
	    "<text class=\"h\" x=\"%u\" y=\"24\" text-anchor=\"middle\">",
	    width, height, width, height, SVG_FONT, inner, SVG_PAD, SVG_CHAR_W, svg_script, width,
	    height, width / 2);
	if (o->title)
		put_xml_any(out, o->title);
	else if (flame_is_samples(f))
		put_xml_any(out, base ? "Differential flame graph of stack samples"
				      : "Flame graph of stack samples");
	else
		put_xml_any(out, base ? "Differential flame graph" : "Flame graph");
	fprintf(out, "</text>\n<text x=\"%u\" y=\"42\" text-anchor=\"middle\">", width / 2);
	if (o->subtitle)
		put_xml_any(out, o->subtitle);
	fprintf(out,
		"</text>\n"
		"<text x=\"%d\" y=\"42\" onclick=\"fgZoom(fg[0])\" style=\"cursor:pointer\">"
		"Reset zoom</text>\n"
		"<text id=\"details\" x=\"%d\" y=\"%u\"> </text>\n",
		SVG_PAD, SVG_PAD, height - 10);

	/* Frames, depth first from the root, so zoom's fg[0] is the root. */
	stack[sp++] = 0;
	bmatch[0] = 0;
	while (sp) {
		uint32_t ni = stack[--sp];
		const struct flame_node *nd = &nodes[ni];
		double y = (double)height - SVG_BOTTOM - (double)(nd->depth + 1) * SVG_FRAME_H;
		char t1[32], t2[32], t3[48];
		int rgb[3];

		fputs("<g class=\"f\"><title>", out);
		put_xml(out, nd->name, strlen(nd->name));
		tool_fmt_ns(t1, sizeof(t1), (double)nd->total_ns);
		if (!base) {
			fprintf(out, "\ntotal %s (%.2f%%)", t1,
				nodes[0].total_ns
				    ? 100.0 * (double)nd->total_ns / (double)nodes[0].total_ns
				    : 0.0);
			if (nd->kind == FLAME_FUNCTION) {
				tool_fmt_ns(t2, sizeof(t2), (double)nd->self_ns);
				fprintf(out, "\nself %s", t2);
				if (!flame_is_samples(f))
					fprintf(out, "\ncalls %" PRIu64, nd->calls);
			}
			color_of(nd, rgb);
		} else {
			const struct flame_node *b =
			    bmatch[ni] == FLAME_NONE ? NULL : &bn[bmatch[ni]];
			double bt = b ? (double)b->total_ns * bscale : 0;
			double bs = b ? (double)b->self_ns * bscale : 0;

			tool_fmt_ns(t2, sizeof(t2), bt);
			fmt_change(t3, sizeof(t3), bt, (double)nd->total_ns);
			fprintf(out, "\ntotal: base %s, new %s (%s)", t2, t1, t3);
			if (ni == 0 && ngone) {
				tool_fmt_ns(t2, sizeof(t2), (double)gone_ns * bscale);
				fprintf(out, "\nonly in base: %" PRIu64 " paths, %s", ngone, t2);
			}
			if (nd->kind == FLAME_FUNCTION) {
				tool_fmt_ns(t1, sizeof(t1), (double)nd->self_ns);
				tool_fmt_ns(t2, sizeof(t2), bs);
				fmt_change(t3, sizeof(t3), bs, (double)nd->self_ns);
				fprintf(out, "\nself: base %s, new %s (%s)", t2, t1, t3);
				if (!flame_is_samples(f))
					fprintf(out, "\ncalls: base %" PRIu64 ", new %" PRIu64,
						b ? b->calls : 0, nd->calls);
				color_diff(bs, (double)nd->self_ns, rgb);
			} else {
				color_diff(bt, (double)nd->total_ns, rgb);
			}
		}
		if (nd->loc) { /* last: the lines above keep their places */
			fputs("\n", out);
			put_xml(out, nd->loc, strlen(nd->loc));
		}
		fprintf(out,
			"</title><rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" "
			"fill=\"rgb(%d,%d,%d)\" rx=\"2\" ry=\"2\"/><text x=\"%.2f\" y=\"%.1f\">",
			x[ni], y, w[ni], SVG_FRAME_H - 1, rgb[0], rgb[1], rgb[2], x[ni] + 3,
			y + 11.5);
		put_label(out, nd->name, w[ni]);
		fputs("</text></g>\n", out);

		/* Children in reverse, so they come out in name order. */
		for (uint32_t c = k.first[ni + 1]; c-- > k.first[ni];) {
			uint32_t ci = k.child[c];
			if (w[ci] < SVG_MIN_PX)
				continue;
			if (base)
				bmatch[ci] = bmatch[ni] == FLAME_NONE
						 ? FLAME_NONE
						 : kids_find(base, &bk, bmatch[ni], nodes[ci].name);
			stack[sp++] = ci;
		}
	}
	fputs("</svg>\n", out);
	rc = fflush(out) != 0 || ferror(out) ? -(errno ? errno : EIO) : 0;
out:
	kids_free(&k);
	kids_free(&bk);
	free(stack);
	free(bmatch);
	free(x);
	free(w);
	return rc;
}
