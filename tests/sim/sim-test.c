/*
 * sim-test.c - cross-process tests of the simulated Xen, through xenif like mtrace.
 *
 * `sim-test CASE` is dom0 (a plain process connected to the broker) and starts guests
 * with `mtrace-simxen create -- sim-test guest MODE`, which run as their own domains.
 * Guests report through xenstore (data/...) since that is the only channel a domain
 * has.  run-sim.sh gives each case a fresh broker in a fresh directory.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "sim-test.h"

int main(int argc, char **argv)
{
	static char abs[4096];
	if (argv[0][0] != '/' && realpath(argv[0], abs))
		sim_self = abs;
	else
		sim_self = argv[0];
	signal(SIGPIPE, SIG_IGN);
	if (argc >= 2 && !strcmp(argv[1], "guest"))
		return guest_main(argc, argv);
	if (argc != 2 || !getenv("SIMXEN") || !getenv("MTRACE_SIM_DIR")) {
		fprintf(stderr,
		    "usage: SIMXEN=... MTRACE_SIM_DIR=... sim-test "
		    "grants|evtchn|xenstore|domains|many|garbage|sched\n");
		return 2;
	}
	alarm(55); /* never outlive the meson timeout silently */
	int rc;
	if (!strcmp(argv[1], "grants"))
		rc = case_grants();
	else if (!strcmp(argv[1], "evtchn"))
		rc = case_evtchn();
	else if (!strcmp(argv[1], "xenstore"))
		rc = case_xenstore();
	else if (!strcmp(argv[1], "domains"))
		rc = case_domains();
	else if (!strcmp(argv[1], "many"))
		rc = case_many();
	else if (!strcmp(argv[1], "garbage"))
		rc = case_garbage();
	else if (!strcmp(argv[1], "sched"))
		rc = case_sched();
	else
		return 2;
	printf("%s: %s (%d failures)\n", argv[1], rc ? "FAIL" : "PASS", check_failures);
	return rc;
}
