/* The collision manager: the relationship manager of 000 App. B.4.3, on its own thread. It
 * watches the state (through a pose source that reads the registry's snapshots), runs the
 * collision world on the newest state, and publishes each result through a triple buffer.
 *
 * Threading contract. The manager thread is the only writer of the back slot and of `world`;
 * the consumer (the engine thread) is the only reader, and owns the front slot between two
 * takes. The middle slot changes hands by an atomic exchange of slot indices: the writer
 * exchanges back and middle and sets the "fresh" bit; the reader, when the bit is set,
 * exchanges front and middle. No lock guards the slots (the waits below only pace), the writer
 * never overwrites what the reader holds, and the reader always gets the newest complete report
 * (older unread ones are skipped: the engine matches contacts by id, so a skipped report
 * loses nothing but latency).
 *
 * Timing contract (docs/architecture.md): a report describes the state at report.t, which is
 * at most one collision update behind the engine's newest published state. The engine turns
 * the report's points into body-frame points with report.poses, and evaluates every depth from
 * its own current state, so staleness never delays a contact's force once the contact is known;
 * it only delays the discovery of new contacts, which the margin covers for bodies that move
 * less than the margin during one update. The engine bounds the lag: it waits for a newer report
 * when the one it merged last is more than two output steps old (engine_collide.c).
 *
 * Wake-ups. An idle manager waits on `wake` until the engine pokes it after publishing a state
 * (collision_manager_notify); an engine waiting for a report waits on `published_cond` until the
 * manager publishes. Both waits are bounded (MANAGER_WAIT_SLICE_S). A waker sets or reads its
 * flag under the waiter's mutex after making the work visible, and the waiter tests for work
 * under the same mutex before it waits, so a wake-up is never lost (an uncontended lock per
 * step and per report). Waits, not naps: a nap of fixed length caps the engine at a few steps
 * per nap whatever a step costs, which at a 20 us output step (bolt_and_hole.lua) is far below
 * real time (docs/performance.md has the figures).
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "issim/collision.h"

#define MANAGER_WAIT_SLICE_S 1e-3

typedef struct ReportSlot {
    CollisionReport report;
    Pose *poses;
    CollisionContact *contacts;
    int contact_capacity;
} ReportSlot;

enum { FRESH_BIT = 4 };

struct CollisionManager {
    CollisionWorld *world;
    CollisionPoseSource source;
    void *ctx;
    int body_count;
    Pose *poses;         /* source scratch, manager thread */
    double *reach_ahead; /* source scratch, manager thread */
    double last_t;
    uint64_t sequence;
    ReportSlot slots[3];
    int back, front;   /* owned by the writer / the reader */
    atomic_int middle; /* slot index | FRESH_BIT when unread */
    atomic_ullong published;
    pthread_t thread;
    bool running;
    atomic_bool stop;
    /* the manager's idle wait: poked by the engine (collision_manager_notify) */
    pthread_mutex_t wake_lock;
    pthread_cond_t wake;
    /* A state was published since the manager last looked: set by the producer, cleared by the
     * manager. `sleeping`: the manager is in (or about to enter) its timed wait on `wake`, set
     * and cleared by the manager under wake_lock; the producer signals only then. Both are
     * sequentially consistent: the producer stores poke then loads sleeping, the manager stores
     * sleeping then loads poke, so one of them sees the other's store and no poke is lost. */
    atomic_bool poke;
    atomic_bool sleeping;
    /* How long the manager polls `poke` before it sleeps (collision_manager_set_spin); written
     * only while the thread is stopped. */
    double spin_seconds;
    /* the engine's wait for a report: signalled by the manager after each publish */
    pthread_mutex_t published_lock;
    pthread_cond_t published_cond;
    bool reader_waiting; /* the engine waits in collision_manager_wait_published; under
                            published_lock */
};

CollisionManager *collision_manager_create(CollisionWorld *world, CollisionPoseSource source,
                                           void *ctx, IssimError *err) {
    CollisionManager *m = calloc(1, sizeof *m);
    if (!m) {
        issim_error_set(err, ISSIM_ERR_NOMEM, "out of memory creating the collision manager");
        return NULL;
    }
    m->world = world;
    m->source = source;
    m->ctx = ctx;
    m->body_count = collision_world_body_count(world);
    m->last_t = -INFINITY;
    /* The waits' deadlines on the monotonic clock: a wall-clock step (NTP) must not stretch a
     * 1 ms wait into hours. */
    pthread_condattr_t monotonic;
    pthread_condattr_init(&monotonic);
    pthread_condattr_setclock(&monotonic, CLOCK_MONOTONIC);
    pthread_mutex_init(&m->wake_lock, NULL);
    pthread_cond_init(&m->wake, &monotonic);
    pthread_mutex_init(&m->published_lock, NULL);
    pthread_cond_init(&m->published_cond, &monotonic);
    pthread_condattr_destroy(&monotonic);
    m->poses = calloc((size_t)m->body_count + 1, sizeof(Pose));
    m->reach_ahead = calloc((size_t)m->body_count + 1, sizeof(double));
    bool ok = m->poses != NULL && m->reach_ahead != NULL;
    for (int i = 0; i < 3 && ok; i++) {
        m->slots[i].poses = calloc((size_t)m->body_count + 1, sizeof(Pose));
        ok = m->slots[i].poses != NULL;
    }
    if (!ok) {
        collision_manager_destroy(m);
        issim_error_set(err, ISSIM_ERR_NOMEM, "out of memory creating the collision manager");
        return NULL;
    }
    for (int b = 0; b < m->body_count; b++)
        m->poses[b] = collision_world_pose(world, b);
    m->back = 0;
    atomic_store(&m->middle, 1);
    m->front = 2;
    return m;
}

void collision_manager_destroy(CollisionManager *m) {
    if (!m)
        return;
    collision_manager_stop(m);
    collision_world_destroy(m->world);
    for (int i = 0; i < 3; i++) {
        free(m->slots[i].poses);
        free(m->slots[i].contacts);
    }
    free(m->poses);
    free(m->reach_ahead);
    pthread_mutex_destroy(&m->wake_lock);
    pthread_cond_destroy(&m->wake);
    pthread_mutex_destroy(&m->published_lock);
    pthread_cond_destroy(&m->published_cond);
    free(m);
}

/* One update from the source into the back slot, then publish it. */
bool collision_manager_step(CollisionManager *m) {
    double t = m->last_t;
    if (!m->source(m->ctx, &t, m->poses, m->reach_ahead, m->body_count))
        return false;
    m->last_t = t;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int b = 0; b < m->body_count; b++) {
        collision_world_set_pose(m->world, b, m->poses[b]);
        collision_world_set_reach_ahead(m->world, b, m->reach_ahead[b]);
    }
    collision_world_update(m->world);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    int count = 0;
    const CollisionContact *contacts = collision_world_contacts(m->world, &count);
    ReportSlot *slot = &m->slots[m->back];
    if (count > slot->contact_capacity) {
        int cap = count > 2 * slot->contact_capacity ? count : 2 * slot->contact_capacity;
        CollisionContact *grown = realloc(slot->contacts, sizeof *grown * (size_t)cap);
        if (!grown) {
            issim_log(ISSIM_LOG_ERROR, "collision manager: out of memory for %d contacts", count);
            return false;
        }
        slot->contacts = grown;
        slot->contact_capacity = cap;
    }
    if (count > 0)
        memcpy(slot->contacts, contacts, sizeof *contacts * (size_t)count);
    memcpy(slot->poses, m->poses, sizeof(Pose) * (size_t)m->body_count);
    slot->report = (CollisionReport){
        .t = t,
        .sequence = ++m->sequence,
        .body_count = m->body_count,
        .poses = slot->poses,
        .contact_count = count,
        .contacts = slot->contacts,
        .next_id = collision_world_next_id(m->world),
        .update_seconds =
            (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec),
    };
    /* Release: the reader that sees the fresh bit sees the slot's contents. */
    int old = atomic_exchange_explicit(&m->middle, m->back | FRESH_BIT, memory_order_acq_rel);
    m->back = old & ~FRESH_BIT;
    atomic_fetch_add_explicit(&m->published, 1, memory_order_release);
    pthread_mutex_lock(&m->published_lock);
    if (m->reader_waiting)
        pthread_cond_signal(&m->published_cond);
    pthread_mutex_unlock(&m->published_lock);
    return true;
}

bool collision_manager_take(CollisionManager *m, CollisionReport *out) {
    if (!(atomic_load_explicit(&m->middle, memory_order_acquire) & FRESH_BIT))
        return false;
    int old = atomic_exchange_explicit(&m->middle, m->front, memory_order_acq_rel);
    m->front = old & ~FRESH_BIT;
    *out = m->slots[m->front].report;
    return true;
}

uint64_t collision_manager_published(const CollisionManager *m) {
    return atomic_load_explicit(&((CollisionManager *)m)->published, memory_order_relaxed);
}

/* An absolute CLOCK_MONOTONIC deadline `seconds` from now, for pthread_cond_timedwait. */
static struct timespec deadline_in(double seconds) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    long ns = ts.tv_nsec + (long)(seconds * 1e9);
    ts.tv_sec += ns / 1000000000L;
    ts.tv_nsec = ns % 1000000000L;
    return ts;
}

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static double monotonic_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Polls for a poke for up to spin_seconds; returns whether one came. */
static bool spin_for_poke(CollisionManager *m) {
    if (!(m->spin_seconds > 0.0))
        return false;
    double until = monotonic_seconds() + m->spin_seconds;
    for (;;) {
        for (int i = 0; i < 64; i++) {
            if (atomic_load(&m->poke) || atomic_load_explicit(&m->stop, memory_order_relaxed))
                return true;
            cpu_relax();
        }
        if (monotonic_seconds() > until)
            return false;
        sched_yield(); /* a runnable thread of the engine's pool on this core goes first */
    }
}

/* No new state: wait for the engine's poke, unless one came since the last look (the engine
 * published while the manager stepped). A poke that comes while the manager polls costs the
 * engine no system call (collision_manager_notify signals a sleeping manager only). */
static void wait_for_work(CollisionManager *m) {
    if (!spin_for_poke(m)) {
        pthread_mutex_lock(&m->wake_lock);
        atomic_store(&m->sleeping, true);
        if (!atomic_load(&m->poke) && !atomic_load(&m->stop)) {
            struct timespec until = deadline_in(MANAGER_WAIT_SLICE_S);
            pthread_cond_timedwait(&m->wake, &m->wake_lock, &until);
        }
        atomic_store(&m->sleeping, false);
        pthread_mutex_unlock(&m->wake_lock);
    }
    atomic_store(&m->poke, false);
}

static void *manager_thread(void *arg) {
    CollisionManager *m = arg;
    while (!atomic_load(&m->stop))
        if (!collision_manager_step(m))
            wait_for_work(m);
    return NULL;
}

void collision_manager_notify(CollisionManager *m) {
    atomic_store(&m->poke, true);
    if (!atomic_load(&m->sleeping))
        return; /* polling, or stepping: it looks at the source before it waits again */
    pthread_mutex_lock(&m->wake_lock);
    pthread_cond_signal(&m->wake);
    pthread_mutex_unlock(&m->wake_lock);
}

void collision_manager_set_spin(CollisionManager *m, double seconds) {
    m->spin_seconds = seconds > 0.0 ? seconds : 0.0;
}

bool collision_manager_wait_published(CollisionManager *m, uint64_t seen, double max_seconds) {
    pthread_mutex_lock(&m->published_lock);
    if (atomic_load_explicit(&m->published, memory_order_acquire) == seen) {
        m->reader_waiting = true;
        struct timespec until = deadline_in(max_seconds);
        pthread_cond_timedwait(&m->published_cond, &m->published_lock, &until);
        m->reader_waiting = false;
    }
    pthread_mutex_unlock(&m->published_lock);
    return atomic_load_explicit(&m->published, memory_order_acquire) != seen;
}

IssimStatus collision_manager_start(CollisionManager *m, IssimError *err) {
    if (m->running)
        return issim_error_set(err, ISSIM_ERR_STATE, "the collision manager is already running");
    atomic_store(&m->stop, false);
    if (pthread_create(&m->thread, NULL, manager_thread, m) != 0)
        return issim_error_set(err, ISSIM_ERR_STATE, "cannot start the collision manager thread");
    m->running = true;
    return ISSIM_OK;
}

void collision_manager_stop(CollisionManager *m) {
    if (!m->running)
        return;
    atomic_store(&m->stop, true);
    atomic_store(&m->poke, true);
    pthread_mutex_lock(&m->wake_lock);
    pthread_cond_signal(&m->wake);
    pthread_mutex_unlock(&m->wake_lock);
    pthread_join(m->thread, NULL);
    m->running = false;
}
