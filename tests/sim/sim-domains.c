/*
 * sim-domains.c - sim-test's domain cases: lifecycle (create, pause, crash, destroy, the
 * domain list), many domains at once, and garbage on the broker's sockets.
 */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "sim-test.h"
#include "simxen-proto.h"
#include "xenif.h"

int case_domains(void)
{
	struct xenif *x = open_x(XENIF_CTRL | XENIF_XS | XENIF_GNTTAB | XENIF_EVTCHN);
	struct xenif_dominfo di;
	CHECK(dominfo(x, 0, &di) && !di.dying && !di.shutdown, "dom0 listed");
	xenif_domid_t me = 99;
	x->ops->xs_get_domid(x, &me);
	CHECK(me == 0, "a plain process is dom0");

	/* Crash with preserve: visible as shut down + crashed until destroyed. */
	unsigned c = create_guest("crashy", "--preserve-crash", "idle");
	free(wait_xs(x, "1", 10000, "/local/domain/%u/data/ready", c));
	CHECK(dominfo(x, c, &di) && !di.shutdown && !di.crashed && !di.dying, "running flags");
	CHECK(cli(NULL, 0, "crash %u", c) == 0, "crash");
	CHECK(dominfo(x, c, &di) && di.shutdown && di.crashed && !di.dying, "crashed flags");
	char out[256];
	cli(out, sizeof(out), "list | grep '^%u '", c);
	CHECK(strstr(out, "crashy crashed"), "list shows crashed: %s", out);
	CHECK(cli(NULL, 0, "destroy %u", c) == 0 && !dominfo(x, c, &di), "destroy crashed");

	/* Poweroff with preserve: shut down, not crashed. */
	unsigned p = create_guest("quitter", "--preserve-poweroff", "exit 0");
	long end = now_ms() + 10000;
	while (now_ms() < end && !(dominfo(x, p, &di) && di.shutdown))
		sleep_ms(20);
	CHECK(dominfo(x, p, &di) && di.shutdown && !di.crashed, "poweroff flags");
	CHECK(cli(NULL, 0, "destroy %u", p) == 0 && !dominfo(x, p, &di), "destroy powered off");

	/* Default: a guest that exits or is killed is released. */
	unsigned q = create_guest("gone", "", "exit 3");
	end = now_ms() + 10000;
	while (now_ms() < end && dominfo(x, q, &di))
		sleep_ms(20);
	CHECK(!dominfo(x, q, &di), "exited guest released");
	unsigned k = create_guest("killed", "", "idle");
	free(wait_xs(x, "1", 10000, "/local/domain/%u/data/ready", k));
	CHECK(cli(NULL, 0, "crash %u", k) == 0 && !dominfo(x, k, &di), "crashed guest released");
	CHECK(cli(NULL, 0, "destroy 4242") != 0, "destroy of a missing domain fails");
	CHECK(cli(NULL, 0, "destroy 0") != 0, "dom0 cannot be destroyed");
	unsigned fixed = create_guest("fixed", "--domid 77", "idle");
	CHECK(fixed == 77, "--domid honoured");
	CHECK(cli(NULL, 0, "create --name fixed2 --domid 77 -- true") != 0, "domid in use");
	CHECK(cli(NULL, 0, "create --name fixed -- true") != 0, "name in use");
	CHECK(cli(NULL, 0, "create --name 'bad/name' -- true") != 0, "bad name");
	CHECK(cli(NULL, 0, "create --name big --domid 40000 -- true") != 0, "domid too big");
	struct xenif_dominfo all[64];
	int nd = x->ops->ctrl_domain_list(x, 0, all, 64);
	CHECK(nd == 2 && all[0].domid == 0 && all[1].domid == 77, "dom0 and 77 listed: %d", nd);

	xenif_close(x);
	return check_failures != 0;
}

int case_many(void)
{
	struct xenif *x = open_x(XENIF_CTRL | XENIF_XS | XENIF_GNTTAB | XENIF_EVTCHN);
	/* One guest besides the 20, so that "all gone" is not "nothing there". */
	unsigned fixed = create_guest("fixed", "--domid 77", "idle");
	CHECK(fixed == 77, "--domid honoured");

	/* 20 guests at once, each with a grant and a port; created in parallel. */
	enum {
		N = 20
	};
	unsigned ids[N];
	char sh[1024];
	snprintf(sh, sizeof(sh),
	    "i=0; while [ $i -lt %d ]; do \"$SIMXEN\" create --domid $((200 + i)) "
	    "--name many$i --log many$i.log -- '%s' guest idle >/dev/null & i=$((i + 1)); "
	    "done; wait",
	    N, sim_self);
	CHECK(system(sh) == 0, "parallel create");
	for (int i = 0; i < N; i++)
		ids[i] = 200 + (unsigned)i;
	int lps[N];
	for (int i = 0; i < N; i++) {
		char *v = wait_xs(x, "1", 10000, "/local/domain/%u/data/ready", ids[i]);
		CHECK(v, "guest %u ready", ids[i]);
		free(v);
		char *rs = wait_xs(x, NULL, 100, "/local/domain/%u/data/ref", ids[i]);
		char *ps = wait_xs(x, NULL, 100, "/local/domain/%u/data/port", ids[i]);
		REQUIRE(rs && ps, "guest %u announced", ids[i]);
		xenif_gref_t ref = (xenif_gref_t)atoi(rs);
		char *m = x->ops->gnttab_map(x, ids[i], 1, &ref, PROT_READ);
		char want[64];
		snprintf(want, sizeof(want), "page of domain %u", ids[i]);
		CHECK(m && !strcmp(m, want), "guest %u page", ids[i]);
		if (m)
			x->ops->gnttab_unmap(x, m, 1);
		lps[i] = x->ops->evtchn_bind_interdomain(x, ids[i], (xenif_port_t)atoi(ps));
		CHECK(lps[i] > 0, "bind guest %u", ids[i]);
		free(rs);
		free(ps);
	}
	/* Every bind leaves one event pending on its own port (Xen's bind semantics). */
	bool seen[N] = { false };
	int distinct = 0, p;
	long end = now_ms() + 5000;
	while (distinct < N && now_ms() < end) {
		readable(x->ops->evtchn_fd(x), 200);
		while ((p = x->ops->evtchn_pending(x)) >= 0) {
			for (int i = 0; i < N; i++)
				if (p == lps[i] && !seen[i]) {
					seen[i] = true;
					distinct++;
				}
			x->ops->evtchn_unmask(x, (xenif_port_t)p);
		}
	}
	CHECK(distinct == N, "one event per bound port: %d of %d", distinct, N);
	struct xenif_dominfo all[64];
	int nd = x->ops->ctrl_domain_list(x, 0, all, 64);
	CHECK(nd == N + 2, "domain list has dom0 + fixed + %d guests: %d", N, nd);
	nd = x->ops->ctrl_domain_list(x, ids[N / 2], all, 3);
	CHECK(nd == 3 && all[0].domid >= ids[N / 2], "list from a first domid, bounded");
	/* All power off at once; each is released when its process exits. */
	for (int i = 0; i < N; i++) {
		char path[64];
		snprintf(path, sizeof(path), "/local/domain/%u/data/cmd", ids[i]);
		CHECK(x->ops->xs_write(x, 0, path, "exit", 4) == 0, "tell %u to exit", ids[i]);
	}
	end = now_ms() + 20000;
	while ((nd = x->ops->ctrl_domain_list(x, 0, all, 64)) > 2 && now_ms() < end)
		sleep_ms(50);
	CHECK(nd == 2, "after all powered off: %d domains", nd);
	unsigned nl;
	char **d = x->ops->xs_directory(x, 0, "/local/domain", &nl);
	CHECK(d && nl == 2, "xenstore has dom0 + fixed left: %u", nl);
	free(d);
	xenif_close(x);
	return check_failures != 0;
}

/* Garbage on the broker socket: every bad client is dropped, the broker carries on. */
int case_garbage(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	REQUIRE((size_t)snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/%s",
	            getenv("MTRACE_SIM_DIR"), SIMXEN_SOCK) < sizeof(sa.sun_path),
	    "socket path too long");
	srand(42);
	static char buf[40000];
	for (int round = 0; round < 300; round++) {
		int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
		REQUIRE(fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0,
		    "connect round %d", round);
		size_t len;
		switch (round % 6) {
		case 0:
			len = (size_t)(rand() % 8);
			break; /* short */
		case 1:
			len = 24 + (size_t)(rand() % 64);
			break; /* header-sized */
		case 2:
			len = SIMXEN_MAX_MSG + 1 + (size_t)(rand() % 1000);
			break;
		default:
			len = (size_t)(rand() % 2000);
			break;
		}
		for (size_t i = 0; i < len; i++)
			buf[i] = (char)rand();
		if (round % 6 == 1) { /* plausible op with absurd arguments */
			struct simxen_req r = { .op = (uint32_t)(1 + rand() % (SIMXEN_OP_MAX + 3)),
				.tx = (uint32_t)rand(),
				.a = { (uint32_t)rand(), (uint32_t)rand(), (uint32_t)rand(),
				    (uint32_t)rand() } };
			if (r.op == SIMXEN_TS_STOP)
				r.op = SIMXEN_TS_LIST;
			memcpy(buf, &r, sizeof(r));
		}
		if (round % 17 == 0) { /* with a descriptor attached */
			union {
				struct cmsghdr c;
				char b[CMSG_SPACE(sizeof(int))];
			} cm;
			struct iovec iov = { buf, len ? len : 1 };
			struct msghdr mh = { .msg_iov = &iov,
				.msg_iovlen = 1,
				.msg_control = cm.b,
				.msg_controllen = sizeof(cm.b) };
			struct cmsghdr *h = CMSG_FIRSTHDR(&mh);
			h->cmsg_level = SOL_SOCKET;
			h->cmsg_type = SCM_RIGHTS;
			h->cmsg_len = CMSG_LEN(sizeof(int));
			int zero = 0;
			memcpy(CMSG_DATA(h), &zero, sizeof(int));
			sendmsg(fd, &mh, MSG_NOSIGNAL);
		} else {
			send(fd, buf, len, MSG_NOSIGNAL);
		}
		/* Many requests without reading replies. */
		if (round % 50 == 3) {
			struct simxen_req r = { .op = SIMXEN_TS_LIST };
			for (int i = 0; i < 5000; i++)
				if (send(fd, &r, sizeof(r), MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
					break;
		}
		close(fd);
	}
	/* A stream client is refused by the socket type. */
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK(connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0, "stream connect refused");
	close(s);
	/* The broker must still work normally. */
	char out[128];
	CHECK(cli(out, sizeof(out), "list") == 0 && !strncmp(out, "0 Domain-0", 10),
	    "broker alive after garbage: %s", out);
	struct xenif *x = open_x(XENIF_XS | XENIF_EVTCHN | XENIF_GNTSHR | XENIF_GNTTAB);
	CHECK(x->ops->xs_write(x, 0, "/alive", "yes", 3) == 0, "xenstore works after garbage");
	unsigned g = create_guest("after", "", "idle");
	char *v = wait_xs(x, "1", 10000, "/local/domain/%u/data/ready", g);
	CHECK(v, "a guest still starts after garbage");
	free(v);
	/* A guest opening connections without end, then garbling its identity socket. */
	g = create_guest("flood", "", "flood");
	v = wait_xs(x, NULL, 20000, "/local/domain/%u/data/result", g);
	CHECK(v && !strcmp(v, "ok"), "connection flood: %s", v ? v : "(no result)");
	free(v);
	CHECK(cli(out, sizeof(out), "list") == 0, "broker alive after the flood");
	xenif_close(x);
	return check_failures != 0;
}
