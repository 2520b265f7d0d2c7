/* The simulated pantograph in the caller's process, and the Z-width measurement on it
 * (`issim-bench haptics zwidth`, tests/test_haptics_zwidth.c; docs/haptics.md "Z-width").
 *
 * Lockstep device: each servo read advances the model by one servo period and returns its
 * encoder counts; each write applies the command at once. The servo's own code (kinematics,
 * PD wall, passivity controller, the whole safety chain, D/A) runs unchanged against the same
 * physics as issim-pantosim, in simulated time: no pty, no wall clock, so a measurement is
 * reproducible to the bit. The wall is a PD surface of the servo, or a contact pair of a scene
 * (ZwidthTrial.contact_scene): a real Engine of the scene then steps in the same simulated time
 * and publishes the contact the servo renders, as the engine thread does (docs/haptics.md "A
 * wall of the scene's contact model"). */
#ifndef PANTOSIM_ZWIDTH_H
#define PANTOSIM_ZWIDTH_H

#include "issim/haptics_servo.h"
#include "pantosim_model.h"

/* A HapticDevice over sim (Borrowed: it must outlive the device), stepping period seconds per
 * read. NULL on out of memory (err says so). */
HapticDevice *simpanto_lockstep_open(SimPantograph *sim, double period, IssimError *err);
/* The same, with each command applied at the next read when delayed (a device that applies a
 * command at its next frame tick, as the simulator over its link does), at once otherwise. */
HapticDevice *simpanto_lockstep_open_delayed(SimPantograph *sim, double period, bool delayed,
                                             IssimError *err);

typedef struct ZwidthTrial {
    double rate_hz;   /* servo rate */
    double stiffness; /* N/m of the PD wall */
    double damping;   /* N s/m of the PD wall */
    bool passivity;   /* the passivity controller on (the observer runs either way) */
    bool subcount;    /* the servo's position and velocity below one count (HapticServoDesc) */
    double observer_memory_s; /* its memory, s (0: ZWIDTH_OBSERVER_MEMORY_S) */
    bool delayed;             /* each command applied one period late (the real link) */
    bool observer_lead;       /* with delayed: the observer renders one period ahead */
    /* NULL: the wall is a PD surface of the servo (HapticSurface). Else the path of a scene
       whose contact pair ZWIDTH_CONTACT_PAIR between the coupled proxy and a fixed wall is the
       wall (scenes/pantograph_contact_wall.lua): the pair's stiffness and damping are set to
       the trial's (as `--set PAIR.stiffness=` would), a real Engine of the scene steps in
       lockstep with the servo at the scene's dt, and the servo renders the contact the engine
       publishes after each step (the local model, docs/haptics.md "Local models"). The scene
       must put the wall's surface 10 mm from the workspace centre along +x, as the PD wall. */
    const char *contact_scene;
    const char *contact_law; /* with contact_scene: the pair's model set to this (NULL: the
                                scene's own, e.g. "spring_damper") */
    /* with contact_scene, when > 0: the pair's exponent n and Hunt-Crossley alpha (s/m) set
       too (hunt_crossley with n = 1: f = k g (1 + 3/2 alpha dg/dt), k in N/m) */
    double contact_exponent, contact_alpha;
} ZwidthTrial;

/* The contact pair a contact_scene's wall is made of. */
#define ZWIDTH_CONTACT_PAIR "proxy_wall"

/* The push: the handle starts at rest 10 mm in front of a wall rendered by the servo; the
 * scripted hand (ZWIDTH_HAND_STIFFNESS N/m, ZWIDTH_HAND_DAMPING N s/m, a light grip) holds a
 * target 5 mm behind the wall, so it pushes the handle into it (0.5 N when the wall gives no
 * ground) and keeps pushing. Stable: no device fault, and over the last ZWIDTH_WATCH_S of the
 * ZWIDTH_TRIAL_S trial neither encoder's count moves by more than one (max - min <= 1): the
 * handle at rest against the wall within one encoder count, no limit cycle larger than the
 * encoder can see. */
#define ZWIDTH_HAND_STIFFNESS 100.0
#define ZWIDTH_HAND_DAMPING 2.0
#define ZWIDTH_TRIAL_S 1.5
#define ZWIDTH_WATCH_S 0.5
/* The observer's memory (HapticServoDesc.observer_memory_s): 0.9 per period at 1 kHz, chosen on
   this bench (docs/haptics.md "Below one count") */
#define ZWIDTH_OBSERVER_MEMORY_S 0.0095

typedef struct ZwidthResult {
    bool stable;
    int count_span[2];   /* max - min of each encoder over the watch window */
    bool faulted;        /* a device fault or the safe state ended the trial */
    double energy_min;   /* lowest passivity-observer energy over the trial, J */
    double energy_final; /* observer energy at the end, J */
    double penetration;  /* mean depth into the wall over the watch window, m */
    double motion_span;  /* max - min of the handle's true x over the watch window, m */
    double deepest;      /* the handle's largest depth into the wall over the trial, m */
    /* contact_scene only: engine blocks the servo copied, periods of the watch window the
       servo's models touched the handle, and the stiffness and damping of the law the servo
       last evaluated, as the engine published them (the pair's, N/m and N s/m; 0 if none) */
    unsigned long local_blocks;
    long touching_periods;
    double published_stiffness, published_damping;
    const char *published_law; /* its model's name (static), NULL if none */
    double published_alpha;    /* its Hunt-Crossley alpha, s/m */
} ZwidthResult;

IssimStatus zwidth_trial(const ZwidthTrial *trial, ZwidthResult *out, IssimError *err);

/* The largest stiffness of the grid k_min * factor^i (up to k_max) below which every grid
 * stiffness is stable (the sweep stops at the first unstable one); 0 when k_min is not.
 * energy_min (nullable) receives the lowest observer energy over the stable trials. */
double zwidth_largest_stable(double rate_hz, double damping, bool passivity, double k_min,
                             double k_max, double factor, double *energy_min);
/* The same for the trial's rate, damping, controller and estimate (its stiffness is ignored). */
double zwidth_largest_stable_for(const ZwidthTrial *base, double k_min, double k_max, double factor,
                                 double *energy_min);

#endif
