/* The display clock and time around impacts (issue 31 item 1). An impact is over in 0.15 ms (the
 * bar of bar_drop_angle) or 0.3 ms (point_drop's sphere) while a frame lasts 16-33 ms: at any
 * speed that shows the rest of the scene, it happens between two frames. The clock therefore runs
 * at the speed factor away from impacts and at a slow rate (1/1000: a 4 ms window over 4 s)
 * within a window around each impact the engine found, can stop at the next impact, and can stop
 * at an instant a branch's edit waits for.
 *
 * The engine runs ahead of the display (its horizon), so it usually finds an impact before the
 * clock reaches its window. While slow motion (or a stop at the next impact) is on, the clock
 * never passes the newest computed frame less the window, and the engine runs that far beyond
 * its horizon: an impact found later than that cannot have a window the display already left.
 *
 * Threads: the clock is read by any thread (the display, the engine thread); the impacts are
 * written by the engine thread (its event callback and rewinds). Locks: clock_mutex, then
 * impacts_mutex (sim_internal.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"

/* At most this many impacts are kept: beyond it the older half goes (a pile's landings over
 * minutes; the timeline shows the registry's history only). */
#define SIM_IMPACTS_MAX 65536

/* ===== The law (pure) ===== */

/* The first impact whose window has not ended at t (impacts sorted). */
static int first_window_after(const double *impacts, int n, double t, double window) {
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (impacts[mid] + window > t)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* The rate at t and the instant it next changes (+INFINITY: never). Overlapping windows are one
 * stretch of slow motion. */
static double rate_at(const SimClockRates *r, const double *impacts, int n, double t,
                      double *change) {
    *change = INFINITY;
    double slow = fmin(r->speed, r->slow_rate);
    if (!(r->slow_rate > 0.0) || slow >= r->speed || !(r->window > 0.0))
        return r->speed;
    int i = first_window_after(impacts, n, t, r->window);
    if (i >= n)
        return r->speed;
    if (impacts[i] - r->window > t) {
        *change = impacts[i] - r->window;
        return r->speed;
    }
    while (i + 1 < n && impacts[i + 1] - r->window <= impacts[i] + r->window)
        i++;
    *change = impacts[i] + r->window;
    return slow;
}

double sim_clock_advance(const SimClockRates *rates, const double *impacts, int impact_count,
                         double t, double wall, double stop, double limit, bool *stopped) {
    *stopped = false;
    if (!(wall > 0.0))
        return t;
    /* Each pass reaches a window's edge, the stop, the limit, or spends the wall time. */
    for (int pass = 0; pass < 2 * impact_count + 3 && wall > 0.0; pass++) {
        double change;
        double rate = rate_at(rates, impacts, impact_count, t, &change);
        double end = fmin(change, limit);
        bool stops_here = stop > t && stop <= end;
        if (stops_here)
            end = stop;
        double reach = t + wall * rate;
        if (reach < end)
            return reach;
        if (stops_here) {
            *stopped = true;
            return stop;
        }
        if (end >= limit)
            return fmax(t, limit);
        wall -= (end - t) / rate;
        t = end;
    }
    return t;
}

/* ===== The clock (shared) ===== */

/* The first impact at or after t (after it when strictly). */
static int first_impact_from(const Sim *sim, double t, bool strictly) {
    int lo = 0, hi = sim->events.impact_count;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (sim->events.impacts[mid] > t || (!strictly && sim->events.impacts[mid] == t))
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

static double next_impact_after_locked(const Sim *sim, double t) {
    int i = first_impact_from(sim, t, true);
    return i < sim->events.impact_count ? sim->events.impacts[i] : NAN;
}

/* Where the clock may go without passing an impact not yet found: the newest frame, less the
 * window for slow motion. No limit when neither slow motion nor the impact stop is on. */
static double known_limit_locked(const Sim *sim, double newest) {
    bool slow = sim->clock.slow_rate > 0.0 && sim->clock.slow_rate < sim->clock.speed;
    if (!slow && !sim->clock.pause_at_contact)
        return INFINITY;
    if (!isfinite(newest))
        return sim->clock.clock_sim_origin;
    return newest - (slow ? sim->clock.slow_window : 0.0);
}

static double earliest(double a, double b) {
    if (isnan(a))
        return b;
    if (isnan(b))
        return a;
    return fmin(a, b);
}

/* Moves the clock's origin to `wall` and returns the time there. */
static double advance_locked(Sim *sim, double wall, double newest) {
    double t = sim->clock.clock_sim_origin;
    if (!sim->clock.paused && wall > sim->clock.clock_wall_origin) {
        SimClockRates rates = {sim->clock.speed, sim->clock.slow_rate, sim->clock.slow_window};
        bool stopped;
        pthread_mutex_lock(&sim->events.impacts_mutex);
        double stop = sim->clock.hold_at;
        if (sim->clock.pause_at_contact)
            stop = earliest(stop, next_impact_after_locked(sim, t));
        t = sim_clock_advance(&rates, sim->events.impacts, sim->events.impact_count, t,
                              wall - sim->clock.clock_wall_origin, stop,
                              known_limit_locked(sim, newest), &stopped);
        pthread_mutex_unlock(&sim->events.impacts_mutex);
        if (stopped) {
            sim->clock.paused = true;
            sim->clock.pause_at_contact = false;
            sim->clock.hold_at = NAN;
            sim->clock.clock_stops++;
        }
    }
    sim->clock.clock_sim_origin = t;
    sim->clock.clock_wall_origin = wall;
    return t;
}

double sim_display_clock(const Sim *sim, double *wall) {
    Sim *s = (Sim *)sim; /* reading advances the origin (see Sim) */
    double newest = registry_state_time(s->registry);
    pthread_mutex_lock(&s->clock.clock_mutex);
    double now = issim_wall_time();
    double t = advance_locked(s, now, newest);
    pthread_mutex_unlock(&s->clock.clock_mutex);
    if (wall)
        *wall = now;
    return t;
}

double sim_display_time(const Sim *sim) {
    return sim_display_clock(sim, NULL);
}

/* The steps' states are kept while slow motion, a stop at an impact or a video needs them;
 * once kept they stay shown after the stop (the display reads them while keeping is on). */
static void update_fine_on_locked(Sim *sim) {
    atomic_store(&sim->events.fine_on, sim->clock.slow_rate > 0.0 || sim->clock.keep_steps ||
                                           sim->clock.pause_at_contact);
}

static void rebase_locked(Sim *sim) {
    advance_locked(sim, issim_wall_time(), registry_state_time(sim->registry));
}

/* Pausing stops what the user sees: when the engine lags the clock (a pile at 0.1x real time),
 * the clock is pulled back to the newest computed frame, else the display would keep moving
 * while "paused" until the engine caught up with the instant Pause was pressed. */
void sim_set_paused(Sim *sim, bool paused) {
    double newest = registry_state_time(sim->registry);
    pthread_mutex_lock(&sim->clock.clock_mutex);
    rebase_locked(sim);
    if (paused && isfinite(newest) && sim->clock.clock_sim_origin > newest)
        sim->clock.clock_sim_origin = newest;
    sim->clock.paused = paused;
    pthread_mutex_unlock(&sim->clock.clock_mutex);
}

void sim_set_speed(Sim *sim, double speed) {
    if (!(speed > 0.0) || !isfinite(speed))
        return;
    pthread_mutex_lock(&sim->clock.clock_mutex);
    rebase_locked(sim);
    sim->clock.speed = speed;
    pthread_mutex_unlock(&sim->clock.clock_mutex);
}

bool sim_paused(const Sim *sim) {
    Sim *s = (Sim *)sim;
    pthread_mutex_lock(&s->clock.clock_mutex);
    bool paused = s->clock.paused;
    pthread_mutex_unlock(&s->clock.clock_mutex);
    return paused;
}

double sim_speed(const Sim *sim) {
    Sim *s = (Sim *)sim;
    pthread_mutex_lock(&s->clock.clock_mutex);
    double speed = s->clock.speed;
    pthread_mutex_unlock(&s->clock.clock_mutex);
    return speed;
}

void sim_seek(Sim *sim, double t) {
    double start = registry_history_start(sim->registry);
    if (!isfinite(t))
        return;
    if (isfinite(start) && t < start)
        t = start;
    pthread_mutex_lock(&sim->clock.clock_mutex);
    sim->clock.clock_wall_origin = issim_wall_time();
    sim->clock.clock_sim_origin = t;
    pthread_mutex_unlock(&sim->clock.clock_mutex);
}

void sim_set_slow_motion(Sim *sim, double slow_rate, double window) {
    if (!(slow_rate >= 0.0 && slow_rate <= 1.0) || !(window >= 0.0 && window <= 1.0))
        return;
    pthread_mutex_lock(&sim->clock.clock_mutex);
    rebase_locked(sim);
    sim->clock.slow_rate = slow_rate;
    sim->clock.slow_window = window;
    update_fine_on_locked(sim);
    pthread_mutex_unlock(&sim->clock.clock_mutex);
}

void sim_set_keep_steps(Sim *sim, bool keep) {
    pthread_mutex_lock(&sim->clock.clock_mutex);
    sim->clock.keep_steps = keep;
    update_fine_on_locked(sim);
    pthread_mutex_unlock(&sim->clock.clock_mutex);
}

bool sim_keeps_steps(const Sim *sim) {
    return atomic_load(&sim->events.fine_on);
}

void sim_slow_motion(const Sim *sim, double *slow_rate, double *window) {
    Sim *s = (Sim *)sim;
    pthread_mutex_lock(&s->clock.clock_mutex);
    *slow_rate = s->clock.slow_rate;
    *window = s->clock.slow_window;
    pthread_mutex_unlock(&s->clock.clock_mutex);
}

void sim_set_pause_at_contact(Sim *sim, bool armed) {
    pthread_mutex_lock(&sim->clock.clock_mutex);
    rebase_locked(sim);
    sim->clock.pause_at_contact = armed;
    update_fine_on_locked(sim);
    pthread_mutex_unlock(&sim->clock.clock_mutex);
}

bool sim_pause_at_contact(const Sim *sim) {
    Sim *s = (Sim *)sim;
    pthread_mutex_lock(&s->clock.clock_mutex);
    bool armed = s->clock.pause_at_contact;
    pthread_mutex_unlock(&s->clock.clock_mutex);
    return armed;
}

void sim_set_hold(Sim *sim, double t) {
    pthread_mutex_lock(&sim->clock.clock_mutex);
    rebase_locked(sim);
    sim->clock.hold_at = isfinite(t) ? t : NAN;
    pthread_mutex_unlock(&sim->clock.clock_mutex);
}

double sim_hold(const Sim *sim) {
    Sim *s = (Sim *)sim;
    pthread_mutex_lock(&s->clock.clock_mutex);
    double t = s->clock.hold_at;
    pthread_mutex_unlock(&s->clock.clock_mutex);
    return t;
}

uint64_t sim_clock_stops(const Sim *sim) {
    Sim *s = (Sim *)sim;
    pthread_mutex_lock(&s->clock.clock_mutex);
    uint64_t n = s->clock.clock_stops;
    pthread_mutex_unlock(&s->clock.clock_mutex);
    return n;
}

double sim_clock_lead(const Sim *sim) {
    Sim *s = (Sim *)sim;
    pthread_mutex_lock(&s->clock.clock_mutex);
    double lead = s->clock.slow_rate > 0.0 ? s->clock.slow_window : 0.0;
    pthread_mutex_unlock(&s->clock.clock_mutex);
    return lead;
}

void sim_playback_from_scene(Sim *sim) {
    const ThingDb *db = engine_thingdb(sim->engine);
    ThingId u = thingdb_find_kind(db, THING_UNIVERSE);
    sim_set_speed(sim, thing_real(db, u, "playback_speed"));
    sim_set_slow_motion(sim, thing_real(db, u, "slow_motion"),
                        thing_real(db, u, "slow_motion_window"));
}

/* ===== Impacts (engine thread writes) ===== */

static bool grow_impacts_locked(Sim *sim) {
    if (sim->events.impact_count < sim->events.impact_room)
        return true;
    if (sim->events.impact_room >= SIM_IMPACTS_MAX) {
        int keep = sim->events.impact_count / 2;
        memmove(sim->events.impacts, sim->events.impacts + sim->events.impact_count - keep,
                sizeof(double) * keep);
        sim->events.impact_count = keep;
        return true;
    }
    int room = sim->events.impact_room ? 2 * sim->events.impact_room : 256;
    double *grown = realloc(sim->events.impacts, sizeof *grown * (size_t)room);
    if (!grown)
        return false;
    sim->events.impacts = grown;
    sim->events.impact_room = room;
    return true;
}

void sim_impacts_note(Sim *sim, const EngineEvent *ev) {
    if (ev->kind != ENGINE_EVENT_CONTACT_BEGIN || !(ev->normal_velocity < -SIM_IMPACT_MIN_SPEED))
        return;
    pthread_mutex_lock(&sim->events.impacts_mutex);
    int n = sim->events.impact_count;
    /* Events come in time order between rewinds (which drop what follows them). */
    bool same_impact = n > 0 && ev->t - sim->events.impacts[n - 1] < SIM_IMPACT_MERGE;
    if (!same_impact && grow_impacts_locked(sim))
        sim->events.impacts[sim->events.impact_count++] = ev->t;
    pthread_mutex_unlock(&sim->events.impacts_mutex);
}

/* Row k (0: the oldest) of the ring: its place, its values. */
static size_t fine_place(const Sim *sim, int k) {
    return (size_t)((sim->events.fine_head + k) % sim->events.fine_room);
}

static double *fine_row(const Sim *sim, int k) {
    return sim->events.fine + fine_place(sim, k) * (size_t)sim->events.fine_stride;
}

void sim_impacts_rewind(Sim *sim, double t) {
    pthread_mutex_lock(&sim->events.impacts_mutex);
    while (sim->events.impact_count > 0 && sim->events.impacts[sim->events.impact_count - 1] > t)
        sim->events.impact_count--;
    while (sim->events.fine_count > 0 && fine_row(sim, sim->events.fine_count - 1)[0] > t)
        sim->events.fine_count--;
    pthread_mutex_unlock(&sim->events.impacts_mutex);
}

static bool fine_allocate_locked(Sim *sim) {
    if (sim->events.fine)
        return true;
    int stride = 1 + engine_var_count(sim->engine);
    size_t row_bytes =
        sizeof(double) * (size_t)stride + sizeof(ContactReport) * SIM_FINE_CONTACTS + sizeof(int);
    size_t rows = SIM_FINE_BUDGET_BYTES / row_bytes;
    int room = rows < 16 ? 16 : rows > 1 << 20 ? 1 << 20 : (int)rows;
    sim->events.fine = malloc(sizeof(double) * (size_t)stride * (size_t)room);
    sim->events.fine_contacts = malloc(sizeof(ContactReport) * SIM_FINE_CONTACTS * (size_t)room);
    sim->events.fine_contact_count = malloc(sizeof(int) * (size_t)room);
    if (!sim->events.fine || !sim->events.fine_contacts || !sim->events.fine_contact_count) {
        free(sim->events.fine);
        free(sim->events.fine_contacts);
        free(sim->events.fine_contact_count);
        sim->events.fine = NULL;
        sim->events.fine_contacts = NULL;
        sim->events.fine_contact_count = NULL;
        return false;
    }
    sim->events.fine_room = room;
    sim->events.fine_stride = stride;
    sim->events.fine_head = sim->events.fine_count = 0;
    return true;
}

void sim_fine_note(Sim *sim, const ContactReport *reports, int n) {
    if (!atomic_load_explicit(&sim->events.fine_on, memory_order_relaxed))
        return;
    pthread_mutex_lock(&sim->events.impacts_mutex);
    if (fine_allocate_locked(sim)) {
        double t = engine_time(sim->engine);
        if (sim->events.fine_count > 0 && !(t > fine_row(sim, sim->events.fine_count - 1)[0]))
            sim->events.fine_count = 0; /* a state earlier than the kept ones: a reset went back */
        if (sim->events.fine_count == sim->events.fine_room) {
            sim->events.fine_head = (sim->events.fine_head + 1) % sim->events.fine_room;
            sim->events.fine_count--;
        }
        size_t place = fine_place(sim, sim->events.fine_count++);
        double *row = sim->events.fine + place * (size_t)sim->events.fine_stride;
        row[0] = t;
        engine_write_vars(sim->engine, row + 1);
        int kept = n < SIM_FINE_CONTACTS ? n : SIM_FINE_CONTACTS;
        if (kept > 0)
            memcpy(sim->events.fine_contacts + place * SIM_FINE_CONTACTS, reports,
                   sizeof *reports * (size_t)kept);
        sim->events.fine_contact_count[place] = kept;
    }
    pthread_mutex_unlock(&sim->events.impacts_mutex);
}

bool sim_fine_state(const Sim *sim, double after, double t, double *values, double *t_out,
                    ContactReport *contacts, int max, int *contact_count) {
    Sim *s = (Sim *)sim;
    pthread_mutex_lock(&s->events.impacts_mutex);
    int lo = 0, hi = s->events.fine_count; /* the first row later than t */
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (fine_row(s, mid)[0] > t)
            hi = mid;
        else
            lo = mid + 1;
    }
    const double *row = lo > 0 ? fine_row(s, lo - 1) : NULL;
    bool found = row && row[0] > after;
    if (found) {
        *t_out = row[0];
        memcpy(values, row + 1, sizeof(double) * (size_t)(s->events.fine_stride - 1));
        size_t place = fine_place(s, lo - 1);
        int n =
            s->events.fine_contact_count[place] < max ? s->events.fine_contact_count[place] : max;
        if (n > 0)
            memcpy(contacts, s->events.fine_contacts + place * SIM_FINE_CONTACTS,
                   sizeof *contacts * (size_t)n);
        *contact_count = n;
    }
    pthread_mutex_unlock(&s->events.impacts_mutex);
    return found;
}

int sim_impacts_between(const Sim *sim, double t0, double t1, double *out, int max) {
    Sim *s = (Sim *)sim;
    pthread_mutex_lock(&s->events.impacts_mutex);
    int first = first_impact_from(s, t0, false);
    int count = 0;
    for (int i = first; i < s->events.impact_count && s->events.impacts[i] <= t1; i++, count++)
        if (count < max)
            out[count] = s->events.impacts[i];
    pthread_mutex_unlock(&s->events.impacts_mutex);
    return count;
}
