/*
 * screen.c - mtrace-top on a terminal: ncurses for drawing, one libevent loop for the
 * daemon socket, the keyboard and signals (SIGWINCH redraws at the new size).
 */
#include <ctype.h>
#include <errno.h>
#include <event2/event.h>
#include <locale.h>
#include <ncurses.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "mtrace-client.h"
#include "session.h"
#include "top.h"

#define CTRL_L 12

struct screen {
	struct mtc_session *s;
	struct top_opts *o;
	struct top_model m;
	struct event_base *base;
	bool help;
	long iterations; /* quit after this many updates; < 0 never */
	int status;      /* exit code */
	char msg[256];   /* bottom line: last error or hint */
	char fatal[256]; /* why we stopped, printed after endwin */
	bool reconnected;
	bool redraw;
	/* a Stats came in this loop turn */ /* a link came up that was not the first */
	char waiting[300];                   /* why we are waiting for mtraced ("" = connected) */
	long cursor;                         /* the selected row of the site tree */
	long last_row;                       /* the last table row that fit on the screen */
	bool cursor_site;                    /* what the cursor is on, as view_render said */
	bool follow;                         /* keep the cursor on that site as the tree changes */
	struct top_site_ref cursor_ref;
};

static void draw(struct screen *sc);

struct curses_sink {
	struct top_sink s;
	int y;
	long last_row;
};

static bool curses_line(struct top_sink *s, enum top_attr a, const char *text)
{
	struct curses_sink *cs = (struct curses_sink *)s;
	/* The last screen line is the status line. */
	if (cs->y >= LINES - 1)
		return false;
	int attr = a == ATTR_TITLE ? A_REVERSE
	    : a == ATTR_SELECTED   ? A_REVERSE | A_BOLD
	    : a == ATTR_BOLD       ? A_BOLD
	    : a == ATTR_DIM        ? A_DIM
	                           : 0;
	if (s->row >= 0)
		cs->last_row = s->row;
	attron(attr);
	mvaddnstr(cs->y, 0, text, COLS);
	if (a == ATTR_TITLE || a == ATTR_SELECTED) {
		/* A title bar spans the screen, as top's does. */
		int len = (int)strlen(text);
		for (int x = len; x < COLS; x++)
			mvaddch(cs->y, x, ' ');
	}
	attroff(attr);
	cs->y++;
	return true;
}

static void draw_help(struct screen *sc)
{
	const struct top_table *tab = fields_table(sc->o->view);
	static const char *const keys[] = {
		"q          quit",
		"h ?        this help (any key returns)",
		"< > F6     sort by the column left / right of the current one",
		"r          reverse the sort order",
		"t          tree view: children under parents, becomes chains folded",
		"g          group by label: count, live, new/s, lifetime p50/p99",
		"x          group by creation site (automatic labels, shown @site)",
		"c          creation tree by site: which site's threads create which (MADE)",
		"up down    site tree: select a site",
		"- +        site tree: fold / unfold the selected site's children",
		"1-9 0 *    site tree: that many levels below the roots / every level",
		"f          include resolved and failed threads",
		"/          filter by label or domain name (empty: none)",
		"d          show one domain (id or name; empty: all)",
		"s          refresh interval in seconds",
		"space p    pause / resume the display",
		"^L         redraw",
	};
	erase();
	attron(A_BOLD);
	mvprintw(0, 0, "mtrace-top %s - keys", MTRACE_VERSION);
	attroff(A_BOLD);
	int y = 2;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]) && y < LINES - 1; i++)
		mvaddnstr(y++, 2, keys[i], COLS - 2);
	y++;
	if (y < LINES - 1)
		mvprintw(y++, 2, "Sort letters (%s view; again to reverse):",
		    sc->o->view == VIEW_TREE ? "tree" : tab->name);
	for (unsigned i = 0; i < tab->n && y < LINES - 1; i++)
		mvprintw(y++, 4, "%c  %s", tab->f[i].key, tab->f[i].title);
	refresh();
}

static void draw(struct screen *sc)
{
	if (sc->help) {
		draw_help(sc);
		return;
	}
	bool tree = sc->o->view == VIEW_SITE_TREE;
	struct curses_sink cs = {
		.s = { .line = curses_line,
		    .width = COLS,
		    .cursor = tree ? sc->cursor : -1,
		    .follow = tree && sc->follow && sc->cursor_site,
		    .cursor_ref = sc->cursor_ref,
		    .row = -1 },
		.last_row = -1,
	};
	erase();
	view_render(sc->o, &sc->m, &cs.s);
	sc->last_row = cs.last_row;
	if (tree && cs.s.cursor >= 0)
		sc->cursor = cs.s.cursor;
	sc->cursor_site = cs.s.cursor_site;
	sc->cursor_ref = cs.s.cursor_ref;
	sc->follow = true;
	if (tree && sc->m.stats && sc->cursor > sc->last_row && sc->last_row >= 0) {
		/* the cursor is off the screen (the tree grew above it, or shrank under it):
		 * on the last row shown, whatever site that is */
		sc->cursor = sc->last_row;
		sc->follow = false;
		draw(sc);
		return;
	}
	attron(A_REVERSE);
	if (sc->waiting[0]) {
		/* what is on the screen is the last snapshot: say so, and why */
		attron(A_BOLD);
		mvaddnstr(LINES - 1, 0, sc->waiting, COLS);
		attroff(A_BOLD | A_REVERSE);
		refresh();
		return;
	}
	mvaddnstr(LINES - 1, 0,
	    sc->msg[0]
	        ? sc->msg
	        : "q quit  h help  < > sort  r reverse  t tree  g labels  x sites  c site tree  "
	          "/ filter  d domain  s delay  space pause",
	    COLS);
	attroff(A_REVERSE);
	refresh();
}

static void stop(struct screen *sc, int status, const char *why)
{
	sc->status = status;
	if (why)
		snprintf(sc->fatal, sizeof(sc->fatal), "%s", why);
	event_base_loopbreak(sc->base);
}

static void subscription(Mtrace__Subscribe *sub, void *arg)
{
	struct screen *sc = arg;

	session_subscription(sub, sc->o);
}

static void on_up(struct mtc_session *s, const Mtrace__Hello *h, void *arg)
{
	struct screen *sc = arg;

	(void)s;
	if (h)
		snprintf(sc->m.host, sizeof(sc->m.host), "%s", h->host ? h->host : "");
	if (!sc->reconnected) {
		sc->reconnected = true;
		return;
	}
	sc->waiting[0] = '\0';
	snprintf(sc->msg, sizeof(sc->msg), "reconnected to %s", session_peer(sc->o));
	draw(sc);
}

/* mtraced went away (stopped, restarting, or full), or NATS did: keep the last
 * snapshot on the screen, say that we wait and why, and try again by the library's
 * policy (libnats by its own).  At the end of stored records the last update stays. */
static bool on_down(struct mtc_session *s, const struct mtc_down *d, void *arg)
{
	struct screen *sc = arg;

	if (d->kind == MTC_DOWN_CONNECT)
		return true; /* still waiting */
	if (d->kind == MTC_DOWN_END) {
		snprintf(sc->waiting, sizeof(sc->waiting), "%s - q quits", d->why);
		draw(sc);
		return false;
	}
	if (!d->recovers && (mtc_session_stored(s) || sc->o->no_reconnect || !d->transient)) {
		stop(sc, 1, d->why);
		return false;
	}
	snprintf(sc->waiting, sizeof(sc->waiting), "waiting for %s (%s) - q quits",
	    session_peer(sc->o),
	    d->kind == MTC_DOWN_LOST && !strcmp(d->why, "mtraced closed the connection")
	        ? "it closed the connection"
	        : d->why);
	draw(sc);
	return true;
}

static void resubscribe(struct screen *sc)
{
	if (mtc_session_resubscribe(sc->s) < 0) {
		snprintf(sc->fatal, sizeof(sc->fatal), "subscribe: %s", strerror(errno));
		stop(sc, 1, NULL);
	}
}

/* Read a line at the bottom of the screen.  Blocking is fine here: the daemon keeps
 * coalescing our statistics while the user types. */
static bool prompt(const char *question, char *buf, size_t n)
{
	move(LINES - 1, 0);
	clrtoeol();
	attron(A_BOLD);
	addnstr(question, COLS);
	attroff(A_BOLD);
	echo();
	curs_set(1);
	nodelay(stdscr, FALSE);
	int rc = getnstr(buf, (int)n - 1);
	nodelay(stdscr, TRUE);
	curs_set(0);
	noecho();
	return rc != ERR;
}

static void ask_filter(struct screen *sc)
{
	char buf[sizeof(sc->o->filter)] = "";
	if (prompt("filter (label or domain, empty: none): ", buf, sizeof(buf)))
		snprintf(sc->o->filter, sizeof(sc->o->filter), "%s", buf);
}

static void ask_domain(struct screen *sc)
{
	char buf[64] = "";
	if (!prompt("domain (id or name, empty: all): ", buf, sizeof(buf)))
		return;
	char *end;
	long v = strtol(buf, &end, 10);
	sc->o->domid = -1;
	sc->o->domname[0] = '\0';
	if (buf[0] && !*end && v >= 0)
		sc->o->domid = v;
	else if (buf[0])
		snprintf(sc->o->domname, sizeof(sc->o->domname), "%s", buf);
	resubscribe(sc);
}

static void ask_delay(struct screen *sc)
{
	char buf[32] = "";
	if (!prompt("refresh interval in seconds: ", buf, sizeof(buf)) || !buf[0])
		return;
	char *end;
	double d = strtod(buf, &end);
	if (*end || !(d >= 0.1) || d > 3600) {
		snprintf(sc->msg, sizeof(sc->msg), "interval must be 0.1 to 3600 seconds");
		return;
	}
	sc->o->delay_ms = (unsigned)(d * 1000 + 0.5);
	resubscribe(sc);
}

static void set_view(struct screen *sc, enum top_view v)
{
	sc->o->view = sc->o->view == v ? VIEW_THREADS : v;
	resubscribe(sc);
}

/* htop's - + * on the selected site; digits fold the whole tree by level. */
static void fold(struct screen *sc, int ch)
{
	struct top_opts *o = sc->o;
	/* keys come in bursts: the cursor may have moved since the screen was drawn, and
	 * the site it is on now is what drawing finds out */
	if (!sc->follow)
		draw(sc);
	if (ch == '*') {
		o->tree_depth = 0;
		o->n_folds = 0;
		snprintf(sc->msg, sizeof(sc->msg), "site tree: every level");
	} else if (ch >= '0' && ch <= '9') {
		o->tree_depth = (unsigned)(ch - '0');
		if (o->tree_depth)
			snprintf(sc->msg, sizeof(sc->msg), "site tree: %u level%s below the roots",
			    o->tree_depth, o->tree_depth == 1 ? "" : "s");
		else
			snprintf(sc->msg, sizeof(sc->msg), "site tree: every level");
	} else if (!sc->cursor_site)
		snprintf(sc->msg, sizeof(sc->msg), "no site selected (up, down)");
	else if (ch == '-' && !sitetree_fold(o, sc->cursor_ref, true))
		snprintf(sc->msg, sizeof(sc->msg), "%d sites folded already (* unfolds all)",
		    TOP_FOLDS_MAX);
	else if (ch == '+' && sitetree_folded(o, sc->cursor_ref.domid, sc->cursor_ref.index))
		sitetree_fold(o, sc->cursor_ref, false);
	else if (ch == '+' && o->tree_depth)
		o->tree_depth++; /* folded by level: one more level */
}

static void move_cursor(struct screen *sc, long by)
{
	long c = sc->cursor + by;
	sc->follow = false; /* the next draw takes the site of the new row */
	if (c > sc->last_row)
		c = sc->last_row;
	sc->cursor = c < 0 ? 0 : c;
}

static void sort_by(struct screen *sc, int field)
{
	int *sf = &sc->o->sort[sc->o->view];
	if (*sf == field)
		sc->o->reverse = !sc->o->reverse;
	else
		sc->o->reverse = false;
	*sf = field;
	resubscribe(sc);
}

static void on_key(struct screen *sc, int ch)
{
	const struct top_table *tab = fields_table(sc->o->view);
	int n = (int)tab->n;
	sc->msg[0] = '\0';
	if (sc->help) {
		/* Any key leaves the help screen; resizes just redraw it. */
		if (ch != KEY_RESIZE)
			sc->help = false;
		return;
	}
	switch (ch) {
	case 'q':
		stop(sc, 0, NULL);
		return;
	case 'h':
	case '?':
		sc->help = true;
		return;
	case '<':
		sort_by(sc, (sc->o->sort[sc->o->view] + n - 1) % n);
		return;
	case '>':
	case KEY_F(6):
		sort_by(sc, (sc->o->sort[sc->o->view] + 1) % n);
		return;
	case 'r':
		sc->o->reverse = !sc->o->reverse;
		resubscribe(sc);
		return;
	case 't':
		set_view(sc, VIEW_TREE);
		return;
	case 'g':
		set_view(sc, VIEW_LABELS);
		return;
	case 'x':
		set_view(sc, VIEW_SITES);
		return;
	case 'c':
		set_view(sc, VIEW_SITE_TREE);
		sc->cursor = 0;
		sc->follow = false;
		return;
	case KEY_UP:
	case KEY_DOWN:
		if (sc->o->view == VIEW_SITE_TREE)
			move_cursor(sc, ch == KEY_UP ? -1 : 1);
		else
			snprintf(
			    sc->msg, sizeof(sc->msg), "up and down select in the site tree (c)");
		return;
	case '-':
	case '+':
	case '*':
	case '0':
	case '1':
	case '2':
	case '3':
	case '4':
	case '5':
	case '6':
	case '7':
	case '8':
	case '9':
		if (sc->o->view != VIEW_SITE_TREE) {
			snprintf(
			    sc->msg, sizeof(sc->msg), "- + * and digits fold the site tree (c)");
			return;
		}
		fold(sc, ch);
		return;
	case 'f':
		sc->o->finished = !sc->o->finished;
		resubscribe(sc);
		return;
	case '/':
		ask_filter(sc);
		return;
	case 'd':
		ask_domain(sc);
		return;
	case 's':
		ask_delay(sc);
		return;
	case ' ':
	case 'p':
		sc->o->paused = !sc->o->paused;
		return;
	case CTRL_L:
		clearok(curscr, TRUE);
		return;
	case KEY_RESIZE:
		return;
	default:
		break;
	}
	if (ch > 0 && ch < 128 && isupper(ch)) {
		char k[2] = { (char)ch, 0 };
		int f = fields_find(tab, k);
		if (f >= 0)
			sort_by(sc, f);
		else
			snprintf(
			    sc->msg, sizeof(sc->msg), "no column sorts on '%c' here (h: help)", ch);
		return;
	}
	snprintf(sc->msg, sizeof(sc->msg), "unknown key (h: help)");
}

static void on_stdin(evutil_socket_t fd, short what, void *arg)
{
	struct screen *sc = arg;
	int ch;
	bool any = false;
	while ((ch = getch()) != ERR) {
		any = true;
		on_key(sc, ch);
		if (sc->fatal[0] || sc->status || event_base_got_break(sc->base))
			return;
	}
	if (any)
		draw(sc);
}

static unsigned on_msg(struct mtc_session *s, Mtrace__ServerMsg *msg, void *arg)
{
	struct screen *sc = arg;

	(void)s;
	/* Paused: keep the frozen snapshot, but still hear about domains.  Events are not
	 * for a statistics view. */
	if (msg->msg_case == MTRACE__SERVER_MSG__MSG_EVENTS ||
	    (sc->o->paused && msg->msg_case == MTRACE__SERVER_MSG__MSG_STATS))
		return 0;
	if (session_apply(&sc->m, msg) == 1) {
		sc->redraw = true;
		if (sc->iterations > 0 && (long)sc->m.updates >= sc->iterations) {
			draw(sc);
			stop(sc, 0, NULL);
			return MTC_MSG_KEPT | MTC_MSG_YIELD;
		}
	}
	return MTC_MSG_KEPT; /* session_apply keeps or frees it */
}

static void on_turn(struct mtc_session *s, unsigned n, void *arg)
{
	struct screen *sc = arg;

	(void)s;
	(void)n;
	if (sc->redraw && !event_base_got_break(sc->base))
		draw(sc);
	sc->redraw = false;
}

static void resize(struct screen *sc)
{
	struct winsize ws;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0)
		resizeterm(ws.ws_row, ws.ws_col);
	clearok(curscr, TRUE);
	draw(sc);
}

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
	struct screen *sc = arg;
	if (sig == SIGWINCH)
		resize(sc);
	else
		stop(sc, 0, NULL);
}

int screen_run(struct top_opts *o, long iterations)
{
	static const struct mtc_session_ops ops = {
		.software = "mtrace-top " MTRACE_VERSION,
		.subscription = subscription,
		.on_msg = on_msg,
		.on_turn = on_turn,
		.on_up = on_up,
		.on_down = on_down,
	};
	struct screen sc = { .o = o, .iterations = iterations };
	struct event *ev_in = NULL, *ev_w = NULL, *ev_i = NULL, *ev_t = NULL;
	char err[512] = "out of memory"; /* unless the source says why */

	sc.base = event_base_new();
	if (!sc.base) {
		fprintf(stderr, "mtrace-top: cannot create the event loop\n");
		return 1;
	}
	sc.s =
	    mtc_session_new_source(sc.base, mtc_source_new(&o->src, err, sizeof(err)), &ops, &sc);
	if (!sc.s) {
		fprintf(stderr, "mtrace-top: %s\n", err);
		sc.status = 1;
		goto out;
	}
	if (mtc_session_connect(sc.s, err, sizeof(err)) < 0) {
		fprintf(stderr, "mtrace-top: %s\n", err);
		sc.status = 1;
		goto out;
	}
	/* libevent owns SIGWINCH from here: curses learns the size in resize(). */
	ev_in = event_new(sc.base, STDIN_FILENO, EV_READ | EV_PERSIST, on_stdin, &sc);
	ev_w = evsignal_new(sc.base, SIGWINCH, on_signal, &sc);
	ev_i = evsignal_new(sc.base, SIGINT, on_signal, &sc);
	ev_t = evsignal_new(sc.base, SIGTERM, on_signal, &sc);
	if (!ev_in || !ev_w || !ev_i || !ev_t) {
		fprintf(stderr, "mtrace-top: cannot set up events\n");
		sc.status = 1;
		goto out;
	}
	/* Labels may be UTF-8; ncursesw draws them only under the user's locale. */
	setlocale(LC_ALL, "");
	if (!initscr()) {
		fprintf(stderr, "mtrace-top: cannot initialise the terminal\n");
		sc.status = 1;
		goto out;
	}
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	curs_set(0);
	event_add(ev_in, NULL);
	event_add(ev_w, NULL);
	event_add(ev_i, NULL);
	event_add(ev_t, NULL);
	draw(&sc);
	event_base_dispatch(sc.base);
	endwin();
	if (sc.fatal[0])
		fprintf(stderr, "mtrace-top: %s\n", sc.fatal);
out:
	if (ev_in)
		event_free(ev_in);
	mtc_session_free(sc.s);
	if (ev_w)
		event_free(ev_w);
	if (ev_i)
		event_free(ev_i);
	if (ev_t)
		event_free(ev_t);
	session_model_free(&sc.m);
	event_base_free(sc.base);
	return sc.status;
}
