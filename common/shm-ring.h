/*
 * shm-ring.h - the shared-memory region mtraced writes a stream group's messages into
 * and its local clients read (docs/stream-protocol.md, "Shared memory"); the writer
 * (mtraced) and the checked reader (libmtrace-client) share this code and the layout.
 *
 * Layout: a header of SHM_RING_HDR bytes, then size bytes of data.  Positions count
 * bytes ever written (offset = pos % size).  A record is a struct shm_rec, then len
 * bytes (one framed ServerMsg), padded to 8; a record never straddles the end: a
 * record header with len SHM_REC_WRAP, or fewer than sizeof(struct shm_rec) bytes
 * left, means "go on at offset 0".  write is stored (release) after the bytes it
 * covers; tail (the oldest valid position) is stored before bytes are overwritten,
 * so a reader that copied a record at pos and then finds tail <= pos has a good copy.
 */
#ifndef MTRACE_SHM_RING_H
#define MTRACE_SHM_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SHM_RING_MAGIC   0x5253544du /* "MTSR" */
#define SHM_RING_VERSION 1u
#define SHM_RING_HDR     256u
#define SHM_REC_WRAP     UINT32_MAX

struct shm_ring_hdr {
	uint32_t magic, version;
	uint64_t size;     /* data bytes */
	uint64_t hdr_size; /* SHM_RING_HDR */
	uint8_t pad0[40];  /* write and tail on cache lines of their own */
	uint64_t write;    /* offset 64: bytes ever written */
	uint8_t pad1[56];
	uint64_t tail; /* offset 128: oldest position still valid */
	uint8_t pad2[56];
	uint64_t events; /* offset 192: cumulative events, written or skipped */
	uint8_t pad3[56];
};
_Static_assert(sizeof(struct shm_ring_hdr) == SHM_RING_HDR, "header size");

struct shm_rec {
	uint32_t len;           /* payload bytes, or SHM_REC_WRAP */
	uint32_t events;        /* events in this record (0: a notice) */
	uint64_t events_before; /* cumulative events before this record */
};

/* The writer's view: base is the mapping (header + data), owned by the caller. */
struct shm_writer {
	struct shm_ring_hdr *h;
	uint8_t *data;
	uint64_t size, write, tail, events;
	size_t reserved; /* the payload being written (shm_writer_reserve) */
};

/* Lay out a fresh region of SHM_RING_HDR + size bytes at base (size: a multiple of 8,
 * at least 4096). */
void shm_writer_init(struct shm_writer *w, void *base, uint64_t size);
/* The largest payload a record may have (a quarter of the data). */
uint64_t shm_writer_max(const struct shm_writer *w);
/* Append one record of len bytes carrying events (len <= shm_writer_max, else -1 and
 * the events are counted as skipped). */
int shm_writer_put(struct shm_writer *w, const void *msg, size_t len, uint32_t events);
/* Room for a payload of len bytes, written in place and then committed (no other
 * call between): NULL when len is above shm_writer_max. */
void *shm_writer_reserve(struct shm_writer *w, size_t len);
void shm_writer_commit(struct shm_writer *w, uint32_t events);
/* Events that were never written (dropped for every reader): readers see the gap. */
void shm_writer_skip(struct shm_writer *w, uint64_t events);

/* The reader's view: a read-only mapping it checked with shm_reader_init. */
struct shm_reader {
	const struct shm_ring_hdr *h;
	const uint8_t *data;
	uint64_t size, pos, events; /* next record, events expected before it */
};

/* Check a mapping of map_len bytes; NULL, or why not. */
const char *shm_reader_init(
    struct shm_reader *r, const void *base, size_t map_len, uint64_t pos, uint64_t events);
enum shm_read {
	SHM_READ_NONE = 0, /* nothing new */
	SHM_READ_OK = 1,   /* a record in buf */
	SHM_READ_BAD = -1, /* the region is broken (why) */
};
/*
 * The next record copied into buf (cap bytes, at least shm_writer_max's): its length in
 * *len; *lost gets the events the reader missed before it (overwritten under it, or
 * skipped by the writer).  Records overwritten while being copied are discarded and
 * the reader goes on at the tail.
 */
enum shm_read shm_reader_next(
    struct shm_reader *r, uint8_t *buf, size_t cap, size_t *len, uint64_t *lost, const char **why);
/* The writer's position now (to know whether there is more). */
uint64_t shm_reader_write(const struct shm_reader *r);

#endif
