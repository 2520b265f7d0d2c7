-- chair: a seat on four legs standing on a floor, resolved as a complementarity problem
-- (001, Hotz et al.; VALIDATION.md V12). The chair is one rigid body whose contact vertices are
-- its four feet; its centre of mass is off the middle of the seat (a backrest), so the legs
-- carry different loads. Four coplanar contacts for three equilibrium equations: the leg forces
-- are not unique (any vector in a one-dimensional family), only their sum is, the weight m g,
-- and every solution has all four forces >= 0 here. Lemke, Fischer-Newton and PGS may pick
-- different members of the family.
--
-- Properties a sweep usually changes with --set:
--   chair.pos           drop position (feet 0.45 m below the centre of mass)
--   chair.mass          kg
local m = 5.0                                 -- kg
local leg, w = 0.45, 0.2                       -- feet below the centre of mass, half spacing (m)
local cx = 0.05                                -- centre of mass behind the seat's middle (m)
return {
  name = "chair",
  description = "A four-legged chair on a floor: the leg forces are not unique, their sum is the weight",
  universe = {
    gravity = {0, 0, -9.81},
    integrator = "bdf",
    dt = 1e-3,
    record = "chair.pos.z,chair.vel.z",
  },
  camera = { eye = {1.4, -1.9, 1.1}, target = {0, 0, 0.4}, fov = 45 },
  things = {
    { name = "chair", kind = "body", shape = "points", material = "wood",
      mass = m, inertia = {0.3, 0.3, 0.25},
      pos = {0, 0, leg + 0.01},
      vertices = { {w - cx, w, -leg}, {-w - cx, w, -leg}, {-w - cx, -w, -leg}, {w - cx, -w, -leg} },
      display_seat = {w + 0.03, w + 0.03, 0.02} },
    { name = "floor", kind = "obstacle", shape = "plane", normal = {0, 0, 1}, offset = 0,
      material = "floor" },
  },
  contacts = {
    { name = "chair_floor", materials = {"wood", "floor"}, resolver = "complementarity" },
  },
}
