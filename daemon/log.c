/* log.c - levelled messages to stderr (see log.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "log.h"

static unsigned cur_level = LOG_LVL_INFO;
static int journal;

void log_set_level(unsigned level)
{
	cur_level = level > LOG_LVL_DEBUG ? LOG_LVL_DEBUG : level;
}

unsigned log_get_level(void)
{
	return cur_level;
}

void log_set_journal(int on)
{
	journal = on;
}

void log_msg(unsigned level, int with_errno, const char *func, const char *fmt, ...)
{
	int saved = errno;
	/* syslog priorities: err 3, warning 4, info 6, debug 7 */
	static const int prio[] = { 3, 4, 6, 7 };
	static const char *const name[] = { "error", "warning", "info", "debug" };
	char line[1024];
	va_list ap;
	int n;

	if (level > cur_level)
		return;
	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (with_errno && (size_t)n < sizeof(line))
		snprintf(line + n, sizeof(line) - (size_t)n, ": %s", strerror(saved));
	/* One fprintf per line: stderr is unbuffered, so this keeps lines whole. */
	if (journal)
		fprintf(stderr, "<%d>%s: %s\n", prio[level], func, line);
	else
		fprintf(stderr, "mtraced: %s: %s: %s\n", name[level], func, line);
}
