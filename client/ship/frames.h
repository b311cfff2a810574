/*
 * frames.h - what mtraced sends, as NATS messages: mtrace-ship's session with mtraced
 * (the evented session of every client, session.h, with its reconnect policy) and, for
 * each message, its subject (mtrace.<host>.<domain>.events or mtrace.<host>._.stats),
 * its id and its frame, into the publish queue.
 */
#ifndef MTRACE_SHIP_FRAMES_H
#define MTRACE_SHIP_FRAMES_H

#include <stddef.h>

#include "ship.h"

/* The session on s->base, connecting from the loop (mtraced may come later); -1 with
 * a sentence in err. */
int frames_start(struct ship *s, char *err, size_t errlen);
/* Close the session (not from one of its callbacks). */
void frames_stop(struct ship *s);

#endif
