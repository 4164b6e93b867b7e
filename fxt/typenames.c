/* Printable names of FXT record, event and argument types.  fxt-dump prints
 * them and other tools grep its output: keep them stable. */
#include <fxt/reader.h>

#include <stdint.h>
#include <string.h>

const char *fxt_record_type_name(unsigned type)
{
	static const char *const names[] = {
		[FXT_RECORD_METADATA] = "metadata",
		[FXT_RECORD_INITIALIZATION] = "init",
		[FXT_RECORD_STRING] = "string",
		[FXT_RECORD_THREAD] = "thread",
		[FXT_RECORD_EVENT] = "event",
		[FXT_RECORD_BLOB] = "blob",
		[FXT_RECORD_USERSPACE_OBJECT] = "uobj",
		[FXT_RECORD_KERNEL_OBJECT] = "kobj",
		[FXT_RECORD_CONTEXT_SWITCH] = "cswitch",
		[FXT_RECORD_LOG] = "log",
		[FXT_RECORD_LARGE] = "large",
	};
	if (type < sizeof(names) / sizeof(names[0]) && names[type])
		return names[type];
	return "reserved";
}

const char *fxt_event_type_name(unsigned type)
{
	static const char *const names[FXT_EVENT_TYPE_COUNT] = {
		[FXT_EVENT_INSTANT] = "instant",
		[FXT_EVENT_COUNTER] = "counter",
		[FXT_EVENT_DURATION_BEGIN] = "begin",
		[FXT_EVENT_DURATION_END] = "end",
		[FXT_EVENT_DURATION_COMPLETE] = "complete",
		[FXT_EVENT_ASYNC_BEGIN] = "async_begin",
		[FXT_EVENT_ASYNC_INSTANT] = "async_instant",
		[FXT_EVENT_ASYNC_END] = "async_end",
		[FXT_EVENT_FLOW_BEGIN] = "flow_begin",
		[FXT_EVENT_FLOW_STEP] = "flow_step",
		[FXT_EVENT_FLOW_END] = "flow_end",
	};
	return type < FXT_EVENT_TYPE_COUNT ? names[type] : "unknown";
}

const char *fxt_arg_type_name(unsigned type)
{
	static const char *const names[FXT_ARG_TYPE_COUNT] = {
		[FXT_ARG_NULL] = "null",  [FXT_ARG_INT32] = "i32",   [FXT_ARG_UINT32] = "u32",
		[FXT_ARG_INT64] = "i64",  [FXT_ARG_UINT64] = "u64",  [FXT_ARG_DOUBLE] = "f64",
		[FXT_ARG_STRING] = "str", [FXT_ARG_POINTER] = "ptr", [FXT_ARG_KOID] = "koid",
		[FXT_ARG_BOOL] = "bool",
	};
	return type < FXT_ARG_TYPE_COUNT ? names[type] : "unknown";
}

/* N of a marker name FXT_DROP_PREFIX "N" suffix, else 0. */
static uint64_t marker_count(const char *name, size_t len, const char *suffix)
{
	static const char prefix[] = FXT_DROP_PREFIX;
	const size_t np = sizeof(prefix) - 1, ns = strlen(suffix);
	uint64_t n = 0;

	if (len <= np + ns || memcmp(name, prefix, np) != 0 ||
	    memcmp(name + len - ns, suffix, ns) != 0)
		return 0;
	for (size_t i = np; i < len - ns; i++) {
		char c = name[i];
		if (c < '0' || c > '9')
			return 0;
		uint64_t d = (uint64_t)(c - '0');
		if (n > (UINT64_MAX - d) / 10)
			return 0; /* past 64 bits: not a count we wrote */
		n = n * 10 + d;
	}
	return n;
}

uint64_t fxt_dropped_in_name(const char *name, size_t len)
{
	return marker_count(name, len, FXT_DROP_SUFFIX);
}

uint64_t fxt_overwritten_in_name(const char *name, size_t len)
{
	return marker_count(name, len, FXT_OVERWRITE_SUFFIX);
}

uint64_t fxt_kernel_lost_in_name(const char *name, size_t len)
{
	return marker_count(name, len, FXT_KERNEL_LOST_SUFFIX);
}
