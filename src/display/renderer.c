/* OpenGL 3.3 core renderer (000 App. B.4.1: the user view). One draw call per mesh: every
 * instance of a mesh (all the spheres of a pile, say) is drawn with glDraw*Instanced from a
 * per-instance buffer of position, quaternion, scale and colour; the vertex shader applies
 * the pose, so nothing per vertex runs on the CPU. Round shapes take a level of detail per
 * instance and frame (display_internal.h, ViewMesh), closed meshes are drawn with back faces
 * culled: on a software rasteriser the frame's cost is mostly triangles (docs/performance.md,
 * commit gui-perf). Lighting is one directional light with ambient and Blinn-Phong terms.
 * Lines (ground grid, plane outlines, contact points, force arrows, trails, the selection box
 * and the drag spring) share one dynamic buffer. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "display_internal.h"

#define INSTANCE_FLOATS 14 /* position 3, quaternion 4 (w, x, y, z), scale 3, colour 4 */
#define LINE_FLOATS 7      /* position 3, colour 4 */

/* Lighting per vertex (Gouraud): on a software rasteriser the fragment work dominates at
 * 1280x720 (a 1,000-body scene ran at 61 fps at 320x180 and 23 at 1280x720 with per-pixel
 * lighting), and the flat faces of boxes and hulls look the same either way. */
static const char *mesh_vs =
    "#version 330 core\n"
    "layout(location = 0) in vec3 a_pos;\n"
    "layout(location = 1) in vec3 a_normal;\n"
    "layout(location = 2) in vec3 i_pos;\n"
    "layout(location = 3) in vec4 i_quat;\n"
    "layout(location = 4) in vec3 i_scale;\n"
    "layout(location = 5) in vec4 i_color;\n"
    "uniform mat4 u_view;\n"
    "uniform mat4 u_proj;\n"
    "uniform vec3 u_eye;\n"
    "uniform vec3 u_light;\n"
    "out vec4 v_color;\n"
    "vec3 qrot(vec4 q, vec3 v) {\n"
    "    vec3 u = q.yzw;\n"
    "    return v + 2.0 * cross(u, cross(u, v) + q.x * v);\n"
    "}\n"
    "void main() {\n"
    "    vec3 w = i_pos + qrot(i_quat, a_pos * i_scale);\n"
    "    vec3 n = normalize(qrot(i_quat, a_normal / i_scale));\n"
    "    vec3 v = normalize(u_eye - w);\n"
    "    if (dot(n, v) < 0.0) n = -n;\n"
    "    float diff = max(dot(n, u_light), 0.0);\n"
    "    vec3 h = normalize(u_light + v);\n"
    "    float spec = pow(max(dot(n, h), 0.0), 32.0);\n"
    "    v_color = vec4(i_color.rgb * (0.35 + 0.65 * diff) + 0.2 * spec, i_color.a);\n"
    "    gl_Position = u_proj * u_view * vec4(w, 1.0);\n"
    "}\n";

static const char *mesh_fs = "#version 330 core\n"
                             "in vec4 v_color;\n"
                             "out vec4 frag;\n"
                             "void main() { frag = v_color; }\n";

static const char *line_vs = "#version 330 core\n"
                             "layout(location = 0) in vec3 a_pos;\n"
                             "layout(location = 1) in vec4 a_color;\n"
                             "uniform mat4 u_view;\n"
                             "uniform mat4 u_proj;\n"
                             "out vec4 v_color;\n"
                             "void main() {\n"
                             "    v_color = a_color;\n"
                             "    gl_Position = u_proj * u_view * vec4(a_pos, 1.0);\n"
                             "}\n";

static const char *line_fs = "#version 330 core\n"
                             "in vec4 v_color;\n"
                             "out vec4 frag;\n"
                             "void main() { frag = v_color; }\n";

struct Renderer {
    GLuint mesh_program, line_program;
    GLint mesh_view, mesh_proj, mesh_eye, mesh_light;
    GLint line_view, line_proj;
    GLuint line_vao, line_vbo;
    float *instances;
    int instance_capacity;
    float *lines;
    int line_count, line_capacity; /* vertices */
    int overlay_first;             /* lines from here on are drawn over the solids */
    struct DepthKey *order;        /* draw order, nearest first */
    int order_capacity;
    int *drawn_mesh; /* per entry of order: the level of detail drawn, or -1 */
    int *mesh_first; /* per mesh: its first instance in `instances` (mesh_count + 1) */
    int mesh_capacity;
};

static GLuint compile(GLenum type, const char *src, IssimError *err) {
    GLuint s = glCreateShader(type);
    glShaderSource(s, 1, &src, NULL);
    glCompileShader(s);
    GLint ok = 0;
    glGetShaderiv(s, GL_COMPILE_STATUS, &ok);
    if (!ok) {
        char log[512];
        glGetShaderInfoLog(s, sizeof log, NULL, log);
        issim_error_set(err, ISSIM_ERR_STATE, "shader compilation failed: %s", log);
        glDeleteShader(s);
        return 0;
    }
    return s;
}

static GLuint link_program(const char *vs, const char *fs, IssimError *err) {
    GLuint v = compile(GL_VERTEX_SHADER, vs, err);
    GLuint f = v ? compile(GL_FRAGMENT_SHADER, fs, err) : 0;
    if (!f) {
        glDeleteShader(v);
        return 0;
    }
    GLuint p = glCreateProgram();
    glAttachShader(p, v);
    glAttachShader(p, f);
    glLinkProgram(p);
    glDeleteShader(v);
    glDeleteShader(f);
    GLint ok = 0;
    glGetProgramiv(p, GL_LINK_STATUS, &ok);
    if (!ok) {
        char log[512];
        glGetProgramInfoLog(p, sizeof log, NULL, log);
        issim_error_set(err, ISSIM_ERR_STATE, "shader link failed: %s", log);
        glDeleteProgram(p);
        return 0;
    }
    return p;
}

Renderer *renderer_create(IssimError *err) {
    Renderer *r = calloc(1, sizeof *r);
    if (!r) {
        issim_error_set(err, ISSIM_ERR_NOMEM, "out of memory");
        return NULL;
    }
    r->mesh_program = link_program(mesh_vs, mesh_fs, err);
    r->line_program = r->mesh_program ? link_program(line_vs, line_fs, err) : 0;
    if (!r->line_program) {
        renderer_destroy(r);
        return NULL;
    }
    r->mesh_view = glGetUniformLocation(r->mesh_program, "u_view");
    r->mesh_proj = glGetUniformLocation(r->mesh_program, "u_proj");
    r->mesh_eye = glGetUniformLocation(r->mesh_program, "u_eye");
    r->mesh_light = glGetUniformLocation(r->mesh_program, "u_light");
    r->line_view = glGetUniformLocation(r->line_program, "u_view");
    r->line_proj = glGetUniformLocation(r->line_program, "u_proj");
    glGenVertexArrays(1, &r->line_vao);
    glGenBuffers(1, &r->line_vbo);
    glBindVertexArray(r->line_vao);
    glBindBuffer(GL_ARRAY_BUFFER, r->line_vbo);
    glEnableVertexAttribArray(0);
    glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, LINE_FLOATS * sizeof(float), (void *)0);
    glEnableVertexAttribArray(1);
    glVertexAttribPointer(1, 4, GL_FLOAT, GL_FALSE, LINE_FLOATS * sizeof(float),
                          (void *)(3 * sizeof(float)));
    glBindVertexArray(0);
    return r;
}

void renderer_destroy(Renderer *r) {
    if (!r)
        return;
    if (r->mesh_program)
        glDeleteProgram(r->mesh_program);
    if (r->line_program)
        glDeleteProgram(r->line_program);
    if (r->line_vbo)
        glDeleteBuffers(1, &r->line_vbo);
    if (r->line_vao)
        glDeleteVertexArrays(1, &r->line_vao);
    free(r->instances);
    free(r->lines);
    free(r->order);
    free(r->drawn_mesh);
    free(r->mesh_first);
    free(r);
}

void renderer_prepare_view(Renderer *r, SceneView *view) {
    (void)r;
    for (int i = 0; i < view->mesh_count; i++) {
        ViewMesh *m = &view->meshes[i];
        if (m->vao)
            continue;
        glGenVertexArrays(1, &m->vao);
        glGenBuffers(1, &m->vbo);
        glGenBuffers(1, &m->instance_vbo);
        glBindVertexArray(m->vao);
        glBindBuffer(GL_ARRAY_BUFFER, m->vbo);
        size_t bytes = (size_t)m->data.vertex_count * 3 * sizeof(float);
        glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)(2 * bytes), NULL, GL_STATIC_DRAW);
        glBufferSubData(GL_ARRAY_BUFFER, 0, (GLsizeiptr)bytes, m->data.positions);
        glBufferSubData(GL_ARRAY_BUFFER, (GLintptr)bytes, (GLsizeiptr)bytes, m->data.normals);
        glEnableVertexAttribArray(0);
        glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, 0, (void *)0);
        glEnableVertexAttribArray(1);
        glVertexAttribPointer(1, 3, GL_FLOAT, GL_FALSE, 0, (void *)bytes);
        if (m->data.index_count > 0) {
            glGenBuffers(1, &m->ebo);
            glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, m->ebo);
            glBufferData(GL_ELEMENT_ARRAY_BUFFER,
                         (GLsizeiptr)((size_t)m->data.index_count * sizeof(unsigned)),
                         m->data.indices, GL_STATIC_DRAW);
        }
        glBindBuffer(GL_ARRAY_BUFFER, m->instance_vbo);
        GLsizei stride = INSTANCE_FLOATS * sizeof(float);
        int sizes[4] = {3, 4, 3, 4}, offset = 0;
        for (int a = 0; a < 4; a++) {
            glEnableVertexAttribArray((GLuint)(2 + a));
            glVertexAttribPointer((GLuint)(2 + a), sizes[a], GL_FLOAT, GL_FALSE, stride,
                                  (void *)(offset * sizeof(float)));
            glVertexAttribDivisor((GLuint)(2 + a), 1);
            offset += sizes[a];
        }
        glBindVertexArray(0);
    }
}

void scene_view_release_gl(SceneView *view) {
    for (int i = 0; i < view->mesh_count; i++) {
        ViewMesh *m = &view->meshes[i];
        if (!m->vao)
            continue;
        glDeleteBuffers(1, &m->vbo);
        if (m->ebo)
            glDeleteBuffers(1, &m->ebo);
        glDeleteBuffers(1, &m->instance_vbo);
        glDeleteVertexArrays(1, &m->vao);
        m->vao = m->vbo = m->ebo = m->instance_vbo = 0;
    }
}

/* ===== Lines ===== */

static void line_vertex(Renderer *r, Vec3 p, const float c[4]) {
    if (r->line_count == r->line_capacity) {
        int cap = r->line_capacity ? 2 * r->line_capacity : 4096;
        float *l = realloc(r->lines, (size_t)cap * LINE_FLOATS * sizeof(float));
        if (!l)
            return;
        r->lines = l;
        r->line_capacity = cap;
    }
    float *v = r->lines + (size_t)r->line_count * LINE_FLOATS;
    v[0] = (float)p.x, v[1] = (float)p.y, v[2] = (float)p.z;
    memcpy(v + 3, c, 4 * sizeof(float));
    r->line_count++;
}

static void line(Renderer *r, Vec3 a, Vec3 b, const float c[4]) {
    line_vertex(r, a, c);
    line_vertex(r, b, c);
}

static void grid_lines(Renderer *r, const SceneView *view) {
    static const float minor[4] = {0.42f, 0.45f, 0.5f, 1}, major[4] = {0.6f, 0.63f, 0.7f, 1};
    double half = fmax(1.0, 1.5 * view->radius);
    double spacing = pow(10.0, floor(log10(half))) / 10.0;
    int n = (int)ceil(half / spacing);
    double cx = spacing * round(view->centre.x / spacing);
    double cy = spacing * round(view->centre.y / spacing);
    double z = view->floor_z + 1e-4 * half;
    for (int i = -n; i <= n; i++) {
        const float *c = i % 10 == 0 ? major : minor;
        double o = i * spacing;
        line(r, (Vec3){cx + o, cy - n * spacing, z}, (Vec3){cx + o, cy + n * spacing, z}, c);
        line(r, (Vec3){cx - n * spacing, cy + o, z}, (Vec3){cx + n * spacing, cy + o, z}, c);
    }
}

static void plane_outline(Renderer *r, const ViewInstance *in) {
    Vec3 c = in->pose.p, u = in->plane_u, v = in->plane_v;
    float col[4] = {in->color[0], in->color[1], in->color[2], 1};
    for (int k = -4; k <= 4; k++) {
        double s = k / 4.0;
        line(r, vec3_add(c, vec3_add(vec3_scale(u, s), vec3_neg(v))),
             vec3_add(c, vec3_add(vec3_scale(u, s), v)), col);
        line(r, vec3_add(c, vec3_add(vec3_neg(u), vec3_scale(v, s))),
             vec3_add(c, vec3_add(u, vec3_scale(v, s))), col);
    }
}

static void selection_box(Renderer *r, const ViewInstance *in) {
    static const float col[4] = {1.0f, 0.85f, 0.1f, 1};
    Pose pose = view_instance_mesh_pose(in);
    Vec3 lo = in->local_box.min, hi = in->local_box.max;
    Vec3 corner[8];
    for (int k = 0; k < 8; k++)
        corner[k] =
            pose_apply(pose, (Vec3){k & 1 ? hi.x : lo.x, k & 2 ? hi.y : lo.y, k & 4 ? hi.z : lo.z});
    for (int k = 0; k < 8; k++)
        for (int bit = 1; bit < 8; bit <<= 1)
            if (!(k & bit))
                line(r, corner[k], corner[k | bit], col);
}

Vec3 render_force_arrow(Vec3 force, double camera_distance) {
    double newtons = vec3_norm(force);
    return newtons > 0.0 ? vec3_scale(force, gui_arrow_length(newtons, camera_distance) / newtons)
                         : (Vec3){0, 0, 0};
}

/* A shaft and a two-line head a fifth of its length. */
static void arrow(Renderer *r, Vec3 from, Vec3 tip, const float col[4]) {
    line(r, from, tip, col);
    Vec3 d = vec3_sub(tip, from);
    double len = vec3_norm(d);
    if (len <= 1e-9)
        return;
    Vec3 t1, t2;
    vec3_tangent_basis(vec3_scale(d, 1.0 / len), &t1, &t2);
    Vec3 back = vec3_sub(tip, vec3_scale(d, 0.2));
    line(r, tip, vec3_add(back, vec3_scale(t1, 0.08 * len)), col);
    line(r, tip, vec3_sub(back, vec3_scale(t1, 0.08 * len)), col);
}

static void contact_lines(Renderer *r, const RenderFrame *f, double size) {
    static const float point_col[4] = {1.0f, 0.2f, 0.2f, 1};
    const float *green = gui_arrow_colors[GUI_ARROW_CONTACT];
    const float force_col[4] = {green[0], green[1], green[2], 1};
    for (int i = 0; i < f->contact_count; i++) {
        const ContactReport *c = &f->contacts[i];
        if (f->toggles.contacts) {
            Vec3 axes[3] = {{size, 0, 0}, {0, size, 0}, {0, 0, size}};
            for (int a = 0; a < 3; a++)
                line(r, vec3_sub(c->point, axes[a]), vec3_add(c->point, axes[a]), point_col);
        }
        if (f->toggles.forces)
            arrow(r, c->point,
                  vec3_add(c->point, render_force_arrow(c->force, f->camera->distance)), force_col);
    }
}

/* A smooth contact (002 6.2: "the triangular patch which is currently in contact is drawn with
 * greater detail"): the triangles of body a's patch holding it as magenta edges, and the point
 * as a magenta cross. Drawn over the solids: the contact lies under the body, out of sight from
 * most views. */
static void smooth_contact_lines(Renderer *r, const SceneView *view, const ContactReport *c,
                                 double size) {
    static const float col[4] = {1.0f, 0.2f, 0.9f, 1};
    Vec3 axes[3] = {{size, 0, 0}, {0, size, 0}, {0, 0, size}};
    for (int a = 0; a < 3; a++)
        line(r, vec3_sub(c->point, axes[a]), vec3_add(c->point, axes[a]), col);
    int body = scene_view_body_of(view, engine_body_id_unpack(c->body_a));
    if (body < 0 || view->bodies[body].instance < 0)
        return;
    const ViewInstance *in = &view->instances[view->bodies[body].instance];
    const ViewMesh *mesh = &view->meshes[in->mesh];
    if (!mesh->patch_of_triangle)
        return;
    Pose pose = view_instance_mesh_pose(in);
    const MeshData *d = &mesh->data;
    for (int t = 0; t < d->index_count / 3; t++) {
        if (mesh->patch_of_triangle[t] != c->patch)
            continue;
        Vec3 p[3];
        for (int k = 0; k < 3; k++) {
            const float *v = d->positions + 3 * d->indices[3 * t + k];
            p[k] = pose_apply(pose, vec3_hadamard((Vec3){v[0], v[1], v[2]}, in->scale));
        }
        for (int k = 0; k < 3; k++)
            line(r, p[k], p[(k + 1) % 3], col);
    }
}

/* A map of at most this many nodes is drawn over the solids, each node as a cross: a flat or
 * transient map's node lies at the body's centre, hidden inside it (spheres_flat_map showed
 * no node at all). A denser map's nodes lie on its surface and stay depth-tested. */
#define MAP_FEW_NODES 16

/* Contact-map bodies (000 ch. 3): each node as a short stick along its outward normal, and the
 * node an active contact uses (the one the model chose: same rule) long and red. Cyan, not
 * the selection's yellow (a selected map body's nodes were lost in its highlight). Called
 * twice: for the dense maps (few false) before the overlay, for the small ones after it. */
static void map_node_lines(Renderer *r, const RenderFrame *f, double size, bool few) {
    static const float node_col[4] = {0.2f, 0.85f, 1.0f, 1}, active_col[4] = {1.0f, 0.2f, 0.2f, 1};
    const SceneView *view = f->view;
    for (int b = 0; b < view->body_count; b++) {
        const ViewBody *vb = &view->bodies[b];
        if (!vb->map || vb->instance < 0)
            continue;
        Pose pose = view->instances[vb->instance].pose;
        int count = contact_map_node_count(vb->map);
        if ((count <= MAP_FEW_NODES) != few)
            continue;
        int stride = count > 400 ? count / 400 : 1; /* a dense map: every k-th node */
        for (int j = 0; j < count; j += stride) {
            const ContactMapNode *n = contact_map_node(vb->map, j);
            Vec3 p = pose_apply(pose, n->position);
            line(r, p, vec3_add(p, quat_rotate(pose.q, vec3_scale(n->normal, size))), node_col);
            for (int axis = 0; few && axis < 3; axis++) {
                Vec3 d = {axis == 0 ? size : 0, axis == 1 ? size : 0, axis == 2 ? size : 0};
                line(r, vec3_sub(p, d), vec3_add(p, d), node_col);
            }
        }
        for (int i = 0; i < f->contact_count; i++) {
            int j = scene_view_map_node(view, b, &f->contacts[i]);
            if (j < 0)
                continue;
            const ContactMapNode *n = contact_map_node(vb->map, j);
            Vec3 p = pose_apply(pose, n->position);
            Vec3 d = quat_rotate(pose.q, vec3_scale(n->normal, 4.0 * size));
            line(r, vec3_sub(p, d), vec3_add(p, d), active_col);
        }
    }
}

/* Trails of many bodies share a budget of segments: 240 bodies x 240 points were 57,000 line
 * segments a frame, half the pile's frame time on llvmpipe (docs/performance.md). Over budget,
 * every trail keeps its whole span through every stride-th point, always ending at the newest.
 * A trail has its body's colour, so trails inside a pile say whose they are. */
#define TRAIL_SEGMENT_BUDGET 6000

static void trail_lines(Renderer *r, const RenderFrame *f) {
    static const float fallback[4] = {0.95f, 0.75f, 0.3f, 1};
    const SceneView *view = f->view;
    long total = 0;
    for (int b = 0; b < view->body_count; b++)
        total += f->trails[b].count;
    int stride = total > TRAIL_SEGMENT_BUDGET
                     ? (int)((total + TRAIL_SEGMENT_BUDGET - 1) / TRAIL_SEGMENT_BUDGET)
                     : 1;
    for (int b = 0; b < view->body_count; b++) {
        const RenderTrail *t = &f->trails[b];
        int inst = view->bodies[b].instance;
        const float *col = inst >= 0 ? view->instances[inst].color : fallback;
        for (int k = t->count - 1; k - stride >= 0; k -= stride)
            line(r, t->points[k - stride], t->points[k], col);
    }
}

/* The haptic handle (--device): a cross at its world point with a stem and a diamond above it
 * (the point lies inside the proxy ball when the coupling holds it), and the coupling spring to
 * the proxy. Bright while the motors are on, grey while off; drawn over the solids. */
static void handle_lines(Renderer *r, const ViewHandle *h) {
    static const float on[4] = {0.2f, 0.95f, 1.0f, 1}, off[4] = {0.7f, 0.7f, 0.7f, 1};
    static const float spring_on[4] = {1.0f, 0.3f, 1.0f, 1};
    const float *c = h->active ? on : off;
    double size = h->size;
    Vec3 p = h->point, top = vec3_add(p, (Vec3){0, 0, 4 * size});
    line(r, vec3_sub(p, (Vec3){size, 0, 0}), vec3_add(p, (Vec3){size, 0, 0}), c);
    line(r, vec3_sub(p, (Vec3){0, size, 0}), vec3_add(p, (Vec3){0, size, 0}), c);
    line(r, p, top, c);
    Vec3 d[4] = {{size, 0, 0}, {0, size, 0}, {-size, 0, 0}, {0, -size, 0}};
    for (int k = 0; k < 4; k++)
        line(r, vec3_add(top, d[k]), vec3_add(top, d[(k + 1) % 4]), c);
    if (h->coupled)
        line(r, p, h->proxy, h->active ? spring_on : off);
}

static void build_lines(Renderer *r, const RenderFrame *f) {
    const SceneView *view = f->view;
    r->line_count = 0;
    if (f->toggles.grid)
        grid_lines(r, view);
    for (int i = 0; i < view->instance_count; i++)
        if (view->instances[i].wire)
            plane_outline(r, &view->instances[i]);
    if (f->toggles.contacts)
        map_node_lines(r, f, 0.04 * view->radius, false);
    if (f->toggles.trails && f->trails)
        trail_lines(r, f);
    if (f->selected_instance >= 0 && f->selected_instance < view->instance_count)
        for (int i = 0; i < view->instance_count; i++)
            if (thing_id_equal(view->instances[i].thing, f->selected_thing))
                selection_box(r, &view->instances[i]);
    if (f->drag_active) {
        static const float col[4] = {1.0f, 1.0f, 0.2f, 1};
        line(r, f->drag_from, f->drag_to, col);
    }
    for (int i = 0; i < f->arrow_count; i++) {
        const float *rgb = gui_arrow_colors[f->arrows[i].kind];
        const float col[4] = {rgb[0], rgb[1], rgb[2], 1};
        arrow(r, f->arrows[i].from, f->arrows[i].to, col);
    }
    r->overlay_first = r->line_count;
    if (f->toggles.contacts)
        map_node_lines(r, f, 0.15 * view->radius, true);
    /* The device's walls and texture regions lie in the table's plane: depth-tested they
     * z-fought with it (pantograph_textures' quadrants flickered in and out seen from the top). */
    if (view->handle.shown)
        for (int i = 0; i < view->handle.segment_count; i++)
            line(r, view->handle.segments[i][0], view->handle.segments[i][1],
                 view->handle.segment_colors[i]);
    /* Over the solids: the hand goes inside whatever blocks the proxy (a box it pushes), and the
     * user must still see where it is. */
    if (view->handle.shown)
        handle_lines(r, &view->handle);
    /* Contact points and forces too: a resting body's contacts lie under it (box_on_plane's
     * four manifold points were hidden by the box, their forces inside it). */
    contact_lines(r, f, 0.02 * view->radius);
    for (int i = 0; i < f->contact_count; i++)
        if (f->contacts[i].patch >= 0)
            smooth_contact_lines(r, view, &f->contacts[i], 0.04 * view->radius);
}

/* ===== Meshes ===== */

static bool ensure_instances(Renderer *r, int count) {
    if (count <= r->instance_capacity)
        return true;
    float *p = realloc(r->instances, (size_t)count * INSTANCE_FLOATS * sizeof(float));
    if (!p)
        return false;
    r->instances = p;
    r->instance_capacity = count;
    return true;
}

static void instance_data(const ViewInstance *in, bool selected, float *out) {
    Pose pose = view_instance_mesh_pose(in);
    float v[INSTANCE_FLOATS] = {(float)pose.p.x,    (float)pose.p.y,    (float)pose.p.z,
                                (float)pose.q.w,    (float)pose.q.x,    (float)pose.q.y,
                                (float)pose.q.z,    (float)in->scale.x, (float)in->scale.y,
                                (float)in->scale.z, in->color[0],       in->color[1],
                                in->color[2],       in->color[3]};
    if (selected) {
        /* Highlight: half-way to a warm yellow. */
        v[10] = 0.5f * v[10] + 0.5f;
        v[11] = 0.5f * v[11] + 0.45f;
        v[12] = 0.5f * v[12];
    }
    memcpy(out, v, sizeof v);
}

typedef struct DepthKey {
    float depth;
    int instance;
} DepthKey;

static int compare_depth(const void *a, const void *b) {
    float x = ((const DepthKey *)a)->depth, y = ((const DepthKey *)b)->depth;
    return (x > y) - (x < y);
}

/* Instances nearest the camera first, so the depth test rejects hidden fragments before they
 * are shaded (a pile hides most of itself). */
static bool sort_front_to_back(Renderer *r, const RenderFrame *f) {
    const SceneView *view = f->view;
    if (view->instance_count > r->order_capacity) {
        DepthKey *k = realloc(r->order, (size_t)view->instance_count * sizeof *k);
        int *d = k ? realloc(r->drawn_mesh, (size_t)view->instance_count * sizeof *d) : NULL;
        if (k)
            r->order = k;
        if (!d)
            return false;
        r->drawn_mesh = d;
        r->order_capacity = view->instance_count;
    }
    Vec3 eye = camera_eye(f->camera);
    for (int i = 0; i < view->instance_count; i++)
        r->order[i] = (DepthKey){(float)vec3_norm(vec3_sub(view->instances[i].pose.p, eye)), i};
    qsort(r->order, (size_t)view->instance_count, sizeof *r->order, compare_depth);
    return true;
}

/* The coarsest level of detail whose outline stays within MESH_LOD_ERROR_PX at the instance's
 * size on screen (pixels_per_metre_at_1m / distance pixels per metre there). */
static int level_of_detail(const SceneView *view, const ViewInstance *in, double distance,
                           double pixels_per_metre_at_1m) {
    int m = in->mesh;
    if (view->meshes[m].coarser < 0)
        return m;
    double scale = fmax(fabs(in->scale.x), fmax(fabs(in->scale.y), fabs(in->scale.z)));
    double radius_px =
        view->meshes[m].round_radius * scale * pixels_per_metre_at_1m / fmax(distance, 1e-6);
    while (view->meshes[m].coarser >= 0 && radius_px < view->meshes[m].coarser_below_px)
        m = view->meshes[m].coarser;
    return m;
}

/* Groups the instances by the mesh drawn (a counting sort, so each group stays nearest first)
 * and fills their per-instance data; returns false on out of memory. */
static bool gather_instances(Renderer *r, const RenderFrame *f) {
    const SceneView *view = f->view;
    if (view->mesh_count + 1 > r->mesh_capacity) {
        int *p = realloc(r->mesh_first, (size_t)(view->mesh_count + 1) * sizeof *p);
        if (!p)
            return false;
        r->mesh_first = p;
        r->mesh_capacity = view->mesh_count + 1;
    }
    double tan_half = tan(0.5 * f->camera->fov_deg * M_PI / 180.0);
    double pixels_per_metre_at_1m = 0.5 * f->height / fmax(tan_half, 1e-6);
    memset(r->mesh_first, 0, (size_t)(view->mesh_count + 1) * sizeof *r->mesh_first);
    for (int k = 0; k < view->instance_count; k++) {
        const ViewInstance *in = &view->instances[r->order[k].instance];
        r->drawn_mesh[k] =
            in->wire || (!f->toggles.bodies && in->body >= 0)
                ? -1
                : level_of_detail(view, in, r->order[k].depth, pixels_per_metre_at_1m);
        if (r->drawn_mesh[k] >= 0)
            r->mesh_first[r->drawn_mesh[k] + 1]++;
    }
    for (int m = 0; m < view->mesh_count; m++)
        r->mesh_first[m + 1] += r->mesh_first[m];
    for (int k = 0; k < view->instance_count; k++) {
        int m = r->drawn_mesh[k];
        if (m < 0)
            continue;
        const ViewInstance *in = &view->instances[r->order[k].instance];
        bool selected =
            !thing_id_is_null(f->selected_thing) && thing_id_equal(in->thing, f->selected_thing);
        instance_data(in, selected, r->instances + (size_t)r->mesh_first[m] * INSTANCE_FLOATS);
        r->mesh_first[m]++;
    }
    /* Each mesh_first[m] now holds the end of group m: shift back to the starts. */
    memmove(r->mesh_first + 1, r->mesh_first, (size_t)view->mesh_count * sizeof *r->mesh_first);
    r->mesh_first[0] = 0;
    return true;
}

static void draw_meshes(Renderer *r, const RenderFrame *f) {
    const SceneView *view = f->view;
    if (!ensure_instances(r, view->instance_count) || !sort_front_to_back(r, f) ||
        !gather_instances(r, f))
        return;
    for (int m = 0; m < view->mesh_count; m++) {
        const ViewMesh *mesh = &view->meshes[m];
        int first = r->mesh_first[m], n = r->mesh_first[m + 1] - first;
        if (n == 0 || !mesh->vao)
            continue;
        if (mesh->closed)
            glEnable(GL_CULL_FACE);
        else
            glDisable(GL_CULL_FACE);
        glBindBuffer(GL_ARRAY_BUFFER, mesh->instance_vbo);
        glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)((size_t)n * INSTANCE_FLOATS * sizeof(float)),
                     r->instances + (size_t)first * INSTANCE_FLOATS, GL_STREAM_DRAW);
        glBindVertexArray(mesh->vao);
        if (mesh->data.index_count > 0)
            glDrawElementsInstanced(GL_TRIANGLES, mesh->data.index_count, GL_UNSIGNED_INT, NULL, n);
        else
            glDrawArraysInstanced(GL_TRIANGLES, 0, mesh->data.vertex_count, n);
    }
    glDisable(GL_CULL_FACE);
    glBindVertexArray(0);
}

void renderer_draw(Renderer *r, const RenderFrame *f) {
    float view[16], proj[16];
    camera_view_matrix(f->camera, view);
    camera_projection_matrix(f->camera, (double)f->width / (f->height > 0 ? f->height : 1), proj);
    Vec3 eye = camera_eye(f->camera);
    Vec3 light = vec3_normalize((Vec3){0.4, -0.3, 1.0});

    /* glClear ignores the viewport: the scissor keeps it to the 3D view's rectangle. */
    glViewport(f->x, f->window_height - f->y - f->height, f->width, f->height);
    glScissor(f->x, f->window_height - f->y - f->height, f->width, f->height);
    glEnable(GL_SCISSOR_TEST);
    glClearColor(0.16f, 0.18f, 0.22f, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    glDisable(GL_SCISSOR_TEST);
    glEnable(GL_DEPTH_TEST);
    glCullFace(GL_BACK);
    glFrontFace(GL_CCW);
    /* Solids are pushed back a little so the grid and outlines on them stay visible. */
    glEnable(GL_POLYGON_OFFSET_FILL);
    glPolygonOffset(1.0f, 1.0f);

    glUseProgram(r->mesh_program);
    glUniformMatrix4fv(r->mesh_view, 1, GL_FALSE, view);
    glUniformMatrix4fv(r->mesh_proj, 1, GL_FALSE, proj);
    glUniform3f(r->mesh_eye, (float)eye.x, (float)eye.y, (float)eye.z);
    glUniform3f(r->mesh_light, (float)light.x, (float)light.y, (float)light.z);
    draw_meshes(r, f);
    glDisable(GL_POLYGON_OFFSET_FILL);

    build_lines(r, f);
    if (r->line_count > 0) {
        glUseProgram(r->line_program);
        glUniformMatrix4fv(r->line_view, 1, GL_FALSE, view);
        glUniformMatrix4fv(r->line_proj, 1, GL_FALSE, proj);
        glBindVertexArray(r->line_vao);
        glBindBuffer(GL_ARRAY_BUFFER, r->line_vbo);
        glBufferData(GL_ARRAY_BUFFER,
                     (GLsizeiptr)((size_t)r->line_count * LINE_FLOATS * sizeof(float)), r->lines,
                     GL_STREAM_DRAW);
        glDrawArrays(GL_LINES, 0, r->overlay_first);
        glDisable(GL_DEPTH_TEST);
        glDrawArrays(GL_LINES, r->overlay_first, r->line_count - r->overlay_first);
        glEnable(GL_DEPTH_TEST);
        glBindVertexArray(0);
    }
    glUseProgram(0);
}
