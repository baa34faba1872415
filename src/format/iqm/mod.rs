//! Inter-Quake Model (`.iqm`): little-endian tables located by a 124-byte header, vertices in
//! model space with up to four blend bytes, joints giving the bind pose and quantised
//! per-channel poses giving the frames. Versions 2 and 1 are read; version 2 is written in the
//! layout of the reference compiler.
//!
//! How it maps onto ossa's model: the joints' rest pose is frame 0 (named `bind`), and the
//! file's frames follow it, so file frame `k` is model frame `k + 1`; each anim is a scene over
//! its frames. Vertex `v` of mesh `m` is the file's vertex `first_vertex + v`.

mod read;
mod write;

pub use read::MAGIC;
pub(crate) use read::read;
pub use write::{WriteOptions, write};
