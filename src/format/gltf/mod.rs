//! glTF 2.0 import ([`read`]: see docs/gltf.md, "Import") and export: bones become nodes with local TRS, one skin holds them all, meshes keep every
//! influence (JOINTS_n/WEIGHTS_n, strongest first), scenes become animations, and the axes are
//! mapped into the data (see [`axes`]). What linear blend skinning cannot reproduce is measured
//! ([`Exactness`]) and written into the file's `extras`.

// The writer walks a model that was validated when it was built: its indices come from its own
// checked tables, so plain indexing and counting cannot go wrong here as they could on file bytes.
#![allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]

mod accessor;
pub mod axes;
mod build;
mod doc;
mod exact;
mod read;
mod sample;
mod vitamoo;
mod write;

pub(crate) use read::read;
pub use read::{DEFAULT_FPS, GLB_MAGIC, looks_like_json};

pub use axes::Axes;
pub use exact::{EXACT_TOLERANCE, Exactness};
pub use write::export;

/// How to export.
#[derive(Clone)]
pub struct ExportOptions<'a> {
    /// Binary `.glb` or JSON `.gltf` with everything embedded.
    pub binary: bool,
    /// Multiplies every position and translation; 1 keeps the file's units.
    pub scale: f32,
    /// Most influences kept per vertex, the strongest, renormalised; 0 keeps every one.
    pub max_influences: usize,
    /// Images to embed, found beside the model (see [`crate::textures`]).
    pub textures: Option<&'a crate::textures::ModelTextures>,
    /// The source file's name, for `extras`.
    pub source_name: Option<String>,
}

impl Default for ExportOptions<'_> {
    fn default() -> Self {
        ExportOptions {
            binary: true,
            scale: 1.0,
            max_influences: 0,
            textures: None,
            source_name: None,
        }
    }
}

/// An exported file and what it could not express exactly.
#[derive(Clone, Debug)]
pub struct Export {
    pub bytes: Vec<u8>,
    pub exactness: Exactness,
}
