// Layout helpers for narrow panels (gui_layout.h).
#include "gui_layout.h"

#include <algorithm>

#include <imgui_internal.h> // the window's work rectangle and the extent of what it laid out

#include "gui_plots.h" // issim/gui.h with the C++ spelling of its C keywords

namespace {

// Written by layout_measure_overflow during gui_frame, read by gui_layout_overflow between
// frames (the script's print_gui): display thread only.
float g_overflow[GUI_PANELS];
float g_row_limit = 0.0f; // layout_row_limit's: set and cleared within one window

// The right edge items may reach in the current window (or table cell).
float right_edge() {
    return g_row_limit > 0.0f ? g_row_limit : ImGui::GetCurrentWindow()->WorkRect.Max.x;
}

} // namespace

void same_line_if_fits(float width) {
    float after = ImGui::GetItemRectMax().x + ImGui::GetStyle().ItemSpacing.x;
    if (after + width <= right_edge())
        ImGui::SameLine();
}

bool button_same_line_if_fits(const char *label) {
    float width =
        ImGui::CalcTextSize(label, nullptr, true).x + 2 * ImGui::GetStyle().FramePadding.x;
    same_line_if_fits(width);
    return ImGui::Button(label);
}

bool checkbox_same_line_if_fits(const char *label, bool *value) {
    const ImGuiStyle &style = ImGui::GetStyle();
    float width = ImGui::GetFrameHeight() + style.ItemInnerSpacing.x +
                  ImGui::CalcTextSize(label, nullptr, true).x;
    same_line_if_fits(width);
    return ImGui::Checkbox(label, value);
}

void label_beside(const char *text, bool disabled, const char *brief) {
    float inner = ImGui::GetStyle().ItemInnerSpacing.x;
    float room = right_edge() - ImGui::GetItemRectMax().x - inner;
    const char *shown = text;
    if (ImGui::CalcTextSize(text).x <= room)
        ImGui::SameLine(0.0f, inner);
    else if (brief && ImGui::CalcTextSize(brief).x <= room) {
        ImGui::SameLine(0.0f, inner);
        shown = brief;
    }
    ImGui::PushTextWrapPos(0.0f);
    if (disabled)
        ImGui::TextDisabled("%s", shown);
    else
        ImGui::TextUnformatted(shown);
    ImGui::PopTextWrapPos();
    if (shown != text && ImGui::IsItemHovered())
        ImGui::SetTooltip("%s", text);
}

void layout_row_limit(float right_x) {
    g_row_limit = right_x;
}

void layout_measure_overflow(int panel) {
    const ImGuiWindow *w = ImGui::GetCurrentWindow();
    g_overflow[panel] = std::max(g_overflow[panel], w->DC.CursorMaxPos.x - w->WorkRect.Max.x);
}

void layout_reset_overflow() {
    std::fill(g_overflow, g_overflow + GUI_PANELS, 0.0f);
}

extern "C" double gui_layout_overflow(int panel) {
    return panel >= 0 && panel < GUI_PANELS ? g_overflow[panel] : 0.0;
}
