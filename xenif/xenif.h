/*
 * xenif.h - the one seam between mtrace and Xen.
 *
 * mtraced, the guest library and the test tools reach Xen only through this table.
 * It is shaped like the Xen libraries it wraps (libxengnttab, libxengntshr,
 * libxenevtchn, libxenstore, libxenctrl) so that the real backend is a thin
 * pass-through and the simulated backend (sim/) must keep the same semantics:
 * the same calls, the same errno values, the same coalescing of notifications.
 *
 * Errors: functions return -1 (or NULL) and set errno, as the Xen libraries do.
 */
#ifndef MTRACE_XENIF_H
#define MTRACE_XENIF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

typedef uint32_t xenif_port_t;
typedef uint32_t xenif_gref_t;
typedef uint32_t xenif_domid_t;

/* Which parts a process needs; unused libraries are not opened (a domU has no xenctrl). */
#define XENIF_GNTTAB     0x01 /* map grants of other domains (dom0) */
#define XENIF_GNTSHR     0x02 /* grant own pages to other domains (guest) */
#define XENIF_EVTCHN     0x04
#define XENIF_XS         0x08
#define XENIF_CTRL       0x10 /* domain list (dom0) */
#define XENIF_CLOCK      0x20 /* Xen system time against dom0's CLOCK_REALTIME */
#define XENIF_TBUF       0x40 /* the hypervisor's scheduling: trace buffers or their simulation */
#define XENIF_CLOCK_KEEP 0x80 /* with XENIF_CLOCK: a long-lived reader's, kept narrow */

#define XENIF_XS_PERM_READ  1
#define XENIF_XS_PERM_WRITE 2
struct xenif_xs_perm {
	xenif_domid_t domid;
	unsigned perms; /* XENIF_XS_PERM_* */
};

/* Whether domid may write a node with these permissions (xenstored's rule). */
bool xenif_xs_perm_writable(const struct xenif_xs_perm *p, unsigned num, xenif_domid_t domid);

struct xenif_dominfo {
	xenif_domid_t domid;
	bool dying;
	bool shutdown; /* shut down (crashed, powered off, ...) but not yet destroyed */
	bool crashed;  /* shutdown reason was a crash */
};

/* One reading of Xen system time and dom0's wall clock at the same instant. */
struct xenif_clock_sample {
	uint64_t xen_ns;     /* Xen system time (ns since the hypervisor's boot) */
	int64_t realtime_ns; /* dom0 CLOCK_REALTIME at the same instant (midpoint of a bracket) */
	uint64_t width_ns;   /* the bracket's width: the sample's uncertainty is width/2 */
};

/* Xen system time and another clock of this kernel read together (clock_pair). */
struct xenif_clock_pair {
	uint64_t xen_ns;   /* Xen system time */
	int64_t clk_ns;    /* the clock asked for, at the same instant */
	uint64_t width_ns; /* the uncertainty is width/2 */
	const char *how;   /* the source, for diagnostics: "sim", "pvclock", "runstate+raw", ... */
};

/* Another domain's event-channel port as Xen knows it (EVTCHNOP_status). */
struct xenif_evtchn_status {
	bool interdomain; /* bound to a port of a domain: the two below say which */
	xenif_domid_t remote_domid;
	xenif_port_t remote_port;
};

/*
 * ---- XENIF_TBUF: what the hypervisor did with the domains' vCPUs ----
 * Real Xen: its per-physical-CPU trace buffers (xc_tbuf_*, the pages mapped from
 * DOMID_XEN).  tbuf_read copies a CPU's unread window once into the caller's memory,
 * linearised, then gives the window back to Xen: the caller decodes the copy
 * (daemon/vcpu-decode.c), never the shared pages, which Xen keeps writing.
 * The simulated Xen has no trace buffers (tbuf_* fail with ENOTSUP): each of its domains
 * is a Linux process, whose scheduling sched_sample reads from /proc (xenif-sim-tbuf.c).
 */
struct xenif_tbuf_info {
	uint32_t ncpus;     /* buffers: physical CPU ids 0..ncpus-1 (an offline one has none) */
	uint32_t pages;     /* per CPU */
	uint32_t data_size; /* bytes of records a CPU's buffer holds (a window is at most this) */
	uint32_t evt_mask;  /* the event classes Xen records */
};

/* One vCPU of a simulated domain: a task of its process, counted since the task began
 * (the kernel's schedstat: time on a CPU, time runnable on a run queue, times run). */
struct xenif_vcpu_sample {
	uint32_t id;      /* the task's id: stable for the task's life */
	uint64_t run_ns;  /* on a CPU */
	uint64_t wait_ns; /* runnable, waiting for a CPU */
	uint64_t slices;  /* times it was put on a CPU */
};

struct xenif_xs_watch_event {
	char path[256];
	char token[64];
};

struct xenif;

struct xenif_ops {
	const char *name; /* "xen" or "sim" */

	/* libxengnttab: map pages another domain granted us. prot is PROT_READ[|PROT_WRITE]. */
	void *(*gnttab_map)(struct xenif *x, xenif_domid_t domid, uint32_t count,
	    const xenif_gref_t *refs, int prot);
	int (*gnttab_unmap)(struct xenif *x, void *addr, uint32_t count);

	/* libxengntshr: grant `count` fresh zeroed pages to domid; refs filled in. */
	void *(*gntshr_share)(struct xenif *x, xenif_domid_t domid, uint32_t count,
	    xenif_gref_t *refs, bool writable);
	int (*gntshr_unshare)(struct xenif *x, void *addr, uint32_t count);

	/* libxenevtchn: one fd per handle; pending() returns a port once it fired
	 * (the port is then masked until unmask, as the Linux evtchn driver does). */
	int (*evtchn_fd)(struct xenif *x);
	int (*evtchn_bind_unbound)(struct xenif *x, xenif_domid_t remote); /* -> local port */
	int (*evtchn_bind_interdomain)(struct xenif *x, xenif_domid_t remote, xenif_port_t rport);
	int (*evtchn_notify)(struct xenif *x, xenif_port_t port);
	int (*evtchn_pending)(struct xenif *x); /* -1/EAGAIN when none (fd is non-blocking) */
	int (*evtchn_unmask)(struct xenif *x, xenif_port_t port);
	int (*evtchn_unbind)(struct xenif *x, xenif_port_t port);

	/* libxenstore.  Strings returned are malloc'd; caller frees.  tx 0 = no transaction.
	 * xs_directory returns one block (pointer array + names), freed with one free(). */
	char *(*xs_read)(struct xenif *x, uint32_t tx, const char *path, size_t *len);
	int (*xs_write)(
	    struct xenif *x, uint32_t tx, const char *path, const void *val, size_t len);
	int (*xs_rm)(struct xenif *x, uint32_t tx, const char *path);
	char **(*xs_directory)(struct xenif *x, uint32_t tx, const char *path, unsigned *num);
	uint32_t (*xs_transaction_start)(struct xenif *x);                   /* 0 on error */
	int (*xs_transaction_end)(struct xenif *x, uint32_t tx, bool abort); /* -1/EAGAIN: retry */
	int (*xs_watch)(struct xenif *x, const char *path, const char *token);
	int (*xs_unwatch)(struct xenif *x, const char *path, const char *token);
	int (*xs_fileno)(struct xenif *x); /* readable when a watch fired */
	int (*xs_read_watch)(struct xenif *x, struct xenif_xs_watch_event *ev); /* -1/EAGAIN */
	int (*xs_get_domid)(struct xenif *x, xenif_domid_t *domid);             /* own domid */
	/* libxenstore xs_get_permissions: *num entries, malloc'd (one free); entry 0 is
	 * the owner, whose perms are everyone else's. */
	struct xenif_xs_perm *(*xs_get_perms)(
	    struct xenif *x, uint32_t tx, const char *path, unsigned *num);

	/* libxenctrl: domains with domid >= first, up to max entries; returns count. */
	int (*ctrl_domain_list)(
	    struct xenif *x, xenif_domid_t first, struct xenif_dominfo *info, unsigned max);
	/* XENIF_CLOCK: Xen system time and dom0's CLOCK_REALTIME, read together; -1/ENOTSUP
	 * where Xen's time cannot be read. */
	int (*clock_sample)(struct xenif *x, struct xenif_clock_sample *s);
	/* XENIF_CLOCK: the same against clk, any clock of this kernel (a guest's ring clock:
	 * its clock-sync announcement); docs/xen-time.md says how it is read on real Xen. */
	int (*clock_pair)(struct xenif *x, clockid_t clk, struct xenif_clock_pair *p);
	/* XENIF_CTRL: the status of port of domid (dom0 asks about any domain). */
	int (*evtchn_status)(struct xenif *x, xenif_domid_t domid, xenif_port_t port,
	    struct xenif_evtchn_status *st);

	/* XENIF_TBUF, real Xen.  tbuf_open: give the buffers pages per CPU if Xen has none
	 * yet (the size is set once per boot: otherwise the existing size stays), set the
	 * event mask, enable tracing, map the buffers.  tbuf_read: cpu's unread records,
	 * copied once into buf (at least data_size bytes), then released to Xen: the bytes
	 * copied, 0 when none; -1/ENOENT for a CPU without a buffer, -1/EPROTO when the
	 * buffer's producer or consumer index is impossible (nothing is read).  Records
	 * carry the physical CPU's TSC: mtraced maps it to CLOCK_REALTIME itself
	 * (daemon/vcpu-xen.c), since a Linux dom0's own Xen time is not in the
	 * shared_info page Xen would let us map (Linux moves it, VCPUOP_register_vcpu_info).
	 * tbuf_close: unmap and turn tracing off (as xentrace does when it stops). */
	int (*tbuf_open)(
	    struct xenif *x, uint32_t pages, uint32_t evt_mask, struct xenif_tbuf_info *info);
	long (*tbuf_read)(struct xenif *x, uint32_t cpu, void *buf, size_t len);
	void (*tbuf_close)(struct xenif *x);
	/* XENIF_TBUF, simulated Xen: domid's vCPUs now, up to max of them (the count, or
	 * -1/ESRCH when the domain has no process, -1/ENOTSUP on real Xen); *realtime_ns
	 * is the midpoint of the reads and *width_ns their span. */
	int (*sched_sample)(struct xenif *x, xenif_domid_t domid, struct xenif_vcpu_sample *v,
	    unsigned max, int64_t *realtime_ns, uint64_t *width_ns);

	void (*close)(struct xenif *x);
};

struct xenif {
	const struct xenif_ops *ops;
	void *priv;
};

/*
 * Open a backend.  backend is "xen", "sim" or "auto"/NULL: sim when MTRACE_SIM_DIR is
 * set in the environment (or sim_dir is given), else xen.  For sim, sim_dir names the
 * state directory (NULL: $MTRACE_SIM_DIR).  parts is a mask of XENIF_*.
 * Returns NULL with errno set and a message in err (if non-NULL, size errlen).
 */
struct xenif *xenif_open(
    const char *backend, const char *sim_dir, unsigned parts, char *err, size_t errlen);
void xenif_close(struct xenif *x);

/* Backend constructors (xenif-xen.c, xenif-sim.c). */
struct xenif *xenif_xen_open(unsigned parts, char *err, size_t errlen);
struct xenif *xenif_sim_open(const char *sim_dir, unsigned parts, char *err, size_t errlen);

#endif
