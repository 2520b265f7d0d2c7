/* The launcher's thumbnails (issue 31 item 5): a scene of the list drawn once from its own
 * camera at its initial state, into a small texture the GUI shows in the scene's tooltip beside
 * its description. Drawn the first time the tooltip asks (loading the scene file again: a pile
 * of 240 bodies takes one slow frame, a folder of 10,000-body test scenes nothing until one is
 * hovered), by the renderer the 3D view uses, into an off-screen framebuffer. Display thread
 * only (the GL context's). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app_internal.h"

/* The framebuffer every thumbnail is drawn through: the scene's texture is attached as its
 * colour, the depth buffer is shared. Created at the first thumbnail. */
static bool thumbnail_target(App *app) {
    if (app->launcher.thumb_fbo)
        return true;
    glGenFramebuffers(1, &app->launcher.thumb_fbo);
    glGenRenderbuffers(1, &app->launcher.thumb_depth);
    glBindRenderbuffer(GL_RENDERBUFFER, app->launcher.thumb_depth);
    glRenderbufferStorage(GL_RENDERBUFFER, GL_DEPTH_COMPONENT24, GUI_THUMB_WIDTH, GUI_THUMB_HEIGHT);
    glBindRenderbuffer(GL_RENDERBUFFER, 0);
    return app->launcher.thumb_fbo != 0 && app->launcher.thumb_depth != 0;
}

static GLuint new_texture(void) {
    GLuint t = 0;
    glGenTextures(1, &t);
    glBindTexture(GL_TEXTURE_2D, t);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, GUI_THUMB_WIDTH, GUI_THUMB_HEIGHT, 0, GL_RGBA,
                 GL_UNSIGNED_BYTE, NULL);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
    glBindTexture(GL_TEXTURE_2D, 0);
    return t;
}

/* The view of db's scene at its initial state: its rigid bodies by path (NULL registry: the
 * poses are the scene's own), hull and mesh files from the scene's folder. */
static SceneView *initial_view(const ThingDb *db, const char *scene_path, IssimError *err) {
    int count = 0;
    for (int i = 0; i < thingdb_count(db); i++)
        count += thing_kind(db, thingdb_at(db, i)) == THING_RIGID_BODY;
    char(*paths)[256] = calloc((size_t)(count > 0 ? count : 1), sizeof *paths);
    const char **names = calloc((size_t)(count > 0 ? count : 1), sizeof *names);
    SceneView *view = NULL;
    if (paths && names) {
        int n = 0;
        for (int i = 0; i < thingdb_count(db); i++) {
            ThingId id = thingdb_at(db, i);
            if (thing_kind(db, id) == THING_RIGID_BODY)
                names[n] = thing_path(db, id, paths[n], sizeof paths[n]), n++;
        }
        char dir[GUI_PATH_MAX];
        issim_strlcpy(dir, scene_path, sizeof dir);
        char *slash = strrchr(dir, '/');
        if (slash)
            *slash = '\0';
        else
            issim_strlcpy(dir, ".", sizeof dir);
        view = scene_view_create(db, NULL, names, count, dir, err);
    }
    free(paths);
    free(names);
    return view;
}

static void render_thumbnail(App *app, int scene, const ThingDb *db) {
    IssimError err = {0};
    SceneView *view = initial_view(db, app->launcher.scenes[scene], &err);
    if (!view) {
        issim_log(ISSIM_LOG_DEBUG, "thumbnail of %s: %s", app->launcher.scenes[scene], err.message);
        return;
    }
    renderer_prepare_view(app->win.renderer, view);
    ThingId u = thingdb_find_kind(db, THING_UNIVERSE);
    Camera camera =
        camera_from_eye(thing_vec3(db, u, "camera_eye"), thing_vec3(db, u, "camera_target"),
                        thing_real(db, u, "camera_fov"), thing_vec3(db, u, "camera_up"));
    if (!app->launcher.scene_thumbs[scene])
        app->launcher.scene_thumbs[scene] = new_texture();
    glBindFramebuffer(GL_FRAMEBUFFER, app->launcher.thumb_fbo);
    glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D,
                           app->launcher.scene_thumbs[scene], 0);
    glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_DEPTH_ATTACHMENT, GL_RENDERBUFFER,
                              app->launcher.thumb_depth);
    if (glCheckFramebufferStatus(GL_FRAMEBUFFER) == GL_FRAMEBUFFER_COMPLETE) {
        glViewport(0, 0, GUI_THUMB_WIDTH, GUI_THUMB_HEIGHT);
        glClear(GL_DEPTH_BUFFER_BIT);
        RenderFrame f = {.view = view,
                         .camera = &camera,
                         .toggles = {.grid = true, .bodies = true},
                         .selected_instance = -1,
                         .selected_thing = thing_id_null(),
                         .width = GUI_THUMB_WIDTH,
                         .height = GUI_THUMB_HEIGHT,
                         .window_height = GUI_THUMB_HEIGHT};
        renderer_draw(app->win.renderer, &f);
    }
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    glViewport(0, 0, app->win.width, app->win.height);
    scene_view_release_gl(view);
    scene_view_destroy(view);
}

void app_thumbnail_request(App *app, int scene) {
    if (!app->win.renderer || scene < 0 || scene >= app->launcher.scene_count ||
        app->launcher.thumb_tried[scene])
        return;
    app->launcher.thumb_tried[scene] = true;
    ThingDb *db = NULL;
    IssimError err = {0};
    if (thumbnail_target(app) &&
        scene_load_file(app->launcher.scenes[scene], NULL, &db, &err) == ISSIM_OK)
        render_thumbnail(app, scene, db);
    thingdb_destroy(db);
}

int app_thumbnail_coverage(const App *app, int scene) {
    if (scene < 0 || scene >= GUI_MAX_SCENES || !app->launcher.scene_thumbs[scene])
        return -1;
    unsigned char *rgba = malloc((size_t)GUI_THUMB_WIDTH * GUI_THUMB_HEIGHT * 4);
    if (!rgba)
        return -1;
    glBindTexture(GL_TEXTURE_2D, app->launcher.scene_thumbs[scene]);
    glGetTexImage(GL_TEXTURE_2D, 0, GL_RGBA, GL_UNSIGNED_BYTE, rgba);
    glBindTexture(GL_TEXTURE_2D, 0);
    /* the renderer's clear colour (0.16, 0.18, 0.22): what is not background is the scene */
    int drawn = 0;
    for (int i = 0; i < GUI_THUMB_WIDTH * GUI_THUMB_HEIGHT; i++) {
        const unsigned char *p = rgba + 4 * i;
        drawn += abs(p[0] - 41) + abs(p[1] - 46) + abs(p[2] - 56) > 12;
    }
    free(rgba);
    return drawn;
}

void app_thumbnails_free(App *app) {
    memset(app->launcher.thumb_tried, 0, sizeof app->launcher.thumb_tried);
    for (int i = 0; i < GUI_MAX_SCENES; i++)
        if (app->launcher.scene_thumbs[i]) {
            glDeleteTextures(1, &app->launcher.scene_thumbs[i]);
            app->launcher.scene_thumbs[i] = 0;
        }
    if (app->launcher.thumb_fbo)
        glDeleteFramebuffers(1, &app->launcher.thumb_fbo);
    if (app->launcher.thumb_depth)
        glDeleteRenderbuffers(1, &app->launcher.thumb_depth);
    app->launcher.thumb_fbo = app->launcher.thumb_depth = 0;
}
