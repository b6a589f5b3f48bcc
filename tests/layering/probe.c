/* tests/layering/probe.c: compiled with one layer's include directories and
 * TSAOT_PROBE_HEADER naming a header of a layer above it; the
 * layering.upward.* tests pass only when the compiler cannot find it
 * (tests/layering/layering.cmake). */
#include TSAOT_PROBE_HEADER

int tsaot_layering_probe;
