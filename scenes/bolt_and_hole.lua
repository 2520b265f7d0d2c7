-- bolt_and_hole: a bolt (a capsule shaft, 10 mm radius, 60 mm tip to tip) held above a plate with
-- a chamfered blind hole (11 mm radius, 25 mm deep, 45-degree chamfer to 16 mm;
-- assets/plate_chamfered_hole.obj, a static triangle mesh). Off-centre by 4 mm, it lands on the
-- chamfer, slides into the hole and seats on its floor. The set-up of Hotz et al. (seed 001):
-- here with spring/dampers; their complementarity contact (docs/complementarity.md) with
-- --set bolt_plate.resolver=complementarity, or the pair's resolver in the property editor.
--
-- Properties a sweep usually changes with --set:
--   bolt.pos               starting position (x offset from the hole's axis), m
--   bolt_plate.stiffness, bolt_plate.restitution
local r, half = 0.010, 0.02        -- shaft radius and half segment length, m
local m = 7800 * (math.pi * r ^ 2 * 2 * half + 4 / 3 * math.pi * r ^ 3)
local it = m * ((2 * half) ^ 2 / 12 + r ^ 2 / 4)
local ia = 0.5 * m * r ^ 2
return {
  name = "bolt_and_hole",
  description = "A bolt dropped off-centre onto a plate with a chamfered hole",
  universe = {
    gravity = {0, 0, -9.81},
    integrator = "rk4",
    dt = 2e-5,
    record = "bolt.pos.x,bolt.pos.z,universe.energy.total",
  },
  camera = { eye = {0.15, -0.25, 0.12}, target = {0, 0, 0}, fov = 40 },
  things = {
    { name = "bolt", kind = "body", shape = "capsule", radius = r, half_length = half,
      mass = m, inertia = {it, it, ia}, pos = {0.004, 0, 0.04}, material = "steel" },
    { name = "plate", kind = "obstacle", shape = "mesh",
      mesh_file = "assets/plate_chamfered_hole.obj", material = "steel" },
  },
  contacts = {
    { name = "bolt_plate", materials = {"steel", "steel"}, model = "spring_damper",
      stiffness = 1e5, restitution = 0.2, clamp_attraction = true },
  },
}
