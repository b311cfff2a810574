/*
 * stream.c - mtraced's client socket: the listener (accept, refuse past max_clients,
 * pause on descriptor exhaustion) and the stream.h calls the core makes, which become
 * notices to the clients (stream-client.c) and event batches (stream-batch.c).
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

#define ACCEPT_PAUSE_MS 1000
#define SOCKET_SNDBUF   (2 << 20)

/* The listener's state: one context, as drain's dr and discover's dc. */
static struct {
	struct evconnlistener *listener;
	struct event *accept_pause_ev;
	bool accept_paused;
	bool started;
	char sock_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	bool own_socket; /* we created it (not systemd): remove at shutdown */
	char host[256];
	unsigned max_per_uid; /* max_clients: the clients' own copy (stream_clients_settings) */
} sx = { .max_per_uid = 64 };

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
static void refused_log(const struct ucred *cred, unsigned same_uid)
{
	static uint64_t last_ns;
	static unsigned since;
	uint64_t now = clock_ns(CLOCK_MONOTONIC);

	since++;
	if (last_ns && now - last_ns < 10000000000u)
		return;
	log_warnx("client pid %ld uid %ld refused: %u clients, %u of this uid (max_clients %u, "
	          "max_clients_per_uid %u); %u refused since the last such line",
	    (long)cred->pid, (long)cred->uid, stream_clients_count(), same_uid,
	    stream_clients_settings()->max_clients, sx.max_per_uid, since);
	last_ns = now;
	since = 0;
}

static void accept_cb(
    struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int salen, void *arg)
{
	struct ucred cred = { 0, (uid_t)-1, (gid_t)-1 };
	socklen_t clen = sizeof(cred);
	unsigned same_uid;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) < 0)
		log_warn("SO_PEERCRED");
	/* one uid's connections cannot take every place (max_clients_per_uid) */
	same_uid = stream_clients_of_uid(cred.uid);
	if (stream_clients_count() >= stream_clients_settings()->max_clients ||
	    same_uid >= sx.max_per_uid) {
		refused_log(&cred, same_uid);
		refuse(fd,
		    stream_clients_count() >= stream_clients_settings()->max_clients
		        ? "too many clients"
		        : "too many clients of this uid");
		return;
	}
	/* The socket buffer is what a client can take while the loop is busy draining
	 * rings: the default (208 KiB) is ~10k events.  The kernel caps this at
	 * net.core.wmem_max, which is fine: the client queue above it is ours. */
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &(int){ SOCKET_SNDBUF }, sizeof(int)) < 0)
		log_debug("SO_SNDBUF: %s", strerror(errno));
	stream_client_new(fd, cred.pid, cred.uid, cred.gid, sx.host, stream_client_read_cb);
}

/* A client was freed: its descriptor may be what accept lacked. */
static void client_freed(void)
{
	if (sx.accept_paused && sx.listener) {
		event_del(sx.accept_pause_ev);
		sx.accept_paused = false;
		evconnlistener_enable(sx.listener);
	}
}

static void accept_resume_cb(evutil_socket_t fd, short what, void *arg)
{
	sx.accept_paused = false;
	if (sx.listener)
		evconnlistener_enable(sx.listener);
}

static void accept_error_cb(struct evconnlistener *l, void *arg)
{
	int err = EVUTIL_SOCKET_ERROR();
	struct timeval tv = { ACCEPT_PAUSE_MS / 1000, (ACCEPT_PAUSE_MS % 1000) * 1000 };

	if (err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM) {
		/* Pause, or the level-triggered listener fires again at once and spins. */
		log_warnx("accept: %s: pausing for %d ms", strerror(err), ACCEPT_PAUSE_MS);
		evconnlistener_disable(l);
		sx.accept_paused = true;
		event_add(sx.accept_pause_ev, &tv);
	} else {
		log_warnx("accept: %s", strerror(err));
	}
}

void stream_reconfigure(const struct mtraced_config *cfg)
{
	struct stream_client_settings s = {
		.queue_cap = cfg->client_queue_bytes,
		.queue_total_cap = cfg->client_queue_total,
		.max_clients = cfg->max_clients,
		.hello_ms = cfg->client_hello_ms,
		.coalesce_ns = (uint64_t)cfg->client_coalesce_us * 1000u,
		.coalesce_rate = cfg->client_coalesce_rate,
		.max_top_n = cfg->max_top_n,
	};

	stream_batch_set_cap(cfg->client_batch_total);
	stream_shm_configure(cfg->client_shm_bytes, cfg->client_shm_total,
	    (uint64_t)cfg->client_coalesce_us * 1000u);
	stream_clients_reconfigure(&s);
	/* 0 (a test double's zeroed config): no share of its own */
	sx.max_per_uid = cfg->max_clients_per_uid ? cfg->max_clients_per_uid
	                                          : stream_clients_settings()->max_clients;
}

int stream_init(struct event_base *base, const struct mtraced_config *cfg, char *err, size_t errlen)
{
	int fd;

	stream_reconfigure(cfg);
	/* A client that vanishes must cost a write error, not the daemon. */
	signal(SIGPIPE, SIG_IGN);
	if (gethostname(sx.host, sizeof(sx.host) - 1) < 0)
		snprintf(sx.host, sizeof(sx.host), "unknown");
	fd = stream_socket_open(
	    cfg, sx.sock_path, sizeof(sx.sock_path), &sx.own_socket, err, errlen);
	if (fd < 0)
		return -1;
	sx.listener = evconnlistener_new(
	    base, accept_cb, NULL, LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, -1, fd);
	sx.accept_pause_ev = evtimer_new(base, accept_resume_cb, NULL);
	if (!sx.listener || !sx.accept_pause_ev || stream_clients_init(base, client_freed) < 0) {
		snprintf(err, errlen, "out of memory setting up the socket");
		if (!sx.listener)
			close(fd);
		return -1;
	}
	evconnlistener_set_error_cb(sx.listener, accept_error_cb);
	stream_batch_init(base, stream_client_send_events);
	stream_shm_init(base, stream_client_shm_wake);
	sx.started = true;
	return 0;
}

void stream_events(
    uint32_t domid, uint32_t ring, uint32_t clock, const struct mtrace_event *ev, size_t n)
{
	stream_batch_events(domid, ring, clock, ev, n);
}

void stream_domain_up(uint32_t domid, const char *name, uint32_t rings, uint32_t clock, bool legacy)
{
	Mtrace__ServerMsg m = MTRACE__SERVER_MSG__INIT;
	Mtrace__DomainUp u = MTRACE__DOMAIN_UP__INIT;
	char nm[256];

	stream_batch_flush();
	stream_msg_domain_up(&m, &u, nm, domid, name, rings, clock, legacy);
	stream_clients_broadcast(domid, false, &m);
}

void stream_domain_down(uint32_t domid, const char *reason)
{
	Mtrace__ServerMsg m = MTRACE__SERVER_MSG__INIT;
	Mtrace__DomainDown d = MTRACE__DOMAIN_DOWN__INIT;
	char why[256];

	/* Its last events go out before the notice. */
	stream_batch_flush();
	stream_batch_domain_gone(domid);
	snprintf(why, sizeof(why), "%s", reason ? reason : "");
	utf8_fix(why);
	d.domid = domid;
	d.reason = why;
	m.msg_case = MTRACE__SERVER_MSG__MSG_DOMAIN_DOWN;
	m.domain_down = &d;
	stream_clients_broadcast(domid, false, &m);
}

void stream_ring_loss(uint32_t domid, uint32_t ring, uint64_t lost)
{
	Mtrace__ServerMsg m = MTRACE__SERVER_MSG__INIT;
	Mtrace__Loss l = MTRACE__LOSS__INIT;

	if (lost == 0)
		return;
	stream_batch_flush();
	l.domid = domid;
	l.ring = ring;
	l.lost_in_ring = lost;
	m.msg_case = MTRACE__SERVER_MSG__MSG_LOSS;
	m.loss = &l;
	stream_clients_broadcast(domid, true, &m);
}

unsigned stream_client_count(void)
{
	return stream_clients_count();
}

size_t stream_pending_bytes(void)
{
	return stream_clients_pending_bytes();
}

void stream_shutdown(const char *reason)
{
	if (!sx.started)
		return;
	stream_batch_flush();
	stream_clients_close_all(reason);
	if (sx.listener)
		evconnlistener_free(sx.listener);
	sx.listener = NULL;
	if (sx.accept_pause_ev)
		event_free(sx.accept_pause_ev);
	sx.accept_pause_ev = NULL;
	stream_clients_fini();
	stream_batch_fini();
	if (sx.own_socket && unlink(sx.sock_path) < 0 && errno != ENOENT)
		log_warn("unlink %s", sx.sock_path);
	sx.own_socket = false;
	sx.started = false;
}
