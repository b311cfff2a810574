/*
 * fake-state.h - the harness's side of its state.h test double (tests only).
 */
#ifndef STREAM_FAKE_STATE_H
#define STREAM_FAKE_STATE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define FAKE_MAX_DOMAINS 16

struct fake_domain {
	uint32_t domid;
	char name[32];
	uint32_t rings;
	bool alive;
	uint64_t events;
};

void fake_state_add(uint32_t domid, const char *name, uint32_t rings);
void fake_state_remove(uint32_t domid);
void fake_state_count(uint32_t domid, uint64_t n);
/* Label of a thread: thread % 4 picks "net/rx", "net/tx", "disk/read" or none. */
const char *fake_label_of(uint64_t thread);

#endif
