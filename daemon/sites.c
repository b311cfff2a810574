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

/* Distinct build-ids and images remembered (found or not); past it, lookups fail. */
#define CACHE_MAX 256

struct sites_module {
	Dwfl *dwfl;
	Dwfl_Module *mod;
	uint8_t id[64];
	size_t idlen;
};

struct entry {
	char key[272];          /* hex build-id, or "image:" + the image path */
	struct sites_module *m; /* NULL: looked for, not found */
};

static const struct mtraced_config *cfg;
static struct entry *cache;
static unsigned ncache, nopen, nmissing;

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
	n = dwfl_module_build_id(m->mod, &bits, &vaddr);
	if (n > 0 && (size_t)n <= sizeof(m->id)) {
		memcpy(m->id, bits, (size_t)n);
		m->idlen = (size_t)n;
	}
	nopen++;
	log_info("sites: reading debug info of %s", path);
	return m;
}

static void module_close(struct sites_module *m)
{
	if (!m)
		return;
	dwfl_end(m->dwfl);
	free(m);
}

static struct entry *cache_find(const char *key)
{
	for (unsigned i = 0; i < ncache; i++)
		if (!strcmp(cache[i].key, key))
			return &cache[i];
	return NULL;
}

static struct entry *cache_add(const char *key, struct sites_module *m)
{
	struct entry *e;

	if (ncache == CACHE_MAX) {
		module_close(m);
		return NULL;
	}
	if (!cache)
		cache = xcalloc(CACHE_MAX, sizeof(*cache));
	e = &cache[ncache++];
	snprintf(e->key, sizeof(e->key), "%s", key);
	e->m = m;
	if (!m)
		nmissing++;
	return e;
}

void sites_init(const struct mtraced_config *c)
{
	cfg = c;
}

void sites_fini(void)
{
	for (unsigned i = 0; i < ncache; i++)
		module_close(cache[i].m);
	free(cache);
	cache = NULL;
	ncache = 0;
}

static const struct mtraced_image *image_of(const char *domain_name)
{
	if (!cfg || !domain_name || !domain_name[0])
		return NULL;
	for (unsigned i = 0; i < cfg->nimages; i++)
		if (!strcmp(cfg->images[i].domain, domain_name))
			return &cfg->images[i];
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
	return e ? e->m : NULL;
}

/* Under each configured debug directory, <dir>/.build-id/<2 hex>/<rest>.debug. */
static struct sites_module *by_build_id(const char *hex)
{
	const char *p = cfg ? cfg->debug_dirs : "";

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
		return e->m;
	if (!e) {
		m = by_build_id(hex);
		if (m && (m->idlen != n || memcmp(m->id, id, n))) {
			log_warnx(
			    "sites: the debug file for build-id %s has another build-id", hex);
			module_close(m);
			m = NULL;
		}
		e = cache_add(hex, m);
		if (m)
			return m;
	}
	/* not in the debug directories: this domain's image, if it is that module (the
	 * build-id's entry stays negative: the image is another domain's business) */
	im = sites_module_image(domain_name);
	if (im && im->idlen == n && !memcmp(im->id, id, n))
		return im;
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

/*
 * The compile unit holding addr.  libdw finds it through .debug_aranges, which clang
 * does not emit by default: then look at each unit's own ranges (once per site).
 */
static Dwarf_Die *cu_of(Dwfl_Module *mod, Dwarf_Addr addr, Dwarf_Addr *bias, Dwarf_Die *buf)
{
	Dwarf_Die *cu = dwfl_module_addrdie(mod, addr, bias);
	Dwarf_CU *unit = NULL;
	Dwarf *dw;

	if (cu)
		return cu;
	dw = dwfl_module_getdwarf(mod, bias);
	if (!dw)
		return NULL;
	while (dwarf_get_units(dw, unit, &unit, NULL, NULL, buf, NULL) == 0)
		if (dwarf_haspc(buf, addr - *bias) == 1)
			return buf;
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
	cu = cu_of(m->mod, addr, &bias, &cubuf);
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
	return nopen;
}

unsigned sites_modules_missing(void)
{
	return nmissing;
}
