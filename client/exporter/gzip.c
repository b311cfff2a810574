/*
 * gzip.c - a scrape gzipped when the scraper says Accept-Encoding: gzip (Prometheus
 * does): the exposition repeats every label set on every line, so it shrinks ~20 times,
 * and a dom0 with a hundred guests answers in a few hundred KB instead of megabytes.
 * Level 1: the scrape is made once and read once, speed matters more than the last
 * percent.
 */
#include <stdint.h>
#include <string.h>
#include <zlib.h>

#include <event2/buffer.h>

#include "exporter.h"

#define GZIP_WINDOW (15 + 16) /* zlib's way of asking for a gzip header */
#define OUT_CHUNK   65536

int gzip_evbuffer(struct evbuffer *in, struct evbuffer *out)
{
	size_t n = evbuffer_get_length(in);
	z_stream z;
	int zr = Z_OK;

	memset(&z, 0, sizeof(z));
	if (n > UINT32_MAX ||
	    deflateInit2(&z, 1, Z_DEFLATED, GZIP_WINDOW, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -1;
	/* expo_render adds the exposition in one piece: pulling it up copies nothing */
	z.next_in = evbuffer_pullup(in, -1);
	z.avail_in = (uInt)n;
	while (zr == Z_OK) {
		struct evbuffer_iovec v;

		if (evbuffer_reserve_space(out, OUT_CHUNK, &v, 1) < 1)
			break;
		z.next_out = v.iov_base;
		z.avail_out = (uInt)v.iov_len;
		zr = deflate(&z, Z_FINISH);
		v.iov_len -= z.avail_out;
		evbuffer_commit_space(out, &v, 1);
	}
	deflateEnd(&z);
	return zr == Z_STREAM_END ? 0 : -1;
}
