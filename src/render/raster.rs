//! Filling triangles with a depth buffer, and the overlays: lines and dots without depth.
//!
//! Vertices are snapped to 1/16 of a pixel and edges evaluated in integers, so that two
//! triangles sharing an edge agree exactly on which pixels it splits between them (with the
//! top-left rule for the pixel centres on it): no cracks, nothing drawn twice.

use super::camera::{cross, dot};

/// Sub-pixel steps per pixel.
const SUB: f32 = 16.0;
const HALF: i64 = 8;
/// Screen coordinates are clamped to this many pixels either side before snapping, so that the
/// edge products stay far inside i64. The camera frames every vertex inside the image, so only
/// a caller's extreme bone matrices could reach it.
const CLAMP: f32 = 1.0e6;

/// Light that reaches faces turned away from it.
pub const AMBIENT: f32 = 0.3;
/// The colour of back faces (before shading): a dull red that no front face is tinted with.
pub const BACK_FACE: [f32; 3] = [0.75, 0.18, 0.24];
/// Wireframe edges.
pub const WIRE: [u8; 4] = [16, 16, 16, 255];
/// Bones: the lines from a joint to its parent's, and the joints.
pub const BONE_LINE: [u8; 4] = [255, 208, 32, 255];
pub const JOINT: [u8; 4] = [255, 64, 64, 255];

/// A colour and depth buffer, `width * height` samples.
pub struct Target {
    pub width: usize,
    pub height: usize,
    pub rgba: Vec<u8>,
    pub depth: Vec<f32>,
    /// Pixels the triangles' boxes may still cover: a picture costs at most this much, however
    /// many triangles a file gives and however large they are.
    pub budget: u64,
    /// A triangle found the budget spent: it and the rest were not drawn.
    pub over_budget: bool,
}

/// How many times each pixel of a picture the triangles' boxes may cover in all: real models
/// cover their pixels a few times over.
pub const PIXEL_VISITS: u64 = 256;
/// And pixels each triangle may cover besides, so that a small picture of a dense model draws.
pub const TRIANGLE_VISITS: u64 = 64;

impl Target {
    pub fn new(width: usize, height: usize, background: [u8; 4]) -> Target {
        let n = width * height;
        let mut rgba = Vec::with_capacity(n * 4);
        for _ in 0..n {
            rgba.extend_from_slice(&background);
        }
        Target {
            width,
            height,
            rgba,
            depth: vec![f32::NEG_INFINITY; n],
            budget: (n as u64).saturating_mul(PIXEL_VISITS),
            over_budget: false,
        }
    }

    fn put(&mut self, x: i64, y: i64, rgba: [u8; 4]) {
        if x >= 0 && y >= 0 && (x as usize) < self.width && (y as usize) < self.height {
            let at = (y as usize * self.width + x as usize) * 4;
            self.rgba[at..at + 4].copy_from_slice(&rgba);
        }
    }
}

/// An RGBA8 texture, sampled nearest with wrap.
pub struct Texture<'a> {
    pub width: usize,
    pub height: usize,
    pub rgba: &'a [u8],
    /// Texture coordinates' v runs up the image (DMF's `flip_y`) rather than down.
    pub flip_v: bool,
}

impl Texture<'_> {
    // Not inlined: inlined, the optimiser hoists `width as f32` (a branch on the sign of a
    // usize) out of the pixel loop and above the check that the mesh has a texture at all,
    // where the fields are uninitialised; valgrind reports that branch. The result was never
    // used, but a clean valgrind run is worth one call a textured pixel.
    #[inline(never)]
    fn sample(&self, uv: [f32; 2]) -> [f32; 4] {
        let wrap = |t: f32, n: usize| -> usize {
            let t = if t.is_finite() { t - t.floor() } else { 0.0 };
            ((t * n as f32) as usize).min(n - 1)
        };
        let v = if self.flip_v { 1.0 - uv[1] } else { uv[1] };
        let (x, y) = (wrap(uv[0], self.width), wrap(v, self.height));
        let at = (y * self.width + x) * 4;
        match self.rgba.get(at..at + 4) {
            Some(t) => [t[0], t[1], t[2], t[3]].map(|c| c as f32 / 255.0),
            None => [1.0; 4],
        }
    }
}

/// One skinned mesh, ready to draw.
pub struct MeshDraw<'a> {
    /// Pixel x, pixel y, depth (larger nearer) per vertex.
    pub screen: &'a [[f32; 3]],
    /// Model-space skinned positions and normals per vertex.
    pub positions: &'a [[f32; 3]],
    pub normals: &'a [[f32; 3]],
    pub indices: &'a [u32],
    pub colors: Option<&'a [[u8; 4]]>,
    pub texcoords: Option<&'a [[f32; 2]]>,
    pub texture: Option<Texture<'a>>,
}

/// How triangles are lit and which way they face.
pub struct Shading {
    /// Model-space direction toward the viewer (and the light).
    pub toward: [f32; 3],
    /// The model's frame is left-handed: a front face winds the other way on screen.
    pub mirrored: bool,
    /// Wireframe edge half-width in pixels of this target (0 = none).
    pub wire: f32,
}

fn snap(v: f32) -> i64 {
    (v.clamp(-CLAMP, CLAMP) * SUB).round() as i64
}

/// Twice the signed area of (a, b, p) in sub-pixel units, y down: positive when p lies
/// clockwise on screen from the edge a -> b.
fn edge(a: [i64; 2], b: [i64; 2], p: [i64; 2]) -> i64 {
    (b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0])
}

/// For a triangle wound clockwise on screen (positive area): the edges whose pixel centres
/// belong to it are its top edges (horizontal, the triangle below) and left edges (going up).
fn top_left(a: [i64; 2], b: [i64; 2]) -> bool {
    let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
    dy < 0 || (dy == 0 && dx > 0)
}

fn to_byte(c: f32) -> u8 {
    // NaN becomes 0 through the saturating cast.
    (c * 255.0 + 0.5).clamp(0.0, 255.0) as u8
}

pub fn draw_mesh(target: &mut Target, mesh: &MeshDraw, shading: &Shading) {
    let vertex_count = mesh.screen.len();
    for tri in mesh.indices.chunks_exact(3) {
        let mut idx = [tri[0] as usize, tri[1] as usize, tri[2] as usize];
        if idx.iter().any(|&i| i >= vertex_count) {
            continue;
        }
        if idx
            .iter()
            .any(|&i| !mesh.screen[i].iter().all(|v| v.is_finite()))
        {
            continue;
        }
        let mut s = idx.map(|i| {
            let p = mesh.screen[i];
            [snap(p[0]), snap(p[1])]
        });
        let area = edge(s[0], s[1], s[2]);
        if area == 0 {
            continue;
        }
        // Counter-clockwise on screen is toward the viewer in a right-handed frame.
        let front = (area < 0) != shading.mirrored;
        if area < 0 {
            idx.swap(1, 2);
            s.swap(1, 2);
        }
        let area = area.abs();
        fill(target, mesh, shading, idx, s, area, front);
    }
}

#[allow(clippy::too_many_arguments)]
fn fill(
    target: &mut Target,
    mesh: &MeshDraw,
    shading: &Shading,
    idx: [usize; 3],
    s: [[i64; 2]; 3],
    area: i64,
    front: bool,
) {
    let (w, h) = (target.width as i64, target.height as i64);
    let min_x = s.iter().map(|p| p[0]).min().unwrap_or(0);
    let max_x = s.iter().map(|p| p[0]).max().unwrap_or(0);
    let min_y = s.iter().map(|p| p[1]).min().unwrap_or(0);
    let max_y = s.iter().map(|p| p[1]).max().unwrap_or(0);
    // Pixels whose centres (16 i + 8) can lie inside.
    let x0 = (min_x - HALF).div_euclid(16).max(0);
    let x1 = (max_x - HALF).div_euclid(16).min(w - 1);
    let y0 = (min_y - HALF).div_euclid(16).max(0);
    let y1 = (max_y - HALF).div_euclid(16).min(h - 1);
    if x0 > x1 || y0 > y1 {
        return;
    }
    let cost = ((x1 - x0 + 1) as u64).saturating_mul((y1 - y0 + 1) as u64);
    if target.over_budget || cost > target.budget {
        target.over_budget = true;
        return;
    }
    target.budget -= cost;
    // Edge k is the one opposite vertex k; its weight is vertex k's barycentric coordinate.
    let edges = [(s[1], s[2]), (s[2], s[0]), (s[0], s[1])];
    let bias = edges.map(|(a, b)| if top_left(a, b) { 0 } else { -1 });
    let lengths = edges.map(|(a, b)| {
        let (dx, dy) = ((b[0] - a[0]) as f64, (b[1] - a[1]) as f64);
        (dx * dx + dy * dy).sqrt()
    });
    let inv_area = 1.0 / area as f64;
    let z = idx.map(|i| mesh.screen[i][2]);
    let n = idx.map(|i| mesh.normals.get(i).copied().unwrap_or([0.0; 3]));
    let colors = mesh.colors.and_then(|c| {
        let [a, b, d] = idx.map(|i| c.get(i).copied());
        Some([a?, b?, d?].map(|c| c.map(|v| v as f32 / 255.0)))
    });
    let uvs = mesh.texcoords.and_then(|t| {
        let [a, b, d] = idx.map(|i| t.get(i).copied());
        Some([a?, b?, d?])
    });
    // The face's own normal, for where the vertex normals cancel out: toward the viewer for a
    // front face, so that either kind is lit from its visible side.
    let p = idx.map(|i| mesh.positions.get(i).copied().unwrap_or([0.0; 3]));
    let sub = |a: [f32; 3], b: [f32; 3]| [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
    let face = cross(sub(p[1], p[0]), sub(p[2], p[0]));
    let face_light = {
        let len = dot(face, face).sqrt();
        if len > 0.0 && len.is_finite() {
            (dot(face, shading.toward) / len).abs()
        } else {
            1.0
        }
    };
    for y in y0..=y1 {
        for x in x0..=x1 {
            let pc = [x * 16 + HALF, y * 16 + HALF];
            let e = edges.map(|(a, b)| edge(a, b, pc));
            if e[0] + bias[0] < 0 || e[1] + bias[1] < 0 || e[2] + bias[2] < 0 {
                continue;
            }
            let l = e.map(|v| (v as f64 * inv_area) as f32);
            let depth = l[0] * z[0] + l[1] * z[1] + l[2] * z[2];
            let at = (y * w + x) as usize;
            // Nearer only (a NaN depth is never drawn); ties keep what was drawn first.
            if depth.partial_cmp(&target.depth[at]) != Some(std::cmp::Ordering::Greater) {
                continue;
            }
            target.depth[at] = depth;
            let rgba = if shading.wire > 0.0
                && (0..3).any(|k| (e[k] as f64 / lengths[k]) < (shading.wire * SUB) as f64)
            {
                WIRE
            } else {
                let lerp3 = |v: [[f32; 3]; 3]| -> [f32; 3] {
                    [0, 1, 2].map(|c| l[0] * v[0][c] + l[1] * v[1][c] + l[2] * v[2][c])
                };
                let normal = lerp3(n);
                let len = dot(normal, normal).sqrt();
                // A front face whose normal points away gets the ambient light alone (its
                // normals are wrong); a back face is lit from whichever side it shows.
                let lambert = if len > 0.0 && len.is_finite() {
                    let d = dot(normal, shading.toward) / len;
                    if front { d.max(0.0) } else { d.abs() }
                } else {
                    face_light
                };
                let light = AMBIENT + (1.0 - AMBIENT) * lambert.min(1.0);
                let mut c = if front { [1.0f32; 3] } else { BACK_FACE };
                if front {
                    if let Some(vc) = colors {
                        let v =
                            [0, 1, 2].map(|k| l[0] * vc[0][k] + l[1] * vc[1][k] + l[2] * vc[2][k]);
                        c = [c[0] * v[0], c[1] * v[1], c[2] * v[2]];
                    }
                    if let (Some(t), Some(uv)) = (&mesh.texture, uvs) {
                        let at =
                            [0, 1].map(|k| l[0] * uv[0][k] + l[1] * uv[1][k] + l[2] * uv[2][k]);
                        let texel = t.sample(at);
                        c = [c[0] * texel[0], c[1] * texel[1], c[2] * texel[2]];
                    }
                }
                [
                    to_byte(c[0] * light),
                    to_byte(c[1] * light),
                    to_byte(c[2] * light),
                    255,
                ]
            };
            target.rgba[at * 4..at * 4 + 4].copy_from_slice(&rgba);
        }
    }
}

/// A line `thickness` pixels wide from `a` to `b` (pixel coordinates), clipped to the target.
pub fn draw_line(target: &mut Target, a: [f32; 2], b: [f32; 2], thickness: u32, rgba: [u8; 4]) {
    if !(a.iter().chain(&b).all(|v| v.is_finite())) {
        return;
    }
    // Liang-Barsky against the target grown by the thickness, so that the walk below never
    // steps through more than the image.
    let pad = thickness as f64;
    let (x0, y0) = (a[0] as f64, a[1] as f64);
    let (dx, dy) = (b[0] as f64 - x0, b[1] as f64 - y0);
    let (mut t0, mut t1) = (0.0f64, 1.0f64);
    let bounds = [
        (-dx, x0 + pad),
        (dx, target.width as f64 + pad - x0),
        (-dy, y0 + pad),
        (dy, target.height as f64 + pad - y0),
    ];
    for (p, q) in bounds {
        if p == 0.0 {
            if q < 0.0 {
                return;
            }
        } else {
            let r = q / p;
            if p < 0.0 {
                t0 = t0.max(r);
            } else {
                t1 = t1.min(r);
            }
        }
    }
    if t0 > t1 {
        return;
    }
    let (sx, sy) = (x0 + t0 * dx, y0 + t0 * dy);
    let (ex, ey) = (x0 + t1 * dx, y0 + t1 * dy);
    let steps = (ex - sx).abs().max((ey - sy).abs()).ceil().max(1.0) as i64;
    let half = (thickness as i64 - 1) / 2;
    for i in 0..=steps {
        let t = i as f64 / steps as f64;
        let x = (sx + t * (ex - sx)).floor() as i64;
        let y = (sy + t * (ey - sy)).floor() as i64;
        for oy in 0..thickness as i64 {
            for ox in 0..thickness as i64 {
                target.put(x - half + ox, y - half + oy, rgba);
            }
        }
    }
}

/// A filled disc of `radius` pixels centred at `c`.
pub fn draw_dot(target: &mut Target, c: [f32; 2], radius: f32, rgba: [u8; 4]) {
    if !(c[0].is_finite() && c[1].is_finite()) {
        return;
    }
    let r = radius.max(0.5);
    let (cx, cy) = (c[0].clamp(-CLAMP, CLAMP), c[1].clamp(-CLAMP, CLAMP));
    let x0 = (cx - r).floor() as i64;
    let x1 = (cx + r).ceil() as i64;
    let y0 = (cy - r).floor() as i64;
    let y1 = (cy + r).ceil() as i64;
    for y in y0.max(0)..=y1.min(target.height as i64 - 1) {
        for x in x0.max(0)..=x1.min(target.width as i64 - 1) {
            let (px, py) = (x as f32 + 0.5 - cx, y as f32 + 0.5 - cy);
            if px * px + py * py <= r * r {
                target.put(x, y, rgba);
            }
        }
    }
}

/// Averages each `factor` x `factor` block of samples into one pixel.
pub fn downsample(target: &Target, factor: usize, out: &mut [u8]) {
    let (w, h) = (target.width / factor, target.height / factor);
    let n = (factor * factor) as u32;
    for y in 0..h {
        for x in 0..w {
            let mut sum = [0u32; 4];
            for sy in 0..factor {
                for sx in 0..factor {
                    let at = ((y * factor + sy) * target.width + x * factor + sx) * 4;
                    for (s, v) in sum.iter_mut().zip(&target.rgba[at..at + 4]) {
                        *s += *v as u32;
                    }
                }
            }
            let o = (y * w + x) * 4;
            for (d, s) in out[o..o + 4].iter_mut().zip(sum) {
                *d = ((s + n / 2) / n) as u8;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn coverage(target: &Target) -> Vec<bool> {
        target.depth.iter().map(|d| d.is_finite()).collect()
    }

    fn square(target: &mut Target, lo: f32, hi: f32) {
        let screen = [[lo, lo, 0.0], [hi, lo, 0.0], [hi, hi, 0.0], [lo, hi, 0.0]];
        let normals = [[0.0, 0.0, 1.0]; 4];
        let indices = [0, 2, 1, 0, 3, 2];
        let mesh = MeshDraw {
            screen: &screen,
            positions: &screen,
            normals: &normals,
            indices: &indices,
            colors: None,
            texcoords: None,
            texture: None,
        };
        let shading = Shading {
            toward: [0.0, 0.0, 1.0],
            mirrored: false,
            wire: 0.0,
        };
        draw_mesh(target, &mesh, &shading);
    }

    #[test]
    fn pixel_centres_on_edges_follow_the_top_left_rule() {
        let mut t = Target::new(8, 8, [0, 0, 0, 255]);
        square(&mut t, 0.5, 4.5);
        let cov = coverage(&t);
        for y in 0..8 {
            for x in 0..8 {
                let want = x < 4 && y < 4;
                assert_eq!(cov[y * 8 + x], want, "pixel {x},{y}");
            }
        }
    }

    #[test]
    fn shared_diagonal_is_covered_once() {
        // Each triangle of a square alone; their union is the square, their overlap empty.
        let screen = [
            [0.3, 0.7, 0.0],
            [7.1, 0.2, 0.0],
            [6.6, 7.3, 0.0],
            [0.1, 6.9, 0.0],
        ];
        let normals = [[0.0, 0.0, 1.0]; 4];
        let shading = Shading {
            toward: [0.0, 0.0, 1.0],
            mirrored: false,
            wire: 0.0,
        };
        let mut counts = [0u32; 64];
        for tri in [[0u32, 1, 2], [0, 2, 3]] {
            let mut t = Target::new(8, 8, [0, 0, 0, 255]);
            let mesh = MeshDraw {
                screen: &screen,
                positions: &screen,
                normals: &normals,
                indices: &tri,
                colors: None,
                texcoords: None,
                texture: None,
            };
            draw_mesh(&mut t, &mesh, &shading);
            for (c, covered) in counts.iter_mut().zip(coverage(&t)) {
                *c += covered as u32;
            }
        }
        assert!(counts.iter().all(|&c| c <= 1), "{counts:?}");
        let mut whole = Target::new(8, 8, [0, 0, 0, 255]);
        let mesh = MeshDraw {
            screen: &screen,
            positions: &screen,
            normals: &normals,
            indices: &[0, 1, 2, 0, 2, 3],
            colors: None,
            texcoords: None,
            texture: None,
        };
        draw_mesh(&mut whole, &mesh, &shading);
        let union: Vec<bool> = counts.iter().map(|&c| c == 1).collect();
        assert_eq!(union, coverage(&whole));
    }
}
