/*
 * service.h - what mtraced does as a system service: sd_notify(3) READY/STATUS/
 * STOPPING/RELOADING, and giving up privileges once start-up has opened everything.
 */
#ifndef MTRACED_SERVICE_H
#define MTRACED_SERVICE_H

struct event_base;
struct mtraced_config;
struct stream;

/* Start the periodic STATUS line (the guests, and stream's clients). */
int service_init(
    struct event_base *base, const struct mtraced_config *cfg, const struct stream *stream);
void service_reconfigure(const struct mtraced_config *cfg);
void service_ready(void);
void service_reloading(void);
void service_stopping(void);
/* Nice -boost, unless already there; before the privileges go. */
int service_boost_priority(unsigned boost);
/* No new privileges; as root, drop every capability (all devices and sockets are open). */
int service_drop_privileges(void);
void service_fini(void);

#endif
