/*
 * log.h - mtraced's log: one line per message on stderr, which systemd hands to the
 * journal.  The "<N>" prefix is sd-daemon(3)'s priority marker so the journal keeps
 * levels without linking anything.
 */
#ifndef MTRACED_LOG_H
#define MTRACED_LOG_H

#include <stdarg.h>

enum log_level { LOG_LVL_ERR = 0, LOG_LVL_WARN = 1, LOG_LVL_INFO = 2, LOG_LVL_DEBUG = 3 };

void log_set_level(unsigned level);
unsigned log_get_level(void);
/* Prefix with the "<N>" priority when stderr is the journal, not a terminal. */
void log_set_journal(int on);
/* with_errno: append ": strerror(errno)", as OpenBSD's log_warn does. */
void log_msg(unsigned level, int with_errno, const char *func, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* log_warn says why a call failed (errno, read at the call); log_warnx is for the
 * rest (a refused guest, a client's fault, an errno already in the text). */
#define log_err(...)	log_msg(LOG_LVL_ERR, 0, __func__, __VA_ARGS__)
#define log_warn(...)	log_msg(LOG_LVL_WARN, 1, __func__, __VA_ARGS__)
#define log_warnx(...)	log_msg(LOG_LVL_WARN, 0, __func__, __VA_ARGS__)
#define log_info(...)	log_msg(LOG_LVL_INFO, 0, __func__, __VA_ARGS__)
#define log_debug(...)	\
	do { if (log_get_level() >= LOG_LVL_DEBUG) log_msg(LOG_LVL_DEBUG, 0, __func__, __VA_ARGS__); } while (0)

#endif
