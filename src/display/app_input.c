/* Mouse and keyboard in the 3D view: orbit (left drag on empty space), pan (right or middle
 * drag, or shift + left), zoom (wheel), pick and drag a body with a spring (left press on a
 * body; with Alt a grasp that also holds its attitude), and the shortcuts: space pause/run, S
 * step, R reset, F fit, T follow the selected body (again: stop), Tab side panels (letters,
 * space and Tab only while the last click was in the view, not in a panel), Ctrl+O open, Ctrl+L
 * reload, with --device sim Ctrl + left drag (or any left drag with the device panel's "mouse is
 * the hand" ticked) moves the simulated pantograph's hand; F1 help, F11 fullscreen, F12
 * screenshot, Esc clear the selection, Ctrl+Q quit; with
 * --device, F9 or Pause is the emergency stop (app_device.c), whatever has the keyboard. Files
 * dropped on the window are opened. */
#include <math.h>
#include <stdio.h>

#include "app_internal.h"

/* Drag spring: a 3 Hz oscillator for the body's mass, critically damped, so a drag feels the
 * same for a 10 g pebble and a 10 kg box. */
#define DRAG_OMEGA (2.0 * M_PI * 3.0)
/* Grasp (Alt + drag): the attitude held by a 20 Hz critically damped rotational spring for the
 * body's inertia, stiff enough to keep a bolt standing on its round end upright while it is
 * pushed (a pushed bolt's tipping stiffness is a fifth of it; see
 * tests/test_validation_v12_complementarity.c). */
#define GRASP_OMEGA (2.0 * M_PI * 20.0)

void app_select(App *app, ThingId thing) {
    app->selected = thing;
    app->edits.edit_message[0] = '\0';
    if (app->session.db && !thing_id_is_null(thing) && thingdb_valid(app->session.db, thing)) {
        char path[256];
        printf("select %s\n", thing_path(app->session.db, thing, path, sizeof path));
        fflush(stdout);
    }
}

static void write_pointer(App *app) {
    Session *s = &app->session;
    if (!s->sim)
        return;
    const Drag *d = &app->pointer.drag;
    double mass =
        d->body >= 0 && d->body < s->view->body_count ? s->view->bodies[d->body].mass : 1.0;
    SimPointer pointer = {
        .dragging = d->active,
        .anchor = d->anchor_local,
        .target = d->target,
        .stiffness = mass * DRAG_OMEGA * DRAG_OMEGA,
        .damping = 2.0 * mass * DRAG_OMEGA,
        .hold_omega = d->active && d->grasp ? GRASP_OMEGA : 0.0,
    };
    if (d->body >= 0 && d->body < s->view->body_count)
        pointer.body = engine_body_id_pack(s->view->bodies[d->body].id);
    sim_pointer_write(s->reg, sim_display_time(s->sim), &pointer);
}

static void start_pick(App *app, int x, int y) {
    Session *s = &app->session;
    if (!s->view)
        return;
    Vec3 o, d, hit;
    camera_ray(&app->camera, app->win.view_w, app->win.view_h, x - app->win.view_x,
               y - app->win.view_y, &o, &d);
    int inst = scene_view_pick(s->view, o, d, &hit);
    if (inst < 0)
        return;
    const ViewInstance *in = &s->view->instances[inst];
    app_ask_select(app, in->thing);
    app->pointer.drag =
        (Drag){.active = true,
               .body = in->body,
               .anchor_local = pose_apply_inv(in->pose, hit),
               .plane_point = hit,
               .plane_normal = vec3_normalize(vec3_sub(camera_eye(&app->camera), hit)),
               .target = hit,
               .grasp = app->pointer.grasp_mode || (SDL_GetModState() & KMOD_ALT) != 0};
    write_pointer(app);
}

/* The drag target: the mouse ray meets the plane through the grabbed point facing the camera. */
static void move_drag(App *app, int x, int y) {
    Vec3 o, d;
    camera_ray(&app->camera, app->win.view_w, app->win.view_h, x - app->win.view_x,
               y - app->win.view_y, &o, &d);
    double denom = vec3_dot(d, app->pointer.drag.plane_normal);
    if (fabs(denom) < 1e-9)
        return;
    double t =
        vec3_dot(vec3_sub(app->pointer.drag.plane_point, o), app->pointer.drag.plane_normal) /
        denom;
    if (t <= 0)
        return;
    app->pointer.drag.target = vec3_add(o, vec3_scale(d, t));
    write_pointer(app);
}

static void end_drag(App *app) {
    if (!app->pointer.drag.active)
        return;
    app->pointer.drag.active = false;
    write_pointer(app);
}

void app_toggle_follow(App *app) {
    const ThingDb *db = app->session.db;
    if (app->follow_body >= 0 || !db || !thingdb_valid(db, app->selected)) {
        app_follow(app, -1);
        return;
    }
    char path[256];
    app_follow(app, app_view_body(app, thing_path(db, app->selected, path, sizeof path)));
}

/* Letters, space and Tab: the 3D view's shortcuts, which typing meant for a panel must not
 * trigger; the actions are the script table's commands (app_ask). Returns false for other
 * keys. */
static bool view_key(App *app, const SDL_KeyboardEvent *k) {
    if (k->keysym.mod & (KMOD_CTRL | KMOD_ALT | KMOD_GUI))
        return false;
    switch (k->keysym.sym) {
    case SDLK_SPACE:
        app_ask(app, app->session.sim && sim_paused(app->session.sim) ? "run" : "pause", NULL, NULL,
                NULL);
        return true;
    case SDLK_s:
        app_ask(app, "step", NULL, NULL, NULL);
        return true;
    case SDLK_r:
        app_ask(app, "reset", NULL, NULL, NULL);
        return true;
    case SDLK_f:
        app_ask(app, "fit", NULL, NULL, NULL);
        return true;
    case SDLK_t:
        app_ask(app, "follow_selected", NULL, NULL, NULL);
        return true;
    case SDLK_TAB:
        app->toggles.panels = !app->toggles.panels;
        return true;
    default:
        return false;
    }
}

/* Function keys, Esc and Ctrl chords work wherever the keyboard is (no text field has it). */
static void global_key(App *app, const SDL_KeyboardEvent *k) {
    bool ctrl = (k->keysym.mod & KMOD_CTRL) != 0;
    switch (k->keysym.sym) {
    case SDLK_F1:
        app->show_help = !app->show_help;
        break;
    case SDLK_F11:
        app->toggles.fullscreen = !app->toggles.fullscreen;
        break;
    case SDLK_o:
        app->open_dialog = app->open_dialog || ctrl;
        break;
    case SDLK_q:
        if (ctrl)
            app_ask(app, "quit", NULL, NULL, NULL);
        break;
    case SDLK_l:
        if (ctrl)
            app_ask(app, "reload", NULL, NULL, NULL);
        break;
    case SDLK_F12:
        app_ask(app, "screenshot", "screenshot.png", NULL, NULL);
        break;
    case SDLK_ESCAPE: /* closes the help first */
        if (app->show_help)
            app->show_help = false;
        else
            app_ask_select(app, thing_id_null());
        break;
    default:
        break;
    }
}

static void handle_key(App *app, const SDL_KeyboardEvent *k) {
    if (app->keys_in_panels || !view_key(app, k))
        global_key(app, k);
}

static void handle_mouse_button(App *app, const SDL_MouseButtonEvent *b) {
    bool down = b->type == SDL_MOUSEBUTTONDOWN;
    app->pointer.mouse_x = b->x;
    app->pointer.mouse_y = b->y;
    bool hand = app->pointer.mouse_hand_mode || (SDL_GetModState() & KMOD_CTRL);
    if (b->button == SDL_BUTTON_LEFT &&
        (app->device.hand_dragging || (down && hand && app_device_mouse_hand(app)))) {
        app_device_hand(app, down, b->x, b->y); /* the mouse is the pantograph's hand */
        return;
    }
    if (b->button == SDL_BUTTON_LEFT) {
        app->pointer.mouse_left = down;
        if (down) {
            app->pointer.mouse_moved = false;
            if (!(SDL_GetModState() & KMOD_SHIFT))
                start_pick(app, b->x, b->y);
        } else {
            if (!app->pointer.drag.active && !app->pointer.mouse_moved)
                app_ask_select(app, thing_id_null()); /* a click on empty space */
            end_drag(app);
        }
    } else if (b->button == SDL_BUTTON_RIGHT || b->button == SDL_BUTTON_MIDDLE) {
        app->pointer.mouse_right = down;
    }
}

static void handle_mouse_motion(App *app, const SDL_MouseMotionEvent *m) {
    app->pointer.mouse_x = m->x;
    app->pointer.mouse_y = m->y;
    if (m->xrel || m->yrel)
        app->pointer.mouse_moved = true;
    if (app->device.hand_dragging) {
        app_device_hand(app, true, m->x, m->y);
    } else if (app->pointer.drag.active) {
        move_drag(app, m->x, m->y);
    } else if (app->pointer.mouse_right ||
               (app->pointer.mouse_left && (SDL_GetModState() & KMOD_SHIFT))) {
        camera_pan(&app->camera, m->xrel, m->yrel, app->win.view_h);
    } else if (app->pointer.mouse_left) {
        camera_orbit(&app->camera, m->xrel, m->yrel);
    }
}

void app_handle_event(App *app, const SDL_Event *e) {
    switch (e->type) {
    case SDL_QUIT:
        app->quit = true;
        return;
    case SDL_DROPFILE:
        app_open_scene(app, e->drop.file, false);
        SDL_free(e->drop.file);
        return;
    case SDL_WINDOWEVENT:
        if (e->window.event == SDL_WINDOWEVENT_SIZE_CHANGED) {
            app->win.width = e->window.data1;
            app->win.height = e->window.data2;
        }
        break;
    default:
        break;
    }
    if (e->type == SDL_KEYDOWN) {
        app->key_wall = issim_wall_time() - 1e-3 * (double)(SDL_GetTicks() - e->key.timestamp);
        app->key_frame = app->rates.frame_count;
    }
    if (e->type == SDL_KEYDOWN && app_device_key(app, &e->key))
        return; /* the emergency stop, even while a text field has the keyboard */
    /* While a body is dragged the view keeps the mouse even over a panel. */
    bool gui_took = app->win.gui_ready && gui_process_event(e) && !app->pointer.drag.active;
    if (e->type == SDL_MOUSEBUTTONDOWN)
        app->keys_in_panels = gui_took && app->options.show_gui;
    if (gui_took)
        return;
    switch (e->type) {
    case SDL_KEYDOWN:
        handle_key(app, &e->key);
        break;
    case SDL_MOUSEBUTTONDOWN:
    case SDL_MOUSEBUTTONUP:
        handle_mouse_button(app, &e->button);
        break;
    case SDL_MOUSEMOTION:
        handle_mouse_motion(app, &e->motion);
        break;
    case SDL_MOUSEWHEEL:
        camera_zoom(&app->camera, e->wheel.y);
        break;
    default:
        break;
    }
}
