-- pantograph_textures: Siira's four-quadrant texture experiment (seed 004 3.6). The P2's
-- 16 cm x 10 cm workspace is split into four quadrants of different roughness, one smooth: the
-- handle slides on the device's table and feels Gaussian texture pulses (004 eqs. 3.29-3.43)
-- whose standard deviation differs per quadrant, zero while it moves slower than epsilon.
-- Rendered locally by the servo; the engine only runs a puck on a table so the scene has a
-- world to show.
--
--   issim device sim scenes/pantograph_textures.lua --hand circle:0.04,1.5
--
-- The `haptics` global below is read by `issim device` (src/haptics/scene.c); `issim run`
-- ignores it. Coordinates are the device frame (m), forces N.
local xmin, xmax, ymin, ymax = -0.06, 0.10, 0.105, 0.205   -- the default P2 workspace
local xc, yc = (xmin + xmax) / 2, (ymin + ymax) / 2
local function quadrant(x0, y0, x1, y1, sigma)
  if sigma == 0 then
    return { kind = "region", min = {x0, y0}, max = {x1, y1} }    -- smooth: the control
  end
  return { kind = "region", min = {x0, y0}, max = {x1, y1},
           texture = { sigma = {sigma, sigma}, epsilon = 0.005, diagonal = true } }
end
haptics = {
  surfaces = {
    quadrant(xmin, yc, xc, ymax, 0.0),    -- upper left: smooth
    quadrant(xc, yc, xmax, ymax, 0.15),   -- upper right: light
    quadrant(xmin, ymin, xc, yc, 0.35),   -- lower left: medium
    quadrant(xc, ymin, xmax, yc, 0.7),    -- lower right: coarse
  },
}
return {
  name = "pantograph_textures",
  description = "Four quadrants of the P2 workspace with different stochastic texture, one smooth (004 3.6)",
  universe = { gravity = {0, 0, -9.81}, integrator = "bdf", dt = 1e-3, horizon = 0.01 },
  camera = { eye = {0.3, -0.5, 0.4}, target = {0, 0, 0}, fov = 45 },
  things = {
    { name = "handle", kind = "user" },
    { name = "table", kind = "obstacle", shape = "plane", normal = {0, 0, 1}, offset = 0,
      material = "table" },
    { name = "puck", kind = "body", shape = "sphere", radius = 0.02, mass = 0.1,
      inertia = {1.6e-5, 1.6e-5, 1.6e-5}, pos = {0, 0, 0.02}, material = "puck" },
  },
  contacts = {
    { name = "puck_table", materials = {"puck", "table"}, model = "spring_damper",
      stiffness = 1e4, restitution = 0.3 },
  },
}
