/*
 * stream.c - a stream server on mtraced's client socket: the listener (accept, refuse
 * past max_clients, pause on descriptor exhaustion) and the stream.h calls the core
 * makes, which become notices to the clients (stream-client.c) and event batches
 * (stream-batch.c).  A server owns its clients, groups and shared-memory regions: a
 * test, or a second socket, has one of its own.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "clock.h"
#include "clockmap.h"
#include "config.h"
#include "frame.h"
#include "log.h"
#include "mtrace-proto.h"
#include "stream-batch.h"
#include "stream-client.h"
#include "stream-msg.h"
#include "stream-shm.h"
#include "stream-socket.h"
#include "stream.h"
#include "utf8.h"
#include "vcpu.h"

#define ACCEPT_PAUSE_MS 1000
#define SOCKET_SNDBUF   (2 << 20)

struct stream {
	struct evconnlistener *listener;
	struct event *accept_pause_ev;
	bool accept_paused;
	char sock_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	bool own_socket; /* we created it (not systemd): remove at shutdown */
	char host[256];
	unsigned max_per_uid; /* max_clients: the clients' own copy (cs.set) */
	uint64_t refused_ns;  /* refusals: the last logged, and those since */
	unsigned refused_since;
	struct stream_clients cs;
	struct stream_batch *batch;
	struct stream_shms *shms;
};

static int pack_frame(const Mtrace__ServerMsg *m, uint8_t *buf, size_t size)
{
	size_t len = mtrace__server_msg__get_packed_size(m);
	size_t hl;

	if (len + FRAME_VARINT_MAX > size)
		return -1;
	hl = frame_put_len(buf, len);
	mtrace__server_msg__pack(m, buf + hl);
	return (int)(hl + len);
}

static void refuse(int fd, const char *why)
{
	Mtrace__ServerMsg m = MTRACE__SERVER_MSG__INIT;
	Mtrace__Error e = MTRACE__ERROR__INIT;
	uint8_t buf[512];
	int n;

	e.code = MTRACE__ERROR__CODE__TOO_MANY_CLIENTS;
	e.message = (char *)why;
	m.msg_case = MTRACE__SERVER_MSG__MSG_ERROR;
	m.error = &e;
	/* A fresh socket's buffer always takes a few hundred bytes: never blocks. */
	n = pack_frame(&m, buf, sizeof(buf));
	if (n > 0 && send(fd, buf, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
		log_debug("refused client: %s", strerror(errno));
	close(fd);
}

/* Refusals are logged at most every 10 s with a count: a client that keeps
 * reconnecting must not fill the host's journal. */
static void refused_log(struct stream *s, const struct ucred *cred, unsigned same_uid)
{
	uint64_t now = clock_ns(CLOCK_MONOTONIC);

	s->refused_since++;
	if (s->refused_ns && now - s->refused_ns < 10000000000u)
		return;
	log_warnx("client pid %ld uid %ld refused: %u clients, %u of this uid (max_clients %u, "
	          "max_clients_per_uid %u); %u refused since the last such line",
	    (long)cred->pid, (long)cred->uid, s->cs.nclients, same_uid, s->cs.set.max_clients,
	    s->max_per_uid, s->refused_since);
	s->refused_ns = now;
	s->refused_since = 0;
}

static void accept_cb(
    struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int salen, void *arg)
{
	struct stream *s = arg;
	struct ucred cred = { 0, (uid_t)-1, (gid_t)-1 };
	socklen_t clen = sizeof(cred);
	unsigned same_uid;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) < 0)
		log_warn("SO_PEERCRED");
	/* one uid's connections cannot take every place (max_clients_per_uid) */
	same_uid = stream_clients_of_uid(&s->cs, cred.uid);
	if (s->cs.nclients >= s->cs.set.max_clients || same_uid >= s->max_per_uid) {
		refused_log(s, &cred, same_uid);
		refuse(fd,
		    s->cs.nclients >= s->cs.set.max_clients ? "too many clients"
		                                            : "too many clients of this uid");
		return;
	}
	/* The socket buffer is what a client can take while the loop is busy draining
	 * rings: the default (208 KiB) is ~10k events.  The kernel caps this at
	 * net.core.wmem_max, which is fine: the client queue above it is ours. */
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &(int){ SOCKET_SNDBUF }, sizeof(int)) < 0)
		log_debug("SO_SNDBUF: %s", strerror(errno));
	stream_client_new(&s->cs, fd, cred.pid, cred.uid, cred.gid, s->host, stream_client_read_cb);
}

/* A client was freed: its descriptor may be what accept lacked. */
static void client_freed(void *arg)
{
	struct stream *s = arg;

	if (s->accept_paused && s->listener) {
		event_del(s->accept_pause_ev);
		s->accept_paused = false;
		evconnlistener_enable(s->listener);
	}
}

static void accept_resume_cb(evutil_socket_t fd, short what, void *arg)
{
	struct stream *s = arg;

	s->accept_paused = false;
	if (s->listener)
		evconnlistener_enable(s->listener);
}

static void accept_error_cb(struct evconnlistener *l, void *arg)
{
	struct stream *s = arg;
	int err = EVUTIL_SOCKET_ERROR();
	struct timeval tv = { ACCEPT_PAUSE_MS / 1000, (ACCEPT_PAUSE_MS % 1000) * 1000 };

	if (err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM) {
		/* Pause, or the level-triggered listener fires again at once and spins. */
		log_warnx("accept: %s: pausing for %d ms", strerror(err), ACCEPT_PAUSE_MS);
		evconnlistener_disable(l);
		s->accept_paused = true;
		event_add(s->accept_pause_ev, &tv);
	} else {
		log_warnx("accept: %s", strerror(err));
	}
}

void stream_reconfigure(struct stream *s, const struct mtraced_config *cfg)
{
	struct stream_client_settings set = {
		.queue_cap = cfg->client_queue_bytes,
		.queue_total_cap = cfg->client_queue_total,
		.max_clients = cfg->max_clients,
		.hello_ms = cfg->client_hello_ms,
		.coalesce_ns = (uint64_t)cfg->client_coalesce_us * 1000u,
		.coalesce_rate = cfg->client_coalesce_rate,
		.max_top_n = cfg->max_top_n,
	};

	stream_batch_set_cap(s->batch, cfg->client_batch_total);
	stream_shm_configure(s->shms, cfg->client_shm_bytes, cfg->client_shm_total,
	    cfg->client_shm_per_uid, (uint64_t)cfg->client_coalesce_us * 1000u);
	stream_clients_reconfigure(&s->cs, &set);
	/* 0 (a test double's zeroed config): no share of its own */
	s->max_per_uid =
	    cfg->max_clients_per_uid ? cfg->max_clients_per_uid : s->cs.set.max_clients;
}

/* Everything of s but the listener and the socket's path. */
static void parts_free(struct stream *s)
{
	if (s->cs.base)
		stream_clients_fini(&s->cs);
	if (s->batch)
		stream_batch_free(s->batch);
	if (s->shms)
		stream_shms_free(s->shms);
	if (s->accept_pause_ev)
		event_free(s->accept_pause_ev);
	free(s);
}

struct stream *stream_new(
    struct event_base *base, const struct mtraced_config *cfg, char *err, size_t errlen)
{
	struct stream *s = calloc(1, sizeof(*s));
	int fd;

	if (!s || !(s->shms = stream_shms_new(base, stream_client_shm_wake)) ||
	    !(s->batch = stream_batch_new(base, stream_client_send_events, s->shms)) ||
	    stream_clients_init(&s->cs, base, s->batch, client_freed, s) < 0 ||
	    !(s->accept_pause_ev = evtimer_new(base, accept_resume_cb, s))) {
		snprintf(err, errlen, "out of memory setting up the socket");
		if (s)
			parts_free(s);
		return NULL;
	}
	stream_reconfigure(s, cfg);
	/* A client that vanishes must cost a write error, not the daemon. */
	signal(SIGPIPE, SIG_IGN);
	if (gethostname(s->host, sizeof(s->host) - 1) < 0)
		snprintf(s->host, sizeof(s->host), "unknown");
	fd = stream_socket_open(
	    cfg, s->sock_path, sizeof(s->sock_path), &s->own_socket, err, errlen);
	if (fd < 0) {
		parts_free(s);
		return NULL;
	}
	s->listener = evconnlistener_new(
	    base, accept_cb, s, LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, -1, fd);
	if (!s->listener) {
		snprintf(err, errlen, "out of memory setting up the socket");
		close(fd);
		if (s->own_socket)
			unlink(s->sock_path);
		parts_free(s);
		return NULL;
	}
	evconnlistener_set_error_cb(s->listener, accept_error_cb);
	return s;
}

void stream_events(struct stream *s, uint32_t domid, uint32_t ring, uint32_t clock,
    const struct mtrace_event *ev, size_t n)
{
	stream_batch_events(s->batch, domid, ring, clock, ev, n);
}

void stream_domain_up(
    struct stream *s, uint32_t domid, const char *name, uint32_t rings, uint32_t clock, bool legacy)
{
	Mtrace__ServerMsg m = MTRACE__SERVER_MSG__INIT;
	Mtrace__DomainUp u = MTRACE__DOMAIN_UP__INIT;
	char nm[256];

	stream_batch_flush(s->batch);
	stream_msg_domain_up(&m, &u, nm, domid, name, rings, clock, legacy);
	stream_clients_broadcast(&s->cs, domid, false, &m);
}

void stream_domain_down(struct stream *s, uint32_t domid, const char *reason)
{
	Mtrace__ServerMsg m = MTRACE__SERVER_MSG__INIT;
	Mtrace__DomainDown d = MTRACE__DOMAIN_DOWN__INIT;
	char why[256];

	/* Its last events go out before the notice. */
	stream_batch_flush(s->batch);
	stream_batch_domain_gone(s->batch, domid);
	snprintf(why, sizeof(why), "%s", reason ? reason : "");
	utf8_fix(why);
	d.domid = domid;
	d.reason = why;
	m.msg_case = MTRACE__SERVER_MSG__MSG_DOMAIN_DOWN;
	m.domain_down = &d;
	stream_clients_broadcast(&s->cs, domid, false, &m);
}

void stream_clock_map(struct stream *s, const struct clockmap_rec *r)
{
	Mtrace__ServerMsg m = MTRACE__SERVER_MSG__INIT;
	Mtrace__ClockMap cm;

	/* the events before it were mapped by the old one */
	stream_batch_flush(s->batch);
	stream_msg_clock_map(&m, &cm, r);
	stream_clients_broadcast(&s->cs, r->domid, false, &m);
}

void stream_evtchn_link(struct stream *s, const struct evlink *l)
{
	Mtrace__ServerMsg m = MTRACE__SERVER_MSG__INIT;
	Mtrace__EvtchnLink el;

	stream_batch_flush(s->batch);
	stream_msg_evtchn_link(&m, &el, l);
	stream_clients_broadcast(&s->cs, l->domid, false, &m);
}

void stream_ring_loss(struct stream *s, uint32_t domid, uint32_t ring, uint64_t lost)
{
	Mtrace__ServerMsg m = MTRACE__SERVER_MSG__INIT;
	Mtrace__Loss l = MTRACE__LOSS__INIT;

	if (lost == 0)
		return;
	stream_batch_flush(s->batch);
	l.domid = domid;
	l.ring = ring;
	l.lost_in_ring = lost;
	m.msg_case = MTRACE__SERVER_MSG__MSG_LOSS;
	m.loss = &l;
	stream_clients_broadcast(&s->cs, domid, true, &m);
}

void stream_vcpu(struct stream *s, const struct vcpu_batch *b)
{
	Mtrace__ServerMsg m = MTRACE__SERVER_MSG__INIT;
	Mtrace__VcpuIntervals v = MTRACE__VCPU_INTERVALS__INIT;
	size_t n = b->n;

	if (!n && !b->nwakes)
		return;
	/* columns, as the wire has them; freed below (the broadcast packs them once) */
	uint32_t *u32 = malloc((2 * n + 1) * sizeof(uint32_t));
	int32_t *pcpu = malloc((n + 1) * sizeof(int32_t));
	int64_t *start = malloc((n + 1) * sizeof(int64_t));
	uint64_t *u64 = malloc((4 * n + 1) * sizeof(uint64_t));
	if (!u32 || !pcpu || !start || !u64)
		goto out;
	v.domid = b->domid;
	v.source = (Mtrace__VcpuSource)b->source;
	v.n_vcpu = v.n_start_ns = v.n_dur_ns = v.n_state = v.n_running_ns = v.n_runnable_ns =
	    v.n_blocked_ns = v.n_pcpu = n;
	v.vcpu = u32;
	v.state = u32 + n;
	v.start_ns = start;
	v.dur_ns = u64;
	v.running_ns = u64 + n;
	v.runnable_ns = u64 + 2 * n;
	v.blocked_ns = u64 + 3 * n;
	v.pcpu = pcpu;
	for (size_t i = 0; i < n; i++) {
		const struct vcpu_iv *iv = &b->iv[i];
		v.vcpu[i] = iv->vcpu;
		v.state[i] = iv->state;
		v.start_ns[i] = iv->start_ns;
		v.dur_ns[i] = iv->dur_ns;
		v.running_ns[i] = iv->part[0];
		v.runnable_ns[i] = iv->part[1];
		v.blocked_ns[i] = iv->part[2];
		v.pcpu[i] = iv->pcpu;
	}
	v.n_wake_vcpu = v.n_wake_ns = b->nwakes;
	v.wake_vcpu = (uint32_t *)b->wake_vcpu;
	v.wake_ns = (int64_t *)b->wake_ns;
	v.uncertainty_ns = b->uncertainty_ns;
	v.guest_offset_ns = b->guest_offset_ns;
	v.guest_mapped = b->guest_mapped;
	m.msg_case = MTRACE__SERVER_MSG__MSG_VCPU;
	m.vcpu = &v;
	/* in order with the domain's events, as a Loss notice is */
	stream_batch_flush(s->batch);
	stream_clients_broadcast(&s->cs, b->domid, true, &m);
out:
	free(u32);
	free(pcpu);
	free(start);
	free(u64);
}

unsigned stream_client_count(const struct stream *s)
{
	return s->cs.nclients;
}

unsigned stream_subscribed_count(const struct stream *s)
{
	const struct stream_client *c;
	unsigned n = 0;

	TAILQ_FOREACH(c, &s->cs.clients, entry)
	{
		if (c->sub)
			n++;
	}
	return n;
}

size_t stream_pending_bytes(const struct stream *s)
{
	return stream_clients_pending_bytes(&s->cs);
}

const struct stream_batch_memory *stream_memory(const struct stream *s)
{
	return stream_batch_memory(s->batch);
}

void stream_shutdown(struct stream *s, const char *reason)
{
	if (!s->listener)
		return;
	stream_batch_flush(s->batch);
	stream_clients_close_all(&s->cs, reason);
	evconnlistener_free(s->listener);
	s->listener = NULL;
	if (s->own_socket && unlink(s->sock_path) < 0 && errno != ENOENT)
		log_warn("unlink %s", s->sock_path);
	s->own_socket = false;
}

void stream_free(struct stream *s)
{
	if (!s)
		return;
	stream_shutdown(s, "daemon stopping");
	parts_free(s);
}
