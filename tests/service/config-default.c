/*
 * config-default.c - does a config file leave mtraced's settings at their built-in
 * defaults?  The sample config (systemd/mtraced.conf) documents every default as a
 * commented-out "#key = value" line; sample-config.py feeds each such line, made live,
 * through the daemon's own parser (daemon/config.c) and this checks that nothing
 * changed, so the documentation cannot drift from the code.
 *
 * usage: config-default FILE   (exit 0: defaults kept, 1: changed, 2: parse error)
 */
#include <stdio.h>
#include <string.h>

#include "config.h"

int main(int argc, char **argv)
{
	struct mtraced_config def, got;
	char err[512];

	if (argc != 2) {
		fprintf(stderr, "usage: config-default FILE\n");
		return 2;
	}
	config_defaults(&def);
	config_defaults(&got);
	if (config_load_file(&got, argv[1], err, sizeof(err)) < 0) {
		fprintf(stderr, "config-default: %s\n", err);
		return 2;
	}
	/* Both start from config_defaults' memset, so padding compares equal too. */
	if (memcmp(&def, &got, sizeof(def)) != 0) {
		for (size_t i = 0; i < sizeof(def); i++)
			if (((unsigned char *)&def)[i] != ((unsigned char *)&got)[i]) {
				fprintf(stderr,
				    "config-default: %s changes the setting at byte %zu\n", argv[1],
				    i);
				break;
			}
		return 1;
	}
	return 0;
}
