/*
 * config.c - defaults and the "key = value" file.  Parsing is strict: an unknown key,
 * a number with trailing junk or out of range is an error with file:line, so a typo
 * never silently leaves a default in place.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"

void config_defaults(struct mtraced_config *c)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->config_path, sizeof(c->config_path), "%s", MTRACED_DEFAULT_CONFIG);
	snprintf(c->backend, sizeof(c->backend), "auto");
	snprintf(c->socket_path, sizeof(c->socket_path), "/run/mtrace/mtraced.sock");
	snprintf(c->socket_group, sizeof(c->socket_group), "mtrace");
	c->log_level = 2;
	/* 64 rings of 512 data pages + header would be 32832 pages: the default admits a
	 * generous guest (16 MiB) but not the protocol maximum, which an operator may raise. */
	c->max_pages_per_guest = 4096;
	c->max_pages_total = 65536;
	c->max_guests = 1024;
	c->drain_budget = 16384;
	c->drain_interval_ms = 20;
	c->ratelimit_wakeups = 30; /* xenconsoled's allowance per period */
	c->ratelimit_period_ms = 200;
	c->poll_interval_us = 500;
	c->dead_keep_s = 60;
	c->mprof_poll_ms = 100;
	c->max_threads_per_guest = 16384; /* the table stays cache-sized: bench/daemon */
	c->max_labels_per_guest = 1024;
	c->max_sites_per_guest = 1024;
	snprintf(c->debug_dirs, sizeof(c->debug_dirs), "/usr/lib/debug");
	c->max_clients = 64;
	c->client_queue_bytes = 8u << 20;
	c->client_queue_total = 64u << 20;
	c->client_batch_total = 32u << 20;
	c->client_shm_bytes = 8u << 20;
	c->client_shm_total = 64u << 20;
	c->max_clients_per_uid = 32;
	c->client_hello_ms = 5000;
	c->client_coalesce_us = 2000;
	c->client_coalesce_rate = 1000000;
	c->max_top_n = 1000;
	c->vcpu_source = false;
	c->vcpu_interval_ms = 200;
	c->tbuf_pages = 32; /* xentrace's default */
	c->vcpu_max = 1024;
	c->drop_privileges = true;
	c->priority_boost = 4;
	c->status_interval_ms = 1000;
}

static int parse_u64(const char *val, unsigned long long min, unsigned long long max, bool suffix,
    unsigned long long *out)
{
	char *end;
	unsigned long long v;

	if (!isdigit((unsigned char)val[0]))
		return -1;
	errno = 0;
	v = strtoull(val, &end, 10);
	if (errno)
		return -1;
	if (suffix && *end) {
		unsigned shift = 0;
		switch (*end) {
		case 'k':
		case 'K':
			shift = 10;
			break;
		case 'm':
		case 'M':
			shift = 20;
			break;
		case 'g':
		case 'G':
			shift = 30;
			break;
		default:
			return -1;
		}
		if (v > (ULLONG_MAX >> shift))
			return -1;
		v <<= shift;
		end++;
	}
	if (*end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

static int parse_bool(const char *val, bool *out)
{
	if (!strcasecmp(val, "yes") || !strcasecmp(val, "true") || !strcmp(val, "1") ||
	    !strcasecmp(val, "on"))
		*out = true;
	else if (!strcasecmp(val, "no") || !strcasecmp(val, "false") || !strcmp(val, "0") ||
	    !strcasecmp(val, "off"))
		*out = false;
	else
		return -1;
	return 0;
}

enum kind {
	K_UINT,
	K_SIZE,
	K_STR,
	K_BOOL,
	K_LEVEL,
	K_BACKEND,
	K_IMAGE
};

struct key {
	const char *name;
	enum kind kind;
	size_t off;
	size_t size; /* string buffer size */
	unsigned long long min, max;
};

#define U(n, lo, hi)                                                      \
	{                                                                 \
#n, K_UINT, offsetof(struct mtraced_config, n), 0, lo, hi \
	}
#define S(n)                                                      \
	{                                                         \
#n, K_STR, offsetof(struct mtraced_config, n),    \
		    sizeof(((struct mtraced_config *)0)->n), 0, 0 \
	}

static const struct key keys[] = {
	{ "backend", K_BACKEND, offsetof(struct mtraced_config, backend),
	    sizeof(((struct mtraced_config *)0)->backend), 0, 0 },
	S(sim_dir),
	S(socket_path),
	S(socket_group),
	{ "log_level", K_LEVEL, offsetof(struct mtraced_config, log_level), 0, 0, 3 },
	U(max_pages_per_guest, 2, 1u << 24),
	U(max_pages_total, 2, 1u << 28),
	U(max_guests, 1, 32768),
	U(drain_budget, 1, 1u << 30),
	U(drain_interval_ms, 1, 60000),
	U(ratelimit_wakeups, 1, 1000000),
	U(ratelimit_period_ms, 1, 60000),
	U(poll_interval_us, 50, 1000000),
	U(dead_keep_s, 0, 86400 * 7),
	U(mprof_poll_ms, 1, 60000),
	U(max_threads_per_guest, 16, 1u << 24),
	U(max_labels_per_guest, 1, 1u << 16),
	U(max_sites_per_guest, 1, 1u << 16),
	S(debug_dirs),
	{ "image", K_IMAGE, 0, 0, 0, 0 },
	U(max_clients, 1, 65536),
	{ "client_queue_bytes", K_SIZE, offsetof(struct mtraced_config, client_queue_bytes), 0,
	    4096, 1ull << 32 },
	{ "client_queue_total", K_SIZE, offsetof(struct mtraced_config, client_queue_total), 0,
	    4096, 1ull << 36 },
	{ "client_batch_total", K_SIZE, offsetof(struct mtraced_config, client_batch_total), 0,
	    1u << 20, 1ull << 36 },
	{ "client_shm_bytes", K_SIZE, offsetof(struct mtraced_config, client_shm_bytes), 0,
	    4u << 20, 1ull << 32 },
	{ "client_shm_total", K_SIZE, offsetof(struct mtraced_config, client_shm_total), 0, 0,
	    1ull << 36 },
	{ "client_shm_per_uid", K_SIZE, offsetof(struct mtraced_config, client_shm_per_uid), 0, 0,
	    1ull << 36 },
	U(max_clients_per_uid, 1, 65536),
	U(client_hello_ms, 100, 600000),
	U(client_coalesce_us, 0, 1000000),
	U(client_coalesce_rate, 1, 1000000000),
	U(max_top_n, 0, 100000),
	{ "vcpu_source", K_BOOL, offsetof(struct mtraced_config, vcpu_source), 0, 0, 0 },
	U(vcpu_interval_ms, 20, 10000),
	U(tbuf_pages, 1, 4096),
	U(vcpu_max, 1, 65536),
	{ "drop_privileges", K_BOOL, offsetof(struct mtraced_config, drop_privileges), 0, 0, 0 },
	U(priority_boost, 0, 20),
	U(status_interval_ms, 100, 3600000),
};

/* "DOMAIN PATH": an absolute path, one image per domain name (the last one wins). */
static int set_image(struct mtraced_config *c, const char *val, char *err, size_t errlen)
{
	size_t n = strcspn(val, " \t");
	const char *path = val + n;
	struct mtraced_image *im = NULL;

	path += strspn(path, " \t");
	if (n == 0 || n >= sizeof(im->domain) || path[0] != '/' ||
	    strlen(path) >= sizeof(im->path)) {
		snprintf(err, errlen, "image: expected \"DOMAIN /absolute/path\", got \"%s\"", val);
		return -1;
	}
	for (unsigned i = 0; i < c->nimages; i++)
		if (strlen(c->images[i].domain) == n && !strncmp(c->images[i].domain, val, n))
			im = &c->images[i];
	if (!im) {
		if (c->nimages == MTRACED_IMAGES_MAX) {
			snprintf(err, errlen, "image: more than %u images", MTRACED_IMAGES_MAX);
			return -1;
		}
		im = &c->images[c->nimages++];
	}
	snprintf(im->domain, sizeof(im->domain), "%.*s", (int)n, val);
	snprintf(im->path, sizeof(im->path), "%s", path);
	return 0;
}

int config_set(struct mtraced_config *c, const char *key, const char *val, char *err, size_t errlen)
{
	static const char *const levels[] = { "err", "warn", "info", "debug" };
	unsigned long long v;
	char *base = (char *)c;

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const struct key *k = &keys[i];
		if (strcmp(k->name, key))
			continue;
		switch (k->kind) {
		case K_UINT:
		case K_SIZE:
			if (parse_u64(val, k->min, k->max, k->kind == K_SIZE, &v)) {
				snprintf(err, errlen,
				    "%s: expected a number in %llu..%llu, got \"%s\"", key, k->min,
				    k->max, val);
				return -1;
			}
			if (k->kind == K_UINT)
				*(unsigned *)(base + k->off) = (unsigned)v;
			else
				*(size_t *)(base + k->off) = (size_t)v;
			return 0;
		case K_BOOL:
			if (parse_bool(val, (bool *)(base + k->off))) {
				snprintf(
				    err, errlen, "%s: expected yes or no, got \"%s\"", key, val);
				return -1;
			}
			return 0;
		case K_LEVEL:
			for (unsigned l = 0; l < 4; l++)
				if (!strcasecmp(val, levels[l]) ||
				    (val[0] == '0' + (int)l && !val[1])) {
					c->log_level = l;
					return 0;
				}
			if (!strcasecmp(val, "error") || !strcasecmp(val, "warning")) {
				c->log_level = val[0] == 'e' || val[0] == 'E' ? 0 : 1;
				return 0;
			}
			snprintf(err, errlen, "%s: expected err, warn, info or debug, got \"%s\"",
			    key, val);
			return -1;
		case K_IMAGE:
			return set_image(c, val, err, errlen);
		case K_BACKEND:
			if (strcmp(val, "auto") && strcmp(val, "xen") && strcmp(val, "sim")) {
				snprintf(err, errlen, "%s: expected auto, xen or sim, got \"%s\"",
				    key, val);
				return -1;
			}
			__attribute__((fallthrough));
		case K_STR:
			if (strlen(val) >= k->size) {
				snprintf(err, errlen, "%s: value longer than %zu bytes", key,
				    k->size - 1);
				return -1;
			}
			memcpy(base + k->off, val, strlen(val) + 1);
			return 0;
		}
	}
	snprintf(err, errlen, "unknown setting \"%s\"", key);
	return -1;
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = 0;
	return s;
}

int config_load_file(struct mtraced_config *c, const char *path, char *err, size_t errlen)
{
	char line[1024], why[512];
	unsigned lineno = 0;
	FILE *f;
	int rc = 0;

	f = fopen(path, "re");
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		char *s, *eq, *key, *val;

		lineno++;
		if (!strchr(line, '\n') && !feof(f)) {
			snprintf(err, errlen, "%s:%u: line too long", path, lineno);
			rc = -1;
			break;
		}
		s = strchr(line, '#');
		if (s)
			*s = 0;
		s = trim(line);
		if (!*s)
			continue;
		eq = strchr(s, '=');
		if (!eq) {
			snprintf(err, errlen, "%s:%u: expected \"key = value\"", path, lineno);
			rc = -1;
			break;
		}
		*eq = 0;
		key = trim(s);
		val = trim(eq + 1);
		if (val[0] == '"' && strlen(val) >= 2 && val[strlen(val) - 1] == '"') {
			val[strlen(val) - 1] = 0;
			val++;
		}
		if (config_set(c, key, val, why, sizeof(why))) {
			snprintf(err, errlen, "%s:%u: %s", path, lineno, why);
			rc = -1;
			break;
		}
	}
	if (!rc && ferror(f)) {
		snprintf(err, errlen, "%s: read error", path);
		rc = -1;
	}
	fclose(f);
	return rc;
}
