/*
 * sim-test.h - what the files of sim-test share: the helpers (sim-dom0.c),
 * the guest programs (sim-guest.c) and the cases (sim-grants.c: grants and event
 * channels; sim-xenstore.c; sim-domains.c: domain lifecycle, many domains, garbage).
 */
#ifndef MTRACE_SIM_TEST_H
#define MTRACE_SIM_TEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xenif.h"

#define PAGE 4096

extern const char *sim_self; /* argv[0], made absolute: the guests' program */

long now_ms(void);
void sleep_ms(long ms);
/* Run mtrace-simxen with the given arguments; first line of its stdout into out. */
__attribute__((format(printf, 3, 4))) int cli(char *out, size_t outlen, const char *fmt, ...);
/* A domain running `sim-test guest MODE`; its domid. */
unsigned create_guest(const char *name, const char *flags, const char *mode);
struct xenif *open_x(unsigned parts);
/* Wait for a xenstore node to exist (and, if want, to hold want). */
__attribute__((format(printf, 4, 5))) char *wait_xs(
    struct xenif *x, const char *want, long ms, const char *fmt, ...);
int parse_refs(const char *s, xenif_gref_t *refs, int max);
/* Write or exit(3) (the guest's way of failing). */
__attribute__((format(printf, 3, 4))) void xs_printf(
    struct xenif *x, const char *path, const char *fmt, ...);
/* Wait until fd is readable. */
bool readable(int fd, int ms);
/* Does writing to p fault?  Checked in a child so a wrong answer cannot corrupt us. */
bool write_faults(volatile uint8_t *p);
bool page_is(const uint8_t *p, uint8_t v);
/* Tell guest dom to do c (data/cmd) and wait for its ack starting with ack_prefix. */
void guest_cmd(
    struct xenif *x, unsigned dom, const char *c, const char *ack_prefix, char *ack, size_t acklen);
bool dominfo(struct xenif *x, unsigned domid, struct xenif_dominfo *out);

/* The guest side: `sim-test guest MODE`. */
int guest_main(int argc, char **argv);

/* The cases, each run by dom0 against a fresh broker (run-sim.sh): 0 when they pass. */
int case_grants(void);
int case_evtchn(void);
int case_xenstore(void);
int case_domains(void);
int case_many(void);
int case_garbage(void);
int case_sched(void); /* sim-sched.c */

#endif
