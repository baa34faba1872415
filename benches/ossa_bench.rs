//! `cargo bench`: how fast ossa loads, poses and skins models, beside copying the same bytes and
//! beside C baselines that skin as DarkPlaces does (`benches/baseline/dp_sse.c`, its default SSE
//! path, compiled at run time with its release flags and with `-march=native`;
//! `benches/baseline/dp_skin.c`, a scalar rendering of its generic path, with `-O2`). The measuring code (`benches/measure/`) is shared with `ossa bench`.
//!
//! ```text
//! cargo bench                     the generated 100,000-vertex rig and the corpus's DPM, SKM and
//!                                 IQM models of more than 1,000 vertices
//! cargo bench -- zombie okrobot   only models whose name contains one of the words
//! cargo bench -- iqm skm          only models of those formats (an extension or a word of the
//!                                 format's name: dpm, skm, iqm, gltf, glb, cmx, dmf, skel ...)
//! cargo bench -- path/to/x.dpm    these files
//! cargo bench -- --quick          a short run (smaller budget; figures are noisier)
//! ```
//!
//! `bench = false` on `[lib]` and `[[bin]]` in Cargo.toml keeps their libtest harnesses, which
//! reject `--quick`, out of `cargo bench`; `OSSA_BENCH_QUICK=1 cargo bench` works as well.

use std::process::ExitCode;

mod measure;

fn main() -> ExitCode {
    measure::main(std::env::args().skip(1), "cargo bench --", true)
}
