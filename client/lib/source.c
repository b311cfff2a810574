/*
 * source.c - two backends of source.h: mtraced over its socket (libmtrace-client's
 * connection, mtrace-client.c, which also reads the events from shared memory when the
 * Subscribe asks for it) and a recording (recording.c); and the checks of a spec.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mtrace-client.h"
#include "recording.h"
#include "source.h"

/* ---- mtraced ---- */

struct src_mtraced {
	struct mtc_source src;
	char *path; /* NULL: the default */
	char *software;
	struct mtc *c;
};

static int mtraced_open(
    struct mtc_source *s, const Mtrace__Subscribe *sub, char *err, size_t errlen)
{
	struct src_mtraced *m = (struct src_mtraced *)s;

	if (m->c)
		return 0;
	if (!(m->c = mtc_connect(m->path, m->software, err, errlen)))
		return -1;
	if (sub && mtc_subscribe(m->c, sub) < 0) {
		snprintf(err, errlen, "subscribe: %s", strerror(errno));
		mtc_close(m->c);
		m->c = NULL;
		return -1;
	}
	return 0;
}

static int mtraced_next(
    struct mtc_source *s, int timeout_ms, struct mtc_rec *r, char *err, size_t errlen)
{
	struct src_mtraced *m = (struct src_mtraced *)s;
	int rc;

	if (!m->c) {
		snprintf(err, errlen, "not connected");
		errno = ENOTCONN;
		return MTC_NEXT_FAIL;
	}
	rc = mtc_next(m->c, timeout_ms, &r->msg, &r->raw, &r->raw_len, err, errlen);
	r->host = "";
	r->stored_ms = 0;
	r->skew = NULL;
	return rc > 0 ? MTC_NEXT_REC : rc == 0 ? MTC_NEXT_NONE : MTC_NEXT_FAIL;
}

static int mtraced_fd(const struct mtc_source *s)
{
	const struct src_mtraced *m = (const struct src_mtraced *)s;

	return m->c ? mtc_fd(m->c) : -1;
}

static int mtraced_resubscribe(struct mtc_source *s, const Mtrace__Subscribe *sub)
{
	struct src_mtraced *m = (struct src_mtraced *)s;

	if (!m->c) {
		errno = ENOTCONN;
		return -1;
	}
	return mtc_subscribe(m->c, sub);
}

static const Mtrace__Hello *mtraced_hello(const struct mtc_source *s)
{
	const struct src_mtraced *m = (const struct src_mtraced *)s;

	return m->c ? mtc_server_hello(m->c) : NULL;
}

static void mtraced_close(struct mtc_source *s)
{
	struct src_mtraced *m = (struct src_mtraced *)s;

	mtc_close(m->c);
	m->c = NULL;
}

static void mtraced_free(struct mtc_source *s)
{
	struct src_mtraced *m = (struct src_mtraced *)s;

	mtraced_close(s);
	free(m->path);
	free(m->software);
	free(m);
}

static const struct mtc_source_ops mtraced_ops = {
	.kind = "mtraced",
	.stored = false,
	.open = mtraced_open,
	.next = mtraced_next,
	.fd = mtraced_fd,
	.resubscribe = mtraced_resubscribe,
	.hello = mtraced_hello,
	.close = mtraced_close,
	.free = mtraced_free,
};

struct mtc_source *mtc_source_mtraced(const char *path, const char *software)
{
	struct src_mtraced *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->src.ops = &mtraced_ops;
	if ((path && !(m->path = strdup(path))) ||
	    (software && !(m->software = strdup(software)))) {
		mtraced_free(&m->src);
		errno = ENOMEM;
		return NULL;
	}
	return &m->src;
}

struct mtc *mtc_source_conn(const struct mtc_source *s)
{
	return s && s->ops == &mtraced_ops ? ((const struct src_mtraced *)s)->c : NULL;
}

int mtc_source_bad_json(const struct mtc_source *s, struct evbuffer *b)
{
	if (!s || !s->ops->bad_json)
		return -1;
	s->ops->bad_json(s, b);
	return 0;
}

int mtc_source_skew_json(const struct mtc_source *s, struct evbuffer *b)
{
	if (!s || !s->ops->skew_json)
		return -1;
	s->ops->skew_json(s, b);
	return 0;
}

/* ---- a recording ---- */

struct src_recording {
	struct mtc_source src;
	char *path;
	FILE *f; /* stdin for "-" */
	struct recording *r;
	bool ended;
};

static int recording_src_open(
    struct mtc_source *s, const Mtrace__Subscribe *sub, char *err, size_t errlen)
{
	struct src_recording *rs = (struct src_recording *)s;
	bool std = !strcmp(rs->path, "-");

	(void)sub;
	if (rs->r)
		return 0;
	if (!(rs->f = std ? stdin : fopen(rs->path, "rb"))) {
		snprintf(err, errlen, "cannot open %s: %s", rs->path, strerror(errno));
		return -1;
	}
	if (!(rs->r = recording_open(rs->f, std ? "stdin" : rs->path, err, errlen))) {
		if (!std)
			fclose(rs->f);
		rs->f = NULL;
		return -1;
	}
	return 0;
}

static int recording_src_next(
    struct mtc_source *s, int timeout_ms, struct mtc_rec *r, char *err, size_t errlen)
{
	struct src_recording *rs = (struct src_recording *)s;
	int rc;

	(void)timeout_ms; /* a file never waits */
	r->host = "";
	r->stored_ms = 0;
	r->skew = NULL;
	if (rs->ended || !rs->r) {
		snprintf(err, errlen, "the end of the recording");
		return MTC_NEXT_END;
	}
	rc = recording_next(rs->r, &r->msg, &r->raw, &r->raw_len, err, errlen);
	if (rc > 0)
		return MTC_NEXT_REC;
	if (rc < 0) {
		errno = EPROTO;
		return MTC_NEXT_FAIL;
	}
	rs->ended = true;
	snprintf(err, errlen, "the end of the recording");
	return MTC_NEXT_END;
}

static int recording_src_fd(const struct mtc_source *s)
{
	(void)s;
	return -1;
}

static void recording_src_close(struct mtc_source *s)
{
	struct src_recording *rs = (struct src_recording *)s;

	recording_close(rs->r);
	rs->r = NULL;
	if (rs->f && rs->f != stdin)
		fclose(rs->f);
	rs->f = NULL;
	/* read once: a recording opened again would give its records twice */
	rs->ended = true;
}

static void recording_src_free(struct mtc_source *s)
{
	struct src_recording *rs = (struct src_recording *)s;

	recording_src_close(s);
	free(rs->path);
	free(rs);
}

static const struct mtc_source_ops recording_ops = {
	.kind = "recording",
	.stored = true,
	.open = recording_src_open,
	.next = recording_src_next,
	.fd = recording_src_fd,
	.close = recording_src_close,
	.free = recording_src_free,
};

struct mtc_source *mtc_source_recording(const char *path)
{
	struct src_recording *rs = calloc(1, sizeof(*rs));

	if (!rs || !(rs->path = strdup(path))) {
		free(rs);
		errno = ENOMEM;
		return NULL;
	}
	rs->src.ops = &recording_ops;
	return &rs->src;
}

/* ---- the command line ---- */

int mtc_source_spec_check(const struct mtc_source_spec *spec, char *err, size_t errlen)
{
	int n = !!spec->socket + !!spec->input + !!spec->nats;

	if (n > 1) {
		snprintf(err, errlen, "--socket, -i and --nats are sources of their own: give one");
		return -1;
	}
	if (!spec->nats &&
	    (spec->n_hosts || spec->since_ns || spec->from_start || spec->follow || spec->creds)) {
		snprintf(err, errlen,
		    "--host, --since, --from-start, --follow and --creds go with --nats");
		return -1;
	}
	return 0;
}
