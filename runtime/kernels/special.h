/* runtime/kernels/special.h: scalar special functions (runtime/kernels/
 * special.c), in double. The PW_SP and PW_SP2 primitives of ir/ops.def's
 * formulas name them without the prefix: runtime/kernels/pointwise.c calls
 * them directly, codegen/fusion.c's fused CPU code by name (the runtime
 * ships inside every generated object), so their names and double ->
 * double signatures are an interface of generated code.
 *
 * Values as PyTorch 1.13's CPU kernels give them (ATen's Math.h), edge
 * cases included; where ATen's float kernels compute in float, these
 * compute in double and round once. Internal to runtime/. */
#ifndef TS_RT_KERNELS_SPECIAL_H
#define TS_RT_KERNELS_SPECIAL_H

double ts_rt_sp_digamma(double x);
double ts_rt_sp_trigamma(double x);
/* polygamma(n, x), n >= 0 an integer (the caller refuses negative n) */
double ts_rt_sp_polygamma(double n, double x);
/* sum_{j<p} lgamma(x - j/2) + p(p-1)/4 log(pi) */
double ts_rt_sp_mvlgamma(double x, double p);
/* Hurwitz zeta(x, q) = sum_k (k + q)^-x */
double ts_rt_sp_zeta(double x, double q);
/* the regularized incomplete gamma functions P(a, x) and Q(a, x) */
double ts_rt_sp_igamma(double a, double x);
double ts_rt_sp_igammac(double a, double x);
double ts_rt_sp_erfinv(double y);
double ts_rt_sp_erfcx(double x);
double ts_rt_sp_ndtri(double p);
double ts_rt_sp_log_ndtr(double x);
/* modified Bessel functions of the first kind; e: scaled by exp(-|x|) */
double ts_rt_sp_i0(double x);
double ts_rt_sp_i0e(double x);
double ts_rt_sp_i1(double x);
double ts_rt_sp_i1e(double x);
/* Bessel functions of the first and second kind */
double ts_rt_sp_bessel_j0(double x);
double ts_rt_sp_bessel_j1(double x);
double ts_rt_sp_bessel_y0(double x);
double ts_rt_sp_bessel_y1(double x);
/* modified Bessel functions of the second kind; scaled: by exp(x) */
double ts_rt_sp_bessel_k0(double x);
double ts_rt_sp_bessel_k1(double x);
double ts_rt_sp_bessel_k0e(double x);
double ts_rt_sp_bessel_k1e(double x);
double ts_rt_sp_spherical_j0(double x);
double ts_rt_sp_airy_ai(double x);
/* orthogonal polynomials of degree n (truncated to an integer, as ATen
 * casts it) at x */
double ts_rt_sp_cheb_t(double x, double n);
double ts_rt_sp_cheb_u(double x, double n);
double ts_rt_sp_cheb_v(double x, double n);
double ts_rt_sp_cheb_w(double x, double n);
double ts_rt_sp_scheb_t(double x, double n);
double ts_rt_sp_scheb_u(double x, double n);
double ts_rt_sp_scheb_v(double x, double n);
double ts_rt_sp_scheb_w(double x, double n);
double ts_rt_sp_hermite_h(double x, double n);
double ts_rt_sp_hermite_he(double x, double n);
double ts_rt_sp_laguerre_l(double x, double n);
double ts_rt_sp_legendre_p(double x, double n);

#endif
