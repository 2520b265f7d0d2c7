-- rattleback: the spinning top that reverses (seed 002 App. B.1 and 6.4; V14).
--
-- One bicubic Bezier cap (App. B.1's net, scaled by (0.6, 0.2, 0.2), turned -0.174 rad about z,
-- lifted by 0.2, in that order), mass 5 kg, principal inertia (1, 10, 10) kg m^2 along the body
-- axes, so the long axis of the cap lies 10 degrees off the axis of least inertia: the
-- misalignment that turns spin into rocking and rocking into spin the other way. It stands on a
-- flat Bezier floor, and the pair is integrated in Kry's contact coordinates (resolver
-- "reduced": docs/smooth-contact.md), so the contact never leaves the two surfaces.
--
-- Sign convention: with control[i][j] = the (4 i + j)-th listed point, s runs along the cap and
-- n = x_s x x_t points away from the centre of mass at the cap's lowest point, so the cap is
-- convex along the body's +z; resting, the contact frames put that +z down (the cap convex
-- toward the floor, the centre of mass 0.1 m above the contact).
--
-- Run time: the scene is meant to run 150 s (both reversals, below). The floor is App. B.1's
-- flat patch made 20 times larger, 60 m x 60 m (App. B.1's is 3 m): without friction nothing
-- stops the 9 cm/s drift of the spin start's centre of mass, which left the 3 m floor at 17.5 s
-- and would leave this one after about 340 s (tests/test_rattleback_floor.c). A flat floor's
-- size does not change the physics (the friction case's trajectory is the same to 1e-12).
--
-- Spin start (App. B.1): contact at (s, t) = (0.45, 0.45) on the cap (slightly off its lowest
-- point, or it would spin steadily), (u, v) = (0.5, 0.5) on the floor, psi_dot = -1: it turns
-- counter-clockwise seen from above, slows, rocks, and spins clockwise (about 28 s with sliding
-- friction 0.3); a second reversal follows much later (about 113 s; 002 Fig. 6.8 shows it by
-- 40 s, which App. B.1's parameters do not give: docs/smooth-contact.md, V14).
--
-- Properties a user usually changes:
--   rattleback_floor.friction_kinetic   mu of sliding (0 with friction_static 0: no friction, no
--                                       reversal)
--   rattleback_floor.smooth_friction    sliding (002 4.4.1, the seed's runs) or stick_slip (slow
--                                       slip sticks: rolling without slip, 002 4.4.2-4.4.4)
--   rattleback_floor.rolling_friction, .spinning_friction   002 eq. 4.27-4.29 (m)
--   rattleback_floor.start_coords       "0.15 0.5 0.5 0.5 0" with start_rates "0 0 0 0 0": tap start
--   rattleback_floor.resolver           force_law: the same top through the penalty path (the
--                                       cap's tessellated hull on a spring/damper, restitution
--                                       0.95: more damping takes the rocking before it reverses)
local net = {
  {-1.5, -1.5, -2.0}, {-1.5, -0.5, -1.0}, {-1.5, 0.5, -1.0}, {-1.5, 1.5, -2.0},
  {-0.5, -1.5, -1.0}, {-0.5, -0.5, 0.0}, {-0.5, 0.5, 0.0}, {-0.5, 1.5, -1.0},
  {0.5, -1.5, -1.0}, {0.5, -0.5, 0.0}, {0.5, 0.5, 0.0}, {0.5, 1.5, -1.0},
  {1.5, -1.5, -2.0}, {1.5, -0.5, -1.0}, {1.5, 0.5, -1.0}, {1.5, 1.5, -2.0},
}
local angle = -0.174
local c, s = math.cos(angle), math.sin(angle)
local cap = {}
for i, p in ipairs(net) do
  local x, y, z = 0.6 * p[1], 0.2 * p[2], 0.2 * p[3]
  cap[i] = {c * x - s * y, s * x + c * y, z + 0.2}
end
local floor_scale = 20 -- App. B.1's floor net (-1.5 .. 1.5 m) times 20: 60 m x 60 m
local floor = {}
for i = 0, 3 do
  for j = 0, 3 do
    floor[#floor + 1] = {floor_scale * (-1.5 + i), floor_scale * (-1.5 + j), 0}
  end
end

return {
  name = "rattleback",
  description = "A rattleback top spun counter-clockwise reverses to clockwise (002 6.4, V14)",
  universe = {
    gravity = {0, 0, -9.81},
    integrator = "rk4",
    dt = 1e-3,
    record = "rattleback.angvel.z,rattleback.pos.z,universe.energy.total",
    -- What the GUI shows (display only): the spin about z over a 20 s window, so its change of
    -- sign at about 28 s is seen (at 2x, 14 s after opening), and the top a third of the view
    -- wide from above its side, the camera following its drift.
    plots = "rattleback.angvel.z; universe.energy.total",
    plot_window = 20,
    playback_speed = 2,
  },
  camera = { eye = {2.2, -3.4, 2.6}, target = {0, 0, 0.05}, fov = 40, follow = "rattleback" },
  things = {
    { name = "rattleback", kind = "body", shape = "smooth", surface_points = cap,
      mass = 5, inertia = {1, 10, 10}, material = "rattleback", color = {0.8, 0.45, 0.2} },
    { name = "floor", kind = "obstacle", shape = "smooth", surface_points = floor,
      material = "floor", color = {0.55, 0.6, 0.65} },
  },
  contacts = {
    { name = "rattleback_floor", materials = {"rattleback", "floor"}, resolver = "reduced",
      friction_static = 0.3, friction_kinetic = 0.3, smooth_friction = "sliding",
      slip_tolerance = 0.01,
      model = "spring_damper", stiffness = 1e5, restitution = 0.95,
      start_coords = "0.45 0.45 0.5 0.5 0", start_rates = "0 0 0 0 -1" },
  },
}
