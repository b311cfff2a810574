/*
 * service.c - systemd integration through libsystemd's sd_notify, and dropping what
 * the daemon no longer needs after start-up: the Xen devices, xenstore connection and
 * client socket are open by then, and nothing later needs a capability.
 */
#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <event2/event.h>
#include <systemd/sd-daemon.h>

#include "clock.h"
#include "config.h"
#include "log.h"
#include "service.h"
#include "state.h"
#include "stream.h"

/* The status line's state.  One per process, not a context passed around: sd_notify
 * speaks for the process to its service manager, of which there is one. */
static struct {
	const struct stream *stream; /* whose clients the line counts */
	struct event *status_ev;
	unsigned interval_ms;
	char last_status[128];
} sv = { .interval_ms = 1000 };

static void service_status(void)
{
	char line[128];
	unsigned g = state_guest_count(), c = sv.stream ? stream_client_count(sv.stream) : 0;

	snprintf(line, sizeof(line), "STATUS=%u guest%s, %u client%s", g, g == 1 ? "" : "s", c,
	    c == 1 ? "" : "s");
	if (strcmp(line, sv.last_status)) {
		sd_notify(0, line);
		snprintf(sv.last_status, sizeof(sv.last_status), "%s", line);
	}
}

static void status_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	service_status();
}

static void status_arm(void)
{
	struct timeval tv = tv_from_ms(sv.interval_ms);

	evtimer_del(sv.status_ev);
	event_add(sv.status_ev, &tv);
}

int service_init(
    struct event_base *base, const struct mtraced_config *cfg, const struct stream *stream)
{
	sv.stream = stream;
	sv.interval_ms = cfg->status_interval_ms;
	sv.status_ev = event_new(base, -1, EV_PERSIST, status_cb, NULL);
	if (!sv.status_ev)
		return -1;
	status_arm();
	return 0;
}

void service_reconfigure(const struct mtraced_config *cfg)
{
	sv.interval_ms = cfg->status_interval_ms;
	if (sv.status_ev)
		status_arm();
}

void service_ready(void)
{
	sv.last_status[0] = 0;
	service_status();
	sd_notify(0, "READY=1");
}

void service_reloading(void)
{
	sd_notify(0, "RELOADING=1");
}

void service_stopping(void)
{
	sd_notify(0, "STOPPING=1\nSTATUS=stopping: draining rings");
}

int service_drop_privileges(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2];

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		log_warn("no_new_privs");
		return -1;
	}
	if (geteuid() != 0)
		return 0;
	/* clear the bounding set (needs CAP_SETPCAP, which we still hold), then our sets */
	for (int cap = 0; cap <= 63; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno == EINVAL)
			break;
	memset(data, 0, sizeof(data));
	if (syscall(SYS_capset, &hdr, data) < 0) {
		log_warn("dropping capabilities");
		return -1;
	}
	log_debug("privileges dropped");
	return 0;
}

int service_boost_priority(unsigned boost)
{
	int want = -(int)boost, cur;

	errno = 0;
	cur = getpriority(PRIO_PROCESS, 0);
	if (boost == 0 || (errno == 0 && cur <= want))
		return 0; /* nothing asked, or a unit's Nice= did it already */
	if (setpriority(PRIO_PROCESS, 0, want) < 0) {
		log_info("cannot run at nice %d (priority_boost): %s", want, strerror(errno));
		return -1;
	}
	log_debug("running at nice %d", want);
	return 0;
}

void service_fini(void)
{
	if (sv.status_ev)
		event_free(sv.status_ev);
	sv.status_ev = NULL;
	sv.stream = NULL;
}
