/*
 * shmring.c - unit tests of common/shm-ring.c: the shared region's record writer and
 * checked reader, through many wraps, overrun, skipped events, a broken region, and
 * a writer thread racing the reader (a record overwritten while it is copied is
 * discarded, never returned torn).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "shm-ring.h"
#include "unit.h"

#define SIZE 4096u

static uint64_t region[(SHM_RING_HDR + SIZE) / 8];
static uint8_t buf[SIZE];

/* Record k: k's low byte repeated, 1 + k * 7 % 300 bytes long, k % 5 events. */
static size_t rec_len(uint64_t k)
{
	return 1 + (size_t)(k * 7 % 300);
}

static void put(struct shm_writer *w, uint64_t k)
{
	uint8_t msg[512];

	memset(msg, (int)(k & 0xff), rec_len(k));
	CHECK(shm_writer_put(w, msg, rec_len(k), (uint32_t)(k % 5)) == 0, "record %llu",
	    (unsigned long long)k);
}

/* The next record is k's, with lost events before it. */
static void expect(struct shm_reader *r, uint64_t k, uint64_t lost_want)
{
	size_t len = 0;
	uint64_t lost = 99;
	const char *why = NULL;
	enum shm_read rd = shm_reader_next(r, buf, sizeof(buf), &len, &lost, &why);

	CHECK(rd == SHM_READ_OK, "record %llu: %d %s", (unsigned long long)k, rd, why ? why : "");
	if (rd != SHM_READ_OK)
		return;
	CHECK(len == rec_len(k) && lost == lost_want, "record %llu: len %zu lost %llu",
	    (unsigned long long)k, len, (unsigned long long)lost);
	for (size_t i = 0; i < len; i++)
		if (buf[i] != (uint8_t)(k & 0xff)) {
			CHECK(0, "record %llu: byte %zu is %u", (unsigned long long)k, i, buf[i]);
			return;
		}
}

static void wraps(void)
{
	struct shm_writer w;
	struct shm_reader r;
	size_t len;
	uint64_t lost;
	const char *why = NULL;

	shm_writer_init(&w, region, SIZE);
	CHECK(!shm_reader_init(&r, region, sizeof(region), w.write, w.events));
	CHECK(shm_reader_next(&r, buf, sizeof(buf), &len, &lost, &why) == SHM_READ_NONE);
	/* ~100 laps of the region, the reader keeping up, two records at a time */
	for (uint64_t k = 0; k < 4000; k += 2) {
		put(&w, k);
		put(&w, k + 1);
		expect(&r, k, 0);
		expect(&r, k + 1, 0);
	}
	CHECK(w.write > 90 * SIZE, "only %llu bytes written", (unsigned long long)w.write);
	CHECK(shm_reader_next(&r, buf, sizeof(buf), &len, &lost, &why) == SHM_READ_NONE);
	CHECK(r.events == w.events);
}

static void overrun(void)
{
	struct shm_writer w;
	struct shm_reader r;
	uint64_t got = 0, lost_sum = 0, k, first = 0;

	shm_writer_init(&w, region, SIZE);
	CHECK(!shm_reader_init(&r, region, sizeof(region), w.write, w.events));
	/* 3 laps unread: the reader loses what was overwritten, counted from events */
	for (k = 0; k < 100; k++)
		put(&w, k);
	for (;;) {
		size_t len;
		uint64_t lost;
		const char *why = NULL;
		enum shm_read rd = shm_reader_next(&r, buf, sizeof(buf), &len, &lost, &why);

		CHECK(rd != SHM_READ_BAD, "%s", why);
		if (rd != SHM_READ_OK)
			break;
		if (got == 0 && lost_sum == 0)
			CHECK(lost > 0, "the first record after an overrun lost nothing");
		first = buf[0];
		got += first % 5;
		lost_sum += lost;
	}
	CHECK(got + lost_sum == w.events, "got %llu + lost %llu != %llu", (unsigned long long)got,
	    (unsigned long long)lost_sum, (unsigned long long)w.events);
	CHECK(first == 99, "the last record is %llu", (unsigned long long)first);
}

static void skipped(void)
{
	struct shm_writer w;
	struct shm_reader r;
	uint8_t big[SIZE];

	shm_writer_init(&w, region, SIZE);
	CHECK(!shm_reader_init(&r, region, sizeof(region), w.write, w.events));
	put(&w, 1);
	shm_writer_skip(&w, 1000);
	/* too large for the region: refused, its events skipped */
	CHECK(shm_writer_put(&w, big, shm_writer_max(&w) + 1, 7) < 0);
	put(&w, 2);
	expect(&r, 1, 0);
	expect(&r, 2, 1007);
}

static void broken(void)
{
	struct shm_writer w;
	struct shm_reader r;
	size_t len;
	uint64_t lost;
	const char *why = NULL;
	struct shm_rec rec;

	shm_writer_init(&w, region, SIZE);
	CHECK(shm_reader_init(&r, region, sizeof(region) - 8, 0, 0), "a short mapping");
	CHECK(shm_reader_init(&r, region, 1024, 0, 0), "a tiny mapping");
	w.h->magic ^= 1;
	CHECK(shm_reader_init(&r, region, sizeof(region), 0, 0), "a bad magic");
	w.h->magic ^= 1;
	w.h->size = 1u << 30;
	CHECK(shm_reader_init(&r, region, sizeof(region), 0, 0), "a size past the mapping");
	w.h->size = SIZE;
	CHECK(!shm_reader_init(&r, region, sizeof(region), 0, 0));
	put(&w, 1);
	/* a record's length past the region: an error, not a read out of bounds */
	memcpy(&rec, w.data, sizeof(rec));
	rec.len = SIZE - 8;
	memcpy(w.data, &rec, sizeof(rec));
	CHECK(shm_reader_next(&r, buf, sizeof(buf), &len, &lost, &why) == SHM_READ_BAD && why);
	/* event counts that go back */
	rec.len = (uint32_t)rec_len(1);
	rec.events_before = 0;
	memcpy(w.data, &rec, sizeof(rec));
	CHECK(!shm_reader_init(&r, region, sizeof(region), 0, 5));
	CHECK(shm_reader_next(&r, buf, sizeof(buf), &len, &lost, &why) == SHM_READ_BAD);
	/* positions out of order: a reader past the write position */
	CHECK(!shm_reader_init(&r, region, sizeof(region), w.write + 64, 0));
	CHECK(shm_reader_next(&r, buf, sizeof(buf), &len, &lost, &why) == SHM_READ_BAD);
}

/* A writer thread racing the reader: every record returned is whole. */
static struct shm_writer race_w;
#define RACE_N 300000u

static void *race_writer(void *arg)
{
	for (uint64_t k = 0; k < RACE_N; k++) {
		uint8_t msg[512];

		memset(msg, (int)(k & 0xff), rec_len(k));
		/* the length tells k's low byte apart from its neighbours' */
		msg[0] = (uint8_t)(k & 0xff);
		shm_writer_put(&race_w, msg, rec_len(k), 1);
	}
	return NULL;
}

static void race(void)
{
	static uint64_t big[(SHM_RING_HDR + SIZE) / 8];
	struct shm_reader r;
	pthread_t t;
	uint64_t got = 0, lost_sum = 0, torn = 0;

	shm_writer_init(&race_w, big, SIZE);
	CHECK(!shm_reader_init(&r, big, sizeof(big), 0, 0));
	CHECK(pthread_create(&t, NULL, race_writer, NULL) == 0);
	while (got + lost_sum < RACE_N) {
		size_t len;
		uint64_t lost;
		const char *why = NULL;
		enum shm_read rd = shm_reader_next(&r, buf, sizeof(buf), &len, &lost, &why);

		if (rd == SHM_READ_BAD) {
			CHECK(0, "%s", why);
			break;
		}
		if (rd == SHM_READ_NONE)
			continue;
		lost_sum += lost;
		/* record k = got + lost_sum - 1 (one event each) */
		uint64_t k = got + lost_sum;
		if (len != rec_len(k) || buf[0] != (uint8_t)(k & 0xff) ||
		    buf[len - 1] != (uint8_t)(k & 0xff))
			torn++;
		got++;
	}
	pthread_join(t, NULL);
	CHECK(torn == 0, "%llu torn records of %llu", (unsigned long long)torn,
	    (unsigned long long)got);
	CHECK(got + lost_sum == RACE_N, "got %llu + lost %llu", (unsigned long long)got,
	    (unsigned long long)lost_sum);
}

const struct unit_test unit_shmring[] = {
	{ "shmring", "wraps", wraps },
	{ "shmring", "overrun", overrun },
	{ "shmring", "skipped", skipped },
	{ "shmring", "broken", broken },
	{ "shmring", "race", race },
	{ "shmring", NULL, NULL },
};
