/* libFuzzer target: the reader over arbitrary bytes, with every check on,
 * in file order and with FXT_READER_TIME_ORDER, and in file order again
 * with fxt_reader_next_plain() taking the plain events it can.
 *
 * It reads every record, touches every byte of every decoded string (so
 * that ASan sees a bad pointer or length) and every payload byte, and
 * converts timestamps.  Build: configure --enable-fuzzing CC=clang; run:
 * make fuzz [FUZZ_SECONDS=N]. */
#include <stddef.h>
#include <stdint.h>

#include <fxt/reader.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint64_t sink;

static uint64_t touch(const void *p, uint64_t len)
{
	const volatile uint8_t *b = p;
	uint64_t sum = 0;
	for (uint64_t i = 0; i < len; i++)
		sum += b[i];
	return sum;
}

static uint64_t touch_str(struct fxt_string s)
{
	return touch(s.data, s.len) + fxt_utf8_valid(s.data, s.len);
}

static void on_diag(void *ctx, enum fxt_diag_level level, uint64_t off, const char *msg)
{
	(void)ctx;
	sink += (uint64_t)level + off + touch(msg, __builtin_strlen(msg));
}

/* Reads the whole input with `flags`, through fxt_reader_next_plain()
 * first if `plain`. */
static void read_all(const uint8_t *data, size_t size, unsigned flags, int plain)
{
	struct fxt_reader *r;
	struct fxt_record rec;
	struct fxt_plain ev[4];
	uint64_t sum = 0;
	int rc;

	if (fxt_reader_open_mem(&r, data, size, flags) != 0)
		return;
	fxt_reader_set_diag(r, on_diag, NULL);
	for (;;) {
		size_t k = plain ? fxt_reader_next_plain(r, ev, 4) : 0;

		for (size_t i = 0; i < k; i++)
			sum += touch(ev[i].category, ev[i].category_len) +
			       touch(ev[i].name, ev[i].name_len) + ev[i].ts + ev[i].pid;
		if (k)
			continue;
		if ((rc = fxt_reader_next(r, &rec)) != 1)
			break;
		for (unsigned i = 0; i < rec.nargs; i++) {
			sum += touch_str(rec.args[i].name);
			if (rec.args[i].type == FXT_ARG_STRING)
				sum += touch_str(rec.args[i].v.s);
		}
		switch (rec.type) {
		case FXT_RECORD_METADATA:
			sum += touch_str(rec.u.meta.name);
			break;
		case FXT_RECORD_STRING:
			sum += touch_str(rec.u.string.str);
			break;
		case FXT_RECORD_EVENT:
			sum += touch_str(rec.u.event.category) + touch_str(rec.u.event.name);
			sum += fxt_reader_ticks_to_ns(r, rec.u.event.ts);
			sum += (uint64_t)*fxt_event_type_name(rec.u.event.type);
			break;
		case FXT_RECORD_BLOB:
			sum +=
			    touch_str(rec.u.blob.name) + touch(rec.u.blob.payload, rec.u.blob.size);
			break;
		case FXT_RECORD_USERSPACE_OBJECT:
			sum += touch_str(rec.u.uobj.name);
			break;
		case FXT_RECORD_KERNEL_OBJECT:
			sum += touch_str(rec.u.kobj.name);
			break;
		case FXT_RECORD_LOG:
			sum += touch_str(rec.u.log.msg);
			break;
		case FXT_RECORD_LARGE:
			sum += touch_str(rec.u.large.category) + touch_str(rec.u.large.name);
			if (rec.u.large.payload)
				sum += touch(rec.u.large.payload, rec.u.large.size);
			break;
		default:
			break;
		}
		sum += (uint64_t)*fxt_record_type_name(rec.type);
	}
	uint64_t off = 0;
	const char *err = fxt_reader_error(r, &off);
	if ((rc < 0) != (err != NULL))
		__builtin_trap(); /* an error, and only an error, says why */
	if (err)
		sum += touch(err, __builtin_strlen(err));
	sum += fxt_reader_offset(r) + fxt_reader_saw_magic(r);
	sum += fxt_reader_late(r, NULL) + fxt_reader_record_pos(r);
	fxt_reader_free(r);
	sink += sum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	read_all(data, size, FXT_READER_VALIDATE, 0);
	/* Each thread's begins and ends in time order: the first pass that
	 * reads events in place, and the copies of late ones. */
	read_all(data, size, FXT_READER_VALIDATE | FXT_READER_TIME_ORDER, 0);
	read_all(data, size, 0, 1);
	return 0;
}
