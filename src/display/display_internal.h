/* Private declarations of the display module: camera, meshes, renderer, scene view (the things
 * to draw and their poses at display time), picking, screenshots, scripts. Display thread
 * only. */
#ifndef ISSIM_DISPLAY_INTERNAL_H
#define ISSIM_DISPLAY_INTERNAL_H

#include <GL/glew.h>

#include "issim/collision.h"
#include "issim/contactmap.h"
#include "issim/display.h"
#include "issim/engine.h"
#include "issim/gui.h"
#include "issim/registry.h"
#include "issim/surface.h"
#include "issim/thing.h"

/* ===== Camera (orbit about a target; z up) ===== */

typedef struct Camera {
    Vec3 target;
    double distance; /* m */
    double yaw;      /* rad, about z; 0 looks along +y */
    double pitch;    /* rad, positive looks down */
    double fov_deg;  /* vertical */
    Vec3 up;         /* world direction drawn upward on screen (unit; the scene's camera_up) */
} Camera;

typedef enum CameraPreset {
    CAMERA_FRONT, /* looking along +y */
    CAMERA_SIDE,  /* looking along -x */
    CAMERA_TOP,   /* looking down -z */
    CAMERA_ISO,
    CAMERA_PRESET_COUNT
} CameraPreset;

const char *camera_preset_name(CameraPreset preset);
/* up: the world direction drawn upward (e.g. against a tilted gravity); z when not given. */
Camera camera_from_eye(Vec3 eye, Vec3 target, double fov_deg, Vec3 up);
Vec3 camera_eye(const Camera *cam);
void camera_set_preset(Camera *cam, CameraPreset preset);
/* Frames a bounding sphere. */
void camera_fit(Camera *cam, Vec3 centre, double radius);
void camera_orbit(Camera *cam, double dx_pixels, double dy_pixels);
void camera_pan(Camera *cam, double dx_pixels, double dy_pixels, int viewport_height);
void camera_zoom(Camera *cam, double wheel_steps);
/* Column-major 4x4 view and projection matrices (OpenGL conventions). */
void camera_view_matrix(const Camera *cam, float out[16]);
void camera_projection_matrix(const Camera *cam, double aspect, float out[16]);
/* World ray through pixel (x, y) (origin top left). */
void camera_ray(const Camera *cam, int width, int height, double x, double y, Vec3 *origin,
                Vec3 *dir);
/* Pixel of a world point; false when behind the camera. */
bool camera_project(const Camera *cam, int width, int height, Vec3 p, double *x, double *y);

/* ===== Meshes ===== */

typedef struct MeshData {
    int vertex_count; /* unindexed: triangles are vertex_count / 3 */
    float *positions; /* 3 per vertex */
    float *normals;   /* 3 per vertex */
    int index_count;  /* > 0: indexed triangles (smooth lathe shapes share vertices, which
                         spares the software rasteriser 5x the vertex work) */
    unsigned *indices;
} MeshData;

void mesh_data_free(MeshData *m);
bool mesh_unit_sphere(MeshData *m, int slices, int stacks);
bool mesh_unit_box(MeshData *m); /* [-1, 1]^3, scaled by the half extents per instance */
bool mesh_capsule(MeshData *m, double radius, double half_length, int slices, int stacks);
bool mesh_hull(MeshData *m, const Hull *hull);
bool mesh_trimesh(MeshData *m, const TriMesh *mesh);
bool mesh_polygon_prism(MeshData *m, const Vec3 *points, int count, double half_width);
/* A square of side 2 in the local x-y plane, normal +z. */
bool mesh_unit_quad(MeshData *m);
/* A smooth surface's tessellation as an indexed mesh with the surface's own normals (so it
 * shades round however coarse the triangles). */
bool mesh_smooth_surface(MeshData *m, const SurfaceTessellation *t);

/* ===== Scene view: what to draw, built from a copy of the thing database ===== */

typedef struct ViewInstance {
    ThingId thing;
    int body;     /* engine body index (same order as the engine), or -1 for an obstacle */
    int mesh;     /* index into SceneView.meshes */
    Vec3 scale;   /* per-axis scale of the mesh */
    Vec3 offset;  /* mesh origin in the thing's frame (a "points" body's vertex spheres) */
    Quat local_q; /* mesh orientation in the thing's frame (a "points" body's rod) */
    float color[4];
    Pose pose;             /* current pose (bodies: from the frame at display time) */
    Aabb local_box;        /* picking: bounds in the thing's frame */
    bool wire;             /* planes other than the floor: drawn as outlines only */
    Vec3 plane_u, plane_v; /* planes: the patch's half axes (world) */
} ViewInstance;

/* Round shapes (spheres, capsules) come in levels of detail: the finest mesh is the one an
 * instance names, and each level links to the next coarser one. The renderer takes the coarser
 * mesh while its silhouette, at the instance's projected size, stays within MESH_LOD_ERROR_PX
 * of the true outline (a regular n-gon of radius r pixels is off by r (1 - cos(pi / n))). */
#define MESH_LOD_ERROR_PX 0.75

typedef struct ViewMesh {
    char key[600];
    MeshData data;
    GLuint vao, vbo, ebo, instance_vbo;
    int instance_capacity;
    bool closed;             /* a closed surface wound counter-clockwise seen from outside: back
                                faces are culled (half the triangles never reach the rasteriser) */
    int coarser;             /* the next coarser level of detail, or -1 */
    double coarser_below_px; /* take `coarser` when the round radius projects below this */
    double round_radius;     /* radius of the round part in mesh units (scaled per instance) */
    int *patch_of_triangle;  /* smooth surfaces: the patch of each triangle of data (owned, so
                                the patch in contact can be drawn: 002 6.2); else NULL */
} ViewMesh;

typedef struct ViewBody {
    char name[160];
    ThingId thing;
    EngineBodyId id; /* the session's engine's id of this body (app_session.c sets it before
                        the engine thread starts): what the display writes into the registry
                        and what it checks ids read from the registry against */
    double mass;
    int var_pos, var_orient, var_vel; /* registry variable indices of .pos.x, .orient.w, .vel.x */
    ContactMap *map; /* owned reference: the body's contact-response map, or NULL */
    int instance;    /* its first instance (the thing's pose), or -1 */
} ViewBody;

/* The haptic handle (--device): its point mapped into the world and the coupling line to the
 * proxy body, set by app_device.c every frame from REGISTRY_SLOT_HANDLE. */
#define VIEW_SURFACE_SEGMENTS 128
typedef struct ViewHandle {
    bool shown;
    /* The haptic surfaces of the scene's haptics table, mapped to the world plane of the
     * coupling: wall lines with an inward tick, texture regions' outlines (brighter for a
     * rougher texture, grey when smooth). */
    int segment_count;
    Vec3 segments[VIEW_SURFACE_SEGMENTS][2];
    float segment_colors[VIEW_SURFACE_SEGMENTS][4];
    Vec3 point;   /* the handle's world point */
    bool coupled; /* a proxy body: draw the coupling line to it */
    Vec3 proxy;   /* the proxy's centre at display time */
    bool active;  /* motors on and the coupling acting */
    double size;  /* m: half the cross; the stem is 4 sizes tall, the diamond on top */
} ViewHandle;

typedef struct SceneView {
    int instance_count, instance_capacity;
    ViewInstance *instances;
    int mesh_count, mesh_capacity;
    ViewMesh *meshes;
    int body_count;
    ViewBody *bodies;
    Hull **hulls; /* owned: hulls and meshes loaded for drawing */
    int hull_count;
    TriMesh **trimeshes;
    int trimesh_count;
    Vec3 centre; /* bounding sphere of the scene at load (camera fit, grid size) */
    double radius;
    double floor_z; /* grid height: the floor plane, else 0 */
    ViewHandle handle;
} SceneView;

/* Builds the view from db (Borrowed during the call). body_names: the engine's body names in
 * engine order (the registry variables' prefixes). scene_dir: for hull and mesh files. reg
 * NULL: a still picture of the scene's initial state (the launcher's thumbnails), which takes
 * no frames (scene_view_set_frame). */
SceneView *scene_view_create(const ThingDb *db, const Registry *reg, const char *const *body_names,
                             int body_count, const char *scene_dir, IssimError *err);
void scene_view_destroy(SceneView *view);
/* World pose of an instance's mesh: the thing's pose composed with the piece's offset. */
Pose view_instance_mesh_pose(const ViewInstance *in);
/* Sets the bodies' poses from a frame (values: registry_var_count entries). */
void scene_view_set_frame(SceneView *view, const double *values);
/* Recomputes the bounding sphere from the current poses. */
void scene_view_bounds(const SceneView *view, Vec3 *centre, double *radius);
/* Takes thing's colour from db again for its instances (a colour edit was accepted). */
void scene_view_refresh_color(SceneView *view, const ThingDb *db, ThingId thing);
/* Nearest body hit by the ray: its instance index (or -1) and the hit point. */
int scene_view_pick(const SceneView *view, Vec3 origin, Vec3 dir, Vec3 *hit);
/* The view body whose engine id is id, or -1: an id read from the registry (a packed
 * EngineBodyId another thread wrote) names a body of this view only if this session's engine
 * issued it. */
int scene_view_body_of(const SceneView *view, EngineBodyId id);
/* The node of body's map (view body index) a contact report's point and normal choose, the way
 * the contact_map model chooses it at onset (contact_map_choose), or -1: no map, not this body's
 * contact. */
int scene_view_map_node(const SceneView *view, int body, const ContactReport *c);

/* ===== Renderer ===== */

typedef struct RenderToggles {
    bool grid, contacts, forces, trails;
    bool bodies; /* false: the obstacles alone (what the bodies cover, for the tests) */
} RenderToggles;

typedef struct Renderer Renderer;

Renderer *renderer_create(IssimError *err);
void renderer_destroy(Renderer *r);
/* Uploads the meshes of a new view (GL objects owned by the view, freed by
 * scene_view_release_gl). */
void renderer_prepare_view(Renderer *r, SceneView *view);
void scene_view_release_gl(SceneView *view);

typedef struct RenderTrail {
    int count;
    const Vec3 *points;
} RenderTrail;

/* A force drawn as an arrow from `from` to `to` (render_force_arrow scales it): prescribed
 * loads, haptic coupling and wall forces. */
typedef struct RenderArrow {
    Vec3 from, to;
    GuiArrowKind kind; /* its colour (gui_arrow_colors) and the legend's line */
    const char *label; /* what it shows (the script's printouts) */
} RenderArrow;

/* The arrow of a force (N) as the 3D view draws it from a camera camera_distance m away: the
 * force's direction, gui_arrow_length (gui.h: the one logarithmic scale of every kind) long. */
Vec3 render_force_arrow(Vec3 force, double camera_distance);

typedef struct RenderFrame {
    const SceneView *view;
    const Camera *camera;
    RenderToggles toggles;
    int selected_instance; /* highlighted, or -1 */
    ThingId selected_thing;
    const ContactReport *contacts;
    int contact_count;
    const RenderTrail *trails; /* one per body, or NULL */
    bool drag_active;
    Vec3 drag_from, drag_to;
    const RenderArrow *arrows;
    int arrow_count;
    int x, y, width, height; /* the 3D view's rectangle in the window (origin top left) */
    int window_height;
} RenderFrame;

void renderer_draw(Renderer *r, const RenderFrame *frame);

/* Reads the back buffer and writes it as a PNG. */
IssimStatus display_write_png(const char *path, int width, int height, IssimError *err);

#endif
