/*
 * simxen-broker.h - the broker as the command-line tool sees it: one call that runs it.
 *
 * Everything else about the broker (domains, grants, event channels, xenstore) is
 * its own business (broker.h); the tool talks to a running broker over its socket
 * in the protocol of simxen-proto.h, as any dom0 program does.
 */
#ifndef MTRACE_SIM_SIMXEN_BROKER_H
#define MTRACE_SIM_SIMXEN_BROKER_H

/* Serve DIR until stopped; ready_fd (if >= 0) gets one byte once it listens.
 * Returns the process's exit status. */
int broker_run(const char *dir, int ready_fd);

#endif
