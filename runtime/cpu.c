/* runtime/cpu.c: which x86-64 microarchitecture level the running CPU and
 * its operating system support (runtime.h, "cpu.c"), for the fused kernels
 * that tsaot builds once per level (codegen/fusion.c, ts_cg_fusion_kernels)
 * and ts_rt_aot_fusion picks from.
 *
 * The levels are the x86-64 psABI's, as LLVM's CPUs x86-64-v2/v3/v4 define
 * them: v2 SSE3, SSSE3, SSE4.1, SSE4.2, POPCNT, CMPXCHG16B, LAHF/SAHF; v3
 * adds AVX, AVX2, BMI1, BMI2, F16C, FMA, LZCNT, MOVBE, XSAVE; v4 adds
 * AVX-512 F, BW, CD, DQ, VL. A CPUID bit alone is not enough: AVX code
 * faults unless the OS saves the YMM state (CPUID.1:ECX.OSXSAVE and XCR0
 * bits 1-2), AVX-512 code unless it also saves the opmask and ZMM state
 * (XCR0 bits 5-7), so XCR0 is read with XGETBV.
 *
 * Detected once per process; the answer is kept in an atomic int (several
 * threads may detect at once and store the same answer: no lock, nothing
 * for ThreadSanitizer to see, and no pthread_once, which a bare-metal
 * program would lack). TSAOT_CPU_LEVEL=2 or 3 in the environment lowers
 * the level (to compare the copies on one machine); it never raises it. */
#include "runtime.h"

#include <stdatomic.h>
#include <stdlib.h>

#if defined(__x86_64__)
#include <cpuid.h>

/* XCR0, the OS-enabled state components (only valid with OSXSAVE). The
 * instruction by its bytes: the xgetbv mnemonic needs -mxsave. */
static uint64_t ts_cpu_xcr0(void) {
  uint32_t lo, hi;
  __asm__ volatile(".byte 0x0f, 0x01, 0xd0" : "=a"(lo), "=d"(hi) : "c"(0));
  return ((uint64_t)hi << 32) | lo;
}

static bool ts_cpu_bits(uint32_t reg, uint32_t mask) { return (reg & mask) == mask; }

static int ts_cpu_detect(void) {
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d))
    return 1;
  unsigned c1 = c;
  unsigned c81 = 0, b7 = 0;
  if (__get_cpuid(0x80000001u, &a, &b, &c, &d))
    c81 = c;
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d))
    b7 = b;
  /* CPUID.1:ECX SSE3 0, SSSE3 9, CX16 13, SSE4.1 19, SSE4.2 20, POPCNT 23;
   * CPUID.80000001h:ECX LAHF/SAHF 0 */
  if (!ts_cpu_bits(c1, 1u << 0 | 1u << 9 | 1u << 13 | 1u << 19 | 1u << 20 | 1u << 23) || !ts_cpu_bits(c81, 1u << 0))
    return 1;
  /* CPUID.1:ECX FMA 12, MOVBE 22, XSAVE 26, OSXSAVE 27, AVX 28, F16C 29;
   * CPUID.80000001h:ECX LZCNT 5; CPUID.7.0:EBX BMI1 3, AVX2 5, BMI2 8 */
  if (!ts_cpu_bits(c1, 1u << 12 | 1u << 22 | 1u << 26 | 1u << 27 | 1u << 28 | 1u << 29) ||
      !ts_cpu_bits(c81, 1u << 5) || !ts_cpu_bits(b7, 1u << 3 | 1u << 5 | 1u << 8))
    return 2;
  uint64_t xcr0 = ts_cpu_xcr0();
  if ((xcr0 & 0x6) != 0x6) /* SSE and YMM state */
    return 2;
  /* CPUID.7.0:EBX AVX512F 16, DQ 17, CD 28, BW 30, VL 31; XCR0 opmask 5,
   * ZMM_Hi256 6, Hi16_ZMM 7 */
  if (!ts_cpu_bits(b7, 1u << 16 | 1u << 17 | 1u << 28 | 1u << 30 | 1u << 31) || (xcr0 & 0xe0) != 0xe0)
    return 3;
  return 4;
}
#else
static int ts_cpu_detect(void) { return 0; }
#endif

static atomic_int ts_cpu_level_seen; /* 0: not detected yet */

int ts_rt_cpu_level(void) {
  int l = atomic_load_explicit(&ts_cpu_level_seen, memory_order_relaxed);
  if (l)
    return l - 1;
  l = ts_cpu_detect();
  const char *cap = getenv("TSAOT_CPU_LEVEL");
  if (cap && cap[0] >= '1' && cap[0] <= '4' && !cap[1] && cap[0] - '0' < l)
    l = cap[0] - '0';
  /* stored plus one, so that level 0 (not x86-64) is remembered too */
  atomic_store_explicit(&ts_cpu_level_seen, l + 1, memory_order_relaxed);
  return l;
}

const char *ts_rt_cpu_level_name(int level) {
  switch (level) {
  case 1: return "x86-64";
  case 2: return "x86-64-v2";
  case 3: return "x86-64-v3";
  case 4: return "x86-64-v4";
  default: return "not x86-64";
  }
}
