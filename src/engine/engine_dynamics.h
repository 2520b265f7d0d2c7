/* The equations of motion (engine_dynamics.c): the state blocks, contact kinematics, the
 * right-hand side, root functions and the active set, and the progress guard's limits. Written
 * and read by the thread that runs the engine. */
#ifndef ISSIM_ENGINE_DYNAMICS_H
#define ISSIM_ENGINE_DYNAMICS_H

#include <stdbool.h>
#include <stddef.h>

#include "issim/contact.h"
#include "issim/engine.h"

typedef struct EngineContact EngineContact;

EngineBodyState engine_block_state(const Engine *e, const double *y, int body);
void engine_block_store(const Engine *e, double *y, int body, const EngineBodyState *s);
/* Kinematics of contact c in state y; point (Nullable) receives the world contact point, arm
 * (Nullable) its offset from the centre of mass. */
void engine_contact_kinematics(const Engine *e, const double *y, const EngineContact *c, double t,
                               ContactKinematics *k, Vec3 *point, Vec3 *arm);
/* Per-body states of one right-hand side evaluation (scratch past the load arrays). */
#define ENGINE_BODY_STATE_DOUBLES (sizeof(EngineBodyState) / sizeof(double))
_Static_assert(sizeof(EngineBodyState) % sizeof(double) == 0, "body states tile the scratch");
EngineBodyState *engine_rhs_body_states(const Engine *e);
void engine_manifold_kinematics(const Engine *e, const double *y, const EngineContact *c, double t,
                                ContactKinematics *k, Vec3 *point, Vec3 *arm_a, Vec3 *arm_b);
/* The collision update's passes over every contact (the merge, its energy ledger, the activity
 * of each contact) read every body's state at e->y once: engine_merge_states fills the cache
 * (the right-hand side's, free outside an evaluation) and engine_merge_kinematics reads it, the
 * same numbers as engine_manifold_kinematics at (e->y, e->data.t). */
EngineBodyState *engine_merge_states(const Engine *e);
/* Pins contact c's friction spring (ContactHistory.friction_pin_a/b) at the world point where
 * its force acts, on a and b (NULL: an obstacle) as they are now. For contacts with friction
 * (engine_contact_has_friction) only. */
void engine_pin_friction(EngineContact *c, const EngineBodyState *a, const EngineBodyState *b,
                         Vec3 point);
bool engine_contact_has_friction(const Engine *e, const EngineContact *c);
/* engine_energy with states every body's at e->y (engine_fill_states; the publication's). */
EngineEnergy engine_energy_of_states(const Engine *e, const EngineBodyState *states);
/* Every body's state in y (engine_block_state), into states[body_count]. */
void engine_fill_states(const Engine *e, const double *y, EngineBodyState *states);
/* The depth of contact c in y, states being y's (engine_fill_states): k.depth of
 * engine_contact_kinematics, for the event tests that need no more. */
double engine_contact_depth(const Engine *e, const EngineBodyState *states, const double *y,
                            const EngineContact *c);
/* How far apart a time-stepped contact's bodies may be and still take part in this step: margin,
 * or what they close at their present approach speed (k->depth_rate) over the step twice over
 * (ENGINE_REACH_AHEAD_SAFETY) if that is more: a body thrown at a thin plate joins its island,
 * and gets its speculative row, before a step can carry it through. */
double engine_speculative_reach(const Engine *e, const ContactKinematics *k, double margin);
/* Takes up to energy (J) of kinetic energy out of the motion of c's bodies relative to each other
 * at point along dir, by an impulse along dir at point (equal and opposite on B): the kinetic
 * energy falls by exactly the amount returned; 0 when the bodies are not moving along dir there
 * or a body cannot take an impulse (asleep, planar, in a reduced pair or a time-stepped island).
 * A zero dir means along the bodies' relative velocity at point.
 * The bodies' rates in e->y and states change together. */
double engine_contact_brake(Engine *e, EngineBodyState *states, const EngineContact *c, Vec3 point,
                            Vec3 dir, double energy);
void engine_merge_kinematics(const Engine *e, const EngineBodyState *states, const EngineContact *c,
                             ContactKinematics *k);
/* The geometry of manifold contact c from its bodies' states (b NULL: a static B) only (what a
 * time-stepping solver needs): depth, world normal (from B into A), the points' offsets from
 * the two centres of mass. */
void engine_manifold_geometry(const EngineContact *c, const EngineBodyState *a,
                              const EngineBodyState *b, double *depth, Vec3 *normal, Vec3 *arm_a,
                              Vec3 *arm_b);
/* Kinematics of contact c in state y with the offsets of its points from the two centres of
 * mass (arm_b zero for a vertex contact or a fixed B). */
void engine_contact_arms(const Engine *e, const double *y, const EngineContact *c, double t,
                         ContactKinematics *k, Vec3 *arm_a, Vec3 *arm_b);
/* Every body's load at (t, y) into force and torque (body_count each): its own loads plus the
 * forces of the active force-law contacts, for the integrated bodies and those of reduced pairs
 * (contacts inside a pair excluded); other entries are left alone. */
void engine_accumulate_loads(const Engine *e, double t, const double *y, Vec3 *force, Vec3 *torque);
/* Depth (m) within which a contact counts as touching at a restart. */
#define ENGINE_TOUCH_TOLERANCE 1e-12
/* The progress guard (engine_cvode.c): a mean step below ENGINE_TINY_STEP of the output step over
 * ENGINE_GUARD_WINDOW steps, or ENGINE_MAX_STEPS_PER_OUTPUT steps in one output step, stops a run
 * with the active contacts named. A stiff contact resolved properly takes steps of about 1e-3 of
 * the output step (the point drop at k = 1e8 N/m). */
#define ENGINE_TINY_STEP 1e-6
#define ENGINE_GUARD_WINDOW 2000
#define ENGINE_MAX_STEPS_PER_OUTPUT 1000000
/* ": active contacts A on floor (floor_contact), ..." for error messages (empty if none). */
void engine_describe_active(const Engine *e, char *buf, size_t size);
bool engine_contact_should_be_active(const ContactKinematics *k);
/* An event about contact c at t (kind and duration left for the caller). */
EngineEvent engine_contact_event(const EngineContact *c, double t, double normal_velocity);
/* dy/dt at (t, y) with the current active set. */
void engine_rhs(Engine *e, double t, const double *y, double *ydot);
/* Root functions: depth of every contact candidate. */
void engine_roots(const Engine *e, const double *y, double *g);
/* Toggles contacts whose depth sign disagrees with their active flag; emits events. Returns the
 * number of changes. */
int engine_update_active_set(Engine *e, double t, const int *directions);
void engine_commit_contacts(Engine *e, double t);
void engine_normalize_state(Engine *e, double *y);

#endif
