// A plotted series' history (gui_plots.h, PlotStore): every sample since the series was chosen,
// kept beside the registry (whose ring holds a pile's frames for half a second) within a budget.
// Over it, neighbouring samples merge pairwise into their minimum and maximum, so a peak
// survives any number of halvings. A min/max pyramid over blocks of kBlock samples answers "the
// smallest and largest value between two samples" in O(kBlock log n), so a plot draws a pixel
// column from a million samples without reading them.
#include <algorithm>
#include <cmath>

#include "gui_plots.h"

namespace {

const int kBlock = 16;
const size_t kSampleBytes = sizeof(double) + 2 * sizeof(float);

} // namespace

void PlotStore::clear() {
    version++;
    rewrites++;
    t.clear();
    lo.clear();
    hi.clear();
    for (int k = 0; k < kPlotLevels; k++) {
        level_lo[k].clear();
        level_hi[k].clear();
    }
    fed = -INFINITY;
    halvings = 0;
}

// After a sample is appended: the blocks it completes, level by level.
void PlotStore::complete_blocks() {
    const std::vector<float> *below_lo = &lo, *below_hi = &hi;
    for (int k = 0; k < kPlotLevels; k++) {
        size_t n = below_lo->size();
        if (n == 0 || n % kBlock != 0)
            return;
        float a = INFINITY, b = -INFINITY;
        for (size_t i = n - kBlock; i < n; i++)
            a = std::min(a, (*below_lo)[i]), b = std::max(b, (*below_hi)[i]);
        level_lo[k].push_back(a);
        level_hi[k].push_back(b);
        below_lo = &level_lo[k];
        below_hi = &level_hi[k];
    }
}

void PlotStore::push(double time, float low, float high) {
    version++;
    t.push_back(time);
    lo.push_back(low);
    hi.push_back(high);
    fed = time;
    complete_blocks();
}

void PlotStore::truncate(double from) {
    version++;
    rewrites++;
    size_t n = (size_t)(std::lower_bound(t.begin(), t.end(), from) - t.begin());
    t.resize(n);
    lo.resize(n);
    hi.resize(n);
    size_t blocks = n;
    for (int k = 0; k < kPlotLevels; k++) {
        blocks /= kBlock;
        level_lo[k].resize(blocks);
        level_hi[k].resize(blocks);
    }
    fed = n ? t[n - 1] : -INFINITY;
}

// Neighbouring pairs merge (the earlier time, both extremes); the pyramid is rebuilt.
void PlotStore::halve() {
    version++;
    std::vector<double> t2;
    std::vector<float> lo2, hi2;
    for (size_t i = 0; i < t.size(); i += 2) {
        size_t j = std::min(i + 1, t.size() - 1);
        t2.push_back(t[i]);
        lo2.push_back(std::min(lo[i], lo[j]));
        hi2.push_back(std::max(hi[i], hi[j]));
    }
    double was_fed = fed;
    int was_halved = halvings;
    clear();
    for (size_t i = 0; i < t2.size(); i++)
        push(t2[i], lo2[i], hi2[i]);
    fed = was_fed;
    halvings = was_halved + 1;
}

size_t PlotStore::bytes() const {
    return t.size() * kSampleBytes * (kBlock + 1) / kBlock;
}

void PlotStore::add(double time, double value, size_t budget) {
    float v = (float)value;
    push(time, v, v);
    if (bytes() > budget && t.size() > 2 * (size_t)kBlock)
        halve();
}

size_t PlotStore::index_at(double time) const {
    return (size_t)(std::lower_bound(t.begin(), t.end(), time) - t.begin());
}

// From a guess at the mean spacing: a drawing walks a million samples in column-sized strides,
// and a binary search over all of them per column missed the cache twenty times a column.
size_t PlotStore::index_from(size_t from, double time) const {
    size_t n = t.size();
    if (from >= n || t[from] >= time)
        return std::min(from, n);
    double spacing = (t[n - 1] - t[0]) / (double)std::max<size_t>(n - 1, 1);
    double ahead = spacing > 0 ? (time - t[from]) / spacing : 0.0;
    size_t below = from; // t[below] < time
    size_t above = from + (size_t)std::min(ahead, (double)(n - from));
    for (size_t step = 1; above < n && t[above] < time; step *= 2) // t[above] >= time, or above = n
        below = above, above = std::min(n, above + step);
    for (size_t step = 1; above - below > 1; step *= 2) {
        size_t probe = above - below > step ? above - step : below + 1;
        if (t[probe] < time) {
            below = probe;
            break;
        }
        above = probe;
    }
    return (size_t)(std::lower_bound(t.begin() + below + 1, t.begin() + above, time) - t.begin());
}

// The extremes of samples [i0, i1): whole blocks from the highest level that has them.
void PlotStore::range(size_t i0, size_t i1, float *out_lo, float *out_hi) const {
    float a = INFINITY, b = -INFINITY;
    const std::vector<float> *L = &lo, *H = &hi;
    for (int k = -1; i0 < i1; k++) {
        bool up = k + 1 < kPlotLevels && i1 - i0 >= 2 * (size_t)kBlock;
        size_t head = up ? std::min(i1, (i0 + kBlock - 1) / kBlock * kBlock) : i1;
        size_t tail = up ? std::max(head, i1 / kBlock * kBlock) : i1;
        for (size_t i = i0; i < head; i++)
            a = std::min(a, (*L)[i]), b = std::max(b, (*H)[i]);
        for (size_t i = tail; i < i1; i++)
            a = std::min(a, (*L)[i]), b = std::max(b, (*H)[i]);
        if (!up)
            break;
        i0 = head / kBlock, i1 = tail / kBlock;
        L = &level_lo[k + 1], H = &level_hi[k + 1];
        i1 = std::min(i1, L->size());
    }
    *out_lo = a, *out_hi = b;
}
