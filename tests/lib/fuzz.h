/*
 * fuzz.h - what a fuzz target defines.  Each target is one file, built twice: with
 * libFuzzer under clang (-Dfuzzer), and everywhere with fuzz-main.c, which replays a
 * corpus and deterministic mutations of it through the same entry point.
 */
#ifndef MTRACE_TEST_FUZZ_H
#define MTRACE_TEST_FUZZ_H

#include <stddef.h>
#include <stdint.h>

/* The entry point: must not crash, hang or leak on any input. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * Optional: inputs made in code (a real producer's output, say), for the replay main to
 * run and mutate like corpus files.  libFuzzer does not call it.
 */
void fuzz_seeds(void (*run)(const uint8_t *data, size_t size));

#endif
