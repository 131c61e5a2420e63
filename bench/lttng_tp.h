/* bench: the LTTng-UST tracepoint provider with the same two integer fields as vigil's
 * bench sensor (lttng-ust 2.13 API). */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER vigil_bench

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "lttng_tp.h"

#if !defined(VIGIL_BENCH_LTTNG_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define VIGIL_BENCH_LTTNG_TP_H

#include <lttng/tracepoint.h>
#include <stdint.h>

/* clang-format off */
LTTNG_UST_TRACEPOINT_EVENT(
	vigil_bench, pair,
	LTTNG_UST_TP_ARGS(int64_t, a, int64_t, b),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int64_t, a, a)
		lttng_ust_field_integer(int64_t, b, b)
	)
)
/* clang-format on */

#endif

#include <lttng/tracepoint-event.h>
