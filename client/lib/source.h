/*
 * source.h - where a client's records come from: mtraced (its socket, the events
 * through shared memory if asked), a recording (docs/recording.md), or the fleet stream
 * in NATS JetStream (fleet.c, docs/fleet.md).  One table of operations, as xenif_ops is
 * the daemon's one seam to Xen; the session (session.h) runs over any source, so
 * mtrace-cat, mtrace-top and mtrace-web read the three with the same code, and the
 * same filters: mtraced selects for its readers, the session selects stored records
 * itself (select.h).
 */
#ifndef MTRACE_SOURCE_H
#define MTRACE_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/buffer.h>

#include "mtrace.pb-c.h"

/* One record: a message and where it came from. */
struct mtc_rec {
	Mtrace__ServerMsg *msg; /* free with mtc_msg_free unless the program keeps it */
	/* its frame as received (varint prefix included), valid until the next record;
	 * NULL when the session made the message (a selected piece, a cut Stats) */
	const uint8_t *raw;
	size_t raw_len;
	const char *host;   /* the fleet: the host its subject names; else "" */
	uint64_t stored_ms; /* the fleet: when JetStream stored it (Unix ms); else 0 */
	/* the fleet: a Stats measures its host's clock against the NATS server's
	 * (fleet-skew.h): the host's estimate after it; else NULL */
	const struct fleet_skew_est *skew;
};

/* What next says. */
enum mtc_next {
	MTC_NEXT_END = -2,  /* the records ended, for good: a recording's end, or the stream
	                     * read up to its end (without --follow); a sentence in err */
	MTC_NEXT_FAIL = -1, /* the link failed (a sentence in err; errno 0 when mtraced
	                     * closed it): close, then open again if the program wants */
	MTC_NEXT_NONE = 0,  /* nothing yet: wait for fd */
	MTC_NEXT_REC = 1,   /* a record */
	MTC_NEXT_UP = 2,    /* the link is up (a source that connects in the background) */
	MTC_NEXT_AWAY = 3,  /* the link went away, and the source brings it back itself
	                     * (libnats reconnects): why in err; UP follows */
};

struct mtc_source;
struct fleet_skew_est;

struct mtc_source_ops {
	const char *kind; /* "mtraced", "recording", "fleet" */
	/* Stored records: selected by the reader (select.h), and Error and Goodbye in them
	 * are what a daemon said then, not the end of this link. */
	bool stored;
	/* Make the link with sub (the daemon selects by it; stored sources ignore it; NULL:
	 * no Subscribe is sent).  0: up; 1: under way, UP comes through next; -1 with a
	 * sentence in err. */
	int (*open)(struct mtc_source *s, const Mtrace__Subscribe *sub, char *err, size_t errlen);
	/* The next record into r: enum mtc_next.  timeout_ms: 0 polls, < 0 waits. */
	int (*next)(
	    struct mtc_source *s, int timeout_ms, struct mtc_rec *r, char *err, size_t errlen);
	/* The descriptor that is readable when next has something; -1: next never waits
	 * (a file): read it a budget at a time. */
	int (*fd)(const struct mtc_source *s);
	/* A new selection on the open link (mtraced's Subscribe); NULL: stored. */
	int (*resubscribe)(struct mtc_source *s, const Mtrace__Subscribe *sub);
	/* The daemon's Hello once open (NULL: none: in stored records it is a record). */
	const Mtrace__Hello *(*hello)(const struct mtc_source *s);
	/* Take the link down (open may follow); free it all. */
	void (*close)(struct mtc_source *s);
	void (*free)(struct mtc_source *s);
	/* The messages skipped as not ours, per host, as JSON (fleet-hosts.h; NULL: a
	 * source that skips none: mtraced's and a recording's end the read instead). */
	void (*bad_json)(const struct mtc_source *s, struct evbuffer *b);
	/* Each host's clock against the NATS server's, as JSON (fleet-skew.h; NULL: a
	 * source of one host, on its own clock). */
	void (*skew_json)(const struct mtc_source *s, struct evbuffer *b);
};

/* Every backend's state begins with this. */
struct mtc_source {
	const struct mtc_source_ops *ops;
};

#define MTC_SOURCE_HOSTS_MAX 32

/* A source as a command line names it: the same options in every reader. */
struct mtc_source_spec {
	const char *prog;     /* for what the source says on stderr ("mtrace-cat") */
	const char *software; /* for mtraced's Hello ("mtrace-cat 0.1.0") */
	const char *socket;   /* mtraced's (NULL: $MTRACE_SOCKET or the default) */
	const char *input;    /* -i: a recording ("-": stdin) */
	/* --nats: the fleet stream MTRACE */
	const char *nats;                        /* server URL(s), comma separated */
	const char *creds;                       /* NATS user credentials */
	const char *hosts[MTC_SOURCE_HOSTS_MAX]; /* --host: these only (none: every host) */
	unsigned n_hosts;
	int64_t since_ns; /* --since: from this time (0: not given) */
	bool from_start;  /* --from-start: all the stream holds */
	bool follow;      /* --follow: wait for more at the end (alone: only what is new) */
	bool background;  /* connect and subscribe in the background, trying again until
	                   * it works (a server: mtrace-web), instead of failing at once */
};

/*
 * The source a spec names: a recording with input, the fleet with nats, else mtraced.
 * Nothing is opened yet.  NULL with a sentence in err.  (source-any.c: it links libnats.)
 */
struct mtc_source *mtc_source_new(const struct mtc_source_spec *spec, char *err, size_t errlen);
/* mtraced at path (NULL: the default), saying software in its Hello. */
struct mtc_source *mtc_source_mtraced(const char *path, const char *software);
/* The recording at path ("-": stdin). */
struct mtc_source *mtc_source_recording(const char *path);
/* The fleet stream (fleet.c). */
struct mtc_source *mtc_source_fleet(const struct mtc_source_spec *spec, char *err, size_t errlen);
/* The bad_json of s into b: 0, or -1 (nothing written) for a source without it. */
int mtc_source_bad_json(const struct mtc_source *s, struct evbuffer *b);
/* The same with skew_json. */
int mtc_source_skew_json(const struct mtc_source *s, struct evbuffer *b);
/* mtraced's connection while open (others: NULL), for what only it has. */
struct mtc *mtc_source_conn(const struct mtc_source *s);

/* The spec's sources exclude each other, and the fleet's options need --nats: 0, or
 * -1 with a sentence for a usage error. */
int mtc_source_spec_check(const struct mtc_source_spec *spec, char *err, size_t errlen);

/* The fleet's options, the same in every reader: their getopt_long values (a program
 * lists those it takes), and what they set (source-any.c). */
enum mtc_source_opt {
	MTC_OPT_NATS = 0x4000, /* --nats URL */
	MTC_OPT_HOST,          /* --host H (again for more) */
	MTC_OPT_SINCE,         /* --since TIME */
	MTC_OPT_FROM_START,    /* --from-start */
	MTC_OPT_FOLLOW,        /* --follow */
	MTC_OPT_CREDS,         /* --creds FILE */
};
/* 1 when opt is one of them (arg taken into spec), 0 when not, -1 on a bad argument
 * (said on stderr as "PROG: ..."). */
int mtc_source_opt(struct mtc_source_spec *spec, int opt, const char *arg);

#endif
