/*
 * cat-ctf.h - a CTF 1.8 trace directory in mirage-profile's layout, for babeltrace2
 * and mirage-trace-viewer: DIR/metadata plus one stream file per domain and ring
 * (dom<D>-ring<R>: the MirageOS vocabulary, ops 0..13, what mirage-trace-viewer
 * loads) and, for mtrace's own ops (event channels, ring start), dom<D>-ring<R>-mtrace.
 * Packets carry mirage-profile's 30-byte header (magic, UUID, sizes, counter).
 *
 * Times: that layout allows one stream class, so one clock class: the host timeline
 * (timeline.h, each domain's dom0's CLOCK_REALTIME), on which every domain's events are
 * written, so that babeltrace2 interleaves the domains in the order they happened.
 * Each domain's map (source, offset, uncertainty) is in the environment; a domain not
 * on the timeline keeps its guest time there and says so (clock_source_<domid>).
 */
#ifndef MTRACE_CAT_CTF_H
#define MTRACE_CAT_CTF_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "mtrace.pb-c.h"
#include "timeline.h"

/* Create (or reuse an empty) DIR.  -1 with a sentence in err. */
int cat_ctf_open(const char *dir, char *err, size_t errlen);
void cat_ctf_hello(const Mtrace__Hello *h);
void cat_ctf_domain_up(uint32_t domid, const char *name, uint32_t clock);
void cat_ctf_clock_map(const Mtrace__ClockMap *m);
void cat_ctf_event(
    const Mtrace__EventBatch *b, size_t i, const struct tl_time *at, const char *str);
/* A domain's vCPU intervals (issue 38): stream dom<D>-vcpu, events vcpu_interval and
 * vcpu_wake, on the host timeline like every event. */
void cat_ctf_vcpu(const Mtrace__VcpuIntervals *v);
/* Flush the last packets and write the metadata.  -1 with err on a write error. */
int cat_ctf_close(char *err, size_t errlen);

/* The metadata's pieces (cat-ctf-tsdl.c), for cat-ctf.c. */
#define EV_VCPU_INTERVAL 250 /* the vCPU records' event ids: above every op's */
#define EV_VCPU_WAKE     251
void ctf_tsdl_escape(char *out, size_t len, const char *in); /* a string literal's body */
void ctf_tsdl_head(FILE *f);                                 /* the types and the trace block */
void ctf_tsdl_types(FILE *f);                                /* the thread types */
void ctf_tsdl_events(FILE *f); /* the event header, stream and every event class */
const char *ctf_clock_name(uint32_t clock);

#endif
