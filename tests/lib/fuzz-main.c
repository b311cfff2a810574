/*
 * fuzz-main.c - main() for a fuzz target where libFuzzer is not there (gcc builds):
 * every input — each FILE, each file of each DIR, and what the target's fuzz_seeds()
 * makes — is run once as it is, then MUTATIONS times mutated (bit flips, interesting
 * bytes, inserted and deleted bytes, truncations, scribbled lengths and indexes), with
 * a fixed seed so that a failure replays.
 *
 * usage: fuzz-NAME-replay [-m MUTATIONS] [FILE|DIR...]
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"

#pragma weak fuzz_seeds

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static unsigned long mutations, runs;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void mutate(uint8_t *buf, size_t *np, size_t cap)
{
	static const uint8_t interesting[] = { 0, 0xff, 0x7f, 0x80, ',', '0', '9', 0xc1 };
	size_t n = *np;

	for (unsigned k = 1 + next() % 8; k > 0; k--) {
		size_t at = n ? next() % n : 0;

		switch (next() % 8) {
		case 0: /* flip a bit */
			if (n)
				buf[at] ^= (uint8_t)(1u << (next() % 8));
			break;
		case 1: /* any byte */
			if (n)
				buf[at] = (uint8_t)next();
			break;
		case 2: /* an interesting byte */
			if (n)
				buf[at] = interesting[next() % sizeof(interesting)];
			break;
		case 3: /* delete */
			if (n) {
				memmove(buf + at, buf + at + 1, n - at - 1);
				n--;
			}
			break;
		case 4: /* insert */
			if (n < cap) {
				memmove(buf + at + 1, buf + at, n - at);
				buf[at] = (uint8_t)next();
				n++;
			}
			break;
		case 5: /* truncate */
			n = n ? next() % n + 1 : 0;
			break;
		case 6: { /* a 16-bit length at an aligned place */
			uint16_t v = (uint16_t)next();

			at &= ~(size_t)7;
			if (at + 2 <= n)
				memcpy(buf + at, &v, 2);
			break;
		}
		default: { /* a 64-bit index or size at an aligned place, mostly small */
			uint64_t v = next() % 3 ? next() % (1 << 16) : next();

			at &= ~(size_t)7;
			if (at + 8 <= n)
				memcpy(buf + at, &v, 8);
			break;
		}
		}
	}
	*np = n;
}

static void run(const uint8_t *in, size_t len)
{
	size_t cap = len + 64;
	uint8_t *buf = malloc(cap);

	if (buf == NULL) {
		perror("fuzz");
		exit(1);
	}
	LLVMFuzzerTestOneInput(in, len);
	runs++;
	for (unsigned long m = 0; m < mutations; m++) {
		size_t n = len;

		memcpy(buf, in, len);
		mutate(buf, &n, cap);
		LLVMFuzzerTestOneInput(buf, n);
		runs++;
	}
	free(buf);
}

static void run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	if (f == NULL || fseek(f, 0, SEEK_END) < 0 || (n = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET) < 0) {
		perror(path);
		exit(1);
	}
	buf = malloc(n > 0 ? (size_t)n : 1);
	if (buf == NULL || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		fprintf(stderr, "%s: read failed\n", path);
		exit(1);
	}
	fclose(f);
	run(buf, (size_t)n);
	free(buf);
}

static void run_path(const char *path)
{
	struct dirent **ents;
	struct stat sb;
	int n;

	if (stat(path, &sb) < 0 || !S_ISDIR(sb.st_mode)) {
		run_file(path);
		return;
	}
	n = scandir(path, &ents, NULL, alphasort);
	if (n < 0) {
		perror(path);
		exit(1);
	}
	for (int k = 0; k < n; k++) {
		char p[4096];

		if (ents[k]->d_name[0] != '.') {
			snprintf(p, sizeof(p), "%s/%s", path, ents[k]->d_name);
			run_file(p);
		}
		free(ents[k]);
	}
	free(ents);
}

int main(int argc, char **argv)
{
	int c;

	while ((c = getopt(argc, argv, "m:")) != -1) {
		if (c != 'm') {
			fprintf(stderr, "usage: %s [-m MUTATIONS] [FILE|DIR...]\n", argv[0]);
			return 2;
		}
		mutations = strtoul(optarg, NULL, 10);
	}
	if (fuzz_seeds)
		fuzz_seeds(run);
	for (int i = optind; i < argc; i++)
		run_path(argv[i]);
	if (runs == 0) {
		fprintf(stderr, "%s: no input (no FILE or DIR, and the target makes no seeds)\n",
		    argv[0]);
		return 2;
	}
	printf("%lu inputs run without a crash\n", runs);
	return 0;
}
