/* Contact quantities exact between frames (issue 31 item 2). The display reads contact reports
 * once a drawn frame, and a 0.3 ms impact lies between two 1 ms output steps, so a force read at
 * frames or at output steps alone misses it (point_drop's summed force read 0 through all eight
 * bounces). The engine thread samples the contacts after every accepted integrator step
 * (EngineOptions.on_step) and publishes with each frame, per quantity, the peak over the output
 * step that ends there and its impulse (the trapezoid over the integrator's steps, which are
 * short where the force changes fast).
 *
 * A contact that begins at a step's end contributes nothing to that step: its force jumps from
 * zero there (a damper's b v at onset), and the trapezoid would spread the jump back over the
 * step. One that ended contributes its last force at the step's start.
 *
 * A time-stepped contact (a complementarity island's, ContactReport.stepped) reports the last
 * time step's impulse over its length: a force constant over the step that ended, whatever
 * sample sees it within that step (the island's time steps are no integrator steps; its
 * contacts are seen at the output steps and at the force-law islands' steps). It adds force
 * times the time since the last sample, from its first report, and never begins a step's
 * peak (the trapezoid and the onset rule halved a landing's first step, losing part of a box's
 * landing momentum, and carried its peak into the next step). Engine thread only. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"

enum { QUANTITY_SUM, QUANTITY_MAX, QUANTITY_BODIES }; /* then one per contact-map body */

static bool has_map(const Engine *e, int body) {
    const ThingDb *db = engine_thingdb(e);
    ThingId thing = engine_body_thing(e, engine_body_id(e, body));
    return thing_kind(db, thing) == THING_RIGID_BODY && thing_string(db, thing, "contact_map")[0];
}

int sim_contacts_var_count(const Engine *e) {
    int n = QUANTITY_BODIES;
    for (int b = 0; b < engine_body_count(e); b++)
        n += has_map(e, b);
    return 2 * n;
}

static IssimStatus declare(Registry *reg, const char *prefix, IssimError *err) {
    char name[300];
    snprintf(name, sizeof name, "%s.peak", prefix);
    if (registry_add_var(reg, name, "N", err) < 0)
        return err->status;
    snprintf(name, sizeof name, "%s.impulse", prefix);
    return registry_add_var(reg, name, "N s", err) < 0 ? err->status : ISSIM_OK;
}

IssimStatus sim_contacts_declare(Sim *sim, IssimError *err) {
    SimContacts *c = &sim->contacts;
    const Engine *e = sim->engine;
    c->var0 = registry_var_count(sim->registry);
    c->quantities = sim_contacts_var_count(e) / 2;
    c->body = calloc((size_t)c->quantities, sizeof *c->body);
    c->now = calloc((size_t)c->quantities * 6, sizeof(double));
    if (!c->body || !c->now)
        return issim_error_set(err, ISSIM_ERR_NOMEM, "out of memory");
    c->old = c->now + c->quantities;
    c->stepped = c->old + c->quantities;
    c->peak = c->stepped + c->quantities;
    c->impulse = c->peak + c->quantities;
    c->prev = c->impulse + c->quantities;
    IssimStatus s = declare(sim->registry, "contacts.force_sum", err);
    if (s == ISSIM_OK)
        s = declare(sim->registry, "contacts.force_max", err);
    for (int b = 0, q = QUANTITY_BODIES; s == ISSIM_OK && b < engine_body_count(e); b++) {
        if (!has_map(e, b))
            continue;
        EngineBodyId id = engine_body_id(e, b);
        c->body[q++] = engine_body_id_pack(id);
        char prefix[300];
        snprintf(prefix, sizeof prefix, "%s.contact_force", engine_body_name(e, id));
        s = declare(sim->registry, prefix, err);
    }
    return s;
}

void sim_contacts_free(SimContacts *c) {
    free(c->body);
    free(c->now);
    free(c->ids);
    free(c->ids_prev);
    memset(c, 0, sizeof *c);
}

void sim_contacts_restart(Sim *sim) {
    sim->contacts.have_prev = false;
}

static int compare_ids(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Smooth reports carry id 0 and last while their pair is reduced: they count as old. */
static bool was_there(const SimContacts *c, uint32_t id) {
    return id == 0 ||
           bsearch(&id, c->ids_prev, (size_t)c->ids_prev_count, sizeof id, compare_ids) != NULL;
}

static bool grow_ids(SimContacts *c, int n) {
    if (n <= c->ids_room)
        return true;
    uint32_t *a = realloc(c->ids, sizeof *a * (size_t)n);
    if (a)
        c->ids = a;
    uint32_t *b = a ? realloc(c->ids_prev, sizeof *b * (size_t)n) : NULL;
    if (b)
        c->ids_prev = b;
    if (a && b)
        c->ids_room = n;
    return a && b;
}

/* Signed: a damper's pull at the end of an impact is part of its impulse (summed magnitudes
 * would count it as a push). */
static void add(const SimContacts *c, double *q, const ContactReport *r) {
    double f = r->normal_force;
    q[QUANTITY_SUM] += f;
    q[QUANTITY_MAX] = fmax(q[QUANTITY_MAX], f);
    for (int k = QUANTITY_BODIES; k < c->quantities; k++)
        if (r->body_a == c->body[k] || r->body_b == c->body[k])
            q[k] += f;
}

/* The quantities of reports: the force laws' (all now, and those also there at the previous
 * sample) and the time-stepped ones. */
static void measure(SimContacts *c, const ContactReport *reports, int n) {
    memset(c->now, 0, sizeof(double) * 3 * (size_t)c->quantities);
    for (int i = 0; i < n; i++) {
        if (reports[i].stepped) {
            add(c, c->stepped, &reports[i]);
        } else {
            add(c, c->now, &reports[i]);
            if (c->have_prev && was_there(c, reports[i].id))
                add(c, c->old, &reports[i]);
        }
        c->ids[i] = reports[i].id;
    }
    qsort(c->ids, (size_t)n, sizeof *c->ids, compare_ids);
}

/* The force of both kinds together: summed, or the larger for the largest force. */
static double both(int q, double force_law, double stepped) {
    return q == QUANTITY_MAX ? fmax(force_law, stepped) : force_law + stepped;
}

void sim_contacts_sample(Sim *sim, double t, const ContactReport *reports, int n) {
    SimContacts *c = &sim->contacts;
    if (c->quantities == 0 || !grow_ids(c, n > 0 ? n : 1))
        return;
    measure(c, reports, n);
    for (int q = 0; q < c->quantities; q++) {
        if (!c->have_prev) { /* a step begins here: after a reset, the first frame */
            c->peak[q] = c->now[q];
            c->impulse[q] = 0.0;
            continue;
        }
        double h = t - c->t_prev;
        c->impulse[q] += 0.5 * (c->prev[q] + c->old[q]) * h + c->stepped[q] * h;
        c->peak[q] = fmax(c->peak[q], both(q, c->now[q], c->stepped[q]));
    }
    memcpy(c->prev, c->now, sizeof(double) * (size_t)c->quantities);
    uint32_t *swap = c->ids_prev;
    c->ids_prev = c->ids;
    c->ids = swap;
    c->ids_prev_count = n;
    c->t_prev = t;
    c->have_prev = true;
}

void sim_contacts_write(Sim *sim, double *values) {
    SimContacts *c = &sim->contacts;
    for (int q = 0; q < c->quantities; q++) {
        values[c->var0 + 2 * q] = c->peak[q];
        values[c->var0 + 2 * q + 1] = c->impulse[q];
        c->peak[q] = c->prev[q]; /* the next step begins with the force at this frame */
        c->impulse[q] = 0.0;
    }
}
