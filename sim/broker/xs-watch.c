/*
 * xs-watch.c - simulated xenstored: watches, and the queue of watch events each
 * connection's push socket carries.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "xs-int.h"

struct watch {
	struct watch *next;
	char *path; /* absolute, or @special */
	char *token;
	bool rel; /* registered relative: events are reported relative */
};

struct wev {
	struct wev *next;
	size_t len;
	char data[];
};

static struct xs_conn *xconns;

static void flush(struct xs_conn *x)
{
	while (x->qh) {
		struct wev *e = x->qh;
		ssize_t n = send(x->fd, e->data, e->len, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			event_add(x->wev, NULL);
			return;
		}
		x->qh = e->next;
		if (!x->qh)
			x->qt = &x->qh;
		x->qn--;
		free(e);
		if (n < 0) { /* client closed its end: drop the rest */
			while (x->qh) {
				e = x->qh;
				x->qh = e->next;
				free(e);
			}
			x->qt = &x->qh;
			x->qn = 0;
			return;
		}
	}
}

void xs_watch_write_cb(evutil_socket_t fd, short what, void *arg)
{
	flush(arg);
}

static void queue_event(struct xs_conn *x, const char *path, const char *token)
{
	size_t pl = strlen(path) + 1, tl = strlen(token) + 1;
	if (x->qn >= (x->domid ? XS_WATCHQ_GUEST : XS_WATCHQ_DOM0)) {
		/* A client that never reads its watches loses events, not our memory. */
		if (x->dropped++ % 1000 == 0)
			blog("domain %u: watch events not read, %lu dropped", x->domid, x->dropped);
		return;
	}
	struct wev *e = malloc(sizeof(*e) + pl + tl);
	if (!e)
		return;
	e->next = NULL;
	e->len = pl + tl;
	memcpy(e->data, path, pl);
	memcpy(e->data + pl, token, tl);
	*x->qt = e;
	x->qt = &e->next;
	if (x->qn++ == 0)
		flush(x);
}

static void send_watch(struct xs_conn *x, const struct watch *w, const char *path)
{
	char h[32];
	xs_home(x->domid, h, sizeof(h));
	size_t hl = strlen(h);
	if (w->rel && !strncmp(path, h, hl) && path[hl] == '/')
		path += hl + 1;
	queue_event(x, path, w->token);
}

/* A change of path fires watches on it and above; a removal also fires the watches
 * on the nodes that went with it. */
void xs_watch_fire(const char *path, bool removed)
{
	for (struct xs_conn *x = xconns; x; x = x->next) {
		for (struct watch *w = x->watches; w; w = w->next) {
			if (w->path[0] == '@')
				continue;
			if (xs_under(path, w->path)) {
				if (xs_can_read(x->domid, path))
					send_watch(x, w, path);
			} else if (removed && xs_under(w->path, path)) {
				if (xs_can_read(x->domid, w->path))
					send_watch(x, w, w->path);
			}
		}
	}
}

void xs_fire_special(struct broker *b, const char *special)
{
	for (struct xs_conn *x = xconns; x; x = x->next)
		for (struct watch *w = x->watches; w; w = w->next)
			if (!strcmp(w->path, special))
				queue_event(x, special, w->token);
}

/* Split "a\0b\0" exactly. */
static int two_strings(const char *pl, size_t len, const char **a, const char **bb)
{
	const char *z = len ? memchr(pl, '\0', len) : NULL;
	if (!z)
		return EINVAL;
	size_t rest = len - (size_t)(z - pl) - 1;
	const char *z2 = rest ? memchr(z + 1, '\0', rest) : NULL;
	if (!z2 || z2 != pl + len - 1)
		return EINVAL;
	*a = pl;
	*bb = z + 1;
	return 0;
}

int xs_watch_op(struct xs_conn *x, uint32_t op, const char *pl, size_t len)
{
	const char *path, *token;
	char abs[XS_ABS_PATH_MAX + 1];
	bool rel;
	if (!x)
		return EBADF;
	if (len > XS_VALUE_MAX)
		return E2BIG; /* xenstored's payload limit bounds path + token */
	int err = two_strings(pl, len, &path, &token);
	if (!err)
		err = xs_canon(x->domid, path, true, abs, &rel);
	if (err)
		return err;
	struct watch **pp;
	for (pp = &x->watches; *pp; pp = &(*pp)->next)
		if (!strcmp((*pp)->path, abs) && !strcmp((*pp)->token, token))
			break;
	if (op == SIMXEN_XS_UNWATCH) {
		if (!*pp)
			return ENOENT;
		struct watch *w = *pp;
		*pp = w->next;
		x->nwatches--;
		free(w->path);
		free(w->token);
		free(w);
		return 0;
	}
	if (*pp)
		return EEXIST;
	if (x->nwatches >= (x->domid ? XS_GUEST_WATCHES : XS_DOM0_WATCHES))
		return E2BIG; /* xenstored's watch quota answer */
	struct watch *w = calloc(1, sizeof(*w));
	if (!w || !(w->path = strdup(abs)) || !(w->token = strdup(token))) {
		if (w)
			free(w->path);
		free(w);
		return ENOMEM;
	}
	w->rel = rel;
	w->next = x->watches;
	x->watches = w;
	x->nwatches++;
	/* xenstored fires every new watch once, so the watcher looks at the current state. */
	queue_event(x, path, token);
	return 0;
}

void xs_watch_attach(struct xs_conn *x)
{
	x->next = xconns;
	if (xconns)
		xconns->prev = x;
	xconns = x;
}

void xs_watch_detach(struct xs_conn *x)
{
	while (x->watches) {
		struct watch *w = x->watches;
		x->watches = w->next;
		free(w->path);
		free(w->token);
		free(w);
	}
	while (x->qh) {
		struct wev *e = x->qh;
		x->qh = e->next;
		free(e);
	}
	if (x->prev)
		x->prev->next = x->next;
	else
		xconns = x->next;
	if (x->next)
		x->next->prev = x->prev;
}
