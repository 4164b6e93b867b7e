/* What a traced process can be asked to record: the names of the libc
 * groups and of the modes, and the spelling of sizes (see recording.h). */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/recording.h"

static const struct {
	const char *name;
	unsigned bit;
} groups[] = {
	{ AGENT_G_NAME_IO, AGENT_G_IO },	 { AGENT_G_NAME_MEM, AGENT_G_MEM },
	{ AGENT_G_NAME_THREAD, AGENT_G_THREAD }, { AGENT_G_NAME_SYNC, AGENT_G_SYNC },
	{ AGENT_G_NAME_PROC, AGENT_G_PROC },	 { AGENT_G_NAME_SLEEP, AGENT_G_SLEEP },
	{ AGENT_G_NAME_LOG, AGENT_G_LOG },
};

const char *run_libc_group_name(unsigned group_bit)
{
	for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++)
		if (groups[i].bit == group_bit)
			return groups[i].name;
	return "?";
}

int run_libc_parse(const char *s, unsigned *out)
{
	unsigned mask = 0;

	while (*s) {
		size_t len = strcspn(s, ",");
		bool found = false;

		if (len == 3 && !strncmp(s, "all", 3)) {
			mask |= AGENT_G_ALL;
			found = true;
		} else if (len == 4 && !strncmp(s, "none", 4)) {
			found = true;
		} else if (len == 7 && !strncmp(s, "default", 7)) {
			mask |= AGENT_G_DEFAULT;
			found = true;
		}
		for (size_t i = 0; !found && i < sizeof(groups) / sizeof(groups[0]); i++) {
			if (strlen(groups[i].name) == len && !strncmp(s, groups[i].name, len)) {
				mask |= groups[i].bit;
				found = true;
			}
		}
		if (!found && len)
			return -1;
		s += len;
		if (*s == ',')
			s++;
	}
	*out = mask;
	return 0;
}

static const char *const modes[] = {
	[FXT_MODE_STREAM] = "stream",
	[FXT_MODE_ONESHOT] = "oneshot",
	[FXT_MODE_CIRCULAR] = "circular",
};

int run_mode_parse(const char *s, enum fxt_mode *out)
{
	for (unsigned i = 0; s && i < sizeof(modes) / sizeof(modes[0]); i++) {
		if (strcmp(s, modes[i]) == 0) {
			*out = (enum fxt_mode)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *run_mode_name(unsigned mode)
{
	return mode < sizeof(modes) / sizeof(modes[0]) ? modes[mode] : "?";
}

enum fxt_mode run_mode_resolve(bool given, enum fxt_mode mode, bool has_rules, const char **why)
{
	*why = NULL;
	if (!has_rules)
		return mode;
	if (!given)
		return FXT_MODE_CIRCULAR;
	if (mode != FXT_MODE_CIRCULAR)
		*why = "the mode is not circular";
	return mode;
}

uint64_t run_mode_default_buffer(enum fxt_mode mode)
{
	return mode == FXT_MODE_STREAM ? FXT_DEFAULT_BUFFER_STREAM : FXT_DEFAULT_BUFFER_THREAD;
}

/* ASCII lower case, without the locale. */
static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

int run_parse_size(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	unsigned shift = 0;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	for (; *s >= '0' && *s <= '9'; s++) {
		unsigned d = (unsigned)(*s - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	switch (lower(*s)) {
	case 'k':
		shift = 10;
		break;
	case 'm':
		shift = 20;
		break;
	case 'g':
		shift = 30;
		break;
	default:
		break;
	}
	if (shift) {
		s++;
		if (lower(*s) == 'i')
			s++;
	}
	if (lower(*s) == 'b')
		s++;
	if (*s != '\0')
		return -EINVAL;
	if (v > UINT64_MAX >> shift)
		return -ERANGE;
	*out = v << shift;
	return 0;
}

int run_parse_duration(const char *s, uint64_t *out)
{
	static const struct {
		const char *unit;
		uint64_t ns;
	} units[] = {
		{ "ns", 1 }, { "us", 1000 }, { "ms", 1000000 }, { "s", 1000000000 }, { "", 1 }
	};
	uint64_t whole = 0, frac = 0, scale = 1;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (whole > (UINT64_MAX - 9) / 10)
			return -ERANGE;
		whole = whole * 10 + (uint64_t)(*s - '0');
	}
	if (*s == '.') {
		s++;
		if (*s < '0' || *s > '9')
			return -EINVAL;
		for (; *s >= '0' && *s <= '9'; s++) {
			if (scale < 1000000000) { /* digits past 1e-9 are noise */
				frac = frac * 10 + (uint64_t)(*s - '0');
				scale *= 10;
			}
		}
	}
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(s, units[i].unit) != 0)
			continue;
		if (whole > UINT64_MAX / units[i].ns)
			return -ERANGE;
		*out = whole * units[i].ns + frac * units[i].ns / scale;
		return 0;
	}
	return -EINVAL;
}

int run_parse_seconds(const char *s, uint64_t *out)
{
	char buf[64];
	size_t n = s ? strspn(s, "0123456789.") : 0;

	if (!s || s[n] != '\0')
		return run_parse_duration(s, out);
	if (n + 2 > sizeof(buf))
		return -ERANGE;
	memcpy(buf, s, n);
	memcpy(buf + n, "s", 2);
	return run_parse_duration(buf, out);
}

/* A value rule's test, after NAME@: fills out's value fields.  0, or
 * -EINVAL with *at the offset in t of what is wrong and *what what. */
static int parse_test(const char *t, size_t len, struct fxt_snapshot_rule *out, size_t *at,
		      const char **what)
{
	static const struct {
		const char *text;
		enum fxt_snap_op op;
	} ops[] = { { "<=", FXT_OP_LE }, { ">=", FXT_OP_GE }, { "==", FXT_OP_EQ },
		    { "!=", FXT_OP_NE }, { "<", FXT_OP_LT },  { ">", FXT_OP_GT } };
	size_t i = 0, k;
	char num[32], *end;

	if (len >= 6 && strncmp(t, "retval", 6) == 0) {
		out->value_of = FXT_SNAP_RETVAL;
		i = 6;
	} else if (len > 3 && strncmp(t, "arg", 3) == 0 && t[3] >= '1' && t[3] <= '9') {
		out->value_of = 0;
		for (i = 3; i < len && t[i] >= '0' && t[i] <= '9' && out->value_of < 100; i++)
			out->value_of = out->value_of * 10 + (unsigned)(t[i] - '0');
		if (out->value_of > 64) {
			*at = 3;
			*what = "an argument's number, 1 to 64";
			return -EINVAL;
		}
	} else {
		*at = 0;
		*what = "retval or argN";
		return -EINVAL;
	}
	for (k = 0; k < sizeof(ops) / sizeof(ops[0]); k++)
		if (strncmp(t + i, ops[k].text, strlen(ops[k].text)) == 0 &&
		    i + strlen(ops[k].text) <= len)
			break;
	if (k == sizeof(ops) / sizeof(ops[0])) {
		*at = i;
		*what = "an operator: < <= > >= == !=";
		return -EINVAL;
	}
	out->op = ops[k].op;
	i += strlen(ops[k].text);
	*at = i;
	*what = "an integer or NULL";
	if (len - i == 4 && strncmp(t + i, "NULL", 4) == 0) {
		out->value = 0;
		out->negative = false;
		return 0;
	}
	if (i == len || len - i >= sizeof(num))
		return -EINVAL;
	memcpy(num, t + i, len - i);
	num[len - i] = '\0';
	out->negative = num[0] == '-';
	if (!(num[out->negative] >= '0' && num[out->negative] <= '9'))
		return -EINVAL;
	errno = 0;
	out->value = strtoull(num + out->negative, &end, 0);
	if (errno || *end != '\0')
		return -EINVAL;
	if (out->negative)
		out->value = (uint64_t)0 - out->value;
	return 0;
}

int run_snapshot_rule_parse_at(const char *s, size_t len, struct fxt_snapshot_rule *out,
			       size_t *pos, const char **what)
{
	char dur[64];
	size_t gt = len, at = len, p = 0;
	const char *w = NULL;

	out->value_of = 0;
	out->op = FXT_OP_LT;
	out->value = 0;
	out->negative = false;
	/* A value rule: NAME@TEST, split at the last '@'. */
	while (at > 0 && s[at - 1] != '@')
		at--;
	if (at > 0 && (len - at >= 3 && (strncmp(s + at, "arg", 3) == 0 ||
					 (len - at >= 6 && strncmp(s + at, "retval", 6) == 0)))) {
		if (at < 2 || at - 1 >= sizeof(out->name)) {
			p = 0;
			w = "a function's name or glob before '@'";
			goto bad;
		}
		memcpy(out->name, s, at - 1);
		out->name[at - 1] = '\0';
		out->libc_group = 0;
		out->limit_ns = 0;
		if (parse_test(s + at, len - at, out, &p, &w) != 0) {
			p += at;
			goto bad;
		}
		if (strncmp(out->name, "libc.", 5) == 0) {
			p = 0;
			w = "a function (libc groups take a duration only)";
			goto bad;
		}
		return 0;
	}
	while (gt > 0 && s[gt - 1] != '>')
		gt--;
	if (gt < 2 || gt - 1 >= sizeof(out->name) || len - gt >= sizeof(dur))
		return -EINVAL; /* no '>', or an empty NAME */
	memcpy(out->name, s, gt - 1);
	out->name[gt - 1] = '\0';
	memcpy(dur, s + gt, len - gt);
	dur[len - gt] = '\0';
	if (run_parse_duration(dur, &out->limit_ns) != 0)
		return -EINVAL;
	out->libc_group = 0;
	if (strncmp(out->name, "libc.", 5) == 0) {
		for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++)
			if (strcmp(out->name + 5, groups[i].name) == 0)
				out->libc_group = groups[i].bit;
		if (!out->libc_group)
			return -EINVAL;
	}
	return 0;
bad:
	if (pos)
		*pos = p;
	if (what)
		*what = w;
	return -EINVAL;
}

int run_snapshot_rule_parse(const char *s, size_t len, struct fxt_snapshot_rule *out)
{
	return run_snapshot_rule_parse_at(s, len, out, NULL, NULL);
}

int run_include_test_parse(const char *s, size_t len, struct fxt_snapshot_rule *out, size_t *pos,
			   const char **what)
{
	size_t p = 0;
	const char *w = NULL;

	if (run_snapshot_rule_parse_at(s, len, out, &p, &w) != 0) {
		if (!w)
			return 0; /* no test: NAME>DURATION or no rule at all */
		*pos = p;
		*what = w;
		return -EINVAL;
	}
	if (!out->value_of)
		return 0;
	if (out->value_of == FXT_SNAP_RETVAL) {
		*pos = strlen(out->name) + 1;
		*what = "argN (whether a call is recorded is decided at its entry, before it "
			"returns)";
		return -EINVAL;
	}
	return 1;
}

bool run_snapshot_value_holds(const struct fxt_snapshot_rule *r, uint64_t raw, unsigned width,
			      bool is_signed)
{
	unsigned bits = width >= 8 ? 64 : width * 8;

	if (bits < 64) {
		uint64_t mask = (1ull << bits) - 1;

		raw &= mask;
		if (is_signed && (raw >> (bits - 1)))
			raw |= ~mask;
	}
	if (is_signed) {
		int64_t a = (int64_t)raw, b = (int64_t)r->value;

		switch (r->op) {
		case FXT_OP_LT:
			return a < b;
		case FXT_OP_LE:
			return a <= b;
		case FXT_OP_GT:
			return a > b;
		case FXT_OP_GE:
			return a >= b;
		case FXT_OP_EQ:
			return a == b;
		case FXT_OP_NE:
			return a != b;
		}
		return false;
	}
	/* Unsigned: a negative constant is below every value. */
	if (r->negative)
		return r->op == FXT_OP_GT || r->op == FXT_OP_GE || r->op == FXT_OP_NE;
	switch (r->op) {
	case FXT_OP_LT:
		return raw < r->value;
	case FXT_OP_LE:
		return raw <= r->value;
	case FXT_OP_GT:
		return raw > r->value;
	case FXT_OP_GE:
		return raw >= r->value;
	case FXT_OP_EQ:
		return raw == r->value;
	case FXT_OP_NE:
		return raw != r->value;
	}
	return false;
}

void run_snapshot_rule_format(const struct fxt_snapshot_rule *r, char *buf, size_t cap)
{
	static const char *const ops[] = { "<", "<=", ">", ">=", "==", "!=" };
	char what[16];

	if (!r->value_of) {
		snprintf(buf, cap, "%s>%lluns", r->name, (unsigned long long)r->limit_ns);
		return;
	}
	if (r->value_of == FXT_SNAP_RETVAL)
		snprintf(what, sizeof(what), "retval");
	else
		snprintf(what, sizeof(what), "arg%u", r->value_of);
	if (r->negative)
		snprintf(buf, cap, "%s@%s%s%lld", r->name, what, ops[r->op], (long long)r->value);
	else
		snprintf(buf, cap, "%s@%s%s%llu", r->name, what, ops[r->op],
			 (unsigned long long)r->value);
}
