/*
 * spool.h - mtrace-ship's bounded on-disk spool: what could not be published while NATS
 * was away, kept in order (subject, message id, payload) in one file and drained from
 * its head when NATS is back.  A spool left by an earlier run is drained first.
 */
#ifndef MTRACE_SHIP_SPOOL_H
#define MTRACE_SHIP_SPOOL_H

#include <stddef.h>
#include <stdint.h>

struct spool;

/* The spool file in dir (created), at most max bytes; NULL with a sentence in err. */
struct spool *spool_open(const char *dir, uint64_t max, char *err, size_t errlen);
void spool_close(struct spool *s);

/* Append one record: 0, 1 if it does not fit (the caller counts it lost), -1 with errno. */
int spool_put(struct spool *s, const char *subject, const char *id, const uint8_t *data, size_t len,
    uint32_t events);

/* Bytes and records waiting. */
uint64_t spool_bytes(const struct spool *s);
uint64_t spool_records(const struct spool *s);

/*
 * The head record (buffers valid until the next call): 1, 0 when empty, -1 on a read
 * error or a damaged file (the rest is dropped then, counted in *events_lost).
 */
int spool_peek(struct spool *s, const char **subject, const char **id, const uint8_t **data,
    size_t *len, uint32_t *events);
/* The head record was published: drop it (the file is emptied once all are). */
void spool_pop(struct spool *s);

#endif
