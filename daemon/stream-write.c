/*
 * stream-write.c - when what a client has queued reaches its socket: in the turn that
 * queued it, one write for all of that turn's batches (not the bufferevent's own write,
 * a loop turn later), and, for clients past client_coalesce_rate events a second, at
 * most once per client_coalesce_us (interrupt moderation for sockets).
 */
#include <stdint.h>
#include <sys/queue.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "clock.h"
#include "state.h"
#include "stream-client.h"

size_t stream_client_queued(const struct stream_client *c)
{
	return evbuffer_get_length(bufferevent_get_output(c->bev));
}

/* Clients past client_coalesce_rate events a second get coalesced writes (client_coalesce_us),
 * measured over windows of COALESCE_WINDOW_NS: far above the rates where the latency
 * of single events matters, far below where wake-ups dominate. */
#define COALESCE_WINDOW_NS 10000000u

/*
 * Write what c has queued in the turn that queued it, as the bufferevent would on its
 * next turn.  Leaving it to the bufferevent costs, per write, EPOLLOUT turned on (an
 * epoll_ctl), a loop turn to learn that an empty socket is writable (epoll_wait and,
 * with precise timers, timerfd_settime) and EPOLLOUT off again: about 4 system calls
 * per event at low rates.  So the bufferevent's EV_WRITE is on only while the socket
 * is full (or a write failed: the bufferevent then reports the error to event_cb), and
 * while a client closes.
 */
static void write_now(struct stream_client *c)
{
	struct evbuffer *out = bufferevent_get_output(c->bev);
	int n;

	if (c->closing || c->deferred || stream_client_queued(c) == 0 ||
	    (bufferevent_get_enabled(c->bev) & EV_WRITE))
		return;
	/* what the bufferevent's own write does: it keeps its output's start frozen */
	evbuffer_unfreeze(out, 1);
	n = evbuffer_write(out, bufferevent_getfd(c->bev));
	evbuffer_freeze(out, 1);
	if (stream_client_queued(c) > 0)
		bufferevent_enable(c->bev, EV_WRITE);
	if (n > 0)
		c->cs->written(c);
}

/* One pass in this turn for every client that had something queued: activated, not
 * timed, it runs after the callbacks already active (the stream's flush among them),
 * so a turn's batches to a client go out in one writev. */
static void write_pass_cb(evutil_socket_t fd, short what, void *arg)
{
	struct stream_clients *cs = arg;
	struct stream_client *c;

	cs->write_scheduled = false;
	/* write_now never frees a client: a plain walk */
	TAILQ_FOREACH(c, &cs->clients, entry)
	{
		if (!c->to_write)
			continue;
		c->to_write = false;
		write_now(c);
	}
}

void stream_client_write_soon(struct stream_client *c)
{
	struct stream_clients *cs = c->cs;

	c->to_write = true;
	if (!cs->write_scheduled && cs->write_ev) {
		event_active(cs->write_ev, EV_TIMEOUT, 0);
		cs->write_scheduled = true;
	}
}

static void write_resume(struct stream_client *c)
{
	if (!c->deferred)
		return;
	c->deferred = false;
	c->write_due = true;
	write_now(c);
}

/* One tick for all: per-client timers would each cost a loop turn of their own. */
static void coalesce_cb(evutil_socket_t fd, short what, void *arg)
{
	struct stream_clients *cs = arg;
	struct stream_client *c;

	TAILQ_FOREACH(c, &cs->clients, entry)
	write_resume(c);
}

/*
 * Interrupt moderation for sockets: every write wakes the client, a context switch on
 * each side, which with many fast clients costs more than the events themselves.  A
 * client taking over client_coalesce_rate events a second gets one write per coalesce_ns at
 * most; the batches meanwhile wait in its queue (a few hundred KiB at these rates).
 */
void stream_client_coalesce(struct stream_client *c, size_t n)
{
	struct stream_clients *cs = c->cs;
	uint64_t now = state_now_ns();

	if (now - c->win_start_ns >= COALESCE_WINDOW_NS) {
		c->fast =
		    c->win_events * 1000000000u >= cs->set.coalesce_rate * (now - c->win_start_ns);
		c->win_start_ns = now;
		c->win_events = 0;
	}
	c->win_events += n;
	/* write_due: a write is on its way (written() clears it); turning writes off now
	 * would put it off again and again */
	if (!c->fast || !cs->set.coalesce_ns || c->deferred || c->write_due || c->closing)
		return;
	if (now - c->last_write_ns >= cs->set.coalesce_ns) {
		c->write_due = true;
		return;
	}
	if (!evtimer_pending(cs->coalesce_ev, NULL)) {
		uint64_t left = c->last_write_ns + cs->set.coalesce_ns - now;
		struct timeval tv = tv_from_ns(left);

		if (evtimer_add(cs->coalesce_ev, &tv) < 0)
			return;
	}
	c->deferred = true;
	cs->writes_put_off++;
	bufferevent_disable(c->bev, EV_WRITE);
}

int stream_clients_write_init(struct stream_clients *cs)
{
	cs->coalesce_ev = evtimer_new(cs->base, coalesce_cb, cs);
	cs->write_ev = event_new(cs->base, -1, 0, write_pass_cb, cs);
	return cs->coalesce_ev && cs->write_ev ? 0 : -1;
}

void stream_clients_write_fini(struct stream_clients *cs)
{
	if (cs->coalesce_ev)
		event_free(cs->coalesce_ev);
	cs->coalesce_ev = NULL;
	if (cs->write_ev)
		event_free(cs->write_ev);
	cs->write_ev = NULL;
	cs->write_scheduled = false;
}
