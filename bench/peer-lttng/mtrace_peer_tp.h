/*
 * mtrace_peer_tp.h - an LTTng-UST tracepoint carrying what one mtrace record carries
 * (op, type, thread, arg; LTTng adds its own 64-bit CLOCK_MONOTONIC timestamp), so the
 * two producers are compared on the same payload.
 */
#undef TRACEPOINT_PROVIDER
#define TRACEPOINT_PROVIDER mtrace_peer

#undef TRACEPOINT_INCLUDE
#define TRACEPOINT_INCLUDE "./mtrace_peer_tp.h"

#if !defined(MTRACE_PEER_TP_H) || defined(TRACEPOINT_HEADER_MULTI_READ)
#define MTRACE_PEER_TP_H

#include <lttng/tracepoint.h>
#include <stdint.h>

/* clang-format off */
TRACEPOINT_EVENT(mtrace_peer, ev,
	TP_ARGS(uint8_t, op, uint8_t, type, uint64_t, thread, uint64_t, arg),
	TP_FIELDS(
		ctf_integer(uint8_t, op, op)
		ctf_integer(uint8_t, type, type)
		ctf_integer(uint64_t, thread, thread)
		ctf_integer(uint64_t, arg, arg)
	)
)
/* clang-format on */

#endif

#include <lttng/tracepoint-event.h>
