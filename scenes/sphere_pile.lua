-- sphere_pile: N steel spheres poured into an open box, resolved as complementarity contact
-- (seed 001's time stepping; PGS with Coulomb friction for the large island:
-- src/engine/engine_pgs.c). The issue-15 benchmark scene: `issim-bench sphere_pile` runs it at
-- N = 100 and N = 1000 beside ODE 0.16's dWorldQuickStep on the same spheres.
--
--   spheres  r 0.02 m, steel 7850 kg/m^3 (0.263 kg)
--   box      0.4 m x 0.4 m inside: the floor plane and four wall planes
--   start    8 x 8 per layer at 0.05 m pitch, the first layer at z = 0.1 m, +-4 mm horizontal
--            jitter (seeded: every run starts from the same positions)
--   run      dt 1 ms, 2 s, friction mu = 1 (static and kinetic)
--
-- N is the `count` below (the loader has no scene parameters; the benchmark rewrites that line).
-- Properties a user changes with --set: sphere_sphere.solver / sphere_wall.solver (auto | pgs |
-- reference | lemke | fischer_newton, live), their friction_static / friction_kinetic, and their resolver
-- (complementarity | force_law).
local count = 100          -- spheres
local r, density = 0.02, 7850
local m = density * 4 / 3 * math.pi * r ^ 3
local inertia = 0.4 * m * r ^ 2
local things = {
  { name = "floor", kind = "obstacle", shape = "plane", normal = {0, 0, 1}, offset = 0,
    material = "wall" },
  { name = "wall_xp", kind = "obstacle", shape = "plane", normal = {-1, 0, 0}, offset = -0.2,
    material = "wall" },
  { name = "wall_xn", kind = "obstacle", shape = "plane", normal = {1, 0, 0}, offset = -0.2,
    material = "wall" },
  { name = "wall_yp", kind = "obstacle", shape = "plane", normal = {0, -1, 0}, offset = -0.2,
    material = "wall" },
  { name = "wall_yn", kind = "obstacle", shape = "plane", normal = {0, 1, 0}, offset = -0.2,
    material = "wall" },
}
math.randomseed(15)
for n = 0, count - 1 do
  local layer, k = n // 64, n % 64
  local x = -0.175 + 0.05 * (k % 8) + (math.random() * 2 - 1) * 0.004
  local y = -0.175 + 0.05 * (k // 8) + (math.random() * 2 - 1) * 0.004
  things[#things + 1] = {
    name = "s" .. n, kind = "body", shape = "sphere", radius = r, mass = m,
    inertia = {inertia, inertia, inertia}, pos = {x, y, 0.1 + 0.05 * layer},
    material = "steel" }
end
return {
  name = "sphere_pile",
  description = "Steel spheres poured into a 0.4 m box (complementarity, mu = 1)",
  universe = {
    gravity = {0, 0, -9.81},
    integrator = "rk4",
    dt = 1e-3,
    record = "s0.pos.z,universe.energy.kinetic",
  },
  camera = { eye = {0.9, -1.2, 0.8}, target = {0, 0, 0.15}, fov = 45 },
  things = things,
  contacts = {
    -- PGS on the exact friction cone for every island: `auto` would hand islands of up to 24
    -- contacts to Lemke, whose 8-sided cone lets friction reach mu N / cos(22.5 deg).
    { name = "sphere_sphere", materials = {"steel", "steel"}, resolver = "complementarity",
      solver = "pgs", friction_static = 1, friction_kinetic = 1 },
    { name = "sphere_wall", materials = {"steel", "wall"}, resolver = "complementarity",
      solver = "pgs", friction_static = 1, friction_kinetic = 1 },
  },
}
