/*
 * spool.h - mtrace-ship's bounded on-disk spool: what could not be published while NATS
 * was away, kept in order (subject, message id, payload) in one file and drained from
 * its head when NATS is back.  A spool left by an earlier run is drained first.
 *
 * Draining is pipelined: records are read ahead from a cursor (spool_next) while the
 * ones before it wait for their acknowledgements, and leave the file only in order, as
 * each head record is acknowledged (spool_pop); when NATS fails again the cursor goes
 * back to the head (spool_rewind) and nothing unacknowledged has left the file.
 */
#ifndef MTRACE_SHIP_SPOOL_H
#define MTRACE_SHIP_SPOOL_H

#include <stddef.h>
#include <stdint.h>

#include "mtrace-proto.h"

/* A record's parts at most: a subject of two escaped tokens, an id (msgid.h), a frame
 * of mtraced's.  The spool is a file anyone with the directory's rights could have
 * written: nothing longer is read from it. */
#define SPOOL_SUBJECT_MAX 2048u
#define SPOOL_ID_MAX      1024u
#define SPOOL_DATA_MAX    (FRAME_MAX_TO_CLIENT + FRAME_VARINT_MAX)

struct spool;

/*
 * The spool file dir/mtrace-ship.spool, at most max bytes; NULL with a sentence in err.
 * dir is made (mode 0700) when missing, and refused when it is not this user's or
 * others may write to it; the file is opened without following a symlink, and refused
 * unless it is a regular file of this user.  What an earlier run left is sent first.
 */
struct spool *spool_open(const char *dir, uint64_t max, char *err, size_t errlen);
void spool_close(struct spool *s);

/* Append one record: 0, 1 if it does not fit (the caller counts it lost), -1 with errno. */
int spool_put(struct spool *s, const char *subject, const char *id, const uint8_t *data, size_t len,
    uint32_t events);

/* Bytes and records waiting (not yet acknowledged, read ahead or not). */
uint64_t spool_bytes(const struct spool *s);
uint64_t spool_records(const struct spool *s);
/* Records after the cursor, not read ahead yet. */
uint64_t spool_unread(const struct spool *s);

/*
 * The record at the cursor, which moves past it (buffers valid until the next call): 1,
 * 0 when every record has been read ahead, -1 on a read error (errno; the cursor stays).
 */
int spool_next(struct spool *s, const char **subject, const char **id, const uint8_t **data,
    size_t *len, uint32_t *events);
/* The head record was acknowledged: drop it (the file is emptied once all are). */
void spool_pop(struct spool *s);
/* Read ahead again from the head (what was read ahead was not acknowledged). */
void spool_rewind(struct spool *s);

#endif
