/* runtime/kernels/lapack.h: the LAPACK routines the kernels call (linalg.c;
 * stats.c's singular values, blas2.c's matrix inverse), as the
 * Fortran symbols OpenBLAS exports (Debian's libopenblas carries LAPACK;
 * PyTorch 1.13 on Debian calls the same library through liblapack.so.3).
 * Column-major matrices, every argument by address, 32-bit integers (the
 * LP64 interface), and after the arguments the hidden lengths of the
 * character arguments that gfortran-compiled routines expect (ignored by
 * OpenBLAS's C ones). Internal to runtime/. */
#ifndef TS_RT_KERNELS_LAPACK_H
#define TS_RT_KERNELS_LAPACK_H

#include <stddef.h>

typedef int ts_la_int;

void sgetrf_(const ts_la_int *m, const ts_la_int *n, float *a, const ts_la_int *lda, ts_la_int *ipiv,
             ts_la_int *info);
void dgetrf_(const ts_la_int *m, const ts_la_int *n, double *a, const ts_la_int *lda, ts_la_int *ipiv,
             ts_la_int *info);
void dgesv_(const ts_la_int *n, const ts_la_int *nrhs, double *a, const ts_la_int *lda, ts_la_int *ipiv, double *b,
            const ts_la_int *ldb, ts_la_int *info);
void sgetrs_(const char *trans, const ts_la_int *n, const ts_la_int *nrhs, const float *a, const ts_la_int *lda,
             const ts_la_int *ipiv, float *b, const ts_la_int *ldb, ts_la_int *info, size_t ltrans);
void dgetrs_(const char *trans, const ts_la_int *n, const ts_la_int *nrhs, const double *a, const ts_la_int *lda,
             const ts_la_int *ipiv, double *b, const ts_la_int *ldb, ts_la_int *info, size_t ltrans);
void spotrf_(const char *uplo, const ts_la_int *n, float *a, const ts_la_int *lda, ts_la_int *info, size_t luplo);
void dpotrf_(const char *uplo, const ts_la_int *n, double *a, const ts_la_int *lda, ts_la_int *info, size_t luplo);
void spotrs_(const char *uplo, const ts_la_int *n, const ts_la_int *nrhs, const float *a, const ts_la_int *lda,
             float *b, const ts_la_int *ldb, ts_la_int *info, size_t luplo);
void dpotrs_(const char *uplo, const ts_la_int *n, const ts_la_int *nrhs, const double *a, const ts_la_int *lda,
             double *b, const ts_la_int *ldb, ts_la_int *info, size_t luplo);
void spotri_(const char *uplo, const ts_la_int *n, float *a, const ts_la_int *lda, ts_la_int *info, size_t luplo);
void dpotri_(const char *uplo, const ts_la_int *n, double *a, const ts_la_int *lda, ts_la_int *info, size_t luplo);
void ssyevd_(const char *jobz, const char *uplo, const ts_la_int *n, float *a, const ts_la_int *lda, float *w,
             float *work, const ts_la_int *lwork, ts_la_int *iwork, const ts_la_int *liwork, ts_la_int *info,
             size_t ljobz, size_t luplo);
void dsyevd_(const char *jobz, const char *uplo, const ts_la_int *n, double *a, const ts_la_int *lda, double *w,
             double *work, const ts_la_int *lwork, ts_la_int *iwork, const ts_la_int *liwork, ts_la_int *info,
             size_t ljobz, size_t luplo);
/* cheevd/zheevd: a and work complex (interleaved), w and rwork real. */
void cheevd_(const char *jobz, const char *uplo, const ts_la_int *n, float *a, const ts_la_int *lda, float *w,
             float *work, const ts_la_int *lwork, float *rwork, const ts_la_int *lrwork, ts_la_int *iwork,
             const ts_la_int *liwork, ts_la_int *info, size_t ljobz, size_t luplo);
void zheevd_(const char *jobz, const char *uplo, const ts_la_int *n, double *a, const ts_la_int *lda, double *w,
             double *work, const ts_la_int *lwork, double *rwork, const ts_la_int *lrwork, ts_la_int *iwork,
             const ts_la_int *liwork, ts_la_int *info, size_t ljobz, size_t luplo);
void sgeev_(const char *jobvl, const char *jobvr, const ts_la_int *n, float *a, const ts_la_int *lda, float *wr,
            float *wi, float *vl, const ts_la_int *ldvl, float *vr, const ts_la_int *ldvr, float *work,
            const ts_la_int *lwork, ts_la_int *info, size_t ljobvl, size_t ljobvr);
void dgeev_(const char *jobvl, const char *jobvr, const ts_la_int *n, double *a, const ts_la_int *lda, double *wr,
            double *wi, double *vl, const ts_la_int *ldvl, double *vr, const ts_la_int *ldvr, double *work,
            const ts_la_int *lwork, ts_la_int *info, size_t ljobvl, size_t ljobvr);
/* The complex ones take interleaved (re, im) pairs: a, w, vl, vr and work
 * are complex, rwork (2n) real. */
void cgeev_(const char *jobvl, const char *jobvr, const ts_la_int *n, float *a, const ts_la_int *lda, float *w,
            float *vl, const ts_la_int *ldvl, float *vr, const ts_la_int *ldvr, float *work, const ts_la_int *lwork,
            float *rwork, ts_la_int *info, size_t ljobvl, size_t ljobvr);
void zgeev_(const char *jobvl, const char *jobvr, const ts_la_int *n, double *a, const ts_la_int *lda, double *w,
            double *vl, const ts_la_int *ldvl, double *vr, const ts_la_int *ldvr, double *work, const ts_la_int *lwork,
            double *rwork, ts_la_int *info, size_t ljobvl, size_t ljobvr);
void sgesdd_(const char *jobz, const ts_la_int *m, const ts_la_int *n, float *a, const ts_la_int *lda, float *s,
             float *u, const ts_la_int *ldu, float *vt, const ts_la_int *ldvt, float *work, const ts_la_int *lwork,
             ts_la_int *iwork, ts_la_int *info, size_t ljobz);
void dgesdd_(const char *jobz, const ts_la_int *m, const ts_la_int *n, double *a, const ts_la_int *lda, double *s,
             double *u, const ts_la_int *ldu, double *vt, const ts_la_int *ldvt, double *work, const ts_la_int *lwork,
             ts_la_int *iwork, ts_la_int *info, size_t ljobz);
void sgeqrf_(const ts_la_int *m, const ts_la_int *n, float *a, const ts_la_int *lda, float *tau, float *work,
             const ts_la_int *lwork, ts_la_int *info);
void dgeqrf_(const ts_la_int *m, const ts_la_int *n, double *a, const ts_la_int *lda, double *tau, double *work,
             const ts_la_int *lwork, ts_la_int *info);
void sorgqr_(const ts_la_int *m, const ts_la_int *n, const ts_la_int *k, float *a, const ts_la_int *lda,
             const float *tau, float *work, const ts_la_int *lwork, ts_la_int *info);
void dorgqr_(const ts_la_int *m, const ts_la_int *n, const ts_la_int *k, double *a, const ts_la_int *lda,
             const double *tau, double *work, const ts_la_int *lwork, ts_la_int *info);
void sormqr_(const char *side, const char *trans, const ts_la_int *m, const ts_la_int *n, const ts_la_int *k,
             const float *a, const ts_la_int *lda, const float *tau, float *c, const ts_la_int *ldc, float *work,
             const ts_la_int *lwork, ts_la_int *info, size_t lside, size_t ltrans);
void dormqr_(const char *side, const char *trans, const ts_la_int *m, const ts_la_int *n, const ts_la_int *k,
             const double *a, const ts_la_int *lda, const double *tau, double *c, const ts_la_int *ldc, double *work,
             const ts_la_int *lwork, ts_la_int *info, size_t lside, size_t ltrans);
void sgelsy_(const ts_la_int *m, const ts_la_int *n, const ts_la_int *nrhs, float *a, const ts_la_int *lda, float *b,
             const ts_la_int *ldb, ts_la_int *jpvt, const float *rcond, ts_la_int *rank, float *work,
             const ts_la_int *lwork, ts_la_int *info);
void dgelsy_(const ts_la_int *m, const ts_la_int *n, const ts_la_int *nrhs, double *a, const ts_la_int *lda,
             double *b, const ts_la_int *ldb, ts_la_int *jpvt, const double *rcond, ts_la_int *rank, double *work,
             const ts_la_int *lwork, ts_la_int *info);
void sgels_(const char *trans, const ts_la_int *m, const ts_la_int *n, const ts_la_int *nrhs, float *a,
            const ts_la_int *lda, float *b, const ts_la_int *ldb, float *work, const ts_la_int *lwork, ts_la_int *info,
            size_t ltrans);
void dgels_(const char *trans, const ts_la_int *m, const ts_la_int *n, const ts_la_int *nrhs, double *a,
            const ts_la_int *lda, double *b, const ts_la_int *ldb, double *work, const ts_la_int *lwork,
            ts_la_int *info, size_t ltrans);
void sgelsd_(const ts_la_int *m, const ts_la_int *n, const ts_la_int *nrhs, float *a, const ts_la_int *lda, float *b,
             const ts_la_int *ldb, float *s, const float *rcond, ts_la_int *rank, float *work, const ts_la_int *lwork,
             ts_la_int *iwork, ts_la_int *info);
void dgelsd_(const ts_la_int *m, const ts_la_int *n, const ts_la_int *nrhs, double *a, const ts_la_int *lda,
             double *b, const ts_la_int *ldb, double *s, const double *rcond, ts_la_int *rank, double *work,
             const ts_la_int *lwork, ts_la_int *iwork, ts_la_int *info);
void sgelss_(const ts_la_int *m, const ts_la_int *n, const ts_la_int *nrhs, float *a, const ts_la_int *lda, float *b,
             const ts_la_int *ldb, float *s, const float *rcond, ts_la_int *rank, float *work, const ts_la_int *lwork,
             ts_la_int *info);
void dgelss_(const ts_la_int *m, const ts_la_int *n, const ts_la_int *nrhs, double *a, const ts_la_int *lda,
             double *b, const ts_la_int *ldb, double *s, const double *rcond, ts_la_int *rank, double *work,
             const ts_la_int *lwork, ts_la_int *info);
void ssytrf_(const char *uplo, const ts_la_int *n, float *a, const ts_la_int *lda, ts_la_int *ipiv, float *work,
             const ts_la_int *lwork, ts_la_int *info, size_t luplo);
void dsytrf_(const char *uplo, const ts_la_int *n, double *a, const ts_la_int *lda, ts_la_int *ipiv, double *work,
             const ts_la_int *lwork, ts_la_int *info, size_t luplo);
void ssytrs_(const char *uplo, const ts_la_int *n, const ts_la_int *nrhs, const float *a, const ts_la_int *lda,
             const ts_la_int *ipiv, float *b, const ts_la_int *ldb, ts_la_int *info, size_t luplo);
void dsytrs_(const char *uplo, const ts_la_int *n, const ts_la_int *nrhs, const double *a, const ts_la_int *lda,
             const ts_la_int *ipiv, double *b, const ts_la_int *ldb, ts_la_int *info, size_t luplo);
void strsm_(const char *side, const char *uplo, const char *transa, const char *diag, const ts_la_int *m,
            const ts_la_int *n, const float *alpha, const float *a, const ts_la_int *lda, float *b,
            const ts_la_int *ldb, size_t l1, size_t l2, size_t l3, size_t l4);
void dtrsm_(const char *side, const char *uplo, const char *transa, const char *diag, const ts_la_int *m,
            const ts_la_int *n, const double *alpha, const double *a, const ts_la_int *lda, double *b,
            const ts_la_int *ldb, size_t l1, size_t l2, size_t l3, size_t l4);

#endif
