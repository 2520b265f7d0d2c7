/* Shared test helpers: cmocka includes, a log capture, paths to the source tree. */
#ifndef ISSIM_TESTUTIL_H
#define ISSIM_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "issim/core.h"
#include "issim/collision.h"
#include "issim/math.h"
#include "issim/sim.h"

/* Installs a handler that keeps the last messages (thread-safe) instead of printing. */
void testlog_capture(void);
void testlog_release(void);
/* Number of captured messages at level >= level containing needle (NULL: any). */
int testlog_count(IssimLogLevel level, const char *needle);
void testlog_clear(void);

/* Absolute path of a file in the source tree (ISSIM_SOURCE_DIR, or the working directory).
 * Returns a static buffer per call slot (4 rotating buffers). */
const char *test_source_path(const char *relative);
/* Runs the issim executable ($ISSIM_BINARY, else build/issim) with args (shell words) from the
 * source directory, stdout and stderr into out (NUL-terminated, truncated to size). Returns its
 * exit status, -1 when it did not exit. */
int test_run_issim(const char *args, char *out, size_t size);

/* The seeds' bar thrown at the floor: scene (point_drop.lua or bar_drop_horizontal.lua) run
 * headless without gravity, the bar's lowest point TEST_THROW_GAP above the floor (tip_offset:
 * centre to lowest point) moving down at v, with the --set overrides in sets[0..set_count)
 * (the model and its parameters) applied first; the run lasts until the impact plus tail
 * seconds. Returns the summary (free it). */
#define TEST_THROW_GAP 1.0137e-3
SimSummary *test_thrown_bar(const char *scene, double tip_offset, double v, const char *const *sets,
                            int set_count, double tail);
/* Path of a fresh temporary file name under /tmp (not created). Rotating static buffers. */
const char *test_temp_path(const char *suffix);

/* Seeded xorshift64* generator: deterministic random tests. Seed with a non-zero value. */
typedef struct TestRng {
    uint64_t s;
} TestRng;
double test_rng_uniform(TestRng *r);                     /* [0, 1) */
double test_rng_range(TestRng *r, double lo, double hi); /* [lo, hi) */
Quat test_rng_rotation(TestRng *r);                      /* uniform on SO(3) (Shoemake) */

/* The octahedron |x| + |y| + |z| <= s as a Hull built by hand (no hull_create needed). */
typedef struct TestOctahedron {
    Hull hull;
    Vec3 v[6];
    HullFace f[8];
    int fv[24];
} TestOctahedron;
void test_octahedron(TestOctahedron *o, double s);

#define assert_near(a, b, tol)                                                                     \
    do {                                                                                           \
        double a_ = (a), b_ = (b), t_ = (tol);                                                     \
        if (!(fabs(a_ - b_) <= t_))                                                                \
            fail_msg("%s = %.12g, expected %.12g within %.3g", #a, a_, b_, t_);                    \
    } while (0)

#endif
