/*
 * config.h - mtraced's settings: defaults, then /etc/mtrace/mtraced.conf (key = value
 * lines, '#' comments), then command-line flags.  SIGHUP re-reads the file; settings
 * marked (restart) keep their start-up value.
 */
#ifndef MTRACED_CONFIG_H
#define MTRACED_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MTRACED_DEFAULT_CONFIG "/etc/mtrace/mtraced.conf"

#define MTRACED_IMAGES_MAX 32

/* "image = DOMAIN PATH": the ELF image (with debug info) of guests named DOMAIN. */
struct mtraced_image {
	char domain[64];
	char path[256];
};

struct mtraced_config {
	char config_path[256];
	char backend[16];      /* "auto", "xen", "sim" (restart) */
	char sim_dir[256];     /* simulated Xen state directory (restart) */
	char socket_path[256]; /* default /run/mtrace/mtraced.sock (restart) */
	char socket_group[64]; /* default "mtrace"; socket chmod 0660 + chown */
	unsigned log_level;    /* 0 err, 1 warn, 2 info, 3 debug */

	/* guests */
	unsigned max_pages_per_guest; /* data+header pages mapped for one guest */
	unsigned max_pages_total;
	unsigned max_guests;
	unsigned drain_budget;      /* events per guest per wake-up */
	unsigned drain_interval_ms; /* periodic drain of every ring */
	unsigned ratelimit_wakeups; /* wake-ups allowed per ratelimit_period_ms */
	unsigned ratelimit_period_ms;
	unsigned poll_interval_us; /* busy guests: drained on this timer, not woken */
	unsigned dead_keep_s;      /* keep a dead guest's last statistics */
	unsigned mprof_poll_ms;    /* legacy mirage-profile buffers: poll interval */

	/* state */
	unsigned max_threads_per_guest; /* finished threads evicted past this */
	unsigned max_labels_per_guest;

	/* creation sites */
	unsigned max_sites_per_guest; /* distinct sites; more are counted as dropped */
	char debug_dirs[512];         /* ':'-separated roots of .build-id/xx/rest.debug */
	struct mtraced_image images[MTRACED_IMAGES_MAX];
	unsigned nimages;

	/* clients */
	unsigned max_clients;
	size_t client_queue_bytes;     /* per-client output queue cap */
	size_t client_queue_total;     /* all clients' queues together (0: no cap of its own) */
	size_t client_batch_total;     /* batches being built, all filters and rings (0: none) */
	size_t client_shm_bytes;       /* a shared-memory region's data (one per filter) */
	size_t client_shm_total;       /* all regions together (0: no shared memory) */
	size_t client_shm_per_uid;     /* the regions one uid reads (0: half the total) */
	unsigned max_clients_per_uid;  /* one uid's share of max_clients (0: max_clients) */
	unsigned client_hello_ms;      /* a client's Hello must come within this (0: 5000) */
	unsigned client_coalesce_us;   /* fast clients written at most this often */
	unsigned client_coalesce_rate; /* events/s that make a client fast (0: 1000000) */
	unsigned max_top_n;

	/* the hypervisor's scheduling of the vCPUs (vcpu-source.c; issue 38) */
	bool vcpu_source;          /* read it at all (restart) */
	unsigned vcpu_interval_ms; /* how often: the simulated Xen's samples, Xen's buffers */
	unsigned tbuf_pages;       /* Xen: pages per CPU when its buffers have no size yet */
	unsigned vcpu_max;         /* vCPUs followed, all domains together (restart) */

	/* service */
	bool drop_privileges;        /* after start-up: no new privileges, no capabilities */
	unsigned priority_boost;     /* nice -N at start-up, as auditd's priority_boost */
	unsigned status_interval_ms; /* sd_notify STATUS refresh */
};

void config_defaults(struct mtraced_config *c);
/* Parse a config file into c; returns 0, or -1 with a "file:line: reason" in err. */
int config_load_file(struct mtraced_config *c, const char *path, char *err, size_t errlen);
/* Set one key from a string (the file's "key = value", and tests).  0, or -1 with a
 * reason in err. */
int config_set(
    struct mtraced_config *c, const char *key, const char *val, char *err, size_t errlen);

#endif
