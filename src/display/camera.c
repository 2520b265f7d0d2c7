/* Orbit camera: a target point, a distance, yaw about the world z axis (up) and pitch, as in the
 * navigation bar of 000 fig. B.4 (orbit, pan, zoom, fit, view presets). The same basis is used
 * for the GL matrices, for picking rays and for projecting points, so a picked pixel and a
 * drawn pixel agree. */
#include <math.h>

#include "display_internal.h"

#define PITCH_LIMIT 1.5690 /* just under 90 degrees: the look-at basis stays defined */

static const char *const preset_names[CAMERA_PRESET_COUNT] = {"front", "side", "top", "iso"};

const char *camera_preset_name(CameraPreset preset) {
    return preset >= 0 && preset < CAMERA_PRESET_COUNT ? preset_names[preset] : "?";
}

static Vec3 forward(const Camera *cam) {
    return (Vec3){sin(cam->yaw) * cos(cam->pitch), cos(cam->yaw) * cos(cam->pitch),
                  -sin(cam->pitch)};
}

/* Orbiting turns about world z whatever the camera's up: only the roll of the image follows
 * cam->up, so the mouse moves the view as in every other scene. Looking along the up direction
 * (or with no up set) the roll falls back to world z, where the pitch limit keeps it defined. */
static void basis(const Camera *cam, Vec3 *f, Vec3 *right, Vec3 *up) {
    *f = forward(cam);
    Vec3 r = vec3_cross(*f, cam->up);
    if (vec3_norm(r) < 1e-3)
        r = vec3_cross(*f, (Vec3){0, 0, 1});
    *right = vec3_normalize(r);
    *up = vec3_cross(*right, *f);
}

Camera camera_from_eye(Vec3 eye, Vec3 target, double fov_deg, Vec3 up) {
    Camera cam = {.target = target, .fov_deg = fov_deg, .up = (Vec3){0, 0, 1}};
    if (vec3_norm(up) > 1e-9)
        cam.up = vec3_normalize(up);
    Vec3 d = vec3_sub(target, eye);
    cam.distance = vec3_norm(d);
    if (cam.distance < 1e-6) {
        cam.distance = 1.0;
        d = (Vec3){0, 1, 0};
    }
    Vec3 f = vec3_normalize(d);
    cam.pitch = fmax(-PITCH_LIMIT, fmin(PITCH_LIMIT, asin(fmax(-1.0, fmin(1.0, -f.z)))));
    cam.yaw = atan2(f.x, f.y);
    return cam;
}

Vec3 camera_eye(const Camera *cam) {
    return vec3_sub(cam->target, vec3_scale(forward(cam), cam->distance));
}

void camera_set_preset(Camera *cam, CameraPreset preset) {
    static const double yaw_pitch[CAMERA_PRESET_COUNT][2] = {
        {0.0, 0.15}, {-M_PI / 2, 0.15}, {0.0, PITCH_LIMIT}, {M_PI / 4, 0.5}};
    if (preset < 0 || preset >= CAMERA_PRESET_COUNT)
        return;
    cam->yaw = yaw_pitch[preset][0];
    cam->pitch = yaw_pitch[preset][1];
}

void camera_fit(Camera *cam, Vec3 centre, double radius) {
    double half = 0.5 * cam->fov_deg * M_PI / 180.0;
    cam->target = centre;
    cam->distance = fmax(radius, 1e-3) / sin(half) * 1.1;
}

void camera_orbit(Camera *cam, double dx_pixels, double dy_pixels) {
    cam->yaw += dx_pixels * 0.008;
    cam->pitch = fmax(-PITCH_LIMIT, fmin(PITCH_LIMIT, cam->pitch + dy_pixels * 0.008));
}

void camera_pan(Camera *cam, double dx_pixels, double dy_pixels, int viewport_height) {
    Vec3 f, right, up;
    basis(cam, &f, &right, &up);
    /* One pixel at the target's depth. */
    double per_pixel = 2.0 * cam->distance * tan(0.5 * cam->fov_deg * M_PI / 180.0) /
                       (viewport_height > 0 ? viewport_height : 1);
    cam->target = vec3_add(cam->target, vec3_scale(right, -dx_pixels * per_pixel));
    cam->target = vec3_add(cam->target, vec3_scale(up, dy_pixels * per_pixel));
}

void camera_zoom(Camera *cam, double wheel_steps) {
    cam->distance = fmax(1e-3, fmin(1e5, cam->distance * pow(0.88, wheel_steps)));
}

void camera_view_matrix(const Camera *cam, float out[16]) {
    Vec3 f, right, up;
    basis(cam, &f, &right, &up);
    Vec3 eye = camera_eye(cam);
    float m[16] = {(float)right.x,
                   (float)up.x,
                   (float)-f.x,
                   0,
                   (float)right.y,
                   (float)up.y,
                   (float)-f.y,
                   0,
                   (float)right.z,
                   (float)up.z,
                   (float)-f.z,
                   0,
                   (float)-vec3_dot(right, eye),
                   (float)-vec3_dot(up, eye),
                   (float)vec3_dot(f, eye),
                   1};
    for (int i = 0; i < 16; i++)
        out[i] = m[i];
}

void camera_projection_matrix(const Camera *cam, double aspect, float out[16]) {
    double n = fmax(1e-4, cam->distance * 0.01), far = cam->distance * 1000.0;
    double t = 1.0 / tan(0.5 * cam->fov_deg * M_PI / 180.0);
    for (int i = 0; i < 16; i++)
        out[i] = 0;
    out[0] = (float)(t / aspect);
    out[5] = (float)t;
    out[10] = (float)((far + n) / (n - far));
    out[11] = -1;
    out[14] = (float)(2 * far * n / (n - far));
}

void camera_ray(const Camera *cam, int width, int height, double x, double y, Vec3 *origin,
                Vec3 *dir) {
    Vec3 f, right, up;
    basis(cam, &f, &right, &up);
    double t = tan(0.5 * cam->fov_deg * M_PI / 180.0);
    double aspect = (double)width / (height > 0 ? height : 1);
    double nx = 2.0 * x / width - 1.0, ny = 1.0 - 2.0 * y / height;
    *origin = camera_eye(cam);
    *dir = vec3_normalize(
        vec3_add(f, vec3_add(vec3_scale(right, nx * t * aspect), vec3_scale(up, ny * t))));
}

bool camera_project(const Camera *cam, int width, int height, Vec3 p, double *x, double *y) {
    Vec3 f, right, up;
    basis(cam, &f, &right, &up);
    Vec3 d = vec3_sub(p, camera_eye(cam));
    double z = vec3_dot(d, f);
    if (z <= 0)
        return false;
    double t = tan(0.5 * cam->fov_deg * M_PI / 180.0);
    double aspect = (double)width / (height > 0 ? height : 1);
    double nx = vec3_dot(d, right) / (z * t * aspect), ny = vec3_dot(d, up) / (z * t);
    *x = (nx + 1.0) * 0.5 * width;
    *y = (1.0 - ny) * 0.5 * height;
    return true;
}
