/*
 * cat-nats.h - mtrace-cat --nats: the fleet stream read back from NATS JetStream (the
 * stream MTRACE that mtrace-ship fills, docs/fleet.md), one message at a time in the
 * contract of mtc_next, so that every filter and format of -i works on it.
 */
#ifndef MTRACE_CAT_NATS_H
#define MTRACE_CAT_NATS_H

#include <stddef.h>
#include <stdint.h>

#include "cat-args.h"
#include "mtrace.pb-c.h"

/* Connect and subscribe (an ordered consumer): 0, or -1 with a sentence in err. */
int cat_nats_open(const struct cat_opts *o, char *err, size_t errlen);
/*
 * 1 with *m (free with mtc_msg_free) and its frame in raw/rlen (valid until the next
 * call); 0 when nothing came within timeout_ms (< 0: a second); -1 at the end (caught up
 * and not --follow: errno 0) or on an error (err set).
 */
int cat_nats_next(int timeout_ms, Mtrace__ServerMsg **m, const uint8_t **raw, size_t *rlen,
    char *err, size_t errlen);
void cat_nats_close(void);

#endif
