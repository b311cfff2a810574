/*
 * unit.h - the table of unit tests of pure modules (no process, socket or Xen): one
 * runner (runner.c), each module's tests in its own file, each exporting its rows.
 * A row is { module, name, function }; the function CHECKs (check.h).
 */
#ifndef MTRACE_TEST_UNIT_H
#define MTRACE_TEST_UNIT_H

#include "check.h"

struct unit_test {
	const char *module;
	const char *name;
	void (*run)(void);
};

/* Each module's rows, ended by a row whose name is NULL. */
extern const struct unit_test unit_frame[];
extern const struct unit_test unit_utf8[];
extern const struct unit_test unit_config[];
extern const struct unit_test unit_strtab[];
extern const struct unit_test unit_announce[];
extern const struct unit_test unit_stream[];
extern const struct unit_test unit_sitetree[];
extern const struct unit_test unit_shmring[];
extern const struct unit_test unit_subject[];
extern const struct unit_test unit_clockmap[];
extern const struct unit_test unit_timeline[];
extern const struct unit_test unit_xentime[];
extern const struct unit_test unit_clocksync[];
extern const struct unit_test unit_vcpu[];
extern const struct unit_test unit_copy[];
extern const struct unit_test unit_fleetskew[];

#endif
