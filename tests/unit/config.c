/*
 * config.c - unit tests of daemon/config.c, mtraced's configuration parser: values,
 * ranges and suffixes of config_set, and "file:line: reason" from config_load_file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "unit.h"

static char err[512];

static int set(struct mtraced_config *c, const char *key, const char *val)
{
	err[0] = 0;
	return config_set(c, key, val, err, sizeof(err));
}

/* load TEXT as a file; returns config_load_file's result (err set) */
static int load(struct mtraced_config *c, const char *text)
{
	char path[] = "/tmp/mtrace-unit-config.XXXXXX";
	int fd = mkstemp(path), rc;
	FILE *f;

	REQUIRE(fd >= 0, "mkstemp");
	f = fdopen(fd, "w");
	REQUIRE(f != NULL, "fdopen");
	fputs(text, f);
	fclose(f);
	err[0] = 0;
	rc = config_load_file(c, path, err, sizeof(err));
	/* the reason names the file: keep only what follows its name */
	if (rc < 0 && strncmp(err, path, strlen(path)) == 0)
		memmove(err, err + strlen(path), strlen(err + strlen(path)) + 1);
	unlink(path);
	return rc;
}

static void numbers(void)
{
	struct mtraced_config c;

	config_defaults(&c);
	CHECK(set(&c, "max_guests", "17") == 0 && c.max_guests == 17, "%s", err);
	CHECK(set(&c, "max_guests", "1") == 0 && c.max_guests == 1);
	CHECK(set(&c, "max_guests", "32768") == 0);
	CHECK(set(&c, "max_guests", "32769") < 0 && strstr(err, "expected a number in 1..32768"),
	    "%s", err);
	CHECK(set(&c, "max_guests", "0") < 0);
	CHECK(c.max_guests == 32768, "a refused value changed the setting: %u", c.max_guests);
	CHECK(set(&c, "max_guests", "") < 0);
	CHECK(set(&c, "max_guests", "-1") < 0);
	CHECK(set(&c, "max_guests", "+1") < 0);
	CHECK(set(&c, "max_guests", "1x") < 0);
	CHECK(set(&c, "max_guests", "lots") < 0 && strstr(err, "got \"lots\""), "%s", err);
	CHECK(set(&c, "max_guests", "99999999999999999999999") < 0);
	/* a size takes k, M, G; a count does not */
	CHECK(set(&c, "client_queue_bytes", "64k") == 0 && c.client_queue_bytes == 65536);
	CHECK(set(&c, "client_queue_bytes", "2M") == 0 && c.client_queue_bytes == 2u << 20);
	CHECK(set(&c, "client_queue_bytes", "4G") == 0 && c.client_queue_bytes == (size_t)4 << 30);
	CHECK(set(&c, "client_queue_bytes", "5G") < 0);
	CHECK(set(&c, "client_queue_bytes", "1k") < 0); /* below 4096 */
	CHECK(set(&c, "client_queue_bytes", "4T") < 0);
	CHECK(set(&c, "client_queue_bytes", "4kk") < 0);
	CHECK(set(&c, "max_guests", "4k") < 0);
}

static void words(void)
{
	struct mtraced_config c;

	config_defaults(&c);
	CHECK(set(&c, "drop_privileges", "no") == 0 && !c.drop_privileges);
	CHECK(set(&c, "drop_privileges", "YES") == 0 && c.drop_privileges);
	CHECK(set(&c, "drop_privileges", "off") == 0 && !c.drop_privileges);
	CHECK(set(&c, "drop_privileges", "1") == 0 && c.drop_privileges);
	CHECK(set(&c, "drop_privileges", "maybe") < 0 && strstr(err, "expected yes or no"), "%s",
	    err);
	CHECK(set(&c, "log_level", "debug") == 0 && c.log_level == 3);
	CHECK(set(&c, "log_level", "err") == 0 && c.log_level == 0);
	CHECK(set(&c, "log_level", "loud") < 0);
	CHECK(set(&c, "backend", "sim") == 0 && strcmp(c.backend, "sim") == 0);
	CHECK(set(&c, "backend", "kvm") < 0 && strstr(err, "expected auto, xen or sim"), "%s", err);
	CHECK(strcmp(c.backend, "sim") == 0);
	CHECK(
	    set(&c, "no_such_key", "1") < 0 && strcmp(err, "unknown setting \"no_such_key\"") == 0,
	    "%s", err);
}

static void strings(void)
{
	struct mtraced_config c;
	char longer[sizeof(c.socket_path) + 1];

	config_defaults(&c);
	CHECK(set(&c, "socket_path", "/run/x.sock") == 0 &&
	    strcmp(c.socket_path, "/run/x.sock") == 0);
	memset(longer, 'a', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = 0;
	CHECK(set(&c, "socket_path", longer) < 0 && strstr(err, "value longer than"), "%s", err);
	CHECK(strcmp(c.socket_path, "/run/x.sock") == 0, "a refused value changed the setting");
	longer[sizeof(c.socket_path) - 1] = 0; /* exactly what fits */
	CHECK(set(&c, "socket_path", longer) == 0);
}

static void file(void)
{
	struct mtraced_config c;

	config_defaults(&c);
	CHECK(load(&c,
	          "# a comment\n\n  max_guests = 12  # trailing\n"
	          "socket_group = \"tracers\"\ndrain_budget=100\n") == 0,
	    "%s", err);
	CHECK(c.max_guests == 12 && c.drain_budget == 100);
	CHECK(strcmp(c.socket_group, "tracers") == 0, "quotes kept: %s", c.socket_group);
	CHECK(load(&c, "drain_budget = 100\nmax_guests = lots\n") < 0);
	CHECK(strncmp(err, ":2: max_guests: expected a number", 33) == 0, "%s", err);
	CHECK(load(&c, "max_guests\n") < 0 && strcmp(err, ":1: expected \"key = value\"") == 0,
	    "%s", err);
	CHECK(load(&c, "\n\nbogus = 1\n") < 0 && strcmp(err, ":3: unknown setting \"bogus\"") == 0,
	    "%s", err);
	/* a line past the parser's buffer is refused, not split into two */
	{
		char text[1500];

		memset(text, ' ', sizeof(text));
		memcpy(text, "max_guests = 1", 14);
		text[sizeof(text) - 2] = '\n';
		text[sizeof(text) - 1] = 0;
		CHECK(load(&c, text) < 0 && strcmp(err, ":1: line too long") == 0, "%s", err);
	}
	CHECK(config_load_file(&c, "/nonexistent/mtraced.conf", err, sizeof(err)) < 0 &&
	        strstr(err, "/nonexistent/mtraced.conf: No such file"),
	    "%s", err);
}

const struct unit_test unit_config[] = {
	{ "config", "numbers", numbers },
	{ "config", "words", words },
	{ "config", "strings", strings },
	{ "config", "file", file },
	{ "config", NULL, NULL },
};
