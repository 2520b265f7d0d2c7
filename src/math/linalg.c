/* Dense linear algebra through LAPACKE (column-major, caller-owned arrays).
 *
 * Every entry point calls linalg_init first (a pthread_once, one atomic load once done), so a
 * caller that forgets it still gets a single-threaded OpenBLAS without its pool thread. The
 * column-major LAPACKE wrappers used here do not allocate; the symmetric eigensolver uses a stack
 * workspace for n <= LINALG_STACK_N and lets LAPACKE allocate above that.
 */
#include "issim/math.h"

#include <lapacke.h>
#include <pthread.h>

/* Exported by libopenblas; not declared in a public header we can rely on (cblas.h differs
 * between the pthread, openmp and serial builds). */
void openblas_set_num_threads(int num_threads);

/* OpenBLAS's pthread build (Debian's libopenblas0-pthread) starts its pool thread in the
 * library's constructor, before main, where setting OPENBLAS_NUM_THREADS is too late; the thread
 * then spins in sched_yield for about 0.1 s before it sleeps, taking a core from issim's own
 * threads (a sweep's workers, the engine, the 1 kHz haptic servo: docs/performance.md, "Sweep
 * start-up"). issim does its parallel work itself and its matrices are small, so BLAS is pinned
 * to one thread (first: with one thread it never starts the pool again) and the pool is stopped
 * for the whole process. blas_thread_shutdown_ is exported by libopenblas.so.0
 * (driver/others/blas_server.c; `nm -D`) but declared in no header: weak, so that a BLAS without
 * it still links, and the call is skipped. */
extern int blas_thread_shutdown_(void) __attribute__((weak));

enum { LINALG_STACK_N = 32 };

static pthread_once_t linalg_once = PTHREAD_ONCE_INIT;

static void linalg_init_once(void) {
    openblas_set_num_threads(1);
    if (blas_thread_shutdown_)
        blas_thread_shutdown_();
}

void linalg_init(void) {
    pthread_once(&linalg_once, linalg_init_once);
}

int linalg_solve(int n, int nrhs, double *a, int *ipiv, double *b) {
    linalg_init();
    return LAPACKE_dgesv(LAPACK_COL_MAJOR, n, nrhs, a, n, ipiv, b, n);
}

int linalg_solve_spd(int n, int nrhs, double *a, double *b) {
    linalg_init();
    return LAPACKE_dposv(LAPACK_COL_MAJOR, 'L', n, nrhs, a, n, b, n);
}

int linalg_symmetric_eigen(int n, double *a, double *eigenvalues, bool want_vectors) {
    linalg_init();
    char jobz = want_vectors ? 'V' : 'N';
    if (n >= 1 && n <= LINALG_STACK_N) {
        /* 3n - 1 is dsyev's minimum workspace and, below the blocking crossover (32), also its
         * optimum: the tridiagonal reduction runs unblocked there. */
        double work[3 * LINALG_STACK_N - 1];
        return LAPACKE_dsyev_work(LAPACK_COL_MAJOR, jobz, 'L', n, a, n, eigenvalues, work,
                                  3 * n - 1);
    }
    return LAPACKE_dsyev(LAPACK_COL_MAJOR, jobz, 'L', n, a, n, eigenvalues);
}
