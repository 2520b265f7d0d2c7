/* A body that is one contact point (quasi_static_cycle's block: a vertex at its centre of mass)
 * is drawn as the block its `display_box` says, standing on the vertex, instead of only the
 * 8 mm vertex marker half sunk in the floor (issue 17: "the block drawn as a tiny hemisphere"). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_display_util.h"

/* The block's colour {0.3, 0.6, 0.85}, lit (its shaded sides about (38, 80, 115)): blue well
 * above red; the sky, the floor and the grid lines have blue at most 30 above red. */
static bool is_block_blue(const unsigned char *p) {
    return p[2] > 90 && p[2] > p[0] + 50;
}

static int block_pixels(const char *extra) {
    char out[GUI_OUTPUT_MAX], script[512];
    const char *shot = test_temp_path(".png");
    snprintf(script, sizeof script, "toggle gui off\nframes 3\nscreenshot %s\n", shot);
    int rc = run_issim_script(test_source_path("scenes/quasi_static_cycle.lua"), extra, script, out,
                              sizeof out);
    if (rc != 0)
        fail_msg("issim exited with %d:\n%s", rc, out);
    Image im = load_png(shot);
    int count = 0;
    for (int i = 0; i < im.w * im.h; i++)
        count += is_block_blue(im.rgb + 3 * (size_t)i);
    stbi_image_free(im.rgb);
    remove(shot);
    return count;
}

static void test_point_body_drawn_as_its_display_box(void **state) {
    (void)state;
    int marker = block_pixels("--set 'block.display_box=0 0 0'");
    int block = block_pixels(NULL);
    print_message("quasi_static_cycle block: %d px as the vertex marker only, %d px with its "
                  "display box\n",
                  marker, block);
    assert_true(marker > 0);
    /* a 3 cm x 2 cm block 12 cm from the camera (fov 45): about 310 x 200 px of 1280 x 720 */
    assert_true(block > 40000);
    assert_true(block > 5 * marker);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_point_body_drawn_as_its_display_box),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
