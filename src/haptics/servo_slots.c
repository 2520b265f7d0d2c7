/* The layouts of the registry slots the servo writes (HANDLE, SERVO_STATS): where each field of
 * HapticHandleState and HapticServoStats sits in a slot's values and id words. Only this file
 * indexes them; the servo packs, readers unpack (haptics_servo.h). */
#include <string.h>

#include "issim/haptics_servo.h"

/* HANDLE: a 2-vector takes two consecutive values (x, y), a 3-vector three. */
enum {
    HANDLE_POS_X,
    HANDLE_VEL_X = HANDLE_POS_X + 2,
    HANDLE_FORCE_X = HANDLE_VEL_X + 2,
    HANDLE_WORLD_X = HANDLE_FORCE_X + 2,
    HANDLE_WORLD_VEL_X = HANDLE_WORLD_X + 3,
    HANDLE_COUPLING_K = HANDLE_WORLD_VEL_X + 2,
    HANDLE_COUPLING_B,
    HANDLE_ENABLED,
    HANDLE_LIMITS,
    HANDLE_DEVICE_STATUS,
    HANDLE_Q1,
    HANDLE_Q5,
    HANDLE_TAU1,
    HANDLE_TAU5,
    HANDLE_TEXTURE_FORCE_X,
    HANDLE_FRAME_T = HANDLE_TEXTURE_FORCE_X + 2,
    HANDLE_LOCAL_MODELS,
    HANDLE_TRACK_OMEGA,
    HANDLE_IMPULSE_X,
    HANDLE_IMPULSE_TIME = HANDLE_IMPULSE_X + 2,
    HANDLE_REACTION_LIMIT,
    HANDLE_TRACED_DEPTH,
    HANDLE_TRACED_FORCE,
    HANDLE_COUNT
};
enum { HANDLE_ID_PROXY_BODY, HANDLE_ID_COUNT };
_Static_assert(HANDLE_COUNT <= REGISTRY_SLOT_VALUES, "the handle fits its slot");
_Static_assert(HANDLE_ID_COUNT <= REGISTRY_SLOT_IDS, "the handle's ids fit its slot");

/* SERVO_STATS: counts travel as doubles, exact up to 2^53. */
enum {
    STAT_RATE_HZ,
    STAT_MEASURED_HZ,
    STAT_PERIODS,
    STAT_LATENESS_P50_US,
    STAT_LATENESS_P99_US,
    STAT_LATENESS_P999_US,
    STAT_LATENESS_MAX_US,
    STAT_OVERRUNS,
    STAT_COMPUTE_MEAN_US,
    STAT_COMPUTE_MAX_US,
    STAT_FIFO,
    STAT_STALE_READS,
    STAT_DEVICE_ERRORS,
    STAT_STATE,
    STAT_ENGINE_STALLS,
    STAT_FORCE_LIMITED,
    STAT_MISSED_DEADLINES,
    STAT_CRC_ERRORS,
    STAT_FRAMES_LOST,
    STAT_FRAMES_DROPPED,
    STAT_FORCE_RMS,
    STAT_FORCE_PEAK,
    STAT_TEXTURE_PERIODS,
    STAT_MOTION_FAULTS,
    STAT_DEVICE_FAULT_REPORTS,
    STAT_FAULT,
    STAT_FAULT_MEASURED,
    STAT_FAULT_ALLOWED,
    STAT_MOTION_RATIO,
    STAT_PASSIVITY_ENERGY,
    STAT_PASSIVITY_ENERGY_MIN,
    STAT_LOCAL_LATENCY_US,
    STAT_LOCAL_LATENCY_MEAN_US,
    STAT_LOCAL_LATENCY_MAX_US,
    STAT_LOCAL_BLOCKS,
    STAT_LOCAL_FADED_PERIODS,
    STAT_MODELS,
    STAT_MODELS_TOUCHING,
    STAT_MODELS_COMPUTE_MEAN_US,
    STAT_MODELS_COMPUTE_MAX_US,
    STAT_COUNT
};
_Static_assert(STAT_COUNT <= REGISTRY_SLOT_VALUES, "the servo statistics fit their slot");

static void put_vec2(double *v, int at, HapticVec2 x) {
    v[at] = x.x;
    v[at + 1] = x.y;
}

static HapticVec2 get_vec2(const double *v, int at) {
    return (HapticVec2){v[at], v[at + 1]};
}

/* A packed slot holds zeros past its layout, as registry_slot_write stores them. */
static void clear_values(RegistrySlot *slot) {
    memset(slot->v, 0, sizeof slot->v);
    memset(slot->ids, 0, sizeof slot->ids);
}

void haptic_handle_pack(const HapticHandleState *h, RegistrySlot *slot) {
    clear_values(slot);
    double *v = slot->v;
    put_vec2(v, HANDLE_POS_X, h->pos);
    put_vec2(v, HANDLE_VEL_X, h->vel);
    put_vec2(v, HANDLE_FORCE_X, h->force);
    v[HANDLE_WORLD_X] = h->world.x;
    v[HANDLE_WORLD_X + 1] = h->world.y;
    v[HANDLE_WORLD_X + 2] = h->world.z;
    put_vec2(v, HANDLE_WORLD_VEL_X, h->world_vel);
    v[HANDLE_COUPLING_K] = h->coupling_k;
    v[HANDLE_COUPLING_B] = h->coupling_b;
    v[HANDLE_ENABLED] = h->enabled ? 1.0 : 0.0;
    v[HANDLE_LIMITS] = h->limits;
    v[HANDLE_DEVICE_STATUS] = h->device_status;
    v[HANDLE_Q1] = h->q1;
    v[HANDLE_Q5] = h->q5;
    v[HANDLE_TAU1] = h->tau1;
    v[HANDLE_TAU5] = h->tau5;
    put_vec2(v, HANDLE_TEXTURE_FORCE_X, h->texture_force);
    v[HANDLE_FRAME_T] = h->frame_t;
    v[HANDLE_LOCAL_MODELS] = h->local_models ? 1.0 : 0.0;
    v[HANDLE_TRACK_OMEGA] = h->track_omega;
    put_vec2(v, HANDLE_IMPULSE_X, h->impulse);
    v[HANDLE_IMPULSE_TIME] = h->impulse_time;
    v[HANDLE_REACTION_LIMIT] = h->reaction_limit;
    v[HANDLE_TRACED_DEPTH] = h->traced_depth;
    v[HANDLE_TRACED_FORCE] = h->traced_force;
    slot->ids[HANDLE_ID_PROXY_BODY] = h->proxy_body;
}

HapticHandleState haptic_handle_unpack(const RegistrySlot *slot) {
    const double *v = slot->v;
    return (HapticHandleState){
        .pos = get_vec2(v, HANDLE_POS_X),
        .vel = get_vec2(v, HANDLE_VEL_X),
        .force = get_vec2(v, HANDLE_FORCE_X),
        .world = {v[HANDLE_WORLD_X], v[HANDLE_WORLD_X + 1], v[HANDLE_WORLD_X + 2]},
        .world_vel = get_vec2(v, HANDLE_WORLD_VEL_X),
        .coupling_k = v[HANDLE_COUPLING_K],
        .coupling_b = v[HANDLE_COUPLING_B],
        .enabled = v[HANDLE_ENABLED] > 0.0,
        .limits = (unsigned)v[HANDLE_LIMITS],
        .device_status = (unsigned)v[HANDLE_DEVICE_STATUS],
        .q1 = v[HANDLE_Q1],
        .q5 = v[HANDLE_Q5],
        .tau1 = v[HANDLE_TAU1],
        .tau5 = v[HANDLE_TAU5],
        .texture_force = get_vec2(v, HANDLE_TEXTURE_FORCE_X),
        .frame_t = v[HANDLE_FRAME_T],
        .local_models = v[HANDLE_LOCAL_MODELS] != 0.0,
        .track_omega = v[HANDLE_TRACK_OMEGA],
        .impulse = get_vec2(v, HANDLE_IMPULSE_X),
        .impulse_time = v[HANDLE_IMPULSE_TIME],
        .reaction_limit = v[HANDLE_REACTION_LIMIT],
        .traced_depth = v[HANDLE_TRACED_DEPTH],
        .traced_force = v[HANDLE_TRACED_FORCE],
        .proxy_body = slot->ids[HANDLE_ID_PROXY_BODY],
    };
}

void haptic_handle_write(Registry *reg, double t, const HapticHandleState *handle) {
    RegistrySlot slot;
    haptic_handle_pack(handle, &slot);
    registry_slot_write_ids(reg, REGISTRY_SLOT_HANDLE, t, slot.v, HANDLE_COUNT, slot.ids,
                            HANDLE_ID_COUNT);
}

void haptic_servo_stats_pack(const HapticServoStats *s, RegistrySlot *slot) {
    clear_values(slot);
    double *v = slot->v;
    v[STAT_RATE_HZ] = s->rate_hz;
    v[STAT_MEASURED_HZ] = s->measured_hz;
    v[STAT_PERIODS] = (double)s->periods;
    v[STAT_LATENESS_P50_US] = s->lateness_p50_us;
    v[STAT_LATENESS_P99_US] = s->lateness_p99_us;
    v[STAT_LATENESS_P999_US] = s->lateness_p999_us;
    v[STAT_LATENESS_MAX_US] = s->lateness_max_us;
    v[STAT_OVERRUNS] = (double)s->overruns;
    v[STAT_COMPUTE_MEAN_US] = s->compute_mean_us;
    v[STAT_COMPUTE_MAX_US] = s->compute_max_us;
    v[STAT_FIFO] = s->fifo ? 1.0 : 0.0;
    v[STAT_STALE_READS] = (double)s->stale_reads;
    v[STAT_DEVICE_ERRORS] = (double)s->device_errors;
    v[STAT_STATE] = s->state;
    v[STAT_ENGINE_STALLS] = (double)s->engine_stalls;
    v[STAT_FORCE_LIMITED] = (double)s->force_limited;
    v[STAT_MISSED_DEADLINES] = (double)s->missed_deadlines;
    v[STAT_CRC_ERRORS] = (double)s->crc_errors;
    v[STAT_FRAMES_LOST] = (double)s->frames_lost;
    v[STAT_FRAMES_DROPPED] = (double)s->frames_dropped;
    v[STAT_FORCE_RMS] = s->force_rms;
    v[STAT_FORCE_PEAK] = s->force_peak;
    v[STAT_TEXTURE_PERIODS] = (double)s->texture_periods;
    v[STAT_MOTION_FAULTS] = (double)s->motion_faults;
    v[STAT_DEVICE_FAULT_REPORTS] = (double)s->device_fault_reports;
    v[STAT_FAULT] = s->fault;
    v[STAT_FAULT_MEASURED] = s->fault_measured;
    v[STAT_FAULT_ALLOWED] = s->fault_allowed;
    v[STAT_MOTION_RATIO] = s->motion_ratio;
    v[STAT_PASSIVITY_ENERGY] = s->passivity_energy;
    v[STAT_PASSIVITY_ENERGY_MIN] = s->passivity_energy_min;
    v[STAT_LOCAL_LATENCY_US] = s->local_latency_us;
    v[STAT_LOCAL_LATENCY_MEAN_US] = s->local_latency_mean_us;
    v[STAT_LOCAL_LATENCY_MAX_US] = s->local_latency_max_us;
    v[STAT_LOCAL_BLOCKS] = (double)s->local_blocks;
    v[STAT_LOCAL_FADED_PERIODS] = (double)s->local_faded_periods;
    v[STAT_MODELS] = s->models;
    v[STAT_MODELS_TOUCHING] = s->models_touching;
    v[STAT_MODELS_COMPUTE_MEAN_US] = s->models_compute_mean_us;
    v[STAT_MODELS_COMPUTE_MAX_US] = s->models_compute_max_us;
}

HapticServoStats haptic_servo_stats_unpack(const RegistrySlot *slot) {
    const double *v = slot->v;
    return (HapticServoStats){
        .rate_hz = v[STAT_RATE_HZ],
        .measured_hz = v[STAT_MEASURED_HZ],
        .periods = (uint64_t)v[STAT_PERIODS],
        .lateness_p50_us = v[STAT_LATENESS_P50_US],
        .lateness_p99_us = v[STAT_LATENESS_P99_US],
        .lateness_p999_us = v[STAT_LATENESS_P999_US],
        .lateness_max_us = v[STAT_LATENESS_MAX_US],
        .overruns = (uint64_t)v[STAT_OVERRUNS],
        .compute_mean_us = v[STAT_COMPUTE_MEAN_US],
        .compute_max_us = v[STAT_COMPUTE_MAX_US],
        .fifo = v[STAT_FIFO] > 0.0,
        .stale_reads = (uint64_t)v[STAT_STALE_READS],
        .device_errors = (uint64_t)v[STAT_DEVICE_ERRORS],
        .state = (HapticServoState)(int)v[STAT_STATE],
        .engine_stalls = (uint64_t)v[STAT_ENGINE_STALLS],
        .force_limited = (uint64_t)v[STAT_FORCE_LIMITED],
        .missed_deadlines = (uint64_t)v[STAT_MISSED_DEADLINES],
        .crc_errors = (uint64_t)v[STAT_CRC_ERRORS],
        .frames_lost = (uint64_t)v[STAT_FRAMES_LOST],
        .frames_dropped = (uint64_t)v[STAT_FRAMES_DROPPED],
        .force_rms = v[STAT_FORCE_RMS],
        .force_peak = v[STAT_FORCE_PEAK],
        .texture_periods = (uint64_t)v[STAT_TEXTURE_PERIODS],
        .motion_faults = (uint64_t)v[STAT_MOTION_FAULTS],
        .device_fault_reports = (uint64_t)v[STAT_DEVICE_FAULT_REPORTS],
        .fault = (HapticFault)(int)v[STAT_FAULT],
        .fault_measured = v[STAT_FAULT_MEASURED],
        .fault_allowed = v[STAT_FAULT_ALLOWED],
        .motion_ratio = v[STAT_MOTION_RATIO],
        .passivity_energy = v[STAT_PASSIVITY_ENERGY],
        .passivity_energy_min = v[STAT_PASSIVITY_ENERGY_MIN],
        .local_latency_us = v[STAT_LOCAL_LATENCY_US],
        .local_latency_mean_us = v[STAT_LOCAL_LATENCY_MEAN_US],
        .local_latency_max_us = v[STAT_LOCAL_LATENCY_MAX_US],
        .local_blocks = (uint64_t)v[STAT_LOCAL_BLOCKS],
        .local_faded_periods = (uint64_t)v[STAT_LOCAL_FADED_PERIODS],
        .models = (int)v[STAT_MODELS],
        .models_touching = (int)v[STAT_MODELS_TOUCHING],
        .models_compute_mean_us = v[STAT_MODELS_COMPUTE_MEAN_US],
        .models_compute_max_us = v[STAT_MODELS_COMPUTE_MAX_US],
    };
}

void haptic_servo_stats_write(Registry *reg, double t, const HapticServoStats *stats) {
    RegistrySlot slot;
    haptic_servo_stats_pack(stats, &slot);
    registry_slot_write(reg, REGISTRY_SLOT_SERVO_STATS, t, slot.v, STAT_COUNT);
}
