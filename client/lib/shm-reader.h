/*
 * shm-reader.h - the client's side of a shared-memory region from mtraced
 * (shm-reader.c, docs/stream-protocol.md "Shared memory"): the memfd mapped read-only,
 * its header checked, records copied out and checked one by one; the region's eventfd
 * kept with it.
 */
#ifndef MTRACE_SHM_READER_H
#define MTRACE_SHM_READER_H

#include <stddef.h>
#include <stdint.h>

#include "mtrace.pb-c.h"

struct mtc_shm;

/* Map fd (taken over: closed in any case) as r describes it, with wake_fd the region's
 * eventfd (-1: none; taken over too, closed with the region); NULL with a sentence in
 * err. */
struct mtc_shm *mtc_shm_open(
    int fd, int wake_fd, const Mtrace__SharedRing *r, char *err, size_t errlen);
/* The region's eventfd, or -1. */
int mtc_shm_wake_fd(const struct mtc_shm *s);
void mtc_shm_close(struct mtc_shm *s);
/*
 * The next record: 1 with *frame and *len the framed ServerMsg (valid until the next call)
 * and *lost the events missed before it, 0 when there is none yet, -1 when the region
 * is broken (a sentence in err).
 */
int mtc_shm_next(struct mtc_shm *s, const uint8_t **frame, size_t *len, uint64_t *lost, char *err,
    size_t errlen);
/* Whether a and b map the same region (two fds of one memfd). */
int mtc_shm_same(const struct mtc_shm *a, const struct mtc_shm *b);
/* to (the same region) reads on from where from is. */
void mtc_shm_continue(struct mtc_shm *to, const struct mtc_shm *from);
/* The position to report, and whether a report is due (every 1/8 of the region). */
uint64_t mtc_shm_pos(const struct mtc_shm *s);
int mtc_shm_report_due(struct mtc_shm *s);

#endif
