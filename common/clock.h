/*
 * clock.h - the monotonic clock and the conversions to what libevent and the sleep
 * calls take, once for the daemon, the clients, the simulation and the guests.
 * Inline: the daemon reads the clock per wake-up and per client write.
 */
#ifndef MTRACE_CLOCK_H
#define MTRACE_CLOCK_H

#include <stdint.h>
#include <sys/time.h>
#include <time.h>

/* Nanoseconds of clk (CLOCK_MONOTONIC unless said otherwise). */
static inline uint64_t clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint64_t clock_mono_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

static inline double clock_mono_s(void)
{
	return (double)clock_mono_ns() / 1e9;
}

static inline struct timeval tv_from_ns(uint64_t ns)
{
	struct timeval tv = { (time_t)(ns / 1000000000u), (suseconds_t)(ns % 1000000000u / 1000u) };

	return tv;
}

static inline struct timeval tv_from_us(uint64_t us)
{
	return tv_from_ns(us * 1000u);
}

static inline struct timeval tv_from_ms(uint64_t ms)
{
	return tv_from_ns(ms * 1000000u);
}

static inline struct timespec ts_from_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };

	return ts;
}

#endif
