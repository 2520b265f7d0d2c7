// The device panel (issue 6): the haptic device the display opened for the scene
// (src/display/app_device.c), its motors and emergency stop, and what the servo publishes in the
// registry: rate and lateness statistics (REGISTRY_SLOT_SERVO_STATS, every 50 ms), the handle
// (REGISTRY_SLOT_HANDLE, every period), the limit flags and the host watchdog. Read-only on the
// registry: seqlock snapshots, never a lock the servo uses. Buttons only fill GuiRequests; the
// display calls the servo's atomics (haptic_servo_enable / _emergency_stop) after the frame.
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstring>

#include <imgui.h>

#define _Noreturn [[noreturn]]
extern "C" {
#include "issim/core.h"
#include "issim/haptics_device.h"
#include "issim/haptics_pantograph.h"
#include "issim/haptics_servo.h"
#include "issim/registry.h"
}
#include "issim/gui.h"
#undef _Noreturn

#include "gui_layout.h"

namespace {

const ImVec4 kRed(1.0f, 0.4f, 0.35f, 1.0f);
const ImVec4 kGreen(0.5f, 0.9f, 0.5f, 1.0f);
const ImVec4 kAmber(1.0f, 0.8f, 0.3f, 1.0f);
const ImVec4 kDim(0.55f, 0.55f, 0.55f, 1.0f);

const char *watchdog_state(const GuiDevice *device, const HapticHandleState &h, double *fade) {
    double nominal = device ? device->coupling_stiffness : 0.0;
    double k = h.coupling_k;
    *fade = nominal > 0.0 ? k / nominal : 0.0;
    if (!(nominal > 0.0) || h.proxy_body == 0)
        return "no coupling";
    if (!h.enabled)
        return "motors off";
    if (*fade >= 1.0 - 1e-9)
        return "live";
    return k > 0.0 ? "fading" : "released";
}

void fill_stats(const RegistrySlot &slot, GuiDeviceReadout *out) {
    HapticServoStats st = haptic_servo_stats_unpack(&slot);
    out->have_stats = slot.count > 0;
    out->timing.rate_hz = st.rate_hz;
    out->timing.measured_hz = st.measured_hz;
    out->timing.periods = (double)st.periods;
    out->timing.p50_us = st.lateness_p50_us;
    out->timing.p99_us = st.lateness_p99_us;
    out->timing.p999_us = st.lateness_p999_us;
    out->timing.max_us = st.lateness_max_us;
    out->timing.overruns = (double)st.overruns;
    out->timing.missed_deadlines = (double)st.missed_deadlines;
    out->timing.compute_mean_us = st.compute_mean_us;
    out->timing.compute_max_us = st.compute_max_us;
    out->timing.fifo = st.fifo;
    out->counts.stale_reads = (double)st.stale_reads;
    out->counts.device_errors = (double)st.device_errors;
    out->counts.crc_errors = (double)st.crc_errors;
    out->counts.frames_lost = (double)st.frames_lost;
    out->counts.frames_dropped = (double)st.frames_dropped;
    out->counts.force_limited = (double)st.force_limited;
    out->counts.engine_stalls = (double)st.engine_stalls;
    out->handle.force_rms = st.force_rms;
    out->port_energy = st.passivity_energy;
    out->port_energy_min = st.passivity_energy_min;
    out->local_latency_us = st.local_latency_us;
    out->local_latency_mean_us = st.local_latency_mean_us;
    out->local_latency_max_us = st.local_latency_max_us;
    out->local_blocks = (double)st.local_blocks;
    out->handle.force_peak = st.force_peak;
    out->counts.texture_periods = (double)st.texture_periods;
    out->models = st.models;
    out->models_touching = st.models_touching;
    out->servo_state = (int)st.state;
}

void fill_handle(const RegistrySlot &slot, const GuiDevice *device, GuiDeviceReadout *out) {
    HapticHandleState h = haptic_handle_unpack(&slot);
    out->have_handle = slot.count > 0;
    out->handle.x = h.pos.x;
    out->handle.y = h.pos.y;
    out->handle.vx = h.vel.x;
    out->handle.vy = h.vel.y;
    out->handle.fx = h.force.x;
    out->handle.fy = h.force.y;
    out->handle.texture_fx = h.texture_force.x;
    out->handle.texture_fy = h.texture_force.y;
    out->handle.tau1 = h.tau1;
    out->handle.tau5 = h.tau5;
    out->handle.motors_on = h.enabled;
    out->handle.limits = h.limits;
    out->handle.device_status = h.device_status;
    out->coupling_k = h.coupling_k;
    out->traced_depth = h.traced_depth;
    out->traced_force = h.traced_force;
    out->watchdog = out->have_handle ? watchdog_state(device, h, &out->watchdog_fade) : "";
    out->handle_age_s = out->have_handle ? issim_wall_time() - slot.t : INFINITY;
}

// ===== Panel pieces =====

void status_line(const GuiDevice *d, const GuiDeviceReadout &ro) {
    ImGui::TextWrapped("%s%s%s", d->name[0] ? d->name : d->spec,
                       d->simulator_pid > 0 ? " (simulated pantograph)" : "",
                       d->proxy[0] ? "" : ", no coupled proxy");
    switch (d->status) {
    case GUI_DEVICE_IDLE:
        ImGui::TextColored(kDim, "idle: %s", d->message);
        return;
    case GUI_DEVICE_ERROR:
        ImGui::PushStyleColor(ImGuiCol_Text, kRed);
        ImGui::TextWrapped("error: %s", d->message);
        ImGui::PopStyleColor();
        return;
    case GUI_DEVICE_RUNNING:
        break;
    }
    if (d->emergency_stopped)
        ImGui::TextColored(kRed, "EMERGENCY STOP: motors off until enabled");
    else if (ro.handle.motors_on)
        ImGui::TextColored(kGreen, "running, motors ON");
    else if (d->enable_requested)
        ImGui::TextColored(kAmber, "running, motors enabled but not powered");
    else
        ImGui::TextColored(kAmber, "running, motors off (enable to feel the scene)");
}

// A device fault (docs/haptics.md "Device plausibility") holds the motors off until Enable is
// pressed again; the status line above only says "enabled but not powered". The figures come
// from SERVO_STATS, which the servo publishes in the period of the trip.
void fault_line(const Registry *reg, const GuiDeviceReadout &ro) {
    if (!(ro.handle.limits & HAPTIC_LIMIT_FAULT))
        return;
    RegistrySlot slot = RegistrySlot();
    if (reg)
        registry_slot_read(reg, REGISTRY_SLOT_SERVO_STATS, &slot);
    HapticServoStats st = haptic_servo_stats_unpack(&slot);
    ImGui::PushStyleColor(ImGuiCol_Text, kRed);
    switch (st.fault) {
    case HAPTIC_FAULT_SPEED:
        ImGui::TextWrapped("DEVICE FAULT: implausible handle speed, %.3g m/s measured, %.3g m/s "
                           "allowed: the encoder counts jumped (loose connector, noise)",
                           st.fault_measured, st.fault_allowed);
        break;
    case HAPTIC_FAULT_ACCELERATION:
        ImGui::TextWrapped("DEVICE FAULT: implausible handle acceleration, %.4g m/s^2 measured, "
                           "%.4g m/s^2 allowed: the encoder counts jitter (loose connector, noise)",
                           st.fault_measured, st.fault_allowed);
        break;
    case HAPTIC_FAULT_DEVICE:
        ImGui::TextWrapped("DEVICE FAULT: the device reports FAULT (amplifier fault or hardware "
                           "emergency stop)");
        break;
    default:
        ImGui::TextWrapped("DEVICE FAULT");
        break;
    }
    ImGui::TextWrapped("motors off until enabled again (Enable motors); "
                       "%.0f motion faults, %.0f device FAULT reports",
                       (double)st.motion_faults, (double)st.device_fault_reports);
    ImGui::PopStyleColor();
}

// The safety buttons come first, right under the section's header, at the same places whatever
// the device's name or message (a wrapped status line above them moved Enable onto the line
// where EMERGENCY STOP had been, between two scenes). EMERGENCY STOP is the top row; Enable is
// a gap below it, so a click meant for one never lands on the other.
const float kSafetyGap = 14.0f;
const float kEnableWidth = 150.0f;

void control_buttons(const GuiDevice *d, GuiRequests *r) {
    // Always enabled: pressing it can never make anything worse.
    ImGui::PushStyleColor(ImGuiCol_Button, ImVec4(0.75f, 0.08f, 0.08f, 1.0f));
    ImGui::PushStyleColor(ImGuiCol_ButtonHovered, ImVec4(0.9f, 0.15f, 0.15f, 1.0f));
    ImGui::PushStyleColor(ImGuiCol_ButtonActive, ImVec4(1.0f, 0.25f, 0.25f, 1.0f));
    char label[64];
    std::snprintf(label, sizeof label, "EMERGENCY STOP (%s)", d->estop_key);
    if (ImGui::Button(label, ImVec2(-FLT_MIN, 32)))
        r->device.device_estop = true;
    ImGui::PopStyleColor(3);
    ImGui::Dummy(ImVec2(0.0f, kSafetyGap));
    bool running = d->status == GUI_DEVICE_RUNNING;
    ImGui::BeginDisabled(!running);
    if (!d->enable_requested) {
        if (ImGui::Button("Enable motors", ImVec2(kEnableWidth, 0)))
            r->device.device_enable = true;
    } else if (ImGui::Button("Disable motors", ImVec2(kEnableWidth, 0))) {
        r->device.device_disable = true;
    }
    ImGui::EndDisabled();
    ImGui::SameLine();
    ImGui::BeginDisabled(running);
    if (ImGui::Button("Reconnect"))
        r->device.device_reconnect = true;
    ImGui::EndDisabled();
}

void timing_table(const GuiDeviceReadout &ro) {
    ImGui::Text("servo %.0f Hz (%.1f measured), %s", ro.timing.rate_hz, ro.timing.measured_hz,
                ro.timing.fifo ? "FIFO" : "not FIFO");
    ImGui::Text("periods %.0f, stale device reads %.0f", ro.timing.periods, ro.counts.stale_reads);
    ImGui::Text("link: %.0f CRC errors, %.0f frames lost, %.0f repeated/old dropped",
                ro.counts.crc_errors, ro.counts.frames_lost, ro.counts.frames_dropped);
    ImGui::Text("compute %.1f us mean, %.0f us max", ro.timing.compute_mean_us,
                ro.timing.compute_max_us);
    if (ImGui::BeginTable("lateness", 4, ImGuiTableFlags_BordersInnerV)) {
        const char *heads[] = {"p50", "p99", "p99.9", "max"};
        const double values[] = {ro.timing.p50_us, ro.timing.p99_us, ro.timing.p999_us,
                                 ro.timing.max_us};
        for (const char *h : heads) {
            ImGui::TableNextColumn();
            ImGui::TextDisabled("%s", h);
        }
        for (double v : values) {
            ImGui::TableNextColumn();
            ImGui::Text("%.0f us", v);
        }
        ImGui::EndTable();
    }
    ImGui::Text("overruns %.0f, missed deadlines %.0f", ro.timing.overruns,
                ro.timing.missed_deadlines);
    // The engine-to-servo latency of the local models (issue 30's target: one engine step +
    // 100 us); absent without local models.
    if (ro.local_blocks > 0)
        ImGui::TextWrapped("local model latency %.0f us (mean %.0f, max %.0f over %.0f blocks)",
                           ro.local_latency_us, ro.local_latency_mean_us, ro.local_latency_max_us,
                           ro.local_blocks);
}

// ===== The force-depth plot (issue 30 item 6) =====
// The deepest local model's depth and normal force (HANDLE slot), one point per frame the servo
// has written since the last: the hysteresis loop of an internal-friction wall traced live, the
// spring's line of a PD wall. Written and read by the GUI thread only (the panel's frames).
const int kLoopPoints = 1024; // about 17 s at 60 fps
const float kLoopHeight = 150.0f;
// The loop's colour, found by the GUI test in the screenshot (tests/test_gui_device.c).
const ImU32 kLoopColour = IM_COL32(255, 140, 26, 255);

struct LoopTrace {
    float depth_mm[kLoopPoints], force_n[kLoopPoints];
    int head = 0, count = 0;
    uint64_t slot_count = 0; // the HANDLE write of the newest point
    const GuiDevice *device = nullptr;
};
LoopTrace loop_trace;

void loop_trace_add(const GuiDevice *d, const RegistrySlot &h, const GuiDeviceReadout &ro) {
    LoopTrace &t = loop_trace;
    // a new device or servo (its HANDLE count starts again): a new trace
    if (t.device != d || h.count < t.slot_count) {
        t.head = t.count = 0;
        t.device = d;
    }
    if (h.count == t.slot_count || !ro.handle.motors_on)
        return;
    t.slot_count = h.count;
    t.depth_mm[t.head] = (float)(1e3 * ro.traced_depth);
    t.force_n[t.head] = (float)ro.traced_force;
    t.head = (t.head + 1) % kLoopPoints;
    t.count = t.count < kLoopPoints ? t.count + 1 : kLoopPoints;
}

// Axes from zero to the largest depth and force of the trace (at least 1 mm and 0.5 N), the
// points joined in time order.
void loop_plot(const GuiDeviceReadout &ro) {
    const LoopTrace &t = loop_trace;
    float dmax = 1.0f, fmax = 0.5f;
    for (int i = 0; i < t.count; i++) {
        dmax = std::fmax(dmax, t.depth_mm[i]);
        fmax = std::fmax(fmax, t.force_n[i]);
    }
    ImGui::Text("force-depth, deepest of %.0f models (%.0f in contact)", ro.models,
                ro.models_touching);
    ImGui::Text("now %.3f mm, %.3f N", 1e3 * ro.traced_depth, ro.traced_force);
    ImVec2 at = ImGui::GetCursorScreenPos();
    float w = std::fmax(ImGui::GetContentRegionAvail().x, 120.0f), h = kLoopHeight;
    ImDrawList *dl = ImGui::GetWindowDrawList();
    const float pad = 6.0f;
    ImVec2 lo(at.x + pad, at.y + h - pad), hi(at.x + w - pad, at.y + pad);
    dl->AddRectFilled(at, ImVec2(at.x + w, at.y + h), IM_COL32(20, 20, 24, 255));
    dl->AddLine(lo, ImVec2(hi.x, lo.y), IM_COL32(110, 110, 110, 255)); // depth axis
    dl->AddLine(lo, ImVec2(lo.x, hi.y), IM_COL32(110, 110, 110, 255)); // force axis
    auto point = [&](int i) {
        return ImVec2(lo.x + (hi.x - lo.x) * t.depth_mm[i] / dmax,
                      lo.y + (hi.y - lo.y) * t.force_n[i] / fmax);
    };
    int first = (t.head - t.count + kLoopPoints) % kLoopPoints;
    for (int k = 1; k < t.count; k++)
        dl->AddLine(point((first + k - 1) % kLoopPoints), point((first + k) % kLoopPoints),
                    kLoopColour, 2.0f);
    char label[64];
    std::snprintf(label, sizeof label, "%.2f mm", dmax);
    dl->AddText(ImVec2(hi.x - ImGui::CalcTextSize(label).x, lo.y - ImGui::GetFontSize()),
                IM_COL32(160, 160, 160, 255), label);
    std::snprintf(label, sizeof label, "%.2f N", fmax);
    dl->AddText(ImVec2(lo.x + 4.0f, hi.y), IM_COL32(160, 160, 160, 255), label);
    ImGui::Dummy(ImVec2(w, h));
}

// A limit's name after the last, on the next line when the panel is too narrow for it.
void flag(const char *name, bool on) {
    same_line_if_fits(ImGui::CalcTextSize(name).x + (on ? ImGui::CalcTextSize("[]").x : 0.0f));
    if (on)
        ImGui::TextColored(kRed, "[%s]", name);
    else
        ImGui::TextColored(kDim, "%s", name);
}

void handle_lines(const GuiDeviceReadout &ro) {
    ImGui::Text("handle  (%.4f, %.4f) m", ro.handle.x, ro.handle.y);
    ImGui::Text("velocity (%.3f, %.3f) m/s", ro.handle.vx, ro.handle.vy);
    // What the motors are commanded with (coupling + surfaces + texture), seen on the handle; a
    // texture pulse lasts one servo period, so the 50 ms RMS and peak are what a reader can use.
    // |F| beside the force, or under it in a narrow panel: ImGui's wrapping breaks after a '.',
    // inside a number ("0." / "121 N").
    ImGui::Text("force   (%.3f, %.3f) N,", ro.handle.fx, ro.handle.fy);
    char magnitude[48];
    std::snprintf(magnitude, sizeof magnitude, "|F| %.3f N",
                  std::hypot(ro.handle.fx, ro.handle.fy));
    same_line_if_fits(ImGui::CalcTextSize(magnitude).x);
    ImGui::TextUnformatted(magnitude);
    ImGui::Text("|F| over 50 ms: rms %.3f N, peak %.3f N", ro.handle.force_rms,
                ro.handle.force_peak);
    // The passivity observer (docs/haptics.md "Passivity"): below zero the device has put out
    // energy the scene never received.
    ImGui::Text("port energy %.2f mJ (lowest %.2f mJ)", 1e3 * ro.port_energy,
                1e3 * ro.port_energy_min);
    ImGui::Text("texture (%.3f, %.3f) N, %.0f pulses", ro.handle.texture_fx, ro.handle.texture_fy,
                ro.counts.texture_periods);
    ImGui::Text("torques %.4f, %.4f N m", ro.handle.tau1, ro.handle.tau5);
    ImGui::TextUnformatted("limits");
    flag("workspace", ro.handle.limits & HAPTIC_LIMIT_WORKSPACE);
    flag("singularity", ro.handle.limits & HAPTIC_LIMIT_SINGULAR);
    flag("force limit", ro.handle.limits & (HAPTIC_LIMIT_FORCE | HAPTIC_LIMIT_TORQUE));
    flag("slew limit", ro.handle.limits & HAPTIC_LIMIT_SLEW);
    if (ro.handle.limits & (HAPTIC_LIMIT_NONFINITE | HAPTIC_LIMIT_NO_SOLUTION))
        ImGui::TextColored(kRed, "%s",
                           ro.handle.limits & HAPTIC_LIMIT_NO_SOLUTION
                               ? "no kinematic solution: force 0"
                               : "non-finite force replaced by 0");
    ImVec4 c =
        std::strcmp(ro.watchdog, "live") == 0 ? kGreen
        : std::strcmp(ro.watchdog, "fading") == 0 || std::strcmp(ro.watchdog, "released") == 0
            ? kRed
            : kDim;
    ImGui::TextUnformatted("host watchdog");
    ImGui::SameLine();
    if (std::strcmp(ro.watchdog, "fading") == 0)
        ImGui::TextColored(c, "fading (%.0f%%)", 100.0 * ro.watchdog_fade);
    else if (std::strcmp(ro.watchdog, "released") == 0)
        ImGui::TextColored(c, "released (engine stalled or paused)");
    else
        ImGui::TextColored(c, "%s", ro.watchdog);
    ImGui::SameLine();
    ImGui::TextDisabled("%.0f stalls", ro.counts.engine_stalls);
    if (ro.handle.device_status & (HAPTIC_STATUS_WATCHDOG | HAPTIC_STATUS_FAULT))
        ImGui::TextColored(kRed, "device: %s",
                           ro.handle.device_status & HAPTIC_STATUS_FAULT
                               ? "amplifier fault / e-stop"
                               : "its watchdog zeroed the motors");
}

} // namespace

extern "C" void gui_device_readout(const Registry *reg, const GuiDevice *device,
                                   GuiDeviceReadout *out) {
    RegistrySlot st, h;
    if (reg) {
        registry_slot_read(reg, REGISTRY_SLOT_SERVO_STATS, &st);
        registry_slot_read(reg, REGISTRY_SLOT_HANDLE, &h);
    }
    gui_device_readout_of(reg ? &st : nullptr, reg ? &h : nullptr, device, out);
}

extern "C" void gui_device_readout_of(const RegistrySlot *stats, const RegistrySlot *handle,
                                      const GuiDevice *device, GuiDeviceReadout *out) {
    *out = GuiDeviceReadout();
    out->watchdog = "";
    out->handle_age_s = INFINITY;
    if (stats)
        fill_stats(*stats, out);
    if (handle)
        fill_handle(*handle, device, out);
}

extern "C" void gui_device_panel(const GuiState *s, GuiRequests *r) {
    const GuiDevice *d = s->device;
    if (!d || !ImGui::CollapsingHeader("Haptic device", ImGuiTreeNodeFlags_DefaultOpen))
        return;
    GuiDeviceReadout ro;
    gui_device_readout(s->reg, d, &ro);
    control_buttons(d, r);
    status_line(d, ro);
    fault_line(s->reg, ro);
    if (d->mouse_hand) {
        ImGui::Checkbox("the mouse is the hand", d->mouse_hand);
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip("left drag in the view moves the simulated pantograph's handle "
                              "(unticked: Ctrl + left drag)");
    }
    if (!ro.have_stats && !ro.have_handle) {
        ImGui::TextDisabled("no servo data yet");
        return;
    }
    if (d->status != GUI_DEVICE_RUNNING)
        ImGui::TextDisabled("last values the servo published:");
    // the plot first, under the buttons: it is what a user presses the walls to see
    if (ro.models > 0) {
        RegistrySlot h;
        registry_slot_read(s->reg, REGISTRY_SLOT_HANDLE, &h);
        loop_trace_add(d, h, ro);
        loop_plot(ro);
    }
    timing_table(ro);
    handle_lines(ro);
}
