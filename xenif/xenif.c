/*
 * xenif.c - choose the Xen backend: the real libraries or the simulated Xen.
 *
 * "auto" prefers the simulation only when it was asked for (a state directory given
 * or MTRACE_SIM_DIR set), so that a binary on a real Xen host never silently talks to
 * a simulation, and a test never silently talks to real Xen.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xenif.h"

struct xenif *xenif_open(const char *backend, const char *sim_dir, unsigned parts,
			 char *err, size_t errlen)
{
	char dummy[8];

	if (!err) {
		err = dummy;
		errlen = sizeof(dummy);
	}
	if (errlen)
		err[0] = '\0';
	if (!backend || !strcmp(backend, "auto")) {
		const char *env = getenv("MTRACE_SIM_DIR");
		backend = (sim_dir && *sim_dir) || (env && *env) ? "sim" : "xen";
	}
	if (!strcmp(backend, "sim"))
		return xenif_sim_open(sim_dir, parts, err, errlen);
	if (!strcmp(backend, "xen")) {
#ifdef XENIF_HAVE_XEN
		return xenif_xen_open(parts, err, errlen);
#else
		snprintf(err, errlen,
			 "this build has no real Xen backend (built without the Xen libraries, -Dxen)");
		errno = ENOSYS;
		return NULL;
#endif
	}
	snprintf(err, errlen, "unknown Xen backend '%s' (expected xen, sim or auto)", backend);
	errno = EINVAL;
	return NULL;
}

void xenif_close(struct xenif *x)
{
	if (x)
		x->ops->close(x);
}

bool xenif_xs_perm_writable(const struct xenif_xs_perm *p, unsigned num, xenif_domid_t domid)
{
	if (num == 0)
		return true;	/* nothing known: assume the worst */
	if (p[0].domid == domid)
		return true;	/* the owner */
	for (unsigned i = 1; i < num; i++)
		if (p[i].domid == domid)
			return (p[i].perms & XENIF_XS_PERM_WRITE) != 0;
	return (p[0].perms & XENIF_XS_PERM_WRITE) != 0;
}
