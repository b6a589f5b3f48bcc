/* tests/fuzz/fuzz.h: what every fuzz target defines. Built as a libFuzzer
 * binary (TSAOT_FUZZ=ON with clang) or linked with replay.c into an ordinary
 * program that replays the committed corpus and regression inputs. */
#ifndef TSAOT_FUZZ_H
#define TSAOT_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
