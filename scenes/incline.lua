-- incline: a box on a slope with Coulomb friction, resolved as a complementarity problem
-- (seed 001's time stepping, friction by projected Gauss-Seidel on the friction disc:
-- src/engine/engine_pgs.c). Below atan(mu_s) the box sticks; above it slides with
-- a = g (sin th - mu_k cos th) (tests/test_complementarity_friction.c).
--
-- The slope is the floor in its own frame: gravity is tilted by the angle th about y, so the
-- downhill direction is +x and one property sets the angle:
--   --set universe.gravity='g sin(th) 0 -g cos(th)'
--       th = 20 deg (default, sticks):  --set universe.gravity='3.3552 0 -9.2184'
--       th = 30 deg (slides at 0.9075 m/s^2): --set universe.gravity='4.905 0 -8.4957'
-- Other properties a user changes:
--   box_floor.friction_static, box_floor.friction_kinetic   mu_s, mu_k
--   box_floor.solver     pgs | reference (frictionless) | auto, live
--   box_floor.resolver   complementarity | force_law (the same box on a penalty law)
local th, g = math.rad(20), 9.81
local m, h = 1.0, 0.05                      -- kg, half side (m)
local i = m * (2 * h) ^ 2 / 6               -- cube: m s^2 / 6
return {
  name = "incline",
  description = "A box on a 20 degree slope (mu_s 0.5, mu_k 0.4): sticks below atan(mu_s)",
  universe = {
    gravity = {g * math.sin(th), 0, -g * math.cos(th)},
    integrator = "rk4",
    dt = 1e-3,
    record = "box.pos.x,box.vel.x,box.pos.z",
  },
  -- Seen from the side with "up" against gravity: the floor is drawn as the 20 degree slope it
  -- is for the box (display only; the physics is the tilted gravity above).
  camera = { eye = {0.1, -0.8, 0.12}, target = {0.05, 0, 0.03}, fov = 45,
             up = {-math.sin(th), 0, math.cos(th)} },
  things = {
    { name = "box", kind = "body", shape = "box", half_extents = {h, h, h},
      mass = m, inertia = {i, i, i}, pos = {0, 0, h}, material = "box" },
    { name = "floor", kind = "obstacle", shape = "plane", normal = {0, 0, 1}, offset = 0,
      material = "floor" },
  },
  contacts = {
    { name = "box_floor", materials = {"box", "floor"}, resolver = "complementarity",
      solver = "pgs", friction_static = 0.5, friction_kinetic = 0.4 },
  },
}
