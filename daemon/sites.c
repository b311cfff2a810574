/*
 * sites.c - creation sites to function, file and line, through elfutils (sites.h).
 *
 * Each module is one Dwfl holding one ELF file reported at bias 0, so a file address
 * (guest address minus the module's load bias) is a Dwfl address.  The debug info
 * must be in that file: no .gnu_debuglink or debuginfod search, which would read
 * files the administrator did not name.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "sites.h"
#include "xalloc.h"

/*
 * Distinct build-ids and images remembered (found or not).  When full, the entry used
 * least recently gives its slot: a cache filled by one guest's made-up build-ids must
 * not stop site naming for every guest until a restart.
 */
#define CACHE_MAX 256

/*
 * Counted: the cache holds one reference and each caller of sites_module_find or
 * sites_module_image one more until sites_module_put, so an entry that ages out while
 * a caller uses its module frees it only at that caller's put.
 */
struct sites_module {
	unsigned refs;
	Dwfl *dwfl;
	Dwfl_Module *mod;
	uint8_t id[64];
	size_t idlen;
	Dwarf_Addr low, high; /* the file's addresses */
	/* without .debug_aranges: every unit's ranges, sorted, read once (ncu -1: not
	 * yet) so that a lookup never walks all the units again */
	struct cu_range *cus;
	long ncu;
};

struct cu_range {
	Dwarf_Addr low, high;
	Dwarf_Die die;
};

struct entry {
	char key[272];          /* hex build-id, or "image:" + the image path */
	struct sites_module *m; /* NULL: looked for, not found */
	uint64_t used;          /* the cache's clock at its last lookup */
};

/* The module cache of this daemon: one, set up by sites_init.  One per process, not a
 * context passed down: a module's debug information is the same whichever guest (or
 * guests context) runs it, so every one shares the cache on purpose, and its one
 * caller is the state (state-sites.c), itself the process's one (state_ctx). */
struct sites_ctx {
	const struct mtraced_config *cfg;
	struct entry *cache;
	unsigned ncache;
	uint64_t clock; /* +1 per lookup: the age of an entry */
	unsigned nopen, nmissing, nevicted;
};

static struct sites_ctx sc;

/* The debug info is in the file we reported, or nowhere. */
static int no_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
    const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
    char **debuginfo_file_name)
{
	(void)mod, (void)userdata, (void)modname, (void)base, (void)file_name;
	(void)debuglink_file, (void)debuglink_crc, (void)debuginfo_file_name;
	return -1;
}

static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = no_debuginfo,
};

static struct sites_module *module_open(const char *path)
{
	struct sites_module *m;
	const unsigned char *bits;
	GElf_Addr vaddr;
	int fd, n;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return NULL;
	m = xcalloc(1, sizeof(*m));
	m->refs = 1;
	m->ncu = -1;
	m->dwfl = dwfl_begin(&callbacks);
	if (!m->dwfl) {
		close(fd);
		free(m);
		return NULL;
	}
	dwfl_report_begin(m->dwfl);
	/* dwfl_report_elf owns fd from here, failing or not */
	m->mod = dwfl_report_elf(m->dwfl, "guest", path, fd, 0, false);
	if (!m->mod || dwfl_report_end(m->dwfl, NULL, NULL) != 0) {
		log_warnx("sites: %s: %s", path, dwfl_errmsg(-1));
		dwfl_end(m->dwfl);
		free(m);
		return NULL;
	}
	dwfl_module_info(m->mod, NULL, &m->low, &m->high, NULL, NULL, NULL, NULL);
	n = dwfl_module_build_id(m->mod, &bits, &vaddr);
	if (n > 0 && (size_t)n <= sizeof(m->id)) {
		memcpy(m->id, bits, (size_t)n);
		m->idlen = (size_t)n;
	}
	sc.nopen++;
	log_info("sites: reading debug info of %s", path);
	return m;
}

void sites_module_put(struct sites_module *m)
{
	if (!m || --m->refs)
		return;
	dwfl_end(m->dwfl);
	free(m->cus);
	free(m);
}

static struct sites_module *module_get(struct sites_module *m)
{
	if (m)
		m->refs++;
	return m;
}

static struct entry *cache_find(const char *key)
{
	for (unsigned i = 0; i < sc.ncache; i++)
		if (!strcmp(sc.cache[i].key, key)) {
			sc.cache[i].used = ++sc.clock;
			return &sc.cache[i];
		}
	return NULL;
}

/* The cache takes m's reference (m may be NULL: not found). */
static struct entry *cache_add(const char *key, struct sites_module *m)
{
	struct entry *e;

	if (!sc.cache)
		sc.cache = xcalloc(CACHE_MAX, sizeof(*sc.cache));
	if (sc.ncache < CACHE_MAX) {
		e = &sc.cache[sc.ncache++];
	} else {
		e = &sc.cache[0];
		for (unsigned i = 1; i < sc.ncache; i++)
			if (sc.cache[i].used < e->used)
				e = &sc.cache[i];
		if (!e->m)
			sc.nmissing--;
		sites_module_put(e->m);
		sc.nevicted++;
	}
	snprintf(e->key, sizeof(e->key), "%s", key);
	e->m = m;
	e->used = ++sc.clock;
	if (!m)
		sc.nmissing++;
	return e;
}

void sites_init(const struct mtraced_config *c)
{
	sc.cfg = c;
}

void sites_fini(void)
{
	for (unsigned i = 0; i < sc.ncache; i++)
		sites_module_put(sc.cache[i].m);
	free(sc.cache);
	sc.cache = NULL;
	sc.ncache = 0;
}

static const struct mtraced_image *image_of(const char *domain_name)
{
	if (!sc.cfg || !domain_name || !domain_name[0])
		return NULL;
	for (unsigned i = 0; i < sc.cfg->nimages; i++)
		if (!strcmp(sc.cfg->images[i].domain, domain_name))
			return &sc.cfg->images[i];
	return NULL;
}

struct sites_module *sites_module_image(const char *domain_name)
{
	const struct mtraced_image *im = image_of(domain_name);
	char key[272];
	struct entry *e;

	if (!im)
		return NULL;
	snprintf(key, sizeof(key), "image:%s", im->path);
	e = cache_find(key);
	if (!e)
		e = cache_add(key, module_open(im->path));
	return module_get(e->m);
}

/* Under each configured debug directory, <dir>/.build-id/<2 hex>/<rest>.debug. */
static struct sites_module *by_build_id(const char *hex)
{
	const char *p = sc.cfg ? sc.cfg->debug_dirs : "";

	while (*p) {
		size_t n = strcspn(p, ":");
		char path[1024];

		if (n > 0 && n < 512) {
			snprintf(path, sizeof(path), "%.*s/.build-id/%.2s/%s.debug", (int)n, p, hex,
			    hex + 2);
			struct sites_module *m = module_open(path);
			if (m)
				return m;
		}
		p += n;
		if (*p == ':')
			p++;
	}
	return NULL;
}

struct sites_module *sites_module_find(const uint8_t *id, size_t n, const char *domain_name)
{
	char hex[2 * 64 + 1];
	struct sites_module *m, *im;
	struct entry *e;

	/* 2 bytes at least: the path needs a directory and a file name */
	if (n < 2 || n > 64)
		return NULL;
	for (size_t i = 0; i < n; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	e = cache_find(hex);
	if (e && e->m)
		return module_get(e->m);
	if (!e) {
		m = by_build_id(hex);
		if (m && (m->idlen != n || memcmp(m->id, id, n))) {
			log_warnx(
			    "sites: the debug file for build-id %s has another build-id", hex);
			sites_module_put(m);
			m = NULL;
		}
		e = cache_add(hex, m);
		if (m)
			return module_get(m);
	}
	/* not in the debug directories: this domain's image, if it is that module (the
	 * build-id's entry stays negative: the image is another domain's business) */
	im = sites_module_image(domain_name);
	if (im && im->idlen == n && !memcmp(im->id, id, n))
		return im;
	sites_module_put(im);
	return NULL;
}

static void copy_str(char *dst, size_t size, const char *src)
{
	snprintf(dst, size, "%s", src ? src : "");
}

static unsigned attr_udata(Dwarf_Die *die, unsigned name)
{
	Dwarf_Attribute a;
	Dwarf_Word w;

	if (!dwarf_attr(die, name, &a) || dwarf_formudata(&a, &w) != 0)
		return 0;
	return (unsigned)w;
}

static const char *call_file(Dwarf_Die *cu, Dwarf_Die *die)
{
	Dwarf_Attribute a;
	Dwarf_Word idx;
	Dwarf_Files *files;
	size_t nfiles;

	if (!dwarf_attr(die, DW_AT_call_file, &a) || dwarf_formudata(&a, &idx) != 0)
		return NULL;
	if (dwarf_getsrcfiles(cu, &files, &nfiles) != 0 || idx >= nfiles)
		return NULL;
	return dwarf_filesrc(files, idx, NULL, NULL);
}

static int cu_range_cmp(const void *a, const void *b)
{
	const struct cu_range *x = a, *y = b;

	return x->low < y->low ? -1 : x->low > y->low;
}

/* Every unit's address ranges, once per module, sorted by address. */
static void cu_table(struct sites_module *m, Dwarf *dw)
{
	Dwarf_CU *unit = NULL;
	Dwarf_Die die;
	size_t cap = 0;

	m->ncu = 0;
	while (dwarf_get_units(dw, unit, &unit, NULL, NULL, &die, NULL) == 0) {
		Dwarf_Addr base, lo, hi;
		ptrdiff_t off = 0;

		while ((off = dwarf_ranges(&die, off, &base, &lo, &hi)) > 0) {
			if (lo >= hi)
				continue;
			if ((size_t)m->ncu == cap) {
				cap = cap ? cap * 2 : 256;
				m->cus = xreallocarray(m->cus, cap, sizeof(*m->cus));
			}
			m->cus[m->ncu++] = (struct cu_range){ lo, hi, die };
		}
	}
	qsort(m->cus, (size_t)m->ncu, sizeof(*m->cus), cu_range_cmp);
}

/*
 * The compile unit holding addr.  libdw finds it through .debug_aranges, which clang
 * does not emit by default: then in the module's table of every unit's ranges, read
 * once (a hostile guest's sites that resolve to nothing must not each walk them all).
 */
static Dwarf_Die *cu_of(struct sites_module *m, Dwarf_Addr addr, Dwarf_Addr *bias, Dwarf_Die *buf)
{
	Dwarf_Die *cu = dwfl_module_addrdie(m->mod, addr, bias);
	Dwarf *dw;
	long lo = 0, hi;

	if (cu)
		return cu;
	dw = dwfl_module_getdwarf(m->mod, bias);
	if (!dw)
		return NULL;
	if (m->ncu < 0)
		cu_table(m, dw);
	/* the last range starting at or below addr - bias, and those before it that
	 * may still cover it (ranges of units can nest or overlap) */
	hi = m->ncu;
	while (lo < hi) {
		long mid = (lo + hi) / 2;
		if (m->cus[mid].low <= addr - *bias)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (long i = lo - 1; i >= 0 && i >= lo - 64; i--)
		if (addr - *bias < m->cus[i].high) {
			*buf = m->cus[i].die;
			return buf;
		}
	return NULL;
}

int sites_resolve(struct sites_module *m, uint64_t addr, struct sites_sym *out)
{
	Dwarf_Addr bias = 0;
	Dwarf_Die *cu, *scopes = NULL, cubuf;
	Dwfl_Line *ln;
	const char *file = NULL, *sym;
	int line = 0, nscopes;
	unsigned k = 0;

	memset(out, 0, sizeof(*out));
	if (!m)
		return -1;
	/* outside the file's own addresses: nothing to find, and no walk of its units to
	 * learn it (a guest that published a module at a wrong address) */
	if (addr < m->low || addr >= m->high)
		return -1;
	cu = cu_of(m, addr, &bias, &cubuf);
	ln = dwfl_module_getsrc(m->mod, addr);
	if (ln) {
		file = dwfl_lineinfo(ln, NULL, &line, NULL, NULL, NULL);
	} else if (cu) {
		Dwarf_Line *dl = dwarf_getsrc_die(cu, addr - bias);
		if (dl) {
			file = dwarf_linesrc(dl, NULL, NULL);
			dwarf_lineno(dl, &line);
		}
	}
	copy_str(out->frames[0].file, sizeof(out->frames[0].file), file);
	out->frames[0].line = line > 0 ? (unsigned)line : 0;
	nscopes = cu ? dwarf_getscopes(cu, addr - bias, &scopes) : -1;
	/*
	 * The innermost function or inlined instance first.  The scopes of an inlined
	 * instance continue with its abstract definition's, not with the code it was
	 * inlined into: for those, ask again for the scopes holding the instance itself
	 * (dwarf_getscopes_die), as eu-addr2line -i does.
	 */
	for (int i = 0; i < nscopes && k < SITES_FRAMES_MAX; i++) {
		int tag = dwarf_tag(&scopes[i]);
		Dwarf_Die *outer = NULL;
		int nouter;

		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
			continue;
		copy_str(
		    out->frames[k].func, sizeof(out->frames[k].func), dwarf_diename(&scopes[i]));
		k++;
		if (tag == DW_TAG_subprogram || k == SITES_FRAMES_MAX)
			break;
		/* the frame this was inlined into is at the call's file and line */
		copy_str(
		    out->frames[k].file, sizeof(out->frames[k].file), call_file(cu, &scopes[i]));
		out->frames[k].line = attr_udata(&scopes[i], DW_AT_call_line);
		nouter = dwarf_getscopes_die(&scopes[i], &outer);
		if (nouter <= 0) {
			free(outer);
			break;
		}
		free(scopes);
		scopes = outer;
		nscopes = nouter;
		i = 0; /* scopes[0] is the instance itself: go on from 1 */
	}
	free(scopes);
	if (k == 0) {
		/* no DWARF for it: the symbol table's name, if any */
		sym = dwfl_module_addrname(m->mod, addr);
		if (!sym && !file)
			return -1;
		copy_str(out->frames[0].func, sizeof(out->frames[0].func), sym ? sym : "??");
		k = 1;
	}
	out->nframes = k;
	return 0;
}

unsigned sites_modules_open(void)
{
	return sc.nopen;
}

unsigned sites_modules_missing(void)
{
	return sc.nmissing;
}

unsigned sites_modules_evicted(void)
{
	return sc.nevicted;
}
