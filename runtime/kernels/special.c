/* runtime/kernels/special.c: the scalar special functions of special.h
 * (the PW_SP primitives of ir/ops.def's pointwise rows).
 *
 * Our own series and iterations, chosen so that double keeps ~1e-13 or
 * better relative accuracy where a float32 result needs 1e-7:
 * - digamma, trigamma: reflection for x < 0, recurrence up to x >= 10,
 *   then the asymptotic series in 1/x^2; polygamma(n >= 2) as
 *   (-1)^(n+1) n! zeta(n + 1, x), as ATen computes it.
 * - zeta (Hurwitz): the direct sum until q + N >= 10, then Euler-Maclaurin
 *   with the Bernoulli numbers up to B_24 (ATen's domain rules).
 * - igamma, igammac: the power series of P for x < a + 1, Lentz's
 *   continued fraction of Q beyond (ATen's edge cases).
 * - erfinv, ndtri: Winitzki's closed-form guess refined by Halley's method
 *   on erf(x) - y near 0 and on erfc(x) - (1 - |y|) in the tails (1 - |y|
 *   is exact there), so both keep relative accuracy to the ends.
 * - erfcx: exp(x^2) erfc(x) while erfc stays normal, the asymptotic series
 *   beyond; 2 exp(x^2) - erfcx(-x) for x < 0.
 * - Bessel functions: the power series for small |x| (with the logarithmic
 *   terms of Y and K, A&S 9.1.11 and 9.6.11) and Hankel's asymptotic
 *   expansions for large |x| (A&S 9.2.5, 9.7.1, 9.7.2), switched where the
 *   series' cancellation and the expansion's least term are both below
 *   1e-8 relative.
 * - airy_ai: the Maclaurin series for -8 <= x <= 5, the asymptotic
 *   expansions (A&S 10.4.59, 10.4.60) outside.
 * - the orthogonal polynomials: ATen's three-term recurrences and closed
 *   forms, with its special cases at |x| = 1 and for negative n.
 *
 * And the kernels of the math ops that are not one pointwise row: frexp
 * (two outputs) and positive (self itself). */
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "args.h"
#include "special.h"
#include "tensor_ops.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

#define SP_EULER 0.57721566490153286061 /* Euler-Mascheroni gamma */
#define SP_SQRTPI 1.77245385090551602730
#define SP_SQRT2 1.41421356237309504880

/* ------------------------------------------------------------- gamma */

double ts_rt_sp_digamma(double x) {
  if (x == 0) return copysign(INFINITY, -x); /* as ATen: -inf at +0 */
  if (isnan(x)) return x;
  if (x < 0) {
    if (x == trunc(x)) return NAN; /* the poles */
    if (x == -INFINITY) return NAN;
    /* psi(1 - x) - pi / tan(pi x), with x's fractional part for accuracy */
    double r = x - trunc(x);
    return ts_rt_sp_digamma(1 - x) - M_PI / tan(M_PI * r);
  }
  if (x == INFINITY) return x;
  double acc = 0;
  while (x < 10) {
    acc -= 1 / x;
    x += 1;
  }
  double z = 1 / (x * x);
  /* -sum B_2k / (2k x^2k), k = 1..7 */
  double s = z * (1.0 / 12 - z * (1.0 / 120 - z * (1.0 / 252 - z * (1.0 / 240 - z * (1.0 / 132 - z * (691.0 / 32760 - z * (1.0 / 12)))))));
  return acc + log(x) - 0.5 / x - s;
}

double ts_rt_sp_trigamma(double x) {
  double sign = 1, acc = 0;
  if (x < 0.5) {
    /* psi1(x) = pi^2 / sin^2(pi x) - psi1(1 - x) */
    double sp = sin(M_PI * x);
    acc = -(M_PI * M_PI) / (sp * sp);
    sign = -1;
    x = 1 - x;
  }
  while (x < 10) {
    acc += 1 / (x * x);
    x += 1;
  }
  double z = 1 / (x * x);
  /* 1/x + 1/(2x^2) + sum B_2k / x^(2k+1) */
  double t = 1 / x + z / 2 + z / x * (1.0 / 6 - z * (1.0 / 30 - z * (1.0 / 42 - z * (1.0 / 30 - z * (5.0 / 66 - z * (691.0 / 2730 - z * (7.0 / 6)))))));
  return sign * (acc + t);
}

double ts_rt_sp_polygamma(double n, double x) {
  if (n == 0) return ts_rt_sp_digamma(x);
  if (n == 1) return ts_rt_sp_trigamma(x);
  double f = exp(lgamma(n + 1)); /* n! */
  return (fmod(n, 2) != 0 ? 1 : -1) * f * ts_rt_sp_zeta(n + 1, x);
}

double ts_rt_sp_mvlgamma(double x, double p) {
  double s = 0;
  for (double j = p - 1; j >= 0; j--) s += lgamma(x - j / 2);
  return s + p * (p - 1) / 4 * log(M_PI);
}

double ts_rt_sp_zeta(double x, double q) {
  /* B_2j / (2j)!, j = 1..12 */
  static const double c[12] = {1.0 / 12,
                               -1.0 / 720,
                               1.0 / 30240,
                               -1.0 / 1209600,
                               1.0 / 47900160,
                               -691.0 / 1307674368000.0,
                               1.0 / 74724249600.0,
                               -3617.0 / 510 / 20922789888000.0,
                               43867.0 / 798 / 6402373705728000.0,
                               -174611.0 / 330 / 2432902008176640000.0,
                               854513.0 / 138 / 1124000727777607680000.0,
                               -236364091.0 / 2730 / 620448401733239439360000.0};
  if (x == 1) return INFINITY;
  if (x < 1) return NAN;
  if (q <= 0) {
    if (q == floor(q)) return INFINITY;
    if (x != floor(x)) return NAN; /* (negative)^-x */
  }
  double s = pow(q, -x), a = q, b = 0;
  for (int i = 0; i < 9 || a <= 9; i++) {
    a += 1;
    b = pow(a, -x);
    s += b;
    if (fabs(b) < 1e-17 * fabs(s)) return s;
  }
  /* the tail from a: a^(1-x)/(x-1) - a^-x/2 (b counted once already) +
   * sum c_j x(x+1)...(x+2j-2) a^(-x-2j+1) */
  s += b * a / (x - 1) - b / 2;
  double f = x * b / a;
  for (int j = 0; j < 12; j++) {
    double t = c[j] * f;
    s += t;
    if (fabs(t) < 1e-17 * fabs(s)) break;
    f *= (x + 2 * j + 1) * (x + 2 * j + 2) / (a * a);
  }
  return s;
}

/* x^a e^-x / Gamma(a), in logarithms. */
static double sp_igam_pre(double a, double x) { return exp(a * log(x) - x - lgamma(a)); }

/* P(a, x) by its power series (x < a + 1). */
static double sp_igam_series(double a, double x) {
  double ap = a, del = 1 / a, sum = del;
  for (int n = 0; n < 100000; n++) {
    ap += 1;
    del *= x / ap;
    sum += del;
    if (fabs(del) < fabs(sum) * 1e-17) break;
  }
  return sum * sp_igam_pre(a, x);
}

/* Q(a, x) by Lentz's continued fraction (x >= a + 1). */
static double sp_igam_cf(double a, double x) {
  const double tiny = 1e-300;
  double b = x + 1 - a, c = 1 / tiny, d = 1 / b, h = d;
  for (int i = 1; i < 100000; i++) {
    double an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (fabs(d) < tiny) d = tiny;
    c = b + an / c;
    if (fabs(c) < tiny) c = tiny;
    d = 1 / d;
    double del = d * c;
    h *= del;
    if (fabs(del - 1) < 1e-16) break;
  }
  return h * sp_igam_pre(a, x);
}

double ts_rt_sp_igamma(double a, double x) {
  if (x < 0 || a < 0) return NAN;
  if (a == 0) return x > 0 ? 1 : NAN;
  if (x == 0) return 0;
  if (isinf(a)) return isinf(x) ? NAN : 0;
  if (isinf(x)) return 1;
  if (isnan(a) || isnan(x)) return NAN;
  return x < a + 1 ? sp_igam_series(a, x) : 1 - sp_igam_cf(a, x);
}

double ts_rt_sp_igammac(double a, double x) {
  if (x < 0 || a < 0) return NAN;
  if (a == 0) return x > 0 ? 0 : NAN;
  if (x == 0) return 1;
  if (isinf(a)) return isinf(x) ? NAN : 1;
  if (isinf(x)) return 0;
  if (isnan(a) || isnan(x)) return NAN;
  return x < a + 1 ? 1 - sp_igam_series(a, x) : sp_igam_cf(a, x);
}

/* ------------------------------------------------------------ erf family */

/* The x >= 0 with erfc(x) = t, 0 < t <= 1: Newton on log erfc(x) =
 * log erfcx(x) - x^2, nearly quadratic in x, so it converges from
 * Winitzki's guess even for t = 1e-300. */
static double sp_erfcinv_le1(double t) {
  /* Winitzki: erf^-1(y) ~ sqrt(sqrt(b^2 - l/a) - b), b = 2/(pi a) + l/2,
   * l = log(1 - y^2) = log(t (2 - t)) */
  const double a = 0.147;
  double l = log(t) + log(2 - t), lt = log(t);
  double b = 2 / (M_PI * a) + l / 2;
  double x = sqrt(fmax(sqrt(b * b - l / a) - b, 0));
  for (int i = 0; i < 40; i++) {
    double e = ts_rt_sp_erfcx(x);
    double step = (log(e) - x * x - lt) * e / (2 / SP_SQRTPI);
    x += step;
    if (x < 0) x = 0;
    if (fabs(step) <= 1e-16 * x) break;
  }
  return x;
}

/* The x >= 0 with erf(x) = y, 0 <= y < 0.5 (Halley on erf). */
static double sp_erfinv_small(double y) {
  if (y == 0) return y;
  const double a = 0.147;
  double l = log1p(-y * y);
  double b = 2 / (M_PI * a) + l / 2;
  double x = sqrt(fmax(sqrt(b * b - l / a) - b, 0));
  for (int i = 0; i < 6; i++) {
    double r = erf(x) - y;
    double d = 2 / SP_SQRTPI * exp(-x * x);
    double step = r / (d + x * r);
    x -= step;
    if (fabs(step) <= 1e-17 * x) break;
  }
  return x;
}

double ts_rt_sp_erfinv(double y) {
  if (isnan(y) || y < -1 || y > 1) return NAN;
  if (y == 1) return INFINITY;
  if (y == -1) return -INFINITY;
  double a = fabs(y);
  double x = a < 0.5 ? sp_erfinv_small(a) : sp_erfcinv_le1(1 - a);
  return copysign(x, y);
}

double ts_rt_sp_ndtri(double p) {
  if (isnan(p) || p < 0 || p > 1) return NAN;
  if (p == 0) return -INFINITY;
  if (p == 1) return INFINITY;
  /* ndtri(p) = sqrt(2) erfinv(2p - 1) = -sqrt(2) erfcinv(2p); 2p - 1 is
   * exact for p in [0.25, 1], 2 - 2p for p in [0.5, 1] */
  if (p >= 0.25 && p <= 0.75) {
    double y = 2 * p - 1;
    return copysign(SP_SQRT2 * sp_erfinv_small(fabs(y)), y);
  }
  if (p < 0.5) return -SP_SQRT2 * sp_erfcinv_le1(2 * p);
  return SP_SQRT2 * sp_erfcinv_le1(2 - 2 * p);
}

double ts_rt_sp_erfcx(double x) {
  if (isnan(x)) return x;
  if (x < 0) {
    if (x < -26.7) return INFINITY; /* exp(x^2) overflows */
    return 2 * exp(x * x) - ts_rt_sp_erfcx(-x);
  }
  if (x < 25) return exp(x * x) * erfc(x);
  if (x > 1e8) return 1 / (SP_SQRTPI * x);
  /* 1/(x sqrt(pi)) sum (-1)^k (2k-1)!! / (2x^2)^k */
  double z = 1 / (2 * x * x), t = 1, s = 1;
  for (int k = 1; k < 12; k++) {
    t *= -(2 * k - 1) * z;
    s += t;
  }
  return s / (SP_SQRTPI * x);
}

double ts_rt_sp_log_ndtr(double x) {
  double t = x * (1 / SP_SQRT2);
  if (x < -1) return log(ts_rt_sp_erfcx(-t) / 2) - t * t;
  return log1p(-erfc(t) / 2);
}

/* -------------------------------------------------------- Bessel I, K */

/* sum_k (x^2/4)^k / (k! (k+nu)!) (nu = 0, 1): the power series of
 * I_nu(x) / (x/2)^nu, all terms positive. */
static double sp_iseries(double x, int nu) {
  double q = x * x / 4, t = 1, s = 1;
  for (int k = 1; k < 500; k++) {
    t *= q / ((double)k * (k + nu));
    s += t;
    if (t < 1e-17 * s) break;
  }
  return s;
}

/* Hankel's expansion sum_k sgn^k a_k(nu) / x^k, a_k = prod_{j<=k} (mu -
 * (2j-1)^2) / (k! 8^k), mu = 4 nu^2, summed while the terms shrink: sgn
 * -1 for I, +1 for K. */
static double sp_hankel(double x, int nu, double sgn) {
  double mu = 4.0 * nu * nu, t = 1, s = 1, last = INFINITY;
  for (int k = 1; k < 200; k++) {
    double nt = t * sgn * (mu - (2.0 * k - 1) * (2.0 * k - 1)) / (8.0 * k * x);
    if (fabs(nt) >= last) break;
    last = fabs(nt);
    t = nt;
    s += t;
    if (fabs(t) < 1e-17 * fabs(s)) break;
  }
  return s;
}

/* I_nu(|x|) exp(-|x|) for nu = 0, 1 (unsigned). */
static double sp_ie(double ax, int nu) {
  if (ax <= 30) {
    double s = sp_iseries(ax, nu);
    if (nu) s *= ax / 2;
    return s * exp(-ax);
  }
  if (isinf(ax)) return 0;
  return sp_hankel(ax, nu, -1) / sqrt(2 * M_PI * ax);
}

/* I0, I1, J and Y at +-inf are NaN, as ATen's kernels compute them. */
double ts_rt_sp_i0(double x) {
  double ax = fabs(x);
  if (isnan(x) || isinf(x)) return NAN;
  if (ax <= 30) return sp_iseries(ax, 0);
  if (ax > 720) return INFINITY;
  return sp_ie(ax, 0) * exp(ax);
}

double ts_rt_sp_i0e(double x) {
  if (isnan(x)) return x;
  return sp_ie(fabs(x), 0);
}

double ts_rt_sp_i1(double x) {
  double ax = fabs(x);
  if (isnan(x) || isinf(x)) return NAN;
  double r;
  if (ax <= 30) r = sp_iseries(ax, 1) * ax / 2;
  else if (ax > 720) r = INFINITY;
  else r = sp_ie(ax, 1) * exp(ax);
  return x < 0 ? -r : r;
}

double ts_rt_sp_i1e(double x) {
  if (isnan(x)) return x;
  double r = sp_ie(fabs(x), 1);
  return x < 0 ? -r : r;
}

/* K_nu(x) exp(x), x > 0, nu = 0, 1. */
static double sp_ke(double x, int nu) {
  if (x > 9) return sp_hankel(x, nu, 1) * sqrt(M_PI / (2 * x));
  double q = x * x / 4, l = log(x / 2);
  /* psi(k+1) = -gamma + H_k */
  double t = 1, hk = 0, r;
  if (nu == 0) {
    /* K0 = -(ln(x/2) + gamma) I0 + sum H_k q^k / (k!)^2 */
    double s = 0, i0 = 1;
    for (int k = 1; k < 200; k++) {
      t *= q / ((double)k * k);
      hk += 1.0 / k;
      i0 += t;
      s += hk * t;
      if (t < 1e-17 * i0) break;
    }
    r = -(l + SP_EULER) * i0 + s;
  } else {
    /* K1 = 1/x + ln(x/2) I1 - (x/4) sum (psi(k+1) + psi(k+2)) q^k / (k! (k+1)!) */
    double i1 = 1, s = 1 - 2 * SP_EULER, hk1 = 1; /* k = 0: psi(1) + psi(2) = 1 - 2 gamma */
    for (int k = 1; k < 200; k++) {
      t *= q / ((double)k * (k + 1));
      hk += 1.0 / k;
      hk1 += 1.0 / (k + 1);
      i1 += t;
      s += (hk + hk1 - 2 * SP_EULER) * t;
      if (t < 1e-17 * i1) break;
    }
    r = 1 / x + l * i1 * x / 2 - x / 4 * s;
  }
  return r * exp(x);
}

static double sp_k(double x, int nu, bool scaled) {
  if (isnan(x)) return x;
  if (x < 0) return NAN;
  if (x == 0) return INFINITY;
  if (isinf(x)) return 0;
  if (scaled) return sp_ke(x, nu);
  if (x > 9) return x > 745 ? 0 : sp_ke(x, nu) * exp(-x);
  return sp_ke(x, nu) * exp(-x);
}

double ts_rt_sp_bessel_k0(double x) { return sp_k(x, 0, false); }
double ts_rt_sp_bessel_k1(double x) { return sp_k(x, 1, false); }
double ts_rt_sp_bessel_k0e(double x) { return sp_k(x, 0, true); }
double ts_rt_sp_bessel_k1e(double x) { return sp_k(x, 1, true); }

/* -------------------------------------------------------- Bessel J, Y */

/* Hankel's P and Q (A&S 9.2.9, 9.2.10) for nu = 0, 1 at x > 0. */
static void sp_pq(double x, int nu, double *p, double *q) {
  double mu = 4.0 * nu * nu, t = 1, last = INFINITY;
  double sp = 1, sq = 0;
  for (int k = 1; k < 200; k++) {
    double nt = t * (mu - (2.0 * k - 1) * (2.0 * k - 1)) / (8.0 * k * x);
    if (fabs(nt) >= last) break;
    last = fabs(nt);
    t = nt;
    /* a_k / x^k enters P (k even) or Q (k odd) with sign (-1)^(k/2) */
    int m = k / 2;
    double v = (m & 1) ? -t : t;
    if (k & 1) sq += v;
    else sp += v;
    if (fabs(t) < 1e-17) break;
  }
  *p = sp;
  *q = sq;
}

/* J_nu(x) and Y_nu(x) for x > 0, nu = 0, 1. */
static void sp_jy(double x, int nu, double *j, double *y) {
  if (x > 12) {
    double p, q;
    sp_pq(x, nu, &p, &q);
    double chi = x - (nu / 2.0 + 0.25) * M_PI;
    double c = cos(chi), s = sin(chi), f = sqrt(2 / (M_PI * x));
    *j = f * (p * c - q * s);
    *y = f * (p * s + q * c);
    return;
  }
  double q = -x * x / 4, l = log(x / 2), t = 1, hk = 0;
  if (nu == 0) {
    double j0 = 1, s = -SP_EULER; /* k = 0: psi(1) */
    for (int k = 1; k < 200; k++) {
      t *= q / ((double)k * k);
      hk += 1.0 / k;
      j0 += t;
      s += (hk - SP_EULER) * t;
      if (fabs(t) < 1e-18) break; /* |J0| is not small where it counts: atol */
    }
    *j = j0;
    *y = 2 / M_PI * (l * j0 - s);
  } else {
    double hk1 = 1, j1 = 1, s = 1 - 2 * SP_EULER;
    for (int k = 1; k < 200; k++) {
      t *= q / ((double)k * (k + 1));
      hk += 1.0 / k;
      hk1 += 1.0 / (k + 1);
      j1 += t;
      s += (hk + hk1 - 2 * SP_EULER) * t;
      if (fabs(t) < 1e-18) break;
    }
    j1 *= x / 2;
    *j = j1;
    *y = -2 / (M_PI * x) + 2 / M_PI * l * j1 - x / (2 * M_PI) * s;
  }
}

double ts_rt_sp_bessel_j0(double x) {
  if (isnan(x)) return x;
  double ax = fabs(x), j, y;
  if (isinf(ax)) return NAN;
  if (ax == 0) return 1;
  sp_jy(ax, 0, &j, &y);
  return j;
}

double ts_rt_sp_bessel_j1(double x) {
  if (isnan(x)) return x;
  double ax = fabs(x), j, y;
  if (isinf(ax)) return NAN;
  if (ax == 0) return x;
  sp_jy(ax, 1, &j, &y);
  return x < 0 ? -j : j;
}

double ts_rt_sp_bessel_y0(double x) {
  if (isnan(x)) return x;
  if (x < 0) return NAN;
  if (x == 0) return -INFINITY;
  if (isinf(x)) return NAN;
  double j, y;
  sp_jy(x, 0, &j, &y);
  return y;
}

double ts_rt_sp_bessel_y1(double x) {
  if (isnan(x)) return x;
  if (x < 0) return NAN;
  if (x == 0) return -INFINITY;
  if (isinf(x)) return NAN;
  double j, y;
  sp_jy(x, 1, &j, &y);
  return y;
}

double ts_rt_sp_spherical_j0(double x) {
  if (isinf(x)) return 0;
  if (fabs(x) < 0.5) {
    double z = x * x;
    return 1 - z / 6 * (1 - z / 20 * (1 - z / 42 * (1 - z / 72 * (1 - z / 110 * (1 - z / 156)))));
  }
  return sin(x) / x;
}

/* --------------------------------------------------------------- Airy */

double ts_rt_sp_airy_ai(double x) {
  if (isnan(x)) return x;
  if (isinf(x)) return NAN;
  if (x > 5) {
    if (x > 105) return 0;
    double z = 2.0 / 3 * x * sqrt(x);
    /* e^-z / (2 sqrt(pi) x^(1/4)) sum (-1)^k u_k / z^k */
    double u = 1, s = 1, last = INFINITY;
    for (int k = 1; k < 100; k++) {
      double nu = u * -(6.0 * k - 5) * (6.0 * k - 3) * (6.0 * k - 1) / ((2.0 * k - 1) * 216.0 * k * z);
      if (fabs(nu) >= last) break;
      last = fabs(nu);
      u = nu;
      s += u;
      if (fabs(u) < 1e-17 * fabs(s)) break;
    }
    return exp(-z) / (2 * SP_SQRTPI * sqrt(sqrt(x))) * s;
  }
  if (x < -8) {
    double ax = -x, z = 2.0 / 3 * ax * sqrt(ax);
    /* (sin(z + pi/4) P - cos(z + pi/4) Q) / (sqrt(pi) |x|^(1/4)) with
     * P = sum (-1)^k u_2k / z^2k, Q = sum (-1)^k u_2k+1 / z^2k+1 */
    double u = 1, p = 1, q = 0, last = INFINITY;
    for (int k = 1; k < 100; k++) {
      double nu = u * (6.0 * k - 5) * (6.0 * k - 3) * (6.0 * k - 1) / ((2.0 * k - 1) * 216.0 * k * z);
      if (fabs(nu) >= last) break;
      last = fabs(nu);
      u = nu;
      int m = k / 2;
      double v = (m & 1) ? -u : u;
      if (k & 1) q += v;
      else p += v;
      if (fabs(u) < 1e-17) break;
    }
    double a = z + M_PI / 4;
    return (sin(a) * p - cos(a) * q) / (SP_SQRTPI * sqrt(sqrt(ax)));
  }
  /* Ai(x) = c1 f(x) - c2 g(x) */
  const double c1 = 0.355028053887817239260, c2 = 0.258819403792806798405;
  double x3 = x * x * x, f = 1, g = x, tf = 1, tg = x;
  for (int k = 1; k < 200; k++) {
    tf *= x3 / ((3.0 * k - 1) * (3.0 * k));
    tg *= x3 / ((3.0 * k) * (3.0 * k + 1));
    f += tf;
    g += tg;
    if (fabs(tf) < 1e-18 * fabs(f) && fabs(tg) < 1e-18 * (fabs(g) + 1e-300)) break;
  }
  return c1 * f - c2 * g;
}

/* -------------------------------------------------- orthogonal polynomials */

/* The degree as ATen casts it (NaN and out of range: negative). */
static int64_t sp_deg(double n) {
  if (!(n > -9223372036854775808.0 && n < 9223372036854775808.0)) return INT64_MIN;
  return (int64_t)n;
}

double ts_rt_sp_cheb_t(double x, double dn) {
  int64_t n = sp_deg(dn);
  if (n < 0) return 0;
  if (fabs(x) == 1) return (x > 0 || n % 2 == 0) ? 1 : -1;
  if (n > 6 && fabs(x) < 1) return cos((double)n * acos(x));
  if (n == 0) return 1;
  if (n == 1) return x;
  double p = 1, q = x, r;
  for (int64_t k = 2; k <= n && !isnan(q); k++) {
    r = (x + x) * q - p;
    p = q;
    q = r;
  }
  return q;
}

double ts_rt_sp_cheb_u(double x, double dn) {
  int64_t n = sp_deg(dn);
  if (n < 0) return 0;
  if (fabs(x) == 1) return (x > 0 || n % 2 == 0) ? (double)(n + 1) : -(double)(n + 1);
  if (n > 8 && fabs(x) < 1) {
    double a = acos(x);
    if (sin(a) != 0) return sin((double)(n + 1) * a) / sin(a);
    return (double)(n + 1) * cos((double)(n + 1) * a) / x;
  }
  if (n == 0) return 1;
  if (n == 1) return x + x;
  double p = 1, q = x + x, r;
  for (int64_t k = 2; k <= n && !isnan(q); k++) {
    r = (x + x) * q - p;
    p = q;
    q = r;
  }
  return q;
}

double ts_rt_sp_cheb_v(double x, double dn) {
  int64_t n = sp_deg(dn);
  if (n < 0) return 0;
  if (fabs(x) == 1) {
    if (x > 0) return 1;
    return n % 2 == 0 ? (double)(n + n + 1) : -(double)(n + n + 1);
  }
  if (n > 8 && fabs(x) < 1) {
    double a = acos(x);
    if (sin(a / 2) != 1) return cos(((double)n + 0.5) * a) / cos(a / 2);
    return n % 2 == 0 ? (double)(n + n + 1) : -(double)(n + n + 1);
  }
  if (n == 0) return 1;
  if (n == 1) return x + x - 1;
  double p = 1, q = x + x - 1, r;
  for (int64_t k = 2; k <= n && !isnan(q); k++) {
    r = (x + x) * q - p;
    p = q;
    q = r;
  }
  return q;
}

double ts_rt_sp_cheb_w(double x, double dn) {
  int64_t n = sp_deg(dn);
  if (n < 0) return 0;
  if (fabs(x) == 1) {
    if (x > 0) return (double)(n + n + 1);
    return n % 2 == 0 ? 1 : -1;
  }
  if (n > 8 && fabs(x) < 1) {
    double a = acos(x);
    if (cos(a / 2) != 1) return sin(((double)n + 0.5) * a) / sin(a / 2);
    if (x > 0) return (double)(n + n + 1);
    return n % 2 == 0 ? 1 : -1;
  }
  if (n == 0) return 1;
  if (n == 1) return x + x + 1;
  double p = 1, q = x + x + 1, r;
  for (int64_t k = 2; k <= n && !isnan(q); k++) {
    r = (x + x) * q - p;
    p = q;
    q = r;
  }
  return q;
}

/* The shifted polynomials are the plain ones at 2x - 1. */
double ts_rt_sp_scheb_t(double x, double n) { return ts_rt_sp_cheb_t(x + x - 1, n); }
double ts_rt_sp_scheb_u(double x, double n) { return ts_rt_sp_cheb_u(x + x - 1, n); }
double ts_rt_sp_scheb_v(double x, double n) { return ts_rt_sp_cheb_v(x + x - 1, n); }
double ts_rt_sp_scheb_w(double x, double n) { return ts_rt_sp_cheb_w(x + x - 1, n); }

double ts_rt_sp_hermite_h(double x, double dn) {
  int64_t n = sp_deg(dn);
  if (n < 0) return 0;
  if (n == 0) return 1;
  if (n == 1) return x + x;
  double p = 1, q = x + x, r;
  for (int64_t k = 2; k < n + n && !isnan(q); k += 2) {
    r = (x + x) * q - (double)k * p;
    p = q;
    q = r;
  }
  return q;
}

double ts_rt_sp_hermite_he(double x, double dn) {
  int64_t n = sp_deg(dn);
  if (n < 0) return 0;
  if (n == 0) return 1;
  if (n == 1) return x;
  double p = 1, q = x, r;
  for (int64_t k = 1; k < n && !isnan(q); k++) {
    r = x * q - (double)k * p;
    p = q;
    q = r;
  }
  return q;
}

double ts_rt_sp_laguerre_l(double x, double dn) {
  int64_t n = sp_deg(dn);
  if (n < 0) return 0;
  if (fabs(x) == 0) return 1;
  if (n == 0) return 1;
  if (n == 1) return 1 - x;
  double p = 1, q = 1 - x, r;
  for (int64_t k = 1; k < n; k++) {
    r = (((double)(k + k) + (1 - x)) * q - (double)k * p) / (double)(k + 1);
    p = q;
    q = r;
  }
  return q;
}

double ts_rt_sp_legendre_p(double x, double dn) {
  int64_t n = sp_deg(dn);
  if (n < 0) return 0;
  if (fabs(x) == 1) return (x > 0 || n % 2 == 0) ? 1 : -1;
  if (n == 0) return 1;
  if (n == 1) return x;
  double p = 1, q = x, r;
  for (int64_t k = 1; k < n; k++) {
    r = ((double)(k + k + 1) * x * q - (double)k * p) / (double)(k + 1);
    p = q;
    q = r;
  }
  return q;
}

/* ------------------------------------------------------------- kernels */

/* frexp(Tensor self) -> (mantissa, exponent): the mantissa in self's
 * dtype, in [0.5, 1) in magnitude (exact in every floating dtype), the
 * exponent int32; 0, inf and NaN give themselves and exponent 0. */
static bool sp_k_frexp(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *self = NULL;
  if (!ts_rt_arg_tensor(c, call, 0, &self)) return false;
  ts_dtype dt = (ts_dtype)self->dtype;
  if (!ts_dtype_is_float(dt)) return ts_rt_fail(c, "torch.frexp() only supports floating-point dtypes");
  ts_rt_tensor *x = ts_rt_tensor_contiguous(c, self);
  if (!x) return false;
  ts_rt_tensor *m = ts_rt_tensor_new(c, dt, self->ndim, self->sizes, false);
  ts_rt_tensor *e = m ? ts_rt_tensor_new(c, TS_DT_INT32, self->ndim, self->sizes, false) : NULL;
  if (!e) {
    ts_rt_tensor_release(m);
    ts_rt_tensor_release(x);
    return false;
  }
  int64_t n = ts_rt_tensor_numel(x);
  const char *src = ts_rt_tensor_data(x);
  char *dm = ts_rt_tensor_data(m);
  int32_t *de = ts_rt_tensor_data(e);
  for (int64_t i = 0; i < n; i++) {
    int ex = 0;
    switch (dt) {
    case TS_DT_FLOAT64: ((double *)(void *)dm)[i] = frexp(((const double *)(const void *)src)[i], &ex); break;
    case TS_DT_FLOAT32: ((float *)(void *)dm)[i] = frexpf(((const float *)(const void *)src)[i], &ex); break;
    case TS_DT_FLOAT16:
      ((uint16_t *)(void *)dm)[i] =
          ts_rt_float_to_half(frexpf(ts_rt_half_to_float(((const uint16_t *)(const void *)src)[i]), &ex));
      break;
    default: /* bfloat16 */
      ((uint16_t *)(void *)dm)[i] =
          ts_rt_float_to_bf16(frexpf(ts_rt_bf16_to_float(((const uint16_t *)(const void *)src)[i]), &ex));
      break;
    }
    de[i] = ex;
  }
  ts_rt_tensor_release(x);
  call->out[0] = ts_iv_tensor(m);
  call->out[1] = ts_iv_tensor(e);
  return true;
}

/* positive(self) is self. */
static bool sp_k_positive(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *self = NULL;
  if (!ts_rt_arg_tensor(c, call, 0, &self)) return false;
  if (self->dtype == TS_DT_BOOL) return ts_rt_fail(c, "The `+` operator, on a bool tensor is not supported.");
  ts_rt_tensor_retain(self);
  call->out[0] = ts_iv_tensor(self);
  return true;
}

const ts_rt_kernel_def ts_rt_kernels_special[] = {
    {"aten::frexp.Tensor", sp_k_frexp},
    {"aten::positive", sp_k_positive},
    {NULL, NULL},
};
