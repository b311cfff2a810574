/*
 * batch.c - mtrace-top without a terminal (top -b, xentop -b): every statistics update
 * prints the same lines the screen shows, as plain text, then a blank line.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "mtrace-client.h"
#include "session.h"
#include "top.h"

#define BATCH_MIN_WAIT_MS 10000 /* a stalled daemon is reported, not waited on forever */

static bool batch_line(struct top_sink *s, enum top_attr a, const char *text)
{
	(void)s;
	(void)a;
	return fputs(text, stdout) >= 0 && putchar('\n') != EOF;
}

/* Wait for mtraced to come back: one line on stderr when it goes, one when it is back. */
static struct mtc *batch_wait(struct top_opts *o, const char *why)
{
	struct mtc *c;

	fprintf(stderr, "mtrace-top: %s; waiting for mtraced\n", why);
	c = mtc_open_wait(o->sock, "mtrace-top " MTRACE_VERSION, session_subscribe, NULL, o);
	fprintf(stderr, "mtrace-top: reconnected to mtraced\n");
	return c;
}

int batch_run(struct top_opts *o, long iterations)
{
	char err[512];
	struct mtc *c =
	    mtc_open(o->sock, "mtrace-top " MTRACE_VERSION, session_subscribe, o, err, sizeof(err));
	struct top_model m = { 0 };
	struct top_sink sink = { .line = batch_line, .cursor = -1, .row = -1 };
	long done = 0;
	int status = 0;
	int wait_ms = (int)o->delay_ms * 5;
	if (wait_ms < BATCH_MIN_WAIT_MS)
		wait_ms = BATCH_MIN_WAIT_MS;
	if (!c) {
		fprintf(stderr, "mtrace-top: %s\n", err);
		return 1;
	}
	const Mtrace__Hello *h = mtc_server_hello(c);
	if (h)
		snprintf(m.host, sizeof(m.host), "%s", h->host ? h->host : "");
	while (iterations < 0 || done < iterations) {
		Mtrace__ServerMsg *msg;
		err[0] = '\0';
		int rc = mtc_next(c, wait_ms, &msg, NULL, NULL, err, sizeof(err));
		if (rc == 0) {
			fprintf(stderr, "mtrace-top: no statistics from mtraced for %d s\n",
			    wait_ms / 1000);
			status = 1;
			break;
		}
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc > 0)
			rc = session_apply(&m, msg, err, sizeof(err));
		else
			rc = -2; /* the connection went: mtraced stopped or restarts */
		if (rc == -2 && !o->no_reconnect) {
			mtc_close(c);
			c = batch_wait(o, err[0] ? err : "mtraced closed the connection");
			continue;
		}
		if (rc < 0) {
			fprintf(stderr, "mtrace-top: %s\n",
			    err[0] ? err : "mtraced closed the connection");
			status = 1;
			break;
		}
		if (rc == 0)
			continue;
		view_render(o, &m, &sink);
		putchar('\n');
		/* Flush per update: a script reading a pipe sees each one as it happens. */
		if (fflush(stdout) == EOF) {
			/* The reader went away (EPIPE); that is the end of the job, not an error. */
			status = errno == EPIPE ? 0 : 1;
			break;
		}
		done++;
	}
	session_model_free(&m);
	mtc_close(c);
	return status;
}
