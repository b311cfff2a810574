/*
 * batch.c - mtrace-top without a terminal (top -b, xentop -b): every statistics update
 * prints the same lines the screen shows, as plain text, then a blank line.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "mtrace-client.h"
#include "top.h"

#define BATCH_MIN_WAIT_MS	10000	/* a stalled daemon is reported, not waited on forever */

static bool batch_line(struct top_sink *s, enum top_attr a, const char *text)
{
	(void)s;
	(void)a;
	return fputs(text, stdout) >= 0 && putchar('\n') != EOF;
}

int batch_run(struct mtc *c, struct top_opts *o, long iterations)
{
	struct top_model m = { 0 };
	struct top_sink sink = { batch_line, 0 };
	char err[256];
	long done = 0;
	int wait_ms = (int)o->delay_ms * 5;
	if (wait_ms < BATCH_MIN_WAIT_MS)
		wait_ms = BATCH_MIN_WAIT_MS;
	const Mtrace__Hello *h = mtc_server_hello(c);
	if (h)
		snprintf(m.host, sizeof(m.host), "%s", h->host ? h->host : "");
	if (session_subscribe(c, o) < 0) {
		fprintf(stderr, "mtrace-top: subscribe: %s\n", strerror(errno));
		return 1;
	}
	while (iterations < 0 || done < iterations) {
		Mtrace__ServerMsg *msg;
		err[0] = '\0';
		int rc = mtc_next(c, wait_ms, &msg, NULL, NULL, err, sizeof(err));
		if (rc == 0) {
			fprintf(stderr, "mtrace-top: no statistics from mtraced for %d s\n",
				wait_ms / 1000);
			session_model_free(&m);
			return 1;
		}
		if (rc < 0) {
			fprintf(stderr, "mtrace-top: %s\n",
				err[0] ? err : "mtraced closed the connection");
			session_model_free(&m);
			return 1;
		}
		rc = session_apply(&m, msg, err, sizeof(err));
		if (rc < 0) {
			fprintf(stderr, "mtrace-top: %s\n", err);
			session_model_free(&m);
			return 1;
		}
		if (rc == 0)
			continue;
		view_render(o, &m, &sink);
		putchar('\n');
		/* Flush per update: a script reading a pipe sees each one as it happens. */
		if (fflush(stdout) == EOF) {
			/* The reader went away (EPIPE); that is the end of the job, not an error. */
			session_model_free(&m);
			return errno == EPIPE ? 0 : 1;
		}
		done++;
	}
	session_model_free(&m);
	return 0;
}
