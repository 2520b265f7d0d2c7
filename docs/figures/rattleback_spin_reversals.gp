# docs/figures/rattleback_spin_reversals.png (docs/smooth-contact.md, "The second reversal").
# The data, from a release build (B = its directory), in the directory gnuplot runs in:
#   V="--headless --quiet --until 150 --every 10 --vars rattleback.angvel.z"
#   $B/issim run scenes/rattleback.lua $V --record fig_scene.csv
#   $B/issim run scenes/rattleback.lua $V --record fig_noslip.csv \
#     --set rattleback_floor.smooth_friction=stick_slip --set rattleback_floor.slip_tolerance=0.001
#   $B/issim run scenes/rattleback.lua $V --record fig_mass15.csv --set rattleback.mass=15
# fig_indep.csv (t, w_z every 10 ms, a header line): the equations of the independent no-slip
# solver in tests/test_rattleback_noslip.c, integrated the same way (RK4, 1 ms) for 150 s.
set terminal pngcairo size 1100,600 font "DejaVu Sans,10"
set output "rattleback_spin_reversals.png"
set datafile separator ","
set datafile commentschars "#"
set key at screen 0.5,0.075 center center box noenhanced maxrows 2
set bmargin 8
set xlabel "t [s]"
set ylabel "spin w_z [rad/s] (world z; > 0 counter-clockwise)"
set xrange [0:150]
set yrange [-1.3:1.45]
set grid
set arrow from 23,-1.3 to 23,1.45 nohead lw 2 dt 2 lc rgb "#2a9d2a"
set arrow from 40,-1.3 to 40,1.45 nohead lw 2 dt 2 lc rgb "#d62728"
set label "002 Fig. 6.8: clockwise at 23 s" at 23.8,-1.12 tc rgb "#2a9d2a"
set label "002 Fig. 6.8: counter-clockwise at 40 s" at 40.8,-1.22 tc rgb "#d62728"
set arrow from 113,-1.3 to 113,1.45 nohead lw 1 dt 4 lc rgb "#1f4e9c"
set label "scene: back to counter-clockwise at 113 s (no slip: 109 s)" at 70,1.3 tc rgb "#1f4e9c"
set title "Rattleback spin start (002 App. B.1): w_z against t; the scene (sliding friction 0.3) and its no-slip limit reverse back at 109-113 s, not 40 s"
plot "fig_scene.csv" skip 1 using 1:2 with lines lw 2 lc rgb "#1f4e9c" title "scenes/rattleback.lua (App. B.1, mu 0.3 sliding)", \
     "fig_noslip.csv" skip 1 using 1:2 with lines lw 1 dt 3 lc rgb "black" title "same, rolling without slip (smooth_friction stick-slip)", \
     "fig_indep.csv" skip 1 every 200 using 1:2 with points pt 6 ps 0.6 lc rgb "black" title "independent no-slip solver (paraboloid cap), every 2 s", \
     "fig_mass15.csv" skip 1 using 1:2 with lines lw 1 lc rgb "#ff9f1c" title "mass 15 kg instead of 5 (I/m 3x smaller; not App. B.1)"
