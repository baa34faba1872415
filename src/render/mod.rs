//! A deterministic software rasteriser: a model skinned at a pose, drawn orthographically with
//! a depth buffer, Lambert shading, vertex colours and textures, and optional wireframe and
//! skeleton overlays; and contact sheets of several poses, labelled in a built-in font.
//!
//! The same input gives the same bytes on every machine: skinning uses the portable kernel,
//! edges are evaluated in integers, and the view's angles come from a series of our own rather
//! than the platform's `sin`. See `docs/render.md` for the camera rule.

mod camera;
mod font;
mod raster;

pub use camera::{Camera, MARGIN, model_axes, sin_cos_degrees, view_angles};
pub use font::{GLYPH_ADVANCE, GLYPH_HEIGHT, draw_text, glyph};
pub use raster::{AMBIENT, BACK_FACE, BONE_LINE, JOINT, WIRE};

use crate::error::{Error, Result};
use crate::math::Mat3x4;
use crate::model::Model;
use crate::skin::{Kernel, Strided};
use raster::{MeshDraw, Shading, Target};

/// The largest width or height rendered, in pixels.
pub const MAX_SIDE: u32 = 16384;
/// The most pixels one image (a render, or a whole sheet) may have, and the most samples one
/// render may draw (4 per pixel with antialiasing): 2^26, a 256 MiB RGBA image.
pub const MAX_PIXELS: u64 = 1 << 26;
/// Supersampling factor per side with [`RenderOptions::antialias`].
pub const ANTIALIAS_FACTOR: u32 = 2;

/// An RGBA8 image, rows top to bottom.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Image {
    pub width: u32,
    pub height: u32,
    pub rgba: Vec<u8>,
}

impl Image {
    /// The image as a mesh's texture.
    pub fn texture(&self) -> TextureView<'_> {
        TextureView {
            width: self.width,
            height: self.height,
            rgba: &self.rgba,
        }
    }
}

/// A mesh's texture: `width * height` RGBA8 pixels, rows top to bottom, borrowed, so that the
/// meshes that share an image share its pixels (a texture of a size other than its pixels is
/// not drawn).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TextureView<'a> {
    pub width: u32,
    pub height: u32,
    pub rgba: &'a [u8],
}

/// Decoded images and which one each mesh is drawn with ([`decode_textures`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MeshTextures {
    /// Each image once, however many meshes use it; `None` where it did not decode.
    pub images: Vec<Option<Image>>,
    /// Per mesh: its image, by index into `images`.
    pub mesh_images: Vec<Option<usize>>,
}

impl MeshTextures {
    /// Per mesh, its texture, as [`render`] takes them.
    pub fn views(&self) -> Vec<Option<TextureView<'_>>> {
        (self.mesh_images.iter())
            .map(|i| self.images.get((*i)?)?.as_ref().map(Image::texture))
            .collect()
    }
}

/// Where the camera looks from (see [`view_angles`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum View {
    Front,
    Side,
    Top,
    ThreeQuarter,
}

#[derive(Clone, Debug, PartialEq)]
pub struct RenderOptions {
    pub width: u32,
    pub height: u32,
    pub view: View,
    /// Overrides the view's yaw (degrees, from the front toward the model's right) when Some
    /// and finite.
    pub yaw_degrees: Option<f32>,
    /// Overrides the view's pitch (degrees, upward) when Some and finite.
    pub pitch_degrees: Option<f32>,
    pub background: [u8; 4],
    /// Triangle edges drawn over the shaded mesh (hidden ones stay hidden).
    pub wireframe: bool,
    /// The skeleton over the mesh: joints as dots, lines to parents, no depth test.
    pub bones: bool,
    /// 2x2 supersampling, box-filtered down.
    pub antialias: bool,
}

impl Default for RenderOptions {
    fn default() -> RenderOptions {
        RenderOptions {
            width: 256,
            height: 256,
            view: View::ThreeQuarter,
            yaw_degrees: None,
            pitch_degrees: None,
            background: [48, 48, 48, 255],
            wireframe: false,
            bones: false,
            antialias: false,
        }
    }
}

/// One pose of a contact sheet and its caption.
#[derive(Clone, Debug, Default)]
pub struct SheetCell {
    pub poses: Vec<Mat3x4>,
    pub label: String,
}

#[derive(Clone, Debug, Default)]
pub struct SheetRow {
    pub cells: Vec<SheetCell>,
}

/// Every mesh skinned at one pose with ossa's portable kernel: model-space positions and
/// normals (not normalised), one list per mesh.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Skinned {
    pub positions: Vec<Vec<[f32; 3]>>,
    pub normals: Vec<Vec<[f32; 3]>>,
}

impl Skinned {
    /// Every skinned position of every mesh.
    pub fn points(&self) -> impl Iterator<Item = [f32; 3]> + '_ {
        self.positions.iter().flatten().copied()
    }
}

/// Skins every mesh at `poses` (model-space, one per bone) with the portable kernel, whose
/// results do not depend on the CPU. Poses with an element that is not finite or beyond 1e9
/// are an invalid argument, as the C API's are.
pub fn skin(model: &Model, poses: &[Mat3x4]) -> Result<Skinned> {
    // Refused whatever the meshes hold, as skinning refuses a mesh with vertices: an empty
    // mesh must not make such a model drawable.
    if model.unbound().is_some() {
        return Err(Error::invalid_argument(
            "the meshes wait for a skeleton: bind them to one before drawing",
        ));
    }
    check_poses(model, poses)?;
    let mut out = Skinned::default();
    for (i, mesh) in model.meshes().iter().enumerate() {
        let n = mesh.vertex_count();
        let mut positions = vec![0.0f32; n * 3];
        let mut normals = vec![0.0f32; n * 3];
        if n > 0 {
            let mut target = Strided::new(&mut positions, 3)?.with_normals(&mut normals, 3)?;
            model.skin_mesh_with(Kernel::Portable, i, poses, 0, n, 0, &mut target)?;
        }
        let triples = |v: Vec<f32>| v.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect();
        out.positions.push(triples(positions));
        out.normals.push(triples(normals));
    }
    Ok(out)
}

fn check_poses(model: &Model, poses: &[Mat3x4]) -> Result<()> {
    if poses.len() != model.bones().len() {
        return Err(Error::invalid_argument(format!(
            "{} bone matrices given, the model has {} bones",
            poses.len(),
            model.bones().len()
        )));
    }
    if let Some((b, v)) = poses
        .iter()
        .enumerate()
        .find_map(|(b, m)| m.first_out_of_range().map(|v| (b, v)))
    {
        return Err(Error::invalid_argument(format!(
            "bone matrix {b} holds {v:e}, which is not finite or beyond 1e9"
        )));
    }
    Ok(())
}

/// What the camera frames for one pose: the skinned vertices, or the joints when the model has
/// no vertices (a skeleton file) and the skeleton is drawn.
fn framed_points<'a>(
    skinned: &'a Skinned,
    poses: &'a [Mat3x4],
    bones: bool,
) -> Box<dyn Iterator<Item = [f32; 3]> + 'a> {
    if skinned.points().next().is_none() && bones {
        Box::new(poses.iter().map(|m| m.translation()))
    } else {
        Box::new(skinned.points())
    }
}

/// Checks a size against the limits: zero is an invalid argument, beyond [`MAX_SIDE`] or
/// [`MAX_PIXELS`] (counting supersamples) a limit.
fn check_size(width: u32, height: u32, antialias: bool) -> Result<()> {
    if width == 0 || height == 0 {
        return Err(Error::invalid_argument(format!(
            "a {width}x{height} image has no pixels"
        )));
    }
    let factor = if antialias {
        ANTIALIAS_FACTOR as u64
    } else {
        1
    };
    let samples = width as u64 * height as u64 * factor * factor;
    if width > MAX_SIDE || height > MAX_SIDE || samples > MAX_PIXELS {
        return Err(Error::limit(format!(
            "a {width}x{height} image{} is beyond the limit of {MAX_SIDE} pixels a side and \
             {MAX_PIXELS} samples",
            if antialias { " with antialiasing" } else { "" }
        )));
    }
    Ok(())
}

/// The camera [`render`] uses for `poses`: oriented by `options`, framing the skinned vertices.
pub fn frame(model: &Model, poses: &[Mat3x4], options: &RenderOptions) -> Result<Camera> {
    Ok(framing(model, &skin(model, poses)?, poses, options))
}

/// The camera for skinned vertices already made.
fn framing(model: &Model, skinned: &Skinned, poses: &[Mat3x4], options: &RenderOptions) -> Camera {
    let mut camera = Camera::oriented(
        model,
        options.view,
        options.yaw_degrees,
        options.pitch_degrees,
    );
    camera.fit(
        framed_points(skinned, poses, options.bones),
        options.width,
        options.height,
    );
    camera
}

/// Renders `model` at `poses` (model-space bone matrices, one per bone, as
/// [`Model::pose_frames`] writes them) into `out`, `width * height * 4` bytes of RGBA8, rows
/// top to bottom. `textures`: per mesh, `None` = untextured; may be shorter than the mesh list.
/// The camera frames the bounds of this pose.
pub fn render(
    model: &Model,
    poses: &[Mat3x4],
    textures: &[Option<TextureView<'_>>],
    options: &RenderOptions,
    out: &mut [u8],
) -> Result<()> {
    check_size(options.width, options.height, options.antialias)?;
    let want = options.width as usize * options.height as usize * 4;
    if out.len() != want {
        return Err(Error::invalid_argument(format!(
            "the output holds {} bytes, a {}x{} image takes {want}",
            out.len(),
            options.width,
            options.height
        )));
    }
    let skinned = skin(model, poses)?;
    let camera = framing(model, &skinned, poses, options);
    draw(model, poses, &skinned, textures, options, &camera, out)
}

/// The skeleton over everything: a line from each joint to its parent's, a dot on each joint.
fn draw_bones(model: &Model, poses: &[Mat3x4], camera: &Camera, factor: u32, target: &mut Target) {
    let joints: Vec<[f32; 3]> = poses
        .iter()
        .map(|m| camera.project(m.translation()))
        .collect();
    for (b, bone) in model.bones().iter().enumerate() {
        if let (Some(j), Some(p)) = (
            joints.get(b),
            usize::try_from(bone.parent)
                .ok()
                .and_then(|p| joints.get(p)),
        ) {
            raster::draw_line(target, [j[0], j[1]], [p[0], p[1]], factor, BONE_LINE);
        }
    }
    for j in &joints {
        raster::draw_dot(target, [j[0], j[1]], 2.0 * factor as f32, JOINT);
    }
}

/// Draws one pose, already skinned and checked, with `camera` into `out` (the camera's size).
/// `Limit` when the triangles' boxes would cover more pixels than
/// [`raster::PIXEL_VISITS`] times the picture's: a file of many large triangles costs a bounded
/// time to draw, not one proportional to triangles times pixels.
fn draw(
    model: &Model,
    poses: &[Mat3x4],
    skinned: &Skinned,
    textures: &[Option<TextureView<'_>>],
    options: &RenderOptions,
    camera: &Camera,
    out: &mut [u8],
) -> Result<()> {
    let factor = if options.antialias {
        ANTIALIAS_FACTOR
    } else {
        1
    };
    let camera = camera.scaled(factor);
    let mut target = Target::new(
        camera.width as usize,
        camera.height as usize,
        options.background,
    );
    let shading = Shading {
        toward: camera.toward,
        mirrored: camera.mirrored,
        wire: if options.wireframe {
            0.6 * factor as f32
        } else {
            0.0
        },
    };
    let triangles: usize = model.meshes().iter().map(|m| m.triangle_count()).sum();
    target.budget =
        (target.budget).saturating_add((triangles as u64).saturating_mul(raster::TRIANGLE_VISITS));
    for (i, mesh) in model.meshes().iter().enumerate() {
        let (Some(positions), Some(normals)) = (skinned.positions.get(i), skinned.normals.get(i))
        else {
            continue;
        };
        let screen: Vec<[f32; 3]> = positions.iter().map(|&p| camera.project(p)).collect();
        let texture = textures
            .get(i)
            .and_then(|t| t.as_ref())
            .filter(|t| {
                t.width > 0
                    && t.height > 0
                    && t.rgba.len() as u64 == t.width as u64 * t.height as u64 * 4
            })
            .map(|t| raster::Texture {
                width: t.width as usize,
                height: t.height as usize,
                rgba: t.rgba,
                flip_v: flips_v(model, i),
            });
        raster::draw_mesh(
            &mut target,
            &MeshDraw {
                screen: &screen,
                positions,
                normals,
                indices: mesh.indices(),
                colors: mesh.colors(),
                texcoords: mesh.texcoords(),
                texture,
            },
            &shading,
        );
        if target.over_budget {
            let pixels = target.width as u64 * target.height as u64;
            return Err(Error::limit(format!(
                "mesh {i}: the triangles cover more than {} times the picture's {pixels} pixels \
                 (and {} a triangle); not drawn",
                raster::PIXEL_VISITS,
                raster::TRIANGLE_VISITS
            )));
        }
    }
    if options.bones {
        draw_bones(model, poses, &camera, factor, &mut target);
    }
    if factor == 1 {
        out.copy_from_slice(&target.rgba);
    } else {
        raster::downsample(&target, factor as usize, out);
    }
    Ok(())
}

/// DMF textures marked `flip_y` have v running up the image; every other format's run down.
fn flips_v(model: &Model, mesh: usize) -> bool {
    let texture = model
        .meshes()
        .get(mesh)
        .and_then(|m| m.material())
        .and_then(|m| model.materials().get(m as usize))
        .and_then(|m| m.texture)
        .and_then(|t| model.textures().get(t as usize));
    texture.is_some_and(|t| t.flip_y != 0)
}

/// A grid with one row per [`SheetRow`], each cell `cell.width` x `cell.height`, rendered with
/// `cell`'s options and labelled bottom-left in the built-in font. One camera frames every
/// cell's pose, so motion shows. Rows with fewer cells than the longest leave background.
pub fn render_sheet(
    model: &Model,
    rows: &[SheetRow],
    textures: &[Option<TextureView<'_>>],
    cell: &RenderOptions,
) -> Result<Image> {
    check_size(cell.width, cell.height, cell.antialias)?;
    let columns = rows.iter().map(|r| r.cells.len()).max().unwrap_or(0);
    let sheet_w = cell.width as u64 * columns as u64;
    let sheet_h = cell.height as u64 * rows.len() as u64;
    if sheet_w == 0 || sheet_h == 0 {
        return Err(Error::invalid_argument(
            "a contact sheet needs at least one cell",
        ));
    }
    if sheet_w > u32::MAX as u64 || sheet_h > u32::MAX as u64 || sheet_w * sheet_h > MAX_PIXELS {
        return Err(Error::limit(format!(
            "a {sheet_w}x{sheet_h} sheet is beyond the limit of {MAX_PIXELS} pixels"
        )));
    }
    // Each cell is skinned twice, once to frame the sheet and once to draw it, so that one
    // cell's vertices are held at a time however many cells the sheet has.
    let mut camera = Camera::oriented(model, cell.view, cell.yaw_degrees, cell.pitch_degrees);
    let mut failed = None;
    let mut points = Vec::new();
    let everything = rows.iter().flat_map(|row| row.cells.iter()).flat_map(|c| {
        points.clear();
        match skin(model, &c.poses) {
            Ok(s) => points.extend(framed_points(&s, &c.poses, cell.bones)),
            Err(e) => {
                failed.get_or_insert(e);
            }
        }
        std::mem::take(&mut points)
    });
    camera.fit(everything, cell.width, cell.height);
    if let Some(e) = failed {
        return Err(e);
    }

    let (sw, sh) = (sheet_w as usize, sheet_h as usize);
    let mut sheet = Image {
        width: sheet_w as u32,
        height: sheet_h as u32,
        rgba: Vec::with_capacity(sw * sh * 4),
    };
    for _ in 0..sw * sh {
        sheet.rgba.extend_from_slice(&cell.background);
    }
    let (cw, ch) = (cell.width as usize, cell.height as usize);
    let mut pixels = vec![0u8; cw * ch * 4];
    for (r, row) in rows.iter().enumerate() {
        for (c, sc) in row.cells.iter().enumerate() {
            let s = skin(model, &sc.poses)?;
            draw(model, &sc.poses, &s, textures, cell, &camera, &mut pixels)?;
            let mut image = Image {
                width: cell.width,
                height: cell.height,
                rgba: std::mem::take(&mut pixels),
            };
            let y = cell.height as i32 - GLYPH_HEIGHT;
            draw_text(&mut image, 2, y, &sc.label, [232, 232, 232, 255]);
            for line in 0..ch {
                let from = line * cw * 4;
                let to = ((r * ch + line) * sw + c * cw) * 4;
                sheet.rgba[to..to + cw * 4].copy_from_slice(&image.rgba[from..from + cw * 4]);
            }
            pixels = image.rgba;
        }
    }
    Ok(sheet)
}

/// Decodes the images [`find_textures`](crate::textures::find_textures) found, each once, with
/// the image each mesh is drawn with (by `mesh_images`); an image that does not decode is `None`.
#[cfg(feature = "gltf")]
pub fn decode_textures(model: &Model, found: &crate::textures::ModelTextures) -> MeshTextures {
    let images = (found.images.iter())
        .map(|f| {
            let image =
                image::load_from_memory_with_format(&f.png, image::ImageFormat::Png).ok()?;
            let rgba = image.to_rgba8();
            Some(Image {
                width: rgba.width(),
                height: rgba.height(),
                rgba: rgba.into_raw(),
            })
        })
        .collect();
    let mesh_images = (0..model.meshes().len())
        .map(|m| found.mesh_images.get(m).copied().flatten())
        .collect();
    MeshTextures {
        images,
        mesh_images,
    }
}
