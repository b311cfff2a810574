/*
 * sites.h - symbolisation of creation sites with elfutils (libdwfl/libdw).
 *
 * A guest module is named by its build-id; the ELF file with its debug info is looked
 * for only where the administrator said: under each debug directory of the
 * configuration (<dir>/.build-id/xx/rest.debug, as GDB and Debian lay them out), or
 * as the image configured for the guest's domain name.  Nothing a guest writes is
 * ever used as a path: a build-id is validated as hex before it forms one.
 * Modules are opened once and cached (negative results too, up to 256 entries, the
 * least recently used giving its slot past that); callers resolve each site once and
 * keep the answer.
 */
#ifndef MTRACED_SITES_H
#define MTRACED_SITES_H

#include <stddef.h>
#include <stdint.h>

struct mtraced_config;
struct sites_module;

/* One frame of a resolved site: innermost first, as `addr2line -f -i` prints them. */
#define SITES_FRAMES_MAX 8

struct sites_frame {
	char func[128];
	char file[192];
	unsigned line;
};

struct sites_sym {
	unsigned nframes; /* 0: not resolved (raw module+offset only) */
	struct sites_frame frames[SITES_FRAMES_MAX];
};

void sites_init(const struct mtraced_config *cfg);
void sites_fini(void);

/* The module for a build-id (id[0..n)), looked for under the debug directories, then
 * as domain_name's configured image when that image has this build-id.  NULL when
 * none is found (remembered: the next call for it costs a lookup in the cache).  The
 * module returned is the caller's to sites_module_put. */
struct sites_module *sites_module_find(const uint8_t *id, size_t n, const char *domain_name);
/* The configured image of domain_name, for guests that publish no module (a
 * unikernel: addresses are the image's own), or NULL; the caller's to put. */
struct sites_module *sites_module_image(const char *domain_name);
/* Gives back a module of sites_module_find or sites_module_image (NULL: nothing). */
void sites_module_put(struct sites_module *m);

/* Resolve the file address addr (the guest's address minus its module's load bias)
 * in m.  Returns 0 with out filled, or -1 when the module has no symbol or line for
 * it (out->nframes = 0). */
int sites_resolve(struct sites_module *m, uint64_t addr, struct sites_sym *out);

/* Counters, for tests: modules opened, cached lookups that found nothing, entries
 * that aged out of a full cache. */
unsigned sites_modules_open(void);
unsigned sites_modules_missing(void);
unsigned sites_modules_evicted(void);

#endif
