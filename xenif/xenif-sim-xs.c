/*
 * xenif-sim-xs.c - the simulated backend's xenstore client.
 *
 * Requests go on the control connection; watch events come on a push-only socket of
 * their own (xs_fileno).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "xenif-sim-int.h"

/* A request whose payload is one path; the reply (at most outmax) goes to out. */
static int path_call(struct xenif *x, uint32_t op, uint32_t tx, const char *path, char *out,
    size_t outmax, size_t *n)
{
	struct simxen_req req = { .op = op, .tx = tx };
	struct simxen_rep rep;
	if (!path) {
		errno = EINVAL;
		return -1;
	}
	return xenif_sim_rpc(
	    xenif_sim(x), &req, path, strlen(path) + 1, &rep, out, outmax, n, NULL, 0, NULL);
}

char *xenif_sim_xs_read(struct xenif *x, uint32_t tx, const char *path, size_t *len)
{
	static __thread char out[SIMXEN_MAX_MSG];
	size_t n;
	if (path_call(x, SIMXEN_XS_READ, tx, path, out, sizeof(out), &n) < 0)
		return NULL;
	char *v = malloc(n + 1);
	if (!v)
		return NULL;
	memcpy(v, out, n);
	v[n] = '\0'; /* libxenstore terminates values too */
	if (len)
		*len = n;
	return v;
}

int xenif_sim_xs_write(struct xenif *x, uint32_t tx, const char *path, const void *val, size_t len)
{
	static __thread char pl[SIMXEN_MAX_MSG];
	struct simxen_req req = { .op = SIMXEN_XS_WRITE, .tx = tx };
	struct simxen_rep rep;
	if (!path || (len && !val)) {
		errno = EINVAL;
		return -1;
	}
	size_t pn = strlen(path) + 1;
	if (pn + len > sizeof(pl) - sizeof(req)) {
		errno = E2BIG;
		return -1;
	}
	memcpy(pl, path, pn);
	if (len)
		memcpy(pl + pn, val, len);
	return xenif_sim_rpc(xenif_sim(x), &req, pl, pn + len, &rep, NULL, 0, NULL, NULL, 0, NULL);
}

int xenif_sim_xs_rm(struct xenif *x, uint32_t tx, const char *path)
{
	return path_call(x, SIMXEN_XS_RM, tx, path, NULL, 0, NULL);
}

/* One malloc block holding the pointer array and the names, as xs_directory returns. */
char **xenif_sim_xs_directory(struct xenif *x, uint32_t tx, const char *path, unsigned *num)
{
	static __thread char out[SIMXEN_MAX_MSG];
	size_t n;
	if (path_call(x, SIMXEN_XS_DIRECTORY, tx, path, out, sizeof(out), &n) < 0)
		return NULL;
	if (n && out[n - 1] != '\0') {
		errno = EPROTO;
		return NULL;
	}
	unsigned cnt = 0;
	for (size_t i = 0; i < n; i++)
		cnt += out[i] == '\0';
	char **v = malloc((cnt + 1) * sizeof(char *) + n);
	if (!v)
		return NULL;
	char *str = (char *)(v + cnt + 1);
	memcpy(str, out, n);
	for (unsigned i = 0; i < cnt; i++) {
		v[i] = str;
		str += strlen(str) + 1;
	}
	v[cnt] = NULL;
	if (num)
		*num = cnt;
	return v;
}

uint32_t xenif_sim_xs_transaction_start(struct xenif *x)
{
	uint32_t tx;
	if (xenif_sim_call(xenif_sim(x), SIMXEN_XS_TX_START, 0, 0, 0, &tx) < 0)
		return 0;
	return tx;
}

int xenif_sim_xs_transaction_end(struct xenif *x, uint32_t tx, bool abort)
{
	return xenif_sim_call(xenif_sim(x), SIMXEN_XS_TX_END, tx, abort, 0, NULL);
}

static int watch_call(struct xenif *x, uint32_t op, const char *path, const char *token)
{
	char pl[SIMXEN_MAX_MSG - sizeof(struct simxen_req)];
	struct simxen_req req = { .op = op };
	struct simxen_rep rep;
	if (!path || !token) {
		errno = EINVAL;
		return -1;
	}
	size_t pn = strlen(path) + 1, tn = strlen(token) + 1;
	if (pn + tn > sizeof(pl)) {
		errno = E2BIG;
		return -1;
	}
	memcpy(pl, path, pn);
	memcpy(pl + pn, token, tn);
	return xenif_sim_rpc(xenif_sim(x), &req, pl, pn + tn, &rep, NULL, 0, NULL, NULL, 0, NULL);
}

int xenif_sim_xs_watch(struct xenif *x, const char *path, const char *token)
{
	if (xenif_sim(x)->xsw < 0) {
		errno = EBADF;
		return -1;
	}
	return watch_call(x, SIMXEN_XS_WATCH, path, token);
}

int xenif_sim_xs_unwatch(struct xenif *x, const char *path, const char *token)
{
	return watch_call(x, SIMXEN_XS_UNWATCH, path, token);
}

int xenif_sim_xs_fileno(struct xenif *x)
{
	if (xenif_sim(x)->xsw < 0) {
		errno = EBADF;
		return -1;
	}
	return xenif_sim(x)->xsw;
}

int xenif_sim_xs_read_watch(struct xenif *x, struct xenif_xs_watch_event *ev)
{
	char buf[SIMXEN_MAX_MSG];
	struct sim *s = xenif_sim(x);
	if (s->xsw < 0) {
		errno = EBADF;
		return -1;
	}
	ssize_t n;
	do
		n = recv(s->xsw, buf, sizeof(buf), MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -1;
	if (n == 0) {
		errno = ECONNRESET;
		return -1;
	}
	const char *path = buf;
	const char *end = buf + n;
	const char *z = memchr(path, '\0', (size_t)n);
	if (!z || !memchr(z + 1, '\0', (size_t)(end - z - 1))) {
		errno = EPROTO;
		return -1;
	}
	const char *token = z + 1;
	/* A cut path would name another node: refuse rather than truncate. */
	if (strlen(path) >= sizeof(ev->path) || strlen(token) >= sizeof(ev->token)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(ev->path, path);
	strcpy(ev->token, token);
	return 0;
}

/* The reply is xenstored's text form: "n0", "r5", ... each NUL-terminated. */
struct xenif_xs_perm *xenif_sim_xs_get_perms(
    struct xenif *x, uint32_t tx, const char *path, unsigned *num)
{
	static __thread char out[SIMXEN_MAX_MSG];
	size_t n, k = 0;
	if (path_call(x, SIMXEN_XS_GET_PERMS, tx, path, out, sizeof(out), &n) < 0)
		return NULL;
	struct xenif_xs_perm *p = calloc(n / 2 + 1, sizeof(*p));
	if (!p)
		return NULL;
	for (size_t i = 0; i < n;) {
		const char *e = memchr(out + i, '\0', n - i);
		char *end;
		if (!e || e == out + i)
			break;
		unsigned long d = strtoul(out + i + 1, &end, 10);
		p[k].domid = (xenif_domid_t)d;
		p[k].perms = out[i] == 'r' ? XENIF_XS_PERM_READ
		    : out[i] == 'w'        ? XENIF_XS_PERM_WRITE
		    : out[i] == 'b'        ? XENIF_XS_PERM_READ | XENIF_XS_PERM_WRITE
		                           : 0;
		k++;
		i = (size_t)(e - out) + 1;
	}
	*num = (unsigned)k;
	return p;
}

int xenif_sim_xs_get_domid(struct xenif *x, xenif_domid_t *domid)
{
	*domid = xenif_sim(x)->domid;
	return 0;
}
