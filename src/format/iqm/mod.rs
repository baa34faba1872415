//! Inter-Quake Model (`.iqm`): little-endian tables located by a 124-byte header, vertices in
//! model space with up to four blend bytes, joints giving the bind pose and quantised
//! per-channel poses giving the frames. Versions 2 and 1 are read; version 2 is written in the
//! layout of the reference compiler.
//!
//! How it maps onto ossa's model: the joints' rest pose is frame 0 (named `bind`), and the
//! file's frames follow it, so file frame `k` is model frame `k + 1`; each anim is a scene over
//! its frames. Vertex `v` of mesh `m` is the file's vertex `first_vertex + v`.
//!
//! [`engines`] says what each engine's loader refuses or gets wrong in a file; [`target`]
//! writes a model for one of them, with its sidecars (`.framegroups`, Warfork's
//! `animation.cfg`, read and written by [`player`]).

mod bind;
mod cfg;
pub mod engines;
pub mod player;
mod read;
pub mod target;
mod write;

pub(crate) use cfg::CfgAnim;
pub use engines::{Engine, Finding, Kind};
pub use read::MAGIC;
pub(crate) use read::read;
pub use target::{EngineFiles, EngineWrite, framegroups_text, write_for_engine};
pub use write::{WriteOptions, write, written_frame_range, written_mesh_name};

/// Lines a model configuration may have: a real one has a few hundred.
const CFG_MAX_LINES: usize = 100_000;

/// Parses a Red Eclipse or Tesseract `iqm.cfg` (see [`cfg`]).
pub(crate) fn parse_cfg(text: &[u8]) -> crate::error::Result<cfg::Cfg> {
    cfg::parse(text, CFG_MAX_LINES)
}
