/*
 * domain.c - simulated domains: the toolstack and the hypervisor's domain lifecycle.
 *
 * A guest domain is a process group the broker forked; it inherits an identity socket
 * (MTRACE_SIM_FD) that makes every connection it opens belong to its domid.  Its exit
 * is a shutdown (poweroff on exit, crash on a signal), after which the domain is
 * released like xl's default on_poweroff/on_crash=destroy, unless the creator asked
 * to preserve it.  Release does what Xen + xenstored + xl do: the domain is dying,
 * its grant table and event channels go, /local/domain/<id> is removed and
 * @releaseDomain fires.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "broker.h"

static int add(struct broker *b, struct domain *d)
{
	if (b->ndoms == MAX_DOMAINS)
		return ENOSPC;
	b->doms[b->ndoms++] = d;
	b->by_id[d->domid] = d;
	return 0;
}

static void xs_announce(struct broker *b, struct domain *d)
{
	char path[64], val[16];
	snprintf(path, sizeof(path), "/local/domain/%u/name", d->domid);
	xs_ts_write(b, path, d->name);
	snprintf(path, sizeof(path), "/local/domain/%u/domid", d->domid);
	snprintf(val, sizeof(val), "%u", d->domid);
	xs_ts_write(b, path, val);
	/* the guest's own, as libxl makes it */
	snprintf(path, sizeof(path), "/local/domain/%u/data", d->domid);
	if (d->domid)
		xs_ts_give(b, path, d->domid);
}

int dom0_init(struct broker *b)
{
	struct domain *d = calloc(1, sizeof(*d));
	if (!d)
		return -1;
	strcpy(d->name, "Domain-0");
	add(b, d);
	xs_announce(b, d);
	return 0;
}

/* The domain's memory is gone for good: nobody maps it any more. */
static void finalize(struct broker *b, struct domain *d)
{
	for (unsigned i = 0; i < b->ndoms; i++) {
		if (b->doms[i] == d) {
			b->doms[i] = b->doms[--b->ndoms];
			break;
		}
	}
	b->by_id[d->domid] = NULL;
	blog("domain %u (%s) gone", d->domid, d->name);
	free(d);
}

/* After every request and release: a released domain whose pages the last mapper
 * unmapped (gnt.c counts them) is gone now, as on Xen. */
bool dom_collect(struct broker *b)
{
	bool gone = false;

	if (!b->collect_due)
		return false;
	b->collect_due = false;
	for (unsigned i = 1; i < b->ndoms;) {
		struct domain *d = b->doms[i];
		if (d->released && !d->foreign_maps) {
			finalize(b, d); /* moved the last domain into slot i */
			gone = true;
		} else {
			i++;
		}
	}
	if (gone)
		xs_fire_special(b, "@releaseDomain");
	return gone;
}

static void release(struct broker *b, struct domain *d)
{
	d->state = DOM_DYING;
	if (d->pid > 0)
		kill(-d->pid, SIGKILL); /* stragglers of the process group */
	d->pid = 0;
	conn_close_domain(b, d->domid);
	evt_domain_gone(b, d);
	gnt_domain_gone(d);
	char path[64];
	snprintf(path, sizeof(path), "/local/domain/%u", d->domid);
	xs_ts_rm(b, path);
	blog("domain %u (%s) released after %lu requests (%lu notifications, %lu refused)%s",
	    d->domid, d->name, d->nreq, d->nnotify, d->nnotify_refused,
	    d->foreign_maps ? ", dying until its pages are unmapped" : "");
	/* Like Xen, a domain whose pages another domain still maps stays dying (listed,
	 * nothing new can be mapped or bound) until the last of them is unmapped. */
	d->released = true;
	b->collect_due = true;
	/* gone now if nobody maps it (and any domain its closed handles unmapped last) */
	if (!dom_collect(b))
		xs_fire_special(b, "@releaseDomain");
}

int dom_create(struct broker *b, uint32_t domid, uint32_t flags, const char *name,
    const int stdio[2], const char *cwd, char *const argv[], uint32_t *out)
{
	if (!simxen_name_ok(name))
		return EINVAL;
	for (unsigned i = 0; i < b->ndoms; i++)
		if (!b->doms[i]->released && !strcmp(b->doms[i]->name, name))
			return EEXIST; /* xl refuses two domains of one name */
	if (domid > MAX_DOMID)
		return EINVAL;
	if (domid && b->by_id[domid])
		return EEXIST;
	if (b->ndoms == MAX_DOMAINS)
		return ENOSPC;
	if (!domid) {
		/* Xen hands out increasing domids and wraps, so a fresh domain rarely reuses
		 * the id of one that just died. */
		for (uint32_t i = 0; i < MAX_DOMID && !domid; i++) {
			uint32_t id = b->next_domid + i;
			if (id > MAX_DOMID)
				id -= MAX_DOMID;
			if (!b->by_id[id])
				domid = id;
		}
		b->next_domid = domid % MAX_DOMID + 1;
	}
	struct domain *d = calloc(1, sizeof(*d));
	if (!d)
		return ENOMEM;
	d->domid = domid;
	d->flags = flags;
	strcpy(d->name, name);
	add(b, d);
	xs_announce(b, d);

	int idfd;
	int err = conn_pair(b, domid, true, &idfd);
	if (err) {
		release(b, d);
		return err;
	}
	pid_t broker_pid = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		err = errno;
		close(idfd);
		release(b, d);
		return err;
	}
	if (pid == 0) {
		/* A guest must not outlive its host: tests kill -9 brokers. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != broker_pid)
			_exit(127);
		setpgid(0, 0);
		signal(SIGPIPE, SIG_DFL);
		signal(SIGCHLD, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		sigset_t all;
		sigemptyset(&all);
		sigprocmask(SIG_SETMASK, &all, NULL);
		fcntl(idfd, F_SETFD, 0); /* the one descriptor the guest keeps */
		char num[16];
		snprintf(num, sizeof(num), "%d", idfd);
		setenv(SIMXEN_ENV_FD, num, 1);
		setenv(SIMXEN_ENV_DIR, b->dir, 1);
		/* stdin is nothing; stdout and stderr are what the creator handed over (its
		 * own, or the log file it opened: mtrace-simxen create) */
		int nul = open("/dev/null", O_RDONLY);
		if (nul >= 0 && nul != 0) {
			dup2(nul, 0);
			close(nul);
		}
		for (int i = 0; i < 2; i++) {
			if (stdio[i] == i + 1)
				fcntl(i + 1, F_SETFD, 0); /* received close-on-exec */
			else
				dup2(stdio[i], i + 1);
		}
		if (*cwd && chdir(cwd) < 0) {
			fprintf(stderr, "mtrace-simxen: domain %u: chdir %s: %m\n", domid, cwd);
			_exit(127);
		}
		execvp(argv[0], argv);
		fprintf(stderr, "mtrace-simxen: domain %u: exec %s: %m\n", domid, argv[0]);
		_exit(127);
	}
	setpgid(pid, pid); /* both sides, so kill(-pid) works whoever runs first */
	close(idfd);
	d->pid = pid;
	blog("domain %u (%s) created, pid %d", domid, name, (int)pid);
	xs_fire_special(b, "@introduceDomain");
	*out = domid;
	return 0;
}

int dom_ts_create(struct broker *b, struct conn *c, const struct simxen_req *req, const char *pl,
    size_t len, uint32_t *domid)
{
	enum {
		MAX_ARGS = 256
	};
	const char *s[2 + MAX_ARGS];
	uint32_t argc = req->a[2];
	if (argc == 0 || argc > MAX_ARGS || c->rx_nfds != 2)
		return EINVAL;
	size_t off = 0;
	for (uint32_t i = 0; i < 2 + argc; i++) {
		const char *z = off < len ? memchr(pl + off, '\0', len - off) : NULL;
		if (!z)
			return EINVAL;
		s[i] = pl + off;
		off = (size_t)(z - pl) + 1;
	}
	if (off != len || !*s[2])
		return EINVAL;
	char *argv[MAX_ARGS + 1];
	for (uint32_t i = 0; i < argc; i++)
		argv[i] = (char *)s[2 + i];
	argv[argc] = NULL;
	return dom_create(b, req->a[0], req->a[1], s[0], c->rx_fds, s[1], argv, domid);
}

/* The domain stopped running: record why, tell xenstore watchers, maybe release it. */
static void shut_down(struct broker *b, struct domain *d, bool crashed)
{
	d->pid = d->pid > 0 ? -d->pid : 0; /* remember the group for the final kill */
	if (d->state == DOM_RUNNING) {
		d->state = DOM_SHUTDOWN;
		d->crashed = crashed;
		xs_fire_special(b, "@releaseDomain"); /* xenstored fires it on shutdown too */
	}
	bool keep = !d->destroy_requested &&
	    (crashed ? d->flags & SIMXEN_CREATE_PRESERVE_CRASH
	             : d->flags & SIMXEN_CREATE_PRESERVE_POWEROFF);
	blog("domain %u (%s) %s%s", d->domid, d->name, crashed ? "crashed" : "shut down",
	    keep ? ", preserved" : "");
	if (!keep) {
		d->pid = -d->pid;
		release(b, d);
	}
}

void dom_reap(struct broker *b)
{
	int st;
	pid_t pid;
	while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
		for (unsigned i = 1; i < b->ndoms; i++) {
			struct domain *d = b->doms[i];
			if (d->pid != pid)
				continue;
			bool crashed =
			    d->crash_requested || (WIFSIGNALED(st) && !d->destroy_requested);
			shut_down(b, d, crashed);
			break;
		}
	}
}

/* A guest (never dom0) the toolstack acts on: ESRCH or EPERM otherwise, and EINVAL
 * when it must be running and its process is gone or going. */
static int guest(struct broker *b, uint32_t domid, bool running, struct domain **out)
{
	struct domain *d = dom_get(b, domid);
	if (!d)
		return ESRCH;
	if (domid == 0)
		return EPERM;
	if (running && (d->pid <= 0 || d->state != DOM_RUNNING))
		return EINVAL;
	*out = d;
	return 0;
}

int dom_destroy(struct broker *b, uint32_t domid)
{
	struct domain *d;
	int err = guest(b, domid, false, &d);
	if (err)
		return err;
	if (d->destroy_requested)
		return 0;
	d->destroy_requested = true;
	if (d->pid > 0) {
		/* Orderly: the domain is shut down first, then dying until its process is
		 * gone, then released (on reap). */
		d->state = DOM_SHUTDOWN;
		d->crashed = false;
		xs_fire_special(b, "@releaseDomain");
		d->state = DOM_DYING;
		kill(-d->pid, SIGCONT);
		kill(-d->pid, SIGKILL);
		return 0;
	}
	d->pid = -d->pid;
	release(b, d);
	return 0;
}

int dom_crash(struct broker *b, uint32_t domid)
{
	struct domain *d;
	int err = guest(b, domid, true, &d);
	if (err)
		return err;
	d->crash_requested = true;
	kill(-d->pid, SIGKILL);
	return 0;
}

int dom_pause(struct broker *b, uint32_t domid, bool pause)
{
	struct domain *d;
	int err = guest(b, domid, true, &d);
	if (err)
		return err;
	kill(-d->pid, pause ? SIGSTOP : SIGCONT);
	d->paused = pause;
	return 0;
}

void dom_kill_all(struct broker *b)
{
	for (unsigned i = 1; i < b->ndoms; i++) {
		struct domain *d = b->doms[i];
		pid_t g = d->pid > 0 ? d->pid : -d->pid;
		if (g > 0) {
			kill(-g, SIGCONT);
			kill(-g, SIGKILL);
			if (d->pid > 0)
				waitpid(d->pid, NULL, 0);
		}
	}
}

static const char *state_name(const struct domain *d)
{
	switch (d->state) {
	case DOM_RUNNING:
		return d->paused ? "paused" : "running";
	case DOM_SHUTDOWN:
		return d->crashed ? "crashed" : "shutdown";
	case DOM_DYING:
		return "dying";
	}
	return "?";
}

size_t dom_list_text(struct broker *b, char *out, size_t max)
{
	size_t n = 0;
	for (uint32_t id = 0; id <= MAX_DOMID; id++) {
		struct domain *d = b->by_id[id];
		if (!d)
			continue;
		int k = snprintf(out + n, max - n, "%u %s %s %d\n", d->domid, d->name,
		    state_name(d), d->pid > 0 ? (int)d->pid : 0);
		if (k < 0 || (size_t)k >= max - n)
			break;
		n += (size_t)k;
	}
	return n;
}

size_t dom_list_info(struct broker *b, uint32_t first, unsigned max, struct simxen_dominfo *out)
{
	size_t n = 0;
	for (uint32_t id = first; id <= MAX_DOMID && n < max; id++) {
		struct domain *d = b->by_id[id];
		if (!d)
			continue;
		uint32_t f = 0;
		if (d->state == DOM_DYING)
			f |= SIMXEN_DOM_DYING;
		if (d->state != DOM_RUNNING)
			f |= SIMXEN_DOM_SHUTDOWN;
		if (d->crashed)
			f |= SIMXEN_DOM_CRASHED;
		if (d->paused)
			f |= SIMXEN_DOM_PAUSED;
		if (d->released)
			f |= SIMXEN_DOM_RELEASED;
		out[n++] = (struct simxen_dominfo){ .domid = d->domid, .flags = f };
	}
	return n;
}
