/* Private declarations shared by the scene reader (scene_load.c) and writer (scene_save.c). */
#ifndef ISSIM_SCENE_INTERNAL_H
#define ISSIM_SCENE_INTERNAL_H

#include "issim/io.h"

/* Top-level keys of a scene table, in the order the writer emits them. */
#define SCENE_TOP_KEYS "name, description, universe, camera, record, things, contacts"

/* Universe properties that have a top-level (or camera) spelling in scene files. */
typedef struct SceneAlias {
    const char *table; /* NULL: top level; "camera" */
    const char *key;
    const char *prop; /* universe property */
} SceneAlias;

static const SceneAlias scene_aliases[] = {
    {NULL, "name", "scene_name"},
    {NULL, "description", "description"},
    {NULL, "record", "record"},
    {"camera", "eye", "camera_eye"},
    {"camera", "target", "camera_target"},
    {"camera", "fov", "camera_fov"},
    {"camera", "follow", "camera_follow"},
    {"camera", "up", "camera_up"},
};

#endif
