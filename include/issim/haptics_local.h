/* issim haptics, local models (issue 30 item 1, docs/haptics.md "Local models"): the proxy
 * body's contacts rendered in the hand at the servo rate.
 *
 * After each engine step the engine thread packs, for every force-law contact of the coupled
 * proxy, the contact's frame (point, normal from b into a, the other body's velocity there), its
 * kinematics and the pair's force law with its parameters and history (phase, friction spring,
 * and the model's own state: a contact map's convolution buffers), and publishes them whole on
 * the registry's board (registry_board_publish; the layout below is this module's). The servo
 * copies a new block when one appears and then, every period, evaluates each contact's force law
 * (the contact module's own ContactModelClass.force, src/contact) at the handle's newest world
 * point in place of the proxy's, and advances the copy's history with the model's commit(): the
 * map's samples are taken at the servo rate with the handle's depth, internal friction switches
 * its phase when the handle turns. The handle feels the sum; the engine applies to the proxy
 * minus the impulse the servo rendered (haptic_local_engine_reaction), so the two stay equal and
 * opposite over each engine step.
 *
 * Safety: the block carries the publication's wall time; the engine thread's heartbeat on the
 * board says it is alive. While the heartbeat is younger than hold_s the newest models are
 * rendered in full (held, not dropped, while the engine is only late); then the engine-derived
 * force (local models and coupling) fades to zero over fade_s. Every limit of the servo's
 * safety chain acts after the sum.
 *
 * Threading: pack (engine thread) and the servo's reader (servo thread) share nothing but the
 * registry's board; the ContactParams' map pointers are Borrowed from the engine's scene, which
 * outlives the servo (a session stops the servo before its scene goes, docs/haptics.md). */
#ifndef ISSIM_HAPTICS_LOCAL_H
#define ISSIM_HAPTICS_LOCAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "issim/contact.h"
#include "issim/engine.h"
#include "issim/haptics_render.h"
#include "issim/math.h"
#include "issim/registry.h"

#define HAPTIC_LOCAL_MAX_MODELS 8

/* One contact's local model, as the board carries it. */
typedef struct HapticLocalModel {
    uint32_t contact_id;
    double sign;            /* +1: the proxy is the contact's body a; -1: its body b */
    ContactParams params;   /* the pair's force law (map pointers: Borrowed, see above) */
    ContactHistory history; /* state NULL on the board: state_bytes at state_offset */
    ContactKinematics kin;  /* at t_engine: depth, rate, normal (b into a), sliding, mass */
    Vec3 point;             /* world contact point */
    Vec3 other_vel;         /* the other body's material point's velocity at `point`, m/s */
    uint64_t state_offset;  /* bytes from the block's start */
} HapticLocalModel;

/* The block's head; the models follow it, their states after them. */
typedef struct HapticLocalHeader {
    uint64_t proxy_body; /* packed EngineBodyId */
    double t_engine;     /* simulated time of the engine state the models were taken from */
    double wall;         /* wall time of the publication */
    Vec3 proxy_pos;      /* the proxy's centre at t_engine */
    int32_t count;
    uint32_t dropped; /* contacts left out: beyond HAPTIC_LOCAL_MAX_MODELS or the board's room */
    uint64_t bytes;   /* of the whole block */
} HapticLocalHeader;

/* Packs the contacts of the proxy (engine_body_contact_models) into buf (room bytes); returns
 * the block's size (0 when even the header does not fit). Contacts that do not fit are counted
 * in the header's dropped. Thread: engine. */
size_t haptic_local_pack(void *buf, size_t room, uint64_t proxy_body, Vec3 proxy_pos,
                         double t_engine, double wall, const EngineContactModelView *views, int n);

/* The servo's copy of the newest block (servo thread only). */
typedef struct HapticLocalSet {
    unsigned char *block; /* registry_board_capacity bytes, Owned */
    size_t room;
    uint64_t seen;                   /* board publication copied */
    uint64_t arrivals;               /* blocks copied */
    double arrival_wall;             /* the servo's clock when the newest block was copied */
    double arrival_latency;          /* that minus the block's publication wall time, s */
    double latency_sum, latency_max; /* over every block copied, s */
    bool have;
} HapticLocalSet;

/* Local-model settings (HapticServoDesc.local, the scene's haptics.local table). */
typedef struct HapticLocalDesc {
    bool enabled;  /* render the proxy's contacts as local models (needs the coupling) */
    double hold_s; /* the engine's heartbeat may be this late before the force fades (4 ms) */
    double fade_s; /* then the engine-derived force fades to zero over this (4 ms) */
    /* Hz: the engine moves the proxy to the handle's world point with a critically damped
       spring of this natural frequency for the proxy's mass (50 Hz), a force the hand does not
       feel: what the hand feels is the proxy's contacts, as with a god object (docs/haptics.md) */
    double track_hz;
} HapticLocalDesc;

HapticLocalDesc haptic_local_desc_default(void);

IssimStatus haptic_local_set_init(HapticLocalSet *s, const Registry *reg, IssimError *err);
void haptic_local_set_free(HapticLocalSet *s);
/* Copies a new block if the board has one; true when it did. now: the servo's clock. */
bool haptic_local_set_refresh(HapticLocalSet *s, const Registry *reg, double now);
/* The gain of the engine-derived force for a heartbeat of age `age` s: 1 up to hold_s, then
 * linearly to 0 over fade_s; 0 for a NaN age (no heartbeat yet). */
double haptic_local_gain(const HapticLocalDesc *d, double age);
/* Sum of the local models' forces on the proxy, world N, with the proxy moved to handle_world
 * (only x and y: the handle moves in the plane) and moving at handle_vel, `elapsed` s after the
 * engine state; advances each model's history by one step (commit). Returns the models
 * evaluated. Thread: servo. */
int haptic_local_force(HapticLocalSet *s, Vec3 handle_world, Vec3 handle_vel, double elapsed,
                       Vec3 *force);

/* ===== The servo's model loop (servo thread) =====
 * Every model the servo renders is a local model evaluated by haptic_models_evaluate each
 * period, in one loop and by the same steps: its kinematics at the handle's newest position
 * (depth, depth rate, sliding), its force law while in contact, the finite guard, the sum, its
 * commit, and one record for the statistics (models evaluated, in contact, the traced model's
 * depth and normal force). Two kinds:
 * - HAPTIC_MODEL_SURFACE: the scene's hand-written surfaces (haptics.surfaces: PD walls with
 *   Coulomb friction and texture, texture regions), in the device frame, law
 *   haptic_surface_force. They do not come from the engine, so the engine's heartbeat does not
 *   fade them (as before they became local models);
 * - HAPTIC_MODEL_CONTACT: the proxy's contacts the engine publishes (above), in the world frame,
 *   laws from src/contact, faded with the engine's heartbeat (contact_gain).
 * Every limit of the servo's safety chain acts after the sum. */
typedef enum HapticModelKind { HAPTIC_MODEL_SURFACE, HAPTIC_MODEL_CONTACT } HapticModelKind;

typedef struct HapticModelInput {
    const HapticKinematics *kin; /* the handle in the device frame: position, velocity, J */
    HapticRng *rng;              /* the textures' random source */
    Vec3 world, world_vel;       /* the handle's world point and velocity (contacts) */
    double elapsed;              /* s since the engine state of the contacts' block */
    double contact_gain;         /* the contacts' force gain: heartbeat fade x ramp-in */
    double position_scale;       /* world m per device m */
    double force_scale;          /* world N per handle N */
} HapticModelInput;

/* What the loop gives the servo, handle N in the device frame. */
typedef struct HapticModelOutput {
    double surface_force[2]; /* the surfaces' part of the force */
    double contact_force[2]; /* the contacts' part, after contact_gain */
    double tau_texture[2];   /* the surfaces' joint-space texture torques, N m */
    int evaluated;           /* models evaluated (surfaces + contacts) */
    int touching;            /* of them, in contact (walls and contacts with depth > 0, regions
                                with the handle inside) */
    /* the traced model: the deepest in contact whose normal lies in the device's plane (a wall
       or a proxy contact the handle presses; not a texture region nor the table under the
       proxy): its depth in handle m and its normal force on the handle in N, after the gain;
       traced false, 0 and 0 when none is */
    bool traced;
    HapticModelKind traced_kind;
    double traced_depth, traced_force;
} HapticModelOutput;

/* Evaluates the scene's surfaces[0 .. surface_count) and the contacts of `contacts` (nullable:
 * no local models) for one servo period; advances the contacts' histories. Thread: servo. */
void haptic_models_evaluate(const HapticSurface *surfaces, int surface_count,
                            HapticLocalSet *contacts, const HapticModelInput *in,
                            HapticModelOutput *out);

/* ===== The engine's reaction (engine thread) =====
 * With local models on, the servo publishes in the HANDLE slot the impulse it has rendered on the
 * handle since it started (world N s, x and y) and the time of its clock that covers. Before each
 * engine step the engine applies to the proxy minus the mean force the servo rendered over the
 * last window of at least HAPTIC_REACTION_WINDOW_S (|F| <= the servo's largest world force):
 * minus the impulse over that window when the engine steps in step with the servo's clock (one
 * step per window: the impulse balance of test_haptics_local); the same mean over the steps of a
 * burst, when the engine catches up its horizon several steps at once (impulses of a few tens of
 * microseconds spread over whole steps shook the proxy). */
typedef struct HapticReaction {
    uint64_t count;      /* HANDLE slot write last used */
    double impulse[2];   /* the slot's running impulse at the window's start, N s */
    double impulse_time; /* and the servo time it covered, s */
    double force[2];     /* the mean applied, N */
    bool primed;         /* impulse[] holds a reading */
    double applied[2];   /* impulse applied to the proxy so far, N s (tests, statistics) */
} HapticReaction;

#define HAPTIC_REACTION_WINDOW_S 0.001

/* The force on the proxy for the next step of dt s, from the HANDLE slot (written within
 * max_age_s of wall time). false (force zero, state reset) when the slot is old or has no local
 * models. Thread: engine. */
bool haptic_local_engine_reaction(const RegistrySlot *handle, HapticReaction *r, double dt,
                                  double now_wall, double max_age_s, Vec3 *force);
/* The tracking force on the proxy (mass kg, at pos with vel) towards the handle's world point:
 * m w^2 (x_h - x) + 2 m w (v_h - v) in x and y, w = 2 pi track_hz x the servo's fade and ramp-in
 * (HapticHandleState.track_omega); zero when the slot has none. Thread: engine. */
Vec3 haptic_local_engine_tracking(const RegistrySlot *handle, Vec3 pos, Vec3 vel, double mass);

#endif
