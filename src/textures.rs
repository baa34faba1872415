//! The images a model's meshes are drawn with, found the way its engine finds them and handed
//! out as PNG (for the glTF export).
//!
//! Where each format's textures are, in the order tried (the model's directory is the one its
//! name gives inside the filesystem):
//!
//! - DMF: inside the model ([`Model::textures`]), through the mesh's material. Each is checked to
//!   decode as the PNG it should be and passed on unchanged.
//! - glTF: likewise, the images the loader read from the GLB, data URIs and files beside a
//!   `.gltf` (a PNG passed on, a JPEG re-encoded).
//! - The Sims (SKN, BMF, the 1998 prototype's MSH, and meshes bound to a Sims skeleton, which
//!   keep their format): the shader is the texture's name. `NAME.bmp`, `.png`, `.tga`, `.jpg`
//!   beside the model, then the same names in lower case (the game's archives mix case); then
//!   both in `Textures/` beside it (where the 1998 prototype keeps them).
//! - DPM, SKM and MM2: the shader is a game path (`models/monsters/zombie`), a file name
//!   (`zombie.tga`) or a bare name (`meat`). The engine's game root is unknowable from here, so:
//!   the shader's last component, extension stripped, with `.tga`, `.png`, `.jpg`, `.jpeg` beside
//!   the model; then in `textures/` beside it; then the shader's own path (extension stripped,
//!   the same extensions) from the root of the filesystem. MM2's own `.tex` textures are not
//!   decoded: a texture that exists only as `.tex` is left out with one warning for all of them.
//! - DPM, SKM and IQM skin variants: `MODEL_0.skin`, `MODEL_1.skin`, ... beside the model (DarkPlaces'
//!   rule, `MODEL` the model's file name with its extension), up to the first missing one and at
//!   most [`MAX_SKIN_FILES`]. Each line is `mesh,texture` or `replace mesh texture`, `mesh` being
//!   an SKM mesh's name or a DPM mesh's shader (DPM meshes have no names; DarkPlaces matches the
//!   shader); `tag_` lines are attachments, not textures, and are skipped; `//` starts a comment.
//!   A texture is found as a shader is. IQM meshes are matched by name, as DarkPlaces does.
//! - IQM skins inside the model (FTE's `FTE_SKINS`): skin `k` of each mesh is variant `skin k`,
//!   after the `.skin` files, drawn with the skin's first texture, found as a shader is.
//!
//! A texture that is missing, unreadable, undecodable or over the memory limit is a warning that
//! names the file and why, never an error: its mesh goes without. Names come from files, so a
//! name that is absolute, has `..`, a backslash or a drive letter is not followed, and every path
//! is checked again as it is read. Every byte read and every decoded pixel counts against one
//! limit; an image is refused, on what its header declares, before its pixels are allocated.

#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

use std::collections::HashMap;
use std::io::Cursor;

use image::{DynamicImage, ImageDecoder, ImageFormat, ImageReader, Limits};

use crate::error::{Error, ErrorCode};
use crate::format::{DEFAULT_MAX_BYTES, Format};
use crate::io::{FileSystem, is_contained, read_contained_at_most};
use crate::model::Model;

/// The most `.skin` files read for one model.
pub const MAX_SKIN_FILES: u32 = 64;

/// One image file, read and converted once however many meshes use it.
#[derive(Clone, Debug, PartialEq)]
pub struct FoundImage {
    /// The texture name as the model (or the `.skin` file that first used it) names it.
    pub name: String,
    /// Where it was read, relative to the filesystem; empty for a texture the model carries.
    pub path: String,
    /// A PNG file: the file itself when it was one, else its decoded pixels re-encoded.
    pub png: Vec<u8>,
    pub width: u32,
    pub height: u32,
}

/// A skin variant (one `.skin` file, or a skin the model carries): the textures it gives the
/// meshes it lists.
#[derive(Clone, Debug, PartialEq)]
pub struct Variant {
    /// The file's name without `.skin`, e.g. `xon_zombie.dpm_1`; `skin K` for a skin the model
    /// carries.
    pub name: String,
    /// The `.skin` file it was read from, beside the model; `None` for a skin the model carries.
    pub file: Option<String>,
    /// Per mesh of the model: `None` for a mesh the file does not list (it keeps its own).
    pub meshes: Vec<Option<VariantTexture>>,
}

/// The texture a variant gives one mesh.
#[derive(Clone, Debug, PartialEq)]
pub struct VariantTexture {
    /// As the `.skin` file names it; empty for `mesh,` (drawn without a texture).
    pub name: String,
    /// Index into [`ModelTextures::images`]; `None` when no usable image was found.
    pub image: Option<usize>,
}

/// What [`find_textures`] found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ModelTextures {
    pub images: Vec<FoundImage>,
    /// Per mesh of the model: its own texture, as an index into `images`.
    pub mesh_images: Vec<Option<usize>>,
    pub variants: Vec<Variant>,
    /// Every texture that could not be had and why, naming the files.
    pub warnings: Vec<String>,
}

/// Finds the images `model`'s meshes are drawn with, and its `.skin` variants.
///
/// `files`: the filesystem the model was read from and its path there (`dir/file.dpm`), so that
/// files beside it can be found; without it only textures the model carries are found.
/// `max_bytes`: the most bytes read and decoded in all (file sizes plus decoded RGBA sizes); 0
/// is [`DEFAULT_MAX_BYTES`], as for loading.
pub fn find_textures(
    model: &Model,
    files: Option<(&dyn FileSystem, &str)>,
    max_bytes: u64,
) -> ModelTextures {
    let max_bytes = if max_bytes == 0 {
        DEFAULT_MAX_BYTES
    } else {
        max_bytes
    };
    let mut finder = Finder::new(files, max_bytes);
    let search = Search::of(model.format());
    let mesh_images = match search {
        Search::Embedded => finder.embedded(model),
        _ => finder.by_shader(model, search),
    };
    let mut variants = if matches!(model.format(), Format::Dpm | Format::Skm | Format::Iqm) {
        finder.skin_variants(model)
    } else {
        Vec::new()
    };
    variants.extend(finder.embedded_skins(model));
    finder.finish(mesh_images, variants)
}

/// [`find_textures`] beside the OS file `path`, reading inside `base_dir` (default: the file's
/// directory) as loading reads sidecars: nothing outside it, and links only while they stay in.
/// A `path` outside `base_dir` is an invalid argument.
pub fn find_textures_beside(
    model: &Model,
    path: &std::path::Path,
    base_dir: Option<&std::path::Path>,
    max_bytes: u64,
) -> crate::Result<ModelTextures> {
    let place = crate::sidecar::os_place(path, base_dir)?;
    let name = format!("{}{}", place.dir, place.file_name);
    Ok(find_textures(model, Some((&place.fs, &name)), max_bytes))
}

/// The `.skin` files beside the OS file `path` (`MODEL_0.skin`...), read as [`find_textures`]
/// reads them but without looking for their images: each variant's textures by name alone,
/// and the lines that could not be used, as warnings. For writing them again beside a
/// converted model.
pub fn skin_files_beside(
    model: &Model,
    path: &std::path::Path,
    base_dir: Option<&std::path::Path>,
    max_bytes: u64,
) -> crate::Result<(Vec<Variant>, Vec<String>)> {
    let place = crate::sidecar::os_place(path, base_dir)?;
    let name = format!("{}{}", place.dir, place.file_name);
    let max_bytes = if max_bytes == 0 {
        DEFAULT_MAX_BYTES
    } else {
        max_bytes
    };
    let mut finder = Finder::new(Some((&place.fs, &name)), max_bytes);
    finder.names_only = true;
    let variants = finder.skin_variants(model);
    Ok((variants, finder.warnings))
}

/// How a format's textures are found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Search {
    /// In the model (DMF).
    Embedded,
    /// By name beside the model or in `Textures/` (The Sims).
    Sims,
    /// By shader path (DPM, SKM).
    Game,
    /// As `Game`, knowing of `.tex` files (Midtown Madness 2).
    Mm2,
}

impl Search {
    fn of(format: Format) -> Search {
        match format {
            Format::Dmf | Format::DmfJson => Search::Embedded,
            Format::SimsSkn
            | Format::SimsBmf
            | Format::SimsMsh
            | Format::SimsCmx
            | Format::SimsBcf => Search::Sims,
            Format::Mm2Mod | Format::Mm2Skel => Search::Mm2,
            // glTF's images are read with the model: from the GLB, data URIs and files beside it.
            Format::Glb | Format::Gltf => Search::Embedded,
            Format::Dpm | Format::Skm | Format::Skp | Format::Iqm | Format::Auto => Search::Game,
        }
    }
}

const GAME_EXTENSIONS: [&str; 4] = ["tga", "png", "jpg", "jpeg"];
const SIMS_EXTENSIONS: [&str; 4] = ["bmp", "png", "tga", "jpg"];
/// Image formats ossa decodes; the `image` features enabled are these.
const DECODED: [ImageFormat; 4] = [
    ImageFormat::Png,
    ImageFormat::Jpeg,
    ImageFormat::Tga,
    ImageFormat::Bmp,
];

/// `name` without the extension of its last component (`a.b/c.tga` → `a.b/c`); a leading dot
/// is a hidden file's name, not an extension.
fn strip_extension(name: &str) -> &str {
    let file_start = name.rfind('/').map_or(0, |i| i.saturating_add(1));
    match name.rfind('.') {
        Some(dot) if dot > file_start => name.get(..dot).unwrap_or(name),
        _ => name,
    }
}

/// `name` without an image extension the Sims lookups add themselves.
fn strip_image_extension(name: &str) -> &str {
    let stem = strip_extension(name);
    let ext = name.get(stem.len().saturating_add(1)..).unwrap_or("");
    let known = ["bmp", "png", "tga", "jpg", "jpeg"];
    if known.iter().any(|k| ext.eq_ignore_ascii_case(k)) {
        stem
    } else {
        name
    }
}

fn push_new(list: &mut Vec<String>, path: String) {
    if !list.contains(&path) {
        list.push(path);
    }
}

/// The paths tried for texture `name`, in order, with `dir` the model's directory (`""` or ending
/// in `/`; `None` when nothing beside the model can be read). `extensions` replaces the format's
/// own (MM2's `.tex` check).
fn candidates(
    search: Search,
    name: &str,
    dir: Option<&str>,
    extensions: Option<&[&str]>,
) -> Vec<String> {
    let mut out = Vec::new();
    match search {
        Search::Embedded => {}
        Search::Sims => {
            let Some(dir) = dir else { return out };
            let stem = strip_image_extension(name);
            let exts = extensions.unwrap_or(&SIMS_EXTENSIONS);
            for folder in ["", "Textures/"] {
                let given: Vec<String> =
                    exts.iter().map(|e| format!("{folder}{stem}.{e}")).collect();
                for rel in &given {
                    push_new(&mut out, format!("{dir}{rel}"));
                }
                for rel in &given {
                    push_new(&mut out, format!("{dir}{}", rel.to_lowercase()));
                }
            }
        }
        Search::Game | Search::Mm2 => {
            let exts = extensions.unwrap_or(&GAME_EXTENSIONS);
            let stem = strip_extension(name);
            let base = stem.rsplit('/').next().unwrap_or(stem);
            if base.is_empty() {
                return out;
            }
            if let Some(dir) = dir {
                for folder in ["", "textures/"] {
                    for e in exts {
                        push_new(&mut out, format!("{dir}{folder}{base}.{e}"));
                    }
                }
            }
            for e in exts {
                push_new(&mut out, format!("{stem}.{e}"));
            }
        }
    }
    out
}

/// What reading one path gave.
#[derive(Clone, Copy, Debug)]
enum Probe {
    Missing,
    /// There, but unreadable, undecodable or over the limit (and warned about).
    Unusable,
    Image(usize),
}

/// An image decoded within the limit.
struct Decoded {
    png: Vec<u8>,
    width: u32,
    height: u32,
    /// Bytes its pixels took decoded.
    pixel_bytes: u64,
}

/// Decodes `bytes` (its format from its content, else `hint`) if its header declares no more
/// than `left` bytes of pixels, and gives it as PNG: the bytes themselves when they are one.
fn decode(bytes: &[u8], hint: Option<ImageFormat>, left: u64) -> Result<Decoded, String> {
    let format = match image::guess_format(bytes) {
        Ok(f) if DECODED.contains(&f) => f,
        // Magic bytes of a format left out of the build: say so rather than misread it as TGA.
        Ok(f) => return Err(format!("is a {f:?} image, which is not decoded")),
        // TGA has no magic bytes: the extension tells.
        Err(_) => {
            hint.ok_or("is not an image in a format that is decoded (PNG, JPEG, TGA, BMP)")?
        }
    };
    let mut reader = ImageReader::with_format(Cursor::new(bytes), format);
    let mut limits = Limits::default();
    limits.max_alloc = Some(left);
    reader.limits(limits);
    let decoder = reader
        .into_decoder()
        .map_err(|e| format!("cannot be decoded as {format:?}: {e}"))?;
    let (width, height) = decoder.dimensions();
    let rgba = u64::from(width)
        .saturating_mul(u64::from(height))
        .saturating_mul(4);
    let pixel_bytes = rgba.max(decoder.total_bytes());
    if pixel_bytes > left {
        return Err(format!(
            "declares {width}x{height} pixels ({pixel_bytes} bytes decoded), more than the {left} \
             bytes the memory limit leaves; not decoded"
        ));
    }
    let image = DynamicImage::from_decoder(decoder)
        .map_err(|e| format!("cannot be decoded as {format:?}: {e}"))?;
    let png = if format == ImageFormat::Png {
        bytes.to_vec()
    } else {
        // Lossless from the decoded pixels, in their own colour type.
        let mut out = Vec::new();
        image
            .write_to(Cursor::new(&mut out), ImageFormat::Png)
            .map_err(|e| format!("cannot be re-encoded as PNG: {e}"))?;
        out
    };
    Ok(Decoded {
        png,
        width,
        height,
        pixel_bytes,
    })
}

/// An image format named by a path's extension.
fn format_of(path: &str) -> Option<ImageFormat> {
    let ext = path.rsplit('.').next()?;
    ImageFormat::from_extension(ext)
}

/// A read error as a warning about `path`, naming it once.
fn read_warning(path: &str, e: &Error) -> String {
    let text = e.to_string();
    if text.contains(path) {
        text
    } else {
        format!("{path}: {text}")
    }
}

/// One `.skin` line that gives a mesh a texture.
#[derive(Debug, PartialEq)]
struct SkinEntry {
    line: usize,
    mesh: String,
    texture: String,
}

/// The entries of a `.skin` file, and the lines that are none (1-based, with their text).
fn parse_skin(text: &str) -> (Vec<SkinEntry>, Vec<(usize, String)>) {
    let mut entries = Vec::new();
    let mut bad = Vec::new();
    for (i, raw) in text.split('\n').enumerate() {
        let line = i.saturating_add(1);
        let content = raw.split("//").next().unwrap_or("").trim();
        if content.is_empty() {
            continue;
        }
        let words: Vec<&str> = content.split_whitespace().collect();
        if words.first() == Some(&"replace") {
            if let [_, mesh, texture] = words.as_slice() {
                entries.push(SkinEntry {
                    line,
                    mesh: (*mesh).to_owned(),
                    texture: (*texture).to_owned(),
                });
            } else {
                bad.push((line, content.to_owned()));
            }
            continue;
        }
        // Attachment tags (`tag_head,`), not meshes.
        if content.starts_with("tag_") {
            continue;
        }
        match content.split_once(',') {
            Some((mesh, texture))
                if !mesh.trim().is_empty()
                    && !mesh.trim().contains(char::is_whitespace)
                    && !texture.trim().contains([',', ' ', '\t']) =>
            {
                entries.push(SkinEntry {
                    line,
                    mesh: mesh.trim().to_owned(),
                    texture: texture.trim().to_owned(),
                });
            }
            _ => bad.push((line, content.to_owned())),
        }
    }
    (entries, bad)
}

struct Finder<'a> {
    fs: Option<&'a dyn FileSystem>,
    /// The model's directory in the filesystem (`""` or ending in `/`); `None` when nothing
    /// beside the model can be read.
    dir: Option<String>,
    file_name: String,
    /// What is left of the memory limit.
    left: u64,
    images: Vec<FoundImage>,
    /// Every path read, so that none is read twice.
    by_path: HashMap<String, Probe>,
    /// Every texture name looked for, so that none is looked for (or warned about) twice.
    by_name: HashMap<String, Option<usize>>,
    /// MM2 textures that exist only as `.tex`.
    tex_only: Vec<String>,
    /// Texture names not looked for, there being no filesystem.
    unsearched: Vec<String>,
    warnings: Vec<String>,
    /// Only the names `.skin` files give: no image is looked for.
    names_only: bool,
}

impl<'a> Finder<'a> {
    fn new(files: Option<(&'a dyn FileSystem, &str)>, max_bytes: u64) -> Finder<'a> {
        let mut warnings = Vec::new();
        let (fs, dir, file_name) = match files {
            None => (None, None, String::new()),
            Some((fs, name)) => {
                let (dir, file) = match name.rfind('/') {
                    Some(i) => name.split_at(i.saturating_add(1)),
                    None => ("", name),
                };
                if is_contained(name) {
                    (Some(fs), Some(dir.to_owned()), file.to_owned())
                } else {
                    warnings.push(format!(
                        "the model's path {name:?} is not inside the filesystem (absolute, `..`, \
                         a backslash or a drive letter): nothing beside it is looked for"
                    ));
                    (Some(fs), None, String::new())
                }
            }
        };
        Finder {
            fs,
            dir,
            file_name,
            left: max_bytes,
            images: Vec::new(),
            by_path: HashMap::new(),
            by_name: HashMap::new(),
            tex_only: Vec::new(),
            unsearched: Vec::new(),
            warnings,
            names_only: false,
        }
    }

    fn finish(mut self, mesh_images: Vec<Option<usize>>, variants: Vec<Variant>) -> ModelTextures {
        if !self.unsearched.is_empty() {
            self.warnings.push(format!(
                "no filesystem to look in: textures {} not looked for",
                self.unsearched.join(", ")
            ));
        }
        if !self.tex_only.is_empty() {
            self.warnings.push(format!(
                "textures {} exist only as MM2 .tex files, which are not decoded: their meshes \
                 go without",
                self.tex_only.join(", ")
            ));
        }
        ModelTextures {
            images: self.images,
            mesh_images,
            variants,
            warnings: self.warnings,
        }
    }

    /// DMF: each mesh's material's texture, each texture checked once.
    fn embedded(&mut self, model: &Model) -> Vec<Option<usize>> {
        let mut by_texture: HashMap<u32, Option<usize>> = HashMap::new();
        let mut out = Vec::with_capacity(model.meshes().len());
        for (k, mesh) in model.meshes().iter().enumerate() {
            let Some(m) = mesh.material() else {
                out.push(None);
                continue;
            };
            let Some(material) = model.materials().get(m as usize) else {
                self.warnings.push(format!(
                    "mesh {k} {:?}: material {m} is not among the model's {}",
                    mesh.name().to_string_lossy(),
                    model.materials().len()
                ));
                out.push(None);
                continue;
            };
            let Some(t) = material.texture else {
                out.push(None);
                continue;
            };
            let found = match by_texture.get(&t) {
                Some(found) => *found,
                None => {
                    let found = self.embedded_texture(model, t);
                    by_texture.insert(t, found);
                    found
                }
            };
            out.push(found);
        }
        out
    }

    fn embedded_texture(&mut self, model: &Model, t: u32) -> Option<usize> {
        let Some(texture) = model.textures().get(t as usize) else {
            self.warnings.push(format!(
                "texture {t} is not among the model's {}",
                model.textures().len()
            ));
            return None;
        };
        let name = texture.name.to_string_lossy();
        let what = format!("texture {t} {name:?}");
        if texture.image.is_empty() {
            self.warnings.push(format!(
                "{what}: the model holds its name only (its file was not read with it)"
            ));
            return None;
        }
        let size = texture.image.len() as u64;
        if size > self.left {
            self.warnings.push(format!(
                "{what}: its image holds {size} bytes, more than the {} bytes the memory limit \
                 leaves",
                self.left
            ));
            return None;
        }
        self.left = self.left.saturating_sub(size);
        let decoded = match decode(&texture.image, Some(ImageFormat::Png), self.left) {
            Ok(d) => d,
            Err(why) => {
                self.warnings.push(format!("{what}: the image {why}"));
                return None;
            }
        };
        self.left = self.left.saturating_sub(decoded.pixel_bytes);
        // A size of 0 x 0 is one the model does not know (glTF keeps only a PNG's).
        let declared = (u32::from(texture.width), u32::from(texture.height));
        if declared != (0, 0) && (decoded.width, decoded.height) != declared {
            self.warnings.push(format!(
                "{what}: the image is {}x{}, the model says {}x{}",
                decoded.width, decoded.height, texture.width, texture.height
            ));
        }
        self.images.push(FoundImage {
            name,
            path: String::new(),
            png: decoded.png,
            width: decoded.width,
            height: decoded.height,
        });
        Some(self.images.len().saturating_sub(1))
    }

    /// Each mesh's texture by its shader.
    fn by_shader(&mut self, model: &Model, search: Search) -> Vec<Option<usize>> {
        let mut out = Vec::with_capacity(model.meshes().len());
        for (k, mesh) in model.meshes().iter().enumerate() {
            let name = mesh.shader().to_string_lossy();
            if name.is_empty() {
                out.push(None);
                continue;
            }
            // An MM2 material without a texture gives its own name as the shader: not finding
            // an image of that name is no news.
            let quiet = search == Search::Mm2 && mesh.shader() == mesh.name();
            let user = if mesh.name().is_empty() {
                format!("mesh {k}")
            } else {
                format!("mesh {k} {:?}", mesh.name().to_string_lossy())
            };
            out.push(self.lookup(&name, search, &user, quiet));
        }
        out
    }

    /// The image for texture `name`, looked for once; `user` says who asked, for warnings.
    fn lookup(&mut self, name: &str, search: Search, user: &str, quiet: bool) -> Option<usize> {
        if self.names_only {
            return None;
        }
        if let Some(found) = self.by_name.get(name) {
            return *found;
        }
        let found = self.search(name, search, user, quiet);
        self.by_name.insert(name.to_owned(), found);
        found
    }

    fn search(&mut self, name: &str, search: Search, user: &str, quiet: bool) -> Option<usize> {
        if !is_contained(name) {
            self.warnings.push(format!(
                "{user}: texture {name:?} is not looked for: absolute paths, `..`, backslashes \
                 and drive letters are not followed"
            ));
            return None;
        }
        let Some(fs) = self.fs else {
            self.unsearched.push(format!("{name:?}"));
            return None;
        };
        let tried = candidates(search, name, self.dir.as_deref(), None);
        let mut unusable = false;
        for path in &tried {
            match self.probe(fs, path, name) {
                Probe::Image(i) => return Some(i),
                Probe::Unusable => unusable = true,
                Probe::Missing => {}
            }
        }
        // The Sims ran on Windows, where a suit's `CheadE` opens `CHeadE.png`.
        if search == Search::Sims && !unusable {
            for path in &tried {
                let Some(found) = fs.find_ignoring_case(path) else {
                    continue;
                };
                match self.probe(fs, &found, name) {
                    Probe::Image(i) => return Some(i),
                    Probe::Unusable => unusable = true,
                    Probe::Missing => {}
                }
            }
        }
        if search == Search::Mm2 && !unusable {
            let tex = candidates(search, name, self.dir.as_deref(), Some(&["tex"]));
            if tex.iter().any(|p| exists(fs, p)) {
                self.tex_only.push(format!("{name:?}"));
                return None;
            }
        }
        if !quiet {
            let why = if unusable {
                "no usable image"
            } else {
                "no image found"
            };
            self.warnings.push(format!(
                "{user}: texture {name:?}: {why}; tried {}",
                tried.join(", ")
            ));
        }
        None
    }

    /// Reads and decodes the image at `path` (once), for texture `name`.
    fn probe(&mut self, fs: &dyn FileSystem, path: &str, name: &str) -> Probe {
        if let Some(p) = self.by_path.get(path) {
            return *p;
        }
        let probe = match read_contained_at_most(fs, path, self.left) {
            Err(e) if e.code() == ErrorCode::NotFound => Probe::Missing,
            Err(e) => {
                self.warnings.push(read_warning(path, &e));
                Probe::Unusable
            }
            Ok(data) => {
                let bytes = (*data).as_ref();
                self.left = self.left.saturating_sub(bytes.len() as u64);
                match decode(bytes, format_of(path), self.left) {
                    Ok(d) => {
                        self.left = self.left.saturating_sub(d.pixel_bytes);
                        self.images.push(FoundImage {
                            name: name.to_owned(),
                            path: path.to_owned(),
                            png: d.png,
                            width: d.width,
                            height: d.height,
                        });
                        Probe::Image(self.images.len().saturating_sub(1))
                    }
                    Err(why) => {
                        self.warnings.push(format!("{path}: {why}"));
                        Probe::Unusable
                    }
                }
            }
        };
        self.by_path.insert(path.to_owned(), probe);
        probe
    }

    /// The model's `.skin` files, each a variant.
    fn skin_variants(&mut self, model: &Model) -> Vec<Variant> {
        let (Some(fs), Some(dir)) = (self.fs, self.dir.clone()) else {
            return Vec::new();
        };
        if self.file_name.is_empty() {
            return Vec::new();
        }
        let mut variants = Vec::new();
        for n in 0..=MAX_SKIN_FILES {
            let name = format!("{}_{n}", self.file_name);
            let path = format!("{dir}{name}.skin");
            if n == MAX_SKIN_FILES {
                if exists(fs, &path) {
                    self.warnings.push(format!(
                        "{path}: more than {MAX_SKIN_FILES} skin files; this one and any after \
                         it are not read"
                    ));
                }
                break;
            }
            let text = match read_contained_at_most(fs, &path, self.left) {
                Err(e) if e.code() == ErrorCode::NotFound => break,
                Err(e) => {
                    // There but unusable: the numbering goes on past it.
                    self.warnings.push(read_warning(&path, &e));
                    continue;
                }
                Ok(data) => {
                    let bytes = (*data).as_ref();
                    self.left = self.left.saturating_sub(bytes.len() as u64);
                    String::from_utf8_lossy(bytes).into_owned()
                }
            };
            variants.push(self.variant(model, name, &path, &text));
        }
        variants
    }

    /// The skins the model's meshes carry (IQM's `FTE_SKINS`): skin `k` of every mesh that has
    /// one is variant `skin k`, drawn with the skin's first frame, found as a shader is.
    fn embedded_skins(&mut self, model: &Model) -> Vec<Variant> {
        let count = (model.meshes().iter())
            .map(|m| m.skins().len())
            .max()
            .unwrap_or(0);
        let mut variants = Vec::with_capacity(count);
        for k in 0..count {
            let meshes = (model.meshes().iter().enumerate())
                .map(|(m, mesh)| {
                    let frame = mesh.skins().get(k)?.frames.first()?;
                    let name = frame.material.to_string();
                    let user = format!("mesh {m} skin {k}");
                    let image = self.lookup(&name, Search::Game, &user, false);
                    Some(VariantTexture { name, image })
                })
                .collect();
            variants.push(Variant {
                name: format!("skin {k}"),
                file: None,
                meshes,
            });
        }
        variants
    }

    fn variant(&mut self, model: &Model, name: String, path: &str, text: &str) -> Variant {
        let mut meshes: Vec<Option<VariantTexture>> = vec![None; model.meshes().len()];
        let (entries, bad) = parse_skin(text);
        for (line, content) in bad {
            self.warnings.push(format!(
                "{path} line {line}: {content:?} is neither `mesh,texture` nor `replace mesh \
                 texture`; skipped"
            ));
        }
        // DarkPlaces keeps a file's lines newest first and takes the first match: the last
        // line for a mesh wins.
        for entry in entries {
            let user = format!("{path} line {}", entry.line);
            // DPM meshes have no names: DarkPlaces matches their shader instead.
            let listed: Vec<usize> = model
                .meshes()
                .iter()
                .enumerate()
                .filter(|(_, m)| {
                    let section = match model.format() {
                        Format::Dpm => m.shader(),
                        _ => m.name(),
                    };
                    section.as_bytes() == entry.mesh.as_bytes()
                })
                .map(|(k, _)| k)
                .collect();
            if listed.is_empty() {
                self.warnings.push(format!(
                    "{user}: the model has no mesh named {:?}",
                    entry.mesh
                ));
                continue;
            }
            let image = if entry.texture.is_empty() {
                None
            } else {
                self.lookup(&entry.texture, Search::Game, &user, false)
            };
            for k in listed {
                if let Some(slot) = meshes.get_mut(k) {
                    *slot = Some(VariantTexture {
                        name: entry.texture.clone(),
                        image,
                    });
                }
            }
        }
        Variant {
            name,
            file: Some(path.to_owned()),
            meshes,
        }
    }
}

/// Whether a file is at `path`, read with no room so that nothing of it is kept (a filesystem
/// that can tell a file's size refuses it unread).
fn exists(fs: &dyn FileSystem, path: &str) -> bool {
    match read_contained_at_most(fs, path, 0) {
        Ok(_) => true,
        Err(e) => e.code() == ErrorCode::Limit,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn game_candidates_try_beside_then_textures_then_the_shader_path() {
        assert_eq!(
            candidates(Search::Game, "models/monsters/zombie.tga", Some("m/"), None),
            [
                "m/zombie.tga",
                "m/zombie.png",
                "m/zombie.jpg",
                "m/zombie.jpeg",
                "m/textures/zombie.tga",
                "m/textures/zombie.png",
                "m/textures/zombie.jpg",
                "m/textures/zombie.jpeg",
                "models/monsters/zombie.tga",
                "models/monsters/zombie.png",
                "models/monsters/zombie.jpg",
                "models/monsters/zombie.jpeg",
            ]
        );
        // A bare name beside a model at the root: the shader path adds nothing new.
        assert_eq!(
            candidates(Search::Game, "meat", Some(""), Some(&["tex"])),
            ["meat.tex", "textures/meat.tex"]
        );
        assert_eq!(
            candidates(Search::Game, "a.b/c", None, None),
            ["a.b/c.tga", "a.b/c.png", "a.b/c.jpg", "a.b/c.jpeg"]
        );
        assert!(candidates(Search::Game, "dir/", Some(""), None).is_empty());
    }

    #[test]
    fn sims_candidates_try_the_name_then_lower_case_beside_then_in_textures() {
        assert_eq!(
            candidates(Search::Sims, "DuChin", Some("p/"), None),
            [
                "p/DuChin.bmp",
                "p/DuChin.png",
                "p/DuChin.tga",
                "p/DuChin.jpg",
                "p/duchin.bmp",
                "p/duchin.png",
                "p/duchin.tga",
                "p/duchin.jpg",
                "p/Textures/DuChin.bmp",
                "p/Textures/DuChin.png",
                "p/Textures/DuChin.tga",
                "p/Textures/DuChin.jpg",
                "p/textures/duchin.bmp",
                "p/textures/duchin.png",
                "p/textures/duchin.tga",
                "p/textures/duchin.jpg",
            ]
        );
        // Lower case already: no path twice; a known extension is the lookup's own to add.
        assert_eq!(
            candidates(Search::Sims, "x.BMP", Some(""), None).len(),
            12,
            "{:?}",
            candidates(Search::Sims, "x.BMP", Some(""), None)
        );
        assert_eq!(strip_image_extension("b001.skin.bmp"), "b001.skin");
        assert_eq!(strip_image_extension("b001.skin"), "b001.skin");
        assert_eq!(strip_extension(".hidden"), ".hidden");
    }

    #[test]
    fn skin_lines() {
        let text = "// head\r\nbloodyskull,bloodyskull_alien\r\n\n  replace meat  meat_alien \
                    \ntag_head,\nmeat , \nnonsense\nreplace a\nmeat,x,y";
        let (entries, bad) = parse_skin(text);
        let got: Vec<(usize, &str, &str)> = entries
            .iter()
            .map(|e| (e.line, e.mesh.as_str(), e.texture.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                (2, "bloodyskull", "bloodyskull_alien"),
                (4, "meat", "meat_alien"),
                (6, "meat", ""),
            ]
        );
        assert_eq!(
            bad,
            [
                (7, "nonsense".to_owned()),
                (8, "replace a".to_owned()),
                (9, "meat,x,y".to_owned())
            ]
        );
    }
}
