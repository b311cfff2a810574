/* The tracepoint provider's probes, instantiated once. */
#define TRACEPOINT_CREATE_PROBES
#define TRACEPOINT_DEFINE
#include "mtrace_peer_tp.h"
