/*
 * stream-shm.h - the shared-memory regions of the stream server (stream-shm.c): one
 * memfd per stream group with a member that asked for shared memory, into which the
 * group's messages are written once (common/shm-ring.h) instead of being queued to
 * each member's socket; its members' read positions and wake-ups (one eventfd write
 * per wake-up for all members that watch it, a SharedWake for each of the others).  A
 * region is kept for the next group once its readers left (clients may still map it)
 * and counted against client_shm_total until exit; a uid reads at most
 * client_shm_per_uid.
 */
#ifndef MTRACED_STREAM_SHM_H
#define MTRACED_STREAM_SHM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct event_base;
struct stream_blob;
struct stream_client;
struct stream_shm;
struct stream_shms;

/* The regions of one stream server (its settings, the bytes they take): wake(c, write)
 * when c asked to be woken and a region has records past its position.  NULL when out
 * of memory. */
struct stream_shms *stream_shms_new(
    struct event_base *base, void (*wake)(struct stream_client *c, uint64_t write));
/* Every region (after every group gave its own back): only now are they closed. */
void stream_shms_free(struct stream_shms *set);
/* client_shm_bytes, client_shm_total (0: none), client_shm_per_uid (0: half the
 * total), client_coalesce_us in ns: the least time between two wake-ups of a region's
 * readers.  Regions made before keep their size and stay counted. */
void stream_shm_configure(
    struct stream_shms *set, size_t bytes, size_t total, size_t per_uid, uint64_t wake_ns);
/* A region for a group whose first reader is of uid: one given back before, else a new
 * one (NULL with why: no set, the total or uid's share reached, no memory, no memfd). */
struct stream_shm *stream_shm_new(struct stream_shms *set, uid_t uid, const char **why);
/* Its last reader left: kept (not closed) for the next stream_shm_new. */
void stream_shm_free(struct stream_shm *r);
/* c (of uid) reads r from now on, woken through the region's eventfd (efd: it took it)
 * or by SharedWake messages: 0, or -1 with why (uid's share reached, out of memory). */
int stream_shm_add(
    struct stream_shm *r, struct stream_client *c, uid_t uid, bool efd, const char **why);
/* Members left after c (not one: true when c was not a member). */
size_t stream_shm_remove(struct stream_shm *r, struct stream_client *c, bool *found);
int stream_shm_fd(const struct stream_shm *r);
/* The region's eventfd, written once per wake-up for all its members that took it. */
int stream_shm_wake_fd(const struct stream_shm *r);
uint64_t stream_shm_map_size(const struct stream_shm *r);
uint64_t stream_shm_write_pos(const struct stream_shm *r);
uint64_t stream_shm_events(const struct stream_shm *r);
/* A group's batch of n events (b NULL: dropped, the readers see the gap) or notice
 * (n 0) written once for all members. */
void stream_shm_put(struct stream_shm *r, const struct stream_blob *b, size_t n);
/* The same for a batch encoded in place: room for a framed message of len bytes (NULL:
 * too large, then stream_shm_put(r, NULL, n)), then its commit with its n events. */
uint8_t *stream_shm_reserve(struct stream_shm *r, size_t len);
void stream_shm_commit(struct stream_shm *r, size_t n);
/* A SharedRead of c (r: its region, NULL when it has none): out-of-range positions
 * clamped, stale ones ignored. */
void stream_shm_read(struct stream_shm *r, struct stream_client *c, uint64_t pos, bool wait);

#endif
