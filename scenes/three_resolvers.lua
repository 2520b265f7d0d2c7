-- three_resolvers: the three kinds of contact resolution side by side (docs/architecture.md,
-- "the staged step"). Each group of bodies is an island that the resolver of its contact pair
-- advances, and all three reach every output instant together.
--
--   left   a box dropped on the floor through the complementarity resolver: it lands without
--          bouncing and rests with its contact distances >= 0 (reference solver: projected
--          Gauss-Seidel, no friction)
--   middle a sphere bouncing on a spring/damper (force law inside the integrator, r = 0.6)
--   right  a small box dropped onto a larger one: their pair is "reduced", so once the two move
--          together (slower than velocity_tolerance at the contact) they are integrated as one
--          welded block; the bottom box stands on the floor through a force law. Pull the top
--          box up (drag it, or --set top.force=0,0,10) and the pair separates when the contact
--          would have to pull.
--
-- Properties a user usually changes:
--   box_floor.resolver     complementarity | force_law (the same box through a penalty law)
--   weld.resolver          reduced | force_law
--   ball_floor.restitution r of the bouncing sphere
local function cube(m, h) return m * (2 * h) ^ 2 / 6 end
return {
  name = "three_resolvers",
  description = "Complementarity, force law and a reduced pair in one scene",
  universe = {
    gravity = {0, 0, -9.81},
    integrator = "bdf",
    dt = 1e-3,
    rtol = 1e-8,
    atol = 1e-10,
    record = "box.pos.z,ball.pos.z,top.pos.z,bottom.pos.z,universe.energy.total",
  },
  -- Each body is labelled with the resolver that moves it (display only).
  camera = { eye = {0.3, -1.3, 0.5}, target = {0.3, 0, 0.1}, fov = 45 },
  things = {
    { name = "box", kind = "body", shape = "box", half_extents = {0.05, 0.05, 0.05},
      mass = 1, inertia = {cube(1, 0.05), cube(1, 0.05), cube(1, 0.05)},
      pos = {0, 0, 0.3}, material = "box", label = "complementarity",
      color = {0.3, 0.5, 0.9} },
    { name = "ball", kind = "body", shape = "sphere", radius = 0.05, mass = 1,
      inertia = {1e-3, 1e-3, 1e-3}, pos = {0.3, 0, 0.3}, material = "ball",
      label = "force_law", color = {0.9, 0.5, 0.2} },
    { name = "bottom", kind = "body", shape = "box", half_extents = {0.05, 0.05, 0.05},
      mass = 1, inertia = {cube(1, 0.05), cube(1, 0.05), cube(1, 0.05)},
      pos = {0.6, 0, 0.0501}, material = "bottom", label = "force_law",
      color = {0.5, 0.8, 0.4} },
    { name = "top", kind = "body", shape = "box", half_extents = {0.03, 0.03, 0.03},
      mass = 0.3, inertia = {cube(0.3, 0.03), cube(0.3, 0.03), cube(0.3, 0.03)},
      pos = {0.61, 0, 0.2}, material = "top", label = "reduced (on bottom)",
      color = {0.8, 0.8, 0.3} },
    { name = "floor", kind = "obstacle", shape = "plane", normal = {0, 0, 1}, offset = 0,
      material = "floor" },
  },
  contacts = {
    { name = "box_floor", materials = {"box", "floor"}, resolver = "complementarity" },
    { name = "ball_floor", materials = {"ball", "floor"}, model = "spring_damper",
      stiffness = 1e5, restitution = 0.6 },
    { name = "ground", materials = {"bottom", "floor"}, model = "spring_damper",
      stiffness = 1e5, restitution = 0.2 },
    { name = "weld", materials = {"top", "bottom"}, resolver = "reduced",
      model = "spring_damper", stiffness = 1e5, restitution = 0.2,
      velocity_tolerance = 2e-3 },
  },
}
