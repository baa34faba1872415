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
//!   both in `Textures/` beside it (where the 1998 prototype keeps them); then each of those
//!   paths ignoring ASCII case, as the game's Windows opened them. A character dressed from a
//!   suit's meshes has each mesh's looked for beside that mesh's own file
//!   ([`find_textures_of_parts`], [`find_textures_beside_parts`]).
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
    find_textures_of_parts(model, files, &[], max_bytes)
}

/// A mesh's own file, for [`find_textures_of_parts`]: the filesystem it was read from, its path
/// there, and what to show before that path in warnings and [`FoundImage::path`] (empty for
/// none; its directory, where that is not the model's).
#[derive(Clone, Copy)]
pub struct PartFile<'a> {
    pub fs: &'a dyn FileSystem,
    pub path: &'a str,
    pub shown: &'a str,
}

/// [`find_textures`] for a model whose meshes were read from files of their own (a Sims
/// character dressed from its suit's meshes, wherever each was found): mesh `m`'s texture is
/// looked for beside `parts[m]`, as beside the model's file; a mesh `parts` gives no file (None,
/// or past its end) is looked for beside `files`. `.skin` variants are looked for beside `files`.
pub fn find_textures_of_parts(
    model: &Model,
    files: Option<(&dyn FileSystem, &str)>,
    parts: &[Option<PartFile<'_>>],
    max_bytes: u64,
) -> ModelTextures {
    let max_bytes = if max_bytes == 0 {
        DEFAULT_MAX_BYTES
    } else {
        max_bytes
    };
    let mut finder = Finder::new(files, max_bytes);
    let mesh_places: Vec<Option<usize>> = (parts.iter())
        .map(|part| part.map(|p| finder.add_place(p.fs, p.path, p.shown.to_owned())))
        .collect();
    let search = Search::of(model.format());
    let mesh_images = match search {
        Search::Embedded => finder.embedded(model),
        _ => finder.by_shader(model, search, &mesh_places),
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

/// [`find_textures_beside`] for a model whose meshes were read from OS files of their own
/// ([`find_textures_of_parts`]): mesh `m`'s texture is looked for beside `parts[m]` (read inside
/// that file's directory, as loading reads sidecars), a mesh without one (None, or past the end
/// of `parts`) beside `path`. A part in another directory than `path` names its directory in
/// warnings and [`FoundImage::path`]. A part whose directory cannot be read is an error, as
/// `path`'s is.
pub fn find_textures_beside_parts(
    model: &Model,
    path: &std::path::Path,
    base_dir: Option<&std::path::Path>,
    parts: &[Option<std::path::PathBuf>],
    max_bytes: u64,
) -> crate::Result<ModelTextures> {
    let place = crate::sidecar::os_place(path, base_dir)?;
    let name = format!("{}{}", place.dir, place.file_name);
    let dir_of = |p: &std::path::Path| {
        p.parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(std::path::Path::new("."))
            .to_path_buf()
    };
    let own_dir = dir_of(path).canonicalize().ok();
    // Each part's place, by its own directory, and its path and what it is shown with there.
    let mut dirs: Vec<(std::path::PathBuf, crate::sidecar::OsPlace, String)> = Vec::new();
    let mut of_part: Vec<Option<(usize, String)>> = Vec::with_capacity(parts.len());
    for part in parts {
        let Some(part) = part else {
            of_part.push(None);
            continue;
        };
        let dir = dir_of(part);
        let real = dir.canonicalize().ok();
        if real.is_some() && real == own_dir && base_dir.is_none() {
            of_part.push(None);
            continue;
        }
        let part_place = crate::sidecar::os_place(part, Some(&dir))?;
        let part_name = format!("{}{}", part_place.dir, part_place.file_name);
        let k = match dirs.iter().position(|(d, _, _)| *d == dir) {
            Some(k) => k,
            None => {
                let shown = format!("{}/", dir.display());
                dirs.push((dir, part_place, shown));
                dirs.len().saturating_sub(1)
            }
        };
        of_part.push(Some((k, part_name)));
    }
    let part_files: Vec<Option<PartFile<'_>>> = (of_part.iter())
        .map(|p| {
            let (k, part_name) = p.as_ref()?;
            let (_, place, shown) = dirs.get(*k)?;
            Some(PartFile {
                fs: &place.fs,
                path: part_name,
                shown,
            })
        })
        .collect();
    Ok(find_textures_of_parts(
        model,
        Some((&place.fs, &name)),
        &part_files,
        max_bytes,
    ))
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

/// Per variant, per mesh, the texture the variant names (None: the mesh keeps its own), as
/// [`crate::convert::engine_files`] writes them into `.skin` files again.
pub fn variant_texture_names(variants: &[Variant]) -> Vec<Vec<Option<String>>> {
    (variants.iter())
        .map(|v| {
            (v.meshes.iter())
                .map(|t| t.as_ref().map(|t| t.name.clone()))
                .collect()
        })
        .collect()
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

/// A read error as a warning about `path` (shown as `shown`), naming it once.
fn read_warning(shown: &str, path: &str, e: &Error) -> String {
    let text = e.to_string();
    if text.contains(path) {
        text.replacen(path, shown, 1)
    } else {
        format!("{shown}: {text}")
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

/// Where textures are looked for: beside a file of a filesystem.
struct Place<'a> {
    fs: Option<&'a dyn FileSystem>,
    /// The file's directory in the filesystem (`""` or ending in `/`); `None` when nothing
    /// beside the file can be read.
    dir: Option<String>,
    /// What a path read there is shown with, before it, in warnings and [`FoundImage::path`]:
    /// empty for the model's own place, whose paths are the filesystem's.
    shown: String,
}

impl<'a> Place<'a> {
    /// The place of the file `fs` names `name`, and its file name; a warning when `name` is not
    /// inside the filesystem (nothing beside it is read then).
    fn of(
        fs: &'a dyn FileSystem,
        name: &str,
        shown: String,
        warnings: &mut Vec<String>,
    ) -> (Place<'a>, String) {
        let (dir, file) = match name.rfind('/') {
            Some(i) => name.split_at(i.saturating_add(1)),
            None => ("", name),
        };
        if is_contained(name) {
            let place = Place {
                fs: Some(fs),
                dir: Some(dir.to_owned()),
                shown,
            };
            (place, file.to_owned())
        } else {
            warnings.push(format!(
                "the path {shown}{name:?} is not inside the filesystem (absolute, `..`, a \
                 backslash or a drive letter): nothing beside it is looked for"
            ));
            let place = Place {
                fs: Some(fs),
                dir: None,
                shown,
            };
            (place, String::new())
        }
    }
}

struct Finder<'a> {
    /// Where textures are looked for: the model's own place first, then those of meshes read
    /// from files of their own (a dressed character's parts).
    places: Vec<Place<'a>>,
    /// The place a lookup is made in, by index in `places`.
    current: usize,
    /// The model's file name.
    file_name: String,
    /// What is left of the memory limit.
    left: u64,
    images: Vec<FoundImage>,
    /// Every path read (in a place), so that none is read twice.
    by_path: HashMap<(usize, String), Probe>,
    /// Every texture name looked for (in a place), so that none is looked for (or warned
    /// about) twice.
    by_name: HashMap<(usize, String), Option<usize>>,
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
        let (place, file_name) = match files {
            None => (
                Place {
                    fs: None,
                    dir: None,
                    shown: String::new(),
                },
                String::new(),
            ),
            Some((fs, name)) => {
                let (place, file) = Place::of(fs, name, String::new(), &mut warnings);
                // The model's own path keeps the words it always had.
                if let Some(w) = warnings.last_mut() {
                    *w = w.replacen("the path", "the model's path", 1);
                }
                (place, file)
            }
        };
        Finder {
            places: vec![place],
            current: 0,
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

    /// The place of a mesh's own file, `name` in `fs`, shown as `shown` before its paths: a
    /// place already known (the same filesystem and directory) is used again.
    fn add_place(&mut self, fs: &'a dyn FileSystem, name: &str, shown: String) -> usize {
        let (place, _) = Place::of(fs, name, shown, &mut self.warnings);
        let same = |p: &Place<'a>| {
            p.dir == place.dir
                && p.shown == place.shown
                && p.fs.is_some_and(|f| std::ptr::addr_eq(f, fs))
        };
        match self.places.iter().position(same) {
            Some(k) => k,
            None => {
                self.places.push(place);
                self.places.len().saturating_sub(1)
            }
        }
    }

    fn fs(&self) -> Option<&'a dyn FileSystem> {
        self.places.get(self.current).and_then(|p| p.fs)
    }

    fn dir(&self) -> Option<String> {
        self.places.get(self.current).and_then(|p| p.dir.clone())
    }

    /// A path of the current place as shown.
    fn shown(&self, path: &str) -> String {
        let before = self
            .places
            .get(self.current)
            .map_or("", |p| p.shown.as_str());
        format!("{before}{path}")
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

    /// Each mesh's texture by its shader, looked for in the mesh's place (`mesh_places`, by
    /// mesh; the model's own where it gives none).
    fn by_shader(
        &mut self,
        model: &Model,
        search: Search,
        mesh_places: &[Option<usize>],
    ) -> Vec<Option<usize>> {
        let mut out = Vec::with_capacity(model.meshes().len());
        for (k, mesh) in model.meshes().iter().enumerate() {
            self.current = mesh_places.get(k).copied().flatten().unwrap_or(0);
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
        self.current = 0;
        out
    }

    /// The image for texture `name`, looked for once; `user` says who asked, for warnings.
    fn lookup(&mut self, name: &str, search: Search, user: &str, quiet: bool) -> Option<usize> {
        if self.names_only {
            return None;
        }
        let key = (self.current, name.to_owned());
        if let Some(found) = self.by_name.get(&key) {
            return *found;
        }
        let found = self.search(name, search, user, quiet);
        self.by_name.insert(key, found);
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
        let Some(fs) = self.fs() else {
            self.unsearched.push(format!("{name:?}"));
            return None;
        };
        let dir = self.dir();
        let tried = candidates(search, name, dir.as_deref(), None);
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
            let tex = candidates(search, name, dir.as_deref(), Some(&["tex"]));
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
            let tried: Vec<String> = tried.iter().map(|p| self.shown(p)).collect();
            self.warnings.push(format!(
                "{user}: texture {name:?}: {why}; tried {}",
                tried.join(", ")
            ));
        }
        None
    }

    /// Reads and decodes the image at `path` (once), for texture `name`.
    fn probe(&mut self, fs: &dyn FileSystem, path: &str, name: &str) -> Probe {
        let key = (self.current, path.to_owned());
        if let Some(p) = self.by_path.get(&key) {
            return *p;
        }
        let shown = self.shown(path);
        let probe = match read_contained_at_most(fs, path, self.left) {
            Err(e) if e.code() == ErrorCode::NotFound => Probe::Missing,
            Err(e) => {
                self.warnings.push(read_warning(&shown, path, &e));
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
                            path: shown,
                            png: d.png,
                            width: d.width,
                            height: d.height,
                        });
                        Probe::Image(self.images.len().saturating_sub(1))
                    }
                    Err(why) => {
                        self.warnings.push(format!("{shown}: {why}"));
                        Probe::Unusable
                    }
                }
            }
        };
        self.by_path.insert(key, probe);
        probe
    }

    /// The model's `.skin` files, each a variant.
    fn skin_variants(&mut self, model: &Model) -> Vec<Variant> {
        let (Some(fs), Some(dir)) = (self.fs(), self.dir()) else {
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
                    self.warnings.push(read_warning(&path, &path, &e));
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
