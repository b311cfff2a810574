/*
 * msgid.h - JetStream message ids (Nats-Msg-Id) that no other publisher can know before
 * this shipper has published them (docs/fleet.md, "Message ids").
 *
 * JetStream de-duplicates by message id across the whole stream: a message whose id the
 * stream already holds (within its duplicate window) is dropped, whoever published the
 * first.  An id another host could predict would let it have this host's messages
 * dropped, so every id ends in 64 bits from the kernel's CSPRNG (getrandom), drawn for
 * that message: seeing every id this shipper ever published tells nothing of the next.
 *
 *   <host token>-<connection: 128 random bits, hex>-<n>-<64 random bits, hex>
 *
 * where n counts the messages of one connection to mtraced from 1 ("loss<n>" for the
 * shipper's own Loss notices), and a message cut to fit the server's max_payload
 * (split.h) has its parts' ids <id>/1, <id>/2, ...  A retry sends the same id again (it
 * is stored with the message, and in the spool), so what reached the stream twice is
 * still dropped.
 */
#ifndef MTRACE_SHIP_MSGID_H
#define MTRACE_SHIP_MSGID_H

#include <stddef.h>
#include <stdint.h>

#include "subject.h"

/* The longest id: the base, a field of 24, the tag, a part number. */
#define MSGID_BASE_MAX (SUBJECT_TOKEN_MAX + 34)
#define MSGID_MAX      (MSGID_BASE_MAX + 24 + 18 + 12)

/* 0 once the kernel's random source answers (checked at the start: without it the ids
 * would be guessable), -1 with errno. */
int msgid_init(void);

/* The base of a connection's ids: "<host_tok>-<128 random bits>" into out. */
void msgid_base(char *out, size_t outlen, const char *host_tok);

/* The id of message n of a connection (kind "" for mtraced's messages, "loss" for the
 * shipper's own notices): "<base>-<kind><n>-<64 random bits>". */
void msgid_make(char *out, size_t outlen, const char *base, const char *kind, uint64_t n);

#endif
