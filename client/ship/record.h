/*
 * record.h - what this shipper may publish, checked on every record read back from the
 * spool: the spool is a file, and whoever could write it must not steer the shipper (a
 * record naming $JS.API.STREAM.PURGE.MTRACE would purge the stream, one naming another
 * host's subject would forge that host's messages).
 */
#ifndef MTRACE_SHIP_RECORD_H
#define MTRACE_SHIP_RECORD_H

#include <stddef.h>
#include <stdint.h>

/*
 * NULL when the record is one this shipper, publishing as host_tok, could have spooled
 * itself, else why not:
 *   subject  mtrace.<host_tok>.<domain>.events or mtrace.<host_tok>._.stats, <domain>
 *            being "_", "_<domid>" or a token exactly as subject_token_escape makes it;
 *   id       <host_tok>-... of the characters ids are made of (msgid.h), bounded;
 *   data     one whole frame of a ServerMsg that mtraced sends to a client (or the
 *            shipper's own Loss notice), a Stats on the stats subject only.
 */
const char *record_invalid(const char *host_tok, const char *subject, const char *id,
    const uint8_t *data, size_t len, uint32_t *events);

#endif
