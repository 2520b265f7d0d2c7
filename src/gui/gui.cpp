// The Dear ImGui panels behind the C API of issim/gui.h (000 App. B.6: the experiment design
// window is the launcher and the thing tree, the property sheet is the property editor, the
// user view is the 3D view the display draws behind these panels). This file only reads the
// GuiState it is given and writes GuiRequests; the display carries them out.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstring>

#include <GL/glew.h>
#include <SDL.h>
#include <imgui.h>
#include <imgui_internal.h> // GetActiveID: a typed field is committed once it lost the keyboard
#include <backends/imgui_impl_opengl3.h>
#include <backends/imgui_impl_sdl.h>

// issim's headers are C11: its one C-only keyword gets the C++ spelling here.
#define _Noreturn [[noreturn]]
extern "C" {
#include "issim/contactmap.h"
#include "issim/core.h"
#include "issim/registry.h"
#include "issim/thing.h"
}
#include "issim/gui.h"
#undef _Noreturn
#include "gui_layout.h"
#include "gui_playback.h"
#include "gui_plots.h"

namespace {

const float kMenuHeight = GUI_MENU_HEIGHT;
const float kStatusHeight = GUI_STATUS_HEIGHT;
const ImVec4 kRed(1.0f, 0.4f, 0.35f, 1.0f);
const ImVec4 kGreen(0.5f, 0.9f, 0.5f, 1.0f);

struct GuiMemory {
    char open_path[GUI_PATH_MAX] = "";
    char record_path[GUI_PATH_MAX] = "recording.csv";
    char record_vars[1024] = "";
    char save_path[GUI_PATH_MAX] = "scene_saved.lua";
    char save_description[GUI_DESCRIPTION_MAX] = "";
    char video_path[GUI_PATH_MAX] = "video.mp4";
    bool video_sim_time = false;
    char screenshot_path[GUI_PATH_MAX] = "screenshot.png";
    float speed = 1.0f;
    float scrub = 0.0f;
    bool save_dialog = false;
    bool saved_once = false; // File > Save writes save_path again without asking
    float property_table_y = -1.0f;
    bool device_hint_shown = false;
    double scrubber_note = NAN; // the reach the scrubber's note gave last frame; NaN: no note
};

// The text field being typed in. ImGui 1.86 reports a field left by Tab as deactivated only
// after the next field took the keyboard, a frame too late for the caller, which then redrew
// it from the old value: the typed text lives here until it is committed.
struct TypedField {
    ImGuiID id = 0;
    char path[2 * REGISTRY_EDIT_PATH_MAX + 256] = "";
    const PropDef *def = nullptr;
    char text[REGISTRY_EDIT_VALUE_MAX] = "";
    char original[REGISTRY_EDIT_VALUE_MAX] = "";
};
TypedField g_field;

GuiMemory g_mem;
bool g_created = false;
bool g_font_nearest = false; // the font atlas samples nearest (once per context)
// The pointer as the last SDL event placed it: used when the SDL back-end cannot read it
// (a window without input focus, as under the offscreen driver the tests use).
ImVec2 g_event_mouse(-FLT_MAX, -FLT_MAX);
// ImGui 1.86 reads key state once per frame (io.KeysDown): a key pressed and released between
// two frames would never be seen down. The release of a key that went down since the last
// frame is held back and fed after that frame, so every tap lasts at least one frame.
const int kScancodes = 512;
bool g_down_since_frame[kScancodes];
const int kHeldMax = 64;
SDL_Event g_held_releases[kHeldMax];
int g_held_count = 0;

// true when the event is a release held back for the next frame
bool hold_key_release(const SDL_Event *e) {
    int code = e->key.keysym.scancode;
    if (code < 0 || code >= kScancodes)
        return false;
    if (e->type == SDL_KEYDOWN) {
        g_down_since_frame[code] = true;
        return false;
    }
    if (e->type != SDL_KEYUP || !g_down_since_frame[code] || g_held_count == kHeldMax)
        return false;
    g_held_releases[g_held_count++] = *e;
    return true;
}

// After a frame has seen the keys down: the held releases, then a clean slate.
void release_held_keys() {
    for (int i = 0; i < g_held_count; i++)
        ImGui_ImplSDL2_ProcessEvent(&g_held_releases[i]);
    g_held_count = 0;
    std::memset(g_down_since_frame, 0, sizeof g_down_since_frame);
}

void copy_text(char *dst, const char *src, size_t size) {
    issim_strlcpy(dst, src ? src : "", size);
}

// ImGui 1.86 samples the buttons once per frame: a press and release (or two clicks) between
// two frames would count once or not at all. Button events wait here and are applied one
// change per button and frame; the display runs GUI-only frames while some wait.
const int kMouseQueueMax = 64;
SDL_Event g_mouse_queue[kMouseQueueMax];
int g_mouse_queued = 0;
bool g_button_down[3];

int button_index(Uint8 button) {
    return button == SDL_BUTTON_LEFT     ? 0
           : button == SDL_BUTTON_RIGHT  ? 1
           : button == SDL_BUTTON_MIDDLE ? 2
                                         : -1;
}

void queue_mouse_button(const SDL_Event *e) {
    if (g_mouse_queued < kMouseQueueMax)
        g_mouse_queue[g_mouse_queued++] = *e;
}

// At most one change per button this frame, at the pointer position of its event.
void apply_mouse_queue() {
    ImGuiIO &io = ImGui::GetIO();
    bool changed[3] = {false, false, false};
    int used = 0;
    for (; used < g_mouse_queued; used++) {
        const SDL_MouseButtonEvent &b = g_mouse_queue[used].button;
        int k = button_index(b.button);
        bool down = b.type == SDL_MOUSEBUTTONDOWN;
        if (k < 0 || g_button_down[k] == down)
            continue;
        if (changed[k])
            break;
        changed[k] = true;
        g_button_down[k] = down;
        io.MousePos = ImVec2((float)b.x, (float)b.y);
    }
    std::memmove(g_mouse_queue, g_mouse_queue + used, sizeof(SDL_Event) * (g_mouse_queued - used));
    g_mouse_queued -= used;
    for (int k = 0; k < 3; k++)
        io.MouseDown[k] = g_button_down[k];
}

// ===== Menu bar and navigation bar =====

void request_save(GuiRequests *r) {
    r->file.save = true;
    copy_text(r->file.save_path, g_mem.save_path, sizeof r->file.save_path);
    copy_text(r->file.save_description, g_mem.save_description, sizeof r->file.save_description);
    g_mem.saved_once = true;
}

// Save writes where the last save went; the first one asks where.
void save_or_ask(GuiRequests *r) {
    if (g_mem.saved_once)
        request_save(r);
    else
        g_mem.save_dialog = true;
}

void recent_menu(const GuiState *s, GuiRequests *r) {
    if (!ImGui::BeginMenu("Recent", s->launcher.recent_count > 0))
        return;
    for (int i = 0; i < s->launcher.recent_count; i++)
        if (ImGui::MenuItem(s->launcher.recent[i])) {
            r->file.open = true;
            copy_text(r->file.open_path, s->launcher.recent[i], sizeof r->file.open_path);
        }
    ImGui::EndMenu();
}

void menu_bar(const GuiState *s, GuiRequests *r) {
    if (!ImGui::BeginMainMenuBar())
        return;
    if (ImGui::BeginMenu("File")) {
        if (ImGui::MenuItem("Open...", "Ctrl+O") && s->open_dialog)
            *s->open_dialog = true;
        recent_menu(s, r);
        if (ImGui::MenuItem("Save", nullptr, false, s->db != nullptr))
            save_or_ask(r);
        if (ImGui::MenuItem("Save as...", nullptr, false, s->db != nullptr))
            g_mem.save_dialog = true;
        ImGui::Separator();
        if (ImGui::MenuItem("Reload scene", "Ctrl+L", false, s->scene_path[0] != '\0'))
            r->file.reload = true;
        if (ImGui::MenuItem("Rescan scenes"))
            r->file.refresh_scenes = true;
        if (ImGui::MenuItem("Screenshot", "F12")) {
            r->capture.screenshot = true;
            copy_text(r->capture.screenshot_path, g_mem.screenshot_path,
                      sizeof r->capture.screenshot_path);
        }
        if (ImGui::MenuItem("Quit", "Ctrl+Q"))
            r->file.quit = true;
        ImGui::EndMenu();
    }
    if (ImGui::BeginMenu("Help")) {
        if (s->show_help)
            ImGui::MenuItem("Keys and mouse", "F1", s->show_help);
        ImGui::EndMenu();
    }
    if (ImGui::BeginMenu("View")) {
        GuiToggles *t = s->toggles;
        ImGui::MenuItem("Side panels", "Tab", &t->panels);
        ImGui::MenuItem("Fullscreen", "F11", &t->fullscreen);
        ImGui::MenuItem("VSync (60 fps limit)", nullptr, &t->vsync);
        ImGui::MenuItem("Contacts of the selected body only", nullptr, &t->selected_contacts);
        ImGui::MenuItem("Bodies", nullptr, &t->bodies);
        ImGui::MenuItem("Ground grid", nullptr, &t->grid);
        ImGui::MenuItem("Contact points", nullptr, &t->contacts);
        ImGui::MenuItem("Contact forces", nullptr, &t->forces);
        ImGui::MenuItem("Trajectory trails", nullptr, &t->trails);
        if (ImGui::MenuItem("Fit to scene", "F"))
            r->fit = true;
        ImGui::EndMenu();
    }
    ImGui::EndMainMenuBar();
}

void navigation_bar(const GuiState *s, GuiRequests *r) {
    ImGui::SetNextWindowPos(ImVec2((float)s->side_width + 8, kMenuHeight + 6));
    // Never wider than the view: its items wrap instead of running under the right panel.
    float view_width = (float)(s->width - 2 * s->side_width) - 16;
    ImGui::SetNextWindowSizeConstraints(ImVec2(0, 0), ImVec2(view_width, FLT_MAX));
    ImGui::SetNextWindowBgAlpha(0.75f);
    ImGuiWindowFlags flags = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_AlwaysAutoResize |
                             ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoSavedSettings;
    if (ImGui::Begin("Navigation", nullptr, flags)) {
        layout_row_limit(ImGui::GetWindowPos().x + view_width - ImGui::GetStyle().WindowPadding.x);
        const char *names[] = {"Front", "Side", "Top", "Iso", "Fit"};
        for (int i = 0; i < 5; i++) {
            bool pressed = i == 0 ? ImGui::Button(names[i]) : button_same_line_if_fits(names[i]);
            if (pressed && i < 4)
                r->camera_preset = i;
            else if (pressed)
                r->fit = true;
        }
        // The toggles on a row of their own: one row of everything was wider than the view
        // between the panels (600 pixels at 1280 x 720) and ran under the right panel.
        GuiToggles *t = s->toggles;
        ImGui::Checkbox("Grid", &t->grid);
        checkbox_same_line_if_fits("Contacts", &t->contacts);
        checkbox_same_line_if_fits("Forces", &t->forces);
        checkbox_same_line_if_fits("Trails", &t->trails);
        bool following = s->following && s->following[0];
        if (checkbox_same_line_if_fits("Follow (T)", &following))
            r->follow_toggle = true;
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip("%s", following ? s->following
                                              : "keep the selected body in view as it moves");
        layout_row_limit(0.0f);
        layout_measure_overflow(GUI_PANEL_NAVIGATION);
    }
    ImGui::End();
}

// ===== Legend of the force arrows (gui.h: their one logarithmic scale) =====

ImU32 arrow_color(int kind) {
    const float *c = gui_arrow_colors[kind];
    return ImGui::GetColorU32(ImVec4(c[0], c[1], c[2], 1.0f));
}

// One arrow kind: a short line of its colour, then its name.
void legend_kind(int kind, bool first) {
    static const char *const names[GUI_ARROW_KINDS] = {"contact", "load", "coupling (proxy)",
                                                       "hand (motors)", "wall"};
    float swatch = 18.0f, inner = ImGui::GetStyle().ItemInnerSpacing.x;
    if (!first)
        same_line_if_fits(swatch + inner + ImGui::CalcTextSize(names[kind]).x);
    ImVec2 at = ImGui::GetCursorScreenPos();
    float mid = at.y + 0.5f * ImGui::GetTextLineHeight();
    ImGui::GetWindowDrawList()->AddLine(ImVec2(at.x, mid), ImVec2(at.x + swatch, mid),
                                        arrow_color(kind), 3.0f);
    ImGui::Dummy(ImVec2(swatch, ImGui::GetTextLineHeight()));
    ImGui::SameLine(0.0f, inner);
    ImGui::TextUnformatted(names[kind]);
}

// The scale as a ruler: from its left end, how long the arrow of 0.1 N, 1 N, 10 N... is across
// the line of sight at the camera's target (nearer arrows look longer, farther ones shorter).
void legend_ruler(const GuiState *s, float room) {
    const double ticks[] = {0.1, 1.0, 10.0, 100.0, 1000.0};
    const char *labels[] = {"0.1", "1", "10", "100", "1000"};
    float unit = ImGui::CalcTextSize(" N").x;
    int shown = 0;
    float x[5];
    for (; shown < 5; shown++) {
        x[shown] = (float)(gui_arrow_length(ticks[shown], 1.0) * s->arrow_px_per_distance);
        if (x[shown] + 0.5f * ImGui::CalcTextSize(labels[shown]).x + unit > room)
            break;
    }
    ImVec2 at = ImGui::GetCursorScreenPos();
    ImDrawList *dl = ImGui::GetWindowDrawList();
    ImU32 ink = ImGui::GetColorU32(ImGuiCol_Text);
    float end = shown > 0 ? x[shown - 1] : 0.0f, label_end = -1e9f;
    dl->AddLine(ImVec2(at.x, at.y), ImVec2(at.x + end, at.y), ink);
    dl->AddLine(ImVec2(at.x, at.y), ImVec2(at.x, at.y + 6), ink);
    for (int i = 0; i < shown; i++) {
        float w = ImGui::CalcTextSize(labels[i]).x, left = at.x + x[i] - 0.5f * w;
        dl->AddLine(ImVec2(at.x + x[i], at.y), ImVec2(at.x + x[i], at.y + 6), ink);
        if (left > label_end + 4) { // labels that would touch are left out (ticks stay)
            dl->AddText(ImVec2(left, at.y + 7), ink, labels[i]);
            label_end = left + w;
        }
    }
    dl->AddText(ImVec2(label_end, at.y + 7), ink, " N");
    ImGui::Dummy(ImVec2(std::max(label_end - at.x + unit, 1.0f), ImGui::GetTextLineHeight() + 8));
}

// A scene felt through a haptic device (it has a handle, a "user" thing) opened without one:
// its handle never moves, so the view says how to start a device instead of showing a still
// scene with no hint (pantograph_edge, _push, _textures).
void device_hint(const GuiState *s) {
    g_mem.device_hint_shown = false;
    if (s->device || !s->db || thing_id_is_null(thingdb_find_kind(s->db, THING_USER)))
        return;
    g_mem.device_hint_shown = true;
    float left = (float)s->side_width, right = (float)(s->width - s->side_width);
    if (s->side_width <= 0)
        right = (float)s->width;
    ImGui::SetNextWindowPos(ImVec2(0.5f * (left + right), 100.0f), ImGuiCond_Always,
                            ImVec2(0.5f, 0.0f));
    ImGui::SetNextWindowSize(ImVec2(std::min(460.0f, right - left - 20.0f), 0.0f));
    ImGui::SetNextWindowBgAlpha(0.85f);
    ImGui::Begin("##device_hint", nullptr,
                 ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                     ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoFocusOnAppearing |
                     ImGuiWindowFlags_NoNav);
    ImGui::TextColored(ImVec4(1.0f, 0.75f, 0.3f, 1.0f),
                       "No haptic device: nothing moves the handle");
    ImGui::TextWrapped("This scene is felt through a haptic device. Start it with one: "
                       "issim run %s --device sim (a simulated pantograph and hand), "
                       "--device usb or --device serial:PATH (a real one; docs/haptics.md).",
                       s->scene_path && s->scene_path[0] ? s->scene_path : "SCENE");
    ImGui::End();
}

// The bodies' labels in the 3D view (clipped to it, under the panels): each centred 40 px
// above its body's centre on a dark plate, so it reads on the floor and on the sky alike, with a
// line down to the body; a label that would cover one placed before it goes a line higher.
void body_labels(const GuiState *s) {
    ImDrawList *dl = ImGui::GetBackgroundDrawList();
    float right = (float)(s->side_width > 0 ? s->width - s->side_width : s->width);
    dl->PushClipRect(ImVec2((float)s->side_width, 0.0f), ImVec2(right, (float)s->height), true);
    ImVec2 placed[GUI_MAX_LABELS][2];
    for (int i = 0; i < s->label_count && i < GUI_MAX_LABELS; i++) {
        const GuiLabel &l = s->labels[i];
        ImVec2 size = ImGui::CalcTextSize(l.text);
        ImVec2 lo(l.x - 0.5f * size.x - 4.0f, l.y - 40.0f - size.y - 2.0f);
        ImVec2 hi(lo.x + size.x + 8.0f, lo.y + size.y + 4.0f);
        for (int j = 0; j < i; j++)
            if (lo.x < placed[j][1].x && hi.x > placed[j][0].x && lo.y < placed[j][1].y &&
                hi.y > placed[j][0].y) {
                float up = hi.y - placed[j][0].y + 2.0f;
                lo.y -= up, hi.y -= up, j = -1; // and check every earlier one again
            }
        placed[i][0] = lo, placed[i][1] = hi;
        dl->AddLine(ImVec2(l.x, l.y), ImVec2(l.x, hi.y), IM_COL32(255, 255, 255, 200), 1.0f);
        dl->AddRectFilled(lo, hi, IM_COL32(0, 0, 0, 180), 3.0f);
        dl->AddText(ImVec2(lo.x + 4.0f, lo.y + 2.0f), IM_COL32(255, 255, 255, 255), l.text);
    }
    dl->PopClipRect();
}

// Bottom left of the 3D view while arrows are drawn: what each colour is, and the scale.
void arrow_legend(const GuiState *s) {
    if (!s->arrow_kinds || !(s->arrow_px_per_distance > 0))
        return;
    float view_width = (float)(s->width - 2 * s->side_width) - 16;
    ImGui::SetNextWindowPos(ImVec2((float)s->side_width + 8, s->height - kStatusHeight - 6),
                            ImGuiCond_Always, ImVec2(0.0f, 1.0f));
    ImGui::SetNextWindowSizeConstraints(ImVec2(0, 0), ImVec2(view_width, FLT_MAX));
    ImGui::SetNextWindowBgAlpha(0.75f);
    ImGuiWindowFlags flags = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_AlwaysAutoResize |
                             ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoSavedSettings |
                             ImGuiWindowFlags_NoInputs | ImGuiWindowFlags_NoFocusOnAppearing;
    if (ImGui::Begin("Force arrows", nullptr, flags)) {
        float inner = view_width - 2 * ImGui::GetStyle().WindowPadding.x;
        layout_row_limit(ImGui::GetWindowPos().x + ImGui::GetStyle().WindowPadding.x + inner);
        ImGui::TextUnformatted("force arrows, log scale:");
        bool first = true;
        for (int kind = 0; kind < GUI_ARROW_KINDS; kind++)
            if (s->arrow_kinds & (1u << kind)) {
                legend_kind(kind, first);
                first = false;
            }
        legend_ruler(s, inner);
        layout_row_limit(0.0f);
    }
    ImGui::End();
}

// Ctrl+O: a small window with the path field, focused, holding the current scene's path
// wholly selected: typing replaces it (it used to append to the old path), the arrow keys edit it.
void open_dialog(const GuiState *s, GuiRequests *r) {
    if (!s->open_dialog || !*s->open_dialog)
        return;
    ImGui::SetNextWindowPos(ImVec2(s->width * 0.5f, s->height * 0.3f), ImGuiCond_Always,
                            ImVec2(0.5f, 0.5f));
    ImGui::SetNextWindowSize(ImVec2(480, 0));
    if (ImGui::Begin("Open scene", s->open_dialog, ImGuiWindowFlags_NoSavedSettings)) {
        if (ImGui::IsWindowAppearing()) {
            if (s->scene_path[0])
                copy_text(g_mem.open_path, s->scene_path, sizeof g_mem.open_path);
            ImGui::SetKeyboardFocusHere();
        }
        ImGui::SetNextItemWidth(-60);
        // The whole old path selected: what is typed replaces it.
        bool enter = ImGui::InputText("##dialogpath", g_mem.open_path, sizeof g_mem.open_path,
                                      ImGuiInputTextFlags_EnterReturnsTrue |
                                          ImGuiInputTextFlags_AutoSelectAll);
        ImGui::SameLine();
        if ((ImGui::Button("Open") || enter) && g_mem.open_path[0]) {
            r->file.open = true;
            copy_text(r->file.open_path, g_mem.open_path, sizeof r->file.open_path);
            *s->open_dialog = false;
        }
        ImGui::TextDisabled("a scene file path, e.g. scenes/pile.lua");
    }
    ImGui::End();
}

// File > Save as: the path and the description, then Save.
void save_dialog(const GuiState *s, GuiRequests *r) {
    if (!g_mem.save_dialog || !s->db)
        return;
    ImGui::SetNextWindowPos(ImVec2(s->width * 0.5f, s->height * 0.3f), ImGuiCond_Always,
                            ImVec2(0.5f, 0.5f));
    ImGui::SetNextWindowSize(ImVec2(480, 0));
    if (ImGui::Begin("Save scene as", &g_mem.save_dialog, ImGuiWindowFlags_NoSavedSettings)) {
        if (ImGui::IsWindowAppearing())
            ImGui::SetKeyboardFocusHere();
        bool enter = ImGui::InputText("file", g_mem.save_path, sizeof g_mem.save_path,
                                      ImGuiInputTextFlags_EnterReturnsTrue |
                                          ImGuiInputTextFlags_AutoSelectAll);
        ImGui::InputTextWithHint("description", "empty: the scene's, with the edits noted",
                                 g_mem.save_description, sizeof g_mem.save_description);
        if ((ImGui::Button("Save") || enter) && g_mem.save_path[0]) {
            request_save(r);
            g_mem.save_dialog = false;
        }
        ImGui::SameLine();
        ImGui::TextDisabled("the scene as edited, with this camera");
    }
    ImGui::End();
}

// ===== Help overlay (F1) =====

struct HelpLine {
    const char *keys, *action;
};

// Every key and mouse action of the window (app_input.c, app_device.c).
const HelpLine kHelp[] = {
    {"F1", "this help (again, or Esc: close)"},
    {"Space", "pause / run (after scrubbing back: run from there)"},
    {"S", "one output step (pauses)"},
    {"R", "reset the scene as edited to its initial state"},
    {"F", "fit the camera to the scene"},
    {"T", "follow the selected body with the camera (again: stop)"},
    {"Esc", "clear the selection"},
    {"Ctrl+O", "open a scene by path"},
    {"Ctrl+L", "reload the scene file (keeps camera and selection)"},
    {"Ctrl+Q", "quit"},
    {"F12", "screenshot to screenshot.png"},
    {"Tab", "view: hide / show the side panels; in a field: commit, next field"},
    {"Letters, space, Tab", "shortcuts only after a click in the 3D view, not in a panel"},
    {"F11", "fullscreen (again: windowed)"},
    {"F9 / Pause", "emergency stop of the haptic device (--device)"},
    {"Left drag, empty space", "orbit the camera"},
    {"Left drag on a body", "select it and pull it with a spring"},
    {"Alt + left drag on a body", "grasp it: pull it and hold its attitude"},
    {"Right / middle drag, Shift+left", "pan"},
    {"Wheel", "zoom"},
    {"Ctrl + left drag (--device sim)", "move the simulated pantograph's hand"},
    {"Drop a .lua file", "open it"},
};

void help_overlay(const GuiState *s) {
    if (!s->show_help || !*s->show_help)
        return;
    ImGui::SetNextWindowPos(ImVec2(s->width * 0.5f, s->height * 0.5f), ImGuiCond_Always,
                            ImVec2(0.5f, 0.5f));
    ImGui::SetNextWindowBgAlpha(0.92f);
    ImGuiWindowFlags flags = ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoSavedSettings |
                             ImGuiWindowFlags_NoCollapse;
    if (ImGui::Begin("Keys and mouse (F1)", s->show_help, flags)) {
        if (ImGui::BeginTable("##help", 2, ImGuiTableFlags_RowBg)) {
            for (const HelpLine &h : kHelp) {
                ImGui::TableNextColumn();
                ImGui::TextUnformatted(h.keys);
                ImGui::TableNextColumn();
                ImGui::TextUnformatted(h.action);
            }
            ImGui::EndTable();
        }
    }
    ImGui::End();
}

// ===== Left panel: launcher, thing tree, property editor =====

// One line whatever the path's length, so the panels below keep their places: a long path
// shows its end (the file name), the whole of it in a tooltip.
void current_scene_line(const char *path) {
    const char *shown = path;
    float room = ImGui::GetContentRegionAvail().x - ImGui::CalcTextSize("Current: ...").x;
    float width = ImGui::CalcTextSize(shown).x;
    while (shown[0] && shown[1] && width > room) {
        const char *next = shown + 1;
        while ((*next & 0xC0) == 0x80) // whole UTF-8 characters
            next++;
        width -= ImGui::CalcTextSize(shown, next).x;
        shown = next;
    }
    ImGui::Text("Current: %s%s", shown == path ? "" : "...", shown);
    if (shown != path && ImGui::IsItemHovered())
        ImGui::SetTooltip("%s", path);
}

const char *scene_description(const GuiState *s, int i) {
    return i < s->launcher.described ? s->launcher.scene_descriptions[i]
                                     : "(reading the scene file)";
}

// A scene's name in the list: the file name without the folder and .lua, so two columns hold
// every scene of scenes/ without cutting one.
void scene_label(const char *path, char *out, size_t size) {
    const char *slash = std::strrchr(path, '/');
    copy_text(out, slash ? slash + 1 : path, size);
    size_t n = std::strlen(out);
    if (n > 4 && std::strcmp(out + n - 4, ".lua") == 0)
        out[n - 4] = '\0';
}

// The scene at its start from its own camera (app_thumbs.c), once drawn.
void scene_thumbnail(const GuiState *s, int i) {
    if (!s->launcher.scene_thumbnails || !s->launcher.scene_thumbnails[i])
        return;
    // The texture's rows are bottom up (OpenGL): v runs from 1 at the top to 0.
    ImGui::Image((ImTextureID)(intptr_t)s->launcher.scene_thumbnails[i],
                 ImVec2(GUI_THUMB_WIDTH, GUI_THUMB_HEIGHT), ImVec2(0, 1), ImVec2(1, 0));
}

// One line, cut with "..." to the panel's width; the whole text in a tooltip.
void one_line(const char *text) {
    float room = ImGui::GetContentRegionAvail().x;
    if (ImGui::CalcTextSize(text).x <= room) {
        ImGui::TextDisabled("%s", text);
        return;
    }
    char cut[GUI_DESCRIPTION_MAX];
    copy_text(cut, text, sizeof cut);
    size_t n = std::strlen(cut);
    while (n > 0 && ImGui::CalcTextSize(cut).x + ImGui::CalcTextSize("...").x > room) {
        do
            n--;
        while (n > 0 && (cut[n] & 0xC0) == 0x80); // whole UTF-8 characters
        cut[n] = '\0';
    }
    ImGui::TextDisabled("%s...", cut);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("%s", text);
}

// Every scene of scenes/ at once (two columns), its description on hover and below the list.
void scene_list(const GuiState *s, GuiRequests *r) {
    float widest = 0.0f;
    for (int i = 0; i < s->launcher.scene_count; i++) {
        char label[GUI_PATH_MAX + 16];
        scene_label(s->launcher.scenes[i], label, sizeof label);
        widest = fmaxf(widest, ImGui::CalcTextSize(label).x);
    }
    // Two columns where two fit (a 340-pixel panel), else one (the list scrolls).
    int columns = 2 * widest + 40 <= ImGui::GetContentRegionAvail().x ? 2 : 1;
    int rows = (s->launcher.scene_count + columns - 1) / columns;
    float height = (float)(rows < 8 ? rows : 8) * ImGui::GetTextLineHeightWithSpacing() + 6;
    int hovered = -1;
    if (ImGui::BeginListBox("##scenes", ImVec2(-1, height))) {
        // Columns as wide as their longest name: two halves cut "pile_internal_friction".
        if (ImGui::BeginTable("##scenecols", columns, ImGuiTableFlags_SizingFixedFit)) {
            for (int i = 0; i < s->launcher.scene_count; i++) {
                ImGui::TableNextColumn();
                char label[GUI_PATH_MAX + 16];
                scene_label(s->launcher.scenes[i], label, sizeof label);
                bool current = std::strcmp(s->launcher.scenes[i], s->scene_path) == 0;
                ImGui::PushID(i);
                if (ImGui::Selectable(label, current, ImGuiSelectableFlags_AllowDoubleClick) &&
                    ImGui::IsMouseDoubleClicked(0)) {
                    r->file.open = true;
                    copy_text(r->file.open_path, s->launcher.scenes[i], sizeof r->file.open_path);
                }
                if (ImGui::IsItemHovered()) {
                    hovered = i;
                    ImGui::BeginTooltip();
                    ImGui::PushTextWrapPos(420);
                    ImGui::Text("%s", s->launcher.scenes[i]);
                    ImGui::TextDisabled("%s", scene_description(s, i));
                    scene_thumbnail(s, i);
                    r->file.thumbnail_for = i + 1;
                    ImGui::TextDisabled("double-click to open");
                    ImGui::PopTextWrapPos();
                    ImGui::EndTooltip();
                }
                ImGui::PopID();
            }
            ImGui::EndTable();
        }
        ImGui::EndListBox();
    }
    for (int i = 0; hovered < 0 && i < s->launcher.scene_count; i++)
        if (std::strcmp(s->launcher.scenes[i], s->scene_path) == 0)
            hovered = i;
    one_line(hovered >= 0 ? scene_description(s, hovered)
                          : "double-click a scene to open it, or drop a .lua file here");
}

void launcher(const GuiState *s, GuiRequests *r) {
    if (!ImGui::CollapsingHeader("Scene launcher", ImGuiTreeNodeFlags_DefaultOpen))
        return;
    current_scene_line(s->scene_path[0] ? s->scene_path : "(none)");
    scene_list(s, r);
    if (s->launcher.recent_count > 0 && ImGui::TreeNode("Recent")) {
        for (int i = 0; i < s->launcher.recent_count; i++) {
            if (ImGui::Selectable(s->launcher.recent[i])) {
                r->file.open = true;
                copy_text(r->file.open_path, s->launcher.recent[i], sizeof r->file.open_path);
            }
        }
        ImGui::TreePop();
    }
    ImGui::SetNextItemWidth(-60);
    bool enter = ImGui::InputText("##openpath", g_mem.open_path, sizeof g_mem.open_path,
                                  ImGuiInputTextFlags_EnterReturnsTrue);
    ImGui::SameLine();
    if ((ImGui::Button("Open") || enter) && g_mem.open_path[0]) {
        r->file.open = true;
        copy_text(r->file.open_path, g_mem.open_path, sizeof r->file.open_path);
    }
    if (s->load_error && s->load_error[0]) {
        ImGui::PushStyleColor(ImGuiCol_Text, kRed);
        ImGui::TextWrapped("%s", s->load_error);
        ImGui::PopStyleColor();
    }
}

void thing_tree(const GuiState *s, GuiRequests *r) {
    if (!ImGui::CollapsingHeader("Things", ImGuiTreeNodeFlags_DefaultOpen) || !s->db)
        return;
    const ThingDb *db = s->db;
    // 102: with the launcher's list of every scene above, the property sheet keeps its place.
    ImGui::BeginChild("##tree", ImVec2(0, 102), true);
    // Only the visible rows are built: a pile has a thousand things.
    ImGuiListClipper clipper;
    clipper.Begin(thingdb_count(db));
    while (clipper.Step())
        for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; i++) {
            ThingId id = thingdb_at(db, i);
            int depth = 0;
            for (ThingId p = thing_parent(db, id); !thing_id_is_null(p); p = thing_parent(db, p))
                depth++;
            ImGui::Indent(12.0f * depth + 1.0f);
            char label[300];
            std::snprintf(label, sizeof label, "%s  (%s)##%u", thing_name(db, id),
                          thing_kind_name(thing_kind(db, id)), id.index);
            if (ImGui::Selectable(label, thing_id_equal(id, s->selected))) {
                r->select = true;
                r->select_thing = id;
            }
            ImGui::Unindent(12.0f * depth + 1.0f);
        }
    ImGui::EndChild();
}

// The text a field shows: numbers to 9 digits, so a field left untouched reads as set.
void field_text(const PropDef *def, const PropValue *v, char *out, size_t size) {
    int n = def->type == PROP_VEC3 ? 3 : def->type == PROP_QUAT ? 4 : 0;
    if (def->type == PROP_REAL)
        std::snprintf(out, size, "%.9g", v->real);
    else if (n > 0 && n == 3)
        std::snprintf(out, size, "%.9g %.9g %.9g", v->vec[0], v->vec[1], v->vec[2]);
    else if (n > 0)
        std::snprintf(out, size, "%.9g %.9g %.9g %.9g", v->vec[0], v->vec[1], v->vec[2], v->vec[3]);
    else
        prop_format(def, v, false, out, size);
}

// Why text is no value of a numeric property, or nullptr: a number the engine would take and
// then refuse ("nan") or not read at all ("abc") is named here, not silently reverted.
const char *invalid_number(const char *text, int want, char *why, size_t size) {
    const char *p = text;
    for (int k = 0; k < want; k++) {
        char *end = nullptr;
        double v = std::strtod(p, &end);
        if (end == p) {
            std::snprintf(why, size, "'%.40s' is not %s", text,
                          want == 1 ? "a number" : "a list of numbers");
            return why;
        }
        if (!std::isfinite(v)) {
            std::snprintf(why, size, "'%.*s' is not a finite number",
                          (int)std::min<long>(end - p, 40), p);
            return why;
        }
        p = end;
    }
    while (*p == ' ' || *p == ',')
        p++;
    if (*p == '\0')
        return nullptr;
    if (want == 1)
        std::snprintf(why, size, "'%.40s' is not a number", text);
    else
        std::snprintf(why, size, "'%.40s': %d numbers expected", text, want);
    return why;
}

int numbers_in(const PropDef *def) {
    switch (def->type) {
    case PROP_REAL:
    case PROP_INT:
        return 1;
    case PROP_VEC3:
        return 3;
    case PROP_QUAT:
        return 4;
    default:
        return 0;
    }
}

// The typed text as an edit, or the reason it is none.
void commit_field(GuiRequests *r) {
    TypedField f = g_field;
    g_field = TypedField();
    if (!f.def || std::strcmp(f.text, f.original) == 0)
        return;
    char why[128];
    int want = numbers_in(f.def);
    if (want > 0 && invalid_number(f.text, want, why, sizeof why)) {
        r->editing.edit_invalid = true;
        std::snprintf(r->editing.edit_reason, sizeof r->editing.edit_reason,
                      "%.60s: %.100s; the value is unchanged", f.path, why);
        return;
    }
    r->editing.edit = true;
    copy_text(r->editing.edit_path, f.path, sizeof r->editing.edit_path);
    copy_text(r->editing.edit_value, f.text, sizeof r->editing.edit_value);
}

// A typed property as one text field (vectors as "x y z"). The text is sent when the field
// loses the keyboard: Enter, Tab (which moves on to the next field), or a click elsewhere.
void text_field(const char *path, const PropDef *def, const PropValue *value, GuiRequests *r) {
    ImGuiID id = ImGui::GetID("##v");
    char shown[REGISTRY_EDIT_VALUE_MAX];
    bool mine = g_field.id == id;
    if (!mine)
        field_text(def, value, shown, sizeof shown);
    char *buf = mine ? g_field.text : shown;
    ImGui::InputText("##v", buf, sizeof shown, ImGuiInputTextFlags_AutoSelectAll);
    if (mine || !ImGui::IsItemActive())
        return;
    if (g_field.id != 0)
        commit_field(r); // the field Tab came from, before this one takes its place
    g_field.id = id;
    g_field.def = def;
    copy_text(g_field.path, path, sizeof g_field.path);
    copy_text(g_field.text, shown, sizeof g_field.text);
    field_text(def, value, g_field.original, sizeof g_field.original);
}

// Once the typed field has lost the keyboard, whichever way: its text is committed.
void commit_left_field(GuiRequests *r) {
    if (g_field.id != 0 && ImGui::GetActiveID() != g_field.id)
        commit_field(r);
}

void prop_tooltip(const PropDef *def, bool readonly) {
    if (!ImGui::IsItemHovered())
        return;
    ImGui::BeginTooltip();
    ImGui::TextUnformatted(def->description ? def->description : "");
    if (def->type == PROP_REAL || def->type == PROP_INT || def->type == PROP_VEC3)
        ImGui::Text("range %s%g, %g] %s", def->min_exclusive ? "(" : "[", def->min, def->max,
                    def->unit);
    if (readonly)
        ImGui::TextColored(kRed, "fixed during a run: edit it in the scene file, then reload");
    ImGui::EndTooltip();
}

void submit_edit(GuiRequests *r, const char *path, const PropDef *def, const PropValue *v) {
    r->editing.edit = true;
    copy_text(r->editing.edit_path, path, sizeof r->editing.edit_path);
    prop_format(def, v, false, r->editing.edit_value, sizeof r->editing.edit_value);
}

// One typed widget: text fields commit themselves; a checkbox or a combo sends at once.
void prop_widget(const char *path, const PropDef *def, const PropValue *value, GuiRequests *r) {
    PropValue out = *value;
    switch (def->type) {
    case PROP_BOOL:
        if (ImGui::Checkbox("##v", &out.boolean))
            submit_edit(r, path, def, &out);
        break;
    case PROP_ENUM: {
        int index = (int)out.integer;
        const char *preview = index >= 0 && index < def->enum_count ? def->enum_names[index] : "?";
        if (ImGui::BeginCombo("##v", preview)) {
            for (int k = 0; k < def->enum_count; k++)
                if (ImGui::Selectable(def->enum_names[k], k == index) && k != index) {
                    out.integer = k;
                    submit_edit(r, path, def, &out);
                }
            ImGui::EndCombo();
        }
        break;
    }
    case PROP_POINTS:
        ImGui::Text("%d points", out.point_count);
        break;
    default:
        text_field(path, def, value, r);
        break;
    }
}

// The result of the last edit on a row of fixed height (two lines, the rest in a tooltip):
// a message appearing or wrapping must not move the rows under the pointer.
void edit_result(const GuiState *s) {
    float height = 2 * ImGui::GetTextLineHeightWithSpacing();
    ImGui::BeginChild("##editresult", ImVec2(0, height), false,
                      ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
    if (s->edit_message && s->edit_message[0]) {
        ImGui::PushStyleColor(ImGuiCol_Text, s->edit_rejected ? kRed : kGreen);
        ImGui::TextWrapped("%s", s->edit_message);
        ImGui::PopStyleColor();
    } else {
        ImGui::PushTextWrapPos(0.0f);
        ImGui::TextDisabled("Enter, Tab or a click sends what you typed");
        ImGui::PopTextWrapPos();
    }
    ImGui::EndChild();
    if (s->edit_message && s->edit_message[0] && ImGui::IsItemHovered())
        ImGui::SetTooltip("%s", s->edit_message);
}

// The end of the '_'-separated piece of name that starts at p (after its underscore).
const char *name_piece_end(const char *p) {
    const char *underscore = std::strchr(p, '_');
    return underscore ? underscore + 1 : p + std::strlen(p);
}

float widest_name_piece(const char *name) {
    float widest = 0.0f;
    for (const char *p = name; *p; p = name_piece_end(p))
        widest = std::max(widest, ImGui::CalcTextSize(p, name_piece_end(p)).x);
    return widest;
}

// A property's name on as many lines as its column takes, broken after underscores only:
// ImGui's wrapping cut "surface_points" into "surface_poin" and "ts" in a 250-pixel panel.
void property_name(const char *name, float width) {
    ImGui::PushTextWrapPos(-1.0f); // the lines are made to fit here
    ImGui::BeginGroup();           // one item for the tooltip
    for (const char *line = name; *line;) {
        const char *end = name_piece_end(line);
        while (*end && ImGui::CalcTextSize(line, name_piece_end(end)).x <= width)
            end = name_piece_end(end);
        ImGui::TextUnformatted(line, end);
        line = end;
    }
    ImGui::EndGroup();
    ImGui::PopTextWrapPos();
}

struct PropColumns {
    float name, unit;
};

// The name column as wide as the longest name up to 40 % of the panel, never narrower than a
// name's longest piece; the unit column as wide as the longest unit. The value takes the rest.
PropColumns prop_columns(const ThingDb *db, ThingId id) {
    float name = 0.0f, piece = 0.0f, unit = 1.0f;
    for (int p = 0; p < thing_prop_count(db, id); p++) {
        const PropDef *def = thing_prop_def(db, id, p);
        name = std::max(name, ImGui::CalcTextSize(def->name).x);
        piece = std::max(piece, widest_name_piece(def->name));
        unit = std::max(unit, ImGui::CalcTextSize(def->unit).x);
    }
    return {std::max(piece, std::min(name, 0.4f * ImGui::GetContentRegionAvail().x)), unit};
}

void property_editor(const GuiState *s, GuiRequests *r) {
    if (!ImGui::CollapsingHeader("Properties", ImGuiTreeNodeFlags_DefaultOpen) || !s->db)
        return;
    const ThingDb *db = s->db;
    ThingId id = s->selected;
    if (thing_id_is_null(id) || !thingdb_valid(db, id)) {
        ImGui::TextDisabled("select a thing in the tree or click one in the view");
        return;
    }
    char path[256];
    thing_path(db, id, path, sizeof path);
    ImGui::Text("%s (%s)", path, thing_kind_name(thing_kind(db, id)));
    edit_result(s);
    ImGui::PushID(path); // a field's state never carries over to another thing's
    g_mem.property_table_y = ImGui::GetCursorScreenPos().y;
    PropColumns columns = prop_columns(db, id);
    if (ImGui::BeginTable("props", 3, ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingStretchProp)) {
        ImGui::TableSetupColumn("property", ImGuiTableColumnFlags_WidthFixed, columns.name);
        ImGui::TableSetupColumn("value", ImGuiTableColumnFlags_WidthStretch);
        ImGui::TableSetupColumn("unit", ImGuiTableColumnFlags_WidthFixed, columns.unit);
        for (int p = 0; p < thing_prop_count(db, id); p++) {
            const PropDef *def = thing_prop_def(db, id, p);
            bool readonly = s->running && def->mutability == PROP_FIXED_DURING_RUN;
            ImGui::PushID(p);
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            property_name(def->name, columns.name);
            prop_tooltip(def, readonly);
            ImGui::TableNextColumn();
            ImGui::SetNextItemWidth(-1);
            ImGui::BeginDisabled(readonly);
            char full[2 * REGISTRY_EDIT_PATH_MAX + 256];
            std::snprintf(full, sizeof full, "%s.%s", path, def->name);
            prop_widget(full, def, thing_prop_value(db, id, p), r);
            ImGui::EndDisabled();
            prop_tooltip(def, readonly);
            ImGui::TableNextColumn();
            ImGui::TextDisabled("%s", def->unit);
            ImGui::PopID();
        }
        ImGui::EndTable();
    }
    ImGui::PopID();
}

void body_state(const GuiState *s) {
    if (!s->db || !s->reg || !s->frame || thing_id_is_null(s->selected))
        return;
    if (thing_kind(s->db, s->selected) != THING_RIGID_BODY)
        return;
    char path[256], var[300];
    thing_path(s->db, s->selected, path, sizeof path);
    const char *suffix[] = {".pos.x", ".pos.y", ".pos.z", ".vel.x", ".vel.y", ".vel.z"};
    ImGui::Separator();
    ImGui::Text("state at t = %.4f s", s->clock.display_time);
    for (int k = 0; k < 6; k += 3) {
        double v[3] = {NAN, NAN, NAN};
        for (int c = 0; c < 3; c++) {
            std::snprintf(var, sizeof var, "%s%s", path, suffix[k + c]);
            int i = registry_var_find(s->reg, var);
            if (i >= 0)
                v[c] = s->frame[i];
        }
        ImGui::Text("%s  %.4f %.4f %.4f %s", k == 0 ? "pos" : "vel", v[0], v[1], v[2],
                    k == 0 ? "m" : "m/s");
    }
}

void left_panel(const GuiState *s, GuiRequests *r) {
    ImGui::SetNextWindowPos(ImVec2(0, kMenuHeight));
    ImGui::SetNextWindowSize(ImVec2((float)s->side_width, s->height - kMenuHeight - kStatusHeight));
    ImGuiWindowFlags flags = ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize |
                             ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoSavedSettings |
                             ImGuiWindowFlags_NoBackground;
    if (ImGui::Begin("Experiment design", nullptr, flags)) {
        ImGui::PushTextWrapPos(0.0f); // every line wraps at the panel's edge: nothing is cut
        launcher(s, r);
        thing_tree(s, r);
        property_editor(s, r);
        body_state(s);
        ImGui::PopTextWrapPos();
        layout_measure_overflow(GUI_PANEL_LEFT);
    }
    ImGui::End();
}

// ===== Right panel: universe, transport, recording, plots, log =====

// The registry holds at most 32 MiB of frames (registry.c), so a large scene's scrubber reaches
// back less than universe.history asks (the 240-body pile: 0.67 s of its 2 s): said under
// the slider once frames were dropped, rather than left to the slider's range.
void scrubber_reach_note(const GuiState *s, double lo, double hi) {
    g_mem.scrubber_note = NAN;
    ThingId u = s->db ? thingdb_find_kind(s->db, THING_UNIVERSE) : ThingId{};
    if (!s->db || thing_id_is_null(u))
        return;
    double asked = thing_real(s->db, u, "history"), reach = hi - lo;
    if (!(lo > 0.0) || !(reach < asked - 2.0 * s->clock.dt))
        return; // nothing dropped yet, or all that was asked is held
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextColored(ImVec4(1.0f, 0.75f, 0.2f, 1.0f),
                       "scrubber reaches back %.2f s of the %g s asked: the history's memory "
                       "holds no more of this scene",
                       reach, asked);
    ImGui::PopTextWrapPos();
    g_mem.scrubber_note = reach;
}

void transport(const GuiState *s, GuiRequests *r) {
    if (!ImGui::CollapsingHeader("Transport", ImGuiTreeNodeFlags_DefaultOpen))
        return;
    ImGui::BeginDisabled(!s->running);
    if (ImGui::Button(s->clock.paused ? "Run (space)" : "Pause (space)")) {
        r->time.run = s->clock.paused;
        r->time.pause = !s->clock.paused;
    }
    // On as many rows as the panel's width takes: at 1024 x 600 Reload ran past the edge.
    if (button_same_line_if_fits("Step (S)"))
        r->time.step = true;
    if (button_same_line_if_fits("Reset (R)"))
        r->time.reset = true;
    if (button_same_line_if_fits("Reload"))
        r->file.reload = true;
    g_mem.speed = (float)s->clock.speed;
    ImGui::SetNextItemWidth(-80);
    if (ImGui::SliderFloat("speed", &g_mem.speed, 0.001f, 10.0f, "%.3gx",
                           ImGuiSliderFlags_Logarithmic)) {
        r->time.set_speed = true;
        r->time.speed = g_mem.speed;
    }
    // History scrubber: any instant still held in the registry's history; resuming from it
    // is a rewind (the next edit or drag re-integrates from there).
    double lo = std::isfinite(s->clock.history_start) ? s->clock.history_start : 0.0;
    double hi = std::isfinite(s->clock.state_time) ? s->clock.state_time : 0.0;
    g_mem.scrub = (float)s->clock.display_time;
    ImGui::SetNextItemWidth(-80);
    // In slow motion the instant shown changes in its sixth decimal.
    if (ImGui::SliderFloat("history", &g_mem.scrub, (float)lo, (float)fmax(hi, lo + 1e-6),
                           s->clock.slow_rate > 0.0 ? "%.6f s" : "%.3f s")) {
        r->time.seek = true;
        r->time.seek_time = g_mem.scrub;
        r->time.pause = true;
    }
    gui_timeline_marks(s, lo, fmax(hi, lo + 1e-6));
    scrubber_reach_note(s, lo, hi);
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextDisabled("drag back while paused, Run resumes from there");
    ImGui::PopTextWrapPos();
    gui_playback_controls(s, r);
    ImGui::EndDisabled();
}

void universe_panel(const GuiState *s, GuiRequests *r) {
    if (gui_plots_need_room(s))
        ImGui::SetNextItemOpen(false, ImGuiCond_Always);
    if (!ImGui::CollapsingHeader("Universe", ImGuiTreeNodeFlags_DefaultOpen) || !s->db)
        return;
    ThingId u = thingdb_find_kind(s->db, THING_UNIVERSE);
    if (thing_id_is_null(u))
        return;
    if (ImGui::Button("Edit universe properties")) {
        r->select = true;
        r->select_thing = u;
    }
    Vec3 g = thing_vec3(s->db, u, "gravity");
    ImGui::Text("gravity   %.3g %.3g %.3g m/s^2", g.x, g.y, g.z);
    ImGui::Text("integrator %s, dt %g s", thing_enum_name(s->db, u, "integrator"), s->clock.dt);
    ImGui::Text("horizon   %g s, planar %s", thing_real(s->db, u, "horizon"),
                thing_bool(s->db, u, "planar") ? "yes" : "no");
    ImGui::Text("engine ahead by %.3f s", s->clock.state_time - s->clock.display_time);
    ImGui::Text("engine headroom %.3gx (dt / step wall time)", s->engine.engine_headroom);
    ImGui::Text("active contacts %d", s->engine.active_contacts);
    if (s->engine.contacts_shown < s->engine.contacts_total)
        ImGui::TextColored(kRed, "contacts shown %d of %d (the registry's limit)",
                           s->engine.contacts_shown, s->engine.contacts_total);
    else if (s->engine.contacts_dropped > 0)
        ImGui::TextDisabled("%.0f contact reports left out of earlier frames",
                            s->engine.contacts_dropped);
    ImGui::Text("bodies awake %d of %d", s->engine.awake_bodies, s->engine.bodies);
}

void recording_panel(const GuiState *s, GuiRequests *r) {
    if (gui_plots_need_room(s))
        ImGui::SetNextItemOpen(false, ImGuiCond_Always);
    if (!ImGui::CollapsingHeader("Recording", ImGuiTreeNodeFlags_DefaultOpen))
        return;
    ImGui::BeginDisabled(s->capture.recording || !s->running);
    ImGui::InputText("file", g_mem.record_path, sizeof g_mem.record_path);
    ImGui::InputTextWithHint("vars", "universe.record, or all", g_mem.record_vars,
                             sizeof g_mem.record_vars);
    ImGui::EndDisabled();
    if (!s->capture.recording) {
        ImGui::BeginDisabled(!s->running);
        if (ImGui::Button("Start recording")) {
            r->capture.record_start = true;
            copy_text(r->capture.record_path, g_mem.record_path, sizeof r->capture.record_path);
            copy_text(r->capture.record_vars, g_mem.record_vars, sizeof r->capture.record_vars);
        }
        ImGui::EndDisabled();
    } else {
        if (ImGui::Button("Stop recording"))
            r->capture.record_stop = true;
        ImGui::SameLine();
        ImGui::TextColored(kRed, "REC");
        ImGui::Text("%s", s->capture.record_path);
        ImGui::Text("%.1f s, %llu rows, %llu bytes", s->capture.record_elapsed,
                    (unsigned long long)s->capture.record_rows,
                    (unsigned long long)s->capture.record_bytes);
        if (s->capture.record_dropped)
            ImGui::TextColored(kRed, "%llu rows dropped",
                               (unsigned long long)s->capture.record_dropped);
        if (s->capture.record_failed)
            ImGui::TextColored(kRed, "write failed: the file holds these rows (see the log)");
    }
}

// Video of the 3D view to MP4 through ffmpeg, at 30 frames per wall or simulated second.
void video_panel(const GuiState *s, GuiRequests *r) {
    if (!ImGui::CollapsingHeader("Video"))
        return;
    ImGui::BeginDisabled(s->capture.video_recording || !s->running);
    ImGui::InputText("mp4 file", g_mem.video_path, sizeof g_mem.video_path);
    ImGui::Checkbox("simulated time (1 video s = 1 simulated s)", &g_mem.video_sim_time);
    double video_slow = g_mem.video_sim_time ? gui_video_slow_factor() : 1.0;
    ImGui::EndDisabled();
    if (!s->capture.video_recording) {
        ImGui::BeginDisabled(!s->running);
        if (ImGui::Button("Start video")) {
            r->capture.video_start = true;
            r->capture.video_sim_time = g_mem.video_sim_time;
            r->capture.video_slow = video_slow;
            copy_text(r->capture.video_path, g_mem.video_path, sizeof r->capture.video_path);
        }
        ImGui::EndDisabled();
        return;
    }
    if (ImGui::Button("Stop video"))
        r->capture.video_stop = true;
    ImGui::SameLine();
    ImGui::TextColored(kRed, "REC");
    ImGui::Text("%ld frames (%.1f s of video), %.1f MB", s->capture.video_frames,
                s->capture.video_frames / 30.0, s->capture.video_bytes / 1e6);
    if (s->capture.video_failed)
        ImGui::TextColored(kRed, "ffmpeg stopped taking frames (see the log)");
}

void save_panel(const GuiState *s, GuiRequests *r) {
    if (!ImGui::CollapsingHeader("Save and screenshot"))
        return;
    ImGui::InputText("scene file", g_mem.save_path, sizeof g_mem.save_path);
    ImGui::InputTextWithHint("description", "empty: the scene's, with the edits noted",
                             g_mem.save_description, sizeof g_mem.save_description);
    ImGui::BeginDisabled(!s->db);
    if (ImGui::Button("Save scene"))
        request_save(r);
    ImGui::SameLine();
    ImGui::TextDisabled("(with this camera)");
    ImGui::EndDisabled();
    ImGui::InputText("png file", g_mem.screenshot_path, sizeof g_mem.screenshot_path);
    if (ImGui::Button("Screenshot")) {
        r->capture.screenshot = true;
        copy_text(r->capture.screenshot_path, g_mem.screenshot_path,
                  sizeof r->capture.screenshot_path);
    }
}

void log_panel(const GuiState *s) {
    if (!ImGui::CollapsingHeader("Log", ImGuiTreeNodeFlags_DefaultOpen))
        return;
    ImGui::BeginChild("##log", ImVec2(0, 110), true, ImGuiWindowFlags_HorizontalScrollbar);
    for (int i = 0; i < s->log_count; i++) {
        const GuiLogLine *l = &s->log[i];
        ImVec4 c = l->level >= ISSIM_LOG_ERROR  ? kRed
                   : l->level == ISSIM_LOG_WARN ? ImVec4(1.0f, 0.8f, 0.3f, 1.0f)
                                                : ImVec4(0.8f, 0.8f, 0.8f, 1.0f);
        ImGui::TextColored(c, "%s", l->text);
    }
    if (ImGui::GetScrollY() >= ImGui::GetScrollMaxY() - 1)
        ImGui::SetScrollHereY(1.0f);
    ImGui::EndChild();
}

void right_panel(const GuiState *s, GuiRequests *r) {
    ImGui::SetNextWindowPos(ImVec2((float)(s->width - s->side_width), kMenuHeight));
    ImGui::SetNextWindowSize(ImVec2((float)s->side_width, s->height - kMenuHeight - kStatusHeight));
    ImGuiWindowFlags flags = ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize |
                             ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoSavedSettings |
                             ImGuiWindowFlags_NoBackground;
    if (ImGui::Begin("Simulation", nullptr, flags)) {
        ImGui::PushTextWrapPos(0.0f); // every line wraps at the panel's edge: nothing is cut
        transport(s, r);
        gui_device_panel(s, r); // gui_device.cpp: only with --device
        universe_panel(s, r);
        recording_panel(s, r);
        gui_plots_panel(s, r); // gui_plots.cpp
        gui_map_panel(s);
        video_panel(s, r);
        save_panel(s, r);
        log_panel(s);
        ImGui::PopTextWrapPos();
        layout_measure_overflow(GUI_PANEL_RIGHT);
    }
    ImGui::End();
}

// The first `shown` of parts joined by " | ", then "..." when some are left out, then last.
void join_status(const char (*parts)[96], int shown, bool cut, const char *last, char *out,
                 size_t size) {
    out[0] = '\0';
    size_t n = 0;
    for (int i = 0; i < shown && n < size; i++)
        n += std::snprintf(out + n, size - n, "%s%s", i ? " | " : "", parts[i]);
    if (cut && n < size)
        n += std::snprintf(out + n, size - n, " | ...");
    if (last && n < size)
        std::snprintf(out + n, size - n, " | %s", last);
}

// One line whatever the window's width: the parts that do not fit are left out from the end
// (never `last`, which says where the keys go), and the whole line is the tooltip.
void status_line(const char (*parts)[96], int count, const char *last) {
    char line[600];
    float room = ImGui::GetContentRegionAvail().x;
    int shown = count;
    join_status(parts, shown, false, last, line, sizeof line);
    while (shown > 1 && ImGui::CalcTextSize(line).x > room)
        join_status(parts, --shown, true, last, line, sizeof line);
    ImGui::TextUnformatted(line);
    if (shown < count && ImGui::IsItemHovered()) {
        join_status(parts, count, false, last, line, sizeof line);
        ImGui::SetTooltip("%s", line);
    }
}

void status_bar(const GuiState *s) {
    ImGui::SetNextWindowPos(ImVec2(0, s->height - kStatusHeight));
    ImGui::SetNextWindowSize(ImVec2((float)s->width, kStatusHeight));
    ImGuiWindowFlags flags =
        ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoSavedSettings;
    if (ImGui::Begin("Status", nullptr, flags)) {
        // The rate is what the clock achieves (simulated s per wall s), not the engine's spare
        // capacity; paused, there is no rate to show.
        char rate[64];
        if (s->clock.paused)
            std::snprintf(rate, sizeof rate, "paused");
        else if (!std::isfinite(s->engine.sim_rate))
            std::snprintf(rate, sizeof rate, "rate -- (measuring)");
        else
            std::snprintf(rate, sizeof rate, "rate %.3g sim s / wall s (speed %.2fx)",
                          s->engine.sim_rate, s->clock.speed);
        char parts[5][96];
        // in slow motion the instant shown moves in its sixth decimal
        std::snprintf(parts[0], sizeof parts[0],
                      s->clock.slow_rate > 0.0 ? "t = %.6f s" : "t = %.3f s",
                      s->clock.display_time);
        copy_text(parts[1], rate, sizeof parts[1]);
        std::snprintf(parts[2], sizeof parts[2], "display %.0f fps", s->engine.fps);
        std::snprintf(parts[3], sizeof parts[3], "engine step %.1f us, %.0f output steps/s",
                      s->engine.engine_step_us, s->engine.engine_rate);
        std::snprintf(parts[4], sizeof parts[4], "state time %.3f s", s->clock.state_time);
        const char *keys = s->keys_in_panels ? "keys: panels (click the view)" : nullptr;
        status_line(parts, 5, keys);
        layout_measure_overflow(GUI_PANEL_STATUS);
    }
    ImGui::End();
}

} // namespace

extern "C" bool gui_create(void *window, void *gl_context) {
    IMGUI_CHECKVERSION();
    ImGui::CreateContext();
    ImGuiIO &io = ImGui::GetIO();
    io.IniFilename = nullptr; // fixed layout: nothing to remember between runs
    ImGui::StyleColorsDark();
    if (!ImGui_ImplSDL2_InitForOpenGL(static_cast<SDL_Window *>(window), gl_context)) {
        ImGui::DestroyContext();
        return false;
    }
    if (!ImGui_ImplOpenGL3_Init("#version 330 core")) {
        ImGui_ImplSDL2_Shutdown();
        ImGui::DestroyContext();
        return false;
    }
    g_mem = GuiMemory();
    if (!gui_plots_create()) {
        ImGui_ImplOpenGL3_Shutdown();
        ImGui_ImplSDL2_Shutdown();
        ImGui::DestroyContext();
        return false;
    }
    g_held_count = 0;
    std::memset(g_down_since_frame, 0, sizeof g_down_since_frame);
    g_mouse_queued = 0;
    std::memset(g_button_down, 0, sizeof g_button_down);
    g_field = TypedField();
    g_created = true;
    g_font_nearest = false;
    return true;
}

extern "C" void gui_destroy(void) {
    if (!g_created)
        return;
    gui_plots_destroy();
    ImGui_ImplOpenGL3_Shutdown();
    ImGui_ImplSDL2_Shutdown();
    ImGui::DestroyContext();
    g_created = false;
}

extern "C" bool gui_process_event(const void *sdl_event) {
    const SDL_Event *e = static_cast<const SDL_Event *>(sdl_event);
    bool key = e->type == SDL_KEYDOWN || e->type == SDL_KEYUP;
    bool button = e->type == SDL_MOUSEBUTTONDOWN || e->type == SDL_MOUSEBUTTONUP;
    if (button && button_index(e->button.button) >= 0)
        queue_mouse_button(e);
    else if (!(key && hold_key_release(e)))
        ImGui_ImplSDL2_ProcessEvent(e);
    if (e->type == SDL_MOUSEMOTION)
        g_event_mouse = ImVec2((float)e->motion.x, (float)e->motion.y);
    else if (e->type == SDL_MOUSEBUTTONDOWN || e->type == SDL_MOUSEBUTTONUP)
        g_event_mouse = ImVec2((float)e->button.x, (float)e->button.y);
    ImGuiIO &io = ImGui::GetIO();
    switch (e->type) {
    case SDL_MOUSEMOTION:
    case SDL_MOUSEBUTTONDOWN:
    case SDL_MOUSEBUTTONUP:
    case SDL_MOUSEWHEEL:
        return io.WantCaptureMouse;
    case SDL_KEYDOWN:
    case SDL_KEYUP:
    case SDL_TEXTINPUT:
        return io.WantCaptureKeyboard;
    default:
        return false;
    }
}

extern "C" bool gui_wants_mouse(void) {
    return ImGui::GetIO().WantCaptureMouse;
}

extern "C" bool gui_wants_keyboard(void) {
    return ImGui::GetIO().WantCaptureKeyboard;
}

extern "C" bool gui_input_pending(void) {
    return g_created && g_mouse_queued > 0;
}

extern "C" double gui_property_table_y(void) {
    return g_mem.property_table_y;
}

extern "C" bool gui_device_hint_shown(void) {
    return g_mem.device_hint_shown;
}

extern "C" double gui_scrubber_note(void) {
    return g_mem.scrubber_note;
}

extern "C" void gui_frame(const GuiState *s, GuiRequests *r) {
    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplSDL2_NewFrame();
    ImGuiIO &io = ImGui::GetIO();
    if (!ImGui::IsMousePosValid())
        io.MousePos = g_event_mouse;
    if (io.DeltaTime <= 0.0f) // GUI-only frames follow each other within microseconds
        io.DeltaTime = 1e-6f;
    apply_mouse_queue();
    ImGui::NewFrame();
    g_mem.property_table_y = -1.0f;
    layout_reset_overflow();
    menu_bar(s, r);
    open_dialog(s, r);
    save_dialog(s, r);
    navigation_bar(s, r);
    arrow_legend(s);
    body_labels(s);
    device_hint(s);
    if (s->side_width > 0) {
        left_panel(s, r);
        right_panel(s, r);
    }
    status_bar(s);
    help_overlay(s);
    commit_left_field(r);
    ImGui::Render();
    release_held_keys();
}

// Glyphs sit on whole pixels at the atlas's own size, so nearest sampling draws the same text;
// llvmpipe's bilinear filter cost a third of the GUI's rasterisation (issue 5 benchmark).
static void sample_font_atlas_nearest() {
    GLuint texture = (GLuint)(intptr_t)ImGui::GetIO().Fonts->TexID;
    if (g_font_nearest || texture == 0)
        return;
    GLint bound = 0;
    glGetIntegerv(GL_TEXTURE_BINDING_2D, &bound);
    glBindTexture(GL_TEXTURE_2D, texture);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    glBindTexture(GL_TEXTURE_2D, (GLuint)bound);
    g_font_nearest = true;
}

extern "C" void gui_render(void) {
    sample_font_atlas_nearest();
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
}

extern "C" void gui_panel_color(float rgb[3]) {
    const ImVec4 &c = ImGui::GetStyle().Colors[ImGuiCol_WindowBg];
    rgb[0] = c.x, rgb[1] = c.y, rgb[2] = c.z;
}
