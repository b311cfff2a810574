/*
 * runner.c - runs the unit-test table (unit.h).
 *
 *   unit-tests MODULE...        every row of these modules (one meson test a module)
 *   unit-tests --all            every row
 *   unit-tests --modules M...   fails unless M... are exactly the table's modules, so
 *                               that a module left out of meson.build is noticed
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "unit.h"

static const struct unit_test *const modules[] = {
	unit_frame,
	unit_utf8,
	unit_config,
	unit_strtab,
	unit_announce,
	unit_stream,
	unit_sitetree,
	unit_shmring,
	unit_subject,
	unit_clockmap,
	unit_timeline,
	unit_xentime,
	unit_clocksync,
	unit_vcpu,
	unit_copy,
	unit_fleetskew,
};

#define NMODULES (sizeof(modules) / sizeof(modules[0]))

static int run_module(const struct unit_test *t)
{
	int n = 0;

	for (; t->name != NULL; t++, n++) {
		int before = check_failures;

		t->run();
		printf("%s %s/%s\n", check_failures == before ? "ok" : "FAIL", t->module, t->name);
	}
	return n;
}

static const struct unit_test *find(const char *module)
{
	for (size_t i = 0; i < NMODULES; i++)
		if (strcmp(modules[i][0].module, module) == 0)
			return modules[i];
	return NULL;
}

static int check_modules(int argc, char **argv)
{
	int bad = 0;

	for (size_t i = 0; i < NMODULES; i++) {
		bool listed = false;

		for (int k = 0; k < argc; k++)
			listed = listed || strcmp(argv[k], modules[i][0].module) == 0;
		if (!listed) {
			fprintf(stderr, "module %s is in the table but not a meson test\n",
			    modules[i][0].module);
			bad = 1;
		}
	}
	for (int k = 0; k < argc; k++) {
		if (find(argv[k]) == NULL) {
			fprintf(
			    stderr, "module %s is a meson test but not in the table\n", argv[k]);
			bad = 1;
		}
	}
	if (!bad)
		printf("%zu modules, all registered\n", NMODULES);
	return bad;
}

int main(int argc, char **argv)
{
	int rows = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: unit-tests MODULE... | --all | --modules MODULE...\n");
		return 2;
	}
	if (strcmp(argv[1], "--modules") == 0)
		return check_modules(argc - 2, argv + 2);
	if (strcmp(argv[1], "--all") == 0) {
		for (size_t i = 0; i < NMODULES; i++)
			rows += run_module(modules[i]);
	} else {
		for (int k = 1; k < argc; k++) {
			const struct unit_test *t = find(argv[k]);

			if (t == NULL) {
				fprintf(stderr, "no module %s\n", argv[k]);
				return 2;
			}
			rows += run_module(t);
		}
	}
	if (rows == 0) {
		fprintf(stderr, "no test ran\n");
		return 1;
	}
	return check_status("unit");
}
