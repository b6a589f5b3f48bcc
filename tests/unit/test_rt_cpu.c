/* tests/unit/test_rt_cpu.c: runtime/cpu.c's x86-64 level against what the
 * Linux kernel says about this CPU: the flags line of /proc/cpuinfo, which
 * lists a feature only when the CPU has it and the kernel enabled it (AVX
 * and AVX-512 disappear from it when the kernel does not save their
 * state, as XGETBV would show). Where /proc/cpuinfo is missing, only the
 * level's range and stability are checked. */
#include "runtime.h"
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether the space-separated flags hold `f`. */
static bool has_flag(const char *flags, const char *f) {
  size_t n = strlen(f);
  for (const char *p = flags; (p = strstr(p, f)) != NULL; p += n)
    if ((p == flags || p[-1] == ' ' || p[-1] == '\t') && (p[n] == ' ' || p[n] == '\n' || p[n] == '\0'))
      return true;
  return false;
}

static bool has_all(const char *flags, const char *const *fs) {
  for (; *fs; fs++)
    if (!has_flag(flags, *fs))
      return false;
  return true;
}

/* The level by the kernel's flag names (SSE3 is "pni", LAHF/SAHF in 64-bit
 * mode "lahf_lm"). LZCNT ("abm") is not asked for: a virtual machine's
 * cpuinfo may leave it out while CPUID has it (the AMD EPYC VM this was
 * written on does). */
static int level_of_flags(const char *flags) {
  static const char *const v2[] = {"pni", "ssse3", "sse4_1", "sse4_2", "popcnt", "cx16", "lahf_lm", NULL};
  static const char *const v3[] = {"avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "movbe", "xsave", NULL};
  static const char *const v4[] = {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl", NULL};
  if (!has_all(flags, v2))
    return 1;
  if (!has_all(flags, v3))
    return 2;
  return has_all(flags, v4) ? 4 : 3;
}

int main(void) {
  int level = ts_rt_cpu_level();
  printf("ts_rt_cpu_level: %d (%s)\n", level, ts_rt_cpu_level_name(level));
  TS_CHECK(level >= 0 && level <= 4);
  TS_CHECK_INTEQ(ts_rt_cpu_level(), level); /* detected once */
  TS_CHECK_STREQ(ts_rt_cpu_level_name(2), "x86-64-v2");
  TS_CHECK_STREQ(ts_rt_cpu_level_name(3), "x86-64-v3");
  TS_CHECK_STREQ(ts_rt_cpu_level_name(4), "x86-64-v4");
#if defined(__x86_64__)
  TS_CHECK(level >= 1);
  if (getenv("TSAOT_CPU_LEVEL")) {
    printf("TSAOT_CPU_LEVEL is set: not compared with /proc/cpuinfo\n");
    return ts_test_finish();
  }
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f) {
    printf("no /proc/cpuinfo: not compared\n");
    return ts_test_finish();
  }
  char line[8192];
  bool seen = false;
  while (!seen && fgets(line, sizeof line, f))
    if (strncmp(line, "flags", 5) == 0) {
      const char *colon = strchr(line, ':');
      int want = level_of_flags(colon ? colon + 1 : line);
      printf("/proc/cpuinfo: %s\n", ts_rt_cpu_level_name(want));
      TS_CHECK_INTEQ(level, want);
      seen = true;
    }
  fclose(f);
  if (!seen)
    printf("no flags line in /proc/cpuinfo: not compared\n");
#else
  TS_CHECK_INTEQ(level, 0);
#endif
  return ts_test_finish();
}
