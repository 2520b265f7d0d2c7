/* Checkpoints of the engine's dynamic state at published frames (engine_checkpoint.c), for rewinds
 * (edits, the scrubber). Written and read by the thread that runs the engine. */
#ifndef ISSIM_ENGINE_CHECKPOINT_H
#define ISSIM_ENGINE_CHECKPOINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "issim/collision.h"
#include "issim/engine.h"

/* Checkpoints of the whole dynamic state at published frames (engine_checkpoint.c): records in
 * time order, one per frame. A key record holds the raw state vector, the bodies' sleep state
 * and applied wrenches, the contact array, the pool's bytes and the collision world's identity
 * in a byte ring; the frames between two keys hold only their time, and a restore to one of
 * them restores the key before it and replays the steps. */
typedef struct CheckpointRecord {
    double t;
    size_t offset, bytes;      /* the key's bytes in the arena; 0 bytes for a replayed frame */
    uint64_t model_generation; /* EngineModel.generation when it was written */
    bool key;
} CheckpointRecord;

typedef struct CheckpointRing {
    unsigned char *arena;
    size_t capacity;
    bool mapped;               /* arena from mmap (else malloc) */
    CheckpointRecord *records; /* circular, max_records */
    int max_records, first, count;
    int key_every; /* 0: chosen from the record size; else a key every key_every frames */
    int since_key; /* frames written since the newest key */
    int interval;  /* the key spacing chosen from the newest key's size (0: none yet) */
    bool full_warned;
    /* Something changed the engine outside engine_advance since the last checkpoint (an edit, an
     * applied wrench, a restore that restarted): the next checkpoint must be a key, since
     * replaying steps from an older key would not see the change (ENGINE_INVALID_REPLAY). */
    bool replay_broken;
    /* The collision world's identity as of the last merged report (contacts and id counter),
     * kept while checkpoints are enabled: a restore hands it back to the world so contacts keep
     * their ids across a rewind. */
    CollisionContact *identity;
    int identity_count, identity_capacity;
    uint32_t identity_next_id;
} CheckpointRing;

/* engine_checkpoint.c */
void engine_checkpoints_free(Engine *e);
/* Restores the checkpoint at t if there is one (dropping later ones). */
bool engine_checkpoint_restore(Engine *e, double t);
/* Keeps the collision world's identity of a merged report (while checkpoints are enabled). */
void engine_keep_identity(Engine *e, const CollisionContact *contacts, int count, uint32_t next_id);

#endif
