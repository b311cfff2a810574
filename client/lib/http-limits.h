/*
 * http-limits.h - what a program sets and reads of the HTTP front (http-front.h): its
 * limits and its counts.  Apart from http-conns.h so that the programs' header shows
 * these and nothing of the connections themselves.
 */
#ifndef MTRACE_HTTP_LIMITS_H
#define MTRACE_HTTP_LIMITS_H

#include <stddef.h>
#include <stdint.h>

struct hf_limits {
	unsigned max_conns;         /* HTTP connections at once */
	unsigned max_per_source;    /* of them from one address */
	unsigned request_timeout_s; /* a request, from its first byte to its answer sent */
	unsigned idle_timeout_s;    /* a kept-alive connection between requests */
	size_t max_headers, max_body;
	size_t out_conn;  /* response bytes queued for one connection */
	size_t out_total; /* ... for all of them */
};

struct hf_stats {
	unsigned live;            /* connections now */
	uint64_t requests;        /* answered by the program */
	uint64_t refused;         /* over the total cap: 503 and closed before a read */
	uint64_t refused_source;  /* over the per-source cap, likewise */
	uint64_t evicted;         /* silent, closed for a newcomer at the total cap */
	uint64_t cut;             /* past the request or idle deadline */
	uint64_t cut_reader;      /* not reading their answers, past the output caps */
	uint64_t busy;            /* 503: the answer would not fit the output caps */
	uint64_t accept_failures; /* accept() failed (out of descriptors) */
	size_t queued;            /* response bytes queued, all connections */
};

#endif
