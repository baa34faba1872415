//! ossa for JavaScript, through wasm-bindgen. The package's `index.js` is the API people use;
//! this is what it calls: a set of files, a model loaded from them, and what can be done with
//! it. Values cross as numbers, typed arrays and JSON text; a failure crosses as an
//! [`OssaFailure`] carrying ossa's numeric code and its exact message.

pub mod convert;
pub mod files;
pub mod session;

use wasm_bindgen::prelude::*;

use files::Files;
use session::{LoadSettings, RenderSettings, SaveSettings, Session};

/// An ossa error as JavaScript receives it (`index.js` turns it into an `OssaError`).
#[wasm_bindgen]
pub struct OssaFailure {
    // Boxed: a failure crosses every call's `Result`, which stays small.
    parts: Box<FailureParts>,
}

struct FailureParts {
    code: u32,
    name: String,
    message: String,
    detail: String,
    file: Option<String>,
    offset: Option<f64>,
    line: Option<u32>,
}

#[wasm_bindgen]
impl OssaFailure {
    /// The `OSSA_ERR_*` number (`include/ossa.h`).
    #[wasm_bindgen(getter)]
    pub fn code(&self) -> u32 {
        self.parts.code
    }
    /// `OSSA_ERR_TRUNCATED`, ...
    #[wasm_bindgen(getter)]
    pub fn name(&self) -> String {
        self.parts.name.clone()
    }
    /// The whole message, as the C API's `ossa_error.message` gives it: the file, the line,
    /// the structure and rule, the byte offset.
    #[wasm_bindgen(getter)]
    pub fn message(&self) -> String {
        self.parts.message.clone()
    }
    /// The structure and rule alone.
    #[wasm_bindgen(getter)]
    pub fn detail(&self) -> String {
        self.parts.detail.clone()
    }
    #[wasm_bindgen(getter)]
    pub fn file(&self) -> Option<String> {
        self.parts.file.clone()
    }
    #[wasm_bindgen(getter)]
    pub fn offset(&self) -> Option<f64> {
        self.parts.offset
    }
    #[wasm_bindgen(getter)]
    pub fn line(&self) -> Option<u32> {
        self.parts.line
    }
}

impl From<ossa::Error> for OssaFailure {
    fn from(e: ossa::Error) -> OssaFailure {
        let d = e.detail();
        let parts = FailureParts {
            code: e.code() as u32,
            name: e.code().name().to_owned(),
            message: e.to_string(),
            detail: d.message.clone(),
            file: d.file.as_deref().map(str::to_owned),
            // Offsets are below 2^53 (files held in memory).
            offset: d.offset.map(|o| o as f64),
            line: d.line,
        };
        OssaFailure {
            parts: Box::new(parts),
        }
    }
}

type Outcome<T> = Result<T, OssaFailure>;

/// The skinning kernel called `name` (`simd128`, the module's own, or `portable`, the plain
/// code it was tested against); empty for the one ossa picks, `simd128`. Named for tests and
/// measurements, which hold one against the other.
fn kernel_named(name: &str) -> Outcome<ossa::Kernel> {
    if name.is_empty() {
        return Ok(ossa::Kernel::selected());
    }
    ossa::Kernel::from_name(name).ok_or_else(|| {
        ossa::Error::invalid_argument(format!("no skinning kernel is called '{name}'")).into()
    })
}

fn json_in<T: serde::de::DeserializeOwned + Default>(text: &str, what: &str) -> Outcome<T> {
    if text.is_empty() {
        return Ok(T::default());
    }
    serde_json::from_str(text)
        .map_err(|e| ossa::Error::invalid_argument(format!("{what}: {e}")).into())
}

/// The files a model is loaded from, added one by one (`index.js` builds it from a Map or an
/// object of name -> bytes).
#[wasm_bindgen]
#[derive(Default)]
pub struct FileSet {
    files: Files,
}

#[wasm_bindgen]
impl FileSet {
    #[wasm_bindgen(constructor)]
    pub fn new() -> FileSet {
        FileSet::default()
    }

    /// Adds a file by its path (relative, `/`-separated, no `..`).
    pub fn add(&mut self, path: &str, bytes: Vec<u8>) -> Outcome<()> {
        Ok(self.files.add(path, bytes)?)
    }

    #[wasm_bindgen(getter)]
    pub fn size(&self) -> usize {
        self.files.len()
    }
}

/// A loaded model (`index.js`' `Model` wraps it).
#[wasm_bindgen]
pub struct LoadedModel {
    session: Session,
    /// What the last save changed.
    notes: Vec<String>,
    /// The names and lengths of the last `save_files`' files.
    saved: Vec<serde_json::Value>,
    /// Where [`LoadedModel::skin_all`] skins every mesh, kept from call to call.
    skinned: Vec<f32>,
}

/// Loads the model `name` from `files` (which it takes over); `options`: JSON of
/// [`LoadSettings`] (empty for the defaults).
#[wasm_bindgen(js_name = loadModel)]
pub fn load_model(files: FileSet, name: &str, options: &str) -> Outcome<LoadedModel> {
    let settings: LoadSettings = json_in(options, "the load options")?;
    Ok(LoadedModel {
        session: Session::load(files.files, name, &settings)?,
        notes: Vec::new(),
        saved: Vec::new(),
        skinned: Vec::new(),
    })
}

#[wasm_bindgen]
impl LoadedModel {
    /// What the model holds, as JSON (`ModelInfo` in `index.d.ts`).
    pub fn describe(&self) -> String {
        self.session.describe().to_string()
    }

    #[wasm_bindgen(js_name = boneCount)]
    pub fn bone_count(&self) -> usize {
        self.session.model.bones().len()
    }

    #[wasm_bindgen(js_name = vertexCount)]
    pub fn vertex_count(&self, mesh: u32) -> usize {
        (self.session.model.meshes().get(mesh as usize)).map_or(0, |m| m.vertex_count())
    }

    /// Mesh `mesh`'s triangles, three vertex indices each.
    pub fn indices(&self, mesh: u32) -> Outcome<Vec<u32>> {
        Ok(self.mesh(mesh)?.indices().to_vec())
    }

    /// Mesh `mesh`'s texture coordinates (u, v per vertex); empty when it has none.
    pub fn texcoords(&self, mesh: u32) -> Outcome<Vec<f32>> {
        let m = self.mesh(mesh)?;
        Ok(m.texcoords()
            .unwrap_or_default()
            .iter()
            .flatten()
            .copied()
            .collect())
    }

    /// Mesh `mesh`'s vertex colours (RGBA8 per vertex); empty when it has none.
    pub fn colors(&self, mesh: u32) -> Outcome<Vec<u8>> {
        let m = self.mesh(mesh)?;
        Ok(m.colors()
            .unwrap_or_default()
            .iter()
            .flatten()
            .copied()
            .collect())
    }

    /// Model-space bone matrices (12 floats each, row-major 3x4, translation in floats 3, 7
    /// and 11) for a weighted blend of frames.
    #[wasm_bindgen(js_name = poseFrames)]
    pub fn pose_frames(&self, frames: &[u32], weights: &[f32]) -> Outcome<Vec<f32>> {
        Ok(self.session.pose_frames(frames, weights)?)
    }

    /// The pose of scene `scene` at `seconds` (wrapping round a looping scene, holding the ends
    /// of another).
    #[wasm_bindgen(js_name = poseScene)]
    pub fn pose_scene(&self, scene: u32, seconds: f64) -> Outcome<Vec<f32>> {
        Ok(self.session.pose_scene(scene, seconds)?)
    }

    /// The frames and weights scene `scene` shows at `seconds`: frame, weight, frame, weight.
    #[wasm_bindgen(js_name = sceneBlend)]
    pub fn scene_blend(&self, scene: u32, seconds: f64) -> Outcome<Vec<f64>> {
        let (frames, weights) = self.session.scene_blend(scene, seconds)?;
        Ok((frames.iter().zip(&weights))
            .flat_map(|(&f, &w)| [f64::from(f), f64::from(w)])
            .collect())
    }

    /// Skins mesh `mesh` at `pose` into `positions` and `normals` (3 floats a vertex; `normals`
    /// may be empty) with the kernel `kernel` names (see [`kernel_named`]).
    #[wasm_bindgen(js_name = skinInto)]
    pub fn skin_into(
        &self,
        mesh: u32,
        pose: &[f32],
        normalize: bool,
        positions: &mut [f32],
        normals: &mut [f32],
        kernel: &str,
    ) -> Outcome<()> {
        let kernel = kernel_named(kernel)?;
        Ok(self
            .session
            .skin_into(mesh, pose, normalize, kernel, positions, normals)?)
    }

    /// Skins every mesh at `pose` into the model's own buffer in the module's memory: per mesh
    /// its positions then its normals (3 floats a vertex), meshes one after the other. Returns
    /// the buffer's address; JavaScript reads it as a view of the module's memory, valid until
    /// the next call into the module. One call and no copies in or out: for drawing every frame.
    /// `kernel`: as for [`LoadedModel::skin_into`].
    #[wasm_bindgen(js_name = skinAll)]
    pub fn skin_all(&mut self, pose: &[f32], normalize: bool, kernel: &str) -> Outcome<usize> {
        let kernel = kernel_named(kernel)?;
        (self.session).skin_all(pose, normalize, kernel, &mut self.skinned)?;
        Ok(self.skinned.as_ptr() as usize)
    }

    /// RGBA8 pixels of the model drawn at `pose` by ossa's software renderer; `options`: JSON
    /// of [`RenderSettings`].
    pub fn render(&self, pose: &[f32], options: &str) -> Outcome<Vec<u8>> {
        let settings: RenderSettings = json_in(options, "the render options")?;
        Ok(self.session.render(pose, &settings)?)
    }

    /// The model written as `format` (`glb`, `gltf`, `iqm`, `dpm`, ...); `options`: JSON of
    /// [`SaveSettings`]. What changed on the way is then in [`LoadedModel::save_notes`].
    pub fn save(&mut self, format: &str, options: &str) -> Outcome<Vec<u8>> {
        let settings: SaveSettings = json_in(options, "the save options")?;
        let (files, notes) = self.session.save_files(format, &settings)?;
        self.notes = notes;
        self.saved = Vec::new();
        Ok(files
            .into_iter()
            .next()
            .map(|f| f.bytes)
            .unwrap_or_default())
    }

    /// [`LoadedModel::save`] with the files written beside the model (an engine's sidecars, a
    /// character's skills' CFPs): their bytes one after the other, the model's first; each
    /// file's name and length are then in [`LoadedModel::saved_files`].
    #[wasm_bindgen(js_name = saveFiles)]
    pub fn save_files(&mut self, format: &str, options: &str) -> Outcome<Vec<u8>> {
        let settings: SaveSettings = json_in(options, "the save options")?;
        let (files, notes) = self.session.save_files(format, &settings)?;
        self.notes = notes;
        self.saved = (files.iter())
            .map(|f| serde_json::json!({ "name": f.name, "length": f.bytes.len() }))
            .collect();
        Ok(files.into_iter().flat_map(|f| f.bytes).collect())
    }

    /// The files of the last [`LoadedModel::save_files`], as JSON: `[{name, length}]`.
    #[wasm_bindgen(js_name = savedFiles)]
    pub fn saved_files(&self) -> String {
        serde_json::Value::from(self.saved.clone()).to_string()
    }

    /// What the last save changed or could not keep, one line each, as JSON.
    #[wasm_bindgen(js_name = saveNotes)]
    pub fn save_notes(&self) -> String {
        serde_json::Value::from(self.notes.clone()).to_string()
    }

    /// The textures found for the meshes, as JSON: each image's name, path and size, and per
    /// mesh its image's index (or null), with the warnings of what could not be had.
    #[wasm_bindgen(js_name = textureInfo)]
    pub fn texture_info(&self) -> String {
        let t = self.session.textures();
        let images: Vec<serde_json::Value> = (t.images.iter())
            .map(|i| {
                serde_json::json!({
                    "name": i.name, "path": i.path, "width": i.width, "height": i.height,
                })
            })
            .collect();
        serde_json::json!({
            "images": images,
            "meshImages": t.mesh_images,
            "warnings": t.warnings,
        })
        .to_string()
    }

    /// Image `image`'s pixels, decoded to RGBA8 (rows top to bottom); empty when it did not
    /// decode.
    #[wasm_bindgen(js_name = textureRgba)]
    pub fn texture_rgba(&self, image: u32) -> Vec<u8> {
        (self.session.decoded().images.get(image as usize))
            .and_then(|i| i.as_ref())
            .map(|i| i.rgba.clone())
            .unwrap_or_default()
    }

    /// Image `image` as the PNG file the glTF export embeds.
    #[wasm_bindgen(js_name = texturePng)]
    pub fn texture_png(&self, image: u32) -> Vec<u8> {
        (self.session.textures().images.get(image as usize))
            .map(|i| i.png.clone())
            .unwrap_or_default()
    }

    fn mesh(&self, mesh: u32) -> Result<&ossa::Mesh, ossa::Error> {
        let meshes = self.session.model.meshes();
        meshes.get(mesh as usize).ok_or_else(|| {
            ossa::Error::invalid_argument(format!(
                "mesh {mesh} out of range (model has {} meshes)",
                meshes.len()
            ))
        })
    }
}

/// What a Sims character file (CMX text or BCF) holds, as JSON: its skeletons' names, its
/// suits (with their skins' meshes and bones) and its skills (with the animation each reads
/// and whether that is beside it is for the caller to see); for a page offering the suits and
/// skills among the files dropped on it.
#[wasm_bindgen(js_name = characterFile)]
pub fn character_file(bytes: &[u8]) -> Outcome<String> {
    let file = ossa::cmx::parse(bytes)?;
    let names = |n: &ossa::Name| n.to_string();
    let suits: Vec<serde_json::Value> = (file.suits.iter())
        .map(|s| {
            let skins: Vec<serde_json::Value> = (s.skins.iter())
                .map(|k| serde_json::json!({ "mesh": names(&k.name), "bone": names(&k.bone) }))
                .collect();
            serde_json::json!({ "name": names(&s.name), "skins": skins })
        })
        .collect();
    let skills: Vec<serde_json::Value> = (file.skills.iter())
        .map(|s| serde_json::json!({ "name": names(&s.name), "animation": names(&s.animation) }))
        .collect();
    Ok(serde_json::json!({
        "version": file.version,
        "skeletons": file.skeletons.iter().map(|s| names(&s.name)).collect::<Vec<_>>(),
        "suits": suits,
        "skills": skills,
    })
    .to_string())
}
