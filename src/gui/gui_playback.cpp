// Time around impacts and branches in the GUI (issue 31 items 1 and 6; the logic is the
// session's, sim_playback.c, and the display's, app_playback.c). Display thread only.
#include "gui_playback.h"

#include <cmath>
#include <cstdio>

namespace {

const ImU32 kImpact = IM_COL32(255, 190, 60, 255);
const ImU32 kEdit = IM_COL32(80, 220, 255, 255);
const ImU32 kBranch = IM_COL32(255, 80, 255, 255);
const ImVec4 kSlowText(1.0f, 0.75f, 0.3f, 1.0f);

struct PlaybackMemory {
    bool slow_on = false;
    float slow_rate = 1e-3f;
    float window_ms = 2.0f;
    float video_slow = 1.0f;
};
PlaybackMemory g_pb;
ImVec4 g_pause_rect, g_slow_rect; // x, y, w, h as last drawn (gui_playback_rects)

ImVec4 item_rect() {
    ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
    return ImVec4(a.x, a.y, b.x - a.x, b.y - a.y);
}

void slow_motion_controls(const GuiState *s, GuiRequests *r) {
    g_pb.slow_on = s->clock.slow_rate > 0.0;
    if (g_pb.slow_on)
        g_pb.slow_rate = (float)s->clock.slow_rate;
    g_pb.window_ms = (float)(1e3 * s->clock.slow_window);
    bool changed = ImGui::Checkbox("slow motion at impacts", &g_pb.slow_on);
    g_slow_rect = item_rect();
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("within the window before and after each impact (a contact beginning "
                          "at over 1 cm/s) time runs at the rate below");
    ImGui::BeginDisabled(!g_pb.slow_on);
    ImGui::SetNextItemWidth(-80);
    changed |= ImGui::SliderFloat("rate", &g_pb.slow_rate, 1e-4f, 1.0f, "%.4gx",
                                  ImGuiSliderFlags_Logarithmic);
    ImGui::SetNextItemWidth(-80);
    changed |= ImGui::SliderFloat("window", &g_pb.window_ms, 0.05f, 100.0f, "%.3g ms",
                                  ImGuiSliderFlags_Logarithmic);
    ImGui::EndDisabled();
    if (changed) {
        r->time.set_slow_motion = true;
        r->time.slow_rate = g_pb.slow_on ? g_pb.slow_rate : 0.0;
        r->time.slow_window = 1e-3 * g_pb.window_ms;
    }
    if (s->clock.slow_now)
        ImGui::TextColored(kSlowText, "SLOW MOTION %.4gx: an impact within %.3g ms",
                           s->clock.slow_rate, 1e3 * s->clock.slow_window);
}

void pause_at_contact_button(const GuiState *s, GuiRequests *r) {
    if (s->clock.pause_at_contact) {
        ImGui::PushStyleColor(ImGuiCol_Button, ImVec4(0.6f, 0.4f, 0.1f, 1.0f));
        if (ImGui::Button("Waiting for a contact (cancel)"))
            r->time.pause_at_contact_toggle = true;
        ImGui::PopStyleColor();
    } else if (ImGui::Button("Pause at next contact")) {
        r->time.pause_at_contact_toggle = true;
    }
    g_pause_rect = item_rect();
    ImGui::SameLine();
    ImGui::TextDisabled("%d impacts", s->clock.impact_count);
}

void branch_question(const GuiState *s, GuiRequests *r) {
    static const char *const policies[] = {"ask", "from the scrubbed instant",
                                           "from the edit's own instant"};
    if (s->branch.branch_edit && s->branch.branch_edit[0]) {
        ImGui::PushTextWrapPos(0.0f);
        ImGui::TextColored(ImVec4(1.0f, 0.45f, 1.0f, 1.0f),
                           "Resuming from %.4f s, before the edit %s made at %.4f s. Apply it:",
                           s->branch.branch_time, s->branch.branch_edit,
                           s->branch.branch_edit_time);
        ImGui::PopTextWrapPos();
        // One button a line: side by side they ran past a 340-pixel panel.
        char label[96];
        std::snprintf(label, sizeof label, "from %.4f s (now)", s->branch.branch_time);
        if (ImGui::Button(label))
            r->time.branch_from_scrub = true;
        std::snprintf(label, sizeof label, "from %.4f s (its instant)", s->branch.branch_edit_time);
        if (ImGui::Button(label))
            r->time.branch_from_original = true;
    }
    int policy = s->branch.branch_policy;
    ImGui::SetNextItemWidth(-80);
    if (ImGui::Combo("branches", &policy, policies, 3))
        r->time.set_branch_policy = 1 + policy;
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("Run from a scrubbed instant before an edit: ask, or apply the edit from "
                          "the scrubbed instant, or from the instant it was made");
}

float x_of(double t, double lo, double hi, float x0, float x1) {
    return x0 + (float)((t - lo) / (hi - lo)) * (x1 - x0);
}

} // namespace

void gui_playback_controls(const GuiState *s, GuiRequests *r) {
    slow_motion_controls(s, r);
    pause_at_contact_button(s, r);
    branch_question(s, r);
}

void gui_timeline_marks(const GuiState *s, double lo, double hi) {
    if (!(hi > lo))
        return;
    ImDrawList *dl = ImGui::GetWindowDrawList();
    ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
    // The slider's frame is the item's width less the label.
    float x0 = a.x + 4, x1 = a.x + ImGui::CalcItemWidth() - 4;
    for (int k = 0; k < s->clock.impact_count; k++) {
        if (s->clock.impacts[k] < lo || s->clock.impacts[k] > hi)
            continue;
        float x = x_of(s->clock.impacts[k], lo, hi, x0, x1);
        dl->AddLine(ImVec2(x, a.y), ImVec2(x, b.y), kImpact, 2.0f);
    }
    for (int k = 0; k < s->branch.edit_count; k++) {
        if (s->branch.edit_times[k] < lo || s->branch.edit_times[k] > hi)
            continue;
        float x = x_of(s->branch.edit_times[k], lo, hi, x0, x1);
        dl->AddTriangleFilled(ImVec2(x - 4, a.y), ImVec2(x + 4, a.y), ImVec2(x, a.y + 7), kEdit);
        dl->AddLine(ImVec2(x, a.y), ImVec2(x, b.y), kEdit, 1.0f);
    }
    if (std::isfinite(s->branch.branch_time) && s->branch.branch_time >= lo &&
        s->branch.branch_time <= hi) {
        float x = x_of(s->branch.branch_time, lo, hi, x0, x1);
        dl->AddTriangleFilled(ImVec2(x - 5, b.y), ImVec2(x + 5, b.y), ImVec2(x, b.y - 9), kBranch);
        // the stretch computed again from the branch on
        dl->AddLine(ImVec2(x, b.y - 1), ImVec2(x1, b.y - 1), kBranch, 2.0f);
    }
    // The key is always drawn: shown only once a mark existed, it moved every widget below it
    // (the device panel's EMERGENCY STOP by 17 px) the moment the first impact was found.
    ImGui::TextColored(ImColor(kImpact), "| impact");
    ImGui::SameLine();
    ImGui::TextColored(ImColor(kEdit), "| edit");
    ImGui::SameLine();
    ImGui::TextColored(ImColor(kBranch), "^ branch");
}

int gui_plot_impact_marks(const GuiState *s, ImDrawList *dl, ImVec2 pa, ImVec2 pb, double t0,
                          double t1, double *first) {
    *first = NAN;
    int n = 0;
    if (!(t1 > t0))
        return 0;
    for (int k = 0; k < s->clock.impact_count; k++) {
        double t = s->clock.impacts[k];
        if (t < t0 || t > t1)
            continue;
        if (n++ == 0)
            *first = t;
        float x = x_of(t, t0, t1, pa.x, pb.x);
        for (float y = pa.y; y < pb.y; y += 6) // dashed: the curves stay readable
            dl->AddLine(ImVec2(x, y), ImVec2(x, std::fmin(y + 3, pb.y)), kImpact);
        dl->AddTriangleFilled(ImVec2(x - 3, pa.y), ImVec2(x + 3, pa.y), ImVec2(x, pa.y + 5),
                              kImpact);
    }
    return n;
}

extern "C" void gui_playback_rects(double pause[4], double slow[4]) {
    const ImVec4 *rects[2] = {&g_pause_rect, &g_slow_rect};
    double *out[2] = {pause, slow};
    for (int k = 0; k < 2; k++) {
        out[k][0] = rects[k]->x, out[k][1] = rects[k]->y;
        out[k][2] = rects[k]->z, out[k][3] = rects[k]->w;
    }
}

double gui_video_slow_factor() {
    ImGui::SetNextItemWidth(-80);
    ImGui::SliderFloat("slow-motion", &g_pb.video_slow, 1.0f, 10000.0f, "%.0fx",
                       ImGuiSliderFlags_Logarithmic);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("simulated time: video seconds per simulated second (100: 10 ms of "
                          "simulation last 1 s); each frame shows its instant, written in it");
    return g_pb.video_slow;
}
