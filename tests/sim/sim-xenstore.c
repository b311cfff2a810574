/*
 * sim-xenstore.c - sim-test's xenstore case: paths, permissions, quotas, watches and
 * transactions, as a guest and as dom0.
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

static int next_watch(struct xenif *x, struct xenif_xs_watch_event *ev, int ms)
{
	if (x->ops->xs_read_watch(x, ev) == 0)
		return 0;
	if (!readable(x->ops->xs_fileno(x), ms))
		return -1;
	return x->ops->xs_read_watch(x, ev);
}

static bool expect_watch(struct xenif *x, const char *path, const char *token)
{
	struct xenif_xs_watch_event ev;
	if (next_watch(x, &ev, 2000) < 0) {
		fprintf(stderr, "  no watch event (want %s %s)\n", path, token);
		return false;
	}
	if (strcmp(ev.path, path) || strcmp(ev.token, token)) {
		fprintf(
		    stderr, "  watch event %s %s (want %s %s)\n", ev.path, ev.token, path, token);
		return false;
	}
	return true;
}

static bool no_watch(struct xenif *x, int ms)
{
	struct xenif_xs_watch_event ev;
	if (next_watch(x, &ev, ms) == 0) {
		fprintf(stderr, "  unexpected watch event %s %s\n", ev.path, ev.token);
		return false;
	}
	return true;
}

int case_xenstore(void)
{
	struct xenif *x = open_x(XENIF_XS), *y = open_x(XENIF_XS);
	size_t len;

	/* Basics. */
	CHECK(x->ops->xs_write(x, 0, "/t/a/b", "hello", 5) == 0, "write");
	char *v = x->ops->xs_read(x, 0, "/t/a/b", &len);
	CHECK(v && len == 5 && !strcmp(v, "hello"), "read back");
	free(v);
	v = x->ops->xs_read(x, 0, "/t/a", &len);
	CHECK(v && len == 0, "intermediate node exists, empty");
	free(v);
	CHECK(x->ops->xs_write(x, 0, "/t/a/c", "\0bin", 4) == 0, "binary value");
	v = x->ops->xs_read(x, 0, "/t/a/c", &len);
	CHECK(v && len == 4 && !memcmp(v, "\0bin", 4), "binary read back");
	free(v);
	unsigned n;
	char **d = x->ops->xs_directory(x, 0, "/t/a", &n);
	CHECK(d && n == 2 &&
	        ((!strcmp(d[0], "b") && !strcmp(d[1], "c")) ||
	            (!strcmp(d[0], "c") && !strcmp(d[1], "b"))),
	    "directory");
	free(d);
	errno = 0;
	CHECK(!x->ops->xs_read(x, 0, "/t/none", NULL) && errno == ENOENT, "ENOENT");
	CHECK(x->ops->xs_rm(x, 0, "/t/a/none") == 0, "rm of a missing child of an existing node");
	errno = 0;
	CHECK(x->ops->xs_rm(x, 0, "/t/none/x") < 0 && errno == ENOENT, "rm under a missing node");
	errno = 0;
	CHECK(x->ops->xs_rm(x, 0, "/") < 0 && errno == EINVAL, "rm /");
	errno = 0;
	CHECK(!x->ops->xs_read(x, 0, "@releaseDomain", NULL) && errno == EINVAL, "read @special");
	static char big[5000];
	memset(big, 'v', sizeof(big));
	errno = 0;
	CHECK(x->ops->xs_write(x, 0, "/t/big", big, 4097) < 0 && errno == E2BIG, "value > 4096");
	char longp[3200] = "/t/";
	memset(longp + 3, 'p', sizeof(longp) - 4);
	errno = 0;
	CHECK(x->ops->xs_write(x, 0, longp, "x", 1) < 0 && errno == EINVAL, "path > 3072");

	/* Transactions: isolation, commit, abort, conflict. */
	uint32_t t = x->ops->xs_transaction_start(x);
	REQUIRE(t, "transaction start");
	CHECK(x->ops->xs_write(x, t, "/t/tx/one", "1", 1) == 0, "tx write");
	errno = 0;
	CHECK(!y->ops->xs_read(y, 0, "/t/tx/one", NULL) && errno == ENOENT, "tx write invisible");
	v = x->ops->xs_read(x, t, "/t/tx/one", NULL);
	CHECK(v && !strcmp(v, "1"), "tx reads its own write");
	free(v);
	CHECK(x->ops->xs_transaction_end(x, t, false) == 0, "commit");
	v = y->ops->xs_read(y, 0, "/t/tx/one", NULL);
	CHECK(v && !strcmp(v, "1"), "committed write visible");
	free(v);
	t = x->ops->xs_transaction_start(x);
	x->ops->xs_write(x, t, "/t/tx/two", "2", 1);
	x->ops->xs_rm(x, t, "/t/tx/one");
	CHECK(x->ops->xs_transaction_end(x, t, true) == 0, "abort");
	errno = 0;
	CHECK(!y->ops->xs_read(y, 0, "/t/tx/two", NULL) && errno == ENOENT, "aborted write gone");
	v = y->ops->xs_read(y, 0, "/t/tx/one", NULL);
	CHECK(v != NULL, "aborted rm undone");
	free(v);
	/* Conflict: something the transaction read changed under it. */
	t = x->ops->xs_transaction_start(x);
	v = x->ops->xs_read(x, t, "/t/tx/one", NULL);
	free(v);
	CHECK(y->ops->xs_write(y, 0, "/t/tx/one", "changed", 7) == 0, "concurrent write");
	x->ops->xs_write(x, t, "/t/tx/three", "3", 1);
	errno = 0;
	CHECK(x->ops->xs_transaction_end(x, t, false) < 0 && errno == EAGAIN, "conflict: EAGAIN");
	errno = 0;
	CHECK(!y->ops->xs_read(y, 0, "/t/tx/three", NULL) && errno == ENOENT,
	    "conflicting transaction applied nothing");
	/* No conflict with an unrelated write. */
	t = x->ops->xs_transaction_start(x);
	v = x->ops->xs_read(x, t, "/t/tx/one", NULL);
	free(v);
	y->ops->xs_write(y, 0, "/t/elsewhere", "x", 1);
	x->ops->xs_write(x, t, "/t/tx/four", "4", 1);
	CHECK(x->ops->xs_transaction_end(x, t, false) == 0, "unrelated write: no conflict");
	/* Removed subtree then rewritten inside one transaction. */
	t = x->ops->xs_transaction_start(x);
	x->ops->xs_rm(x, t, "/t/tx");
	errno = 0;
	CHECK(!x->ops->xs_read(x, t, "/t/tx/one", NULL) && errno == ENOENT, "tx sees its rm");
	x->ops->xs_write(x, t, "/t/tx/five", "5", 1);
	CHECK(x->ops->xs_transaction_end(x, t, false) == 0, "rm + write commit");
	d = y->ops->xs_directory(y, 0, "/t/tx", &n);
	CHECK(d && n == 1 && !strcmp(d[0], "five"), "subtree replaced");
	free(d);
	errno = 0;
	CHECK(x->ops->xs_transaction_end(x, 12345, false) < 0 && errno == ENOENT, "bad tx id");
	errno = 0;
	CHECK(!x->ops->xs_read(x, 12345, "/t", NULL) && errno == ENOENT, "op in a bad tx");

	/* Watches: fire at registration, for the path and below, on removal. */
	errno = 0;
	CHECK(x->ops->xs_read_watch(x, &(struct xenif_xs_watch_event){ 0 }) < 0 && errno == EAGAIN,
	    "no event: EAGAIN");
	CHECK(x->ops->xs_watch(x, "/w", "tok1") == 0, "watch");
	CHECK(expect_watch(x, "/w", "tok1"), "initial watch event");
	errno = 0;
	CHECK(x->ops->xs_watch(x, "/w", "tok1") < 0 && errno == EEXIST, "duplicate watch");
	CHECK(x->ops->xs_watch(x, "/w/deep/node", "tok2") == 0, "watch deep");
	CHECK(expect_watch(x, "/w/deep/node", "tok2"), "initial deep event");
	y->ops->xs_write(y, 0, "/w/x", "1", 1);
	CHECK(expect_watch(x, "/w/x", "tok1"), "child write fires");
	y->ops->xs_write(y, 0, "/wx", "1", 1);
	y->ops->xs_write(y, 0, "/other", "1", 1);
	CHECK(no_watch(x, 200), "sibling with common prefix does not fire");
	y->ops->xs_rm(y, 0, "/w");
	struct xenif_xs_watch_event e1, e2;
	bool ok = next_watch(x, &e1, 2000) == 0 && next_watch(x, &e2, 2000) == 0;
	CHECK(ok &&
	        ((!strcmp(e1.path, "/w") && !strcmp(e2.path, "/w/deep/node")) ||
	            (!strcmp(e2.path, "/w") && !strcmp(e1.path, "/w/deep/node"))),
	    "rm fires the watch and the watch below");
	CHECK(x->ops->xs_unwatch(x, "/w", "tok1") == 0, "unwatch");
	errno = 0;
	CHECK(x->ops->xs_unwatch(x, "/w", "tok1") < 0 && errno == ENOENT, "unwatch twice");
	y->ops->xs_write(y, 0, "/w/y", "1", 1);
	CHECK(no_watch(x, 200), "no events after unwatch");
	/* Transactions fire on commit only. */
	CHECK(x->ops->xs_watch(x, "/c", "tc") == 0 && expect_watch(x, "/c", "tc"), "watch /c");
	t = y->ops->xs_transaction_start(y);
	y->ops->xs_write(y, t, "/c/1", "1", 1);
	CHECK(no_watch(x, 200), "uncommitted write does not fire");
	y->ops->xs_transaction_end(y, t, false);
	CHECK(expect_watch(x, "/c/1", "tc"), "commit fires");

	/* Domains come and go. */
	CHECK(x->ops->xs_watch(x, "@introduceDomain", "intro") == 0, "watch @introduceDomain");
	CHECK(expect_watch(x, "@introduceDomain", "intro"), "initial @introduceDomain");
	CHECK(x->ops->xs_watch(x, "@releaseDomain", "rel") == 0, "watch @releaseDomain");
	CHECK(expect_watch(x, "@releaseDomain", "rel"), "initial @releaseDomain");
	CHECK(x->ops->xs_watch(x, "/local/domain", "ld") == 0 &&
	        expect_watch(x, "/local/domain", "ld"),
	    "watch /local/domain");
	unsigned g = create_guest("xsperm", "", "xsperm");
	/* Events: @introduceDomain and the toolstack's writes, in some order. */
	bool intro = false;
	struct xenif_xs_watch_event ev;
	for (int i = 0; i < 20 && !intro && next_watch(x, &ev, 2000) == 0; i++)
		intro = !strcmp(ev.token, "intro");
	CHECK(intro, "@introduceDomain fired on create");
	v = wait_xs(x, NULL, 10000, "/local/domain/%u/data/result", g);
	CHECK(v && !strcmp(v, "ok"), "guest xenstore permissions: %s", v ? v : "(no result)");
	free(v);
	v = x->ops->xs_read(x, 0, "/local/domain/0/evil", NULL);
	CHECK(!v, "guest's forbidden write did not land");
	free(v);
	while (next_watch(x, &ev, 100) == 0)
		;
	CHECK(cli(NULL, 0, "destroy %u", g) == 0, "destroy");
	bool rel = false, gone = false;
	char home[64];
	snprintf(home, sizeof(home), "/local/domain/%u", g);
	for (int i = 0; i < 200 && (!rel || !gone) && next_watch(x, &ev, 2000) == 0; i++) {
		rel |= !strcmp(ev.token, "rel");
		gone |= !strcmp(ev.token, "ld") && !strcmp(ev.path, home);
	}
	CHECK(rel, "@releaseDomain fired on destroy");
	CHECK(gone, "/local/domain/%u removal fired", g);
	errno = 0;
	CHECK(!x->ops->xs_read(x, 0, home, NULL) && errno == ENOENT, "home removed");

	xenif_close(x);
	xenif_close(y);
	return check_failures != 0;
}
